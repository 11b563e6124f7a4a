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
A split accepted as a whole then has its noise cuts merged back: two of its
parts whose union the same test would not split are one group (most mixed
pairs first; pairs clearly less mixed than the copies' are not tested, see
:data:`CLEAR_Z`).  :func:`refine_levels` applies it top down, level by level.

A cluster of a few hosts has too few edges for the test to judge (five hosts
have ten; a shuffled copy puts the heaviest weights where the data have them
often enough), so a small group that Louvain's best partition joined to its
neighbour stays hidden.  :func:`separated_cuts` then asks the data directly:
it cuts a cluster in two at its weakest cut and adds the level this makes when
the level's separation (:mod:`cluster.separation`, the statistic the
confidence resamples) clears :data:`cluster.separation.MIN_SEPARATION`.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np
from scipy import sparse

from cluster.adjacency import SharedGraph, as_adjacency, igraph_graph
from cluster.louvain import leiden, louvain, multilevel
from cluster.modularity import canonical_labels
from cluster.parallel import effective_jobs, fork_map
from cluster.separation import MIN_SEPARATION, cut_weights, separation, weakest_cuts
from tomography.model.seeding import Seed, random_state, spawn_seeds

#: Two parts of a split are kept apart without testing their union when they
#: are less mixed than every weight-shuffled copy's most mixed pair, by this
#: many standard deviations of those: the margin the split itself must clear.
#: Real boundaries of the planted benchmarks clear it by 15 or more; the noise
#: cuts inside a homogeneous group of a 3-iteration dataset, merged step by
#: step into larger parts, come within 1 to 5 (and their unions are not split).
CLEAR_Z = 5.0

__all__ = ["shuffle_weights", "significant_split", "significance", "refine_levels",
           "separated_cuts", "CLEAR_Z"]


@random_state
def shuffle_weights(graph, seed: Seed = 0) -> sparse.csr_array:
    """The same edges with their weights randomly permuted (self-loops dropped).

    Examples
    --------
    >>> w = np.array([[0, 1, 2], [1, 0, 3], [2, 3, 0]], dtype=float)
    >>> s = shuffle_weights(w, seed=0).toarray()
    >>> sorted(s[np.triu_indices(3, 1)].tolist()), bool((s == s.T).all())
    ([1.0, 2.0, 3.0], True)
    """
    A, _ = as_adjacency(graph)
    rng = seed.rng
    upper = sparse.triu(A, k=1, format="coo")
    shuffled = sparse.coo_array((rng.permutation(upper.data), (upper.row, upper.col)),
                                shape=A.shape)
    return (shuffled + shuffled.T).tocsr()


@random_state
def significant_split(graph, *, shuffles: int = 10, z: float = 5.0, min_size: int = 4,
                      engine: str = "igraph", resolution: float = 1.0,
                      seed: Seed = 0) -> np.ndarray | None:
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
    rng = seed.rng
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
    """The test of :func:`significant_split` on a loop-free cluster: its igraph graph ``g``,
    or without one its matrix ``A`` (not read when there is a graph)."""
    edges = _edges(A, g)
    copies: list[tuple[np.ndarray, np.ndarray]] = []   # (weights, labels) of each copy drawn
    labels = _tested_split(A, g, edges, shuffles=shuffles, z=z, engine=engine,
                           resolution=resolution, seeds=spawn_seeds(rng, shuffles + 1),
                           copies=copies)
    if labels is None:
        return None
    return _merge_back(A, g, edges, labels, copies, shuffles=shuffles, z=z, engine=engine,
                       resolution=resolution, rng=rng)


def _tested_split(A: sparse.csr_array, g, edges: tuple[np.ndarray, np.ndarray, np.ndarray], *,
                  shuffles: int, z: float, engine: str, resolution: float, seeds: list[int],
                  copies: list[tuple[np.ndarray, np.ndarray]] | None = None
                  ) -> np.ndarray | None:
    """Louvain's partition of a cluster if it passes the permutation test, else None.

    ``seeds`` holds one seed for Louvain and one per copy (``shuffles + 1``);
    the copies drawn are appended to ``copies``.
    """
    if g is not None:
        labels = multilevel(g, resolution=resolution, seed=seeds[0])
    else:
        labels = louvain(A, engine=engine, resolution=resolution, seed=seeds[0]).labels
    if len(np.unique(labels)) < 2:
        return None
    labels = canonical_labels(labels)
    found = _modularity(edges, edges[2], labels, resolution)
    null = _nulls(A, g, edges, engine, resolution, seeds[1:], [] if copies is None else copies)
    return labels if significance(found, null, z=z) else None


