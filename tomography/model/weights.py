"""Aggregating block counts into edge weights (docs/method.md, Eq 4.1 and 4.2).

All matrices are SciPy sparse arrays in sorted host order
(:attr:`Measurement.host_names`): row ``i``, column ``j`` is host ``i``, host ``j``.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Iterable

import numpy as np
import pandas as pd
from scipy import sparse

from tomography.model.deprecation import renamed_parameter
from tomography.model.errors import TomographyError

if TYPE_CHECKING:
    from tomography.model.dataset import Measurement
    import networkx as nx

__all__ = ["directed_counts", "iteration_weights", "mean_weights", "exchange_rates",
           "probe_weights", "rounds", "tcp_probes", "successful_probes", "IterationWeights"]


def directed_counts(measurement: Measurement, iterations: Iterable[int] | None = None
                    ) -> sparse.csr_array:
    """Blocks each host received from each other host, summed over iterations.

    Parameters
    ----------
    measurement : Measurement
    iterations : iterable of int, optional
        The iterations to sum; all of them by default.

    Returns
    -------
    scipy.sparse.csr_array
        ``C[r, s]`` = blocks host ``r`` received directly from host ``s``.

    Examples
    --------
    >>> from tomography.model.synthetic import planted_partition
    >>> m = planted_partition(6, 2, iterations=1, seed=0, file_size=16 * 16384)
    >>> C = directed_counts(m)
    >>> sorted(C.sum(axis=1).astype(int).tolist())   # every non-root got the 16 blocks
    [0, 16, 16, 16, 16, 16]
    """
    rows = _select(measurement, iterations)
    n = measurement.n_hosts
    index = pd.Index(measurement.host_names)
    r = index.get_indexer(rows["receiver"])
    s = index.get_indexer(rows["sender"])
    data = rows["blocks"].to_numpy(dtype=float)
    return sparse.csr_array((data, (r, s)), shape=(n, n))


def _select(measurement: Measurement, iterations: Iterable[int] | None) -> pd.DataFrame:
    transfers = measurement.transfers
    if iterations is None:
        return transfers
    wanted = list(iterations)
    unknown = sorted(set(wanted) - set(measurement.iteration_ids))
    if unknown:
        raise TomographyError(f"no iteration {unknown[0]} in the dataset "
                              f"(it has {len(measurement.iteration_ids)} iterations)")
    return transfers[transfers["iteration"].isin(wanted)]


def iteration_weights(measurement: Measurement, iteration: int) -> sparse.csr_array:
    """Eq 4.1: the symmetric weight of one iteration, ``w = C + C^T``.

    Parameters
    ----------
    measurement : Measurement
    iteration : int

    Returns
    -------
    scipy.sparse.csr_array
        ``w[i, j]`` = blocks sent from ``i`` to ``j`` plus from ``j`` to ``i``.

    Examples
    --------
    >>> from tomography.model.synthetic import planted_partition
    >>> m = planted_partition(6, 2, iterations=2, seed=0)
    >>> w = iteration_weights(m, 1)
    >>> bool((w != w.T).nnz == 0)
    True
    """
    counts = directed_counts(measurement, [iteration])
    return (counts + counts.T).tocsr()


@renamed_parameter("n", "iterations")
def mean_weights(measurement: Measurement, iterations: int | None = None) -> sparse.csr_array:
    """Eq 4.2: ``w_n``, the mean of Eq 4.1 over the first ``iterations`` iterations.

    For a probe dataset (iperf3, NetPIPE) the weights are the measured
    bandwidths instead (:func:`probe_weights`), ``iterations`` counting repeats.

    Parameters
    ----------
    measurement : Measurement
    iterations : int, optional
        ``n``, how many iterations, in increasing iteration order; all by default.
        (``n=`` is its deprecated former name.)

    Returns
    -------
    scipy.sparse.csr_array
        Symmetric, zero diagonal, in sorted host order.

    Raises
    ------
    TomographyError
        When the dataset has no iterations or ``iterations`` is out of range.

    Examples
    --------
    >>> from tomography.model.synthetic import planted_partition
    >>> m = planted_partition(6, 2, iterations=3, seed=0)
    >>> w1, w2, w3 = (iteration_weights(m, i) for i in m.iteration_ids)
    >>> bool(abs(mean_weights(m) - (w1 + w2 + w3) / 3).max() < 1e-9)
    True
    """
    if measurement.probes is not None and not measurement.iteration_ids:
        return probe_weights(measurement, iterations)
    ids = measurement.iteration_ids
    if not ids:
        raise TomographyError("the dataset has no broadcast iterations")
    n = len(ids) if iterations is None else iterations
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TomographyError(f"iterations is a number of iterations, a whole number; got {n!r}")
    if not 1 <= n <= len(ids):
        raise TomographyError(f"iterations must be between 1 and {len(ids)} (the iterations in the "
                              f"dataset), got {n}")
    counts = directed_counts(measurement, ids[:n])
    return ((counts + counts.T) / n).tocsr()


def exchange_rates(measurement: Measurement, iterations: int | None = None
                   ) -> sparse.csr_array | None:
    """What every two hosts exchanged, in Mbit/s: ``w_n`` with each iteration's blocks over
    its duration, or a probe dataset's measured bandwidths; None without durations.

    A broadcast pair's rate is the bytes the two hosts sent each other directly
    in an iteration (whole 16 KiB blocks) over the iteration's ``duration_s``,
    averaged over the first ``iterations``: what the swarm moved between them,
    a lower bound on what their path carries.

    Examples
    --------
    >>> from tomography.model.synthetic import planted_partition
    >>> m = planted_partition(4, 2, iterations=2, seed=0, file_size=16 * 16384)
    >>> exchange_rates(m) is None          # a synthetic dataset records no durations
    True
    >>> m.iterations["duration_s"] = 2.0
    >>> r, w = exchange_rates(m), mean_weights(m)
    >>> bool(abs(r - w * 16384 * 8 / 2.0 / 1e6).max() < 1e-9)
    True
    """
    if measurement.probes is not None and not measurement.iteration_ids:
        return probe_weights(measurement, iterations)
    ids = measurement.iteration_ids[:iterations]
    if not ids or "duration_s" not in measurement.iterations:
        return None
    durations = measurement.iterations.set_index("iteration").loc[ids, "duration_s"]
    seconds = durations.to_numpy(dtype=float)
    if not (np.isfinite(seconds).all() and (seconds > 0).all()):
        return None
    bits = 8.0 * int(measurement.meta.get("block_size", 16384))
    total = sparse.csr_array((measurement.n_hosts, measurement.n_hosts))
    for i, d in zip(ids, seconds):
        counts = directed_counts(measurement, [i])
        total = total + (counts + counts.T) * (bits / d / 1e6)
    return (total / len(ids)).tocsr()


def rounds(measurement: Measurement) -> int:
    """How many measurements the dataset repeats: iterations, or probe repeats.

    Examples
    --------
    >>> from tomography.model.synthetic import planted_partition
    >>> rounds(planted_partition(6, 2, iterations=3, seed=0))
    3
    """
    if measurement.iteration_ids or measurement.probes is None:
        return len(measurement.iteration_ids)
    probes = tcp_probes(measurement.probes)
    if probes.empty:
        return 0
    return int(probes["repeat"].max()) + 1 if "repeat" in probes else 1


def tcp_probes(probes: pd.DataFrame) -> pd.DataFrame:
    """The TCP rows of a probes table: UDP tests (imported ones) are another measurement.

    A table without a ``protocol`` column is all TCP.

    Examples
    --------
    >>> import pandas as pd
    >>> tcp_probes(pd.DataFrame({"src": ["a", "a"], "protocol": ["tcp", "udp"]}))["protocol"].tolist()
    ['tcp']
    """
    if "protocol" not in probes:
        return probes
    return probes[probes["protocol"].astype(str).str.strip().str.lower() != "udp"]


def successful_probes(measurement: Measurement, iterations: int | None = None) -> pd.DataFrame:
    """The probe runs a probe dataset's weights are made of: successful TCP tests of the
    first ``iterations`` repeats (all by default).

    Raises
    ------
    TomographyError
        When the dataset has no probes, no successful TCP probe, or
        ``iterations`` is out of range.

    Examples
    --------
    >>> import pandas as pd
    >>> from tomography.model.synthetic import planted_partition
    >>> m = planted_partition(2, 1, iterations=1, seed=0)
    >>> m.transfers, m.iterations = m.transfers.iloc[:0], m.iterations.iloc[:0]
    >>> m.probes = pd.DataFrame({"src": ["h000", "h000"], "dst": ["h001", "h001"],
    ...                          "bits_per_second": [9e8, None], "repeat": [0, 1],
    ...                          "error": ["", "refused"]})
    >>> len(successful_probes(m)), len(successful_probes(m, 1))
    (1, 1)
    """
    probes = measurement.probes
    if probes is None or probes.empty:
        raise TomographyError("the dataset has no probes (probes.csv)")
    total = rounds(measurement)
    n = total if iterations is None else iterations
    if not 1 <= n <= total:
        raise TomographyError(f"iterations must be between 1 and {total} (the probe repeats in the "
                              f"dataset), got {n}")
    udp = len(probes) - len(tcp_probes(probes))
    probes = tcp_probes(probes)
    ok = probes["bits_per_second"].notna()
    if "error" in probes:
        ok &= probes["error"].astype(str).str.strip() == ""
    if "repeat" in probes:
        ok &= probes["repeat"] < n
    runs = probes[ok]
    if runs.empty:
        raise TomographyError("the dataset has no successful probe"
                              + (f" over TCP ({udp} UDP tests are not bandwidths)" if udp else ""))
    return runs


@renamed_parameter("n", "iterations")
def probe_weights(measurement: Measurement, iterations: int | None = None) -> sparse.csr_array:
    """Measured bandwidth between hosts, in Mbit/s, from a probe dataset.

    Per ordered pair the median of its successful TCP tests over the first
    ``iterations`` repeats (``n=``, deprecated) (solo and concurrent alike, as measured); per host pair
    the mean of its two directions, or the one measured.  UDP tests
    (``protocol`` ``udp``, imported from perfSONAR or iperf3) never count:
    their rate is the target rate the sender was told, not what the path carries.

    Raises
    ------
    TomographyError
        When the dataset has no successful probe.

    Examples
    --------
    >>> import pandas as pd
    >>> from tomography.model.synthetic import planted_partition
    >>> m = planted_partition(3, 1, iterations=1, seed=0)
    >>> m.transfers, m.iterations = m.transfers.iloc[:0], m.iterations.iloc[:0]
    >>> m.probes = pd.DataFrame({"src": ["h000", "h001", "h000"],
    ...                          "dst": ["h001", "h000", "h002"],
    ...                          "bits_per_second": [9e8, 7e8, 1e8], "repeat": [0, 0, 0],
    ...                          "error": ["", "", ""]})
    >>> probe_weights(m).toarray().tolist()
    [[0.0, 800.0, 100.0], [800.0, 0.0, 0.0], [100.0, 0.0, 0.0]]
    """
    runs = successful_probes(measurement, iterations)
    hosts = measurement.host_names
    index = {h: i for i, h in enumerate(hosts)}
    per_pair = runs.groupby(["src", "dst"])["bits_per_second"].median() / 1e6
    rows = np.array([index[s] for s, _ in per_pair.index])
    cols = np.array([index[d] for _, d in per_pair.index])
    size = len(hosts)
    directed = sparse.csr_array((per_pair.to_numpy(), (rows, cols)), shape=(size, size))
    measured = sparse.csr_array((np.ones(len(rows)), (rows, cols)), shape=(size, size))
    both = (measured + measured.T).tocsr()
    mean = sparse.csr_array((directed + directed.T).multiply(both.power(-1.0)))
    mean.eliminate_zeros()
    return mean


class IterationWeights:
    """The per-iteration weights of a measurement on the edges of its ``w_n``.

    The data half of resampling (:mod:`cluster.confidence` runs the
    analyses): one row per observed (iteration, receiver, sender) count,
    mapped to the undirected edge of ``w_n`` it adds to.  Memory is linear in
    the number of observations, and a resampled ``w_n`` costs one weighted
    ``bincount``.  Edges are numbered in the order of the upper triangle of
    ``weights`` in CSR order (the edge order of
    :func:`cluster.adjacency.igraph_graph`).

    Parameters
    ----------
    weights : scipy.sparse.csr_array
        ``w_n`` of the iterations below: symmetric, finite, non-negative.
    hosts : list of str
        The host of each row.
    iteration, receiver, sender : array of int
        Per observation: iteration position ``0 .. T-1`` and host indices.
    blocks : array of float
        Per observation: the count (or weight).
    n_iterations : int
        ``T``.
    roots : array of int, optional
        Per iteration, the host index of its root (-1 where unknown); None
        for data measured otherwise (probe rounds).  Resampling keeps each
        part of the network's share of roots (:func:`cluster.confidence.resample_plan`).
    source : str, optional
        How the data were measured: the dataset's ``method`` ("bittorrent"
        for real swarms, "simulated", "synthetic"); None when not known.  The
        confidence's line depends on it (:func:`cluster.confidence.resample_separation`).

    Examples
    --------
    >>> from tomography.model.synthetic import planted_partition
    >>> m = planted_partition(12, 2, iterations=3, seed=0)
    >>> data = IterationWeights.from_measurement(m)
    >>> bool(abs(data.matrix(np.ones(3)) - mean_weights(m)).max() < 1e-9)
    True
    >>> data.n_iterations, data.hosts == m.host_names
    (3, True)
    """

    def __init__(self, weights: sparse.csr_array, hosts: list[str], iteration: np.ndarray,
                 receiver: np.ndarray, sender: np.ndarray, blocks: np.ndarray,
                 n_iterations: int, roots: np.ndarray | None = None,
                 source: str | None = None) -> None:
        self.weights, self.hosts, self.source = weights, hosts, source
        self.roots = None if roots is None else np.asarray(roots, dtype=np.int64)
        n = weights.shape[0]
        upper = sparse.triu(weights, format="coo")
        keys = upper.row.astype(np.int64) * n + upper.col
        order = np.argsort(keys, kind="stable")
        sorted_keys = keys[order]
        lo = np.minimum(receiver, sender).astype(np.int64)
        hi = np.maximum(receiver, sender).astype(np.int64)
        # each distinct pair looked up once, in sorted order (fast), then spread back
        pairs, inverse = np.unique(lo * n + hi, return_inverse=True)
        pos = np.minimum(np.searchsorted(sorted_keys, pairs), max(len(sorted_keys) - 1, 0))
        found = np.zeros(len(inverse), dtype=bool)
        if len(sorted_keys):   # an all-zero dataset has no edge to map to
            found = (sorted_keys[pos] == pairs)[inverse] & (np.asarray(blocks) > 0)
        self.edge = order[pos[inverse[found]]]
        self.iteration = np.asarray(iteration)[found]
        self.blocks = np.asarray(blocks, dtype=float)[found]
        self.n_iterations = int(n_iterations)
        self.n_edges = len(keys)
        self._order, self._sorted_keys = order, sorted_keys

    @classmethod
    @renamed_parameter("n", "iterations")
    def from_measurement(cls, measurement: Measurement, iterations: int | None = None, *,
                         weights: sparse.csr_array | None = None) -> "IterationWeights":
        """The per-iteration weights of a broadcast measurement's first ``iterations`` iterations.

        Parameters
        ----------
        measurement : Measurement
        iterations : int, optional
            The first ``iterations`` (all by default; ``n=``, deprecated).
        weights : scipy.sparse.csr_array, optional
            ``w_n`` of those iterations, when it is at hand; built here from
            the same rows otherwise (Eq 4.2, as :func:`mean_weights`).

        Raises
        ------
        TomographyError
            No broadcast iterations, or negative or non-finite counts.
        """
        ids = measurement.iteration_ids[:iterations]
        if len(ids) < 1:
            raise TomographyError("the dataset has no broadcast iterations to resample")
        t = measurement.transfers
        if len(ids) < len(measurement.iteration_ids):
            t = t[t["iteration"].isin(ids)]
        position = pd.Index(ids).get_indexer(t["iteration"])
        hosts = pd.Index(measurement.host_names)
        receiver, sender = hosts.get_indexer(t["receiver"]), hosts.get_indexer(t["sender"])
        blocks = t["blocks"].to_numpy(dtype=float)
        if not np.isfinite(blocks).all() or (blocks < 0).any():
            raise TomographyError("the transfers have negative or non-finite block counts")
        if weights is None:   # w_n, symmetric, finite and >= 0 by construction
            size = len(hosts)
            counts = sparse.csr_array((blocks, (receiver, sender)), shape=(size, size))
            weights = ((counts + counts.T) / len(ids)).tocsr()
            weights.sum_duplicates()
            weights.eliminate_zeros()
        iterations_frame = measurement.iterations.set_index("iteration")
        roots = (hosts.get_indexer(iterations_frame.loc[ids, "root"].astype(str))
                 if "root" in iterations_frame else None)
        return cls(weights, measurement.host_names, position, receiver, sender, blocks, len(ids),
                   roots, measurement.meta.get("method"))

    def edge_weights(self, multiplicity: Iterable[int] | np.ndarray) -> np.ndarray:
        """The resampled ``w_n`` on each edge, for ``multiplicity[t]`` copies of iteration ``t``."""
        m = np.asarray(multiplicity, dtype=float)
        total = m.sum()
        if total <= 0:
            raise TomographyError("a resample needs at least one iteration")
        return np.bincount(self.edge, weights=self.blocks * m[self.iteration],
                           minlength=self.n_edges) / total

    def first(self, iterations: int) -> "IterationWeights":
        """The same data cut to the first ``iterations`` iterations (``w_n`` of fewer).

        Examples
        --------
        >>> from tomography.model.synthetic import planted_partition
        >>> m = planted_partition(12, 2, iterations=3, seed=0)
        >>> fewer = IterationWeights.from_measurement(m).first(2)
        >>> fewer.n_iterations, bool(abs(fewer.weights - mean_weights(m, 2)).max() < 1e-9)
        (2, True)
        """
        if not 1 <= iterations <= self.n_iterations:
            raise TomographyError(f"cannot cut {self.n_iterations} iteration(s) to "
                                  f"{iterations}")
        keep = self.iteration < iterations
        upper = sparse.triu(self.weights, format="coo")
        return IterationWeights(self.matrix(np.arange(self.n_iterations) < iterations),
                                self.hosts, self.iteration[keep], upper.row[self.edge[keep]],
                                upper.col[self.edge[keep]], self.blocks[keep], iterations,
                                None if self.roots is None else self.roots[:iterations],
                                self.source)

    @cached_property
    def _entry_edge(self) -> np.ndarray:
        """The edge of every stored entry of the symmetric CSR matrix (for :meth:`matrix`)."""
        csr = self.weights
        n = csr.shape[0]
        rows = np.repeat(np.arange(n), np.diff(csr.indptr))
        cols = csr.indices
        keys = np.minimum(rows, cols).astype(np.int64) * n + np.maximum(rows, cols)
        return self._order[np.searchsorted(self._sorted_keys, keys)]

    def matrix(self, multiplicity: Iterable[int] | np.ndarray) -> sparse.csr_array:
        """The resampled ``w_n`` as a symmetric matrix (explicit zeros removed)."""
        w = self.edge_weights(multiplicity)
        csr = self.weights
        out = sparse.csr_array((w[self._entry_edge], csr.indices.copy(), csr.indptr.copy()),
                               shape=csr.shape)   # copies: compacted in place
        out.eliminate_zeros()
        return out
