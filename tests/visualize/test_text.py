"""Text renderings: Hasse diagram, indented tree, cluster tree."""

from __future__ import annotations

from tomography.model.hierarchy import Cluster, ClusterTree, Hierarchy, TreeEdge
from visualize.text import cluster_tree_text, hasse_text, hierarchy_text


def three_levels() -> Hierarchy:
    hosts = [f"h{i}" for i in range(8)]
    return Hierarchy.from_partitions(hosts, [[0, 0, 1, 1, 2, 2, 3, 3], [0, 0, 0, 0, 1, 1, 2, 2],
                                             [0, 0, 0, 0, 1, 1, 1, 1]])


def test_hasse_levels_top_down_and_connectors() -> None:
    text = hasse_text(three_levels(), truth={f"h{i}": f"s{i // 4}/c{i // 2}" for i in range(8)})
    diagram = text.split("\n\n")[1].splitlines()
    assert [line.split()[:2] for line in diagram[::2]] == [["level", "3"], ["level", "2"],
                                                            ["level", "1"]]
    # every cluster of a level appears on its row
    assert diagram[4].count("L1C") == 4 and diagram[2].count("L2C") == 3
    # the parents of two children get a branch, a single child a straight line
    assert "┴" in diagram[1] and "│" in diagram[3]
    assert "truth: s0/c0" in text and "truth: s0/*" in text


def test_indented_tree() -> None:
    lines = hierarchy_text(three_levels()).splitlines()
    assert lines[0] == "network (8 hosts)"
    assert sum("L1C" in line for line in lines) == 4 and lines[1].startswith("├── L3C0")


def test_cluster_tree_text_marks_forest() -> None:
    t = ClusterTree([Cluster("A", 1, ("a",)), Cluster("B", 1, ("b",)), Cluster("C", 1, ("c",))],
                    [TreeEdge("A", "B", 2.0)])
    text = cluster_tree_text(t)
    assert "2 ── B" in text and "not connected" in text