def _edges(A: sparse.csr_array, g) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Both ends and the weight of every edge, in igraph's edge order when there is a graph."""
    if g is not None:
        ends = np.asarray(g.get_edgelist(), dtype=np.int64).reshape(-1, 2)
        return ends[:, 0], ends[:, 1], np.asarray(g.es["weight"], dtype=float)
    upper = sparse.triu(A, k=1, format="coo")
    return upper.row.astype(np.int64), upper.col.astype(np.int64), upper.data


def _modularity(edges: tuple[np.ndarray, np.ndarray, np.ndarray], weights: np.ndarray,
                labels: np.ndarray, resolution: float) -> float:
    """Modularity of ``labels`` on the edge list with these weights (a shuffled copy's too)."""
    src, dst, _ = edges
    k = int(labels.max()) + 1
    total = weights.sum()
    inside = np.bincount(labels[src], weights=np.where(labels[src] == labels[dst], weights, 0),
                         minlength=k)
    degree = (np.bincount(labels[src], weights=weights, minlength=k)
              + np.bincount(labels[dst], weights=weights, minlength=k))
    return float(inside.sum() / total - resolution * ((degree / (2 * total)) ** 2).sum())


def _nulls(A: sparse.csr_array, g, edges: tuple[np.ndarray, np.ndarray, np.ndarray],
           engine: str, resolution: float, seeds: list[int],
           copies: list[tuple[np.ndarray, np.ndarray]]) -> Iterator[float]:
    """The best modularities of weight-shuffled copies of a cluster, one per seed, lazily.

    Each copy's weights and partition are appended to ``copies``.
    """
    for s in seeds:
        if g is not None:
            shuffled = np.random.default_rng(s).permutation(edges[2])
            # The copies are optimised with Leiden: on a weight-shuffled 1024-host cluster
            # about five times faster than Louvain, whose local moves crawl on a graph
            # without structure, and to a higher modularity, so the null is the stricter.
            labels = leiden(g, resolution=resolution, seed=s, weights=shuffled.tolist())
        else:
            copy = shuffle_weights(A, seed=s)
            shuffled = sparse.triu(copy, k=1, format="coo").data   # in the order of edges
            labels = louvain(copy, engine=engine, resolution=resolution, seed=s).labels
        labels = canonical_labels(labels)
        copies.append((shuffled, labels))
        yield _modularity(edges, shuffled, labels, resolution)


def _mixing(edges: tuple[np.ndarray, np.ndarray, np.ndarray], weights: np.ndarray,
            labels: np.ndarray) -> np.ndarray:
    """The mixing of every pair of parts (``i < j``; ``-inf`` below the diagonal).

    Mixing is the weight between two parts over what their degrees predict
    (``w_ij * 2m / (d_i * d_j)``; 1 is random mixing, and modularity merges
    them above ``resolution``), a ratio that does not grow with the parts'
    sizes as a modularity gain does.
    """
    src, dst, _ = edges
    k = int(labels.max()) + 1
    total = weights.sum()
    a, b = labels[src], labels[dst]
    cut = a != b
    lo, hi = np.minimum(a[cut], b[cut]), np.maximum(a[cut], b[cut])
    between = np.bincount(lo * k + hi, weights=weights[cut], minlength=k * k).reshape(k, k)
    degree = np.bincount(a, weights=weights, minlength=k) + np.bincount(b, weights=weights,
                                                                        minlength=k)
    mixing = between * (2 * total) / np.maximum(np.outer(degree, degree), 1e-300)
    mixing[np.tril_indices(k)] = -np.inf
    return mixing


def _most_mixed_pair(edges: tuple[np.ndarray, np.ndarray, np.ndarray], weights: np.ndarray,
                     labels: np.ndarray) -> tuple[float, int, int]:
    """The most mixed pair of parts of a partition: minus its mixing, and the two parts.

    Returned negated, so that larger is more separate, as :func:`significance`
    reads it.
    """
    mixing = _mixing(edges, weights, labels)
    i, j = np.unravel_index(int(np.argmax(mixing)), mixing.shape)
    return -float(mixing[i, j]), int(i), int(j)


