"""Test lanes: what ``make quick`` (``-m "not slow and not root"``) leaves out, and which tests
``make test`` runs one after the other (``-m agents``) while the rest run beside them.

Tests mark themselves ``slow`` (over 2 s, or real peers, MPI, SSH, iperf3,
NetPIPE, notebooks, the wheel); two rules add the mark where a decorator cannot
or need not: every test marked ``root`` (network namespaces, tc) is slow too,
and so are the doctests named below.

The ``agents`` lane: every test that starts peers, probe servers, multicast agents, MPI
jobs, sshd or network namespaces, looks for what a run left behind (processes,
``/dev/shm``) or times what it starts.  These would meet each other, and a loaded CPU
makes their peers late to stop, so ``make test`` (``scripts/test.sh``) runs them one after
the other, as a plain ``pytest`` does, while the other tests run beside them on two
workers at the lowest CPU priority (``nice -n 19``), on what the agents leave idle.  A test
is in the lane when it is marked ``agents``, or else when it is slow, a test of ``measure``
(doctests included) or in a test module that names a way to start agents
(:data:`AGENT_WORDS`), unless its module is listed in :data:`PARALLEL_SAFE`.
The lane's tests also form one ``xdist_group``, so that ``make quick`` on two workers keeps
them on one.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest

SLOW_DOCTESTS = {
    "measure.coordinator.preflight",       # starts real peers
    "measure.coordinator.run_broadcasts",  # a real libtorrent broadcast
    "measure.mesh.run_mesh",               # a real iperf3 mesh
    "cluster.stability.StableHierarchy",   # over 2 s
}


PARALLEL_SAFE = {
    "tests/hostile/test_dataset_files.py",       # refusals of dataset files, no agent
    "tests/hostile/test_degenerate_analysis.py",  # the analysis commands on odd datasets
    "tests/hostile/test_gauge_multicast.py",      # refused before any agent starts
    "tests/hostile/test_hosts_files.py",          # refused before any agent starts
    "tests/hostile/test_iperf3_import.py",
    "tests/cluster/test_scale_and_skew.py",       # analysis of planted datasets
    "tests/tomography/test_iperf3_import.py",
    "tests/visualize/test_heatmap.py",
    "tests/visualize/test_hasse.py",
    "tests/test_reliability.py",
    "tests/test_report.py",                       # a headless browser, no agent
    "tests/test_wheel.py",                        # a wheel installed in a scratch venv
    "tests/test_notebooks.py",                    # but notebook 01 on the testbed (marked)
    "tests/measure/test_simulator.py",            # the simulator: no process, no network
    "tests/measure/test_tcp.py",
    "tests/measure/test_roots.py",
    "tests/measure/test_session.py",              # the run skeleton, without agents
}
"""Test modules that start no agent, MPI job, sshd or namespace and time nothing they start,
though they are slow or name a way to start agents (their commands are refused before any
agent starts): they run beside the ``agents`` lane."""


AGENT_WORDS = re.compile(r"mpiexec|mpi_launcher|local_hosts|run_broadcasts|run_mesh|"
                         r"run_multicasts|run_concurrency|--local|--testbed|--mpi\b|--ssh|"
                         r"/dev/shm|sshd|as_root|testbed\.up|\btraced\b")
"""Words of a test module that starts agents (or looks at what they leave): its tests go
into the ``agents`` lane."""


@functools.cache
def _names_agents(path: Path) -> bool:
    return path.name.startswith("test_") and bool(
        AGENT_WORDS.search(path.read_text(encoding="utf-8")))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    root = config.rootpath
    for item in items:
        if item.get_closest_marker("root") or (
                isinstance(item, pytest.DoctestItem) and item.name in SLOW_DOCTESTS):
            item.add_marker(pytest.mark.slow)
        where = item.path.relative_to(root).as_posix()
        if item.get_closest_marker("agents") or (where not in PARALLEL_SAFE and (
                where.startswith(("measure/", "tests/measure/"))
                or item.get_closest_marker("slow") or _names_agents(item.path))):
            item.add_marker(pytest.mark.agents)
            item.add_marker(pytest.mark.xdist_group("agents"))
