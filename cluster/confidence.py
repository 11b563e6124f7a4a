"""How sure is each level, cluster and tree edge: resampling the iterations.

Every broadcast iteration is an independent measurement of the same
network, so the iterations can be resampled like the rows of a table: a
resampled ``w_n`` is the mean of the resampled iterations' weights (Eq 4.1,
4.2).  A result found again on most resamples is supported by the data; one
found only on the data it was fitted to is noise.

Resampling scheme (:func:`resample_plan`): with at least
:data:`BOOTSTRAP_MIN` iterations, the bootstrap (draw ``n`` iterations with
replacement); with fewer, split halves (the iterations shuffled and cut in
two, each half a resample; ``resamples / 2`` different cuts).  A single
iteration cannot be resampled: the confidence is then not measured.

A **level's confidence** is the share of resamples whose data set its
clusters apart (:func:`level_separations`): its weakest inside cut at least
:func:`resample_separation` times stronger than its strongest tie between
two of its clusters (:mod:`cluster.separation`; 1.25 in broadcasts of real
swarms, 1.4 in simulated data), judged on the hosts and on
nothing else, so a spurious level beside a real one does not change the
real one's verdict; averaged with the same share on resamples of the first
``n - 1`` iterations (after two iterations, ``w_1`` is judged on itself): a
level the data set apart already one iteration earlier is more often right
than one a single iteration brought out.  A level is supported when its
confidence reaches :data:`SUPPORT_THRESHOLD`.  The numbers were chosen on
the training networks of a family of random networks (simulated, measured
for real on the testbed, and large) and checked on the others
(``benchmarks/calibration.py``); the real swarms' line on their own.

A **cluster's confidence** is the same mean for the cluster: the share of
resamples that set it apart within its level (its cut above every tie of
the level, its ties below every cut: :func:`cluster.separation.cluster_separations`),
and that share one iteration earlier.  A resample sets the level apart
exactly when it sets every cluster apart, so a level's confidence is never
above its least sure cluster's.

A tree edge's confidence is the share of resamples whose maximum spanning
tree over the same clusters has it.  A flat clustering's clusters
(:func:`flat_confidence`) are scored by how often Louvain finds them again
on a resample: the Jaccard index (in hosts) of the cluster with the
resampled cluster that shares more than half of their union, 0 when none
does, averaged (the bootstrap stability of Hennig, "Cluster-wise assessment
of cluster stability", Comput. Stat. Data Anal. 52, 2007, with a strict
match).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Sequence

import numpy as np
from scipy import sparse

from cluster.accuracy import nmi
from cluster.adjacency import SharedGraph
from cluster.averaged_edge import DEFAULT_LINKAGE, collapse
from cluster.louvain import leiden, louvain, multilevel
from cluster.parallel import effective_jobs, fork_map
from cluster.separation import resampled_cluster_separations, weakest_cuts
from tomography.model.errors import ParameterError, TomographyError
from tomography.model.hierarchy import ClusterTree, Hierarchy
from tomography.model.deprecation import renamed_parameter
from tomography.model.seeding import Seed, random_state, spawn_seeds
from tomography.model.weights import IterationWeights

__all__ = ["IterationSampler", "as_sampler", "resample_plan", "hierarchy_confidence",
           "flat_confidence", "tree_confidence", "cluster_scores", "supported_levels", "SUPPORT_THRESHOLD",
           "DEFAULT_RESAMPLES", "BOOTSTRAP_MIN", "with_support", "level_separations",
           "level_shares", "JudgedLevel", "root_strata", "SEPARATION_RESAMPLES",
           "RESAMPLE_SEPARATION", "SWARM_SEPARATION", "resample_separation"]

SUPPORT_THRESHOLD = 0.45
"""Confidence a level needs to be reported. Chosen with :data:`RESAMPLE_SEPARATION` on the
training networks of the three parts of the calibration family (``benchmarks/calibration.py``,
2026-12-06: 120 simulated networks of 19-96 hosts, 30 measured by real libtorrent broadcasts on
the testbed with every default, 24 simulated at 224-2727 hosts under the quota), judged on the
levels whose long-run data decide whether they are separated: of the pairs whose supported
levels were at least 95.5 % right, the one supporting the most right levels. A level at 0.45 was
set apart by nearly half of the resamples, now and one iteration earlier taken together. The
held-out figures of each part are under :data:`SWARM_SEPARATION`."""

RESAMPLE_SEPARATION = 1.4
"""Separation (:mod:`cluster.separation`) a resample of simulated or synthetic data must
reach to set a level apart, a little above what the ground truth of the family asks of all
the data (:data:`cluster.separation.MIN_SEPARATION`, 1.3): a resample holds less data than
the measurement.  Chosen with :data:`SUPPORT_THRESHOLD` on the training networks of the
calibration family (``benchmarks/calibration.py``); also the line of data whose origin is not
known (:func:`resample_separation`)."""

SWARM_SEPARATION = 1.25
"""Separation a resample of broadcasts measured by real libtorrent swarms (the dataset's
``method`` "bittorrent": the testbed, local, MPI and SSH runs) must reach.  A swarm cut at its
block quota gives resamples whose separation lies further below the data's than the
simulator's do, so its line was chosen on the real part's own training networks, at
:data:`SUPPORT_THRESHOLD`: of the lines whose supported levels were at least 95.5 % right,
the one supporting the most right levels (``benchmarks/calibration.py``, 2026-12-06, on
broadcasts counted by their receivers).  Held out, per part (small and large simulated at
:data:`RESAMPLE_SEPARATION`, real at this line): 97.3 %, 97.1 % and 99.4 % of the supported
levels right, 91.2 %, 94.7 % and 96.4 % of the right levels supported (most of those missed
are levels of the first two or three iterations)."""


def resample_separation(data: Any) -> float:
    """The separation a resample of ``data`` must reach by default: :data:`SWARM_SEPARATION`
    for broadcasts measured by real swarms, :data:`RESAMPLE_SEPARATION` for anything else.

    ``data`` is what :func:`as_sampler` takes, or a dataset's ``method`` itself.

    Examples
    --------
    >>> resample_separation("bittorrent"), resample_separation("simulated")
    (1.25, 1.4)
    >>> from tomography.model.synthetic import planted_partition
    >>> resample_separation(planted_partition(8, 2, iterations=2, seed=0))
    1.4
    """
    if isinstance(data, str) or data is None:
        source = data
    elif hasattr(data, "meta"):   # a Measurement
        source = data.meta.get("method")
    else:
        source = getattr(data, "source", None)
    return SWARM_SEPARATION if source == "bittorrent" else RESAMPLE_SEPARATION


SEPARATION_RESAMPLES = 64
"""Resamples of each level's separation (each costs a sum over the data, no clustering)."""

