"""Hostile MPI hierarchy files (``tomography-mpi/1``, as ``HierarchicalComm`` reads them;
issue 39): refused naming the file, on every rank with the same line, without a deadlock,
a runaway read or a segment left in ``/dev/shm``.

Classes: bytes that are no UTF-8 JSON (binary, UTF-16, Latin-1), nesting 100,000 deep, slot
counts no machine has (1e9, 1e18 ranks), a link to ``/dev/zero``, a FIFO.  Each is read once
in this process (:func:`read_mpi_hierarchy`), and once by two ranks of a real MPI job under a
memory cap.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import mpi_launcher
from tests.hostile.common import MEMORY
from tomography.model.errors import TomographyError
from tomography.export.mpi import mpi_hierarchy, read_mpi_hierarchy
from tomography.model.hierarchy import Hierarchy

CHECK = str(Path(__file__).parents[1] / "tomography" / "collectives_check.py")


def _document() -> dict:
    return mpi_hierarchy(Hierarchy.from_partitions(["a", "b"], [[0, 1]]))


def _slots(count: int):
    def write(path: Path) -> None:
        doc = _document()
        doc["slots"][0] = count
        path.write_text(json.dumps(doc))
    return write


CASES = {
    "binary": (lambda p: p.write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff" * 64), "not UTF-8"),
    "utf-16": (lambda p: p.write_text(json.dumps(_document()), encoding="utf-16"),
               "not UTF-8"),
    "latin-1": (lambda p: p.write_bytes(json.dumps(_document()).replace(
        '"a"', '"\u00e9"').encode("latin-1")), "not UTF-8"),
    "deep": (lambda p: p.write_text("[" * 100_000 + "]" * 100_000), "nested deeper"),
    "slots 1e9": (_slots(10**9), "slots"),
    "slots 1e18": (_slots(10**18), "slots"),
    "/dev/zero": (lambda p: p.symlink_to("/dev/zero"), "character device"),
    "fifo": (lambda p: os.mkfifo(p), "named pipe"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_hostile_hierarchy_file_is_refused_naming_it(tmp_path: Path, case: str) -> None:
    make, says = CASES[case]
    path = tmp_path / "topo.mpi.json"
    make(path)
    with pytest.raises(TomographyError, match=says) as caught:
        read_mpi_hierarchy(path)
    assert str(path) in str(caught.value) and len(str(caught.value)) < 400


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


@pytest.mark.slow   # an MPI job per case
@pytest.mark.parametrize("case", sorted(CASES))
def test_every_rank_says_the_same_and_nothing_is_left(tmp_path: Path, case: str) -> None:
    make, says = CASES[case]
    path = tmp_path / "topo.mpi.json"
    make(path)
    launcher, env = mpi_launcher("mpich")
    before = set(os.listdir("/dev/shm"))
    try:
        run = subprocess.run([*launcher, "-n", "2", sys.executable, CHECK, str(path)],
                             capture_output=True, text=True, timeout=60, preexec_fn=_capped,
                             env={**os.environ, **env})
    except subprocess.TimeoutExpired:
        raise AssertionError(f"{case}: the ranks did not answer within 60 s") from None
    errors = [e.strip() for e in run.stdout.split("error: ")[1:]]
    assert len(errors) == 2 and len(set(errors)) == 1, (run.stdout, run.stderr)
    assert says in errors[0] and str(path) in errors[0], errors[0]
    assert "Traceback" not in run.stderr and run.returncode != 0
    left = set(os.listdir("/dev/shm")) - before
    assert not left, f"left in /dev/shm: {sorted(left)}"
