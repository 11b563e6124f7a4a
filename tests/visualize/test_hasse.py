"""plot_hasse: one row per level, every cluster under its parent, sizes and true labels."""

from __future__ import annotations

import numpy as np

from tomography.hierarchy import Hierarchy
from visualize import plot_hasse

from .helpers import saved, segments, texts


def _check_diagram(fig, h: Hierarchy) -> None:
    ax = fig.axes[0]
    boxes = texts(ax)
    info = fig.tomography_info
    # one box per cluster, on the row of its level, as many per row as the level has
    for number, level in enumerate(h.levels, start=1):
        ys = [boxes[c.id].get_position()[1] for c in level]
        assert ys == [number] * len(level)
        assert sorted(info["levels"][number]) == sorted(c.id for c in level)
    assert sum(1 for gid in boxes if gid.startswith("L")) == sum(map(len, h.levels))
    # each cluster below its parent, which stands over its children
    for level in h.levels[:-1]:
        for c in level:
            child = np.array(boxes[c.id].get_position())
            parent = np.array(boxes[c.parent].get_position())
            assert child[1] == parent[1] - 1
    for level in h.levels[1:]:
        for c in level:
            xs = [boxes[k].get_position()[0] for k in c.children]
            assert min(xs) <= boxes[c.id].get_position()[0] <= max(xs)
    assert len(segments(ax, "links")) == sum(map(len, h.levels[:-1]))
    # the whole network on top when the top level has several clusters
    assert ("network" in boxes) == (len(h.levels[-1]) > 1) == info["top"]
    assert [t.get_text() for t in ax.get_yticklabels()][0].startswith("level 1")


def test_hasse_of_a_planted_hierarchy(planted, planted_hierarchy_, tmp_path) -> None:
    h = planted_hierarchy_
    assert [len(level) for level in h.levels] == [6, 2]
    fig = plot_hasse(h, labels=planted.labels)
    saved(fig, tmp_path / "hasse.pdf")
    saved(fig, tmp_path / "hasse.png")
    _check_diagram(fig, h)
    boxes = texts(fig.axes[0])
    # sizes and true labels in the boxes
    for c in h.levels[0]:
        lines = boxes[c.id].get_text().split("\n")
        assert lines[0] == c.id and lines[1] == "8 hosts"
        assert lines[2] == planted.labels[c.hosts[0]]
    assert {boxes[c.id].get_text().split("\n")[2] for c in h.levels[1]} == {"g0/*", "g1/*"}
    assert fig.get_size_inches()[0] == 7.0            # 6 leaves: page width


def test_hasse_of_a_simulated_network(two_sites, two_sites_hierarchy, tmp_path) -> None:
    fig = plot_hasse(two_sites_hierarchy, labels=two_sites.labels, ids=False)
    saved(fig, tmp_path / "hasse.png")
    _check_diagram(fig, two_sites_hierarchy)
    assert not any(t.get_text().startswith("L1C") for t in fig.axes[0].texts)


def test_three_levels_and_no_truth() -> None:
    hosts = [f"h{i}" for i in range(8)]
    h = Hierarchy.from_partitions(hosts, [[0, 0, 1, 1, 2, 2, 3, 3], [0, 0, 0, 0, 1, 1, 2, 2],
                                          [0, 0, 0, 0, 1, 1, 1, 1]])
    fig = plot_hasse(h)
    _check_diagram(fig, h)
    assert fig.tomography_info["levels"] == {1: ["L1C0", "L1C1", "L1C2", "L1C3"],
                                             2: ["L2C0", "L2C1", "L2C2"], 3: ["L3C0", "L3C1"]}
    assert texts(fig.axes[0])["L3C1"].get_text() == "L3C1\n4 hosts"
    one = Hierarchy.from_partitions(["a", "b"], [[0, 0]])
    fig = plot_hasse(one)
    assert "network" not in texts(fig.axes[0]) and fig.tomography_info["links"] == []