DEFAULT_RESAMPLES = 4
"""Resampled analyses per confidence of a flat clustering or a tree (an even number: split
halves come in pairs)."""

BOOTSTRAP_MIN = 4
"""Fewest iterations resampled by the bootstrap; below, split halves."""


def _halves(strata: np.ndarray, resamples: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Split halves: ``resamples / 2`` random cuts of the iterations into two halves of
    ``n // 2`` and the rest, each stratum cut in two as evenly as the halves' sizes allow
    (the odd iterations of the strata shared out at random)."""
    plan = []
    n, groups = len(strata), [np.flatnonzero(strata == s) for s in np.unique(strata)]
    for _ in range((resamples + 1) // 2):
        first = np.zeros(n, dtype=np.int64)
        if len(groups) == 1:
            first[rng.permutation(n)[: n // 2]] = 1
        else:
            odd = []
            for members in groups:
                members = rng.permutation(members)
                first[members[: len(members) // 2]] = 1
                odd += members[len(members) // 2 * 2:].tolist()
            odd = rng.permutation(np.asarray(odd, dtype=np.int64))
            first[odd[: n // 2 - int(first.sum())]] = 1
        plan += [first, 1 - first]
    return plan


@random_state
def resample_plan(n_iterations: int, resamples: int = DEFAULT_RESAMPLES, *,
                  seed: Seed = 0, strata: Sequence[int] | np.ndarray | None = None
                  ) -> tuple[str, list[np.ndarray]]:
    """How often each iteration enters each resample.

    Parameters
    ----------
    n_iterations : int
        Iterations in the data (at least 2).
    resamples : int, default DEFAULT_RESAMPLES
        Number of resampled data sets (rounded up to even for split halves).
    seed : int, Generator or None, default 0
        The same seed gives the same result; None draws a fresh one.
    strata : sequence of int, optional
        Per iteration, its stratum: each resample draws from each stratum as
        many iterations as it holds (a stratified bootstrap; split halves cut
        each stratum in two).  The roots are chosen, not drawn: grouped by the
        part of the network that held them (:func:`root_strata`), every
        resample keeps each part's share of roots, as the measurement did.

    Returns
    -------
    method : {"bootstrap", "split-halves"}
    multiplicities : list of ndarray of int
        Per resample, the count of each iteration (0 when left out).

    Examples
    --------
    >>> method, plan = resample_plan(3, 2, seed=0)
    >>> method, [m.tolist() for m in plan]
    ('split-halves', [[0, 0, 1], [1, 1, 0]])
    >>> method, plan = resample_plan(10, 3, seed=0)
    >>> method, [int(m.sum()) for m in plan]
    ('bootstrap', [10, 10, 10])
    >>> _, plan = resample_plan(6, 20, seed=0, strata=[0, 1, 0, 1, 0, 1])
    >>> {(int(m[0::2].sum()), int(m[1::2].sum())) for m in plan}
    {(3, 3)}
    """
    if n_iterations < 2:
        raise TomographyError("one iteration cannot be resampled: measure at least 2 for a "
                              "confidence")
    if resamples < 1:
        raise ParameterError(f"resamples must be >= 1, got {resamples}")
    rng = seed.rng
    strata = (np.zeros(n_iterations, dtype=np.int64) if strata is None
              else np.asarray(strata, dtype=np.int64))
    if len(strata) != n_iterations:
        raise ParameterError(f"strata has {len(strata)} entries for {n_iterations} iterations")
    if n_iterations >= BOOTSTRAP_MIN:
        groups = [np.flatnonzero(strata == s) for s in np.unique(strata)]
        plan = []
        for _ in range(resamples):
            drawn = (rng.integers(0, n_iterations, n_iterations) if len(groups) == 1 else
                     np.concatenate([rng.choice(g, len(g)) for g in groups]))
            plan.append(np.bincount(drawn, minlength=n_iterations))
        return "bootstrap", plan
    return "split-halves", _halves(strata, resamples, rng)


def root_strata(sampler: Any, labels: np.ndarray) -> np.ndarray | None:
    """Per iteration, the cluster of ``labels`` that held its root (None without roots).

    Iterations whose root is unknown share one stratum of their own.

    Examples
    --------
    >>> from tomography.model.synthetic import planted_hierarchy
    >>> m = planted_hierarchy((2,), 3, iterations=4, seed=0)
    >>> sampler = as_sampler(m)
    >>> sites = np.array([0, 0, 0, 1, 1, 1])
    >>> root_strata(sampler, sites).tolist() == [int(sites[m.host_names.index(r)])
    ...                                          for r in m.iterations["root"]]
    True
    """
    roots = getattr(sampler, "roots", None)
    if roots is None:
        return None
    labels = np.asarray(labels)
    return np.where(roots >= 0, labels[np.maximum(roots, 0)], int(labels.max()) + 1)


class IterationSampler(IterationWeights):
    """Resampled analyses of a measurement: its per-iteration weights and ``w_n`` as a graph.

    The data are those of :class:`tomography.model.weights.IterationWeights`; the
    sampler adds the shared graph of ``w_n`` (its igraph form built once) and
    puts a resample in place for the clustering engines.

    Parameters
    ----------
    graph : SharedGraph
        ``w_n`` of the iterations below, with its host order.
    iteration, receiver, sender, blocks, n_iterations
        The observations, as :class:`tomography.model.weights.IterationWeights` takes them.

    Examples
    --------
    >>> from tomography.model.synthetic import planted_partition
    >>> from tomography.model.weights import mean_weights
    >>> m = planted_partition(12, 2, iterations=3, seed=0)
    >>> sampler = IterationSampler.from_measurement(m, SharedGraph(mean_weights(m)))
    >>> bool(abs(sampler.matrix(np.ones(3)) - mean_weights(m)).max() < 1e-9)
    True
    """

    def __init__(self, graph: SharedGraph, iteration: np.ndarray, receiver: np.ndarray,
                 sender: np.ndarray, blocks: np.ndarray, n_iterations: int,
                 roots: np.ndarray | None = None, source: str | None = None) -> None:
        super().__init__(graph.matrix, graph.hosts, iteration, receiver, sender, blocks,
                         n_iterations, roots, source)
        self.graph = graph

    @classmethod
    def of(cls, data: IterationWeights, graph: SharedGraph | None = None
           ) -> "IterationSampler":
        """The sampler of per-iteration weights already mapped to their edges.

        ``graph`` is ``data.weights`` as a :class:`SharedGraph` when one is at
        hand (its igraph form may be built already); made here otherwise.

        Examples
        --------
        >>> from tomography.model.synthetic import planted_partition
        >>> data = IterationWeights.from_measurement(planted_partition(8, 2, iterations=2,
        ...                                                            seed=0))
        >>> IterationSampler.of(data).graph.hosts == data.hosts
        True
        """
        out = cls.__new__(cls)
        out.__dict__.update(data.__dict__)
        out.graph = graph if graph is not None else SharedGraph.checked(data.weights,
                                                                        data.hosts)
        return out

    @classmethod
    @renamed_parameter("n", "iterations")
    def from_measurement(cls, measurement: Any, graph: SharedGraph | None = None,
                         iterations: int | None = None) -> "IterationSampler":
        """The sampler of a broadcast :class:`tomography.model.dataset.Measurement`.

        Parameters
        ----------
        measurement : Measurement
        graph : SharedGraph, optional
            ``w_n`` of its first ``iterations``; built here from the same
            rows when not given (then ``sampler.graph`` is ``w_n``, Eq 4.2,
            as :func:`tomography.model.weights.mean_weights` computes it).
        iterations : int, optional
            The first ``iterations`` iterations (all by default; ``n=``, deprecated).
        """
        data = IterationWeights.from_measurement(
            measurement, iterations, weights=None if graph is None else graph.matrix)
        return cls.of(data, graph)

    def resample(self, multiplicity: Sequence[int] | np.ndarray,
                 engine: str = "igraph") -> sparse.csr_array | None:
        """Put a resample in place: for igraph as the graph's edge attribute ``resample``
        (returns None), for the other engines as a matrix (returned)."""
        if engine == "igraph":
            self.graph.igraph().es["resample"] = self.edge_weights(multiplicity).tolist()
            return None
        return self.matrix(multiplicity)

    def jobs(self, n_jobs: int | None, tasks: int, engine: str = "igraph") -> int:
        """Processes for ``tasks`` resamples (:func:`cluster.parallel.effective_jobs`); the
        igraph graph is built here first, so that forked workers share it."""
        jobs = effective_jobs(n_jobs, tasks, self.n_edges)
        if jobs > 1 and engine == "igraph":
            self.graph.igraph()
        return jobs


def as_sampler(data: Any) -> IterationSampler:
    """``data`` as an :class:`IterationSampler` (itself when it is one).

    The confidence functions (:func:`with_support`, :func:`hierarchy_confidence`,
    :func:`tree_confidence`, :func:`flat_confidence`) take what this takes:
    a broadcast :class:`~tomography.model.dataset.Measurement` (its iterations,
    resampled), an :class:`~tomography.model.interop.EdgeWeights` measured in
    rounds (``from_pandas(..., round=...)``), or any
    :class:`tomography.model.weights.IterationWeights`.

    Raises
    ------
    TomographyError
        For data without at least two repeated measurements to resample.

    Examples
    --------
    >>> from tomography.model.synthetic import planted_partition
    >>> m = planted_partition(8, 2, iterations=2, seed=0)
    >>> sampler = as_sampler(m)
    >>> type(sampler).__name__, as_sampler(sampler) is sampler, sampler.n_iterations
    ('IterationSampler', True, 2)
    """
    if isinstance(data, IterationSampler):
        return data
    if isinstance(data, IterationWeights):
        return IterationSampler.of(data)
    if hasattr(data, "transfers") and hasattr(data, "host_names"):   # a Measurement
        if not data.iteration_ids:
            raise TomographyError("a confidence resamples broadcast iterations; this dataset "
                                  "has none (a probe dataset: resample its repeats with "
                                  "tomography.model.interop.as_weights("
                                  "m.edges(per_iteration=True)))")
        return IterationSampler.from_measurement(data)
    if hasattr(data, "iteration_weights"):   # EdgeWeights
        weights = data.iteration_weights()
        if weights is None:
            raise TomographyError("a confidence resamples repeated measurements: these weights "
                                  "have fewer than two rounds (from_pandas(..., round=COLUMN))")
        return IterationSampler.of(weights)
    raise TomographyError(f"expected a Measurement, EdgeWeights with rounds or IterationWeights "
                          f"to resample, got {type(data).__name__}")


def cluster_scores(labels: np.ndarray, found: np.ndarray) -> np.ndarray:
    """Per cluster of ``labels``, its Jaccard index with the matching cluster of ``found``.

    The match is the cluster of ``found`` sharing more than half of their
    union with it; 0 when there is none.

    Parameters
    ----------
    labels, found : array of int
        Two partitions of the same items (``labels`` numbered ``0 .. k-1``).

    Returns
    -------
    ndarray of float
        One score per cluster of ``labels``.

    Examples
    --------
    >>> cluster_scores(np.array([0, 0, 0, 1, 1, 1]), np.array([5, 5, 5, 5, 7, 7])).tolist()
    [0.75, 0.6666666666666666]
    >>> cluster_scores(np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1])).tolist()
    [0.0, 0.0]
    """
    labels = np.asarray(labels)
    _, found = np.unique(np.asarray(found), return_inverse=True)
    k, f = int(labels.max()) + 1, int(found.max()) + 1
    both = sparse.coo_array((np.ones(len(labels)), (labels, found)), shape=(k, f)).tocsr()
    both.sum_duplicates()
    size_a = np.bincount(labels, minlength=k).astype(float)
    size_b = np.bincount(found, minlength=f).astype(float)
    coo = both.tocoo()
    jaccard = coo.data / (size_a[coo.row] + size_b[coo.col] - coo.data)
    best = np.zeros(k)
    np.maximum.at(best, coo.row, np.where(jaccard > 0.5, jaccard, 0.0))
    return best


@dataclass
class _Options:
    engine: str
    resolution: float


def _find(graph: SharedGraph, options: _Options, seed: int, level: str = "best") -> np.ndarray:
    """Partition the resampled weights (edge attribute ``resample``).

    Leiden optimises the modularity of the resamples (Louvain's ``finest``
    level when that is what the level is): the same objective, several times
    faster on the noisier graphs of resampled iterations (:func:`cluster.louvain.leiden`).
    One Leiden iteration: a second one costs 20 % more time at 4096 hosts
    and changes one decision in 393 of ``benchmarks/confidence_threshold.py``.
    """
    sub = graph.igraph()
    if sub.ecount() == 0 or not any(sub.es["resample"]):
        return np.arange(sub.vcount())
    if level == "finest":
        return multilevel(sub, resolution=options.resolution, seed=seed, level=level,
                          weights="resample")
    return leiden(sub, resolution=options.resolution, seed=seed, weights="resample", iterations=1)


def _partition(matrix: sparse.csr_array, options: _Options, seed: int,
               level: str = "best") -> np.ndarray:
    """Louvain on a resampled matrix (:func:`cluster.louvain.louvain`); a resample in which no
    two hosts exchanged anything leaves every host alone."""
    if matrix.count_nonzero() == np.count_nonzero(matrix.diagonal()):   # no edge: singletons
        return np.arange(matrix.shape[0])
    return louvain(matrix, engine=options.engine, resolution=options.resolution, seed=seed,
                   level=level).labels


@random_state
def hierarchy_confidence(hierarchy: Hierarchy, sampler: Any, *,
                         resamples: int = SEPARATION_RESAMPLES,
                         threshold: float = SUPPORT_THRESHOLD,
                         min_separation: float | None = None, seed: Seed = 0,
                         n_jobs: int | None = None) -> Hierarchy:
    """The hierarchy with a confidence for every level and cluster.

    A level's confidence is the mean of two looks at it: the share of
    resamples of all ``n`` iterations that set it apart
    (:func:`level_separations`), and the same share on resamples of the
    first ``n - 1`` iterations (after two, ``w_1`` alone; after one, 0),
    each cluster cut where all ``n`` cut it
    (:func:`cluster.separation.weakest_cuts`).  A cluster's confidence is
    the same mean for the cluster: the share of resamples that set it apart
    within its level (:func:`cluster.separation.cluster_separations`), now
    and one iteration earlier.  A level is set apart on a resample exactly
    when all its clusters are, so a level is never more sure than its least
    sure cluster.  Both looks are recorded (``params["confidence"]["separated"]``,
    ``["separated_clusters"]``, ``["before"]``).  The resamples keep each
    top-level cluster's share of the roots (:func:`root_strata`): the roots
    were chosen, not drawn, and a broadcast cut at a block quota weighs the
    root's part of the network more, so a resample that lost one part's
    roots would see a skew the measurement did not have.

    Parameters
    ----------
    hierarchy : Hierarchy
        From :func:`cluster.averaged_edge.averaged_edge_hierarchy` on the
        sampler's ``w_n`` (its ``params`` say how each level was made).
    sampler : Measurement, EdgeWeights, IterationSampler or IterationWeights
        The repeated measurements to resample (:func:`as_sampler`).
    resamples : int, default SEPARATION_RESAMPLES
        Resampled separations per level (each a sum over the data, no clustering).
    threshold : float, default SUPPORT_THRESHOLD
        Confidence a level needs to be supported; recorded in
        ``params["confidence"]``.
    min_separation : float, optional
        Separation a resample must reach to set a level apart
        (:func:`level_separations`; by default :func:`resample_separation` of the data).
    seed : int, Generator or None, default 0
        The same seed gives the same result; None draws a fresh one.
    n_jobs : int or None
        Processes judging the levels, one level each at most
        (:func:`cluster.parallel.effective_jobs`); the result does not depend on it.

    Returns
    -------
    Hierarchy
        A copy with ``confidence`` per level and per cluster.

    Examples
    --------
    >>> from tomography.model.synthetic import planted_hierarchy
    >>> from tomography.model.weights import mean_weights
    >>> from cluster.averaged_edge import averaged_edge_hierarchy
    >>> m = planted_hierarchy((2, 3), 16, iterations=6, seed=3)
    >>> g = SharedGraph(mean_weights(m), m.host_names)
    >>> h = averaged_edge_hierarchy(g, m.host_names, seed=0)
    >>> h = hierarchy_confidence(h, IterationSampler.from_measurement(m, g), seed=0)
    >>> [len(level) for level in h.levels], [round(c, 2) for c in h.confidence]
    ([6, 2], [1.0, 1.0])
    >>> min(c.confidence for c in h.levels[0]) >= h.confidence[0]
    True
    """
    sampler = as_sampler(sampler)
    rng, recorded = seed
    if list(sampler.graph.hosts or hierarchy.hosts) != hierarchy.hosts:
        raise TomographyError("the sampler's hosts are not the hierarchy's")
    minimum = resample_separation(sampler) if min_separation is None else min_separation
    labels = [hierarchy.labels(k) for k in range(1, hierarchy.depth + 1)]
    strata = root_strata(sampler, labels[-1])
    method, plan = resample_plan(sampler.n_iterations, resamples, seed=rng, strata=strata)
    back = _one_fewer(sampler.n_iterations, resamples, rng, strata)
    judged, _ = fork_map(lambda level: _shares(sampler, level, plan, minimum, back), labels,
                         effective_jobs(n_jobs, len(labels), sampler.n_edges))
    now = [x for x, _ in judged]
    before = [x.share for _, x in judged]
    before_clusters = [x.clusters for _, x in judged]
    out = Hierarchy(levels=[[replace(c, confidence=float((now[k].clusters[i]
                                                           + before_clusters[k][i]) / 2))
                             for i, c in enumerate(level)]
                            for k, level in enumerate(hierarchy.levels)],
                    params=dict(hierarchy.params), modularity=list(hierarchy.modularity),
                    confidence=[(x.share + b) / 2 for x, b in zip(now, before)],
                    rows=hierarchy.rows)
    out.params["confidence"] = {
        "method": method, "resamples": len(plan), "seed": recorded, "threshold": threshold,
        "strata": None if strata is None else "root's top-level cluster",
        "min_separation": minimum, "iterations": sampler.n_iterations,
        "separations": [x.separation for x in now], "separated": [x.share for x in now],
        "separated_clusters": [x.clusters.tolist() for x in now], "before": before}
    return out


@dataclass
class JudgedLevel:
    """A level as :func:`level_shares` judged it: its labels, the share of resamples that set
    it apart, each cluster's share, and its separation on all the iterations."""
    labels: np.ndarray
    share: float
    clusters: np.ndarray
    separation: float


