"""How clearly the data set a level's clusters apart: judged on the hosts, level by level.

A level of a bandwidth hierarchy says: the hosts inside each of my clusters
exchange more with each other than any two of my clusters exchange.  That
is the threshold definition of a bandwidth cluster (a threshold on the
bandwidth between hosts: hosts above it share a cluster), and the level's
**separation** measures it directly on the host-level weights, without the
levels above or below it:

* inside a cluster, the weakest place is its weakest cut in two
  (:func:`weakest_cuts`): the hosts in spectral order, cut where the weight
  across is least against what the hosts' weights inside the cluster lead
  one to expect (degree-corrected, as modularity's null model: a host that
  met few of its cluster in the peer lists exchanged little with all of
  it, which is sampling, not structure); its value is the mean weight per
  host pair across that cut;
* between clusters, a tie is the mean weight per host pair between one side
  of a cluster's cut and one side of another cluster's (so that a host
  group split across two clusters ties them together however small it
  is), shrunk towards the mean between the two clusters by
  :data:`TIE_PRIOR` host pairs (two lone hosts' one count is noise more
  than a tie);
* the level's separation is its weakest cut over its strongest tie, over
  all its clusters (:func:`separation`); a cluster's own
  (:func:`cluster_separations`) is the smaller of its cut over the level's
  strongest tie and the level's weakest cut over its own strongest tie, so
  that the level's separation is the smallest of its clusters'.

A real level is cut only by noise and tied only across its thresholds, so
its ratio is its contrast; a split of a homogeneous group has a cut as weak
as a tie, and a level that splits one site into its clusters while keeping
an alike site whole has that site's inner cut as weak as the first site's
tie between its clusters: a ratio near 1 in both.  The resampled
separations of a level (:func:`resampled_separations`, over the broadcast
iterations as :mod:`cluster.confidence` resamples them) say how sure the
data are; the share of resamples that clear
:func:`cluster.confidence.resample_separation` is the level's confidence.
Nothing in it depends on another level, so a spurious level beside a real
one changes nothing in the real one's verdict.

Both choices hold at every size.  Each receiver hears from a few dozen
random peers per broadcast, so in a cluster of hundreds of hosts most pairs
have exchanged nothing after ten broadcasts; the cut of least weight per
pair is then a cut through sampling noise (two thirds of the cluster's mean
in a planted cluster of 128 among 4096 hosts), which the degree correction
does not take; and comparing each cut with every tie of the level, not
only with its own cluster's, is what tells one site split and one whole
from a level of the network.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from scipy import sparse
from scipy.linalg import eigh
from scipy.sparse.csgraph import connected_components
from scipy.sparse.linalg import eigsh

from cluster.adjacency import SharedGraph, as_adjacency
from tomography.model.blas import one_blas_thread

__all__ = ["GroupSums", "weakest_cuts", "cut_weights", "separation", "cluster_separations",
           "separated_coarsening", "resampled_separations", "resampled_cluster_separations", "MIN_SEPARATION", "TIE_PRIOR"]

MIN_SEPARATION = 1.3
"""Separation at which the data set a partition apart: each cluster's weakest inside cut
at least this many times its strongest outside tie, per host pair.  The ground truth of
the random-network family (``benchmarks/calibration.py``) is the partitions of the host
groups that 45 simulated broadcasts set apart at this separation; ``tomography evaluate``
marks a truth level observable at it."""


TIE_PRIOR = 2.0
"""Host pairs of prior weight a tie between two cluster halves gets towards the mean
between the two clusters (a tie between single hosts is one noisy count).  Chosen with
the support rule on the family of ``benchmarks/calibration.py``."""
DENSE_KEYS = 2**24
"""Largest number of (iteration, group, group) cells :class:`GroupSums` sums by direct
address; beyond, it sorts the observations."""
DENSE_CUT = 512
"""Largest cluster whose spectral ordering comes from a dense eigensolver; a larger one's
second eigenvector comes from Lanczos iterations on the sparse weights (the same vector
within its tolerance, several times faster at thousands of hosts)."""


class GroupSums:
    """Per iteration, the summed weights between and inside the groups of one partition.

    The mean weight per host pair between two groups of a resampled ``w_n``
    is the resampled mean of these sums over the pairs: no host-level
    matrix per resample.

    Parameters
    ----------
    sampler : IterationWeights
        The per-iteration weights (:class:`tomography.model.weights.IterationWeights`,
        edges in the order of the upper triangle of ``sampler.weights``).
    labels : array of int
        Group ``0 .. k-1`` of each host.
    groups : int, optional
        ``k`` (default: the largest label + 1), for groups that may be empty.

    Examples
    --------
    >>> from tomography.model.synthetic import planted_partition
    >>> from tomography.model.weights import IterationWeights
    >>> data = IterationWeights.from_measurement(planted_partition(8, 2, iterations=2, seed=0))
    >>> sums = GroupSums(data, np.array([0] * 4 + [1] * 4))
    >>> between, inside = sums.totals(np.ones(2))
    >>> between.shape, inside.shape
    ((2, 2), (2,))
    """

    def __init__(self, sampler: Any, labels: np.ndarray, groups: int | None = None) -> None:
        labels = np.asarray(labels, dtype=np.int64)
        upper = sparse.triu(sampler.weights, format="coo")   # the sampler's edge order
        a = labels[upper.row][sampler.edge]
        b = labels[upper.col][sampler.edge]
        self.k = int(labels.max()) + 1 if groups is None else groups
        self.sizes = np.bincount(labels, minlength=self.k).astype(np.int64)
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        key = (sampler.iteration.astype(np.int64) * self.k + lo) * self.k + hi
        space = sampler.n_iterations * self.k * self.k
        if space <= DENSE_KEYS:   # sums by direct address: no sort of the observations
            summed = np.bincount(key, weights=sampler.blocks, minlength=space)
            keys = np.flatnonzero(np.bincount(key, minlength=space))
            self.value = summed[keys]
        else:
            keys, inverse = np.unique(key, return_inverse=True)
            self.value = np.bincount(inverse, weights=sampler.blocks)
        self.iteration = keys // (self.k * self.k)
        self.lo = (keys // self.k) % self.k
        self.hi = keys % self.k

    def totals(self, multiplicity: np.ndarray) -> tuple[sparse.csr_array, np.ndarray]:
        """The resampled ``w_n`` summed between groups (symmetric) and inside each group.

        ``multiplicity`` gives how often each iteration enters the resample
        (all ones: ``w_n`` itself).
        """
        m = np.asarray(multiplicity, dtype=float)
        w = self.value * m[self.iteration] / m.sum()
        inside = self.lo == self.hi
        internal = np.bincount(self.lo[inside], weights=w[inside], minlength=self.k)
        out = ~inside
        between = sparse.coo_array(
            (np.concatenate([w[out], w[out]]),
             (np.concatenate([self.lo[out], self.hi[out]]),
              np.concatenate([self.hi[out], self.lo[out]]))), shape=(self.k, self.k)).tocsr()
        between.sum_duplicates()
        return between, internal


def weakest_cuts(weights: Any, labels: np.ndarray) -> np.ndarray:
    """Per host, the side of its cluster's weakest cut it is on (0 or 1).

    The hosts are ordered by the Fiedler vector of the cluster's normalised
    Laplacian (spectral ordering) and cut where the weight across is least
    against its expectation from the hosts' weights inside the cluster
    (``d_S d_T / D``, the null model of modularity: a sweep cut that two
    groups of unequal sizes are cut apart by, and a host that merely met
    few of its cluster is not); a cluster whose hosts fall apart into
    unconnected groups is cut between them, a cluster of one host is not
    cut.

    Parameters
    ----------
    weights : sparse array, ndarray or SharedGraph
        Host-level ``w_n``.
    labels : array of int
        Per host, its cluster.

    Returns
    -------
    ndarray of int

    Examples
    --------
    >>> w = np.ones((4, 4)) - np.eye(4)
    >>> w[0, 1] = w[1, 0] = w[2, 3] = w[3, 2] = 5.0
    >>> side = weakest_cuts(w, np.zeros(4, dtype=int))
    >>> bool(side[0] == side[1] != side[2] == side[3])
    True
    """
    A = weights.matrix if isinstance(weights, SharedGraph) else as_adjacency(weights)[0]
    labels = np.asarray(labels)
    side = np.zeros(len(labels), dtype=np.int64)
    # one BLAS thread: the clusters' eigenproblems are small (a few hundred hosts), where
    # threads cost more than they give, many times more on a busy machine
    with one_blas_thread():
        for c in np.unique(labels):
            members = np.flatnonzero(labels == c)
            side[members] = _cut(A, members)
    return side


def cut_weights(weights: Any, labels: np.ndarray, side: np.ndarray) -> np.ndarray:
    """Per cluster (in label order), the mean weight per host pair across its cut.

    Every level that keeps a cluster whole and cuts another has a separation of at most the
    kept one's cut over the other's: the two parts of a cut cluster are tied at least as
    strongly as the mean across the cut.  NaN for a cluster of one host.

    Parameters
    ----------
    weights : sparse array, ndarray or SharedGraph
        Host-level ``w_n``.
    labels : array of int
        Per host, its cluster ``0 .. k-1``.
    side : array of int
        Per host, its side of its cluster's cut (:func:`weakest_cuts`).

    Examples
    --------
    >>> w = np.ones((4, 4)) - np.eye(4)
    >>> w[0, 1] = w[1, 0] = 5.0
    >>> cut_weights(w, np.zeros(4, dtype=int), np.array([0, 1, 0, 1])).tolist()
    [2.0]
    """
    A = weights.matrix if isinstance(weights, SharedGraph) else as_adjacency(weights)[0]
    between, sizes, _ = _half_sums(A, np.asarray(labels), np.asarray(side))
    pairs = (sizes[0::2] * sizes[1::2]).astype(float)
    across = between[0::2, 1::2].diagonal()
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(pairs > 0, across / pairs, np.nan)


def _cut(A: Any, members: np.ndarray) -> np.ndarray:
    """The side (0 or 1) of each of ``members`` in their cluster's weakest cut."""
    if len(members) < 2:
        return np.zeros(len(members), dtype=np.int64)
    sub = A[members][:, members]
    parts, comp = connected_components(sub, directed=False)
    if parts > 1:   # unconnected: the largest group against the rest
        return (comp != np.bincount(comp).argmax()).astype(np.int64)
    dense = sub.toarray() if sparse.issparse(sub) else np.asarray(sub, dtype=float)
    np.fill_diagonal(dense, 0.0)
    degree = dense.sum(axis=1)
    scale = 1.0 / np.sqrt(degree)
    order = np.argsort(_fiedler(dense, sub, scale) * scale, kind="stable")
    cut = np.zeros(len(members), dtype=np.int64)
    cut[order[: _weakest_prefix(dense[np.ix_(order, order)])]] = 1
    return cut


