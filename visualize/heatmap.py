"""Blocks received by each host from each host, as a matrix (thesis Fig 5.1).

Row ``r``, column ``s``: the 16 KiB blocks host ``r`` received directly from
host ``s`` (``transfers.csv``), per iteration, or the symmetric ``w_n`` of
Eq 4.2.  Hosts are ordered by found cluster (then true label, then name) or,
without clusters, by true label; thin white lines separate the groups.  The
root of an iteration receives nothing, so its row is empty.

Tick labels are 6 pt: a group is named where its name fits along its rows
(with its true label on the y axis where both lines fit), and without
groups one host in ``k`` is named; the axis labels say when names were left
out (``one in 3 named``, ``small groups unnamed``).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import LogNorm, Normalize
from matplotlib.figure import Figure

from tomography.model.dataset import Measurement
from tomography.model.deprecation import renamed_parameter
from tomography.model.errors import ParameterError, TomographyError
from tomography.model.weights import directed_counts, mean_weights
from visualize._common import (_is_analysis, cluster_map, dataset_of, group_order,
                               truth_labels, truth_summary, weight_input)
from visualize.style import (MIN_FONT, SEQUENTIAL, block_unit, figure_of, paper_style,
                             set_info, text_size)

__all__ = ["plot_heatmap"]


@renamed_parameter("n", "iterations")
@renamed_parameter("measurement", "data")
def plot_heatmap(data: Any, *, iterations: int | None = None,
                 clusters: Any = None,
                 iteration: int | None = None, weights: str = "received", log: bool = False,
                 hosts: list[str] | None = None, truth: dict[str, str] | None = None,
                 weight: str | None = "weight",
                 width: str | float = "single", ax: Axes | None = None) -> Figure:
    """Heat map of the blocks each host received from each other host, or of any weights.

    Parameters
    ----------
    data : Measurement, dataset directory, or weights as the analysis takes them
        A broadcast dataset or its directory (its block counts), a probe dataset (its measured
        bandwidth, Mbit/s), or a weight matrix with ``hosts``, a square
        DataFrame, an edge list, a networkx graph, EdgeWeights
        (:func:`tomography.model.interop.as_weights`): then the symmetric weights.
    iterations : int, optional
        Average over the first ``iterations`` (default: all of them; ``n=``, deprecated).
    clusters : mapping, Hierarchy, list of Cluster, FlatClustering or sequence, optional
        Found clusters to order the hosts by (a Hierarchy gives its level 1);
        by default the hosts are ordered by true label.
    iteration : int, optional
        Show this one iteration instead of a mean (as the thesis's Fig 5.1).
    weights : {"received", "w"}, default "received"
        For a broadcast dataset: ``"received"``, directed counts, row =
        receiver, column = sender; ``"w"``: the symmetric ``w_n`` (Eq 4.2),
        blocks both ways.  Other inputs are always symmetric weights.
    log : bool, default False
        Logarithmic colour scale (zero cells stay at the bottom colour).
    hosts : list of str, optional
        The rows of a matrix input.
    truth : mapping host -> label, Measurement, "labels" or truth file, optional
        Ground truth to order by and name groups with (default: the dataset's
        labels, or a graph's ``label`` node attributes).
    weight : str or None, default "weight"
        The weight attribute of a networkx graph, or column of an edge list.
    width : {"single", "double"} or float
        Figure width (ignored with ``ax``).
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.figure.Figure
        ``fig.tomography_info``: ``shape``, ``order`` (hosts, top to bottom),
        ``groups`` (name, first row, last row + 1), ``quantity``, ``label``
        (the colour bar's), ``total`` (sum of the matrix).

    Examples
    --------
    >>> from tomography.model.synthetic import planted_partition
    >>> m = planted_partition(12, 3, iterations=2, seed=0, file_size=2**20)
    >>> fig = plot_heatmap(m)
    >>> info = fig.tomography_info
    >>> info["shape"], [g[0] for g in info["groups"]], info["total"]
    ((12, 12), ['g0', 'g1', 'g2'], 704.0)
    >>> print(info["label"])
    blocks received per iteration
    (16 KiB blocks, mean of 2)

    Any weights, e.g. a matrix with its hosts:

    >>> W = np.array([[0, 9, 1], [9, 0, 1], [1, 1, 0]], dtype=float)
    >>> plot_heatmap(W, hosts=["a", "b", "c"], clusters=[0, 0, 1]).tomography_info["order"]
    ['a', 'b', 'c']
    """
    if weights not in ("received", "w"):
        raise ParameterError(f"weights must be 'received' or 'w', got {weights!r}")
    if isinstance(data, (str, os.PathLike)) or _is_analysis(data):
        data = dataset_of(data, "plot_heatmap")   # a directory, or an Analysis's dataset
    broadcast = isinstance(data, Measurement) and bool(data.iteration_ids)
    if broadcast:
        if hosts is not None:
            raise ParameterError("hosts= names a matrix's rows; a dataset names its own")
        matrix, label = _counts(data, iterations, iteration, weights)
        hosts = data.host_names
        truth = data.labels if truth is None else truth_labels(truth, data)
        truth = truth or None
    else:
        if iteration is not None:
            raise ParameterError("iteration= shows one broadcast iteration; these weights "
                                 "have none")
        w, truth = weight_input(data, hosts, weight=weight, iterations=iterations, truth=truth)
        matrix, hosts, weights = w.matrix.toarray(), w.hosts, "w"
        label = f"weight between hosts\n({w.unit})" if w.unit != "weight" else \
            "weight between hosts"
        if w.unit == "Mbit/s":
            label = ("bandwidth (Mbit/s)\nmedian of repeats, mean of both directions"
                     if isinstance(data, Measurement) else "bandwidth (Mbit/s)")
    found = cluster_map(clusters, hosts)
    order, groups = group_order(hosts, found, truth)
    index = {h: i for i, h in enumerate(hosts)}
    perm = [index[h] for h in order]
    shown = matrix[np.ix_(perm, perm)]
    grouped_by = "cluster" if found else ("true label" if truth else "")

    with paper_style():
        fig, ax = figure_of(ax, width, aspect=0.85)
        positive = shown[shown > 0]
        if log and positive.size:
            norm = LogNorm(vmin=positive.min(), vmax=positive.max())
            data = np.ma.masked_less_equal(shown, 0)
        else:
            norm = Normalize(vmin=0, vmax=shown.max() if shown.max() > 0 else 1)
            data = shown
        cmap = _cmap()
        image = ax.imshow(data, cmap=cmap, norm=norm, interpolation="nearest",
                          aspect="equal", origin="upper")
        image.set_gid("heatmap")
        for _, start, _stop in groups[1:]:
            ax.axhline(start - 0.5, color="white", linewidth=0.6)
            ax.axvline(start - 0.5, color="white", linewidth=0.6)
        notes = ({name: truth_summary(order[start:stop], truth)
                  for name, start, stop in groups} if found and truth else {})
        ax.tick_params(length=0)
        for spine in ax.spines.values():
            spine.set_visible(False)
        bar = fig.colorbar(image, ax=ax, shrink=0.9, pad=0.02, aspect=30)
        bar.set_label(label, fontsize=6.5)
        bar.ax.tick_params(labelsize=6)
        bar.outline.set_linewidth(0.4)
        x_name, y_name = ("sender", "receiver") if weights == "received" else ("host", "host")
        ax.set_xlabel(x_name + (f" (ordered by {grouped_by})" if grouped_by else ""))
        ax.set_ylabel(y_name)
        note = _ticks(ax, order, groups, grouped_by, notes)
        if note:
            ax.set_xlabel(f"{ax.get_xlabel()}\n({note})")
            ax.set_ylabel(f"{y_name} ({note})")
        set_info(fig, kind="heatmap", shape=tuple(shown.shape), order=order,
                 groups=[tuple(g) for g in groups], quantity=weights, label=label,
                 total=float(shown.sum()))
    return fig


def _counts(measurement: Measurement, iterations: int | None, iteration: int | None,
            weights: str) -> tuple[np.ndarray, str]:
    """A broadcast dataset's matrix to show, and its colour bar's label."""
    ids = measurement.iteration_ids
    unit = block_unit(measurement.meta)
    if iteration is not None:
        if iteration not in ids:
            raise TomographyError(f"no iteration {iteration} in the dataset (it has "
                                  f"{ids[0]} to {ids[-1]})")
        counts = directed_counts(measurement, [iteration]).toarray()
        if weights == "w":
            return counts + counts.T, (f"w (Eq 4.1): blocks exchanged in iteration {iteration}"
                                       f"\n({unit} blocks)")
        return counts, f"blocks received in iteration {iteration}\n({unit} blocks)"
    count = len(ids) if iterations is None else iterations
    if weights == "w":
        return (mean_weights(measurement, count).toarray(),
                f"w_n (Eq 4.2): blocks exchanged per iteration\n({unit} blocks, n = {count})")
    if not 1 <= count <= len(ids):
        raise TomographyError(f"iterations must be between 1 and {len(ids)} (the "
                              f"iterations in the dataset), got {count}")
    return (directed_counts(measurement, ids[:count]).toarray() / count,
            f"blocks received per iteration\n({unit} blocks, "
            f"{'mean of ' + str(count) if count > 1 else 'one iteration'})")


def _cmap():
    import matplotlib

    cmap = matplotlib.colormaps[SEQUENTIAL]
    return cmap.with_extremes(bad=cmap(0.0))   # zero cells of a log scale: the bottom colour


def _ticks(ax: Axes, order: list[str], groups: list[tuple[str, int, int]],
           grouped_by: str, notes: dict[str, str]) -> str:
    """Name the groups (clusters with their truth on the y axis) or the hosts, at 6 pt.

    The figure is laid out once with every name to learn the matrix's size
    in points; then a group keeps its name where the name fits along its
    rows (its truth too where both lines fit), and without groups one host
    in ``k`` is named, ``k`` as small as fits.  Returns what the axis labels
    should add: ``""``, or ``"one in k named"``, or ``"small groups unnamed"``.
    """
    if grouped_by:
        items = [((start + stop - 1) / 2, stop - start, name, notes.get(name, ""))
                 for name, start, stop in groups]
    else:
        items = [(float(i), 1, host, "") for i, host in enumerate(order)]
    rotation = 90 if max(len(name) for _, _, name, _ in items) > 3 else 0
    ax.set_xticks([c for c, *_ in items], [name for _, _, name, _ in items],
                  rotation=rotation, fontsize=MIN_FONT)
    ax.set_yticks([c for c, *_ in items], [f"{name}\n{note}" if note else name
                                           for _, _, name, note in items], fontsize=MIN_FONT)
    fig = ax.get_figure()
    fig.draw_without_rendering()
    per_host = ax.get_window_extent().height * 72.0 / fig.dpi / len(order)   # points

    def fits(text: str, size: int, across: bool = False) -> bool:
        w, h = text_size(text, MIN_FONT)
        return (w if across else h) * 72.0 <= size * per_host

    if not grouped_by:
        step = next(k for k in range(1, len(order) + 1) if fits("h", k))
        shown = items[::step]
        x_names = y_names = [name for _, _, name, _ in shown]
        note = f"one in {step} named" if step > 1 else ""
    else:
        shown = [item for item in items if fits(item[2], item[1], across=rotation == 0)
                 and fits(item[2], item[1])]
        x_names = [name for _, _, name, _ in shown]
        y_names = [f"{name}\n{note}" if note and fits(f"{name}\n{note}", size) else name
                   for _, size, name, note in shown]
        note = "" if len(shown) == len(items) else "small groups unnamed"
    ax.set_xticks([c for c, *_ in shown], x_names, rotation=rotation, fontsize=MIN_FONT)
    ax.set_yticks([c for c, *_ in shown], y_names, fontsize=MIN_FONT)
    return note
