"""Each node of the tree of clusters at its busiest in the broadcasts: :func:`node_peaks`.

A traced broadcast (``measure bittorrent --trace``) records when each block
arrived and from whom.  Many connections crossed every link of the tree of
clusters at once, so the most blocks that left (entered) a node in a short
window is what its link carries, where that link held the broadcasts back.
On the emulated trees of clusters (two sites of two clusters at 20 and 32
hosts, three regions), a window of one second read the clusters' and sites'
links at 0.85-1.16 of their capacity (median 0.97); wider windows read lower
(2 s: median 0.91), narrower ones higher (0.5 s: 1.12).  Where the hosts'
cards held the broadcasts back instead (a node of one host, a link wider than
its hosts), libtorrent does not fill them (0.6-0.9 of a card) and the peak
says too little: :mod:`measure.figures` then runs the iperf3 test.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from tomography.export.bandwidth.figures import ROOT, figure_tree
from tomography.model.dataset.schema import BLOCK_SIZE

__all__ = ["node_peaks", "peak", "WINDOW"]

WINDOW = 1.0
"""Seconds of the windows a trace's blocks are counted in."""


def peak(trace: pd.DataFrame, window: float = WINDOW) -> float:
    """The most bits a set of traced blocks carried in one window of one iteration, per second.

    Examples
    --------
    >>> trace = pd.DataFrame({"iteration": [0, 0, 0, 1], "time_s": [0.1, 0.5, 1.2, 0.3]})
    >>> peak(trace) / (8 * 16384)   # two blocks in the first second of iteration 0
    2.0
    """
    if trace.empty:
        return float("nan")
    counts = trace.groupby([trace["iteration"], np.floor(trace["time_s"] / window)]).size()
    return float(counts.max() * BLOCK_SIZE * 8 / window)


def node_peaks(trace: pd.DataFrame, clusters: Mapping[str, Sequence[str]],
               groups: Mapping[str, Sequence[str]] | None = None, *,
               window: float = WINDOW) -> tuple[dict[str, float], dict[str, float]]:
    """What left and what entered each node of the tree of clusters at most, in bit/s.

    Parameters
    ----------
    trace : pandas.DataFrame
        A dataset's trace (:func:`tomography.model.dataset.read_trace`).
    clusters : mapping
        Cluster name -> its hosts.
    groups : mapping, optional
        Groups of clusters above them, as for :func:`figure_tree`.
    window : float
        Seconds of a window.

    Returns
    -------
    leaving, entering : dict
        Node (a cluster or a group; not :data:`ROOT`) -> the most bits per
        second its hosts sent to (received from) hosts outside it in one
        window of one iteration; NaN where the trace has none.

    Examples
    --------
    Two clusters; in the busiest second, three blocks left ``a`` for ``b``:

    >>> trace = pd.DataFrame({"iteration": 0, "time_s": [0.1, 0.2, 0.3, 1.5, 0.4],
    ...                       "sender": ["a1", "a1", "a2", "a1", "b1"],
    ...                       "receiver": ["b1", "b2", "b1", "b2", "b2"]})
    >>> leaving, entering = node_peaks(trace, {"a": ["a1", "a2"], "b": ["b1", "b2"]})
    >>> leaving["a"] / (8 * 16384), entering["b"] / (8 * 16384), leaving["b"]
    (3.0, 3.0, nan)
    """
    members, _ = figure_tree(list(clusters), groups)
    cluster_of = {h: c for c, hs in clusters.items() for h in hs}
    src = trace["sender"].map(cluster_of)
    dst = trace["receiver"].map(cluster_of)
    leaving: dict[str, float] = {}
    entering: dict[str, float] = {}
    for node, mine in members.items():
        if node != ROOT:
            out_of, into = src.isin(mine), dst.isin(mine)
            leaving[node] = peak(trace[out_of & dst.notna() & ~into], window)
            entering[node] = peak(trace[into & src.notna() & ~out_of], window)
    return leaving, entering
