"""Levels finer than Louvain's best partition, kept only where they are significant.

Louvain's best partition is its coarsest level: on a hierarchy it returns the
top clusters and hides the levels below.  Its first level (local moves only)
shows them, but on BitTorrent data it also cuts homogeneous clusters into
fragments, because a sparse random peer graph has "communities" of its own.

:func:`significant_split` tells the two apart with a permutation test: a
cluster's own best partition is kept only if its modularity beats the
modularity Louvain finds on every one of ``shuffles`` copies of the cluster
whose weights were shuffled among its existing edges (same peer graph, no
bandwidth signal), by at least ``z`` standard deviations of those copies.
:func:`refine_levels` applies it top down, level by level.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from cluster.adjacency import as_adjacency
from cluster.louvain import louvain
from cluster.modularity import canonical_labels
from tomography.seeding import Seed, check_seed, spawn_seeds

__all__ = ["shuffle_weights", "significant_split", "refine_levels"]


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
        The weights inside one cluster.
    shuffles : int, default 10
        Weight-shuffled copies to compare with.
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
    if A.shape[0] < max(min_size, 2) or sparse.triu(A, k=1).nnz == 0:
        return None
    rng, _ = check_seed(seed)
    seeds = spawn_seeds(rng, shuffles + 1)
    found = louvain(A, engine=engine, resolution=resolution, seed=seeds[0])
    if found.n_clusters < 2:
        return None
    null = []
    for s in seeds[1:]:
        q = louvain(shuffle_weights(A, seed=s), engine=engine, resolution=resolution,
                    seed=s).modularity
        if q >= found.modularity:  # a copy without bandwidth signal does as well: stop
            return None
        null.append(q)
    null = np.array(null)
    spread = null.std()
    score = np.inf if spread == 0 else (found.modularity - null.mean()) / spread
    return found.labels if score >= z else None


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
    rng, _ = check_seed(seed)
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
            split = significant_split(A[idx][:, idx], shuffles=shuffles, z=z,
                                      min_size=min_size, engine=engine,
                                      resolution=resolution, seed=spawn_seeds(rng, 1)[0])
            if split is None:
                whole[idx] = True
            else:
                new[idx] = np.where(split == 0, c, next_id + split - 1)
                next_id += int(split.max())
        if np.array_equal(new, current):
            return levels
        current = canonical_labels(new)
        levels.append(current)
