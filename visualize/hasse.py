"""The hierarchy of bandwidth clusters as a Hasse diagram (thesis Figs 5.19, 5.20).

Every cluster of every level is a box; a cluster stands below the cluster
of the next level that contains it, joined to it by a line, so a lower box
means higher achievable bandwidth inside (docs/method.md).  Clusters of one
level share a row and are unordered among themselves.  Each box gives the
cluster's id (as in ``tomography hierarchy``), its size and, with a ground
truth, the true label its hosts share (``east/*`` for a shared prefix,
``mixed: 3/5 east`` otherwise).  The whole network, the implicit top of
every Hasse diagram, is drawn above the top level with dashed lines.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure

from tomography.hierarchy import Cluster, Hierarchy
from visualize._common import truth_summary
from visualize.style import (NEUTRAL, PALETTE, box_layout, figure_of, paper_style, set_info,
                             tint)

__all__ = ["plot_hasse"]


def _positions(hierarchy: Hierarchy) -> dict[str, float]:
    """x of every cluster: level-1 clusters one slot apart, parents centred on their children."""
    x: dict[str, float] = {}
    slot = 0

    def place(c: Cluster) -> float:
        nonlocal slot
        if not c.children:
            x[c.id] = float(slot)
            slot += 1
        else:
            xs = [place(hierarchy.cluster(k)) for k in c.children]
            x[c.id] = (xs[0] + xs[-1]) / 2.0
        return x[c.id]

    for c in hierarchy.levels[-1]:
        place(c)
    return x


def plot_hasse(hierarchy: Hierarchy, *, labels: Mapping[str, str] | None = None,
               ids: bool = True, top: bool = True, width: str | float | None = None,
               ax: Axes | None = None) -> Figure:
    """Draw a :class:`~tomography.hierarchy.Hierarchy` as a Hasse diagram.

    Parameters
    ----------
    hierarchy : Hierarchy
    labels : mapping host -> true label, optional
        The ground truth (``measurement.labels``); each box then names the
        label its hosts share.
    ids : bool, default True
        Write each cluster's id (``L1C0``) in its box.
    top : bool, default True
        Draw the whole network above the top level when it has several clusters.
    width : {"single", "double"} or float, optional
        Figure width; by default one column when the level-1 boxes fit in it
        at 6 pt, else the page.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.figure.Figure
        ``fig.tomography_info``: ``levels`` (level -> cluster ids, left to
        right), ``positions`` (id -> (x, y), y = level), ``links`` (child,
        parent) pairs, ``top`` (whether the network box was drawn), ``texts``
        (id -> box text).

    Examples
    --------
    >>> h = Hierarchy.from_partitions(["a", "b", "c", "d"], [[0, 0, 1, 2], [0, 0, 1, 1]])
    >>> fig = plot_hasse(h, labels={"a": "x/1", "b": "x/1", "c": "y/2", "d": "y/3"})
    >>> info = fig.tomography_info
    >>> info["levels"]
    {1: ['L1C0', 'L1C1', 'L1C2'], 2: ['L2C0', 'L2C1']}
    >>> len(info["links"]), info["texts"]["L2C1"]
    (3, 'L2C1\\n2 hosts\\ny/*')
    """
    x = _positions(hierarchy)
    depth = hierarchy.depth
    leaves = len(hierarchy.levels[0])
    show_top = top and len(hierarchy.levels[-1]) > 1
    rows = depth + (1 if show_top else 0)
    texts: dict[str, str] = {}
    for level in hierarchy.levels:
        for c in level:
            parts = [c.id] if ids else []
            parts.append(f"{len(c.hosts)} host{'s' if len(c.hosts) != 1 else ''}")
            note = truth_summary(c.hosts, labels)
            if note:
                parts.append(note)
            if c.confidence is not None:
                parts.append(f"conf {c.confidence:.2f}")
            texts[c.id] = "\n".join(parts)
    width, fontsize = box_layout(list(texts.values()), leaves, width, share=0.78)
    links = [(c.id, c.parent) for level in hierarchy.levels[:-1] for c in level if c.parent]

    with paper_style():
        fig, ax = figure_of(ax, width, height=0.3 + 0.62 * rows)
        segments = [((x[a], hierarchy.cluster(a).level), (x[b], hierarchy.cluster(b).level))
                    for a, b in links]
        ax.add_collection(LineCollection(segments, colors="#404040", linewidths=0.7,
                                         zorder=1, gid="links"))
        if show_top:
            top_x = float(np.mean([x[c.id] for c in hierarchy.levels[-1]]))
            ax.add_collection(LineCollection(
                [((x[c.id], depth), (top_x, depth + 1)) for c in hierarchy.levels[-1]],
                colors=NEUTRAL, linewidths=0.7, linestyles="dashed", zorder=1, gid="top-links"))
            ax.text(top_x, depth + 1, f"network\n{len(hierarchy.hosts)} hosts", ha="center",
                    va="center", fontsize=fontsize, zorder=2, gid="network", color="#404040",
                    bbox=dict(boxstyle="round,pad=0.3", facecolor="white", edgecolor=NEUTRAL,
                              linewidth=0.6, linestyle="dashed"))
        for number, level in enumerate(hierarchy.levels, start=1):
            colour = PALETTE[(number - 1) % len(PALETTE)]
            for c in level:
                ax.text(x[c.id], number, texts[c.id], ha="center", va="center",
                        fontsize=fontsize, zorder=2, gid=c.id, linespacing=1.1,
                        bbox=dict(boxstyle="round,pad=0.3", facecolor=tint(colour, 0.82),
                                  edgecolor="#404040", linewidth=0.6))
        ax.set_xlim(-0.6, leaves - 0.4)
        ax.set_ylim(0.45, rows + 0.55)
        ax.set_yticks(range(1, depth + 1), [
            f"level {k}" + ("" if not hierarchy.confidence else
                            f"\nconf {hierarchy.confidence[k - 1]:.2f}"
                            + ("" if hierarchy.supported(k) in (True, None) else "\nunsupported"))
            for k in range(1, depth + 1)])
        ax.set_title("lower = higher achievable bandwidth inside", loc="left", fontsize=6,
                     color=NEUTRAL)
        ax.set_xticks([])
        for side in ("top", "right", "bottom", "left"):
            ax.spines[side].set_visible(False)
        ax.tick_params(axis="y", length=0)
        set_info(fig, kind="hasse",
                 levels={n: [c.id for c in sorted(level, key=lambda c: x[c.id])]
                         for n, level in enumerate(hierarchy.levels, start=1)},
                 positions={c.id: (x[c.id], c.level) for level in hierarchy.levels
                            for c in level},
                 links=links, top=show_top, texts=texts)
    return fig

