"""When to stop measuring: the results have stopped changing.

Iterating broadcasts makes ``w_n`` converge (docs/method.md, Eq 4.2), and
the clusters with it.  :class:`StableHierarchy` is the stop rule of
``tomography measure --until-converged`` and ``tomography evaluate
--until-converged``: after each iteration it builds the hierarchy of ``w_n``
with its confidence, and stops once the levels supported in ``k + 1``
iterations in a row are the same two iterations running; a level whose
support comes and goes is reported as unstable instead of holding the rule
back, while a level whose confidence is climbing towards support holds it
back an iteration or two.  :class:`StablePartition`, the
earlier rule, watches the flat partition only.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Sequence

import numpy as np

from cluster.accuracy import nmi
from cluster.louvain import louvain
from cluster.modularity import canonical_labels
from tomography.model.dataset import Measurement
from tomography.model.deprecation import renamed_parameter
from tomography.model.errors import ParameterError
from tomography.model.stop_rule import (DEFAULT_STABLE, FAINT, FLAT_AFTER, HOLDS, PARTNERS,
                                        RISING, SAME_LEVEL, stop_rule_text)
from tomography.model.units import counted
from tomography.model.weights import mean_weights

__all__ = ["StablePartition", "StableHierarchy", "DEFAULT_STABLE", "SAME_LEVEL", "FLAT_AFTER",
           "FAINT", "PARTNERS", "RISING", "HOLDS", "replay_stop_rule", "dataset_stop_rule",
           "stop_rule_meta", "stop_rule_text"]

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
    >>> from tomography.model.synthetic import planted_partition
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
    """Stop rule: the supported levels of the hierarchy have settled.

    After each iteration the averaged-edge hierarchy of ``w_n`` is built
    with its confidence (:mod:`cluster.confidence`); its supported levels
    are what a user is shown.  A level has **settled** when a level with the
    same partition (NMI at least ``tolerance``: a host or two may still
    move) was supported after each of the ``k`` iterations before as well.
    The rule stops once some level has settled and the settled levels are
    the same as one iteration earlier, or once no level at all comes near
    support for long enough (the network shows no hierarchy: :attr:`flat`).
    Levels that are supported now
    but not settled, a level whose support comes and goes, do not hold the
    rule back: they are reported as unstable (:attr:`unstable`), so a
    hierarchy whose number of levels flips still converges to the levels
    that do not.  :attr:`held_back` says why the rule has not stopped yet.

    Parameters
    ----------
    k : int, default DEFAULT_STABLE
        Iterations before the current one in which a level must have been
        supported to count as settled.
    seed : int, default 0
        One seed for every ``n``, so that hierarchies differ only by data.
    tolerance : float, default SAME_LEVEL
        NMI at which two partitions count as the same level.
    flat_after, faint : int and float, default FLAT_AFTER and FAINT
        The other verdict: when no level, supported or not, has reached a
        confidence of ``faint`` in ``flat_after`` iterations in a row (with a
        confidence), the network shows no hierarchy (one cluster) and the
        rule stops there (:attr:`flat`).
    partners : float or None, default PARTNERS
        "No hierarchy" waits while at least this share of the hosts has the
        same strongest partner in the even and the odd iterations
        (:func:`cluster.partners.steady_partners`): groups of a few hosts
        that no level sets apart yet (None: never wait).
    rising, holds : float and int, default RISING and HOLDS
        Where the rule would stop, an unsupported level whose confidence is
        at least ``rising`` and higher than the same level's one iteration
        before (or new) holds it back one iteration, at most ``holds`` times
        in a run (0: never).
    **options
        Passed to :func:`cluster.averaged_edge.averaged_edge_hierarchy`.

    Attributes
    ----------
    history : list of tuple of ndarray
        The supported levels' canonical labels after each iteration seen.
    levels : list of int
        The number of supported levels after each iteration.
    settled, unstable : list of ndarray
        After the last iteration: the settled levels, and the supported levels
        that have not settled.
    flat : bool
        The rule stopped on "no hierarchy".

    Examples
    --------
    >>> from tomography.model.synthetic import planted_hierarchy
    >>> m = planted_hierarchy((2, 2), 12, iterations=6, seed=0)
    >>> rule = StableHierarchy(k=1)
    >>> [rule.update(m, n) for n in range(1, 7)]
    [False, False, False, True, True, True]
    >>> len(rule.settled), rule.unstable
    (2, [])
    """

    def __init__(self, k: int = DEFAULT_STABLE, *, seed: int = 0,
                 tolerance: float = SAME_LEVEL, flat_after: int = FLAT_AFTER,
                 faint: float = FAINT, partners: float | None = PARTNERS,
                 rising: float = RISING, holds: int = HOLDS, **options) -> None:
        if k < 1:
            raise ParameterError(f"k must be >= 1, got {k}")
        if flat_after < 1 or not 0 <= faint <= 1:
            raise ParameterError(f"flat_after must be >= 1 and faint in [0, 1], got "
                                 f"{flat_after} and {faint}")
        if holds < 0 or not 0 <= rising <= 1:
            raise ParameterError(f"holds must be >= 0 and rising in [0, 1], got {holds} "
                                 f"and {rising}")
        if partners is not None and not 0 <= partners <= 1:
            raise ParameterError(f"partners is a share of the hosts in [0, 1], got {partners}")
        self.flat_after, self.faint, self.partners = flat_after, faint, partners
        self.rising, self.holds, self.held = rising, holds, 0
        if not 0 < tolerance <= 1:
            raise ParameterError(f"tolerance is an NMI in (0, 1], got {tolerance}")
        self.k, self.seed, self.options = k, seed, options
        self.tolerance = tolerance
        self.history: list[tuple[np.ndarray, ...]] = []
        self.levels: list[int] = []
        self.settled: list[np.ndarray] = []
        self.unstable: list[np.ndarray] = []
        self._settled_before: list[np.ndarray] | None = None
        self._measured: list[bool] = []
        self._strongest: list[float] = []
        self._found_before: list[tuple[np.ndarray, float]] = []
        self.flat = False
        self.held_back = "no iteration yet"

    def _same(self, a: np.ndarray, b: np.ndarray) -> bool:
        return len(a) == len(b) and (bool(np.array_equal(a, b))
                                     or nmi(a, b) >= self.tolerance)

    def _among(self, level: np.ndarray, others: Sequence[np.ndarray]) -> bool:
        return any(self._same(level, o) for o in others)

    @renamed_parameter("n", "iterations")
    def update(self, measurement: Measurement, iterations: int | None = None) -> bool:
        """Analyse ``w_n`` of the first ``iterations`` (all by default); true once the
        supported levels have settled."""
        from cluster.averaged_edge import averaged_edge_hierarchy
        from cluster.confidence import IterationSampler, hierarchy_confidence
        from cluster.partners import steady_partners

        sampler = IterationSampler.from_measurement(measurement, iterations=iterations)
        h = averaged_edge_hierarchy(sampler.graph, measurement.host_names, seed=self.seed,
                                    **self.options)
        measured = sampler.n_iterations >= 2
        if measured:
            h = hierarchy_confidence(h, sampler, seed=self.seed)
        reported = tuple(canonical_labels(h.labels(k)) for k in range(1, h.depth + 1)
                         if not measured or h.supported(k))
        found = [(h.labels(k), h.confidence[k - 1]) for k in range(1, h.depth + 1)
                 if measured and h.confidence]
        return self.observe(reported, measured,
                            strongest=max(h.confidence) if measured and h.confidence else 0.0,
                            found=found, partners=lambda: steady_partners(sampler))

    def observe(self, reported: Sequence[np.ndarray], measured: bool = True, *,
                strongest: float | None = None,
                found: Sequence[tuple[np.ndarray, float]] = (),
                partners: float | Callable[[], float] | None = None) -> bool:
        """Take the levels supported after one more iteration; true once they have settled.

        :meth:`update` calls it with the supported levels of ``w_n``; given
        partitions directly, it is the rule on its own.

        Parameters
        ----------
        reported : sequence of array of int
            The supported levels, as host labels.
        measured : bool, default True
            Whether they carry a confidence (False after one iteration).
        strongest : float, optional
            The highest confidence of any level, supported or not (for the
            verdict "no hierarchy"; by default 1 when a level is reported, else 0).
        found : sequence of (array of int, float), optional
            Every level found, supported or not, with its confidence: an
            unsupported one rising towards support holds the rule back
            (``rising``, ``holds``).
        partners : float or callable, optional
            The share of steady partners of these iterations
            (:func:`cluster.partners.steady_partners`), or a function giving
            it, called only when the rule would say "no hierarchy"; without
            it the rule does not wait for them.

        Examples
        --------
        A level whose support comes and goes does not hold the rule back:

        >>> a, b = np.array([0, 0, 1, 1]), np.array([0, 1, 2, 3])
        >>> rule = StableHierarchy(k=1)
        >>> [rule.observe(levels) for levels in ([a], [a, b], [a], [a, b])]
        [False, False, True, True]
        >>> len(rule.settled), len(rule.unstable)
        (1, 1)

        A level climbing towards support holds it back (here once):

        >>> rule = StableHierarchy(k=1, holds=1)
        >>> [rule.observe([a], found=[(a, 1.0), (b, c)]) for c in (0.2, 0.4, 0.6, 0.7)]
        [False, False, False, True]
        >>> rule.held
        1
        """
        reported = tuple(canonical_labels(np.asarray(level)) for level in reported)
        found = [(canonical_labels(np.asarray(level)), float(c)) for level, c in found]
        found_before, self._found_before = self._found_before, found
        self.history.append(reported)
        self._measured.append(measured)
        self._strongest.append((1.0 if reported else 0.0) if strongest is None
                               else float(strongest))
        self.levels.append(len(reported))
        self.flat = False
        window = list(zip(self.history[-self.k - 1:], self._measured[-self.k - 1:]))
        if not measured:
            self.held_back = "one iteration: no confidence yet"
            self.settled, self.unstable = [], []
            return False
        recent = [c for c, m in zip(self._strongest[-self.flat_after:],
                                    self._measured[-self.flat_after:]) if m]
        if len(recent) == self.flat_after and max(recent) < self.faint:
            steady = partners() if callable(partners) else partners
            if self.partners is None or steady is None or not steady >= self.partners:
                self.settled, self.unstable, self.flat = [], list(reported), True
                self.held_back = ""
                return True
            self.settled, self.unstable = [], list(reported)
            self.held_back = (f"no level near support, but {steady:.0%} of the hosts have the "
                              "same strongest partner in the even and the odd iterations: "
                              "groups of a few hosts not set apart yet")
            return False
        if len(window) < self.k + 1 or not all(m for _, m in window):
            self.held_back = (f"a level must be supported in {self.k + 1} iterations in a "
                              f"row; {counted(sum(self._measured), 'iteration')} with a "
                              "confidence so far")
            self.settled, self.unstable = [], list(reported)
            return False
        earlier = [levels for levels, _ in window[:-1]]
        self.settled = [level for level in reported
                        if all(self._among(level, levels) for levels in earlier)]
        self.unstable = [level for level in reported if not self._among(level, self.settled)]
        before, self._settled_before = self._settled_before, self.settled
        if not self.settled:
            self.held_back = ("no level supported yet" if not reported else
                              f"no level supported in {self.k + 1} iterations in a row yet")
            return False
        if before is None or len(before) != len(self.settled) or not all(
                self._among(level, before) for level in self.settled):
            self.held_back = (f"{counted(len(self.settled), 'level')} settled; waiting one "
                              f"iteration to see {'it' if len(self.settled) == 1 else 'them'} "
                              "stay")
            return False
        climbing = self._climbing(reported, found, found_before)
        if climbing is not None and self.held < self.holds:
            self.held += 1
            level, c = climbing
            self.held_back = (f"a level of {counted(len(np.unique(level)), 'cluster')} is at "
                              f"confidence {c:.2f} and rising; waiting one iteration more "
                              f"({self.held} of {self.holds})")
            return False
        self.held_back = ""
        return True

    def _climbing(self, reported: Sequence[np.ndarray], found: list[tuple[np.ndarray, float]],
                  before: list[tuple[np.ndarray, float]]) -> tuple[np.ndarray, float] | None:
        """The most confident unsupported level at ``rising`` or more whose confidence rose
        since the iteration before (or that is new), if any."""
        rising = [(level, c) for level, c in found
                  if c >= self.rising and not self._among(level, reported)
                  and all(c > c0 for level0, c0 in before if self._same(level, level0))]
        return max(rising, key=lambda item: item[1]) if rising else None


def stop_rule_meta(k: int | None = None, *, seed: int = 0,
                   source: str = "bittorrent") -> dict[str, Any]:
    """What ``meta.json`` records of the stop rule a run uses (its ``stop_rule`` key),
    with the support rule it judges levels by on data measured by ``source`` (the
    dataset's method: real swarms by default).

    Examples
    --------
    >>> stop_rule_meta(seed=1)["k"], stop_rule_meta(1)["k"]
    (2, 1)
    >>> stop_rule_meta()["min_separation"], stop_rule_meta(source="simulated")["min_separation"]
    (1.25, 1.4)
    """
    from cluster.confidence import SUPPORT_THRESHOLD, resample_separation

    return {"option": "--until-converged", "k": DEFAULT_STABLE if k is None else k,
            "seed": seed, "flat_after": FLAT_AFTER, "faint": FAINT, "partners": PARTNERS,
            "rising": RISING, "holds": HOLDS, "threshold": SUPPORT_THRESHOLD,
            "min_separation": resample_separation(source)}


def dataset_stop_rule(output: str | os.PathLike[str], k: int | None = None, *, seed: int = 0,
                      say: Callable[[str], None] | None = None) -> Callable[[int], bool]:
    """The stop rule of ``--until-converged`` over a dataset being written: ``stop(iteration)``.

    After each iteration it reads the dataset in ``output`` and says whether
    the supported levels of the hierarchy have settled
    (:class:`StableHierarchy`); a resumed dataset's earlier iterations are
    caught up first.  :func:`measure.coordinator.run_broadcasts` takes it as
    ``stop=``.

    Parameters
    ----------
    output : path
        The dataset directory the broadcasts write.
    k : int, optional
        Iterations before the current one in which a level must have been
        supported (default :data:`DEFAULT_STABLE`).
    seed : int, default 0
        The analysis's seed.
    say : callable, optional
        Called with one line after each iteration: the verdict, or what holds it back.

    Examples
    --------
    >>> import tempfile
    >>> from tomography.model.dataset import write_measurement
    >>> from tomography.model.synthetic import planted_hierarchy
    >>> d = tempfile.mkdtemp() + "/run"
    >>> write_measurement(planted_hierarchy((2, 2), 12, iterations=4, seed=0), d)
    >>> stop = dataset_stop_rule(d, 1, say=print)
    >>> stop(3)
    stop rule after 4 iterations: converged, 2 levels settled
    True
    """
    from tomography.model.dataset import read_measurement

    rule = StableHierarchy(DEFAULT_STABLE if k is None else k, seed=seed)

    def stop(iteration: int) -> bool:
        m = read_measurement(output)
        while len(rule.history) < len(m.iteration_ids) - 1:  # resumed: catch up
            rule.update(m, len(rule.history) + 1)
        done = rule.update(m)
        if say is not None:
            say(f"stop rule after {counted(len(m.iteration_ids), 'iteration')}: "
                + ("converged: no hierarchy (no level came near support in "
                   f"{rule.flat_after} iterations): one cluster; racks of a few hosts or sites "
                   "behind slow links can stay hidden this long (--resume -n N without "
                   "--until-converged measures on)" if done and rule.flat else
                   f"converged, {counted(len(rule.settled), 'level')} settled"
                   + (f", {counted(len(rule.unstable), 'unstable level')} (supported now, "
                      "not in every recent iteration)" if rule.unstable else "")
                   if done else f"not yet: {rule.held_back}"))
        return done
    return stop


def replay_stop_rule(measurement: Measurement, k: int | None = None, *,
                     iterations: int | None = None, seed: int = 0, **options) -> dict:
    """What :class:`StableHierarchy` would have decided after each iteration of a dataset.

    Parameters
    ----------
    measurement : Measurement
    k : int, optional
        Iterations before the current one in which a level must have been
        supported to have settled (default :data:`DEFAULT_STABLE`).
    iterations : int, optional
        Replay the first ``iterations`` only.
    seed : int, default 0
    **options
        Passed to :class:`StableHierarchy` (``linkage``, ``start``, ...).

    Returns
    -------
    dict
        ``{"k", "stops_at": n or None, "steps": [{"n", "levels", "measured",
        "settled", "unstable", "stop", "held_back"}, ...]}``: per iteration the
        number of supported levels (of levels found, where no confidence is
        ``measured`` yet), of settled levels and of unstable ones.

    Examples
    --------
    >>> from tomography.model.synthetic import planted_hierarchy
    >>> m = planted_hierarchy((2, 2), 12, iterations=4, seed=0)
    >>> replay_stop_rule(m, 1)["stops_at"]
    4
    """
    from tomography.model.weights import rounds

    rule = StableHierarchy(DEFAULT_STABLE if k is None else k, seed=seed, **options)
    steps, stops_at = [], None
    last = rounds(measurement) if iterations is None else min(iterations, rounds(measurement))
    for n in range(1, last + 1):
        done = rule.update(measurement, n)
        steps.append({"n": n, "levels": rule.levels[-1], "measured": rule._measured[-1],
                      "settled": len(rule.settled),
                      "unstable": len(rule.unstable), "flat": rule.flat, "stop": done,
                      "held_back": rule.held_back})
        if done and stops_at is None:
            stops_at = n
    return {"k": rule.k, "stops_at": stops_at, "steps": steps}
