"""DOT of the Hasse diagram and the tree, parsed by Graphviz (pygraphviz)."""

from __future__ import annotations

import pytest

from tomography.export.dot import cluster_tree_to_dot, hierarchy_to_dot
from tomography.model.hierarchy import Cluster, ClusterTree, Hierarchy, TreeEdge

pgv = pytest.importorskip("pygraphviz", reason="pygraphviz (Graphviz's parser) not installed")


def test_hasse_diagram_parses(inferred):
    graph = pgv.AGraph(string=hierarchy_to_dot(inferred))
    clusters = [c for level in inferred.levels for c in level]
    assert graph.is_directed() and graph.graph_attr["rankdir"] == "BT"
    assert sorted(graph.nodes()) == sorted(c.id for c in clusters)
    edges = sorted((c.id, c.parent) for c in clusters if c.parent)
    assert sorted(graph.edges()) == edges
    assert graph.number_of_edges() == sum(len(level) for level in inferred.levels[:-1])
    for c in clusters:
        assert graph.get_node(c.id).attr["label"] == f"{c.id}\\n{len(c.hosts)} hosts"
    ranks = [s for s in graph.subgraphs() if s.graph_attr.get("rank") == "same"]
    assert sorted(sorted(s.nodes()) for s in ranks) == sorted(
        sorted(c.id for c in level) for level in inferred.levels)


def test_tree_parses(tree):
    graph = pgv.AGraph(string=cluster_tree_to_dot(tree))
    assert not graph.is_directed()
    assert sorted(graph.nodes()) == sorted(c.id for c in tree.clusters)
    assert graph.number_of_edges() == len(tree.edges) == len(tree.clusters) - 1
    heaviest = max(e.weight for e in tree.edges)
    for e in tree.edges:
        attr = graph.get_edge(e.source, e.target).attr
        assert float(attr["label"]) == pytest.approx(e.weight, rel=1e-3)
        assert int(attr["weight"]) == max(1, round(100 * e.weight / heaviest))


def test_odd_names_and_layout():
    h = Hierarchy.from_partitions(["a", "b", "c"], [[0, 1, 1], [0, 0, 0]])
    odd = ClusterTree([Cluster('x "1"', 1, ("a",)), Cluster("y\\z", 1, ("b", "c"))],
                      [TreeEdge('x "1"', "y\\z", 0.25)])
    graph = pgv.AGraph(string=cluster_tree_to_dot(odd))
    assert sorted(graph.nodes()) == ['x "1"', "y\\z"]          # the ids as they are
    assert graph.has_edge('x "1"', "y\\z") and graph.number_of_edges() == 1
    assert graph.get_node("y\\z").attr["label"] == "y\\\\z\\n2 hosts"   # \\ in a label: \
    for text in (hierarchy_to_dot(h), cluster_tree_to_dot(odd)):
        g = pgv.AGraph(string=text)
        g.layout(prog="dot")          # Graphviz lays it out without complaint
        assert all(g.get_node(n).attr["pos"] for n in g.nodes())
    empty = ClusterTree([Cluster("L1C0", 1, ("a",))], [])
    assert pgv.AGraph(string=cluster_tree_to_dot(empty)).number_of_nodes() == 1
