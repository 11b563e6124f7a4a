"""The layers of the house (docs/architecture.md): imports point one way, and no circles.

Every import counts, also those inside functions; only imports under
``if TYPE_CHECKING:`` (annotations) are left out.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("tomography", "cluster", "measure", "visualize")
LAYERS = (
    ("tomography.model",),
    ("tomography.export", "tomography.planning"),
    ("cluster", "measure", "visualize"),
    ("tomography",),
)
"""The floors, bottom up, each a folder: the data model; the exporters and the multicast
planners over it; the algorithms, the measurement and the views (which do not import each
other); on top the rest of ``tomography``: the pipeline, the command line, the report and
the collectives, and the package's own face."""
TOP_MODULES = ("tomography", "tomography.__main__", "tomography.pipeline")
"""The only modules directly in ``tomography/``: everything else has its floor's folder."""


def _modules() -> dict[str, Path]:
    out = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


MODULES = _modules()


def _lazy_names() -> dict[str, str]:
    """``package.name`` -> module for the names a package or sub-package loads on first use
    (its ``_NAMES`` or ``_LAZY``, as :func:`tomography.model.lazy.lazy_attributes` reads them)."""
    out = {}
    for module, path in MODULES.items():
        if path.name != "__init__.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") in ("_NAMES",
                                                                                    "_LAZY"):
                table = _literal_table(node.value)
                out.update({f"{module}.{name}": f"{module}.{target}"
                            for name, target in table.items()})
    return out


def _literal_table(node: ast.expr) -> dict[str, str]:
    """A ``_NAMES`` table: a dict display, with ``**{name: module for name in (...)}`` parts."""
    out: dict[str, str] = {}
    for key, value in zip(node.keys, node.values):
        if key is not None:
            out[ast.literal_eval(key)] = ast.literal_eval(value)
        elif isinstance(value, ast.DictComp):   # {name: "module" for name in (...)}
            target = ast.literal_eval(value.value)
            for name in ast.literal_eval(value.generators[0].iter):
                out[name] = target
    return out


LAZY = _lazy_names()


def test_lazily_loaded_names_of_sub_packages_are_resolved() -> None:
    """A name a sub-package loads on first use counts as an import of its module."""
    assert LAZY["tomography.model.dataset.Measurement"] == "tomography.model.dataset.measurement"
    assert LAZY["tomography.model.dataset.BLOCK_SIZE"] == "tomography.model.dataset.schema"


def _resolve(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


class _Imports(ast.NodeVisitor):
    def __init__(self, module: str, is_package: bool) -> None:
        self.module, self.is_package = module, is_package
        self.found: dict[str, int] = {}

    def visit_If(self, node: ast.If) -> None:
        test = node.test
        if getattr(test, "id", None) == "TYPE_CHECKING" or getattr(test, "attr", None) == \
                "TYPE_CHECKING":
            for child in node.orelse:
                self.visit(child)
            return
        self.generic_visit(node)

    def _add(self, name: str, line: int) -> None:
        target = _resolve(name)
        if target and target != self.module:
            self.found.setdefault(target, line)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(alias.name, node.lineno)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            base = self.module.split(".")
            base = base if self.is_package else base[:-1]
            base = base[: len(base) - (node.level - 1)]
            name = ".".join(base + ([node.module] if node.module else []))
        else:
            name = node.module or ""
        for alias in node.names:
            full = f"{name}.{alias.name}"
            self._add(full if full in MODULES else LAZY.get(full, name), node.lineno)


def _graph() -> nx.DiGraph:
    g = nx.DiGraph()
    for module, path in MODULES.items():
        visitor = _Imports(module, path.name == "__init__.py")
        visitor.visit(ast.parse(path.read_text(encoding="utf-8"), str(path)))
        g.add_node(module)
        for target, line in visitor.found.items():
            parent_package = path.name != "__init__.py" and module.startswith(target + ".") \
                and MODULES[target].name == "__init__.py"
            child_of_package = path.name == "__init__.py" and target.startswith(module + ".")
            if not (parent_package or child_of_package):
                g.add_edge(module, target, line=line)
    return g


def _layer(module: str) -> int:
    """The floor of a module: the index of the longest name in :data:`LAYERS` it is in."""
    floors = [(len(prefix), number) for number, names in enumerate(LAYERS) for prefix in names
              if module == prefix or module.startswith(prefix + ".")]
    return max(floors)[1]


def test_imports_point_down() -> None:
    """Nothing imports a floor above its own; the middle packages do not import each other."""
    wrong = []
    for a, b, data in _graph().edges(data=True):
        la, lb = _layer(a), _layer(b)
        sideways = la == lb == 2 and a.split(".")[0] != b.split(".")[0]
        if lb > la or sideways:
            wrong.append(f"{MODULES[a].relative_to(ROOT)}:{data['line']}: {a} imports {b}")
    assert not wrong, "imports against the layers:\n" + "\n".join(sorted(wrong))


def test_every_module_has_its_floor_s_folder() -> None:
    """``tomography/`` holds folders, one per floor, and the pipeline: a new module goes into
    the folder of its floor, so that where it stands can be read from its path."""
    loose = sorted(m for m in MODULES if m.startswith("tomography") and m.count(".") <= 1
                   and MODULES[m].name != "__init__.py" and m not in TOP_MODULES)
    assert not loose, f"modules outside their floor's folder: {loose}"


def test_the_picture_names_every_floor() -> None:
    """docs/architecture.md draws the floors as the folders are."""
    picture = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8").split("```")[1]
    for names in LAYERS:
        for name in names:
            folder = name.replace(".", "/") + ("/" if name != "tomography" else "")
            assert folder in picture, f"docs/architecture.md's picture lacks {folder}"


def test_no_import_circles() -> None:
    circles = [sorted(c) for c in nx.strongly_connected_components(_graph()) if len(c) > 1]
    assert not circles, f"modules importing each other: {circles}"


def test_the_check_sees_imports_in_functions_and_skips_annotations() -> None:
    source = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import measure.mesh\n"
              "def f():\n    from tomography.cli.common import emit\n"
              "    from tomography import analyze\n")
    visitor = _Imports("cluster.louvain", False)
    visitor.visit(ast.parse(source))
    assert set(visitor.found) == {"tomography.cli.common", "tomography.pipeline"}
    assert _layer("tomography.cli.common") > _layer("cluster.louvain") \
        > _layer("tomography.planning.balanced") > _layer("tomography.model.weights")


def test_nothing_outside_the_command_line_imports_it() -> None:
    """The library is whole without ``tomography.cli``: no module of the packages, no
    benchmark and no script imports from it (``tomography.__main__`` runs it)."""
    sources = [p for p in MODULES.values()] + sorted((ROOT / "benchmarks").glob("*.py")) \
        + sorted((ROOT / "scripts").rglob("*.py"))
    wrong = []
    for path in sources:
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        if module.startswith("tomography.cli") or module == "tomography.__main__":
            continue
        visitor = _Imports(module.removesuffix(".__init__"), path.name == "__init__.py")
        visitor.visit(ast.parse(path.read_text(encoding="utf-8"), str(path)))
        wrong += [f"{path.relative_to(ROOT)}:{line}: imports {target}"
                  for target, line in visitor.found.items()
                  if target == "tomography.cli" or target.startswith("tomography.cli.")]
        if re.search(r"(from|import)\s+tomography\.cli\b", path.read_text(encoding="utf-8")):
            wrong.append(f"{path.relative_to(ROOT)}: imports tomography.cli in code it runs")
    assert not wrong, "the command line imported from outside it:\n" + "\n".join(wrong)