def _fiedler(dense: np.ndarray, sub: Any, scale: np.ndarray) -> np.ndarray:
    """The second eigenvector of a connected cluster's normalised Laplacian (Lanczos beyond
    :data:`DENSE_CUT` hosts on a sparse ``sub``, a dense solver below)."""
    n = len(dense)
    if n > DENSE_CUT and sparse.issparse(sub):
        off = sparse.csr_array(sub)
        off.setdiag(0.0)
        off.eliminate_zeros()
        normalised = sparse.diags_array(scale) @ off @ sparse.diags_array(scale)
        # the largest two of D^-1/2 A D^-1/2: 1 (on sqrt(degree)) and the Fiedler value;
        # a fixed start vector keeps the result reproducible
        values, vectors = eigsh(normalised, k=2, which="LA", v0=np.linspace(1.0, 2.0, n))
        return vectors[:, int(np.argmin(values))]
    laplacian = np.eye(n) - scale[:, None] * dense * scale[None, :]
    return eigh(laplacian, subset_by_index=[1, 1])[1][:, 0]


def _weakest_prefix(dense: np.ndarray) -> int:
    """How many of the first hosts (in sweep order) make the cut of least weight against its
    expectation from the two sides' weights inside the cluster."""
    inner = 2 * np.cumsum(np.tril(dense, -1).sum(axis=1))   # weight inside the prefix
    degree = np.cumsum(dense.sum(axis=1))                   # prefix's weight to all
    across = degree[:-1] - inner[:-1]
    expected = degree[:-1] * (degree[-1] - degree[:-1])
    with np.errstate(divide="ignore", invalid="ignore"):   # a side with no weight: no cut
        ratio = np.where(expected > 0, across * degree[-1] / expected, np.inf)
    return int(np.argmin(ratio)) + 1