def _shares(sampler: IterationWeights, labels: np.ndarray, plan: list[np.ndarray],
            minimum: float, back: list[np.ndarray] | None = None
            ) -> tuple[JudgedLevel, JudgedLevel]:
    """One level judged on the resamples of ``plan`` and of ``back``: shares of the level and
    its clusters, each cluster cut at its weakest cut in all the iterations."""
    side = weakest_cuts(sampler.graph, labels)   # checked once, as the sampler was built
    back = back or []
    everything = np.ones(sampler.n_iterations)    # w_n itself, judged first
    per = resampled_cluster_separations(sampler, labels, [everything, *plan, *back], side)
    full = per[0]
    looks = [per[1:len(plan) + 1], per[len(plan) + 1:]]
    out = []
    for look in looks:
        if not len(look) or np.isnan(look).all():   # nothing to resample, or every cluster
            out.append(JudgedLevel(labels, 0.0, np.zeros(per.shape[1]), float("nan")))
            continue                                # one host: nothing to cut, to judge
        apart = np.where(np.isnan(look), np.inf, look) >= minimum
        out.append(JudgedLevel(labels, float(apart.all(axis=1).mean()), apart.mean(axis=0),
                               float(np.nanmin(full))))
    return out[0], out[1]


def _one_fewer(n: int, resamples: int, seed: Seed, strata: np.ndarray | None
               ) -> list[np.ndarray]:
    """Resamples of the first ``n - 1`` of ``n`` iterations (the last one weighted 0), as
    :func:`_plan` draws them; none after one iteration."""
    if n < 2:
        return []
    kept = None if strata is None else np.asarray(strata)[: n - 1]
    return [np.append(m, 0) for m in _plan(n - 1, resamples, seed, kept)]


