"""Kamada-Kawai view of the host graph (thesis Figs 5.3 to 5.7).

Hosts are placed by a Kamada-Kawai (stress) layout of the graph of ``w_n``
(Eq 4.2) in which every edge is as long as ``mean(w_n) / w_n(e)``: hosts
that exchange many blocks, that is hosts joined by fast paths, are drawn
close.  Only the heaviest ``top`` share of the edges is drawn (the thesis
draws the top half); the layout itself uses all of them.

Four engines compute the same kind of layout; the one that ran is written on
the figure and in ``fig.tomography_info["engine"]``:

``"networkx"``
    :func:`networkx.kamada_kawai_layout` on the shortest-path lengths (pure
    Python and SciPy; about 2 s at 150 hosts, a minute at 512).
``"igraph"``
    igraph's C implementation, edge lengths as weights (about 1 s at 512 hosts).
``"neato"``
    Graphviz ``neato`` through pygraphviz (the thesis's tool), stress
    majorization of the Kamada-Kawai energy (``mode=major``, neato's default;
    about 2 s at 512 hosts).
``"auto"`` (default)
    networkx below :data:`AUTO_LIMIT` hosts, igraph from there on.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from scipy import sparse
from scipy.sparse.csgraph import shortest_path

from tomography.model.blas import one_blas_thread
from tomography.model.deprecation import renamed_parameter
from tomography.model.errors import GraphError, ParameterError, TomographyError
from visualize._common import cluster_map, natural_key, weight_input
from visualize.style import (MIN_FONT, NEUTRAL, cluster_style, figure_of, marker_of,
                             paper_style, set_info)

__all__ = ["plot_layout", "layout_positions", "ENGINES", "AUTO_LIMIT"]

ENGINES = ("auto", "networkx", "igraph", "neato")
AUTO_LIMIT = 150
"""``engine="auto"`` uses networkx below this many hosts, igraph from it on."""

_ENGINE_NAMES = {"networkx": "networkx", "igraph": "igraph", "neato": "Graphviz neato"}


def _edges(weights: Any) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """Upper-triangle edges (i < j) with positive weight of a symmetric matrix."""
    W = sparse.csr_array(weights)
    if W.shape[0] != W.shape[1]:
        raise GraphError(f"the weight matrix must be square, got {W.shape}")
    upper = sparse.triu(W + W.T, k=1).tocoo()
    keep = upper.data > 0
    # W + W.T doubles a symmetric matrix; halve so that weights stay w_n
    return W.shape[0], upper.row[keep], upper.col[keep], upper.data[keep] / 2.0


def layout_positions(weights: Any, *, engine: str = "auto", seed: int = 0
                     ) -> tuple[np.ndarray, str]:
    """Kamada-Kawai positions of the hosts of a weight matrix.

    Parameters
    ----------
    weights : sparse array or ndarray, shape (N, N)
        Symmetric ``w_n``; an edge is as long as ``mean / w``.
    engine : {"auto", "networkx", "igraph", "neato"}
        See the module documentation.
    seed : int, default 0
        Random initial positions (networkx, igraph) or neato's ``start`` seed.

    Returns
    -------
    positions : ndarray, shape (N, 2)
        Centred, scaled to unit radius.
    engine : str
        The engine that ran.

    Examples
    --------
    >>> w = np.array([[0, 9, 1, 1], [9, 0, 1, 1], [1, 1, 0, 9], [1, 1, 9, 0]], float)
    >>> pos, engine = layout_positions(w)
    >>> engine, pos.shape
    ('networkx', (4, 2))
    >>> near = np.linalg.norm(pos[0] - pos[1]); far = np.linalg.norm(pos[0] - pos[2])
    >>> bool(near < far)
    True
    """
    if engine not in ENGINES:
        raise ParameterError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    n, rows, cols, w = _edges(weights)
    if engine == "auto":
        engine = "networkx" if n < AUTO_LIMIT else "igraph"
    if n == 0:
        return np.zeros((0, 2)), engine
    if n == 1 or w.size == 0:
        angle = np.linspace(0, 2 * np.pi, n, endpoint=False)
        return np.column_stack([np.cos(angle), np.sin(angle)]), engine
    length = w.mean() / w
    rng = np.random.default_rng(seed)
    start = rng.uniform(-1.0, 1.0, size=(n, 2))
    if engine == "networkx":
        pos = _networkx(n, rows, cols, length, start)
    elif engine == "igraph":
        import igraph

        graph = igraph.Graph(n=n, edges=list(zip(rows.tolist(), cols.tolist())))
        pos = np.asarray(graph.layout_kamada_kawai(seed=start.tolist(),
                                                   weights=length.tolist()).coords, float)
    else:
        pos = _neato(n, rows, cols, length, seed)
    pos = pos - pos.mean(axis=0)
    radius = np.abs(pos).max()
    return (pos / radius if radius > 0 else pos), engine


def _networkx(n: int, rows: np.ndarray, cols: np.ndarray, length: np.ndarray,
              start: np.ndarray) -> np.ndarray:
    import networkx as nx

    graph = sparse.coo_array((np.r_[length, length], (np.r_[rows, cols], np.r_[cols, rows])),
                             shape=(n, n)).tocsr()
    dist = shortest_path(graph, directed=False)
    finite = dist[np.isfinite(dist)]
    # hosts in different components: as far apart as the farthest connected pair, and more
    dist[~np.isfinite(dist)] = 1.5 * (finite.max() if finite.size else 1.0)
    g = nx.empty_graph(n)
    # one BLAS thread: SciPy's L-BFGS-B calls BLAS on vectors of 2n numbers, and a
    # threaded BLAS on a loaded machine makes that up to 100 times slower
    with one_blas_thread():
        pos = nx.kamada_kawai_layout(g, dist={i: dict(enumerate(row)) for i, row in
                                              enumerate(dist.tolist())},
                                     pos={i: tuple(p) for i, p in enumerate(start)})
    return np.array([pos[i] for i in range(n)], dtype=float)


def _neato(n: int, rows: np.ndarray, cols: np.ndarray, length: np.ndarray,
           seed: int) -> np.ndarray:
    try:
        import pygraphviz
    except ImportError:
        raise TomographyError("engine 'neato' needs pygraphviz (pip install pygraphviz); "
                              "use engine 'igraph' or 'networkx'") from None
    graph = pygraphviz.AGraph(strict=False, directed=False)
    graph.graph_attr.update(mode="major", start=str(int(seed)), overlap="true",
                            splines="false")
    for i in range(n):
        graph.add_node(i)
    for i, j, ell in zip(rows.tolist(), cols.tolist(), length.tolist()):
        graph.add_edge(i, j, len=f"{ell:.6g}")
    graph.layout(prog="neato")
    return np.array([[float(v) for v in graph.get_node(i).attr["pos"].split(",")[:2]]
                     for i in range(n)], dtype=float)


@renamed_parameter("n", "iterations")
@renamed_parameter("measurement", "data")
def plot_layout(data: Any, *, clusters: Any = None,
                iterations: int | None = None,
                top: float = 0.5, engine: str = "auto", seed: int = 0,
                colour_by: str = "cluster", hosts: list[str] | None = None,
                truth: dict[str, str] | None = None, weight: str | None = "weight",
                width: str | float = "single", ax: Axes | None = None) -> Figure:
    """Kamada-Kawai layout of the host graph, coloured by cluster, shaped by true label.

    Parameters
    ----------
    data : Measurement, dataset directory, or weights as the analysis takes them
        A dataset or its directory (hosts, ground-truth labels, ``w_n`` or a probe dataset's
        bandwidths), or a weight matrix with ``hosts``, a square DataFrame,
        an edge list, a networkx graph, EdgeWeights
        (:func:`tomography.model.interop.as_weights`).
    clusters : mapping, Hierarchy, list of Cluster, FlatClustering or sequence, optional
        The clusters found (see :func:`visualize._common.cluster_map`); a
        Hierarchy gives its level 1.  Without it, colour and shape both show
        the ground truth.
    iterations : int, optional
        For a dataset: ``w_n`` over the first ``iterations`` (default: all;
        ``n=``, deprecated).
    top : float, default 0.5
        Share of the edges drawn, heaviest first (the thesis: the top half).
        The layout uses every edge.
    engine : {"auto", "networkx", "igraph", "neato"}, default "auto"
        Layout implementation (module documentation); the one that ran is
        written on the figure and in ``fig.tomography_info["engine"]``.
    seed : int, default 0
        Initial positions.
    colour_by : {"cluster", "label"}, default "cluster"
        With both clusters and labels: colour by found cluster and shape by
        true label, or the reverse.  The legend says which.
    hosts : list of str, optional
        The rows of a matrix input.
    truth : mapping host -> label, Measurement, "labels" or truth file, optional
        Ground truth (default: the dataset's labels, or a graph's ``label``
        node attributes).
    weight : str or None, default "weight"
        The weight attribute of a networkx graph, or column of an edge list.
    width : {"single", "double"} or float
        Figure width (ignored with ``ax``).
    ax : matplotlib Axes, optional
        Draw here instead of in a new figure.

    Returns
    -------
    matplotlib.figure.Figure
        ``fig.tomography_info``: ``engine`` (the one that ran; also in the
        title and in ``fig.get_label()``, ``"layout (igraph)"``), ``nodes``,
        ``edges`` (drawn), ``edges_total``, ``colours`` and ``shapes`` (number
        of each), ``positions`` (host -> (x, y)).

    Examples
    --------
    >>> from tomography.model.synthetic import planted_partition
    >>> m = planted_partition(24, 3, iterations=2, seed=0)
    >>> fig = plot_layout(m, clusters={h: int(h[1:]) // 8 for h in m.host_names})
    >>> info = fig.tomography_info
    >>> info["engine"], info["nodes"], info["edges"] == math.ceil(info["edges_total"] / 2)
    ('networkx', 24, True)
    """
    if not 0 < top <= 1:
        raise ParameterError(f"top must be in (0, 1], got {top}")
    if colour_by not in ("cluster", "label"):
        raise ParameterError(f"colour_by must be 'cluster' or 'label', got {colour_by!r}")
    w, truth = weight_input(data, hosts, weight=weight, iterations=iterations, truth=truth)
    hosts, W = w.hosts, w.matrix
    quantity = {"blocks per iteration": "w_n", "Mbit/s": "bandwidth"}.get(w.unit, "weight")
    pos, ran = layout_positions(W, engine=engine, seed=seed)
    _, rows, cols, w = _edges(W)
    k = math.ceil(top * w.size)
    drawn = np.argsort(-w, kind="stable")[:k]
    found = cluster_map(clusters, hosts)
    if truth is not None and any(h not in truth for h in hosts):
        truth = {h: truth.get(h, "(no label)") for h in hosts}
    if found and truth:
        colour_key, shape_key = (found, truth) if colour_by == "cluster" else (truth, found)
        colour_title, shape_title = (("colour: found cluster", "shape: true label")
                                     if colour_by == "cluster" else
                                     ("colour: true label", "shape: found cluster"))
    elif found or truth:
        colour_key = shape_key = found or truth
        colour_title = shape_title = "found cluster" if found else "true label"
    else:
        colour_key = shape_key = None
        colour_title = shape_title = ""
    colours = sorted(set(colour_key.values()), key=natural_key) if colour_key else [""]
    shapes = sorted(set(shape_key.values()), key=natural_key) if shape_key else [""]
    c_index = {c: i for i, c in enumerate(colours)}
    s_index = {s: i for i, s in enumerate(shapes)}

    with paper_style():
        own = ax is None
        fig, ax = figure_of(ax, width, aspect=0.8)
        segments = np.stack([pos[rows[drawn]], pos[cols[drawn]]], axis=1)
        alpha = float(np.clip(60.0 / max(k, 1) ** 0.75, 0.04, 0.5))
        lw = 0.2 + 0.8 * (w[drawn] / w[drawn].max()) if k else []
        ax.add_collection(LineCollection(segments, colors=NEUTRAL, linewidths=lw, alpha=alpha,
                                         zorder=1, gid="edges"))
        size = float(np.clip(900.0 / len(hosts), 5.0, 30.0))
        groups: dict[tuple[int, int], list[int]] = {}
        for i, h in enumerate(hosts):
            ci = c_index[colour_key[h]] if colour_key else 0
            si = s_index[shape_key[h]] if shape_key else 0
            groups.setdefault((ci, si), []).append(i)
        for (ci, si), idx in sorted(groups.items()):
            colour, filled = cluster_style(ci)
            ax.scatter(pos[idx, 0], pos[idx, 1], s=size, marker=marker_of(si),
                       c=colour if filled else "none", edgecolors="white" if filled else colour,
                       linewidths=0.3 if filled else 0.8, zorder=2, gid=f"nodes:{ci}:{si}")
        ax.set_aspect("equal")
        low, high = pos.min(axis=0) - 0.06, pos.max(axis=0) + 0.06
        ax.set_xlim(low[0], high[0])
        ax.set_ylim(low[1], high[1])
        ax.set_axis_off()
        ax.set_title(f"Kamada-Kawai ({_ENGINE_NAMES[ran]}), length \u221d 1/{quantity}\n"
                     f"top {top:.0%} of {w.size} edges drawn",
                     fontsize=MIN_FONT, color=NEUTRAL)
        _legends(fig, ax, own, colour_key, shape_key, colours, shapes, colour_title,
                 shape_title)
        set_info(fig, kind="layout", engine=ran, nodes=len(hosts), edges=int(k),
                 edges_total=int(w.size), colours=len(colours) if colour_key else 0,
                 shapes=len(shapes) if shape_key else 0,
                 positions={h: (float(x), float(y)) for h, (x, y) in zip(hosts, pos)})
        if fig.get_label() == "":
            fig.set_label(f"layout ({ran})")
    return fig


def _legends(fig: Figure, ax: Axes, own: bool, colour_key: dict | None,
             shape_key: dict | None, colours: list[str], shapes: list[str],
             colour_title: str, shape_title: str) -> None:
    """The colour legend right of the plot, the shape legend below it.

    Inside the axes when drawing into a caller's axes.
    """
    if not colour_key:
        return
    height_pt = fig.get_size_inches()[1] * 72.0
    rows = max(3, int(height_pt / 11.0) - 2)
    wide = fig.get_size_inches()[0] > 5.0

    def handle(ci: int | None, si: int | None) -> Line2D:
        colour, filled = cluster_style(ci) if ci is not None else ("#404040", True)
        return Line2D([], [], linestyle="", marker=marker_of(si) if si is not None else "s",
                      markersize=4, markerfacecolor=colour if filled else "none",
                      markeredgecolor=colour if not filled else "white",
                      markeredgewidth=0.3 if filled else 0.8)

    def add(handles: list, labels: list[str], title: str, where: str, ncols: int,
            gid: str) -> None:
        options = dict(title=title, ncols=ncols, handletextpad=0.2, columnspacing=0.8)
        if own:
            legend = fig.legend(handles, labels, loc=f"outside {where}", **options)
        else:
            legend = ax.legend(handles, labels, loc="best", **options)
            ax.add_artist(legend)
        legend.set_gid(gid)

    by_rows = max(1, math.ceil(len(colours) / rows))
    if colour_key is shape_key:
        add([handle(i, i) for i in range(len(colours))], colours, colour_title,
            "right upper", by_rows, "legend")
        return
    add([handle(i, None) for i in range(len(colours))], colours, colour_title, "right upper",
        by_rows, "legend-colour")
    add([handle(None, i) for i in range(len(shapes))], shapes, shape_title, "lower center",
        min(len(shapes), 8 if wide else 4), "legend-shape")
