"""GraphML and GEXF host graphs, read back with networkx."""

from __future__ import annotations

import copy

import networkx as nx
import numpy as np
import pytest

from tomography.model.errors import TomographyError
from tomography.export.graph import host_graph, write_gexf, write_graphml
from tomography.model.hierarchy import Hierarchy
from tomography.model.weights import mean_weights


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


def _gexf_schema() -> "Path | None":
    """The GEXF 1.2 schema as the format's maintainers publish it (``specs/1.2draft/*.xsd``),
    from ``$TOMOGRAPHY_GEXF_SCHEMA`` (a directory) or this machine's cache; it is not shipped."""
    import os
    from pathlib import Path

    where = os.environ.get("TOMOGRAPHY_GEXF_SCHEMA") or Path.home() / ".cache" / \
        "bandwidth-tomography" / "gexf-1.2draft"
    path = Path(where) / "gexf.xsd"
    return path if path.is_file() else None


def test_gexf_validates_against_the_published_schema(planted, inferred, tmp_path):
    from lxml import etree

    schema_path = _gexf_schema()
    if schema_path is None:
        pytest.skip("the published GEXF 1.2 schema (gexf.xsd with data, dynamics, hierarchy, "
                    "phylogenics and viz.xsd) is not on this machine: put its directory in "
                    "$TOMOGRAPHY_GEXF_SCHEMA")
    schema = etree.XMLSchema(etree.parse(str(schema_path)))
    m = copy.deepcopy(planted)
    m.hosts.loc[0, "label"] = 'site <A> & "B"'   # text that must be escaped
    for hierarchy in (None, inferred):
        path = tmp_path / "hosts.gexf"
        write_gexf(m, path, hierarchy=hierarchy)
        assert schema.validate(etree.parse(str(path))), schema.error_log
    assert nx.read_gexf(path).nodes[m.host_names[0]]["truth"] == 'site <A> & "B"'
    # the same check fails on what networkx writes by itself
    nx.write_gexf(host_graph(m), tmp_path / "networkx.gexf", version="1.2draft")
    assert not schema.validate(etree.parse(str(tmp_path / "networkx.gexf")))
