"""When to stop measuring: the results have stopped changing.

Iterating broadcasts makes ``w_n`` converge (docs/method.md, Eq 4.2), and
the clusters with it.  :class:`StableHierarchy` is the stop rule of
``tomography measure --until-converged`` and ``tomography evaluate
--until-converged``: after each iteration it builds the hierarchy of ``w_n``
with its confidence, and stops once every supported level has kept its
partition for ``k`` consecutive iterations.  :class:`StablePartition`, the
earlier rule, watches the flat partition only.
"""

from __future__ import annotations

import numpy as np

from cluster.louvain import louvain
from cluster.modularity import canonical_labels
from tomography.dataset import Measurement
from tomography.deprecation import renamed_parameter
from tomography.errors import ParameterError
from tomography.weights import mean_weights

__all__ = ["StablePartition", "StableHierarchy", "DEFAULT_STABLE", "replay_stop_rule"]

# k = 3, the smallest without a premature stop on 9 simulated reference
# scenarios x 2 seeds (benchmarks/stop_rule.py, numbers in benchmarks/RESULTS.md):
# k = 1 and k = 2 stopped four-sites on a partition that later changed; k = 3
# stopped every other run on its final partition, after 6.2 iterations on average.
DEFAULT_STABLE = 3


class StablePartition:
    """Stop rule: the flat Louvain partition of ``w_n`` unchanged for ``k`` iterations.

    Parameters
    ----------
    k : int, default DEFAULT_STABLE
        Consecutive iterations without a change that count as converged.
    engine : str, default "igraph"
    seed : int, default 0
        One Louvain seed for every ``n``, so that partitions differ only by data.

    Attributes
    ----------
    history : list of ndarray
        The canonical flat labels after each iteration seen.

    Examples
    --------
    >>> from tomography.synthetic import planted_partition
    >>> m = planted_partition(24, 3, iterations=5, seed=0)
    >>> rule = StablePartition(k=2)
    >>> [rule.update(m, n) for n in range(1, 6)]
    [False, False, True, True, True]
    >>> rule.stable_for
    4
    """

    def __init__(self, k: int = DEFAULT_STABLE, *, engine: str = "igraph", seed: int = 0) -> None:
        if k < 1:
            raise ParameterError(f"k must be >= 1, got {k}")
        self.k, self.engine, self.seed = k, engine, seed
        self.history: list[np.ndarray] = []

    @property
    def stable_for(self) -> int:
        """Iterations since the partition last changed."""
        run = 0
        for older, newer in zip(self.history[-2::-1], self.history[::-1]):
            if not np.array_equal(older, newer):
                break
            run += 1
        return run

    @renamed_parameter("n", "iterations")
    def update(self, measurement: Measurement, iterations: int | None = None) -> bool:
        """Cluster ``w_n`` of the first ``iterations`` (all by default); true once stable for
        ``k`` iterations."""
        flat = louvain(mean_weights(measurement, iterations), engine=self.engine,
                       seed=self.seed)
        self.history.append(canonical_labels(flat.labels))
        return self.stable_for >= self.k


