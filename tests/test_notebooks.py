"""The notebooks: committed without outputs, and each runs top to bottom.

Every notebook in ``notebooks/`` is executed with nbclient in a fresh kernel
of this interpreter (``sys.executable``, through a kernelspec written to a
temporary directory, so no kernel needs installing and no other Python's
``python3`` kernel is picked up), with ``TOMOGRAPHY_NOTEBOOK_SMALL=1`` (the
small parameters of each notebook's first cell), its outputs sent to a
temporary directory and the working directory a temporary directory too.
A cell that raises fails the test with the cell's source and traceback.

As root, notebook 01 raises a small emulated testbed and must take it down
again; the test checks that nothing of it is left, and runs the notebook a
second time with ``TOMOGRAPHY_NOTEBOOK_SIMULATE=1``, the simulator fallback
it takes without root.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

import nbformat
import pytest

NOTEBOOK_DIR = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
EXPECTED = ["01-measuring-a-site.ipynb", "02-hierarchies-n1-n2.ipynb",
            "03-noise-and-iterations.ipynb", "04-topology-to-multicast.ipynb"]
CELL_TIMEOUT = 300          # s for any one cell in small mode
KERNEL_NAME = "tomography-test-python"
TESTBED_NAME = "nb01"       # the testbed notebook 01 raises as root

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _ids(paths: list[Path]) -> list[str]:
    return [p.stem for p in paths]


def _read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def test_every_notebook_is_there() -> None:
    assert [p.name for p in NOTEBOOKS] == EXPECTED


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_committed_without_outputs(path: Path) -> None:
    """Outputs are never committed: every code cell is unexecuted and empty."""
    nb = _read(path)
    nbformat.validate(nb)
    dirty = [f"cell {i} (execution_count {cell.get('execution_count')}, "
             f"{len(cell.get('outputs', []))} outputs)"
             for i, cell in enumerate(nb.cells)
             if cell.cell_type == "code"
             and (cell.get("outputs") or cell.get("execution_count") is not None)]
    assert not dirty, (f"{path.name} is committed with outputs in {', '.join(dirty)}; clear "
                       f"them (jupyter nbconvert --clear-output --inplace {path.name}, or "
                       "'Clear All Outputs' in the editor) before committing")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_starts_with_title_and_parameters(path: Path) -> None:
    """A title in Markdown first; the first code cell is tagged ``parameters`` and reads SMALL."""
    nb = _read(path)
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("# ")
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert "parameters" in code[0].metadata.get("tags", [])
    assert "TOMOGRAPHY_NOTEBOOK_SMALL" in code[0].source


@pytest.fixture(scope="module")
def kernel_dirs(tmp_path_factory) -> list[str]:
    """A kernelspec that runs this very interpreter, in a directory of its own."""
    root = tmp_path_factory.mktemp("kernels")
    spec = root / KERNEL_NAME
    spec.mkdir()
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": f"Python ({sys.executable})", "language": "python",
    }), encoding="utf-8")
    return [str(root)]


def _is_root() -> bool:
    """Whether notebook 01 raises its testbed here (as it decides: root with ip and tc)."""
    return os.geteuid() == 0 and shutil.which("ip") is not None and shutil.which("tc") is not None


def _testbed_left(name: str) -> list[str]:
    """Namespaces of the notebook's testbed still on the system (root only)."""
    if not _is_root():
        return []
    from measure import testbed

    return testbed.status(name)["namespaces"]


# (notebook, force the simulator): as root notebook 01 also runs its fallback
# (notebook 01 not simulated raises a testbed: in the agents lane, conftest.py)
RUNS = [pytest.param(p, False, id=p.stem,
                     marks=[pytest.mark.agents] if p.name.startswith("01-") else [])
        for p in NOTEBOOKS] + [pytest.param(p, True, id=p.stem + "-simulated")
                               for p in NOTEBOOKS if p.name.startswith("01-") and _is_root()]


@pytest.mark.slow
@pytest.mark.parametrize(("path", "simulate"), RUNS)
def test_notebook_runs(path: Path, simulate: bool, tmp_path: Path, kernel_dirs: list[str],
                       monkeypatch: pytest.MonkeyPatch) -> None:
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    work, out = tmp_path / "cwd", tmp_path / "out"
    work.mkdir()
    monkeypatch.setenv("TOMOGRAPHY_NOTEBOOK_SMALL", "1")
    monkeypatch.setenv("TOMOGRAPHY_NOTEBOOK_OUT", str(out))
    if simulate:
        monkeypatch.setenv("TOMOGRAPHY_NOTEBOOK_SIMULATE", "1")
    else:
        monkeypatch.delenv("TOMOGRAPHY_NOTEBOOK_SIMULATE", raising=False)
    monkeypatch.delenv("MPLBACKEND", raising=False)   # the kernel's inline backend
    nb = _read(path)
    specs = KernelSpecManager(kernel_dirs=kernel_dirs, ensure_native_kernel=False)
    km = KernelManager(kernel_name=KERNEL_NAME, kernel_spec_manager=specs)
    client = NotebookClient(nb, km=km, timeout=CELL_TIMEOUT, kernel_name=KERNEL_NAME,
                            resources={"metadata": {"path": str(work)}})
    start = time.monotonic()
    try:
        client.execute()
    except CellTimeoutError as exc:
        pytest.fail(f"{path.name}: a cell ran longer than {CELL_TIMEOUT} s\n{exc}",
                    pytrace=False)
    except CellExecutionError as exc:
        pytest.fail(f"{path.name}: a cell raised\n{exc}", pytrace=False)
    except DeadKernelError as exc:
        pytest.fail(f"{path.name}: the kernel died: {exc}", pytrace=False)
    finally:
        left = _testbed_left(TESTBED_NAME)
        if left:
            from measure import testbed

            testbed.down(TESTBED_NAME)
    elapsed = time.monotonic() - start
    print(f"{path.name}{' (simulator forced)' if simulate else ''}: {elapsed:.1f} s in small mode")
    assert not left, f"{path.name} left its testbed {TESTBED_NAME!r} up: {left[:5]}"
    errors = [(i, o) for i, cell in enumerate(nb.cells) if cell.cell_type == "code"
              for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, f"{path.name}: error outputs in cells {[i for i, _ in errors]}"
    assert not any(work.iterdir()), (f"{path.name} wrote into its working directory: "
                                     f"{sorted(p.name for p in work.iterdir())}")
