"""The analysis, once: from a dataset to clusters, hierarchy, tree and accuracy.

:func:`analyze` is the one place where the steps of the method are put
together; every command (``cluster``, ``hierarchy``, ``tree``, ``evaluate``,
``export``, ``plot``), the demo, the notebooks and the benchmarks call it.
It reads the dataset, takes ``w_n`` of the first ``iterations`` iterations
(Eq 4.2), and returns an :class:`Analysis` whose parts are computed when
first asked for, each with its confidence when the iterations can be
resampled:

* :attr:`Analysis.flat`: Louvain's bandwidth clusters (``tomography cluster``);
* :attr:`Analysis.hierarchy`: the averaged-edge hierarchy (Eq 5.4/5.5), each
  level's confidence, the unsupported levels left out (``tomography hierarchy``);
* :attr:`Analysis.tree`: the maximum spanning tree of one level's clusters
  (``tomography tree``);
* :attr:`Analysis.accuracy`, :meth:`Analysis.convergence` and
  :meth:`Analysis.stop_rule`: NMI per level, per iteration, and when the stop
  rule would have stopped, against a ground truth (``tomography evaluate``);
* :attr:`Analysis.notes`: what a user should know about the data (a probe
  dataset's weights, incomplete iterations, no confidence from one iteration).

The parts do not depend on the order in which they are asked for: each uses
``seed`` itself.  This module stands on top of the layers (data model,
algorithms, views); nothing below imports it.
"""

from __future__ import annotations

import inspect
import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from tomography.model.errors import DatasetError, ParameterError, TomographyError
from tomography.model.options import check_options
from tomography.model.seeding import random_state, spawn_seeds
from tomography.model.units import WEIGHT_UNITS, counted

if TYPE_CHECKING:
    import pandas as pd

    from cluster.adjacency import SharedGraph
    from cluster.confidence import IterationSampler
    from cluster.louvain import FlatClustering
    from tomography.model.dataset import Measurement
    from tomography.model.hierarchy import ClusterTree, Hierarchy
    from tomography.model.topology import Topology

__all__ = ["analyze", "Analysis", "FlatResult", "refuse_nothing_exchanged"]


@dataclass(frozen=True)
class FlatResult:
    """Louvain's flat clustering with the confidence of each cluster.

    Attributes
    ----------
    clustering : FlatClustering
        Labels in host order, modularity, parameters.
    confidence : list of float or None
        Per cluster (in label order), the mean Jaccard index with the
        clusters found again on resamples; None without resamples.
    overall : float or None
        The partition's mean NMI with the resampled partitions.
    method : str or None
        ``"bootstrap"`` or ``"split-halves"``.
    resamples : int
        How many resamples (0 without).
    """

    clustering: "FlatClustering"
    confidence: list[float] | None = None
    overall: float | None = None
    method: str | None = None
    resamples: int = 0

    def __repr__(self) -> str:
        """One line whatever the size.

        Examples
        --------
        >>> from tomography.model.synthetic import planted_partition
        >>> analyze(planted_partition(8, 2, iterations=3, seed=0), resamples=0).flat
        FlatResult(FlatClustering(8 hosts in 2 clusters of 4, modularity 0.23, engine igraph, seed 0), no confidence)
        """
        from tomography.model.display import span

        if self.confidence is None:
            return f"FlatResult({self.clustering!r}, no confidence)"
        return (f"FlatResult({self.clustering!r}, confidence {span(self.confidence)}, "
                f"overall {self.overall:.2f} ({self.method}, {self.resamples} resamples))")

    def to_frame(self) -> "pd.DataFrame":
        """One row per host: ``host, cluster, confidence`` (its cluster's; NaN without)."""
        frame = self.clustering.to_frame()
        confidence = self.confidence or []
        frame["confidence"] = [confidence[c] if c < len(confidence) else float("nan")
                               for c in frame["cluster"]]
        return frame

    def _repr_html_(self) -> str:
        from tomography.model.display import html_view

        return html_view(repr(self), [], self.to_frame())


