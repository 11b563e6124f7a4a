"""Shared fixtures: small datasets written to temporary directories."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from tomography.model.dataset import write_measurement
from tomography.model.synthetic import planted_hierarchy


def assert_trace_within_counts(trace, transfers) -> None:
    """A trace (``read_trace``) of a real broadcast against its counts (``transfers.csv``):
    each pair's traced blocks at most its counted ones, every receiver traced.

    How many blocks a trace holds depends on the load: libtorrent posts no alert for a block
    whose write ends after the download completed (docs/formats.md)."""
    keys = ["iteration", "sender", "receiver"]
    traced = trace.groupby(keys).size()
    counted = transfers.set_index(keys)["blocks"]
    assert (traced <= counted.reindex(traced.index)).all()
    assert set(trace["receiver"]) == set(transfers["receiver"])


def write_files(root: Path, files: dict[str, str]) -> Path:
    """Write a dataset directory from file texts."""
    root.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


META = json.dumps({"format": "tomography-measurement/1", "method": "bittorrent",
                   "block_size": 16384, "params": {}, "topology": None,
                   "created": "2026-01-01T00:00:00+00:00"})

# Three hosts listed out of order; two iterations with hand-chosen counts.
SMALL = {
    "meta.json": META,
    "hosts.csv": "host,address,label\nc,10.0.0.3,s2\na,10.0.0.1,s1\nb,10.0.0.2,s1\n",
    "transfers.csv": ("iteration,receiver,sender,blocks\n"
                      "0,b,a,10\n0,c,a,4\n0,c,b,6\n0,a,b,2\n"
                      "1,a,c,8\n1,b,c,3\n1,b,a,5\n"),
    "iterations.csv": ("iteration,root,bytes,duration_s,complete\n"
                       "0,a,163840,1.5,true\n1,c,131072,,false\n"),
}


@pytest.fixture
def small_dataset(tmp_path: Path) -> Path:
    return write_files(tmp_path / "small", SMALL)


@pytest.fixture(scope="session")
def small_planted(tmp_path_factory) -> tuple:
    """A planted 2 x 2 hierarchy of 6-host groups, 3 iterations: the Measurement and its
    directory (read only: the inputs every API function takes)."""
    m = planted_hierarchy((2, 2), 6, iterations=3, seed=4)
    path = tmp_path_factory.mktemp("planted") / "run"
    write_measurement(m, path)
    return m, path


@pytest.fixture(scope="session")
def hierarchy_dataset(tmp_path_factory) -> Path:
    """A planted 3 x 3 hierarchy of 16-host groups, 6 iterations, on disk."""
    path = tmp_path_factory.mktemp("data") / "planted"
    write_measurement(planted_hierarchy((3, 3), 16, iterations=6, seed=11), path)
    return path


def mpiexec() -> str:
    """The mpiexec the set-up installs beside the interpreter (the mpich wheel)."""
    path = Path(sys.executable).parent / "mpiexec"
    if not path.exists():
        pytest.fail(f"{path} is missing: run scripts/setup.sh (it installs mpi4py and mpich)")
    return str(path)


MPI_FLAVOURS = ("mpich", "openmpi")
"""The MPI libraries the collectives are tested with: the set-up's MPICH wheel, Debian's Open MPI."""


def mpi_launcher(flavour: str) -> tuple[list[str], dict[str, str]]:
    """The mpiexec of an MPI flavour and the environment its ranks need.

    Open MPI's ranks import the mpi4py that scripts/setup.sh builds against it
    (``.venv/mpi4py-openmpi``, first on ``PYTHONPATH``); the test skips, saying
    why, when Open MPI or that build is missing.
    """
    if flavour == "mpich":
        return [mpiexec()], {}
    exe = shutil.which("mpiexec.openmpi")
    if exe is None:
        pytest.skip("Open MPI is not installed (scripts/setup.sh installs openmpi-bin)")
    site = Path(sys.executable).parent.parent / "mpi4py-openmpi"
    if not (site / ".built").exists():
        pytest.skip(f"no mpi4py built against Open MPI in {site} (scripts/setup.sh builds it)")
    return [exe], {"PYTHONPATH": str(site), "OMPI_ALLOW_RUN_AS_ROOT": "1",
                   "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
                   "OMPI_MCA_rmaps_base_oversubscribe": "1"}
