"""The concurrency test for shared bottlenecks: does pair A slow down when pair B runs too?

Probe a pair A alone, then A and B at once: if A's bandwidth drops by more
than its own noise, A and B share a link.  To learn which *clusters* share
an uplink, :func:`choose_tests` takes, for every two clusters Ci and Cj, a
pair A leaving Ci and a pair B leaving Cj, each towards a host of another
cluster (two different destination clusters when there are enough, so that
a destination's own downlink is not what they share; among those, the ones
best connected to the sources).  :func:`run_concurrency` measures each test
``repeats`` times alone and together (iperf3, one test or two at a time)
and writes ``concurrency.csv`` beside ``probes.csv``;
:func:`tomography.model.dataset.concurrency.read_concurrency` reads the verdicts.

A drop counts when A together is below A alone by more than
``max(3 sd, 10 %)`` of A alone (``sd`` over A's solo repeats): three
standard deviations of the solo noise, and never less than 10%, because a
few repeats underestimate the noise.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from tomography.model.errors import TomographyError

__all__ = ["ConcurrencyTest", "choose_tests", "verdict", "format_bottlenecks", "clusters_of",
           "cluster_bandwidths"]

FLOOR = 0.10   # the least relative drop that counts
SIGMAS = 3.0   # standard deviations of A's solo runs that a drop must exceed


@dataclass(frozen=True)
class ConcurrencyTest:
    """Pair A from ``cluster_a`` and pair B from ``cluster_b``."""

    cluster_a: str
    cluster_b: str
    a: tuple[str, str]
    b: tuple[str, str]


def choose_tests(clusters: Mapping[str, list[str]],
                 bandwidth: Mapping[tuple[str, str], float] | None = None
                 ) -> list[ConcurrencyTest]:
    """One test per two clusters: A leaves the first, B the second, towards other clusters.

    Parameters
    ----------
    clusters : mapping
        Cluster name -> its hosts (at least three clusters).
    bandwidth : mapping, optional
        ``(cluster, cluster) -> bandwidth`` (any unit: only the order
        counts); destinations are chosen best connected to their sources.

    Examples
    --------
    >>> tests = choose_tests({"c1": ["a", "b"], "c2": ["c"], "c3": ["d"], "d": ["e", "f"]})
    >>> len(tests), tests[0]
    (6, ConcurrencyTest(cluster_a='c1', cluster_b='c2', a=('a', 'd'), b=('c', 'e')))
    """
    names = sorted(clusters)
    if len(names) < 3:
        raise TomographyError(f"the concurrency test needs at least 3 clusters, got "
                              f"{len(names)}: pairs must leave two clusters towards a third")
    bw = dict(bandwidth or {})

    def link(x: str, y: str) -> float:
        return bw.get((x, y), bw.get((y, x), 1.0))

    tests = []
    for ci, cj in itertools.combinations(names, 2):
        others = [k for k in names if k not in (ci, cj)]
        options = [(k, kk) for k in others for kk in others if k != kk] or \
            [(k, k) for k in others if len(clusters[k]) >= 2]
        if not options:
            continue
        k, kk = max(options, key=lambda o: (min(link(ci, o[0]), link(cj, o[1])),
                                            link(ci, o[0]) + link(cj, o[1])))
        dst_a = clusters[k][0]
        dst_b = clusters[kk][1] if k == kk else clusters[kk][0]
        tests.append(ConcurrencyTest(ci, cj, (clusters[ci][0], dst_a), (clusters[cj][0], dst_b)))
    return tests


def verdict(alone: list[float], together: list[float]) -> tuple[float, float, bool]:
    """A's drop (relative), the threshold it is held to, and whether it counts.

    Examples
    --------
    >>> verdict([100, 101, 99], [52, 50])
    (0.49, 0.1, True)
    >>> verdict([100, 101, 99], [97, 98])[2]
    False
    """
    a = np.asarray(alone, dtype=float)
    mean = float(a.mean())
    sd = float(a.std(ddof=1)) if len(a) > 1 else 0.0
    drop = 1 - float(np.mean(together)) / mean
    threshold = max(SIGMAS * sd / mean, FLOOR)
    return round(drop, 4), round(float(threshold), 4), bool(drop > threshold)


def format_bottlenecks(frame: pd.DataFrame) -> str:
    """The verdicts as a table: which clusters share a bottleneck, with the numbers.

    Examples
    --------
    >>> row = {"cluster_a": "c1", "cluster_b": "c2", "a_src": "a", "a_dst": "e", "b_src": "c",
    ...        "b_dst": "d", "a_alone_bps": 2e7, "a_together_bps": 1e7, "drop": 0.5,
    ...        "threshold": 0.1, "shared": True}
    >>> print(format_bottlenecks(pd.DataFrame([row])))  # doctest: +NORMALIZE_WHITESPACE
    clusters  A       B       A alone  A with B  drop  threshold  verdict
    c1 + c2   a -> e  c -> d  20.0     10.0      50%   10%        SHARED
    Mbit/s; A's drop beyond max(3 sd, 10%) of A alone means A and B share a link
    """
    header = ["clusters", "A", "B", "A alone", "A with B", "drop", "threshold", "verdict"]
    rows = [[f"{r.cluster_a} + {r.cluster_b}", f"{r.a_src} -> {r.a_dst}",
             f"{r.b_src} -> {r.b_dst}", f"{r.a_alone_bps / 1e6:.1f}",
             f"{r.a_together_bps / 1e6:.1f}", f"{r.drop:.0%}", f"{r.threshold:.0%}",
             "SHARED" if r.shared else "apart"] for r in frame.itertuples()]
    widths = [max(len(x[i]) for x in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(x, widths)).rstrip() for x in [header, *rows]]
    lines.append("Mbit/s; A's drop beyond max(3 sd, 10%) of A alone means A and B share a link")
    return "\n".join(lines)


def clusters_of(labels: Mapping[str, str]) -> dict[str, list[str]]:
    """Cluster name -> sorted hosts, from each host's label (its deepest level).

    Examples
    --------
    >>> clusters_of({"a": "s1/c1", "b": "s1/c1", "c": "s1/c2"})
    {'s1/c1': ['a', 'b'], 's1/c2': ['c']}
    """
    out: dict[str, list[str]] = {}
    for host, label in sorted(labels.items()):
        out.setdefault(label, []).append(host)
    return out


def cluster_bandwidths(weights: Any, hosts: Sequence[str], labels: Mapping[str, str]
                       ) -> dict[tuple[str, str], float]:
    """The mean weight between every two clusters: the ``bandwidth`` of :func:`choose_tests`.

    Parameters
    ----------
    weights : sparse array or ndarray
        Host-by-host weights in the order of ``hosts``: ``w_n`` of a
        broadcast dataset (blocks per iteration) or a probe dataset's
        bandwidths.
    hosts : sequence of str
        The host of each row and column of ``weights``.
    labels : mapping
        Host -> its cluster, for every host to count (e.g. a flat clustering).

    Returns
    -------
    dict
        ``(a, b) -> mean weight`` over the host pairs of clusters ``a`` and
        ``b``, for every two different clusters, in both orders.

    Examples
    --------
    >>> w = np.array([[0, 9, 1, 2], [9, 0, 1, 0], [1, 1, 0, 8], [2, 0, 8, 0]])
    >>> cluster_bandwidths(w, ["a", "b", "c", "d"], {"a": "x", "b": "x", "c": "y", "d": "y"})
    {('x', 'y'): 1.0, ('y', 'x'): 1.0}
    """
    dense = weights.toarray() if hasattr(weights, "toarray") else np.asarray(weights, dtype=float)
    index = {h: i for i, h in enumerate(hosts)}
    rows = {c: [index[h] for h in members] for c, members in clusters_of(labels).items()}
    return {(a, b): float(np.mean(dense[np.ix_(rows[a], rows[b])]))
            for a in rows for b in rows if a != b}