@dataclass(repr=False)
class Analysis:
    """The analysis of one dataset with one set of options (see :func:`analyze`).

    Attributes
    ----------
    measurement : Measurement
    options : dict
        The options :func:`analyze` was given, ``linkage`` resolved.
    graph : SharedGraph
        ``w_n`` of the first ``iterations`` iterations (a probe dataset: the
        measured bandwidths), in sorted host order.
    sampler : IterationSampler or None
        The iterations to resample for a confidence; None when there is none
        (a probe dataset, one iteration, ``resamples=0``; :attr:`notes` says why).
    notes : list of str
        What the user should know about the data and the options.
    """

    measurement: "Measurement"
    options: dict[str, Any]
    graph: "SharedGraph"
    sampler: "IterationSampler | None"
    notes: list[str] = field(default_factory=list)
    truth_source: Any = None

    def __repr__(self) -> str:
        """One line: the data, the options that differ from the defaults, what is computed.

        Examples
        --------
        >>> from tomography.model.synthetic import planted_partition
        >>> a = analyze(planted_partition(8, 2, iterations=3, seed=0), seed=1)
        >>> a
        Analysis(8 hosts, 3 iterations (synthetic); seed=1; computed: nothing yet)
        >>> _ = a.hierarchy; a
        Analysis(8 hosts, 3 iterations (synthetic); seed=1; computed: hierarchy)
        """
        m = self.measurement
        data = (f"{len(self.hosts)} hosts, "
                + (counted(self.sampler.n_iterations if self.sampler else
                           len(m.iteration_ids[:self.options["iterations"]]), "iteration")
                   if m.iteration_ids else "probes")
                + f" ({m.meta.get('method', '?')})")
        defaults = {name: p.default for name, p in inspect.signature(analyze).parameters.items()}
        defaults["linkage"] = "sum" if is_probe_dataset(m) else "mean"   # as analyze resolves it
        changed = ", ".join(f"{k}={v!r}" for k, v in self.options.items()
                            if k in defaults and v != defaults[k])
        done = [k for k in ("flat", "hierarchy", "tree", "accuracy") if k in self.__dict__]
        return (f"Analysis({data}{'; ' + changed if changed else ''}; "
                f"computed: {', '.join(done) or 'nothing yet'})")

    def _repr_html_(self) -> str:
        from tomography.model.display import html_view

        m = self.measurement
        facts = [("data", ", ".join(m._facts())), ("weights", self.weight_unit)]
        facts += [(name, repr(self.__dict__[name])) for name in ("flat", "hierarchy", "tree")
                  if name in self.__dict__]
        facts += [("note", note) for note in self.notes]
        return html_view(repr(self), facts,
                         self.__dict__.get("accuracy") if "accuracy" in self.__dict__ else None)

    @property
    def hosts(self) -> list[str]:
        """The hosts, in the order of the rows of :attr:`graph`."""
        return self.measurement.host_names

    @property
    def weight_unit(self) -> str:
        """What a weight of :attr:`graph` is: blocks per iteration, or Mbit/s for probes."""
        return WEIGHT_UNITS["probe" if is_probe_dataset(self.measurement) else "broadcast"]

    def _resamples(self) -> int:
        from cluster.confidence import DEFAULT_RESAMPLES

        return self.options["resamples"] or DEFAULT_RESAMPLES

    @cached_property
    def flat(self) -> FlatResult:
        """Louvain's bandwidth clusters of ``w_n``, with their confidence."""
        from cluster.confidence import flat_confidence
        from cluster.louvain import louvain

        o = self.options
        found = louvain(self.graph, engine=o["engine"], seed=o["seed"], restarts=o["restarts"],
                        resolution=o["resolution"], level=o["flat_level"])
        if self.sampler is None:
            return FlatResult(found)
        per, overall, method, count = flat_confidence(
            found.labels, self.sampler, resamples=self._resamples(), engine=o["engine"],
            resolution=o["resolution"], level=o["flat_level"], seed=o["seed"],
            n_jobs=o["n_jobs"])
        return FlatResult(found, [float(c) for c in per], float(overall), method, count)

    @cached_property
    def hierarchy(self) -> "Hierarchy":
        """The averaged-edge hierarchy with each level's confidence; without
        ``all_levels``, the unsupported levels are left out (listed in
        ``params["dropped_levels"]``)."""
        from cluster.averaged_edge import averaged_edge_hierarchy
        from cluster.confidence import with_support

        o = self.options
        h = averaged_edge_hierarchy(self.graph, self.hosts, linkage=o["linkage"],
                                    start=o["start"], loops=o["loops"], engine=o["engine"],
                                    resolution=o["resolution"], restarts=o["restarts"],
                                    seed=o["seed"], n_jobs=o["n_jobs"])
        if self.sampler is not None:
            h = with_support(h, self.sampler, resamples=self._resamples(),
                             all_levels=o["all_levels"], seed=o["seed"], n_jobs=o["n_jobs"])
        h.params.update(iterations=o["iterations"], weight_unit=self.weight_unit)
        return h

    @cached_property
    def tree(self) -> "ClusterTree":
        """The maximum spanning tree of the clusters of level ``tree_level`` of
        :attr:`hierarchy` (default: Louvain's best partition; 0: the hosts), with
        the confidence of every edge."""
        from cluster.confidence import tree_confidence
        from cluster.spanning_tree import hierarchy_tree

        o = self.options
        t = hierarchy_tree(self.graph, self.hierarchy, o["tree_level"], hosts=self.hosts,
                           linkage=o["linkage"])
        if self.sampler is not None:
            t = tree_confidence(t, self.sampler, resamples=self._resamples(), seed=o["seed"],
                                n_jobs=o["n_jobs"])
        t.params.update(iterations=o["iterations"], weight_unit=self.weight_unit)
        return t

    @cached_property
    def truth(self) -> dict[str, str]:
        """The ground truth (host to label path) that :func:`analyze` was given, checked
        to label every host; ``{}`` when none was given."""
        from tomography.model.truth_labels import as_truth

        source = self.truth_source
        if source is None:
            return {}
        labels = as_truth(source, self.measurement)
        if not labels:
            raise TomographyError("no ground truth: hosts.csv has no labels; give a truth "
                                  "file, a CSV with columns host,label (--truth FILE; "
                                  "truth=FILE from Python)")
        missing = [h for h in self.hosts if h not in labels]
        if missing:
            raise TomographyError(f"the ground truth has no label for host {missing[0]!r} "
                                  f"({len(missing)} of {len(self.hosts)} hosts unlabelled)")
        return dict(labels)

    @cached_property
    def observability(self) -> dict[str, Any]:
        """Which truth levels the broadcasts show: judged on the data themselves.

        A truth level is observable when the weights of all the iterations set
        its clusters apart (:func:`cluster.separation.separation` at least
        :data:`cluster.separation.MIN_SEPARATION`); otherwise the finest
        coarsening of it that they do set apart
        (:func:`cluster.separation.separated_coarsening`) is what a result can be
        scored against (``nmi_observable``).

        Returns
        -------
        dict
            ``{"min_separation": ..., "separations": {depth: separation},
            "hidden": [(depth, clusters, shown clusters), ...], "levels":
            [(observable, nmi_observable), ...]}`` (``levels`` per row of
            :attr:`accuracy`).
        """
        import numpy as np

        from cluster.accuracy import nmi
        from cluster.separation import MIN_SEPARATION, separated_coarsening, separation
        from tomography.model.truth_labels import labels_at_depth

        truth, h = self.truth, self.hierarchy
        out: dict[str, Any] = {"min_separation": MIN_SEPARATION, "separations": {},
                               "hidden": [], "levels": []}
        seen_at: dict[int, list[Any]] = {}
        for row in self._scores.itertuples():
            depth = int(row.truth_depth)
            if depth not in seen_at:
                cut = labels_at_depth(truth, depth, self.hosts)
                codes = np.unique(cut, return_inverse=True)[1]
                out["separations"][depth] = (separation(self.graph, codes)
                                             if codes.max() > 0 else float("nan"))
                seen_at[depth] = separated_coarsening(self.graph, cut)
            seen = seen_at[depth]
            found = len(set(seen))
            out["levels"].append((found == row.truth_clusters,
                                  nmi(seen, h.labels(row.level, self.hosts))))
            if found != row.truth_clusters and depth not in [d for d, _, _ in out["hidden"]]:
                out["hidden"].append((depth, int(row.truth_clusters), found))
        return out

    @cached_property
    def _scores(self) -> "pd.DataFrame":
        """:func:`cluster.accuracy.hierarchy_nmi` of :attr:`hierarchy` against :attr:`truth`."""
        from cluster.accuracy import hierarchy_nmi

        if not self.truth:
            raise TomographyError(_NO_TRUTH)
        return hierarchy_nmi(self.hierarchy, self.truth)

    @cached_property
    def accuracy(self) -> "pd.DataFrame":
        """NMI of every level of :attr:`hierarchy` against the truth
        (:func:`cluster.accuracy.hierarchy_nmi`), with ``truth_separation``,
        ``observable`` and ``nmi_observable`` (:attr:`observability`), and each level's
        ``confidence`` and ``supported`` when it has one."""
        h, levels = self.hierarchy, self._scores.copy()
        seen = self.observability
        levels["truth_separation"] = [seen["separations"][d] for d in levels["truth_depth"]]
        levels["observable"] = [o for o, _ in seen["levels"]]
        levels["nmi_observable"] = [s for _, s in seen["levels"]]
        if h.confidence:
            levels["confidence"] = h.confidence
            levels["supported"] = [h.supported(k) for k in levels["level"]]
        return levels

    def convergence(self, *, progress: bool = False) -> "pd.DataFrame":
        """NMI after each number of iterations ``1 .. iterations`` (Figs 5.13, 5.21;
        :func:`cluster.accuracy.convergence` with these options)."""
        from cluster.accuracy import convergence

        o = self.options
        if not self.truth:
            raise TomographyError(_NO_TRUTH)
        return convergence(self.measurement, self.truth, iterations=o["iterations"],
                           engine=o["engine"], seed=o["seed"], linkage=o["linkage"],
                           start=o["start"], loops=o["loops"], resolution=o["resolution"],
                           restarts=o["restarts"], progress=progress, n_jobs=o["n_jobs"])

    def stop_rule(self, k: int | None = None) -> dict[str, Any]:
        """What ``measure --until-converged K`` would have decided after each iteration
        (:func:`cluster.stability.replay_stop_rule` with these options).

        ``k``: iterations every supported level must stay unchanged (default 3,
        :data:`cluster.stability.DEFAULT_STABLE`)."""
        from cluster.stability import replay_stop_rule

        o = self.options
        return replay_stop_rule(self.measurement, k, iterations=o["iterations"], seed=o["seed"],
                                linkage=o["linkage"], start=o["start"], loops=o["loops"],
                                engine=o["engine"], resolution=o["resolution"],
                                restarts=o["restarts"])


