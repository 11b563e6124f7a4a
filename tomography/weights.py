"""Aggregating block counts into edge weights (SPEC section 1, Eq 4.1 and 4.2).

All matrices are SciPy sparse arrays in sorted host order
(:attr:`Measurement.host_names`): row ``i``, column ``j`` is host ``i``, host ``j``.
"""

from __future__ import annotations

from typing import Iterable

import networkx as nx
import numpy as np
import pandas as pd
from scipy import sparse

from tomography.dataset import Measurement
from tomography.errors import TomographyError

__all__ = ["directed_counts", "iteration_weights", "mean_weights", "weight_graph", "to_networkx"]


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
    >>> from tomography.synthetic import planted_partition
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
    >>> from tomography.synthetic import planted_partition
    >>> m = planted_partition(6, 2, iterations=2, seed=0)
    >>> w = iteration_weights(m, 1)
    >>> bool((w != w.T).nnz == 0)
    True
    """
    counts = directed_counts(measurement, [iteration])
    return (counts + counts.T).tocsr()


def mean_weights(measurement: Measurement, n: int | None = None) -> sparse.csr_array:
    """Eq 4.2: ``w_n``, the mean over the first ``n`` iterations of Eq 4.1.

    Parameters
    ----------
    measurement : Measurement
    n : int, optional
        How many iterations, in increasing iteration order; all by default.

    Returns
    -------
    scipy.sparse.csr_array
        Symmetric, zero diagonal, in sorted host order.

    Raises
    ------
    TomographyError
        When the dataset has no iterations or ``n`` is out of range.

    Examples
    --------
    >>> from tomography.synthetic import planted_partition
    >>> m = planted_partition(6, 2, iterations=3, seed=0)
    >>> w1, w2, w3 = (iteration_weights(m, i) for i in m.iteration_ids)
    >>> bool(abs(mean_weights(m) - (w1 + w2 + w3) / 3).max() < 1e-9)
    True
    """
    ids = measurement.iteration_ids
    if not ids:
        raise TomographyError("the dataset has no broadcast iterations")
    if n is None:
        n = len(ids)
    if not 1 <= n <= len(ids):
        raise TomographyError(f"n must be between 1 and {len(ids)} (the iterations in the "
                              f"dataset), got {n}")
    counts = directed_counts(measurement, ids[:n])
    return ((counts + counts.T) / n).tocsr()


def to_networkx(weights: sparse.sparray | np.ndarray, hosts: list[str],
                labels: dict[str, str] | None = None) -> nx.Graph:
    """A weighted :class:`networkx.Graph` from a symmetric weight matrix.

    Parameters
    ----------
    weights : sparse array or ndarray
        Symmetric weights in the order of ``hosts``.
    hosts : list of str
        Node names; nodes are added in this order, isolated ones included.
    labels : dict, optional
        Host to ground-truth label, stored as the node attribute ``label``.

    Returns
    -------
    networkx.Graph
        Edge attribute ``weight``.

    Examples
    --------
    >>> import numpy as np
    >>> g = to_networkx(np.array([[0, 2.0], [2.0, 0]]), ["a", "b"])
    >>> g["a"]["b"]["weight"]
    2.0
    """
    coo = sparse.coo_array(weights)
    graph = nx.Graph()
    for host in hosts:
        graph.add_node(host, **({"label": labels[host]} if labels and host in labels else {}))
    keep = coo.row <= coo.col
    graph.add_weighted_edges_from(
        (hosts[i], hosts[j], float(w))
        for i, j, w in zip(coo.row[keep], coo.col[keep], coo.data[keep]) if w)
    return graph


def weight_graph(measurement: Measurement, n: int | None = None) -> nx.Graph:
    """``w_n`` as a :class:`networkx.Graph` in sorted host order, labels as node attributes.

    Parameters
    ----------
    measurement : Measurement
    n : int, optional
        Number of iterations to average (Eq 4.2); all by default.

    Returns
    -------
    networkx.Graph

    Examples
    --------
    >>> from tomography.synthetic import planted_partition
    >>> g = weight_graph(planted_partition(8, 2, iterations=2, seed=0))
    >>> g.number_of_nodes(), g.nodes["h000"]["label"]
    (8, 'g0')
    """
    return to_networkx(mean_weights(measurement, n), measurement.host_names, measurement.labels)
