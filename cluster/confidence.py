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
clusters apart (:func:`level_separations`): each cluster's weakest inside
cut at least :data:`RESAMPLE_SEPARATION` times stronger
than its strongest tie to another cluster
(:mod:`cluster.separation`), judged on the hosts and on nothing else, so a
spurious level beside a real one does not change the real one's verdict;
averaged with the same share for that level one iteration earlier (in the
hierarchy of ``w_(n-1)``; 0 where it was not found then): a level the data
set apart twice in a row is more often right than one they set apart once.
A level is supported when its confidence reaches :data:`SUPPORT_THRESHOLD`.
Both numbers were chosen on half of a family of 120 random networks and
checked on the other half (``benchmarks/calibration.py``).

Whether each level is *found again* is measured too (``params["confidence"]
["found_again"]``), in the way the level was made (``params["origins"]`` of
:func:`cluster.averaged_edge.averaged_edge_hierarchy`): Louvain on the
resampled hosts' graph for a level Louvain found, Louvain inside each split
cluster for a refined level, and for a merged level the collapse of the level
below partitioned again on independent split halves (at least
:data:`MERGE_RESAMPLES`).  The clusters' confidences come from those
re-found partitions.  A cluster's score on one resample is the
Jaccard index (in hosts) of the cluster with the resampled cluster that
matches it, the one that shares more than half of their union (at most one
can), and 0 when none does; its confidence is the mean score (the bootstrap
stability of Hennig, "Cluster-wise assessment of cluster stability",
Comput. Stat. Data Anal. 52, 2007, with a strict match).  A tree edge's confidence is the share of
resamples whose maximum spanning tree over the same clusters has it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Sequence

import numpy as np
from scipy import sparse

from cluster.accuracy import nmi
from cluster.adjacency import SharedGraph, igraph_graph
from cluster.averaged_edge import (DEFAULT_LINKAGE, averaged_edge_hierarchy, collapse, linked,
                                   with_self_loops)
from cluster.louvain import leiden, louvain, multilevel
from cluster.parallel import effective_jobs, fork_map
from cluster.separation import GroupSums, resampled_separations, separation, weakest_cuts
from tomography.errors import ParameterError, TomographyError
from tomography.hierarchy import ClusterTree, Hierarchy
from tomography.deprecation import renamed_parameter
from tomography.seeding import Seed, check_seed, spawn_seeds
from tomography.weights import IterationWeights

__all__ = ["IterationSampler", "as_sampler", "resample_plan", "hierarchy_confidence",
           "flat_confidence", "tree_confidence", "cluster_scores", "supported_levels", "SUPPORT_THRESHOLD",
           "DEFAULT_RESAMPLES", "MERGE_RESAMPLES", "BOOTSTRAP_MIN", "with_support",
           "level_separations", "previous_levels", "SEPARATION_RESAMPLES", "SAME_LEVEL"]

SUPPORT_THRESHOLD = 0.5
"""Confidence a level needs to be reported.  Chosen with :data:`RESAMPLE_SEPARATION` on the
training half of the random-network family (``benchmarks/calibration.py``): of the pairs whose
supported levels were at least 95.5 % right, the one supporting the most right levels.  On the
held-out half 97.7 % of the supported levels were right and 90.0 % of the right levels
supported.  A level at 0.5 was either set apart by every resample now, or by half of them
now and half of them one iteration earlier."""

RESAMPLE_SEPARATION = 1.3
"""Separation (:mod:`cluster.separation`) a resample must reach to set a level apart: what
the ground truth of the family asks of all the data (:data:`cluster.separation.MIN_SEPARATION`).
Chosen with :data:`SUPPORT_THRESHOLD` on the training half of the random-network family
(``benchmarks/calibration.py``)."""

SAME_LEVEL = 0.95
"""NMI at which a level of ``w_(n-1)`` is the same level (:func:`hierarchy_confidence`; the
stop rule's tolerance too)."""
SEPARATION_RESAMPLES = 64
"""Resamples of each level's separation (each costs a sum over the data, no clustering)."""

DEFAULT_RESAMPLES = 4
"""Resampled analyses per confidence (an even number: split halves come in pairs)."""

MERGE_RESAMPLES = 64
"""Fewest resamples for merged levels: a merge of a few clusters is all or nothing,
so telling a real one (found every time) from a tie (found one time in three)
takes more resamples than a level of hosts; and they cost little."""

BOOTSTRAP_MIN = 4
"""Fewest iterations resampled by the bootstrap; below, split halves."""


