"""How the metric is distributed: one edge over the iterations, all edges at once.

* :func:`plot_edge_weight` (thesis Fig 4.5): ``w(e)`` of Eq 4.1 in each
  iteration for one pair of hosts, bars, and the running mean ``w_n`` of
  Eq 4.2, a line; beside it, the histogram of the per-iteration values.  A
  single broadcast is a noisy measurement; the mean settles.
* :func:`plot_weight_distribution` (App. A, Fig 2): the distribution of
  ``w_n`` over all pairs of hosts, each dataset divided by its own mean (so
  that swarms of different speeds and file sizes compare), as a density
  histogram and an empirical CDF; several datasets are overlaid, e.g. a
  simulated run against a real one, with the two-sample Kolmogorov-Smirnov
  distance of the first two.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter

from tomography.model.dataset import Measurement
from tomography.model.deprecation import renamed_parameter
from tomography.model.errors import ParameterError, TomographyError
from tomography.model.units import listed
from tomography.model.weights import mean_weights
from visualize._common import dataset_of
from visualize.style import (NEUTRAL, PALETTE, block_unit, figure_of, new_figure, paper_style,
                             set_info)

__all__ = ["plot_edge_weight", "plot_weight_distribution", "edge_series"]


def edge_series(measurement: Measurement, a: str, b: str) -> tuple[np.ndarray, np.ndarray]:
    """``w(e)`` (Eq 4.1) of the pair ``a``, ``b`` in each iteration, and the running ``w_n``.

    Returns
    -------
    (w, w_n) : ndarrays of float, one value per iteration in increasing order

    Examples
    --------
    >>> from tomography.model.synthetic import planted_partition
    >>> m = planted_partition(8, 2, iterations=3, seed=0)
    >>> w, wn = edge_series(m, "h000", "h001")
    >>> bool(np.isclose(wn[-1], w.mean()))
    True
    """
    hosts = set(measurement.host_names)
    for host in (a, b):
        if host not in hosts:
            raise TomographyError(f"no host {host!r} in the dataset (hosts: "
                                  f"{listed(measurement.host_names)})")
    if a == b:
        raise TomographyError(f"an edge joins two different hosts, got {a!r} twice")
    ids = measurement.iteration_ids
    if not ids:
        raise TomographyError("the dataset has no broadcast iterations")
    t = measurement.transfers
    forth = (t["receiver"] == a) & (t["sender"] == b)
    back = (t["receiver"] == b) & (t["sender"] == a)
    pair = t[forth | back]
    per = pair.groupby("iteration")["blocks"].sum().reindex(ids, fill_value=0)
    w = per.to_numpy(dtype=float)
    return w, np.cumsum(w) / np.arange(1, len(w) + 1)


def plot_edge_weight(measurement: Measurement, a: str, b: str, *, hist: bool = True,
                     width: str | float = "single", ax: Axes | None = None) -> Figure:
    """The metric of one edge: ``w(e)`` per iteration (Eq 4.1) and the running mean ``w_n``.

    Parameters
    ----------
    measurement : Measurement or dataset directory
    a, b : str
        The two hosts of the edge.
    hist : bool, default True
        Add the histogram of the per-iteration values at the right (not
        with ``ax``).
    width : {"single", "double"} or float
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.figure.Figure
        ``fig.tomography_info``: ``edge``, ``w`` and ``w_n`` (lists, one
        value per iteration), ``iterations``, ``zero`` (iterations in which
        the pair exchanged nothing).

    Examples
    --------
    >>> from tomography.model.synthetic import planted_partition
    >>> m = planted_partition(8, 2, iterations=4, seed=0)
    >>> info = plot_edge_weight(m, "h000", "h001").tomography_info
    >>> info["edge"], len(info["w"]), info["iterations"]
    (('h000', 'h001'), 4, [0, 1, 2, 3])
    """
    measurement = dataset_of(measurement, "plot_edge_weight")
    w, wn = edge_series(measurement, a, b)
    ids = measurement.iteration_ids
    unit = block_unit(measurement.meta)
    zero = int((w == 0).sum())
    with paper_style():
        if ax is None and hist:
            fig, (ax, side) = new_figure("single" if width is None else width, aspect=0.6,
                                         ncols=2, sharey=True,
                                         gridspec_kw={"width_ratios": [4, 1]})
        else:
            fig, ax = figure_of(ax, width, aspect=0.6)
            side = None
        x = np.arange(1, len(ids) + 1)
        ax.bar(x, w, width=0.8, color=PALETTE[1], label="w(e), one iteration (Eq 4.1)",
               gid="w")
        ax.plot(x, wn, color=PALETTE[4], marker="o", markersize=2.5, linewidth=1.2,
                label="w_n(e), mean of the first n (Eq 4.2)", gid="w_n")
        ax.set_xlabel("iteration n")
        ax.set_ylabel(f"blocks exchanged ({unit})")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True, nbins=8))
        ax.set_xlim(0.3, len(ids) + 0.7)
        ax.set_ylim(0, max(float(w.max()), 1.0) * 1.4)   # room for the legend
        ax.set_title(f"edge {a} \u2013 {b}: nothing exchanged in {zero} of {len(ids)} "
                     f"iterations", fontsize=7)
        ax.legend(loc="upper left", fontsize=6)
        if side is not None:
            bins = min(12, max(3, len(ids) // 2))
            side.hist(w, bins=bins, orientation="horizontal", color=PALETTE[1],
                      edgecolor="white", linewidth=0.4, gid="histogram")
            side.set_xlabel("iterations")
            side.xaxis.set_major_locator(MaxNLocator(integer=True, nbins=3))
            side.tick_params(axis="y", labelleft=False)
        set_info(fig, kind="edge", edge=(a, b), w=w.tolist(), w_n=wn.tolist(),
                 iterations=ids, zero=zero)
    return fig


def _pair_values(measurement: Measurement, iterations: int | None) -> np.ndarray:
    """``w_n`` of every unordered pair of hosts, divided by its mean over all pairs."""
    W = mean_weights(measurement, iterations).toarray()
    values = W[np.triu_indices_from(W, 1)]
    mean = values.mean()
    if mean <= 0:
        raise TomographyError("the dataset exchanged no blocks: no distribution to draw")
    return values / mean


def _name(measurement: Measurement) -> str:
    """``simulated (two-sites-demo)``: the method and the topology of a dataset."""
    topology = measurement.meta.get("topology")
    return str(measurement.meta.get("method", "dataset")) + (f" ({topology})" if topology
                                                              else "")


@renamed_parameter("n", "iterations")
def plot_weight_distribution(measurement: Measurement, *others: Measurement,
                             names: Sequence[str] | None = None,
                             iterations: int | None = None,
                             log: bool = True, bins: int = 40, width: str | float = "single",
                             ax: Axes | Sequence[Axes] | None = None) -> Figure:
    """Distribution of ``w_n`` over all pairs of hosts, normalized by its mean; several overlaid.

    Parameters
    ----------
    measurement : Measurement or dataset directory
    *others : Measurement or dataset directory
        More datasets drawn over the first (e.g. simulated against real).
    names : sequence of str, optional
        Legend names; by default the method and topology of each dataset.
    iterations : int, optional
        Use ``w_n`` over the first ``iterations`` of every dataset (App. A
        uses 30); all iterations of each by default (``n=``, deprecated).
    log : bool, default True
        Logarithmic x axis (``w_n`` spans decades between a cluster and
        across a bottleneck); pairs with ``w_n = 0`` cannot be drawn on it
        and are counted in the legend.
    bins : int, default 40
    width : {"single", "double"} or float
    ax : Axes or pair of Axes, optional
        One Axes: the histogram only; two: histogram and CDF.  The legend is
        under the plots in a new figure, inside them in a caller's axes.

    Returns
    -------
    matplotlib.figure.Figure
        ``fig.tomography_info``: ``names``, ``pairs`` (pairs of hosts per
        dataset), ``zero`` (pairs with w_n = 0 per dataset), ``ks`` (the
        Kolmogorov-Smirnov statistic of the first two datasets, or None),
        ``log``.

    Examples
    --------
    >>> from tomography.model.synthetic import planted_partition
    >>> a = planted_partition(16, 2, iterations=3, seed=0)
    >>> b = planted_partition(16, 2, iterations=3, seed=1, noise=1.0)
    >>> info = plot_weight_distribution(a, b, names=["a", "b"]).tomography_info
    >>> info["names"], info["pairs"], 0 <= info["ks"] <= 1
    (['a', 'b'], [120, 120], True)
    """
    datasets = [dataset_of(m, "plot_weight_distribution") for m in (measurement, *others)]
    if names is None:
        names = [_name(m) for m in datasets]
        if len(set(names)) < len(names):
            names = [f"{name} #{i + 1}" for i, name in enumerate(names)]
    names = list(names)
    if len(names) != len(datasets):
        raise ParameterError(f"{len(names)} names for {len(datasets)} datasets")
    values = [_pair_values(m, iterations) for m in datasets]
    zero = [int((v == 0).sum()) for v in values]
    ks = None
    if len(values) >= 2:
        from scipy import stats

        ks = float(stats.ks_2samp(values[0], values[1]).statistic)
    positive = np.concatenate([v[v > 0] for v in values])
    if log:
        low, high = positive.min(), positive.max()
        edges = np.geomspace(low, high * 1.0001, bins + 1) if high > low else \
            np.array([low * 0.9, low * 1.1])
    else:
        edges = np.linspace(0.0, max(v.max() for v in values) * 1.0001, bins + 1)

    with paper_style():
        if ax is None:
            wide = width == "double" or (not isinstance(width, str) and float(width) > 5)
            fig, (hist_ax, cdf_ax) = (new_figure(width, aspect=0.36, ncols=2) if wide else
                                      new_figure(width, aspect=1.0, nrows=2, sharex=True))
        elif isinstance(ax, Axes):
            fig, hist_ax = figure_of(ax)
            cdf_ax = None
        else:
            hist_ax, cdf_ax = ax
            fig, _ = figure_of(hist_ax)
        for i, (name, v, z) in enumerate(zip(names, values, zero)):
            colour = PALETTE[i % len(PALETTE)] if i else "#000000"
            label = f"{name}, {len(v)} pairs" + (f" ({z} with w_n = 0)" if z and log else "")
            counts, _ = np.histogram(v[v > 0] if log else v, bins=edges)
            # share of all pairs per unit of x (per decade on a log axis): areas compare
            steps = np.diff(np.log10(edges)) if log else np.diff(edges)
            hist_ax.stairs(counts / (len(v) * steps), edges, linewidth=1.1, color=colour,
                           label=label, gid=f"hist:{name}")
            if cdf_ax is not None:
                xs = np.sort(v)
                cdf_ax.step(xs, np.arange(1, len(xs) + 1) / len(xs), where="post",
                            color=colour, linewidth=1.1, label=label, gid=f"cdf:{name}")
        what = "w_n / mean of w_n over all pairs" + (f" (n = {iterations})" if iterations else "")
        stacked = cdf_ax is not None and hist_ax.get_shared_x_axes().joined(hist_ax, cdf_ax)
        for a in (hist_ax, cdf_ax):
            if a is None:
                continue
            if log:
                a.set_xscale("log")
                # plain numbers (0.2, 0.5, 1, 2) rather than crowded minor powers of ten
                decades = np.log10(edges[-1] / edges[0])
                a.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)
                                                     if decades <= 2.5 else (1.0,)))
                a.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
                a.xaxis.set_minor_formatter(NullFormatter())
            if not (stacked and a is hist_ax):
                a.set_xlabel(what)
        hist_ax.set_ylabel("share of pairs\nper decade" if log else "density of pairs")
        if ax is None:   # under the plots: a long dataset name never squeezes them
            handles, texts = (cdf_ax or hist_ax).get_legend_handles_labels()
            legend = fig.legend(handles, texts, loc="outside lower center", fontsize=6)
        else:
            legend = (cdf_ax or hist_ax).legend(loc="upper left", fontsize=6)
        legend.set_gid("legend")
        if cdf_ax is not None:
            cdf_ax.set_ylabel("share of pairs\nwith w_n / mean \u2264 x")
            cdf_ax.set_ylim(0, 1.01)
            cdf_ax.axvline(1.0, color=NEUTRAL, linewidth=0.5, linestyle=":")
            if ks is not None:
                cdf_ax.set_title(f"Kolmogorov-Smirnov D = {ks:.3f}", fontsize=7)
        set_info(fig, kind="distribution", names=names, pairs=[len(v) for v in values],
                 zero=zero, ks=ks, log=log)
    return fig
