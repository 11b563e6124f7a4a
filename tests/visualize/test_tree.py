"""plot_tree: the maximum spanning tree of clusters, every edge with its weight."""

from __future__ import annotations

from cluster.spanning_tree import cluster_tree
from tomography.model.hierarchy import Cluster, ClusterTree, TreeEdge
from tomography.model.weights import mean_weights
from visualize import plot_tree

from .helpers import assert_legible, saved, segments, texts


def test_tree_of_a_planted_hierarchy(planted, tmp_path) -> None:
    t = cluster_tree(mean_weights(planted), planted.host_names, seed=0, level="finest")
    assert len(t.clusters) == 6 and t.is_connected
    fig = plot_tree(t, truth=planted.labels)
    saved(fig, tmp_path / "tree.png")
    saved(fig, tmp_path / "tree.svg")
    ax = fig.axes[0]
    boxes = texts(ax)
    info = fig.tomography_info
    # one node per cluster, one segment and one weight label per edge
    assert sorted(g for g in boxes if g[:1] == "C") == sorted(c.id for c in t.clusters)
    assert len(segments(ax, "edges")) == len(t.edges) == 5
    for e in t.edges:
        label = boxes[f"weight:{e.source}:{e.target}"].get_text()
        assert float(label) == float(f"{e.weight:.3g}")
        # the label sits between the two clusters it joins
        (xs, ys), (xt, yt) = boxes[e.source].get_position(), boxes[e.target].get_position()
        assert boxes[f"weight:{e.source}:{e.target}"].get_position() == ((xs + xt) / 2,
                                                                       (ys + yt) / 2)
        assert abs(ys - yt) == 1                      # parent and child: adjacent depths
    # heavier edges are drawn thicker
    (collection,) = [c for c in ax.collections if c.get_gid() == "edges"]
    widths = collection.get_linewidths()
    assert widths[0] == max(widths)                   # edges come heaviest first
    # the root is the best-connected cluster; nodes name their true group
    degree = {c.id: sum(c.id in (e.source, e.target) for e in t.edges) for c in t.clusters}
    assert degree[info["roots"][0]] == max(degree.values())
    for c in t.clusters:
        assert boxes[c.id].get_text().split("\n")[2] == planted.labels[c.hosts[0]]
    assert_legible(fig)


def test_tree_of_a_simulated_network(two_sites) -> None:
    t = cluster_tree(mean_weights(two_sites), two_sites.host_names, seed=0)
    fig = plot_tree(t, truth=two_sites.labels)
    assert len(segments(fig.axes[0], "edges")) == len(t.clusters) - 1
    assert_legible(fig)
    assert "mean w_n over the host pairs" in fig.axes[0].get_title()   # the default linkage
    thesis = cluster_tree(mean_weights(two_sites), two_sites.host_names, linkage="thesis", seed=0)
    assert "Eq 5.4" in plot_tree(thesis).axes[0].get_title()


def test_forest() -> None:
    t = ClusterTree([Cluster("L1C0", 1, ("a",)), Cluster("L1C1", 1, ("b",)),
                     Cluster("L1C2", 1, ("c",))], [TreeEdge("L1C0", "L1C1", 3.0)])
    fig = plot_tree(t)
    info = fig.tomography_info
    assert info["roots"] == ["L1C0", "L1C2"] and not info["connected"]
    assert "not connected" in fig.axes[0].get_title()
    assert info["edge_labels"] == ["3"]


def test_edge_weights_are_6_pt_when_the_boxes_are() -> None:
    """Boxes that fit one column only at about 6 pt: the weights were half a point smaller."""
    t = ClusterTree([Cluster("L1C0", 1, ("a",)), Cluster("L1C1", 1, ("b", "c")),
                     Cluster("L1C2", 1, ("d",)), Cluster("L1C3", 1, ("e",))],
                    [TreeEdge("L1C1", "L1C0", 8.0), TreeEdge("L1C1", "L1C2", 2.5),
                     TreeEdge("L1C1", "L1C3", 1.5)])
    fig = plot_tree(t, truth={h: "site-one/rack-ab" for h in "abcde"})
    boxes = texts(fig.axes[0])
    assert fig.get_size_inches()[0] == 3.4 and boxes["L1C0"].get_fontsize() < 6.5
    assert all(boxes[f"weight:{e.source}:{e.target}"].get_fontsize() >= 6.0 for e in t.edges)
    assert_legible(fig)