def level_shares(sampler: Any, labels: Sequence[np.ndarray], *,
                 resamples: int = SEPARATION_RESAMPLES, min_separation: float | None = None,
                 seed: Seed = 0) -> list[JudgedLevel]:
    """Each level and each of its clusters judged on resamples of the iterations.

    A resample sets a cluster apart when its separation within the level
    (:func:`cluster.separation.cluster_separations`) reaches ``min_separation``,
    and the level when it sets all its clusters apart.  A single iteration
    is judged on itself (a share of 0 or 1).

    Returns
    -------
    list of JudgedLevel
        Per level: its labels, the share of resamples that set it apart, each
        cluster's share, its separation on all the iterations.

    Examples
    --------
    >>> from tomography.model.synthetic import planted_hierarchy
    >>> m = planted_hierarchy((2, 2), 8, iterations=4, seed=0)
    >>> leaves = np.repeat(np.arange(4), 8)
    >>> one_site_split = np.repeat([0, 1, 2, 2], 8)    # no level of this network
    >>> [(x.share, x.clusters.round(2).tolist()) for x in level_shares(
    ...     m, [leaves, one_site_split], seed=0)]
    [(1.0, [1.0, 1.0, 1.0, 1.0]), (0.0, [0.0, 0.0, 0.0])]
    """
    sampler = as_sampler(sampler)
    minimum = resample_separation(sampler) if min_separation is None else min_separation
    strata = root_strata(sampler, np.asarray(labels[-1])) if labels else None
    plan = _plan(sampler.n_iterations, resamples, seed, strata)
    return [_shares(sampler, np.asarray(level), plan, minimum)[0] for level in labels]


