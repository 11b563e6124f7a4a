"""Test lanes: what ``make quick`` (``-m "not slow and not root"``) leaves out, and what
runs one at a time when the suite runs on several workers (``make test``: pytest-xdist,
``-n 2 --dist loadgroup``).

Tests mark themselves ``slow`` (over 2 s, or real peers, MPI, SSH, iperf3,
NetPIPE, notebooks, the wheel); two rules add the mark where a decorator cannot
or need not: every test marked ``root`` (network namespaces, tc) is slow too,
and so are the doctests named below.

Every slow test, and every test of ``measure`` (its doctests start real peers too), runs
in one group (``xdist_group("agents")``), on one worker, one after the other, as in a
run without workers: these tests start peers, probe servers,
MPI jobs, sshd or network namespaces, look for what a run left behind (processes,
``/dev/shm``), or time what they start, and would meet each other.  The other worker
meanwhile takes the fast tests and the slow modules listed in :data:`PARALLEL_SAFE`,
which start none of these.  A new slow test is in the group unless its module is
listed there.
"""

from __future__ import annotations

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
    "tests/hostile/test_multicast_dataset.py",    # refused before any agent starts
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
}
"""Slow test modules that start no agent, MPI job, sshd or namespace and time nothing they
start: another worker may run them beside the group of the slow tests."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    root = config.rootpath
    for item in items:
        if item.get_closest_marker("root") or (
                isinstance(item, pytest.DoctestItem) and item.name in SLOW_DOCTESTS):
            item.add_marker(pytest.mark.slow)
        where = item.path.relative_to(root).as_posix()
        if (item.get_closest_marker("slow") and where not in PARALLEL_SAFE) \
                or where.startswith(("measure/", "tests/measure/")):
            item.add_marker(pytest.mark.xdist_group("agents"))
