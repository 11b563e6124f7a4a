"""Accuracy against the ground truth after 1, 2, ... n iterations (thesis Figs 5.13, 5.21).

The input is the table of :func:`cluster.accuracy.convergence`: one row per
``n`` with the NMI of the flat (Louvain) partition of ``w_n`` (column
``nmi``) and, for a hierarchy, the NMI of each level ``k`` against the
matching depth of the truth (``level_<k>_nmi``).  Several tables (a mapping
name -> table) are drawn together, one colour per table, to compare
scenarios (Fig 5.13) or simulated against real tomography (App. A, Fig 1).
The y axis runs from -0.08 to 1.08, so that a curve flat at 1 (the truth
found) or at 0 stands clear of the axis lines, markers whole.  The legend
above the plot takes up to three columns, as many as fit the figure.
"""

from __future__ import annotations

import os
import re
from typing import Mapping

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FixedLocator, MaxNLocator

from tomography.model.errors import ParameterError
from visualize._common import _is_analysis, natural_key
from visualize.style import PALETTE, figure_of, marker_of, paper_style, set_info

__all__ = ["plot_convergence"]

_LEVEL = re.compile(r"^level_(\d+)_nmi$")
Y_MARGIN = 0.08
"""NMI below 0 and above 1 shown, so that curves at 0 and 1 stand clear of the axes."""

_DASHES = ("-", "--", ":", "-.", (0, (5, 1, 1, 1)), (0, (1, 2)))


def _series(table: pd.DataFrame, levels: bool, overlapping: bool) -> list[tuple[str, str]]:
    """(column, legend name) of the curves a table gives."""
    if "n" not in table.columns or "nmi" not in table.columns:
        raise ParameterError("a convergence table needs the columns n and nmi (the output of "
                             "cluster.accuracy.convergence)")
    out = [("nmi", "flat (Louvain)")]
    if overlapping and "overlapping_nmi" in table.columns:
        out.append(("overlapping_nmi", "flat, overlapping NMI"))
    if levels:
        found = sorted((int(m.group(1)), c) for c in table.columns
                       if (m := _LEVEL.match(str(c))))
        out += [(c, f"hierarchy level {k}") for k, c in found]
    return out


def _table(table: object) -> pd.DataFrame:
    """A convergence table, from a table or an Analysis (its convergence against its truth)."""
    if isinstance(table, pd.DataFrame):
        return table
    if _is_analysis(table):
        return table.convergence()
    dataset = isinstance(table, (str, os.PathLike)) or hasattr(table, "transfers")
    raise ParameterError("plot_convergence takes a convergence table (a DataFrame) or an "
                         f"Analysis with a truth, got {type(table).__name__}" + (
                             ": draw a dataset's with plot_convergence(tomography.analyze("
                             "data, truth='labels'))" if dataset else ""))