def _plan(n: int, resamples: int, seed: Seed, strata: np.ndarray | None
          ) -> list[np.ndarray]:
    """The resamples of ``n`` iterations (:func:`resample_plan`); a single iteration is its
    own only resample."""
    if n == 1:
        return [np.ones(1, dtype=np.int64)]
    return resample_plan(n, resamples, seed=seed, strata=strata)[1]


def level_separations(sampler: Any, labels: Sequence[np.ndarray], *,
                      resamples: int = SEPARATION_RESAMPLES,
                      min_separation: float | None = None, seed: Seed = 0
                      ) -> tuple[list[float], list[float]]:
    """Each level's confidence: the share of resamples whose data set its clusters apart.

    A resample sets a level apart when its separation
    (:func:`cluster.separation.separation`: its weakest inside cut over its
    strongest tie, per host pair) reaches ``min_separation``.  Levels are
    judged one by one, on the hosts: no level's confidence depends on
    another level.  :func:`level_shares` gives the clusters' shares too.

    Parameters
    ----------
    sampler : Measurement, EdgeWeights, IterationSampler or IterationWeights
        The repeated measurements to resample (:func:`as_sampler`).
    labels : list of array of int
        Per level, each host's cluster (in the sampler's host order).
    resamples : int, default SEPARATION_RESAMPLES
    min_separation : float, optional
        Separation a resample must reach (by default :func:`resample_separation` of the
        data).
    seed : int, Generator or None, default 0

    Returns
    -------
    confidence : list of float
        Per level, in ``[0, 1]``.
    separation : list of float
        Per level, its separation on all the iterations.

    Examples
    --------
    >>> from tomography.model.synthetic import planted_partition
    >>> m = planted_partition(24, 3, iterations=4, seed=0)
    >>> right = np.array([int(m.labels[h][-1]) for h in m.host_names])
    >>> halves = np.arange(24) % 2                 # a split the data do not show
    >>> conf, sep = level_separations(m, [right, halves], seed=0)
    >>> conf, [round(s, 1) for s in sep]
    ([1.0, 0.0], [3.2, 0.3])
    """
    shares = level_shares(sampler, labels, resamples=resamples, min_separation=min_separation,
                          seed=seed)
    return [x.share for x in shares], [x.separation for x in shares]


