"""The hierarchy of bandwidth clusters as a Hasse diagram (thesis Figs 5.19, 5.20).

Every cluster of every level is a box; a cluster stands below the cluster
of the next level that contains it, joined to it by a line, so a lower box
means higher achievable bandwidth inside.  Clusters of one level share a
row and are unordered among themselves.  Each box gives the cluster's id (as
in ``tomography hierarchy``), its size and, with a ground truth, the true
label its hosts share (``east/*`` for a shared prefix, ``mixed: 3/5 east``
otherwise).  The whole network, the implicit top of every Hasse diagram, is
drawn above the top level with dashed lines.

The boxes are measured, not guessed: the diagram is laid out in inches at
the size it prints, with fonts of 6 to 7 pt, one column wide when it fits
there, else the page (7 in).  When the level-1 clusters do not fit side by
side (many small clusters, as ``--start finest`` finds on large networks),
the children of each cluster are wrapped into a few rows under it and hang
from one line that branches to each row (an organisation chart's bus), so
the picture keeps the page width and grows in height instead.  Beyond a
page's height (9 in), the smallest level-1 clusters of each parent are
folded into one dashed ``+N clusters`` box that gives their number, hosts,
sizes and truth; so are the smallest clusters of a higher level when that
level alone is wider than the page (their parts are then not drawn).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Iterable, Mapping

from matplotlib.axes import Axes
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure

from tomography.model.deprecation import keyword_only, renamed_parameter
from tomography.model.errors import expect
from tomography.model.hierarchy import ClusterTree, Hierarchy
from visualize._common import analysed, below, truth_labels, truth_summary
from visualize.style import (MIN_FONT, NEUTRAL, PALETTE, SINGLE, figure_of, inches,
                             paper_style, set_info, text_size, tint)

__all__ = ["plot_hasse"]

FONTS = (7.0, 6.5, MIN_FONT)
"""Font sizes tried, largest first, before wrapping the level-1 row."""

PAD = 0.3
"""Padding of a box around its text, in font sizes."""

LINESPACING = 1.1
GAP = 0.06
"""Inches between two boxes of one row of siblings."""

GROUP_GAP = 0.16
"""Inches between the boxes of two different parents."""

ROW_GAP = 0.3
"""Inches between the rows of two levels (the links run there)."""

WRAP_GAP = 0.12
"""Inches between two wrapped rows of level-1 clusters (a bus line runs there)."""

MAX_HEIGHT = 9.0
"""Inches: a taller diagram folds level-1 clusters (a page's text is about 9 in high)."""

GUTTER = 0.1
"""Inches left of a wrapped group of clusters, for the line its rows hang from."""

LABEL_GAP = 0.1
"""Inches between the level names and the diagram."""

MARGIN = 0.02
"""Inches of white around the drawing in its own figure."""

NETWORK = "network"
"""Id of the box of the whole network."""

TITLE = "lower = higher achievable bandwidth inside"


@dataclass
class _Tree:
    """The boxes to draw and how they hang together.

    Boxes are the clusters, the network and the boxes of folded clusters; a
    folded cluster and its parts have no box of their own.
    """

    kids: dict[str, list[str]]                  # box -> its children's boxes
    level: dict[str, int]                       # box -> level (the network: depth + 1)
    texts: dict[str, str]
    folded: dict[str, list[str]]                # folded box -> the clusters it stands for
    leaf_parents: list[str]                     # boxes whose children are on level 1


@dataclass
class _Layout:
    """Where every box goes, in inches from the bottom left of the diagram."""

    fontsize: float
    rows: int                                   # rows of level-1 boxes
    centre: dict[str, tuple[float, float]]
    solid: list[tuple[tuple[float, float], tuple[float, float]]]
    dashed: list[tuple[tuple[float, float], tuple[float, float]]]
    levels: dict[int, float]                    # level -> y of its name
    x_min: float                                # x of the level names' left edge
    name_w: float                               # width of the level names
    width: float                                # of the whole drawing, names included
    height: float                               # from y = 0 to the top of the top row


def _level_names(hierarchy: Hierarchy) -> dict[int, str]:
    """``level 2`` with its confidence, and ``unsupported`` when it is below the threshold."""
    names = {}
    for k in range(1, hierarchy.depth + 1):
        text = f"level {k}"
        if hierarchy.confidence:
            if hierarchy.supported(k) in (True, None):
                text += f"\nconf {hierarchy.confidence[k - 1]:.2f}"
            else:
                text += f"\nconf {below(hierarchy.confidence[k - 1]):.2f}\nunsupported"
        names[k] = text
    return names


def _tree(hierarchy: Hierarchy, texts: Mapping[str, str], labels: Mapping[str, str] | None,
          folds: Mapping[str, Iterable[str]]) -> _Tree:
    """The boxes, with the children ``folds[parent]`` of each parent folded into one box.

    The folded clusters and everything below them give way to one box on
    their level, under their parent, that says how many they are, their
    hosts, their sizes and their truth.
    """
    kids = {c.id: list(c.children) for level in hierarchy.levels for c in level}
    kids[NETWORK] = [c.id for c in hierarchy.levels[-1]]
    level = {c.id: c.level for lv in hierarchy.levels for c in lv}
    level[NETWORK] = hierarchy.depth + 1
    boxes = dict(texts)
    folded: dict[str, list[str]] = {}
    for parent, chosen in folds.items():
        wanted = set(chosen)
        rest = [cid for cid in kids[parent] if cid in wanted]   # in the drawing's order
        if not rest:
            continue
        size = {cid: len(hierarchy.cluster(cid).hosts) for cid in rest}
        hosts = [h for cid in rest for h in hierarchy.cluster(cid).hosts]
        low, high = min(size.values()), max(size.values())
        note = truth_summary(hosts, labels)
        box = f"{parent}:more"
        boxes[box] = (f"{texts[rest[0]]}\nparts not shown" if len(rest) == 1 else "\n".join(
            [f"+{len(rest)} clusters", f"{len(hosts)} hosts",
             f"{low}-{high} each" if low < high else f"{low} each"] + ([note] if note else [])))
        kids[parent] = [cid for cid in kids[parent] if cid not in size] + [box]
        kids[box] = []
        level[box] = level[rest[0]]
        folded[box] = rest
        below = list(rest)
        while below:
            cid = below.pop()
            below += kids.pop(cid)
            del boxes[cid], level[cid]
    leaf_parents = ([NETWORK] if hierarchy.depth == 1 else
                    [b for b, n in level.items() if n == 2 and kids[b]])
    return _Tree(kids=kids, level=level, texts=boxes, folded=folded,
                 leaf_parents=leaf_parents)


def _leaf_folds(hierarchy: Hierarchy, tree: _Tree, limit: int) -> dict[str, list[str]]:
    """The level-1 clusters to fold so that no parent keeps more than ``limit`` boxes.

    A parent with more keeps its ``limit - 1`` largest level-1 clusters.
    """
    return {parent: sorted(tree.kids[parent],
                           key=lambda cid: -len(hierarchy.cluster(cid).hosts))[limit - 1:]
            for parent in tree.leaf_parents if len(tree.kids[parent]) > limit}


def _upper_fold(hierarchy: Hierarchy, tree: _Tree) -> tuple[str, str] | None:
    """The smallest cluster above level 1 that may be folded, and its parent.

    Every parent keeps its largest child; None when nothing is left to fold.
    """
    candidates = []
    for parent, children in tree.kids.items():
        clusters = [c for c in children if c not in tree.folded]
        if tree.level[parent] >= 3 and len(clusters) >= 2:
            ordered = sorted(clusters, key=lambda c: -len(hierarchy.cluster(c).hosts))
            candidates += [(len(hierarchy.cluster(c).hosts), c, parent) for c in ordered[1:]]
    if not candidates:
        return None
    _, child, parent = min(candidates)
    return parent, child


def _arrange(tree: _Tree, size: Mapping[str, tuple[float, float]], name_w: float,
             show_top: bool, fontsize: float, rows: int) -> _Layout:
    """The layout with boxes of ``size`` and each group of level-1 siblings in ``rows`` rows.

    A group is the children of one level-2 cluster (or of the network when
    the hierarchy has one level); with ``k = ceil(n / rows)`` columns it
    fills ``ceil(n / k)`` rows, row by row.  Subtrees are side by side; a
    parent stands over its children.
    """
    kids = tree.kids
    depth = tree.level[NETWORK] - 1
    grids: dict[str, tuple[int, int, list[float]]] = {}   # columns, rows, column widths
    for p in tree.leaf_parents:
        n = len(kids[p])
        k = math.ceil(n / rows)
        widths = [max(size[kids[p][i]][0] for i in range(j, n, k)) for j in range(k)]
        grids[p] = (k, math.ceil(n / k), widths)

    def grid_width(p: str) -> float:
        k, r, widths = grids[p]
        return sum(widths) + GAP * (k - 1) + (GUTTER if r > 1 else 0.0)

    span: dict[str, float] = {}

    def measure(cid: str) -> float:
        if cid in grids:
            inner = grid_width(cid)
        else:   # a folded box above level 1 has no children
            inner = sum(measure(k) for k in kids[cid]) + GROUP_GAP * max(len(kids[cid]) - 1, 0)
        span[cid] = max(size[cid][0], inner)
        return span[cid]

    measure(NETWORK)
    block = max(r for _, r, _ in grids.values())         # rows of level 1
    heights = {number: max(size[b][1] for b, n in tree.level.items() if n == number)
               for number in range(1, depth + 1)}
    row_y: dict[int, float] = {}                          # level -> y of its row's centre
    top = block * heights[1] + (block - 1) * WRAP_GAP
    row_y[1] = top - heights[1] / 2
    for number in range(2, depth + 1):
        row_y[number] = top + ROW_GAP + heights[number] / 2
        top += ROW_GAP + heights[number]
    if show_top:
        row_y[depth + 1] = top + ROW_GAP + size[NETWORK][1] / 2
        top += ROW_GAP + size[NETWORK][1]

    centre: dict[str, tuple[float, float]] = {}

    def place(cid: str, left: float) -> float:
        if cid in grids:
            k, r, widths = grids[cid]
            x0 = left + (span[cid] - grid_width(cid)) / 2 + (GUTTER if r > 1 else 0.0)
            lefts = [x0 + sum(widths[:j]) + GAP * j for j in range(k)]
            for i, kid in enumerate(kids[cid]):
                row, col = divmod(i, k)
                centre[kid] = (lefts[col] + widths[col] / 2,
                               row_y[1] - row * (heights[1] + WRAP_GAP))
            x = (x0 + lefts[-1] + widths[-1]) / 2
        elif not kids[cid]:
            x = left + span[cid] / 2
        else:
            inner = sum(span[k] for k in kids[cid]) + GROUP_GAP * (len(kids[cid]) - 1)
            at = left + (span[cid] - inner) / 2
            xs = []
            for kid in kids[cid]:
                xs.append(place(kid, at))
                at += span[kid] + GROUP_GAP
            x = (xs[0] + xs[-1]) / 2
        w = size[cid][0]
        x = min(max(x, left + w / 2), left + span[cid] - w / 2)
        centre[cid] = (x, row_y.get(tree.level[cid], 0.0))
        return x

    place(NETWORK, 0.0)
    solid: list = []
    dashed: list = []
    for cid, children in kids.items():
        if not children or (cid == NETWORK and not show_top):
            continue
        lines = dashed if cid == NETWORK else solid
        if cid in grids and grids[cid][1] > 1:
            lines += _bus(cid, children, grids[cid][0], centre, size, x_left=min(
                centre[k][0] - size[k][0] / 2 for k in children) - GUTTER / 2)
        else:
            lines += [(centre[k], centre[cid]) for k in children]
    levels = {number: (row_y[1] - (block - 1) * (heights[1] + WRAP_GAP) / 2 if number == 1
                       else row_y[number]) for number in range(1, depth + 1)}
    return _Layout(fontsize=fontsize, rows=block, centre=centre, solid=solid,
                   dashed=dashed, levels=levels, x_min=-LABEL_GAP - name_w, name_w=name_w,
                   width=name_w + LABEL_GAP + span[NETWORK], height=top)


def _bus(parent: str, children: list[str], columns: int,
         centre: Mapping[str, tuple[float, float]], size: Mapping[str, tuple[float, float]],
         x_left: float) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    """Lines from ``parent`` to children wrapped in rows: a trunk at ``x_left``, a bus per row.

    The parent's line comes down to the first row's bus; a trunk at the
    left of the group joins every row's bus, which sits in the gap above
    its row; a short drop joins each child to its bus.
    """
    px, py = centre[parent]
    rows = [children[i:i + columns] for i in range(0, len(children), columns)]
    buses = [centre[row[0]][1] + size[row[0]][1] / 2 + WRAP_GAP / 2 for row in rows]
    lines = [((px, py), (px, buses[0])), ((x_left, buses[0]), (x_left, buses[-1]))]
    for row, y in zip(rows, buses):
        lines.append(((x_left, y), (max(px if row is rows[0] else x_left,
                                        centre[row[-1]][0]), y)))
        lines += [((centre[c][0], y), centre[c]) for c in row]
    return lines


def _fit(hierarchy: Hierarchy, texts: Mapping[str, str], labels: Mapping[str, str] | None,
         names: Mapping[int, str], show_top: bool, width: str | float | None
         ) -> tuple[float, _Tree, _Layout]:
    """The figure width, the boxes and their layout.

    Without a width, one column when everything fits in one row there, else
    the page.  In that width, the fewest rows of level-1 boxes, then the
    largest font.  While even one column of level-1 boxes per parent is too
    wide (too many clusters above level 1), the smallest cluster above
    level 1 is folded, each parent keeping its largest; when nothing is
    left to fold, the figure is as wide as the diagram.  When the diagram is
    taller than :data:`MAX_HEIGHT`, the fewest level-1 clusters are folded
    that bring it under (the height of two boxes per parent at least).
    """
    measured = functools.cache(lambda text, fontsize: text_size(text, fontsize,
                                                                 linespacing=LINESPACING))

    def arrange(tree: _Tree, fontsize: float, rows: int) -> _Layout:
        pad = 2 * PAD * fontsize / 72.0
        size = {b: (measured(t, fontsize)[0] + pad, measured(t, fontsize)[1] + pad)
                for b, t in tree.texts.items()}
        if not show_top:
            size[NETWORK] = (0.0, 0.0)
        name_w = max(measured(t, fontsize)[0] for t in names.values())
        return _arrange(tree, size, name_w, show_top, fontsize, rows)

    def best(tree: _Tree, limit: float) -> _Layout:
        largest = max(len(tree.kids[p]) for p in tree.leaf_parents)
        for rows in range(1, largest + 1):
            for fontsize in FONTS:
                layout = arrange(tree, fontsize, rows)
                if layout.width <= limit:
                    return layout
        return arrange(tree, MIN_FONT, largest)

    whole = _tree(hierarchy, texts, labels, {})
    if width is None:
        for fontsize in FONTS:
            layout = arrange(whole, fontsize, 1)
            if layout.width <= SINGLE:
                return SINGLE, whole, layout
        width = "double"
    limit = inches(width)
    folds: dict[str, list[str]] = {}
    tree, layout = whole, best(whole, limit)
    while layout.width > limit:    # too many clusters above level 1: fold the smallest
        choice = _upper_fold(hierarchy, tree)
        if choice is None:
            break
        folds.setdefault(choice[0], []).append(choice[1])
        tree = _tree(hierarchy, texts, labels, folds)
        layout = best(tree, limit)
    if layout.height > MAX_HEIGHT:  # too many on level 1: fold the smallest of each parent
        upper = tree
        low, high = 2, max(len(upper.kids[p]) for p in upper.leaf_parents) - 1
        tree = _tree(hierarchy, texts, labels, {**folds, **_leaf_folds(hierarchy, upper, low)})
        layout = best(tree, limit)
        while low < high:           # the most boxes per parent that keep the height
            middle = (low + high + 1) // 2
            candidate = _tree(hierarchy, texts, labels,
                              {**folds, **_leaf_folds(hierarchy, upper, middle)})
            fitted = best(candidate, limit)
            if fitted.height <= MAX_HEIGHT:
                low, tree, layout = middle, candidate, fitted
            else:
                high = middle - 1
    return max(limit, layout.width), tree, layout


@keyword_only("truth")
@renamed_parameter("labels", "truth")
def plot_hasse(hierarchy: Hierarchy, *, truth: Mapping[str, str] | None = None,
               ids: bool = True, top: bool = True, width: str | float | None = None,
               ax: Axes | None = None) -> Figure:
    """Draw a :class:`~tomography.model.hierarchy.Hierarchy` as a Hasse diagram.

    Parameters
    ----------
    hierarchy : Hierarchy or Analysis
        The hierarchy, or an analysis (its hierarchy, with its truth):
        ``plot_hasse(tomography.analyze("run"))``.
    truth : mapping host -> true label, Measurement, "labels" or truth file, optional
        The ground truth (a dataset's labels); each box then names the
        label its hosts share.
    ids : bool, default True
        Write each cluster's id (``L1C0``) in its box.
    top : bool, default True
        Draw the whole network above the top level when it has several clusters.
    width : {"single", "double"} or float, optional
        Figure width; by default one column when every level fits in one row
        there at 6 pt or more, else the page (7 in).  Level-1 clusters that
        do not fit side by side are wrapped into rows under their parent;
        when that makes the diagram taller than 9 in, each parent's smallest
        level-1 clusters are folded into one ``+N clusters`` box.
    ax : matplotlib Axes, optional
        Draw here; the boxes keep their size in points, so give the axes
        about ``fig.tomography_info["size"]`` inches.

    Returns
    -------
    matplotlib.figure.Figure
        ``fig.tomography_info``: ``levels`` (level -> its boxes, top row
        first, left to right), ``positions`` (box -> (x, y) of its centre,
        in inches), ``level_of`` (box -> level), ``folded`` (the box of
        folded clusters -> their ids), ``links`` (child, parent) pairs of
        clusters, ``top`` (whether the network box was drawn), ``texts``
        (box -> text), ``fontsize``, ``rows`` (rows of level-1 boxes: 1
        unless wrapped), ``size`` (width, height of the drawing in inches).
        A box is a cluster id, ``"network"``, or ``"<parent>:more"`` for
        folded clusters.

    Examples
    --------
    >>> h = Hierarchy.from_partitions(["a", "b", "c", "d"], [[0, 0, 1, 2], [0, 0, 1, 1]])
    >>> fig = plot_hasse(h, truth={"a": "x/1", "b": "x/1", "c": "y/2", "d": "y/3"})
    >>> info = fig.tomography_info
    >>> info["levels"]
    {1: ['L1C0', 'L1C1', 'L1C2'], 2: ['L2C0', 'L2C1']}
    >>> len(info["links"]), info["texts"]["L2C1"]
    (3, 'L2C1\\n2 hosts\\ny/*')
    >>> float(fig.get_size_inches()[0]), info["fontsize"], info["rows"]
    (3.4, 7.0, 1)

    Thirty level-1 clusters under two parents do not fit side by side on a
    page: they are wrapped into rows, at 6 pt or more.

    >>> hosts = [f"h{i:02}" for i in range(60)]
    >>> h = Hierarchy.from_partitions(hosts, [[i // 2 for i in range(60)],
    ...                                       [i // 30 for i in range(60)]])
    >>> info = plot_hasse(h).tomography_info
    >>> info["rows"] > 1, info["size"][0] <= 7.0, info["fontsize"] >= 6.0, info["folded"]
    (True, True, True, {})
    """
    if isinstance(hierarchy, ClusterTree):
        expect(hierarchy, Hierarchy, "a ClusterTree is drawn by plot_tree")
    hierarchy, truth = analysed(hierarchy, Hierarchy, "hierarchy", "plot_hasse", truth)
    truth = truth_labels(truth)
    show_top = top and len(hierarchy.levels[-1]) > 1
    texts: dict[str, str] = {}
    for level in hierarchy.levels:
        for c in level:
            parts = [c.id] if ids else []
            parts.append(f"{len(c.hosts)} host{'s' if len(c.hosts) != 1 else ''}")
            note = truth_summary(c.hosts, truth)
            if note:
                parts.append(note)
            if c.confidence is not None:
                parts.append(f"conf {c.confidence:.2f}")
            texts[c.id] = "\n".join(parts)
    texts[NETWORK] = f"network\n{len(hierarchy.hosts)} hosts"
    links = [(c.id, c.parent) for level in hierarchy.levels[:-1] for c in level if c.parent]
    names = _level_names(hierarchy)

    with paper_style():
        fig_width, tree, layout = _fit(hierarchy, texts, truth, names, show_top, width)
        height = layout.height + text_size(TITLE, MIN_FONT)[1] + ROW_GAP / 3
        own = ax is None
        fig, ax = figure_of(ax, fig_width, height=round(height + 2 * MARGIN, 4))
        fontsize = layout.fontsize
        ax.add_collection(LineCollection(layout.solid, colors="#404040", linewidths=0.7,
                                         zorder=1, gid="links"))
        if show_top:
            ax.add_collection(LineCollection(layout.dashed, colors=NEUTRAL, linewidths=0.7,
                                             linestyles="dashed", zorder=1, gid="top-links"))
        for box, text in tree.texts.items():
            if box == NETWORK and not show_top:
                continue
            number = tree.level[box]
            style = dict(facecolor=tint(PALETTE[(number - 1) % len(PALETTE)], 0.82),
                         edgecolor="#404040", linewidth=0.6)
            if box == NETWORK:
                style = dict(facecolor="white", edgecolor=NEUTRAL, linewidth=0.6,
                             linestyle="dashed")
            elif box in tree.folded:
                style.update(linestyle="dashed")
            ax.text(*layout.centre[box], text, ha="center", va="center", fontsize=fontsize,
                    zorder=2, gid=box, linespacing=LINESPACING,
                    color="#404040" if box == NETWORK else "black",
                    bbox=dict(boxstyle=f"round,pad={PAD}", **style))
        for number, y in layout.levels.items():
            ax.text(layout.x_min + layout.name_w, y, names[number], ha="right", va="center",
                    fontsize=fontsize, linespacing=LINESPACING, gid=f"level:{number}")
        ax.text(layout.x_min, height, TITLE, ha="left", va="top", fontsize=MIN_FONT,
                color=NEUTRAL, gid="title")
        if own:   # the axes fill the figure, one data unit is one inch: sizes as laid out
            fig.set_layout_engine("none")
            ax.set_position((0.0, 0.0, 1.0, 1.0))
            margin = (fig_width - layout.width) / 2
            ax.set_xlim(layout.x_min - margin, layout.x_min - margin + fig_width)
            ax.set_ylim(-MARGIN, height + MARGIN)
        else:
            ax.set_xlim(layout.x_min, layout.x_min + layout.width)
            ax.set_ylim(0.0, height)
            ax.set_aspect("equal")
        ax.set_axis_off()
        shown = [b for b in tree.texts if b != NETWORK or show_top]
        set_info(fig, kind="hasse",
                 levels={n: sorted((b for b in shown if tree.level[b] == n),
                                   key=lambda b: (-layout.centre[b][1], layout.centre[b][0]))
                         for n in range(1, hierarchy.depth + 1)},
                 positions={b: layout.centre[b] for b in shown},
                 level_of={b: tree.level[b] for b in shown}, folded=tree.folded,
                 links=links, top=show_top, texts={b: tree.texts[b] for b in shown},
                 fontsize=fontsize, rows=layout.rows, size=(layout.width, height))
    return fig
