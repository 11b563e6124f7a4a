"""Blocks moved per host over one broadcast, from a trace (thesis Fig 5.2).

A trace (``trace.csv``, written by real broadcasts run with ``--trace``) has
one row per 16 KiB block: the time the sender finished uploading it, sender,
receiver, piece and block.  The thesis's Paraver view counted the messages
in transit at each peer; a block's start is not in the trace, so this view
shows, per host and per time bin, the blocks the host finished sending or
receiving in the bin (``metric="blocks"``, as a rate in blocks per second),
or the number of distinct peers it exchanged blocks with in the bin
(``metric="peers"``, its concurrent connections).  A host that stays
busy for longer is a host on a slower path.  A white tick (outlined in
black, explained by a key under the plot) marks the last block each host
received: its download ended there.

Every axis says what it shows: time in seconds since the broadcast
started; the hosts, each named at 6 pt when they fit (the figure grows up
to 4.5 in high for that) with the true label of each group of hosts on the
right, else the groups, else one host in ``k`` (the y label says which);
the colour bar in blocks (or peers) per second.

The flow-level simulator (``tomography simulate``) writes no trace; a trace
comes from ``tomography measure bittorrent ... --trace`` (local peers, a
hosts file or the emulated testbed) or ``tomography demo``.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib import patheffects
from matplotlib.axes import Axes
from matplotlib.colors import PowerNorm
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator

from tomography.model.dataset import Measurement, read_measurement, read_trace
from tomography.model.errors import DatasetError, ParameterError, TomographyError
from tomography.model.units import listed
from visualize._common import group_order
from visualize.style import (MIN_FONT, SEQUENTIAL, block_unit, figure_of, inches,
                             paper_style, set_info)

__all__ = ["plot_timeline", "NO_TRACE"]

NO_TRACE = ("this dataset has no trace (trace.csv). A trace is written by real broadcasts "
            "run with --trace: 'tomography measure bittorrent --local 8 -n 1 --trace -o RUN' "
            "(or --testbed TOPOLOGY, --hosts FILE), or 'tomography demo'. The flow-level "
            "simulator ('tomography simulate') does not write one.")
"""The message of the error raised for a dataset without a trace."""

NAME_PT = 1.2 * MIN_FONT
"""Points of height a host needs to be named on the y axis."""

MARGINS = 1.0
"""Inches of a timeline's height outside its axes: title, x axis, legend."""

MAX_HEIGHT = 4.5
"""Inches: a timeline grows up to this height to name every host."""


def _host_ticks(ax: Axes, order: list[str], groups: list[tuple[str, int, int]],
                root: str | None, capacity: int) -> str:
    """Name the rows, and return the y label that says how.

    Every host when ``capacity`` names fit, with the true labels of the
    groups on the right; else the groups; else one host in ``k``.
    """
    names = [f"{h} (root)" if h == root else h for h in order]
    grouped = len(groups) > 1
    centres = [(start + stop - 1) / 2 for _, start, stop in groups]
    labels = [name for name, _, _ in groups]
    if len(order) <= capacity:
        ax.set_yticks(range(len(order)), names, fontsize=MIN_FONT)
        if not grouped:
            return "host"
        right = ax.secondary_yaxis("right")
        right.set_yticks(centres, labels, fontsize=MIN_FONT)
        right.tick_params(length=0)
        right.spines["right"].set_visible(False)
        right.set_ylabel("true label", fontsize=MIN_FONT)
        return "host (grouped by true label)"
    if grouped and len(groups) <= capacity:
        ax.set_yticks(centres, labels, fontsize=MIN_FONT)
        return f"true label ({len(order)} hosts)"
    step = math.ceil(len(order) / max(capacity, 1))
    rows = list(range(0, len(order), step))
    ax.set_yticks(rows, [names[i] for i in rows], fontsize=MIN_FONT)
    return f"host (one in {step} named" + (", grouped by true label)" if grouped else ")")