class StableHierarchy:
    """Stop rule: every reported level of the hierarchy unchanged for ``k`` iterations.

    After each iteration the averaged-edge hierarchy of ``w_n`` is built with
    its confidence (:mod:`cluster.confidence`); the reported levels are the
    supported ones.  The rule stops once the reported levels, every one of
    them, have kept the same partition for ``k`` consecutive iterations
    (``k + 1`` equal hierarchies in a row).  A level that is not yet
    supported, or an upper level that still changes, holds it back:
    :attr:`held_back` says which.

    Parameters
    ----------
    k : int, default DEFAULT_STABLE
    seed : int, default 0
        One seed for every ``n``, so that hierarchies differ only by data.
    resamples : int, default 4
        Resamples of each confidence.
    **options
        Passed to :func:`cluster.averaged_edge.averaged_edge_hierarchy`.

    Examples
    --------
    >>> from tomography.synthetic import planted_hierarchy
    >>> m = planted_hierarchy((2, 2), 12, iterations=6, seed=0)
    >>> rule = StableHierarchy(k=2)
    >>> [rule.update(m, n) for n in range(1, 7)]
    [False, False, True, True, True, True]
    >>> rule.levels[-1]
    2
    """

    def __init__(self, k: int = DEFAULT_STABLE, *, seed: int = 0, resamples: int = 4,
                 **options) -> None:
        if k < 1:
            raise ParameterError(f"k must be >= 1, got {k}")
        self.k, self.seed, self.resamples, self.options = k, seed, resamples, options
        self.history: list[tuple[np.ndarray, ...]] = []
        self.levels: list[int] = []
        self.held_back = "no iteration yet"

    @property
    def stable_for(self) -> int:
        """Iterations since a reported level last changed."""
        run = 0
        for older, newer in zip(self.history[-2::-1], self.history[::-1]):
            if len(older) != len(newer) or any(not np.array_equal(a, b)
                                               for a, b in zip(older, newer)):
                break
            run += 1
        return run

    @renamed_parameter("n", "iterations")
    def update(self, measurement: Measurement, iterations: int | None = None) -> bool:
        """Analyse ``w_n`` of the first ``iterations`` (all by default); true once stable for
        ``k`` iterations."""
        from cluster.averaged_edge import averaged_edge_hierarchy
        from cluster.confidence import IterationSampler, with_support

        sampler = IterationSampler.from_measurement(measurement, iterations=iterations)
        h = averaged_edge_hierarchy(sampler.graph, measurement.host_names, seed=self.seed,
                                    **self.options)
        if sampler.n_iterations >= 2:
            h = with_support(h, sampler, resamples=self.resamples, seed=self.seed)
        reported = tuple(canonical_labels(h.labels(k)) for k in range(1, h.depth + 1))
        previous = self.history[-1] if self.history else None
        self.history.append(reported)
        self.levels.append(h.depth)
        if sampler.n_iterations < 2:
            self.held_back = "one iteration: no confidence yet"
            return False
        if previous is not None and len(previous) != len(reported):
            self.held_back = f"the number of supported levels changed ({len(previous)} -> " \
                             f"{len(reported)})"
        elif previous is not None:
            changed = [k + 1 for k, (a, b) in enumerate(zip(previous, reported))
                       if not np.array_equal(a, b)]
            self.held_back = (f"level {changed[-1]} changed" if changed else
                              f"stable for {self.stable_for} of {self.k} iterations")
        stop = self.stable_for >= self.k
        if stop:
            self.held_back = ""
        return stop


def replay_stop_rule(measurement: Measurement, k: int | None = None, *,
                     iterations: int | None = None, seed: int = 0, **options) -> dict:
    """What :class:`StableHierarchy` would have decided after each iteration of a dataset.

    Parameters
    ----------
    measurement : Measurement
    k : int, optional
        Iterations every supported level must stay unchanged (default
        :data:`DEFAULT_STABLE`).
    iterations : int, optional
        Replay the first ``iterations`` only.
    seed : int, default 0
    **options
        Passed to :class:`StableHierarchy` (``linkage``, ``start``, ...).

    Returns
    -------
    dict
        ``{"k", "stops_at": n or None, "steps": [{"n", "levels", "stop",
        "held_back"}, ...]}``.

    Examples
    --------
    >>> from tomography.synthetic import planted_hierarchy
    >>> m = planted_hierarchy((2, 2), 12, iterations=4, seed=0)
    >>> replay_stop_rule(m, 2)["stops_at"]
    3
    """
    from tomography.weights import rounds

    rule = StableHierarchy(DEFAULT_STABLE if k is None else k, seed=seed, **options)
    steps, stops_at = [], None
    last = rounds(measurement) if iterations is None else min(iterations, rounds(measurement))
    for n in range(1, last + 1):
        done = rule.update(measurement, n)
        steps.append({"n": n, "levels": rule.levels[-1], "stop": done,
                      "held_back": rule.held_back})
        if done and stops_at is None:
            stops_at = n
    return {"k": rule.k, "stops_at": stops_at, "steps": steps}