def plot_convergence(table: pd.DataFrame | Mapping[str, pd.DataFrame], *, levels: bool = True,
                     overlapping: bool = False, kind: str = "line",
                     width: str | float = "single", ax: Axes | None = None) -> Figure:
    """NMI with the ground truth against the number of iterations.

    Parameters
    ----------
    table : DataFrame, Analysis, or a mapping name -> one of them
        :func:`cluster.accuracy.convergence` output (columns ``n``, ``nmi``,
        optionally ``overlapping_nmi`` and ``level_<k>_nmi``), or an Analysis
        with a truth (its :meth:`~tomography.pipeline.Analysis.convergence`).  With a
        mapping, every table gets its colour and every curve kind its line
        style.
    levels : bool, default True
        Draw the hierarchy levels' NMI when the table has them.
    overlapping : bool, default False
        Also draw the overlapping NMI of the flat partition.
    kind : {"line", "bar"}, default "line"
        Curves with markers, or grouped bars per ``n`` as in the thesis's
        Fig 5.21 (one table only).
    width : {"single", "double"} or float
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.figure.Figure
        ``fig.tomography_info``: ``series`` (legend names, in drawing order),
        ``n`` (the iterations of the first table), ``values`` (series ->
        NMI list), ``plot`` ("line" or "bar"), ``tables`` (names).

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"n": [1, 2, 3], "nmi": [0.5, 0.9, 1.0],
    ...                   "level_1_nmi": [0.6, 1.0, 1.0], "level_2_nmi": [1.0, 1.0, 1.0]})
    >>> info = plot_convergence(t).tomography_info
    >>> info["series"]
    ['flat (Louvain)', 'hierarchy level 1', 'hierarchy level 2']
    >>> info["values"]["flat (Louvain)"]
    [0.5, 0.9, 1.0]
    """
    if kind not in ("line", "bar"):
        raise ParameterError(f"kind must be 'line' or 'bar', got {kind!r}")
    tables = {name: _table(t) for name, t in
              (table.items() if isinstance(table, Mapping) else [("", table)])}
    if not tables:
        raise ParameterError("no convergence table to plot")
    if kind == "bar" and len(tables) > 1:
        raise ParameterError("kind='bar' draws one table; use kind='line' to compare several")
    several = len(tables) > 1
    kinds: list[str] = []   # every curve kind of every table, in a stable order
    for frame in tables.values():
        kinds += [label for _, label in _series(frame, levels, overlapping)
                  if label not in kinds]
    kinds.sort(key=lambda k: (not k.startswith("flat"), natural_key(k)))
    values: dict[str, list[float]] = {}
    order: list[str] = []

    with paper_style():
        fig, ax = figure_of(ax, width, aspect=0.62)
        handles: list[Line2D] = []
        for t_index, (name, frame) in enumerate(tables.items()):
            frame = frame.sort_values("n")
            series = _series(frame, levels, overlapping)
            n = frame["n"].to_numpy()
            for column, label in series:
                s_index = kinds.index(label)
                y = frame[column].to_numpy(dtype=float)
                full = f"{name}: {label}" if several else label
                values[full] = y.tolist()
                order.append(full)
                if kind == "bar":
                    step = 0.8 / len(series)
                    colour = "#000000" if s_index == 0 else PALETTE[(s_index - 1) % 8]
                    ax.bar(n - 0.4 + step * (s_index + 0.5), y, width=step * 0.95,
                           color=colour, label=full, gid=f"series:{full}")
                    continue
                if several:
                    colour = PALETTE[t_index % len(PALETTE)]
                    style = _DASHES[s_index % len(_DASHES)]
                else:
                    colour = "#000000" if s_index == 0 else PALETTE[(s_index - 1) % 8]
                    style = "-"
                # hollow markers, smaller for each later curve: where curves coincide
                # (often, at NMI 1) the markers nest and every curve stays visible
                size = max(2.0, 5.5 - 1.1 * s_index) if len(n) < 40 else 0
                line, = ax.plot(n, y, color=colour, linestyle=style, marker=marker_of(s_index),
                                markersize=size, markerfacecolor="white", markeredgewidth=0.9,
                                linewidth=1.0, label=full, gid=f"series:{full}",
                                zorder=2 + 0.1 * s_index, clip_on=False)
                handles.append(line)
        # NMI 1 (found exactly) and 0 are the commonest values: a margin keeps a flat
        # curve there clear of the axis lines, and its markers are never clipped
        ax.set_ylim(-Y_MARGIN, 1.0 + Y_MARGIN)
        ax.yaxis.set_major_locator(FixedLocator([0.0, 0.25, 0.5, 0.75, 1.0]))
        ax.set_xlabel("iterations n (clustering of w_n)")
        ax.set_ylabel("NMI with the ground truth")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True, nbins=8))
        ax.grid(axis="y", linewidth=0.4, color="#DDDDDD")
        ax.set_axisbelow(True)
        place = dict(loc="lower left", bbox_to_anchor=(0.0, 1.01), borderaxespad=0.0,
                     fontsize=6, columnspacing=1.2)
        if several:
            # two columns: the datasets by colour, the curves by line style and marker
            names = list(tables)
            rows = max(len(names), len(kinds))
            blank = Line2D([], [], linestyle="", marker="")
            left = [Line2D([], [], color=PALETTE[i % len(PALETTE)], linewidth=1.5)
                    for i in range(len(names))]
            right = [Line2D([], [], color="#404040", linestyle=_DASHES[i % len(_DASHES)],
                            marker=marker_of(i), markersize=3.5, markerfacecolor="white",
                            linewidth=1.0)
                     for i in range(len(kinds))]
            handles = left + [blank] * (rows - len(left)) + right + [blank] * (rows - len(right))
            texts = names + [""] * (rows - len(names)) + kinds + [""] * (rows - len(kinds))
            legend = ax.legend(handles, texts, ncols=2, **place)
        else:
            columns = min(3, len(order))
            legend = ax.legend(ncols=columns, **place)
            fig.draw_without_rendering()
            while columns > 1 and legend.get_window_extent().x1 > fig.bbox.x1:
                columns -= 1      # fewer columns than stick out of the figure
                legend.remove()
                legend = ax.legend(ncols=columns, **place)
                fig.draw_without_rendering()
        legend.set_gid("legend")
        first = next(iter(tables.values())).sort_values("n")
        set_info(fig, kind="convergence", series=order, n=first["n"].astype(int).tolist(),
                 values=values, plot=kind, tables=sorted(tables, key=natural_key))
    return fig