def _load(dataset: Any, trace: pd.DataFrame | None) -> tuple[Measurement, pd.DataFrame]:
    """The measurement and its trace, from a dataset directory or a Measurement."""
    if isinstance(dataset, (str, os.PathLike)):
        m = read_measurement(dataset)
        if trace is None:
            try:
                trace = read_trace(dataset)
            except DatasetError as exc:
                if (Path(dataset) / "trace.csv").exists():
                    raise
                raise TomographyError(f"{dataset}: {NO_TRACE}") from exc
        return m, trace
    if isinstance(dataset, Measurement):
        trace = trace if trace is not None else getattr(dataset, "trace", None)
        if trace is None:
            raise TomographyError("this Measurement holds no trace: pass the dataset "
                                  "directory (plot_timeline('RUN')) or "
                                  "trace=tomography.model.dataset.read_trace('RUN'); " + NO_TRACE)
        return dataset, trace
    raise TypeError(f"dataset must be a dataset directory or a Measurement, got "
                    f"{type(dataset).__name__}")


def plot_timeline(dataset: str | os.PathLike[str] | Measurement, *,
                  iteration: int | None = None, trace: pd.DataFrame | None = None,
                  metric: str = "blocks", bins: int = 120, width: str | float = "single",
                  ax: Axes | None = None) -> Figure:
    """Blocks moved per host over the time of one broadcast (the thesis: in transit).

    Parameters
    ----------
    dataset : path or Measurement
        A dataset directory with ``trace.csv``, or a Measurement (then give
        ``trace``, e.g. ``read_trace(path)``).
    iteration : int, optional
        The broadcast to show; the first one traced by default.
    trace : pandas.DataFrame, optional
        The trace (columns of :func:`tomography.model.dataset.read_trace`).
    metric : {"blocks", "peers"}, default "blocks"
        Blocks sent plus received per second, or distinct peers exchanging
        blocks with the host, in each time bin.
    bins : int, default 120
        Time bins over the broadcast.
    width : {"single", "double"} or float
        Figure width (ignored with ``ax``); the height is 0.75 of it, or more
        to name every host.
    ax : matplotlib Axes, optional
        Draw here; hosts are named as the axes' height allows.

    Returns
    -------
    matplotlib.figure.Figure
        ``fig.tomography_info``: ``iteration``, ``order`` (hosts top to
        bottom), ``shape`` (hosts x bins), ``bin_s``, ``blocks`` (rows of the
        trace shown), ``finish`` (host -> time of its last received block).

    Raises
    ------
    TomographyError
        When the dataset has no trace (the message says how to make one), or
        no such iteration was traced.

    Examples
    --------
    >>> import tempfile
    >>> from tomography.model.dataset import MeasurementWriter
    >>> d = tempfile.mkdtemp()
    >>> w = MeasurementWriter(d, {"method": "bittorrent"}, [("a", "", ""), ("b", "", "")])
    >>> w.add_trace(0, [(0.1, "a", "b", 0, 0), (0.2, "a", "b", 0, 1), (0.3, "b", "a", 0, 0)])
    >>> w.add_iteration(0, root="a", transfers=[("b", "a", 2), ("a", "b", 1)], nbytes=32768)
    >>> fig = plot_timeline(d, bins=10)
    >>> fig.tomography_info["shape"], fig.tomography_info["blocks"]
    ((2, 10), 3)
    >>> ax = fig.axes[0]
    >>> ax.get_xlabel(), ax.get_ylabel(), [t.get_text() for t in ax.get_yticklabels()]
    ('time since the broadcast started (s)', 'host', ['a (root)', 'b'])
    """
    if metric not in ("blocks", "peers"):
        raise ParameterError(f"metric must be 'blocks' or 'peers', got {metric!r}")
    if bins < 1:
        raise ParameterError(f"bins must be >= 1, got {bins}")
    m, trace = _load(dataset, trace)
    traced = sorted(int(i) for i in trace["iteration"].unique())
    if not traced:
        raise TomographyError("the trace is empty: " + NO_TRACE)
    if iteration is None:
        iteration = traced[0]
    if iteration not in traced:
        raise TomographyError(f"iteration {iteration} has no trace (traced: "
                              f"{listed(traced, 10)})")
    rows = trace[trace["iteration"] == iteration]
    hosts = m.host_names
    truth = m.labels or None
    order, groups = group_order(hosts, truth)
    index = {h: i for i, h in enumerate(order)}
    end = float(rows["time_s"].max())
    span = end if end > 0 else 1.0
    edges = np.linspace(0.0, span, bins + 1)
    bin_s = span / bins
    t = np.clip(np.searchsorted(edges, rows["time_s"].to_numpy(float), side="right") - 1,
                0, bins - 1)
    unknown = sorted(set(rows["sender"]).union(rows["receiver"]) - set(index))
    if unknown:
        raise TomographyError(f"the trace names host {unknown[0]!r}, which is not in hosts.csv")
    s = rows["sender"].map(index).to_numpy(dtype=np.int64)
    r = rows["receiver"].map(index).to_numpy(dtype=np.int64)
    grid = np.zeros((len(order), bins))
    if metric == "blocks":
        np.add.at(grid, (s, t), 1.0)
        np.add.at(grid, (r, t), 1.0)
        grid /= bin_s
    else:
        pairs = pd.DataFrame({"a": np.r_[s, r], "b": np.r_[r, s], "t": np.r_[t, t]})
        active = pairs.drop_duplicates().groupby(["a", "t"]).size()
        grid[active.index.get_level_values(0), active.index.get_level_values(1)] = \
            active.to_numpy()
    finish = rows.groupby("receiver")["time_s"].max().to_dict()
    info = m.iterations[m.iterations["iteration"] == iteration]
    root = str(info["root"].iloc[0]) if len(info) else None
    nbytes = int(info["bytes"].iloc[0]) if len(info) else None
    unit = block_unit(m.meta)

    with paper_style():
        own = ax is None
        if own:   # tall enough to name every host at 6 pt, unless that takes MAX_HEIGHT
            height = max(0.75 * inches(width), len(order) * NAME_PT / 72.0 + MARGINS)
            fig, ax = figure_of(None, width, height=round(
                height if height <= MAX_HEIGHT else 0.75 * inches(width), 4))
        else:
            fig, ax = figure_of(ax)
        # square-root colours: the first seconds near the root are many times busier
        # than the rest, and a linear scale would leave everything else dark
        norm = PowerNorm(0.5, vmin=0.0, vmax=max(float(grid.max()), 1e-9))
        image = ax.imshow(grid, aspect="auto", interpolation="nearest", cmap=SEQUENTIAL,
                          norm=norm, extent=(0.0, span, len(order) - 0.5, -0.5),
                          origin="upper")
        image.set_gid("timeline")
        ys = [index[h] for h in finish]
        outline = [patheffects.withStroke(linewidth=2.2, foreground="black")]
        ax.scatter(list(finish.values()), ys, marker="|", s=16, color="white",
                   linewidths=0.9, zorder=3, gid="finish", path_effects=outline,
                   clip_on=False)   # a host that finished last has its tick on the edge
        for _, start, _stop in groups[1:]:
            ax.axhline(start - 0.5, color="white", linewidth=0.6)
        tall = (fig.get_size_inches()[1] - MARGINS if own else
                ax.get_position().height * fig.get_size_inches()[1])
        ylabel = _host_ticks(ax, order, groups if truth else [], root,
                             capacity=int(tall * 72.0 / NAME_PT))
        ax.xaxis.set_major_locator(MaxNLocator(nbins=6))
        ax.set_xlabel("time since the broadcast started (s)")
        ax.set_ylabel(ylabel)
        ax.tick_params(axis="y", length=0)
        size = f", {nbytes / 2**20:.3g} MiB" if nbytes else ""
        ax.set_title(f"iteration {iteration}" + (f", root {root}" if root else "") + size,
                     fontsize=7)
        bar = fig.colorbar(image, ax=ax, shrink=0.9, pad=0.02, aspect=30)
        bar.set_label(f"blocks sent + received per second\n({unit} blocks, "
                      f"{bin_s:.3g} s bins,\nsquare-root scale)" if metric == "blocks" else
                      f"peers exchanging blocks with the host\n(per {bin_s:.3g} s bin,\n"
                      "square-root scale)", fontsize=6.5)
        bar.ax.tick_params(labelsize=6)
        bar.outline.set_linewidth(0.4)
        key = Line2D([], [], linestyle="", marker="|", markersize=6, markeredgewidth=0.9,
                     color="white", path_effects=outline)
        place = dict(loc="outside lower center") if own else dict(loc="lower right")
        legend = (fig if own else ax).legend([key], ["the host's last block received"],
                                             fontsize=6, handlelength=1.0, **place)
        legend.set_gid("legend")
        set_info(fig, kind="timeline", iteration=iteration, order=order,
                 shape=tuple(grid.shape), bin_s=bin_s, blocks=int(len(rows)),
                 metric=metric,
                 finish={str(k): float(v) for k, v in finish.items()}, root=root)
    return fig
