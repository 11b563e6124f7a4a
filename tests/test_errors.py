"""Every error a user can cause is a TomographyError (tomography/model/errors.py).

The CLI catches only :class:`~tomography.model.errors.TomographyError`; any other
exception shows as a bug.  So the packages never raise a plain ``ValueError``:
a bad argument is a ``ParameterError``, an unusable graph a ``GraphError``,
and so on.  A check that guards the code's own invariants asserts instead.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import tomography.model.errors as errors
from tomography.model.errors import (EmptyGraphError, GraphError, ParameterError, ProbeError,
                                     TomographyError)

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("cluster", "measure", "visualize", "tomography")

ALLOWED: dict[str, str] = {
    # "package/module.py:function": "why a plain ValueError is right there",
}
"""Plain ``raise ValueError`` that may stay, by file and enclosing function (none today)."""


def _plain_value_errors(path: Path) -> list[tuple[int, str]]:
    """(line, enclosing function) of each ``raise ValueError`` (or ``raise ValueError(...)``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []

    def visit(node: ast.AST, function: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                visit(child, f"{function}.{child.name}" if function else child.name)
                continue
            if isinstance(child, ast.Raise) and child.exc is not None:
                exc = child.exc.func if isinstance(child.exc, ast.Call) else child.exc
                if isinstance(exc, ast.Name) and exc.id == "ValueError":
                    found.append((child.lineno, function or "<module>"))
            visit(child, function)

    visit(tree, "")
    return found


def test_no_plain_value_error_in_the_packages() -> None:
    offenders = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            for line, function in _plain_value_errors(path):
                if f"{relative}:{function}" not in ALLOWED:
                    offenders.append(f"{relative}:{line} (in {function})")
    assert not offenders, (
        "raise a TomographyError subclass (tomography.model.errors: ParameterError for a bad "
        "argument, GraphError for an unusable graph, ...) instead of a plain ValueError, "
        "or assert an internal invariant:\n  " + "\n  ".join(offenders))


def test_the_scan_finds_a_plain_value_error(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text("def f(x):\n    if x:\n        raise ValueError('bad x')\n"
                      "    raise ValueError\n", encoding="utf-8")
    assert _plain_value_errors(source) == [(3, "f"), (4, "f")]


def test_allow_list_names_existing_raises() -> None:
    for entry in ALLOWED:
        relative, function = entry.split(":")
        assert (relative, function) in {
            (relative, f) for _, f in _plain_value_errors(ROOT / relative)}, entry


def test_error_classes() -> None:
    for name in errors.__all__:
        cls = getattr(errors, name)
        assert issubclass(cls, TomographyError) and issubclass(cls, ValueError), name
        assert cls.__doc__, name
    assert issubclass(EmptyGraphError, GraphError)
    from tomography.model.topology import TopologyError
    assert issubclass(TopologyError, TomographyError)


GRAPH = np.array([[0, 3, 1, 0], [3, 0, 1, 0], [1, 1, 0, 3], [0, 0, 3, 0]], dtype=float)


def _louvain(**options):
    from cluster import louvain
    return louvain(GRAPH, **options)


def _averaged_edge(**options):
    from cluster import averaged_edge_hierarchy
    return averaged_edge_hierarchy(GRAPH, **options)


@pytest.mark.parametrize("call, options, cls, words", [
    (_louvain, {"engine": "nope"}, ParameterError, "unknown engine 'nope'"),
    (_louvain, {"resolution": 0}, ParameterError, "resolution must be a number > 0, got 0"),
    (_louvain, {"resolution": -1.5}, ParameterError, "resolution must be a number > 0"),
    (_louvain, {"restarts": 0}, ParameterError, "restarts must be a whole number >= 1"),
    (_louvain, {"level": "coarsest"}, ParameterError, "unknown flat_level 'coarsest'"),
    (_averaged_edge, {"linkage": "nope"}, ParameterError, "unknown linkage 'nope'"),
    (_averaged_edge, {"start": "nope"}, ParameterError, "unknown start 'nope'"),
])
def test_bad_arguments_in_cluster(call, options, cls, words) -> None:
    with pytest.raises(cls, match=words.replace("(", r"\(").replace(")", r"\)")):
        call(**options)


def test_bad_graphs_in_cluster() -> None:
    from cluster import louvain, modularity, ward
    from cluster.spanning_tree import maximum_spanning_tree

    with pytest.raises(GraphError, match="not symmetric"):
        louvain(np.array([[0, 1], [2, 0]]))
    with pytest.raises(GraphError, match="negative weights"):
        louvain(-GRAPH)
    with pytest.raises(GraphError, match="square"):
        louvain(np.ones((2, 3)))
    with pytest.raises(EmptyGraphError):
        louvain(np.zeros((0, 0)))
    with pytest.raises(EmptyGraphError, match="no edge weight"):
        modularity(np.zeros((3, 3)), [0, 0, 1])
    with pytest.raises(ParameterError, match=r"labels has shape \(2,\); expected \(4,\)"):
        modularity(GRAPH, [0, 1])
    with pytest.raises(ParameterError, match="n_clusters must be between 1 and 4, got 5"):
        ward(GRAPH, 5)
    with pytest.raises(ParameterError, match="unknown method 'nope'"):
        maximum_spanning_tree(GRAPH, method="nope")


def test_bad_arguments_elsewhere() -> None:
    from measure.probetools import hockney_fit, parse_netpipe
    from tomography.model.seeding import check_seed
    from tomography.model.synthetic import planted_partition
    from tomography.model.units import parse_bandwidth

    with pytest.raises(ParameterError, match="seed must be a non-negative integer"):
        check_seed(-1)
    with pytest.raises(ParameterError, match="not a bandwidth: '3 parsecs'"):
        parse_bandwidth("3 parsecs")
    with pytest.raises(ParameterError, match=r"n_hosts \(7\) must be a positive multiple"):
        planted_partition(7, 2)
    with pytest.raises(ProbeError, match="line 1 is not 'bytes Mbps seconds'"):
        parse_netpipe("oops")
    with pytest.raises(ProbeError, match="at least three message sizes"):
        hockney_fit(np.array([[1.0, 1e-5], [2.0, 2e-5]]))
