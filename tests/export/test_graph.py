"""GraphML and GEXF host graphs, read back with networkx."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from tomography.errors import TomographyError
from tomography.export.graph import host_graph, write_gexf, write_graphml
from tomography.hierarchy import Hierarchy
from tomography.weights import mean_weights


def check_graph(graph: nx.Graph, planted, inferred, n: int | None = None) -> None:
    W = mean_weights(planted, n).toarray()
    hosts = planted.host_names
    assert sorted(graph.nodes) == hosts
    assert graph.number_of_edges() == int(np.count_nonzero(np.triu(W, 1)))
    for u, v, data in graph.edges(data=True):
        assert float(data["weight"]) == pytest.approx(W[hosts.index(u), hosts.index(v)])
    labels = planted.labels
    for number, level in enumerate(inferred.levels, start=1):
        for cluster in level:
            for h in cluster.hosts:
                assert graph.nodes[h][f"level_{number}"] == cluster.id
    assert all(graph.nodes[h]["truth"] == labels[h] for h in hosts)


def test_graphml_read_by_networkx(planted, inferred, tmp_path):
    path = tmp_path / "hosts.graphml"
    write_graphml(planted, path, hierarchy=inferred)
    graph = nx.read_graphml(path)
    assert not graph.is_directed()
    check_graph(graph, planted, inferred)
    assert isinstance(next(iter(graph.edges(data=True)))[2]["weight"], float)


def test_gexf_read_by_networkx(planted, inferred, tmp_path):
    path = tmp_path / "hosts.gexf"
    write_gexf(planted, path, hierarchy=inferred, iterations=2)
    assert 'version="1.2"' in path.read_text()
    graph = nx.read_gexf(path)
    check_graph(graph, planted, inferred, n=2)


def test_graph_without_hierarchy_and_errors(planted, tmp_path):
    graph = host_graph(planted)
    assert all(set(d) == {"truth"} for _, d in graph.nodes(data=True))
    write_graphml(planted, tmp_path / "plain.graphml")
    assert nx.read_graphml(tmp_path / "plain.graphml").number_of_nodes() == planted.n_hosts
    other = Hierarchy.from_partitions(["a", "b"], [[0, 1]])
    with pytest.raises(TomographyError, match="other hosts than the measurement"):
        host_graph(planted, hierarchy=other)