def _halves(n_iterations: int, resamples: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Split halves: ``resamples / 2`` random cuts of the iterations into two halves."""
    plan = []
    for _ in range((resamples + 1) // 2):
        first = np.zeros(n_iterations, dtype=np.int64)
        first[rng.permutation(n_iterations)[: n_iterations // 2]] = 1
        plan += [first, 1 - first]
    return plan


def resample_plan(n_iterations: int, resamples: int = DEFAULT_RESAMPLES, *,
                  seed: Seed = 0) -> tuple[str, list[np.ndarray]]:
    """How often each iteration enters each resample.

    Parameters
    ----------
    n_iterations : int
        Iterations in the data (at least 2).
    resamples : int, default DEFAULT_RESAMPLES
        Number of resampled data sets (rounded up to even for split halves).
    seed : int, Generator or None, default 0
        The same seed gives the same result; None draws a fresh one.

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
    """
    if n_iterations < 2:
        raise TomographyError("one iteration cannot be resampled: measure at least 2 for a "
                              "confidence")
    if resamples < 1:
        raise ParameterError(f"resamples must be >= 1, got {resamples}")
    rng, _ = check_seed(seed)
    if n_iterations >= BOOTSTRAP_MIN:
        draws = [rng.integers(0, n_iterations, n_iterations) for _ in range(resamples)]
        return "bootstrap", [np.bincount(d, minlength=n_iterations) for d in draws]
    return "split-halves", _halves(n_iterations, resamples, rng)


class IterationSampler(IterationWeights):
    """Resampled analyses of a measurement: its per-iteration weights and ``w_n`` as a graph.

    The data are those of :class:`tomography.weights.IterationWeights`; the
    sampler adds the shared graph of ``w_n`` (its igraph form built once) and
    puts a resample in place for the clustering engines.

    Parameters
    ----------
    graph : SharedGraph
        ``w_n`` of the iterations below, with its host order.
    iteration, receiver, sender, blocks, n_iterations
        The observations, as :class:`tomography.weights.IterationWeights` takes them.

    Examples
    --------
    >>> from tomography.synthetic import planted_partition
    >>> from tomography.weights import mean_weights
    >>> m = planted_partition(12, 2, iterations=3, seed=0)
    >>> sampler = IterationSampler.from_measurement(m, SharedGraph(mean_weights(m)))
    >>> bool(abs(sampler.matrix(np.ones(3)) - mean_weights(m)).max() < 1e-9)
    True
    """

    def __init__(self, graph: SharedGraph, iteration: np.ndarray, receiver: np.ndarray,
                 sender: np.ndarray, blocks: np.ndarray, n_iterations: int) -> None:
        super().__init__(graph.matrix, graph.hosts, iteration, receiver, sender, blocks,
                         n_iterations)
        self.graph = graph

    @classmethod
    def of(cls, data: IterationWeights, graph: SharedGraph | None = None
           ) -> "IterationSampler":
        """The sampler of per-iteration weights already mapped to their edges.

        ``graph`` is ``data.weights`` as a :class:`SharedGraph` when one is at
        hand (its igraph form may be built already); made here otherwise.

        Examples
        --------
        >>> from tomography.synthetic import planted_partition
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
        """The sampler of a broadcast :class:`tomography.dataset.Measurement`.

        Parameters
        ----------
        measurement : Measurement
        graph : SharedGraph, optional
            ``w_n`` of its first ``iterations``; built here from the same
            rows when not given (then ``sampler.graph`` is ``w_n``, Eq 4.2,
            as :func:`tomography.weights.mean_weights` computes it).
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
    a broadcast :class:`~tomography.dataset.Measurement` (its iterations,
    resampled), an :class:`~tomography.interop.EdgeWeights` measured in
    rounds (``from_pandas(..., round=...)``), or any
    :class:`tomography.weights.IterationWeights`.

    Raises
    ------
    TomographyError
        For data without at least two repeated measurements to resample.

    Examples
    --------
    >>> from tomography.synthetic import planted_partition
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
                                  "tomography.interop.as_weights(m.edges(per_iteration=True)))")
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
    linkage: str
    loops: float
    engine: str
    resolution: float


def _find(graph: SharedGraph, hosts: np.ndarray | None, options: _Options, seed: int,
          level: str = "best") -> np.ndarray:
    """Partition the resampled weights (edge attribute ``resample``), of all hosts or of ``hosts``.

    Leiden optimises the modularity of the resamples (Louvain's ``finest``
    level when that is what the level is): the same objective, several times
    faster on the noisier graphs of resampled iterations (:func:`cluster.louvain.leiden`).
    One Leiden iteration: a second one costs 20 % more time at 4096 hosts
    and changes one decision in 393 of ``benchmarks/confidence_threshold.py``.
    """
    g = graph.igraph()
    sub = g if hosts is None else g.induced_subgraph(hosts.tolist())
    if sub.ecount() == 0 or not any(sub.es["resample"]):
        return np.arange(sub.vcount())
    if level == "finest":
        return multilevel(sub, resolution=options.resolution, seed=seed, level=level,
                          weights="resample")
    return leiden(sub, resolution=options.resolution, seed=seed, weights="resample", iterations=1)


def _partition(matrix: sparse.csr_array, options: _Options, seed: int,
               level: str = "best") -> np.ndarray:
    """Louvain on a resampled matrix built here (already checked: no validation again)."""
    if matrix.count_nonzero() == np.count_nonzero(matrix.diagonal()):   # no edge: singletons
        return np.arange(matrix.shape[0])
    if options.engine != "igraph":
        return louvain(matrix, engine=options.engine, resolution=options.resolution, seed=seed,
                       level=level).labels
    run_seed = spawn_seeds(check_seed(seed)[0], 1)[0]   # the run louvain(seed=seed) makes
    return multilevel(igraph_graph(matrix), resolution=options.resolution, seed=run_seed,
                      level=level)


def hierarchy_confidence(hierarchy: Hierarchy, sampler: Any, *,
                         resamples: int = DEFAULT_RESAMPLES, threshold: float = SUPPORT_THRESHOLD,
                         min_separation: float | None = None, seed: Seed = 0,
                         n_jobs: int | None = None,
                         previous: Sequence[tuple[np.ndarray, float]] | None = None
                         ) -> Hierarchy:
    """The hierarchy with a confidence for every level and cluster.

    A level's confidence is the mean of two looks at it: the share of
    resamples of all ``n`` iterations that set it apart
    (:func:`level_separations`), and the same share for the level found with
    one iteration fewer (the hierarchy of ``w_(n-1)``, built with this one's
    options; NMI at least :data:`SAME_LEVEL`), 0 when ``w_(n-1)`` has no
    such level or is a single iteration.  Both are recorded
    (``params["confidence"]["separated"]``, ``["before"]``).

    Parameters
    ----------
    hierarchy : Hierarchy
        From :func:`cluster.averaged_edge.averaged_edge_hierarchy` on the
        sampler's ``w_n`` (its ``params`` say how each level was made).
    sampler : Measurement, EdgeWeights, IterationSampler or IterationWeights
        The repeated measurements to resample (:func:`as_sampler`).
    resamples : int, default DEFAULT_RESAMPLES
        Resamples for the levels found on the hosts; merged levels, whose
        resampling costs little, get at least :data:`MERGE_RESAMPLES`.
    threshold : float, default SUPPORT_THRESHOLD
        Confidence a level needs to be supported; recorded in
        ``params["confidence"]``.
    min_separation : float, optional
        Separation a resample must reach to set a level apart
        (:func:`level_separations`; default :data:`RESAMPLE_SEPARATION`).
    seed : int, Generator or None, default 0
        The same seed gives the same result; None draws a fresh one.
    n_jobs : int or None
        Processes for the resamples (:func:`cluster.parallel.effective_jobs`:
        by default every core on graphs of
        :data:`~cluster.parallel.PARALLEL_MIN_EDGES` edges or more); the
        result does not depend on it.
    previous : sequence of (array of int, float), optional
        The levels of ``w_(n-1)`` with their share of separated resamples
        (:func:`previous_levels`: the levels of the hierarchy of one iteration
        fewer with its ``params["confidence"]["separated"]``); made here when
        not given.

    Returns
    -------
    Hierarchy
        A copy with ``confidence`` per level and per cluster.

    Examples
    --------
    >>> from tomography.synthetic import planted_hierarchy
    >>> from tomography.weights import mean_weights
    >>> from cluster.averaged_edge import averaged_edge_hierarchy
    >>> m = planted_hierarchy((2, 3), 16, iterations=6, seed=3)
    >>> g = SharedGraph(mean_weights(m), m.host_names)
    >>> h = averaged_edge_hierarchy(g, m.host_names, seed=0)
    >>> h = hierarchy_confidence(h, IterationSampler.from_measurement(m, g), seed=0)
    >>> [len(level) for level in h.levels], [round(c, 2) for c in h.confidence]
    ([6, 2], [1.0, 1.0])
    """
    sampler = as_sampler(sampler)
    params = hierarchy.params
    depth = hierarchy.depth
    origins = params.get("origins") or ["louvain"] + ["merged"] * (depth - 1)
    options = _Options(params.get("linkage", DEFAULT_LINKAGE), float(params.get("loops", 0.5)),
                       params.get("engine", "igraph"), float(params.get("resolution", 1.0)))
    step_level = "finest" if params.get("start") == "finest" else "best"
    rng, recorded = check_seed(seed)
    if list(sampler.graph.hosts or hierarchy.hosts) != hierarchy.hosts:
        raise TomographyError("the sampler's hosts are not the hierarchy's")
    labels = [hierarchy.labels(k) for k in range(1, depth + 1)]
    clusters = [np.zeros(len(level)) for level in hierarchy.levels]
    agreement = np.zeros(depth)
    counts = np.zeros(depth, dtype=np.int64)
    on_hosts = [k for k in range(depth) if origins[k] != "merged"]
    method, plan = resample_plan(sampler.n_iterations, resamples, seed=rng)
    if not on_hosts:
        plan = []
    tasks = [(multiplicity, spawn_seeds(rng, depth)) for multiplicity in plan]

    def on_hosts_resample(task: tuple[np.ndarray, list[int]]) -> list[tuple[np.ndarray, float]]:
        """The host-level levels found again on one resample: (labels, agreement) each."""
        multiplicity, seeds = task
        matrix = sampler.resample(multiplicity, options.engine)
        out = []
        for k in on_hosts:
            if origins[k] == "louvain":
                found = (_find(sampler.graph, None, options, seeds[k], step_level)
                         if matrix is None else _partition(matrix, options, seeds[k], step_level))
                agree = nmi(labels[k], found)
            else:   # refined: split again each cluster of the level above that it splits
                found, agree, weight = labels[k].copy(), 0.0, 0
                for parent in np.unique(labels[k + 1]):
                    idx = np.flatnonzero(labels[k + 1] == parent)
                    if len(np.unique(labels[k][idx])) < 2:
                        continue
                    part = (_find(sampler.graph, idx, options, seeds[k]) if matrix is None
                            else _partition(matrix[idx][:, idx], options, seeds[k]))
                    found[idx] = part + int(found.max()) + 1
                    agree += len(idx) * nmi(labels[k][idx], part)
                    weight += len(idx)
                agree /= max(weight, 1)
            out.append((found, float(agree)))
        return out

    merged = [k for k in range(depth) if origins[k] == "merged"]
    # Independent halves, compared with each other: a merge decided by a near
    # tie on the full data would look stable on resamples that share most of it.
    merge_plan = (_halves(sampler.n_iterations, max(resamples, MERGE_RESAMPLES), rng)
                  if merged else [])
    merge_seeds = [spawn_seeds(rng, depth) for _ in merge_plan[::2]]

    def merged_resamples() -> list[tuple[np.ndarray, np.ndarray, float]]:
        """Per pair of halves and merged level: the two partitions and whether they agree."""
        if not merged:
            return []
        sums = GroupSums(sampler, labels[merged[0] - 1])
        out = []
        for first, second, seeds in zip(merge_plan[::2], merge_plan[1::2], merge_seeds):
            found_in = []
            for multiplicity in (first, second):
                current = linked(*sums.totals(multiplicity), sums.sizes,
                                 linkage=options.linkage)
                sizes = sums.sizes
                found_k = {}
                for k in merged:
                    step = _partition(with_self_loops(current, options.loops), options,
                                      seeds[k], step_level)
                    found_k[k] = step[labels[k - 1]]
                    current, sizes = collapse(current, _step_labels(labels[k - 1], labels[k]),
                                              sizes, linkage=options.linkage)
                found_in.append(found_k)
            for k in merged:   # a merge is found again or not: the share of identical halves
                out.append((found_in[0][k], found_in[1][k],
                            float(nmi(found_in[0][k], found_in[1][k]) > 1 - 1e-9)))
        return out

    jobs = sampler.jobs(n_jobs, len(tasks), options.engine)
    host_results, merge_results = fork_map(on_hosts_resample, tasks, jobs,
                                           meanwhile=merged_resamples)
    for per_level in host_results:
        for k, (found, agree) in zip(on_hosts, per_level):
            clusters[k] += cluster_scores(labels[k], found)
            agreement[k] += agree
            counts[k] += 1
    for i, (first, second, same) in enumerate(merge_results):
        k = merged[i % len(merged)]
        clusters[k] += (cluster_scores(labels[k], first) + cluster_scores(labels[k], second)) / 2
        agreement[k] += same
        counts[k] += 1
    counts = np.maximum(counts, 1)
    min_separation = RESAMPLE_SEPARATION if min_separation is None else min_separation
    separated, full = level_separations(sampler, labels, seed=rng,
                                        min_separation=min_separation)
    if previous is None:
        previous = previous_levels(hierarchy, sampler, min_separation=min_separation,
                                   seed=rng)
    before = [max((share for found, share in previous
                   if len(found) == len(level) and nmi(found, level) >= SAME_LEVEL),
                  default=0.0) for level in labels]
    out = Hierarchy(levels=[[replace(c, confidence=float(clusters[k][i] / counts[k]))
                             for i, c in enumerate(level)]
                            for k, level in enumerate(hierarchy.levels)],
                    params=dict(params), modularity=list(hierarchy.modularity),
                    confidence=[(a + b) / 2 for a, b in zip(separated, before)],
                    rows=hierarchy.rows)
    out.params["confidence"] = {
        "method": method, "resamples": len(plan) if on_hosts else 0,
        "merge_resamples": len(merge_plan), "separation_resamples": SEPARATION_RESAMPLES,
        "seed": recorded, "threshold": threshold, "min_separation": min_separation,
        "iterations": sampler.n_iterations, "separations": full,
        "separated": separated, "before": before,
        "found_again": [float(a) for a in agreement / counts]}
    return out


def previous_levels(hierarchy: Hierarchy, sampler: Any, *, min_separation: float | None = None,
                    seed: Seed = 0) -> list[tuple[np.ndarray, float]]:
    """The levels of ``w_(n-1)``, each with its share of separated resamples.

    The hierarchy of the first ``n - 1`` iterations is built with the
    options recorded in ``hierarchy.params``; each of its levels is judged
    by :func:`level_separations`.  Empty when ``n - 1`` is a single
    iteration (it cannot be resampled).

    Examples
    --------
    >>> from tomography.synthetic import planted_hierarchy
    >>> from cluster.averaged_edge import averaged_edge_hierarchy
    >>> m = planted_hierarchy((2, 3), 16, iterations=4, seed=3)
    >>> sampler = IterationSampler.from_measurement(m)
    >>> h = averaged_edge_hierarchy(sampler.graph, m.host_names, seed=0)
    >>> [(len(set(found)), round(share, 2)) for found, share in previous_levels(h, sampler)]
    [(6, 0.84), (2, 1.0)]
    """
    sampler = as_sampler(sampler)
    if sampler.n_iterations < 3:
        return []
    fewer = IterationSampler.of(sampler.first(sampler.n_iterations - 1))
    p = hierarchy.params
    rebuilt = {key: p[key] for key in ("linkage", "start", "loops", "engine", "resolution",
                                       "restarts", "shuffles", "z", "reassign", "seed")
               if key in p}
    h = averaged_edge_hierarchy(fewer.graph, hierarchy.hosts, **rebuilt)
    labels = [h.labels(k) for k in range(1, h.depth + 1)]
    shares, _ = level_separations(fewer, labels, min_separation=min_separation, seed=seed)
    return list(zip(labels, shares))


def level_separations(sampler: Any, labels: Sequence[np.ndarray], *,
                      resamples: int = SEPARATION_RESAMPLES,
                      min_separation: float | None = None, seed: Seed = 0
                      ) -> tuple[list[float], list[float]]:
    """Each level's confidence: the share of resamples whose data set its clusters apart.

    A resample sets a level apart when its separation
    (:func:`cluster.separation.separation`: each cluster's weakest inside cut
    over its strongest outside tie, per host pair) reaches
    :data:`cluster.separation.MIN_SEPARATION`.  Levels are judged one by
    one, on the hosts: no level's confidence depends on another level.

    Parameters
    ----------
    sampler : Measurement, EdgeWeights, IterationSampler or IterationWeights
        The repeated measurements to resample (:func:`as_sampler`).
    labels : list of array of int
        Per level, each host's cluster (in the sampler's host order).
    resamples : int, default SEPARATION_RESAMPLES
    min_separation : float, optional
        Separation a resample must reach (default :data:`RESAMPLE_SEPARATION`).
    seed : int, Generator or None, default 0

    Returns
    -------
    confidence : list of float
        Per level, in ``[0, 1]``.
    separation : list of float
        Per level, its separation on all the iterations.

    Examples
    --------
    >>> from tomography.synthetic import planted_partition
    >>> m = planted_partition(24, 3, iterations=4, seed=0)
    >>> right = np.array([int(m.labels[h][-1]) for h in m.host_names])
    >>> halves = np.arange(24) % 2                 # a split the data do not show
    >>> conf, sep = level_separations(m, [right, halves], seed=0)
    >>> conf, [round(s, 1) for s in sep]
    ([1.0, 0.0], [3.2, 0.3])
    """
    sampler = as_sampler(sampler)
    minimum = RESAMPLE_SEPARATION if min_separation is None else min_separation
    _, plan = resample_plan(sampler.n_iterations, resamples, seed=seed)
    confidence, full = [], []
    for level in labels:
        side = weakest_cuts(sampler.graph, level)
        confidence.append(float(np.mean(resampled_separations(sampler, level, plan, side)
                                        >= minimum)))
        full.append(separation(sampler.graph, level, side))
    return confidence, full


def _step_labels(lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """The cluster of the upper level of each cluster of the lower level."""
    step = np.zeros(int(lower.max()) + 1, dtype=np.int64)
    step[lower] = upper
    return step


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
    :func:`hierarchy_confidence` on ``resamples`` resamples of the
    sampler's iterations, then :func:`supported_levels` (the others are
    listed in ``params["dropped_levels"]``) unless ``all_levels``.
    ``sampler`` is what :func:`as_sampler` takes (the dataset itself, in one
    call); without one (None), or with ``resamples=0`` (``--resamples 0``), the
    hierarchy is returned as it is.

    Examples
    --------
    >>> from tomography.synthetic import planted_hierarchy
    >>> from tomography.weights import mean_weights
    >>> from cluster.averaged_edge import averaged_edge_hierarchy
    >>> m = planted_hierarchy((2, 2), 8, iterations=4, seed=0)
    >>> h = with_support(averaged_edge_hierarchy(mean_weights(m), m.host_names), m, seed=0)
    >>> [round(c, 2) for c in h.confidence]
    [1.0, 1.0]
    """
    if sampler is None or resamples == 0:   # as --resamples 0: no confidence
        return hierarchy
    h = hierarchy_confidence(hierarchy, sampler, resamples=resamples, seed=seed,
                             n_jobs=n_jobs)
    if all_levels:
        return h
    keep = supported_levels(h)
    return h if len(keep) == h.depth else h.select(keep)


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
    >>> from tomography.synthetic import planted_partition
    >>> from tomography.weights import mean_weights
    >>> m = planted_partition(40, 4, iterations=4, seed=0)
    >>> g = SharedGraph(mean_weights(m), m.host_names)
    >>> flat = louvain(g, seed=0)
    >>> per, overall, method, count = flat_confidence(
    ...     flat.labels, IterationSampler.from_measurement(m, g), seed=0)
    >>> per.round(2).tolist(), overall, method, count
    ([1.0, 1.0, 1.0, 1.0], 1.0, 'bootstrap', 4)
    """
    sampler = as_sampler(sampler)
    rng, _ = check_seed(seed)
    method, plan = resample_plan(sampler.n_iterations, resamples, seed=rng)
    options = _Options(DEFAULT_LINKAGE, 0.5, engine, resolution)   # no collapse here
    labels = np.asarray(labels)
    tasks = [(multiplicity, spawn_seeds(rng, 1)[0]) for multiplicity in plan]

    def one_resample(task: tuple[np.ndarray, int]) -> np.ndarray:
        multiplicity, run_seed = task
        matrix = sampler.resample(multiplicity, engine)
        if matrix is None:
            return _find(sampler.graph, None, options, run_seed, level)
        return _partition(matrix, options, run_seed, level)

    jobs = sampler.jobs(n_jobs, len(tasks), engine)
    found_all, _ = fork_map(one_resample, tasks, jobs)
    total, agreement = np.zeros(int(labels.max()) + 1), 0.0
    for found in found_all:
        total += cluster_scores(labels, found)
        agreement += nmi(labels, found)
    return total / len(plan), agreement / len(plan), method, len(plan)


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
    >>> from tomography.synthetic import planted_partition
    >>> from tomography.weights import mean_weights
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
    rng, recorded = check_seed(seed)
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