def supported_levels(hierarchy: Hierarchy) -> list[int]:
    """The numbers of the levels that reach the support threshold.

    A hierarchy without confidence has every level supported; when no level
    is, the most confident one is returned alone.

    Examples
    --------
    >>> h = Hierarchy.from_partitions(list("abcd"), [[0, 0, 1, 2], [0, 0, 1, 1]])
    >>> h.confidence, h.params["confidence"] = [0.9, 0.4], {"threshold": 0.7}
    >>> supported_levels(h)
    [1]
    """
    if not hierarchy.confidence or hierarchy.threshold is None:
        return list(range(1, hierarchy.depth + 1))
    keep = [k for k in range(1, hierarchy.depth + 1) if hierarchy.supported(k)]
    if keep:
        return keep
    return [max(range(1, hierarchy.depth + 1), key=lambda k: hierarchy.confidence[k - 1])]


def with_support(hierarchy: Hierarchy, sampler: Any, *,
                 resamples: int = DEFAULT_RESAMPLES, all_levels: bool = False,
                 seed: Seed = 0, n_jobs: int | None = None) -> Hierarchy:
    """``hierarchy`` with its confidence, keeping only the supported levels.

    The step ``tomography hierarchy`` takes after building a hierarchy:
    :func:`hierarchy_confidence` (:data:`SEPARATION_RESAMPLES` resampled
    separations of every level: sums over the data, no clustering), then
    :func:`supported_levels` (the others are listed in
    ``params["dropped_levels"]``) unless ``all_levels``.  ``sampler`` is what
    :func:`as_sampler` takes (the dataset itself, in one call); without one
    (None), or with ``resamples=0`` (``--resamples 0``: no confidence), the
    hierarchy is returned as it is.

    Examples
    --------
    >>> from tomography.model.synthetic import planted_hierarchy
    >>> from tomography.model.weights import mean_weights
    >>> from cluster.averaged_edge import averaged_edge_hierarchy
    >>> m = planted_hierarchy((2, 2), 8, iterations=4, seed=0)
    >>> h = with_support(averaged_edge_hierarchy(mean_weights(m), m.host_names), m, seed=0)
    >>> [round(c, 2) for c in h.confidence]
    [1.0, 1.0]
    """
    if sampler is None or resamples == 0:   # as --resamples 0: no confidence
        return hierarchy
    h = hierarchy_confidence(hierarchy, sampler, seed=seed, n_jobs=n_jobs)
    if all_levels:
        return h
    keep = supported_levels(h)
    return h if len(keep) == h.depth else h.select(keep)