_NO_TRUTH = ("no ground truth to score against: give analyze(truth='labels') for the labels "
             "of hosts.csv (what `tomography evaluate` and `report` use by default), a dict "
             "host -> label, or a CSV file host,label")


def is_probe_dataset(measurement: "Measurement") -> bool:
    """True for a probe mesh's dataset (pairwise bandwidths, no broadcasts)."""
    return not measurement.iteration_ids and measurement.probes is not None


def refuse_nothing_exchanged(m: "Measurement", where: Path | None) -> None:
    """Refuse a dataset where no two hosts exchanged anything: nothing to cluster.

    ``where`` (the dataset directory the measurement was read from) names the file.

    Examples
    --------
    >>> from tomography.model.synthetic import planted_partition
    >>> m = planted_partition(4, 2, iterations=1, seed=0)
    >>> m.transfers["blocks"] = 0
    >>> refuse_nothing_exchanged(m, Path("run"))
    Traceback (most recent call last):
    ...
    tomography.model.errors.DatasetError: run/transfers.csv, field 'blocks': every block count is 0 (in all 1 iterations): no two hosts exchanged a block, so there is nothing to cluster
    """
    from tomography.model.weights import tcp_probes

    # any(), not a sum: true whatever the counts add up to (no 64-bit sum to wrap around)
    if m.iteration_ids and not (m.transfers["blocks"].to_numpy() > 0).any():
        raise DatasetError(f"every block count is 0 (in all {len(m.iteration_ids)} "
                           "iterations): no two hosts exchanged a block, so there is nothing "
                           "to cluster",
                           path=None if where is None else where / "transfers.csv",
                           field="blocks")
    if is_probe_dataset(m) and not (tcp_probes(m.probes)["bits_per_second"] > 0).any():
        udp = len(m.probes) - len(tcp_probes(m.probes))
        raise DatasetError("every TCP bandwidth is 0 or missing: nothing to cluster"
                           + (f" ({udp} UDP tests are kept apart: a UDP rate is the rate "
                              "asked for, not the path's)" if udp else ""),
                           path=None if where is None else where / "probes.csv",
                           field="bits_per_second")


