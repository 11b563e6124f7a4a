"""Small real inputs for the exporters: a planted hierarchy, its clustering, two topologies."""

from __future__ import annotations

import pytest

from tomography.model.topology import read_topology


@pytest.fixture(scope="session")
def planted():
    """36 hosts in a planted 3 x 3 hierarchy of 4-host groups, 4 iterations."""
    from tomography.model.synthetic import planted_hierarchy

    return planted_hierarchy((3, 3), 4, iterations=4, seed=3)


@pytest.fixture(scope="session")
def planted_weights(planted):
    from tomography.model.weights import mean_weights

    return mean_weights(planted)


@pytest.fixture(scope="session")
def inferred(planted, planted_weights):
    """The averaged-edge hierarchy of ``planted``, as the CLI computes it."""
    from cluster.averaged_edge import averaged_edge_hierarchy

    return averaged_edge_hierarchy(planted_weights, planted.host_names, seed=1)


@pytest.fixture(scope="session")
def tree(planted, planted_weights):
    """The maximum spanning tree of clusters of ``planted``."""
    from cluster.spanning_tree import cluster_tree

    return cluster_tree(planted_weights, planted.host_names, seed=1)


@pytest.fixture(scope="session")
def two_sites():
    return read_topology("two-sites-demo")


@pytest.fixture(scope="session")
def tree5():
    return read_topology("tree-5")


def topology_clusters(topology) -> dict[str, list[str]]:
    """The clusters of a topology file: name to hosts."""
    return {g.name: list(g.host_names) for g in topology.clusters}