@random_state
def flat_confidence(labels: np.ndarray, sampler: Any, *,
                    resamples: int = DEFAULT_RESAMPLES, engine: str = "igraph",
                    resolution: float = 1.0, level: str = "best", seed: Seed = 0,
                    n_jobs: int | None = None) -> tuple[np.ndarray, float, str, int]:
    """Confidence of each cluster of a flat Louvain partition, and of the partition.

    ``n_jobs`` as in :func:`hierarchy_confidence`.

    Returns
    -------
    clusters : ndarray of float
        Per cluster (in label order).
    overall : float
        The partition's: mean NMI with the resampled partitions.
    method : str
    resamples : int

    Examples
    --------
    >>> from tomography.model.synthetic import planted_partition
    >>> from tomography.model.weights import mean_weights
    >>> m = planted_partition(40, 4, iterations=4, seed=0)
    >>> g = SharedGraph(mean_weights(m), m.host_names)
    >>> flat = louvain(g, seed=0)
    >>> per, overall, method, count = flat_confidence(
    ...     flat.labels, IterationSampler.from_measurement(m, g), seed=0)
    >>> per.round(2).tolist(), overall, method, count
    ([1.0, 1.0, 1.0, 1.0], 1.0, 'bootstrap', 4)
    """
    sampler = as_sampler(sampler)
    rng = seed.rng
    method, plan = resample_plan(sampler.n_iterations, resamples, seed=rng)
    options = _Options(engine, resolution)
    labels = np.asarray(labels)
    tasks = [(multiplicity, spawn_seeds(rng, 1)[0]) for multiplicity in plan]

    def one_resample(task: tuple[np.ndarray, int]) -> np.ndarray:
        multiplicity, run_seed = task
        matrix = sampler.resample(multiplicity, engine)
        if matrix is None:
            return _find(sampler.graph, options, run_seed, level)
        return _partition(matrix, options, run_seed, level)

    jobs = sampler.jobs(n_jobs, len(tasks), engine)
    found_all, _ = fork_map(one_resample, tasks, jobs)
    total, agreement = np.zeros(int(labels.max()) + 1), 0.0
    for found in found_all:
        total += cluster_scores(labels, found)
        agreement += nmi(labels, found)
    return total / len(plan), agreement / len(plan), method, len(plan)


