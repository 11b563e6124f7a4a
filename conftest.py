"""Test lanes: what ``make quick`` (``-m "not slow and not root"``) leaves out.

Tests mark themselves ``slow`` (over 2 s, or real peers, MPI, SSH, iperf3,
NetPIPE, notebooks, the wheel); two rules add the mark where a decorator cannot
or need not: every test marked ``root`` (network namespaces, tc) is slow too,
and so are the doctests named below.
"""

from __future__ import annotations

import pytest

SLOW_DOCTESTS = {
    "measure.coordinator.preflight",       # starts real peers
    "measure.coordinator.run_broadcasts",  # a real libtorrent broadcast
    "measure.mesh.run_mesh",               # a real iperf3 mesh
    "cluster.stability.StableHierarchy",   # over 2 s
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("root") or (
                isinstance(item, pytest.DoctestItem) and item.name in SLOW_DOCTESTS):
            item.add_marker(pytest.mark.slow)
