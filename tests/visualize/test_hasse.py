"""plot_hasse: one row per level, every cluster under its parent, legible at its print size."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from tomography.model.hierarchy import Hierarchy
from tomography.model.topology import read_topology
from visualize import plot_hasse
from visualize._common import truth_summary

from .helpers import assert_legible, saved, segments, texts


def _joined(lines: list[np.ndarray], terminals: list[np.ndarray]) -> list[set[int]]:
    """Groups of segments that meet (an end of one on the other) away from a box centre."""
    a = np.array([s[0] for s in lines])
    b = np.array([s[1] for s in lines])
    low, high = np.minimum(a, b) - 1e-9, np.maximum(a, b) + 1e-9
    stops = {tuple(np.round(t, 9)) for t in terminals}
    group = list(range(len(lines)))

    def find(i: int) -> int:
        while group[i] != i:
            i = group[i]
        return i

    for i, seg in enumerate(lines):
        for end in seg:
            if tuple(np.round(end, 9)) in stops:
                continue
            cross = (b - a)[:, 0] * (end - a)[:, 1] - (b - a)[:, 1] * (end - a)[:, 0]
            on = (np.abs(cross) < 1e-9) & np.all((low <= end) & (end <= high), axis=1)
            for j in np.flatnonzero(on):
                group[find(i)] = find(int(j))
    found: dict[int, set[int]] = {}
    for i in range(len(lines)):
        found.setdefault(find(i), set()).add(i)
    return list(found.values())


def _crosses(seg: np.ndarray, box: tuple[float, float, float, float]) -> bool:
    """Whether a segment passes through the inside of a box (Liang-Barsky clipping)."""
    x0, y0, x1, y1 = box
    (ax_, ay), (bx, by) = seg
    dx, dy = bx - ax_, by - ay
    start, stop = 0.0, 1.0
    for p, q in ((-dx, ax_ - x0), (dx, x1 - ax_), (-dy, ay - y0), (dy, y1 - ay)):
        if p == 0:
            if q <= 0:
                return False
        elif p < 0:
            start = max(start, q / p)
        else:
            stop = min(stop, q / p)
    return start < stop


def _check_diagram(fig, h: Hierarchy, labels: dict[str, str] | None = None) -> None:
    """Every cluster drawn (or folded) under its parent, joined to it, nothing on top of text."""
    ax = fig.axes[0]
    boxes = texts(ax)
    info = fig.tomography_info
    folded = {cid: box for box, ids in info["folded"].items() for cid in ids}
    # every cluster has its box, or is folded into its parent's +N box, or is part of a
    # folded cluster
    box_of: dict[str, str] = {}
    for level in reversed(h.levels):
        for c in level:
            if c.parent in box_of and box_of[c.parent] != c.parent:
                box_of[c.id] = box_of[c.parent]
            else:
                box_of[c.id] = folded.get(c.id, c.id)
                assert box_of[c.id] in boxes
            if c.id in folded:
                assert folded[c.id] == f"{c.parent or 'network'}:more"
    y = {b: boxes[b].get_position()[1] for b in info["positions"]}
    for number in range(1, h.depth + 1):
        row = [b for b, n in info["level_of"].items() if n == number]
        assert sorted(info["levels"][number]) == sorted(row)
        if number > 1 or info["rows"] == 1:
            assert len({y[b] for b in row}) == 1            # one row per level
        if number > 1:                                     # above every box of the level below
            assert min(y[b] for b in row) > max(y[b] for b, n in info["level_of"].items()
                                                if n == number - 1)
        assert texts(ax)[f"level:{number}"].get_text().startswith(f"level {number}")
    # a parent stands over its children
    for level in h.levels[1:]:
        for c in level:
            if box_of[c.id] != c.id:
                continue
            xs = [boxes[box_of[k]].get_position()[0] for k in c.children]
            assert min(xs) - 1e-9 <= boxes[c.id].get_position()[0] <= max(xs) + 1e-9
    # the lines join every box to its parent's box: each group of lines that meet away
    # from the boxes joins one parent to some of its children, and no other box
    lines = [np.asarray(s) for s in segments(ax, "links")]
    if info["top"]:
        lines += [np.asarray(s) for s in segments(ax, "top-links")]
    ends = {b: np.asarray(p) for b, p in info["positions"].items()}
    parent_of = {b: (b.rsplit(":", 1)[0] if b in info["folded"] else
                     h.cluster(b).parent or "network") for b in ends if b != "network"}
    joined = set()
    for group in _joined(lines, list(ends.values())):
        touched = {b for b, p in ends.items()
                   if any(np.allclose(p, lines[i][0]) or np.allclose(p, lines[i][1])
                          for i in group)}
        (parent,) = {parent_of[b] for b in touched if parent_of.get(b) in touched}
        assert touched - {parent} == {b for b in touched if parent_of.get(b) == parent}
        joined |= {(b, parent) for b in touched - {parent}}
    assert joined == {(b, p) for b, p in parent_of.items() if p != "network" or info["top"]}
    # no line runs through a box that is not one of its ends, no text on another
    fig.draw_without_rendering()
    to_data = ax.transData.inverted()
    for b, text in boxes.items():
        if b not in ends:
            continue
        (x0, y0), (x1, y1) = to_data.transform(text.get_bbox_patch().get_window_extent()
                                               .get_points())
        inside = (x0 + 0.01, y0 + 0.01, x1 - 0.01, y1 - 0.01)
        for s in lines:
            if not (np.allclose(s[0], ends[b]) or np.allclose(s[1], ends[b])):
                assert not _crosses(s, inside), (b, s)
    for dpi in (100, 300):
        fig.set_dpi(dpi)
        assert_legible(fig)
    # every drawn cluster gives its size and its truth
    for level in h.levels:
        for c in level:
            if box_of[c.id] == c.id:
                lines_of = boxes[c.id].get_text().split("\n")
                assert f"{len(c.hosts)} host{'s' if len(c.hosts) > 1 else ''}" in lines_of
                assert not labels or truth_summary(c.hosts, labels) in lines_of


def test_hasse_of_a_planted_hierarchy(planted, planted_hierarchy_, tmp_path) -> None:
    h = planted_hierarchy_
    assert [len(level) for level in h.levels] == [6, 2]
    fig = plot_hasse(h, truth=planted.labels)
    saved(fig, tmp_path / "hasse.pdf")
    saved(fig, tmp_path / "hasse.png")
    _check_diagram(fig, h, planted.labels)
    boxes = texts(fig.axes[0])
    # sizes and true labels in the boxes
    for c in h.levels[0]:
        lines = boxes[c.id].get_text().split("\n")
        assert lines[0] == c.id and lines[1] == "8 hosts"
        assert lines[2] == planted.labels[c.hosts[0]]
    assert {boxes[c.id].get_text().split("\n")[2] for c in h.levels[1]} == {"g0/*", "g1/*"}
    assert fig.tomography_info["rows"] == 1 and fig.tomography_info["folded"] == {}


def test_hasse_of_a_simulated_network(two_sites, two_sites_hierarchy, tmp_path) -> None:
    fig = plot_hasse(two_sites_hierarchy, truth=two_sites.labels, ids=False)
    saved(fig, tmp_path / "hasse.png")
    _check_diagram(fig, two_sites_hierarchy, two_sites.labels)
    assert not any(t.get_text().startswith("L1C") for t in fig.axes[0].texts)
    assert fig.get_size_inches()[0] == 3.4                 # fits one column


@pytest.mark.slow  # over 2 s
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


@pytest.fixture(scope="module")
def n2() -> tuple[Hierarchy, dict[str, str]]:
    """A hierarchy the size of the built-in N2 (576 hosts, its true labels).

    Level 1 cuts each of its 9 racks in two, some halves mixed with a few
    hosts of a neighbouring rack (as on noisy data); level 2 is its two
    sites.  Every cluster carries a confidence, as the CLI's do: boxes of
    four lines.
    """
    topology = read_topology("N2")
    hosts = [x.name for x in topology.hosts]
    labels = {x.name: x.label for x in topology.hosts}
    racks = sorted({x.cluster for x in topology.hosts})
    first = [2 * racks.index(x.cluster) + (int(x.name.split("-")[1]) >= 32)
             for x in topology.hosts]
    for i in range(0, len(hosts) - 64, 61):     # a few hosts land in the next rack's half
        first[i] = first[i + 64]
    second = [int(half >= 8) for half in first]      # racks R1-R4 are the halves 0 to 7
    h = Hierarchy.from_partitions(hosts, [first, second])
    h.levels = [[replace(c, confidence=0.5) for c in level] for level in h.levels]
    return h, labels


@pytest.mark.slow  # over 2 s
def test_n2_fits_a_page_legibly(n2, tmp_path) -> None:
    """18 clusters on level 1: at 6 pt or more they do not fit one row of 7 in, and wrap."""
    h, labels = n2
    assert [len(level) for level in h.levels] == [18, 2]
    assert any("mixed" in t for t in plot_hasse(h, truth=labels).tomography_info["texts"]
               .values())
    fig = plot_hasse(h, truth=labels)
    saved(fig, tmp_path / "n2.png")
    info = fig.tomography_info
    assert fig.get_size_inches()[0] <= 7.0 and info["size"][0] <= 7.0
    assert info["fontsize"] >= 6.0 and info["rows"] >= 2 and info["folded"] == {}
    _check_diagram(fig, h, labels)
    # the picture file is no wider than the page either
    import matplotlib.image

    fig.savefig(tmp_path / "tight.png", dpi=100, bbox_inches="tight", pad_inches=0.02)
    assert matplotlib.image.imread(tmp_path / "tight.png").shape[1] <= 7.5 * 100


@pytest.mark.slow  # over 2 s
def test_many_small_clusters_fold_to_keep_a_page() -> None:
    """300 clusters of 2 hosts: wrapped they would fill pages; the smallest ones are folded."""
    hosts = [f"h{i:03}" for i in range(600)]
    labels = {x: f"site{int(x[1:]) // 200}/rack{int(x[1:]) // 50}" for x in hosts}
    h = Hierarchy.from_partitions(hosts, [[i // 2 for i in range(600)],
                                          [i // 200 for i in range(600)]])
    fig = plot_hasse(h, truth=labels)
    info = fig.tomography_info
    assert info["size"][0] <= 7.0 and info["size"][1] <= 9.0
    assert set(info["folded"]) == {"L2C0:more", "L2C1:more", "L2C2:more"}
    folded = info["texts"]["L2C0:more"].split("\n")
    count = len(info["folded"]["L2C0:more"])
    assert folded[:3] == [f"+{count} clusters", f"{2 * count} hosts", "2 each"]
    assert folded[3] == "site0/*"
    _check_diagram(fig, h, labels)


@pytest.mark.slow  # over 2 s
def test_too_many_clusters_above_level_1_fold_to_keep_the_width() -> None:
    """12 clusters on level 2 do not fit side by side at 6 pt: the smallest are folded."""
    hosts = [f"h{i:03}" for i in range(120)]
    labels = {x: f"site{int(x[1:]) // 40}/rack{int(x[1:]) // 10}" for x in hosts}
    h = Hierarchy.from_partitions(hosts, [[i // 2 for i in range(120)],
                                          [i // 10 for i in range(120)],
                                          [i // 40 for i in range(120)]])
    fig = plot_hasse(h, truth=labels)
    info = fig.tomography_info
    assert info["size"][0] <= 7.0 and info["fontsize"] >= 6.0
    assert info["folded"] and all(h.cluster(ids[0]).level == 2
                                  for ids in info["folded"].values())
    _check_diagram(fig, h, labels)


def test_a_given_width_and_a_callers_axes() -> None:
    hosts = [f"h{i:02}" for i in range(40)]
    h = Hierarchy.from_partitions(hosts, [[i // 4 for i in range(40)], [i // 20 for i in range(40)]])
    fig = plot_hasse(h, width="single")
    assert fig.get_size_inches()[0] == 3.4 and fig.tomography_info["rows"] > 1
    _check_diagram(fig, h)
    from visualize.style import new_figure

    outer, ax = new_figure("double", height=4.0)
    assert plot_hasse(h, ax=ax) is outer
    assert len(texts(ax)) >= 12 and outer.get_size_inches()[0] == 7.0
