"""Levels finer than Louvain's best partition, kept only where they are significant.

Louvain's best partition is its coarsest level: on a hierarchy it returns the
top clusters and hides the levels below.  Its first level (local moves only)
shows them, but on BitTorrent data it also cuts homogeneous clusters into
fragments, because a sparse random peer graph has "communities" of its own.

:func:`significant_split` tells the two apart with a permutation test: a
cluster's own best partition is kept only if its modularity beats the
modularity Leiden finds on every one of up to ``shuffles`` copies of the
cluster whose weights were shuffled among its existing edges (same peer
graph, no bandwidth signal), by at least ``z`` standard deviations of those
copies; copies are drawn only until the verdict is clear (:func:`significance`).
:func:`refine_levels` applies it top down, level by level.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from cluster.adjacency import SharedGraph, as_adjacency
from cluster.louvain import igraph_graph, leiden, louvain, multilevel
from cluster.modularity import canonical_labels
from tomography.seeding import Seed, check_seed, spawn_seeds

__all__ = ["shuffle_weights", "significant_split", "significance", "refine_levels"]


def shuffle_weights(graph, seed: Seed = None) -> sparse.csr_array:
    """The same edges with their weights randomly permuted (self-loops dropped).

    Examples
    --------
    >>> w = np.array([[0, 1, 2], [1, 0, 3], [2, 3, 0]], dtype=float)
    >>> s = shuffle_weights(w, seed=0).toarray()
    >>> sorted(s[np.triu_indices(3, 1)].tolist()), bool((s == s.T).all())
    ([1.0, 2.0, 3.0], True)
    """
    A, _ = as_adjacency(graph)
    rng, _ = check_seed(seed)
    upper = sparse.triu(A, k=1, format="coo")
    shuffled = sparse.coo_array((rng.permutation(upper.data), (upper.row, upper.col)),
                                shape=A.shape)
    return (shuffled + shuffled.T).tocsr()


def significant_split(graph, *, shuffles: int = 10, z: float = 5.0, min_size: int = 4,
                      engine: str = "igraph", resolution: float = 1.0,
                      seed: Seed = None) -> np.ndarray | None:
    """Louvain's partition of a cluster, if it is more than the peer graph's noise.

    Parameters
    ----------
    graph : sparse array or ndarray
        The weights inside one cluster (self-loops are ignored).
    shuffles : int, default 10
        Weight-shuffled copies to compare with, at most.
    z : float, default 5.0
        How many standard deviations above the copies' mean the modularity
        must be (it must also beat every copy).
    min_size : int, default 4
        Smaller clusters are not split.
    engine, resolution, seed
        Passed to :func:`cluster.louvain.louvain`.

    Returns
    -------
    ndarray of int or None
        The labels of the split, or None when the cluster should stay whole.

    Notes
    -----
    The test stops early both ways (see :func:`significance`): at the first
    copy that does as well as the data (a hopeless split costs two Louvain
    runs), and once the margin is so wide that more copies could not change
    the verdict.

    Examples
    --------
    Two dense groups joined weakly split; a homogeneous group does not:

    >>> w = np.full((12, 12), 1.0)
    >>> w[:6, :6] = w[6:, 6:] = 9.0
    >>> np.fill_diagonal(w, 0)
    >>> significant_split(w, seed=0).tolist()
    [0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1]
    >>> rng = np.random.default_rng(1)
    >>> noise = np.triu(rng.random((12, 12)), 1)
    >>> significant_split(noise + noise.T, seed=0) is None
    True
    """
    A, _ = as_adjacency(graph)
    A = _without_loops(A)
    if A.shape[0] < max(min_size, 2) or A.nnz == 0:
        return None
    rng, _ = check_seed(seed)
    g = igraph_graph(A) if engine == "igraph" else None
    return _split(A, g, shuffles=shuffles, z=z, engine=engine, resolution=resolution, rng=rng)


def _without_loops(A: sparse.csr_array) -> sparse.csr_array:
    if not A.diagonal().any():
        return A
    out = (A - sparse.diags_array(A.diagonal())).tocsr()
    out.eliminate_zeros()
    return out


def _split(A: sparse.csr_array, g, *, shuffles: int, z: float, engine: str,
           resolution: float, rng: np.random.Generator) -> np.ndarray | None:
    """The test of :func:`significant_split` on a loop-free cluster (``g``: its igraph graph)."""
    seeds = spawn_seeds(rng, shuffles + 1)
    if g is not None:
        labels = multilevel(g, resolution=resolution, seed=seeds[0])
        found = g.modularity(labels.tolist(), weights="weight", resolution=resolution)
        weights = np.asarray(g.es["weight"])

        # The copies are optimised with Leiden: on a weight-shuffled 1024-host cluster
        # about five times faster than Louvain, whose local moves crawl on a graph
        # without structure, and to a higher modularity, so the null is the stricter.
        def null(s: int) -> float:
            shuffled = np.random.default_rng(s).permutation(weights).tolist()
            membership = leiden(g, resolution=resolution, seed=s, weights=shuffled)
            return g.modularity(membership.tolist(), weights=shuffled, resolution=resolution)
    else:
        result = louvain(A, engine=engine, resolution=resolution, seed=seeds[0])
        labels, found = result.labels, result.modularity

        def null(s: int) -> float:
            return louvain(shuffle_weights(A, seed=s), engine=engine, resolution=resolution,
                           seed=s).modularity
    if len(np.unique(labels)) < 2:
        return None
    if significance(found, (null(s) for s in seeds[1:]), z=z):
        return canonical_labels(labels)
    return None


# Upper 99.99 % confidence bound of a standard deviation estimated from m samples is
# sd * sqrt((m - 1) / chi2_{0.0001}(m - 1)); these are the factors for m = 4 .. 10
# (np.sqrt((m - 1) / scipy.special.chdtri(m - 1, 1 - 1e-4))).  So strict a bound
# keeps a false early acceptance below 1e-4 per test, about 1 % over the hundred
# tests of a large hierarchy; real splits, at 50 to 100 standard deviations on the
# 4096-host benchmark, still stop after 5 or 6 copies instead of 10.
_SD_BOUND = {4: 23.99, 5: 11.86, 6: 7.80, 7: 5.90, 8: 4.83, 9: 4.15, 10: 3.69}


def significance(found: float, null, *, z: float = 5.0, min_copies: int = 4) -> bool:
    """The verdict of the permutation test, drawing null modularities only as needed.

    A split is significant when its modularity beats every copy's and is at
    least ``z`` standard deviations above their mean.  The copies are drawn
    one at a time: the first that reaches ``found`` rejects at once, and
    after ``min_copies`` the test accepts early when ``found`` clears the
    mean by ``z`` times a 99.99 % upper confidence bound of the standard
    deviation (chi-square, ``m - 1`` degrees of freedom), a margin that the
    remaining copies could change only with a probability below 1e-4.

    Parameters
    ----------
    found : float
        The modularity of the split found on the data.
    null : iterable of float
        Modularities of weight-shuffled copies, drawn lazily.
    z : float, default 5.0
    min_copies : int, default 4

    Returns
    -------
    bool

    Examples
    --------
    >>> significance(0.5, iter([0.100, 0.101, 0.102, 0.101]))   # clear after four copies
    True
    >>> significance(0.5, iter([0.10, 0.55, 0.12]))        # a copy does as well
    False
    >>> significance(0.13, iter([0.10, 0.11, 0.12, 0.10]))  # 2.4 sd: not enough
    False
    """
    drawn: list[float] = []
    for q in null:
        if q >= found:
            return False
        drawn.append(q)
        m = len(drawn)
        if m >= min_copies and m in _SD_BOUND:
            sd = float(np.std(drawn, ddof=1))
            if sd == 0 or (found - np.mean(drawn)) / (sd * _SD_BOUND[m]) >= z:
                return True
    if not drawn:
        return True
    spread = float(np.std(drawn))
    return bool(spread == 0 or (found - np.mean(drawn)) / spread >= z)


def refine_levels(graph, labels, *, shuffles: int = 10, z: float = 5.0, min_size: int = 4,
                  engine: str = "igraph", resolution: float = 1.0,
                  seed: Seed = None) -> list[np.ndarray]:
    """Finer and finer partitions below ``labels``, splitting only significant clusters.

    Parameters
    ----------
    graph : sparse array or ndarray
        Host-level weights.
    labels : array of int
        The partition to refine (Louvain's best).
    shuffles, z, min_size, engine, resolution, seed
        See :func:`significant_split`.

    Returns
    -------
    list of ndarray
        Each entry splits some clusters of the one before (the first splits
        ``labels``); empty when nothing is significant.

    Examples
    --------
    >>> w = np.full((24, 24), 0.2)
    >>> for g in range(4):
    ...     w[6 * g:6 * g + 6, 6 * g:6 * g + 6] = 9.0
    >>> w[:12, :12] = np.maximum(w[:12, :12], 2.0)
    >>> w[12:, 12:] = np.maximum(w[12:, 12:], 2.0)
    >>> np.fill_diagonal(w, 0)
    >>> halves = np.repeat([0, 1], 12)
    >>> [len(set(level)) for level in refine_levels(w, halves, seed=0)]
    [4]
    """
    A, _ = as_adjacency(graph)
    loops = A.diagonal().any()
    A = _without_loops(A)
    rng, _ = check_seed(seed)
    whole_graph = None   # built once, cut per cluster
    if engine == "igraph":
        whole_graph = (graph.igraph() if isinstance(graph, SharedGraph) and not loops
                       else igraph_graph(A))
    current = canonical_labels(labels)
    levels: list[np.ndarray] = []
    whole = np.zeros(len(current), dtype=bool)   # hosts of clusters tested and kept whole
    while True:
        new = current.copy()
        next_id = int(current.max()) + 1
        for c in range(int(current.max()) + 1):
            idx = np.flatnonzero(current == c)
            if whole[idx].all():
                continue
            split_rng = np.random.default_rng(spawn_seeds(rng, 1)[0])
            split = None
            if len(idx) >= max(min_size, 2):
                if whole_graph is not None:
                    g = whole_graph.induced_subgraph(idx.tolist())
                    sub = None if g.ecount() == 0 else A   # A is not read on this path
                else:
                    g, sub = None, A[idx][:, idx]
                    sub = sub if sub.nnz else None
                if sub is not None:
                    split = _split(sub, g, shuffles=shuffles, z=z, engine=engine,
                                   resolution=resolution, rng=split_rng)
            if split is None:
                whole[idx] = True
            else:
                new[idx] = np.where(split == 0, c, next_id + split - 1)
                next_id += int(split.max())
        if np.array_equal(new, current):
            return levels
        current = canonical_labels(new)
        levels.append(current)
