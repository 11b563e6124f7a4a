"""Hierarchical MPI collectives: the layout without MPI, then real runs under mpiexec.

The MPI runs start ``collectives_check.py`` on six ranks of one machine with
MPICH (the set-up's wheel) and Open MPI (Debian's, with mpi4py built against
it): every collective must give exactly the plain collective's result, and
a mismatched hierarchy must stop every rank with the same one-line error.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tomography.collectives import Layout, place
from tomography.model.errors import TomographyError
from tomography.export.mpi import write_mpi_hierarchy
from tomography.model.hierarchy import Hierarchy

from ..conftest import MPI_FLAVOURS, mpi_launcher

CHECK = str(Path(__file__).with_name("collectives_check.py"))
NODE = socket.gethostname()
HOSTS = [f"{NODE}-{i}" for i in range(1, 7)]
THREE_LEVELS = Hierarchy.from_partitions(HOSTS, [[0, 0, 1, 2, 2, 2], [0, 0, 0, 1, 1, 1]])


def test_ranks_of_one_host_form_a_level_below_the_hierarchy() -> None:
    layout = Layout.build(["a", "a", "b", "c", "c"], {"a": [0], "b": [0], "c": [1]})
    assert layout.names == ["host", "level 1", "all"]
    assert layout.clusters == [[0, 0, 1, 2, 2], [0, 0, 0, 1, 1], [0] * 5]
    stages = layout.stages(root=4)
    assert [s.groups for s in stages] == [[[0, 4]], [[0, 2], [4]], [[0, 1], [2], [3, 4]]]
    assert [s.roots for s in stages] == [[4], [0, 4], [0, 2, 4]]
    # a gather to rank 4 brings the blocks in this order; every rank is in it once
    assert sorted(layout.order(4)) == list(range(5))


def test_every_root_reaches_every_rank_once() -> None:
    layout = Layout.build(HOSTS, {h: [a, b] for h, a, b in
                                  zip(HOSTS, [0, 0, 1, 2, 2, 2], [0, 0, 0, 1, 1, 1])})
    for root in range(6):
        has = {root}
        for stage in layout.stages(root):           # in order: the root leads its clusters
            for group, lead in zip(stage.groups, stage.roots):
                assert lead in has and lead in group
                assert not (set(group) - {lead}) & has
                has |= set(group)
        assert has == set(range(6))
        # relayed (broadcasts): each rank receives once, and its sends wait for it
        groups = [(set(g), lead) for stage in layout.stages(root, relay=True)
                  for g, lead in zip(stage.groups, stage.roots) if len(g) > 1]
        receives = [r for g, lead in groups for r in g - {lead}]
        assert sorted(receives) == sorted(set(range(6)) - {root})
        has, grew = {root}, True
        while grew:
            before = len(has)
            has |= {r for g, lead in groups if lead in has for r in g}
            grew = len(has) > before
        assert has == set(range(6))


def test_levels_that_do_not_nest_are_refused() -> None:
    with pytest.raises(TomographyError, match="do not nest"):
        Layout.build(["a", "b", "c"], {"a": [0, 0], "b": [0, 1], "c": [1, 1]})


def test_placement_rules_and_their_errors() -> None:
    fact = {"host": None, "processor": "vm.example.org", "hostname": "vm", "addresses": []}
    assert place([fact], ["vm", "other"]) == ["vm"]
    assert place([{**fact, "host": "other"}], ["vm", "other"]) == ["other"]
    with pytest.raises(TomographyError, match="rank 0 says it is host 'nope'"):
        place([{**fact, "host": "nope"}], ["vm"])
    # three ranks on vm, two hosts vm-1, vm-2: cannot tell
    with pytest.raises(TomographyError, match="ranks 0, 1, 2 .on vm.example.org. match no host"):
        place([fact] * 3, ["vm-1", "vm-2"])


def _run(flavour: str, argv: list[str], *, timeout: float = 240) -> subprocess.CompletedProcess:
    launcher, env = mpi_launcher(flavour)
    return subprocess.run([*launcher, *argv], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **env})


def _mpmd(hosts: list[str], source: str, *extra: str) -> list[str]:
    """One rank per entry, each told its host (TOMOGRAPHY_HOST)."""
    argv: list[str] = []
    for i, host in enumerate(hosts):
        argv += ([":"] if i else []) + ["-n", "1", "env", f"TOMOGRAPHY_HOST={host}",
                                        sys.executable, CHECK, source, *extra]
    return argv


@pytest.mark.slow
@pytest.mark.parametrize("flavour", MPI_FLAVOURS)
def test_every_collective_equals_the_plain_one_over_a_three_level_hierarchy(
        flavour: str, tmp_path: Path) -> None:
    """Six ranks named as ``measure --mpi`` names ranks sharing a node; every root, op,
    dtype and size (0 to 4099 elements, 1000-byte segments: sizes that do not divide)."""
    source = tmp_path / "h.json"
    source.write_text(THREE_LEVELS.to_json())
    run = _run(flavour, ["-n", "6", sys.executable, CHECK, f"hierarchy:{source}"])
    assert run.returncode == 0, run.stdout + run.stderr
    assert "checked" in run.stdout and "FAILED" not in run.stdout
    assert "3 levels (level 1, level 2, all)" in run.stdout


@pytest.mark.slow
@pytest.mark.parametrize("flavour", MPI_FLAVOURS)
def test_a_file_with_several_ranks_per_host_in_any_rank_order(flavour: str,
                                                              tmp_path: Path) -> None:
    """A tomography-mpi/1 file for hosts a (2 ranks), b (1), c (3); the job starts them
    in another order than the file's; the ranks of a host form their own level."""
    h = Hierarchy.from_partitions(["a", "b", "c"], [[0, 0, 1]])
    write_mpi_hierarchy(h, tmp_path / "topo.mpi.json", slots={"a": 2, "b": 1, "c": 3})
    run = _run(flavour, _mpmd(["c", "a", "c", "b", "a", "c"], str(tmp_path / "topo.mpi.json"),
                              "4096"))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "3 levels (host, level 1, all)" in run.stdout