def _pairs_by_mixing(edges: tuple[np.ndarray, np.ndarray, np.ndarray],
                     labels: np.ndarray) -> Iterator[tuple[float, int, int]]:
    """Every pair of parts as :func:`_most_mixed_pair` gives it, most mixed first."""
    mixing = _mixing(edges, edges[2], labels)
    k = mixing.shape[0]
    for flat in np.argsort(-mixing, axis=None, kind="stable")[: k * (k - 1) // 2]:
        i, j = np.unravel_index(int(flat), mixing.shape)
        yield -float(mixing[i, j]), int(i), int(j)


def _merge_back(A: sparse.csr_array, g, edges: tuple[np.ndarray, np.ndarray, np.ndarray],
                labels: np.ndarray, copies: list[tuple[np.ndarray, np.ndarray]], *,
                shuffles: int, z: float, engine: str, resolution: float,
                rng: np.random.Generator) -> np.ndarray:
    """A significant split with its noise cuts merged back.

    The test of a split judges it as a whole: a real boundary (16 hosts
    against 96) carries along the cuts Louvain made inside the 96 hosts,
    which no later test revisits because each part alone is homogeneous.
    So the split's parts are judged in pairs, the most mixed pair first
    (mixing: the weight between two parts over what their degrees predict):
    a pair whose union would not itself be split by the permutation test is
    one group, and is merged.  A pair less mixed than every weight-shuffled
    copy's most mixed pair by :data:`CLEAR_Z` standard deviations of those
    (and so every pair after it) is kept apart without a test: a split of
    equal real groups costs one comparison and no Louvain run.
    """
    noise = [_most_mixed_pair(edges, w, lab)[0] for w, lab in copies if lab.max() >= 1]
    if not noise:
        return labels
    kept: set[tuple[int, ...]] = set()   # unions already found split
    while labels.max() >= 1:
        merged = False
        for separation, i, j in _pairs_by_mixing(edges, labels):
            if significance(separation, iter(noise), z=CLEAR_Z):
                break   # this pair and every less mixed one are clearly apart
            idx = np.flatnonzero((labels == i) | (labels == j))
            key = tuple(idx.tolist())
            if key in kept:
                continue
            if _union_split(A, g, idx, shuffles=shuffles, z=z, engine=engine,
                            resolution=resolution, rng=rng):
                kept.add(key)
                continue
            labels = canonical_labels(np.where(labels == j, i, labels))
            merged = True
            break
        if not merged:
            return labels
    return labels


def _union_split(A: sparse.csr_array, g, idx: np.ndarray, *, shuffles: int, z: float,
                 engine: str, resolution: float, rng: np.random.Generator) -> bool:
    """Whether the permutation test splits the union of two parts (hosts ``idx``)."""
    union = _induced(A, g, idx)
    if union is None:
        return False
    sub, sub_g = union
    labels = _tested_split(sub, sub_g, _edges(sub, sub_g), shuffles=shuffles, z=z,
                           engine=engine, resolution=resolution,
                           seeds=spawn_seeds(rng, shuffles + 1))
    return labels is not None


def _induced(A: sparse.csr_array, g, idx: np.ndarray
             ) -> tuple[sparse.csr_array, object] | None:
    """The weights among hosts ``idx``: their igraph subgraph when there is a graph ``g``
    (then the matrix returned is ``A`` itself, which is not read), else their submatrix;
    None when they share no edge."""
    if g is not None:
        sub_g = g.induced_subgraph(idx.tolist())
        return None if sub_g.ecount() == 0 else (A, sub_g)
    sub = A[idx][:, idx]
    return (sub, None) if sub.nnz else None


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


@random_state
def refine_levels(graph, labels, *, shuffles: int = 10, z: float = 5.0, min_size: int = 4,
                  engine: str = "igraph", resolution: float = 1.0,
                  seed: Seed = 0, n_jobs: int | None = None) -> list[np.ndarray]:
    """Finer and finer partitions below ``labels``, splitting only significant clusters.

    Parameters
    ----------
    graph : sparse array or ndarray
        Host-level weights.
    labels : array of int
        The partition to refine (Louvain's best).
    shuffles, z, min_size, engine, resolution, seed
        See :func:`significant_split`.
    n_jobs : int or None
        Processes for the clusters of a level, tested independently
        (:func:`cluster.parallel.effective_jobs`); the result does not
        depend on it.

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
    rng = seed.rng
    whole_graph = None   # built once, cut per cluster
    if engine == "igraph":
        whole_graph = (graph.igraph() if isinstance(graph, SharedGraph) and not loops
                       else igraph_graph(A))
    current = canonical_labels(labels)
    levels: list[np.ndarray] = []
    whole = np.zeros(len(current), dtype=bool)   # hosts of clusters tested and kept whole

    def test(task: tuple[np.ndarray, int]) -> np.ndarray | None:
        """The split of one cluster (its hosts), or None to keep it whole."""
        idx, split_seed = task
        if len(idx) < max(min_size, 2):
            return None
        cluster = _induced(A, whole_graph, idx)
        if cluster is None:
            return None
        sub, g = cluster
        return _split(sub, g, shuffles=shuffles, z=z, engine=engine, resolution=resolution,
                      rng=np.random.default_rng(split_seed))

    while True:
        new = current.copy()
        next_id = int(current.max()) + 1
        clusters = [(c, np.flatnonzero(current == c)) for c in range(int(current.max()) + 1)]
        clusters = [(c, idx) for c, idx in clusters if not whole[idx].all()]
        tasks = [(idx, spawn_seeds(rng, 1)[0]) for _, idx in clusters]
        # the clusters of a level are independent: tested in forked workers on large graphs
        jobs = effective_jobs(n_jobs, len(tasks), A.nnz // 2)
        splits, _ = fork_map(test, tasks, jobs)
        for (c, idx), split in zip(clusters, splits):
            if split is None:
                whole[idx] = True
            else:
                new[idx] = np.where(split == 0, c, next_id + split - 1)
                next_id += int(split.max())
        if np.array_equal(new, current):
            return levels
        current = canonical_labels(new)
        levels.append(current)


def separated_cuts(graph, labels, *, min_separation: float = MIN_SEPARATION,
                   min_size: int = 4) -> list[np.ndarray]:
    """Finer levels below ``labels``, each cutting one cluster in two where the data set it apart.

    Every cluster of at least ``min_size`` hosts is a candidate, cut at its
    weakest cut (:func:`cluster.separation.weakest_cuts`).  A cut makes a new
    level when that level's separation (:func:`cluster.separation.separation`:
    each cluster's weakest inside cut over the strongest tie of the level) is
    at least ``min_separation``; of the cuts that qualify, the one whose level
    is set apart most clearly comes first, one cut per level, so that a clear
    boundary is not hidden in a level beside a faint one.  It is what the
    permutation test of :func:`significant_split` cannot do on a cluster of a
    few hosts (too few edges to shuffle): a site of two hosts that Louvain's
    best partition joined to the next site behind a slow link comes apart
    here.  A homogeneous cluster's weakest cut is a cut through noise, no
    weaker than its ties, so it does not qualify.

    Parameters
    ----------
    graph : sparse array, ndarray or SharedGraph
        Host-level weights ``w_n``.
    labels : array of int
        The partition to cut further (the finest level found so far).
    min_separation : float, default MIN_SEPARATION
        Separation a new level must have on ``graph``.
    min_size : int, default 4
        Smaller clusters are not cut (as in :func:`significant_split`).

    Returns
    -------
    list of ndarray
        The new levels, coarsest first, one more cluster cut in each; none
        when no cut qualifies.

    Examples
    --------
    Two groups of four that the labels hold together, beside a group of six:

    >>> w = np.full((14, 14), 1.0)
    >>> w[:4, :4] = w[4:8, 4:8] = 8.0
    >>> w[:8, :8] = np.maximum(w[:8, :8], 2.0)
    >>> w[8:, 8:] = 8.0
    >>> np.fill_diagonal(w, 0)
    >>> [level.tolist() for level in separated_cuts(w, np.repeat([0, 1], [8, 6]))]
    [[0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2]]
    """
    A = _without_loops(graph.matrix if isinstance(graph, SharedGraph)
                       else as_adjacency(graph)[0])
    whole = SharedGraph.checked(A)   # every matrix below is a part of this checked one
    current = canonical_labels(labels)
    side = weakest_cuts(whole, current)
    halves: dict[bytes, np.ndarray] = {}    # a part's own weakest cut, by its hosts
    levels: list[np.ndarray] = []

    def cut_of(idx: np.ndarray) -> np.ndarray:
        key = idx.tobytes()
        if key not in halves:
            halves[key] = weakest_cuts(SharedGraph.checked(A[idx][:, idx]),
                                       np.zeros(len(idx), dtype=np.int64))
        return halves[key]

    while True:
        best: tuple[float, np.ndarray, np.ndarray] | None = None
        across = cut_weights(whole, current, side)
        for c in range(int(current.max()) + 1):
            idx = np.flatnonzero(current == c)
            cut = side[idx]
            if len(idx) < max(min_size, 2) or cut.all() or not cut.any():
                continue
            others = np.delete(across, c)   # the level's separation is at most these over c's
            if (others[~np.isnan(others)] < min_separation * across[c]).any():
                continue
            new, new_side = current.copy(), side.copy()
            new[idx[cut == 1]] = current.max() + 1
            for part in (idx[cut == 0], idx[cut == 1]):
                new_side[part] = cut_of(part)
            value = separation(whole, new, new_side)
            if value >= min_separation and (best is None or value > best[0]):
                best = (value, new, new_side)
        if best is None:
            return levels
        current, side = canonical_labels(best[1]), best[2]
        levels.append(current)