@random_state
def tree_confidence(tree: ClusterTree, sampler: Any, *,
                    resamples: int = DEFAULT_RESAMPLES, seed: Seed = 0,
                    n_jobs: int | None = None) -> ClusterTree:
    """The tree with a confidence on every edge and cluster.

    An edge's confidence is the share of resamples in which the maximum
    spanning tree over the same clusters, with the resampled weights, has
    it.  A flat clustering's cluster (:func:`cluster.spanning_tree.cluster_tree`)
    gets that of :func:`flat_confidence`; the clusters of a hierarchy's level
    (:func:`cluster.spanning_tree.hierarchy_tree`) keep the confidence
    :func:`hierarchy_confidence` gave them (none for hosts, level 0).

    Parameters
    ----------
    tree : ClusterTree
        Over the hosts of ``sampler``.
    sampler : Measurement, EdgeWeights or IterationWeights
        The repeated measurements to resample (:func:`as_sampler`): the
        dataset the tree was built from, in one call.
    resamples, seed, n_jobs
        As :func:`hierarchy_confidence`; ``resamples=0`` returns the tree as it is
        (``--resamples 0``).

    Returns
    -------
    ClusterTree

    Examples
    --------
    >>> from tomography.model.synthetic import planted_partition
    >>> from tomography.model.weights import mean_weights
    >>> from cluster.spanning_tree import cluster_tree
    >>> m = planted_partition(30, 3, iterations=4, seed=0)
    >>> t = tree_confidence(cluster_tree(mean_weights(m), m.host_names, seed=0), m, seed=0)
    >>> all(0 <= e.confidence <= 1 for e in t.edges), t.clusters[0].confidence
    (True, 1.0)
    """
    from cluster.spanning_tree import maximum_spanning_tree

    if resamples == 0:   # as --resamples 0: no confidence
        return tree
    sampler = as_sampler(sampler)
    params = tree.params
    hosts = sampler.graph.hosts
    index = {h: i for i, h in enumerate(hosts)}
    labels = np.zeros(len(hosts), dtype=np.int64)
    ids = [c.id for c in tree.clusters]
    for c, cluster in enumerate(tree.clusters):
        labels[[index[h] for h in cluster.hosts]] = c
    rng, recorded = seed
    flat_seed = spawn_seeds(rng, 1)[0]
    method, plan = resample_plan(sampler.n_iterations, resamples, seed=rng)
    per = [c.confidence for c in tree.clusters]  # a hierarchy level's clusters have theirs
    if "hierarchy_level" not in params:  # a flat clustering's: how often Louvain finds them
        per, _, _, _ = flat_confidence(
            labels, sampler, resamples=resamples, engine=params.get("engine", "igraph"),
            resolution=float(params.get("resolution", 1.0)), level=params.get("level", "best"),
            seed=flat_seed, n_jobs=n_jobs)
    found: dict[tuple[str, str], int] = {}
    for multiplicity in plan:
        collapsed, _ = collapse(sampler.matrix(multiplicity), labels,
                                linkage=params.get("linkage", DEFAULT_LINKAGE))
        for i, j, _w in maximum_spanning_tree(collapsed):
            key = tuple(sorted((ids[i], ids[j])))
            found[key] = found.get(key, 0) + 1
    edges = [replace(e, confidence=found.get(tuple(sorted((e.source, e.target))), 0) / len(plan))
             for e in tree.edges]
    clusters = [replace(c, confidence=None if per[i] is None else float(per[i]))
                for i, c in enumerate(tree.clusters)]
    out_params = dict(params)
    out_params["confidence"] = {"method": method, "resamples": len(plan), "seed": recorded,
                                "iterations": sampler.n_iterations}
    return ClusterTree(clusters=clusters, edges=edges, params=out_params)