@pytest.mark.slow
def test_a_dataset_analysed_by_rank_zero(hierarchy_dataset: Path) -> None:
    """Four ranks on four of the 144 hosts of a planted hierarchy (a dataset directory)."""
    from tomography.model.dataset import read_measurement

    hosts = read_measurement(hierarchy_dataset).host_names
    run = _run("mpich", _mpmd([hosts[0], hosts[1], hosts[20], hosts[100]],
                              str(hierarchy_dataset)))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "checked" in run.stdout


@pytest.mark.slow   # MPI jobs, four per flavour
@pytest.mark.parametrize("flavour", MPI_FLAVOURS)
def test_mismatched_inputs_stop_every_rank_with_one_error(flavour: str, tmp_path: Path) -> None:
    """Another size, an unknown host, a missing file, different hierarchies: each rank
    prints the same error and exits; nothing hangs (the runs have a timeout)."""
    write_mpi_hierarchy(Hierarchy.from_partitions(HOSTS[:4], [[0, 0, 1, 1]]),
                        tmp_path / "four.mpi.json")
    other = tmp_path / "other.json"
    other.write_text(Hierarchy.from_partitions(HOSTS, [[0, 1, 1, 1, 1, 1]]).to_json())
    mine = tmp_path / "mine.json"
    mine.write_text(THREE_LEVELS.to_json())
    cases = [
        ("describes 4 ranks; this communicator has 6", 6,
         ["-n", "6", sys.executable, CHECK, str(tmp_path / "four.mpi.json")]),
        ("rank 2 says it is host 'nope'", 4,
         _mpmd([HOSTS[0], HOSTS[1], "nope", HOSTS[3]], f"hierarchy:{mine}")),
        ("no such file or dataset", 3, ["-n", "3", sys.executable, CHECK, str(tmp_path / "none")]),
        ("the ranks were given different hierarchies", 4,
         ["-n", "2", sys.executable, CHECK, f"hierarchy:{mine}", ":",
          "-n", "2", sys.executable, CHECK, f"hierarchy:{other}"]),
    ]
    for message, ranks, argv in cases:
        run = _run(flavour, argv, timeout=60)
        # every rank's line (the launcher may join lines that arrive together)
        errors = [e.strip() for e in run.stdout.split("error: ")[1:]]
        assert len(errors) == ranks, (message, run.stdout, run.stderr)
        assert len(set(errors)) == 1 and message in errors[0], (message, errors)
        assert run.returncode != 0
