"""Small real datasets for the plot tests, made once per session.

* ``two_sites``: the flow-level simulator on ``two-sites-demo`` (20 hosts in
  2 sites x 2 clusters), 3 iterations of 4 MiB (about a second);
* ``traced``: a real libtorrent broadcast among 4 local peers on loopback
  addresses, 1 MiB, with ``trace.csv`` (a few seconds, no root);
* ``planted``: a planted 2 x 3 hierarchy of 8-host groups (synthetic counts).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cluster.averaged_edge import averaged_edge_hierarchy
from measure.coordinator import local_hosts, run_broadcasts
from measure.simulator import simulate
from tomography.model.dataset import Measurement, read_measurement
from tomography.model.hierarchy import Hierarchy
from tomography.model.synthetic import planted_hierarchy
from tomography.model.topology import read_topology
from tomography.model.weights import mean_weights


@pytest.fixture(scope="session")
def two_sites_path(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("vis") / "two-sites"
    return simulate(read_topology("two-sites-demo"), out, iterations=3, file_size=4 * 2**20,
                    seed=0)


@pytest.fixture(scope="session")
def two_sites(two_sites_path: Path) -> Measurement:
    return read_measurement(two_sites_path)


@pytest.fixture(scope="session")
def two_sites_hierarchy(two_sites: Measurement) -> Hierarchy:
    return averaged_edge_hierarchy(mean_weights(two_sites), two_sites.host_names, seed=0)


@pytest.fixture(scope="session")
def traced(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("vis") / "traced"
    run = run_broadcasts(local_hosts(4, first=70), out, iterations=1, file_size=2**20,
                         seed=2, trace=True)
    assert run.iterations[0].complete, run.iterations[0].notes
    return out


@pytest.fixture(scope="session")
def planted() -> Measurement:
    return planted_hierarchy((2, 3), 8, iterations=4, seed=3)


@pytest.fixture(scope="session")
def planted_hierarchy_(planted: Measurement) -> Hierarchy:
    return averaged_edge_hierarchy(mean_weights(planted), planted.host_names, seed=0)