@random_state
def analyze(data: "Measurement | str | os.PathLike[str]", *, iterations: int | None = None,
            engine: Literal["igraph", "louvain"] = "igraph", seed: int = 0, restarts: int = 1,
            resolution: float = 1.0, resamples: int | None = None, n_jobs: int | None = None,
            linkage: Literal["thesis", "mean", "sum"] | None = None,
            start: Literal["refined", "best", "finest"] = "refined", loops: float = 0.5,
            all_levels: bool = False, tree_level: int | None = None,
            flat_level: Literal["best", "finest"] = "best",
            truth: "dict[str, str] | str | os.PathLike[str] | None" = None,
            topology: "str | os.PathLike[str] | Topology | None" = None,
            host_connections: int | None = None) -> Analysis:
    """Analyse a measurement: the one pipeline every command, notebook and benchmark calls.

    Parameters
    ----------
    data : Measurement, or path of a dataset directory
    iterations : int, optional
        ``w_n`` over the first ``iterations`` iterations (all by default).
    engine : {"igraph", "louvain"}, default "igraph"
        Louvain implementation.
    seed : int, Generator or None, default 0
        One seed for every random step (recorded in the results' params);
        None or a Generator give one integer, drawn once, that every part uses.
    restarts : int, default 1
        Louvain runs; the best modularity is kept.
    resolution : float, default 1.0
        Modularity resolution.
    resamples : int, optional
        Resampled analyses for every confidence (default 4; 0: no confidence).
    n_jobs : int, optional
        Processes for the independent analyses; the result is the same for any.
    linkage : {"mean", "thesis", "sum"}, optional
        How collapsed clusters are weighted (default: mean for broadcasts,
        sum for probe datasets, whose bandwidths add up).
    start : {"refined", "best", "finest"}, default "refined"
        The hierarchy's first level.
    loops : float, default 0.5
        Self-loop of a collapsed cluster, as a share of its strongest tie.
    all_levels : bool, default False
        Keep the unsupported levels of the hierarchy (marked by their confidence).
    tree_level : int, optional
        The hierarchy level whose clusters the tree joins (default: Louvain's
        best partition; 0: the hosts).
    flat_level : {"best", "finest"}, default "best"
        Louvain dendrogram level of :attr:`Analysis.flat`.
    truth : mapping, Measurement, "labels" or path, optional
        The ground truth for :attr:`Analysis.accuracy`: host to label path
        (a mapping or pandas Series), a dataset (its labels), ``"labels"`` for
        the analysed dataset's own labels, or a CSV file ``host,label``; the
        same forms as every ``truth=`` of the toolkit
        (:func:`tomography.model.truth_labels.as_truth`).
    topology, host_connections
        Deprecated, ignored: which truth levels the broadcasts show is judged
        on the data (:attr:`Analysis.observability`), not on a model of the
        topology.

    Returns
    -------
    Analysis

    Raises
    ------
    ParameterError
        An option out of range or not one of its choices (before any work).
    TomographyError
        An unreadable or empty dataset; a truth that does not label every host
        (when :attr:`Analysis.truth` is first used).

    Examples
    --------
    >>> from tomography.model.synthetic import planted_hierarchy
    >>> m = planted_hierarchy((2, 3), 8, iterations=4, seed=0)
    >>> a = analyze(m, truth="labels")
    >>> a.flat.clustering.n_clusters, [len(level) for level in a.hierarchy.levels]
    (3, [6, 2])
    >>> a.accuracy["nmi"].round(3).tolist(), len(a.tree.edges)
    ([1.0, 1.0], 5)
    """
    from cluster.adjacency import SharedGraph
    from cluster.averaged_edge import DEFAULT_LINKAGE
    from cluster.confidence import IterationSampler
    from tomography.model.dataset import read_measurement
    from tomography.model.weights import mean_weights

    check_options(iterations=iterations, engine=engine, restarts=restarts, resolution=resolution,
                  resamples=resamples, linkage=linkage, start=start, loops=loops,
                  tree_level=tree_level, flat_level=flat_level)
    # the one integer every part uses: a Generator's first draw when one was given
    seed = seed.recorded if seed.recorded is not None else spawn_seeds(seed.rng, 1)[0]
    if not hasattr(data, "host_names") and not isinstance(data, (str, os.PathLike)):
        raise ParameterError(f"analyze() takes a Measurement or a dataset directory, got "
                             f"{type(data).__name__}; for a weight matrix or a graph call the "
                             "building blocks (cluster.louvain, cluster.averaged_edge_hierarchy, "
                             "cluster.hierarchy_tree)")
    where = None if hasattr(data, "host_names") else Path(data)
    m = read_measurement(where) if where is not None else data
    refuse_nothing_exchanged(m, where)
    options = {"iterations": iterations, "engine": engine, "seed": seed, "restarts": restarts,
               "resolution": resolution, "resamples": resamples, "n_jobs": n_jobs,
               "linkage": linkage, "start": start, "loops": loops, "all_levels": all_levels,
               "tree_level": tree_level, "flat_level": flat_level}
    if topology is not None or host_connections is not None:
        import warnings

        warnings.warn("analyze(topology=, host_connections=) is ignored: which truth levels "
                      "the broadcasts show is judged on the data (Analysis.observability)",
                      FutureWarning, stacklevel=2)
    if truth is not None and not isinstance(truth, (str, os.PathLike)):
        from tomography.model.truth_labels import as_truth

        truth = as_truth(truth)   # refused now, not at first use, when it is no truth
    extra = {"truth_source": truth}
    notes: list[str] = []
    if is_probe_dataset(m):
        options["linkage"] = linkage or "sum"
        graph = SharedGraph(mean_weights(m, iterations), m.host_names)
        notes.append(f"{m.meta.get('method', 'probe')} dataset: the edge weight is the "
                     "measured bandwidth in Mbit/s (median over repeats, mean of the two "
                     f"directions); clusters are combined by {options['linkage']} (--linkage)")
        return Analysis(m, options, graph, None, notes, **extra)
    if iterations is not None and not 1 <= iterations <= len(m.iteration_ids):
        mean_weights(m, iterations)    # the error every function gives for this number
    if "complete" in m.iterations and not m.iterations["complete"].all():
        bad = int((~m.iterations["complete"].astype(bool)).sum())
        notes.append(f"{bad} of {counted(len(m.iterations), 'iteration')} "
                     f"{'is' if bad == 1 else 'are'} incomplete (a time limit or a lost peer); "
                     "their counts are in w_n (tomography info lists them)")
    options["linkage"] = linkage or DEFAULT_LINKAGE
    sampler = IterationSampler.from_measurement(m, iterations=iterations)
    if resamples == 0:
        return Analysis(m, options, sampler.graph, None, notes, **extra)
    if sampler.n_iterations < 2:
        notes.append("one iteration cannot be resampled: no confidence (measure at least 2)")
        return Analysis(m, options, sampler.graph, None, notes, **extra)
    return Analysis(m, options, sampler.graph, sampler, notes, **extra)


