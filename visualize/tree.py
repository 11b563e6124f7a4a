"""The topology as a tree of bandwidth clusters (thesis Fig 5.23).

The nodes are the flat clusters of a :class:`~tomography.model.hierarchy.ClusterTree`,
the edges the maximum spanning tree of their averaged weights (Eq 5.4/5.5).
The tree hangs from its best-connected cluster (most edges, as ``tomography
tree`` prints it); children are ordered heaviest edge first.  Every edge is
labelled with its weight and drawn thicker the heavier it is; every node
gives the cluster's id, size and, with a ground truth, the true label its
hosts share.
"""

from __future__ import annotations

import textwrap
from typing import Mapping

import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure

from tomography.model.deprecation import keyword_only, renamed_parameter
from tomography.model.errors import expect
from tomography.model.hierarchy import ClusterTree, Hierarchy
from tomography.model.units import format_weight
from visualize._common import analysed, natural_key, truth_labels, truth_summary
from visualize.style import (MIN_FONT, NEUTRAL, PALETTE, box_layout, figure_of,
                             paper_style, set_info, tint)

__all__ = ["plot_tree"]


def _layout(tree: ClusterTree) -> tuple[dict[str, tuple[float, float]], list[str]]:
    """Tidy tree positions: leaves one slot apart, parents over their children, depth down."""
    adjacent: dict[str, list[tuple[str, float]]] = {c.id: [] for c in tree.clusters}
    for e in tree.edges:
        adjacent[e.source].append((e.target, e.weight))
        adjacent[e.target].append((e.source, e.weight))
    pos: dict[str, tuple[float, float]] = {}
    roots: list[str] = []
    slot = 0.0
    seen: set[str] = set()

    def place(cid: str, depth: int) -> float:
        nonlocal slot
        seen.add(cid)
        kids = sorted((k for k in adjacent[cid] if k[0] not in seen), key=lambda k: -k[1])
        kids = [k for k, _ in kids]
        for k in kids:
            seen.add(k)
        if not kids:
            x = slot
            slot += 1.0
        else:
            xs = [place(k, depth + 1) for k in kids]
            x = (xs[0] + xs[-1]) / 2.0
        pos[cid] = (x, -float(depth))
        return x

    order = sorted(adjacent, key=lambda cid: (-len(adjacent[cid]), natural_key(cid)))
    for cid in order:
        if cid not in seen:
            roots.append(cid)
            place(cid, 0)
            slot += 0.5   # a gap between the trees of a forest
    return pos, roots


@keyword_only("truth")
@renamed_parameter("labels", "truth")
def plot_tree(tree: ClusterTree, *, truth: Mapping[str, str] | None = None,
              width: str | float | None = None, ax: Axes | None = None) -> Figure:
    """Draw a :class:`~tomography.model.hierarchy.ClusterTree` with its edge weights.

    Parameters
    ----------
    tree : ClusterTree or Analysis
        From :func:`cluster.spanning_tree.cluster_tree`, or an analysis (its
        tree, with its truth): ``plot_tree(tomography.analyze("run"))``.
    truth : mapping host -> true label, Measurement, "labels" or truth file, optional
        The ground truth (a dataset's labels); each node then names the label its hosts share.
    width : {"single", "double"} or float, optional
        Figure width; by default one column when the boxes fit in it at 6 pt,
        else the page.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.figure.Figure
        ``fig.tomography_info``: ``nodes`` (ids), ``edges`` (source, target,
        weight), ``edge_labels`` (the texts on the edges), ``roots`` (one per
        connected component), ``positions``, ``connected``.

    Examples
    --------
    >>> from tomography.model.hierarchy import Cluster, TreeEdge
    >>> t = ClusterTree([Cluster("L1C0", 1, ("a",)), Cluster("L1C1", 1, ("b", "c")),
    ...                  Cluster("L1C2", 1, ("d",))],
    ...                 [TreeEdge("L1C0", "L1C1", 8.0), TreeEdge("L1C1", "L1C2", 2.5)])
    >>> info = plot_tree(t).tomography_info
    >>> info["roots"], info["edge_labels"]
    (['L1C1'], ['8', '2.5'])
    """
    if isinstance(tree, Hierarchy):
        expect(tree, ClusterTree, "cluster.hierarchy_tree(W, h) gives a hierarchy's tree; "
                                  "plot_hasse draws a Hierarchy")
    tree, truth = analysed(tree, ClusterTree, "tree", "plot_tree", truth)
    truth = truth_labels(truth)
    pos, roots = _layout(tree)
    depth = int(-min((y for _, y in pos.values()), default=0.0))
    slots = max((x for x, _ in pos.values()), default=0.0) + 1
    weights = np.array([e.weight for e in tree.edges], dtype=float)
    heaviest = weights.max() if weights.size and weights.max() > 0 else 1.0
    edge_labels = [format_weight(e.weight)
                   + ("" if e.confidence is None else f" ({e.confidence:.2f})")
                   for e in tree.edges]

    notes = {c.id: truth_summary(c.hosts, truth) for c in tree.clusters}
    boxes = {c.id: f"{c.id}\n{len(c.hosts)} host{'s' if len(c.hosts) != 1 else ''}"
             + (f"\n{notes[c.id]}" if notes[c.id] else "") for c in tree.clusters}
    width, fontsize = box_layout(list(boxes.values()), slots, width, share=0.85)

    with paper_style():
        fig, ax = figure_of(ax, width, height=0.5 + 0.7 * (depth + 1))
        segments = [(pos[e.source], pos[e.target]) for e in tree.edges]
        ax.add_collection(LineCollection(segments, colors=NEUTRAL,
                                         linewidths=0.6 + 2.4 * weights / heaviest,
                                         zorder=1, gid="edges"))
        for e, text in zip(tree.edges, edge_labels):
            (x0, y0), (x1, y1) = pos[e.source], pos[e.target]
            ax.text((x0 + x1) / 2, (y0 + y1) / 2, text, ha="center", va="center",
                    fontsize=max(fontsize - 0.5, min(fontsize, MIN_FONT)), color="#202020",
                    zorder=3,
                    gid=f"weight:{e.source}:{e.target}",
                    bbox=dict(boxstyle="round,pad=0.15", facecolor="white", edgecolor="none"))
        for i, c in enumerate(sorted(tree.clusters, key=lambda c: natural_key(c.id))):
            x, y = pos[c.id]
            ax.text(x, y, boxes[c.id], ha="center", va="center", fontsize=fontsize, zorder=2,
                    gid=c.id, linespacing=1.1,
                    bbox=dict(boxstyle="round,pad=0.3", facecolor=tint(PALETTE[i % 8]),
                              edgecolor="#404040", linewidth=0.6))
        ax.set_xlim(-0.6, slots - 0.4)
        ax.set_ylim(-depth - 0.5, 0.5)
        ax.set_axis_off()
        caption = [tree.weight_caption]
        if any(e.confidence is not None for e in tree.edges):
            caption.append("(in brackets: the edge's confidence, the share of resamples "
                           "whose tree has it)")
        if not tree.is_connected:
            caption.append("not connected: some clusters exchanged no data with the rest")
        chars = int(fig.get_size_inches()[0] * 24)   # what a line of 6 pt holds
        ax.set_title("\n".join(textwrap.fill(line, chars) for line in caption), fontsize=6,
                     color=NEUTRAL)
        set_info(fig, kind="tree", nodes=[c.id for c in tree.clusters],
                 edges=[(e.source, e.target, e.weight) for e in tree.edges],
                 edge_labels=edge_labels, roots=roots, positions=pos,
                 connected=tree.is_connected)
    return fig