def _ratios(between: sparse.csr_array, sizes: np.ndarray, k: int
            ) -> tuple[np.ndarray, np.ndarray]:
    """Per cluster, its separation within the level, and the cluster it is tied to most.

    From the sums between the ``2 k`` halves (group ``2 c + side``).  A
    cluster's ties are those between one of its halves and one half of
    another cluster: a host group split across two clusters ties its two
    parts together however small it is.  A cluster's separation is the
    smaller of its cut over the level's strongest tie and the level's weakest
    cut over its own strongest tie.  NaN for every cluster when no cluster
    has two hosts.
    """
    B = between.toarray()
    pairs = np.outer(sizes, sizes).astype(float)
    means = np.divide(B, pairs, out=np.zeros_like(B), where=pairs > 0)
    cut = means[0::2, 1::2].diagonal().copy()
    half_pairs = pairs[0::2, 1::2].diagonal()
    owner = np.arange(2 * k) // 2
    # a tie between two halves, shrunk towards the mean between their clusters by
    # TIE_PRIOR host pairs: two lone hosts' one count is not a tie on its own
    whole = B.reshape(k, 2, k, 2).sum(axis=(1, 3))
    cluster_pairs = pairs.reshape(k, 2, k, 2).sum(axis=(1, 3))
    prior = np.divide(whole, cluster_pairs, out=np.zeros_like(whole),
                      where=cluster_pairs > 0)[np.ix_(owner, owner)]
    means = np.where(pairs > 0, (B + TIE_PRIOR * prior) / (pairs + TIE_PRIOR), 0.0)
    means[owner[:, None] == owner[None, :]] = 0.0
    per_half = means.reshape(k, 2, 2 * k).max(axis=1)
    strongest = per_half.max(axis=1)
    partner = owner[per_half.argmax(axis=1)]
    cut[~(half_pairs > 0)] = np.nan   # a cluster of one host has no cut
    if np.isnan(cut).all():
        return np.full(k, np.nan), partner
    weakest = np.nanmin(cut)
    tie = strongest.max()
    with np.errstate(divide="ignore", invalid="ignore"):
        own_cut = np.where(tie > 0, cut / tie, np.where(cut > 0, np.inf, 0.0))
        own_tie = np.where(strongest > 0, weakest / np.where(strongest > 0, strongest, 1.0),
                           np.where(weakest > 0, np.inf, 0.0))
    # nothing across a cut: not a cluster by the data (ratio 0)
    return np.fmin(own_cut, own_tie), partner


def _ratio(between: sparse.csr_array, sizes: np.ndarray, k: int) -> float:
    """The level's separation: the smallest of :func:`_ratios` (NaN when every cluster is one host)."""
    ratios = _ratios(between, sizes, k)[0]
    ratios = ratios[~np.isnan(ratios)]
    return float(ratios.min()) if len(ratios) else float("nan")


def _halved(labels: np.ndarray, side: np.ndarray) -> np.ndarray:
    _, dense = np.unique(np.asarray(labels), return_inverse=True)
    return 2 * dense + side


def separation(weights: Any, labels: np.ndarray, side: np.ndarray | None = None) -> float:
    """How clearly ``w_n`` sets the clusters of ``labels`` apart: the smallest, over
    clusters of two hosts or more, of the weakest inside cut over the strongest outside tie.

    Parameters
    ----------
    weights : sparse array, ndarray or SharedGraph
        Host-level ``w_n``.
    labels : array of int
        Per host, its cluster.
    side : array of int, optional
        Per host, its side of its cluster's cut (:func:`weakest_cuts` by default).

    Returns
    -------
    float
        Mean weight per host pair across the weakest cut over the largest mean
        weight per host pair between a side of it and a side of another cluster; ``inf`` when a cluster
        exchanged nothing with the rest, ``nan`` when every cluster is one host.

    Examples
    --------
    Two pairs, 5 inside and 1 across: each pair's cut is 5, its outside tie 1.

    >>> w = np.ones((4, 4)) - np.eye(4)
    >>> w[0, 1] = w[1, 0] = w[2, 3] = w[3, 2] = 5.0
    >>> separation(w, np.array([0, 0, 1, 1]))
    5.0

    Paired the other way round, each cluster's cut (1) is weaker than the tie
    of its halves to the other cluster's (5 for the one host pair, 3.67 shrunk
    towards the clusters' mean of 3 by two host pairs):

    >>> round(separation(w, np.array([0, 1, 0, 1])), 2)
    0.27
    """
    A = weights.matrix if isinstance(weights, SharedGraph) else as_adjacency(weights)[0]
    labels = np.asarray(labels)
    side = weakest_cuts(A, labels) if side is None else np.asarray(side)
    between, sizes, k2 = _half_sums(A, labels, side)
    return _ratio(between, sizes, k2 // 2)


def cluster_separations(weights: Any, labels: np.ndarray, side: np.ndarray | None = None
                        ) -> tuple[np.ndarray, np.ndarray]:
    """Per cluster (in label order), its separation within the level and the cluster it is
    tied to most.

    A cluster's separation is the smaller of its weakest cut over the
    level's strongest tie and the level's weakest cut over the cluster's own
    strongest tie: the cluster is set apart when it holds together better
    than any two clusters of the level, and is tied to none as strongly as
    any cluster holds together.  :func:`separation` is the smallest of them.

    Returns
    -------
    ratios : ndarray of float
        NaN only when no cluster of the level has two hosts.
    partner : ndarray of int
        The cluster holding its strongest outside tie.

    Examples
    --------
    Groups 0 and 1 are closer to each other (3) than to group 2 (1); inside,
    each holds at 6.  Group 2 is judged against the level's strongest tie
    too:

    >>> w = np.ones((6, 6)) - np.eye(6)
    >>> w[:2, :2] = w[2:4, 2:4] = w[4:, 4:] = 6.0
    >>> w[:2, 2:4] = w[2:4, :2] = 3.0                  # groups 0 and 1 closer
    >>> ratios, partner = cluster_separations(w, np.array([0, 0, 1, 1, 2, 2]))
    >>> ratios.tolist(), partner.tolist()
    ([2.0, 2.0, 2.0], [1, 0, 0])
    """
    A = weights.matrix if isinstance(weights, SharedGraph) else as_adjacency(weights)[0]
    _, labels = np.unique(np.asarray(labels), return_inverse=True)
    side = weakest_cuts(A, labels) if side is None else np.asarray(side)
    between, sizes, k2 = _half_sums(A, labels, side)
    return _ratios(between, sizes, k2 // 2)


def separated_coarsening(weights: Any, labels: Sequence[Any], *,
                         min_separation: float = MIN_SEPARATION) -> list[Any]:
    """The finest coarsening of a partition that the weights set apart.

    While the partition's separation (:func:`separation`) is below
    ``min_separation``, the two clusters with the strongest tie between them
    are merged (the coarsenings of a threshold lowered step by step); merged
    labels are joined by ``+`` (sorted).  What a measurement can show of a
    truth: ``tomography evaluate`` scores against it (``nmi_observable``).

    Parameters
    ----------
    weights : sparse array, ndarray or SharedGraph
        Host-level ``w_n``.
    labels : sequence
        Per host, its label (strings or numbers).
    min_separation : float, default MIN_SEPARATION

    Returns
    -------
    list
        Per host, its label in the coarsening (a string where labels were joined).

    Examples
    --------
    >>> w = np.ones((6, 6)) - np.eye(6)
    >>> w[:4, :4] = w[4:, 4:] = 6.0                      # a and b are one group in the data
    >>> separated_coarsening(w, ["a", "a", "b", "b", "c", "c"])
    ['a+b', 'a+b', 'a+b', 'a+b', 'c', 'c']

    Two alike sites of two clusters each: one site whole and the other split
    is no level of theirs, so both sites are kept whole or both split:

    >>> w = np.ones((8, 8))
    >>> w[:4, :4] = w[4:, 4:] = 4.0
    >>> for a in (0, 2, 4, 6):
    ...     w[a:a + 2, a:a + 2] = 16.0
    >>> np.fill_diagonal(w, 0)
    >>> separated_coarsening(w, list("aabbccdd"))
    ['a', 'a', 'b', 'b', 'c', 'c', 'd', 'd']
    >>> separated_coarsening(w, list("aabbcccc"))
    ['a+b', 'a+b', 'a+b', 'a+b', 'c', 'c', 'c', 'c']
    """
    A = weights.matrix if isinstance(weights, SharedGraph) else as_adjacency(weights)[0]
    current = list(labels)
    side = None
    for _ in range(len(set(map(str, current)))):   # each pass merges two: it ends
        names, codes = np.unique(np.asarray(current, dtype=object).astype(str),
                                 return_inverse=True)
        if len(names) < 2:
            return current
        side = weakest_cuts(A, codes) if side is None else side
        between, sizes, k2 = _half_sums(A, codes, side)
        if not _ratio(between, sizes, k2 // 2) < min_separation:
            return current
        whole = between.toarray().reshape(k2 // 2, 2, k2 // 2, 2).sum(axis=(1, 3))
        counts = np.bincount(codes, minlength=len(names)).astype(float)
        tie = whole / np.outer(counts, counts)
        np.fill_diagonal(tie, -np.inf)
        first, second = np.unravel_index(int(np.argmax(tie)), tie.shape)
        pair = {int(first), int(second)}
        joined = "+".join(sorted({part for c in pair for part in names[c].split("+")}))
        current = [joined if c in pair else current[i] for i, c in enumerate(codes)]
        merged = np.flatnonzero(np.isin(codes, list(pair)))
        side[merged] = _cut(A, merged)   # only the merged cluster is cut anew
    return current


def _half_sums(A: sparse.csr_array, labels: np.ndarray, side: np.ndarray
               ) -> tuple[sparse.csr_array, np.ndarray, int]:
    """Weights summed between the halves of the clusters (group ``2 c + side``)."""
    halves = _halved(labels, side)
    k2 = 2 * (int(halves.max()) // 2 + 1)
    sizes = np.bincount(halves, minlength=k2)
    onehot = sparse.csr_array((np.ones(len(halves)), (halves, np.arange(len(halves)))),
                              shape=(k2, len(halves)))
    off = A if not A.diagonal().any() else A - sparse.diags_array(A.diagonal())   # symmetric
    sums = onehot @ off @ onehot.T
    return sparse.csr_array(sums - sparse.diags_array(sums.diagonal())), sizes, k2


def resampled_separations(sampler: Any, labels: np.ndarray,
                          plan: list[np.ndarray], side: np.ndarray | None = None
                          ) -> np.ndarray:
    """The separation of ``labels`` on each resample of the iterations.

    Parameters
    ----------
    sampler : IterationWeights
        The per-iteration weights (an :class:`cluster.confidence.IterationSampler`).
    labels : array of int
        Per host, its cluster.
    plan : list of array of int
        Per resample, how often each iteration enters it
        (:func:`cluster.confidence.resample_plan`).
    side : array of int, optional
        The cuts, made once on the full ``w_n`` (:func:`weakest_cuts` by default).

    Returns
    -------
    ndarray of float
        One separation per resample.

    Examples
    --------
    >>> from tomography.model.synthetic import planted_partition
    >>> from tomography.model.weights import IterationWeights
    >>> m = planted_partition(16, 2, iterations=4, seed=0)
    >>> data = IterationWeights.from_measurement(m)
    >>> truth = np.array([int(m.labels[h][-1]) for h in m.host_names])
    >>> s = resampled_separations(data, truth, [np.ones(4), np.array([2, 2, 0, 0])])
    >>> bool((s > 2).all())
    True
    """
    per = resampled_cluster_separations(sampler, labels, plan, side)
    out = np.full(len(plan), np.nan)
    some = ~np.isnan(per).all(axis=1)
    out[some] = np.nanmin(per[some], axis=1)
    return out


def resampled_cluster_separations(sampler: Any, labels: np.ndarray,
                                  plan: list[np.ndarray], side: np.ndarray | None = None
                                  ) -> np.ndarray:
    """Each cluster's separation (:func:`cluster_separations`) on each resample.

    Parameters and cuts as :func:`resampled_separations`.

    Returns
    -------
    ndarray of float, shape (resamples, clusters)
        Clusters in the order of their labels (``np.unique``).

    Examples
    --------
    Three groups, and a level that splits the third in two halves:

    >>> from tomography.model.synthetic import planted_hierarchy
    >>> from tomography.model.weights import IterationWeights
    >>> data = IterationWeights.from_measurement(planted_hierarchy((3,), 8, iterations=3,
    ...                                                            seed=1))
    >>> halves = np.repeat([0, 1, 2, 3], [8, 8, 4, 4])
    >>> per = resampled_cluster_separations(data, halves, [np.ones(3), np.array([2, 1, 0])])
    >>> per.shape, bool((per < 1.3).all())
    ((2, 4), True)
    """
    labels = np.asarray(labels)
    side = weakest_cuts(sampler.weights, labels) if side is None else np.asarray(side)
    halves = _halved(labels, side)
    k2 = 2 * (int(halves.max()) // 2 + 1)
    sums = GroupSums(sampler, halves, groups=k2)
    sizes = np.bincount(halves, minlength=k2)
    return np.array([_ratios(sums.totals(multiplicity)[0], sizes, k2 // 2)[0]
                     for multiplicity in plan]).reshape(len(plan), k2 // 2)
