"""Calibrate the confidence and the stop rule on families of random networks nobody tuned for.

Three parts (:data:`PARTS`), each analysed the same way and reported apart:

* **small**: ``benchmarks/random_networks.py`` (grids, data centres, chains
  and meshes of routers, 19 to 96 hosts, 2 to 4 levels), each simulated with
  three seeds, whole 16 MiB broadcasts;
* **real**: the same networks at testbed size (18-26 hosts), measured by
  real libtorrent broadcasts with every default of ``tomography measure
  bittorrent`` (``benchmarks/real_family.py``), two seeds;
* **large**: the same networks grown to 200-4096 hosts, simulated as a
  measurement ends its broadcasts (block quota, size; ``benchmarks/large_family.py``),
  two seeds.

For every network, seed and ``n = 1 .. 15`` the hierarchy of ``w_n`` is built
with every level kept (:func:`cluster.averaged_edge.averaged_edge_hierarchy`;
cached under ``benchmarks/_data/<part root>-levels/``) and each level's
separation is resampled 64 times on all ``n`` iterations and 64 times on the
first ``n - 1`` (:mod:`cluster.separation`; cached apart, under
``<part root>-separations/``, so that a change of the statistic does not
rebuild the hierarchies); a level's confidence is then, as
:func:`cluster.confidence.hierarchy_confidence` gives it, the mean of its
two shares of separated resamples (at ``n = 2``, the second is whether ``w_1``
alone sets it apart).  The resamples keep the share of roots each cluster of
the top level held (:func:`cluster.confidence.root_strata`).

What it prints (Markdown, also saved to ``/tmp/calibration.md``):

1. **The truth.**  A level is *right* when it is, within NMI :data:`RIGHT`,
   a grouping of the network's host groups that its long-run data (``w_15``
   pooled over the seeds, :class:`LongRun`) set apart: separation at least
   :data:`cluster.separation.MIN_SEPARATION`; a level of one cluster (the
   answer "no hierarchy") when the long-run data set no such grouping apart.
   The long run is an estimate too: where a grouping's long-run separation
   lies within :data:`TRUTH_MARGIN` standard errors of the line (over the
   seeds' own ``w_15``), the level is *undecided*, neither right nor wrong,
   and the figures are taken over the decided levels (every level's beside
   them).  On the small part,
   topology-only definitions (the thesis's model with the NIC share;
   :mod:`truth_model` per RTT scale and gap) are checked against those data
   first: the table counts the partitions they and the data disagree on.
2. **The support rule** (a resample sets a level apart at a minimum
   separation; a level is supported at a confidence threshold), chosen on the
   training splits (networks of even number: seeds 0 and 1 of the small
   part, both seeds of the others) and judged on the held-out splits
   (networks of odd number: seed 2 of the small part, both seeds of the
   others), each part on its own.  The real swarms then get a line of their
   own (:func:`choose_rule` with ``part="real"``): at the chosen threshold, the minimum
   separation chosen the same way on the real part's training split alone,
   as the toolkit applies it to every broadcast measured by a real swarm
   (:func:`cluster.confidence.resample_separation`).  The reliability tables bin the confidence
   against the share of levels right.  The splits are then swapped (the rule
   chosen on the held-out networks, judged on the training ones), with each
   part's best rule on each split: how much the figures owe to the split.
   The toolkit's own rule is judged beside the chosen one, and by the
   number of iterations; what the data
   allow is the most right levels a line on one number (a level's
   separation or confidence) supports at 95 % right, drawn on the levels
   judged (a bound, not a rule), also by the number of iterations; and one
   run's separation is set against the long run's and against the spread of
   its resamples.
3. **The stop rule**, replayed from the recorded levels for a grid of rules:
   in how many runs it stops within 15 iterations, how often what it stopped
   on is right, how many of the right levels found when it stops are shown;
   one chosen on the training splits, the toolkit's defaults as they run
   today, and on the defaults' rule the holds (a
   level rising towards support holds a stop back) chosen there too.
4. **The thesis's early rows** (three-sites and N1 at n = 2 .. 5), level by level.

Run::

    .venv/bin/python benchmarks/random_networks.py     # simulate the small part (25-50 min)
    sudo .venv/bin/python benchmarks/real_family.py    # measure the real part (~75 min)
    .venv/bin/python benchmarks/large_family.py        # simulate the large part
    .venv/bin/python benchmarks/calibration.py         # levels and separations once (cached),
                                                       # then minutes
    .venv/bin/python benchmarks/calibration.py --parts small real
    .venv/bin/python benchmarks/calibration.py --quick # 6 networks, seed 0: a smoke test
"""

from __future__ import annotations

import argparse
import functools
import json
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np

from bench_support import command_line, machine_line
from cluster.accuracy import nmi
from cluster.averaged_edge import averaged_edge_hierarchy
from cluster.confidence import (RESAMPLE_SEPARATION, SUPPORT_THRESHOLD, SWARM_SEPARATION,
                                IterationSampler,
                                hierarchy_confidence, resample_plan, root_strata)
from cluster.modularity import canonical_labels
from cluster.partners import steady_partners
from cluster.separation import MIN_SEPARATION, resampled_separations, separation, weakest_cuts
from cluster.stability import StableHierarchy
from large_family import LARGE_ROOT
from random_networks import FAMILY_ROOT, iterations_done, random_network
from real_family import REAL_ROOT
from tomography.model.dataset import read_measurement
from tomography.model.stop_rule import (DEFAULT_STABLE, FAINT, FLAT_AFTER, HOLDS, PARTNERS,
                                        RISING, SAME_LEVEL)
from tomography.model.topology import parse_topology
from tomography.model.weights import IterationWeights
from tomography.model.truth_labels import labels_at_depth, truth_depth
from truth_model import truth_partitions

OUTPUT = Path("/tmp/calibration.md")
FORMAT = 6
"""Bumped when what a cached record holds changes (6: the hierarchies have the separated cuts
of :func:`cluster.refine.separated_cuts`)."""
STATS_FORMAT = 3
"""Bumped when the separation statistic (:mod:`cluster.separation`) changes (the cached
separations also follow :data:`FORMAT`, since they are those of the cached levels)."""
RIGHT = 0.95
TRUTH_MARGIN = 2.0
"""Standard errors (of the log separation over the seeds' own ``w_15``) by which a
partition's long-run separation must clear :data:`cluster.separation.MIN_SEPARATION`, one
way or the other, for the long-run data to decide on it (:class:`LongRun`)."""
SCALES = (0.001, 0.002, 0.004, 0.008, 0.016, 0.032, float("inf"))
TRUTH_GAPS = (1.2, 1.3, 1.5, 1.7, 2.0)
SEPARATIONS = (1.1, 1.15, 1.2, 1.25, 1.3, 1.35, 1.4, 1.5)
THRESHOLDS = (0.3, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7, 0.8, 0.9)
PRECISION = 0.955
"""Share of supported levels right that the rule must reach on the training split."""
RESAMPLES = 64
ITERATIONS = 15


@dataclass(frozen=True)
class Part:
    """One part of the family: where its datasets are, their seeds, and the split.

    Networks of even number are the training split (with ``train_seeds``), of odd
    number the held-out split (with ``held_out_seeds``); the levels of each network
    are cached under ``<root>-levels`` and their separations under ``<root>-separations``.
    """
    name: str
    root: Path
    seeds: tuple[int, ...]
    train_seeds: tuple[int, ...]
    held_out_seeds: tuple[int, ...]
    description: str

    @property
    def levels(self) -> Path:
        return self.root.parent / f"{self.root.name}-levels"

    @property
    def stats(self) -> Path:
        return self.root.parent / f"{self.root.name}-separations"

    def split(self, network: str, seed: int) -> str:
        number = int(network.rsplit("-", 1)[1])
        if number % 2 == 0:
            return "train" if seed in self.train_seeds else "unused"
        return "held-out" if seed in self.held_out_seeds else "unused"

    def networks(self) -> list[str]:
        """The networks whose every seed has :data:`ITERATIONS` iterations on disk."""
        if not self.root.is_dir():
            return []
        return sorted(d.name for d in self.root.iterdir()
                      if all(iterations_done(d / f"seed{s}") >= ITERATIONS for s in self.seeds))


PARTS = {
    "small": Part("small", FAMILY_ROOT, (0, 1, 2), (0, 1), (2,),
                  "simulated, 19-96 hosts, whole 16 MiB broadcasts (random_networks.py)"),
    "real": Part("real", REAL_ROOT, (0, 1), (0, 1), (0, 1),
                 "real libtorrent broadcasts on the testbed, 18-26 hosts, every default of "
                 "measure bittorrent (real_family.py)"),
    "large": Part("large", LARGE_ROOT, (0, 1), (0, 1), (0, 1),
                  "simulated, 200-4096 hosts, measure bittorrent's quota and size "
                  "(large_family.py)"),
}


def topology_of(m, path: Path):
    """The topology dataset ``m`` (read from ``path``) was measured on: the simulator's record,
    or the file beside a real run's seeds (``real_family.py``)."""
    model = m.meta.get("topology_model")
    if model is None:
        import yaml
        model = yaml.safe_load((path.parent / "topology.yaml").read_text())
    return parse_topology(model)


def _key(groups: Iterable[Iterable[str]]) -> tuple[tuple[str, ...], ...]:
    return tuple(sorted(tuple(sorted(g)) for g in groups))


def _host_labels(groups: Iterable[Iterable[str]], cluster_of: list[str]) -> list[int]:
    index = {c: i for i, g in enumerate(groups) for c in g}
    return [index[c] for c in cluster_of]


def collect(part: Part, name: str, seed: int) -> dict[str, Any]:
    """Every level of every ``w_n`` of one network, and the data's verdict on its candidate
    truths (cached as JSON under the part's levels)."""
    cache = part.levels / f"{name}-seed{seed}.json"
    if cache.exists():
        record = json.loads(cache.read_text())
        if record.get("format") == FORMAT:
            return {**record, "part": part.name}
    m = read_measurement(part.root / name / f"seed{seed}")
    topo = topology_of(m, part.root / name / f"seed{seed}")
    hosts = sorted(m.host_names)
    cluster_of = [topo.host_index[h].cluster for h in hosts]
    last = len(m.iteration_ids)
    levels = []
    for n in range(1, last + 1):
        sampler = IterationSampler.from_measurement(m, iterations=n)
        h = averaged_edge_hierarchy(sampler.graph, m.host_names, seed=0)
        for k in range(1, h.depth + 1):
            labels = np.asarray(h.labels(k, hosts))
            levels.append({"n": n, "level": k, "clusters": len(h.levels[k - 1]),
                           "origin": h.params["origins"][k - 1],
                           "labels": canonical_labels(labels).tolist()})
    sampler = IterationSampler.from_measurement(m)
    candidates = {}
    for beta in SCALES:
        for proposed in truth_partitions(topo, rtt_scale=beta, min_gap=1.0):
            candidates.setdefault(_key(proposed.clusters), None)
    depth = truth_depth({c.name: c.label for c in topo.clusters})
    for d in range(1, depth + 1):
        names = [c.name for c in topo.clusters]
        at = labels_at_depth({c.name: c.label for c in topo.clusters}, d, names)
        groups = defaultdict(list)
        for c, lab in zip(names, at):
            groups[lab].append(c)
        if len(groups) > 1:
            candidates.setdefault(_key(groups.values()), None)
    checked = []
    sampler_order = list(sampler.graph.hosts)
    order = [hosts.index(h) for h in sampler_order]
    for groups in candidates:
        labels = np.asarray(_host_labels(groups, cluster_of))[order]
        checked.append({"groups": [list(g) for g in groups],
                        "separation": separation(sampler.graph, labels)})
    record = {"format": FORMAT, "name": name, "seed": seed, "hosts": len(hosts),
              "description": topo.description, "levels": levels, "candidates": checked,
              "cluster_of": cluster_of}
    part.levels.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(record))
    return {**record, "part": part.name}


def separations(record: dict[str, Any]) -> list[dict]:
    """Per level of a record (:func:`collect`), its separation on ``w_n`` and on each of
    :data:`RESAMPLES` resamples, and (``"back"``) the same level's separations on resamples
    of the first ``n - 1`` iterations, cut where ``w_n`` cuts it, as
    :func:`cluster.confidence.one_iteration_back` judges it (at ``n = 2``, on ``w_1``
    alone; after one iteration, ``"on_itself"`` alone); cached under the part's separations,
    apart from the levels, so that a change of the statistic does not rebuild the
    hierarchies."""
    part = PARTS[record["part"]]
    cache = part.stats / f"{record['name']}-seed{record['seed']}.json"
    if cache.exists():
        stored = json.loads(cache.read_text())
        if stored.get("format") == [FORMAT, STATS_FORMAT]:
            return stored["levels"]
    m = read_measurement(part.root / record["name"] / f"seed{record['seed']}")
    hosts = sorted(m.host_names)
    out: list[dict] = []
    samplers: dict[int, IterationSampler] = {}
    where = {h: i for i, h in enumerate(hosts)}
    top = {lv["n"]: lv for lv in record["levels"]}   # the last level of each n: the coarsest
    for lv in record["levels"]:
        n = lv["n"]
        if n not in samplers:
            samplers = {k: IterationSampler.from_measurement(m, iterations=k)
                        for k in (n - 1, n) if k >= 1}
        sampler = samplers[n]
        order = [where[h] for h in sampler.graph.hosts]
        own = np.asarray(lv["labels"])[order]
        side = weakest_cuts(sampler.graph, own)
        full = separation(sampler.graph, own, side)
        if n < 2:
            out.append({"on_itself": [round(min(full, 1e6), 4)]})
            continue
        coarsest = np.asarray(top[n]["labels"])[order]
        _, plan = resample_plan(n, RESAMPLES, seed=1, strata=root_strata(sampler, coarsest))
        seps = resampled_separations(sampler, own, plan, side)
        fewer = samplers[n - 1]
        if n == 2:
            back = [separation(fewer.graph, own, side)]
        else:
            _, plan = resample_plan(n - 1, RESAMPLES, seed=2,
                                    strata=root_strata(fewer, coarsest))
            back = resampled_separations(fewer, own, plan, side)
        out.append({"separation": full,
                    "resampled": np.round(np.minimum(seps, 1e6), 4).tolist(),
                    "back": np.round(np.minimum(back, 1e6), 4).tolist()})
    part.stats.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps({"format": [FORMAT, STATS_FORMAT], "levels": out}))
    return out


# ----------------------------------------------------------------------------- analysis

class LongRun:
    """A network's long-run data: ``w_15`` pooled over its seeds (45 or 30 broadcasts).

    A level is right when it is, within :data:`RIGHT` (NMI), a partition of the
    topology's host groups (hosts behind one switch are never told apart) that
    these data separate (:func:`cluster.separation.separation` at least
    :data:`cluster.separation.MIN_SEPARATION`).  The long run is itself an estimate:
    each seed's own ``w_15`` gives the partition a separation of its own, and where the
    pooled one lies within :data:`TRUTH_MARGIN` standard errors of the line (in log, over
    the seeds), the long-run data do not decide whether the partition is separated: such
    a level is *undecided*, neither right nor wrong.
    """

    def __init__(self, name: str, seeds: Iterable[int], root: Path) -> None:
        from tomography.model.weights import mean_weights

        seeds = list(seeds)
        ms = [read_measurement(root / name / f"seed{s}") for s in seeds]
        self.hosts = sorted(ms[0].host_names)
        self.per_seed = []
        for m in ms:
            order = [m.host_names.index(h) for h in self.hosts]
            self.per_seed.append(mean_weights(m)[order][:, order])
        self.weights = sum(self.per_seed) / len(ms)
        topo = topology_of(ms[0], root / name / f"seed{seeds[0]}")
        groups = [topo.host_index[h].cluster for h in self.hosts]
        self.cluster_of = groups
        _, self.group = np.unique(groups, return_inverse=True)
        self._separations: dict[tuple[int, ...], tuple[float, bool]] = {}

    def snapped(self, labels: np.ndarray) -> np.ndarray:
        """Each host group whole in the level's cluster that holds most of its hosts."""
        out = np.empty_like(labels)
        for g in np.unique(self.group):
            members = self.group == g
            out[members] = np.bincount(labels[members]).argmax()
        return out

    def verdict(self, labels: np.ndarray) -> tuple[float, float, bool]:
        """(NMI of the level with its snapped partition, that partition's long-run
        separation, whether the long-run data decide on it: see the class)."""
        snapped = self.snapped(labels)
        key = tuple(canonical_labels(snapped).tolist())
        if key not in self._separations:
            self._separations[key] = ((float("nan"), True) if len(set(key)) < 2 else
                                      self._judged(snapped))
        return (float(nmi(labels, snapped)), *self._separations[key])

    def _judged(self, snapped: np.ndarray) -> tuple[float, bool]:
        pooled = separation(self.weights, snapped)
        own = np.log(np.clip([separation(w, snapped) for w in self.per_seed], 1e-6, 1e6))
        error = np.std(own, ddof=1) / np.sqrt(len(own))
        gap = abs(np.log(np.clip(pooled, 1e-6, 1e6)) - np.log(MIN_SEPARATION))
        return pooled, bool(gap > TRUTH_MARGIN * error)


def network(record: dict) -> str:
    """A network's key across parts: ``part/name``."""
    return f"{record['part']}/{record['name']}"


def long_runs(records: list[dict]) -> dict[str, LongRun]:
    """:class:`LongRun` of every network of the records (all its seeds pooled), by
    :func:`network`."""
    seeds = defaultdict(list)
    for r in records:
        seeds[network(r)].append(r["seed"])
    return {key: LongRun(key.split("/")[1], sorted(s), PARTS[key.split("/")[0]].root)
            for key, s in seeds.items()}


def definition_check(records: list[dict], judges: dict[str, LongRun]
                     ) -> tuple[list[str], tuple[float, float]]:
    """Topology-only definitions against the long-run data: per RTT scale and gap of
    :mod:`truth_model`, and the thesis's model with the NIC share
    (:func:`tomography.model.ground_truth.threshold_partitions`, acceptable partitions,
    K = 9 as the simulator's swarm); the candidates are every partition any of them
    proposes and the network's designed levels."""
    from tomography.model.ground_truth import threshold_partitions

    topologies = {network(r): parse_topology(random_network(int(r["name"].split("-")[1])))
                  for r in records}
    candidates = defaultdict(set)
    for r in records:
        candidates[network(r)].update(_key(c["groups"]) for c in r["candidates"])
    separated = {}
    for name, keys in candidates.items():
        cluster_of = judges[name].cluster_of
        for key in keys:
            labels = np.asarray(_host_labels(key, cluster_of))
            separated[name, key] = judges[name].verdict(labels)[1] >= MIN_SEPARATION

    def row(label: str, truth_of) -> tuple[int, str]:
        counts = np.zeros(4, dtype=int)
        for name, keys in candidates.items():
            truth = truth_of(topologies[name])
            if truth is None:
                continue
            for key in keys:
                counts[(0 if key in truth else 2) + (0 if separated[name, key] else 1)] += 1
        wrong = int(counts[1] + counts[2])
        return wrong, (f"| {label} | {counts.sum()} | " + " | ".join(map(str, counts))
                       + f" | {wrong} ({wrong / max(counts.sum(), 1):.0%}) |")

    out = ["| definition | partitions | truth, data separate | truth, data do not | "
           "not truth, data separate | not truth, data do not | disagreements |",
           "|---|---|---|---|---|---|---|"]
    wrong, text = row("thesis model with the NIC share (trees only)", lambda t: (
        {_key(p.clusters) for p in threshold_partitions(t, host_connections=9) if p.acceptable}
        if t.is_tree else None))
    out.append(text)
    rows = []
    for beta in SCALES:
        for gap in TRUTH_GAPS:
            wrong, text = row(f"rates, RTT scale {beta} s, gap {gap}", lambda t: {
                _key(p.clusters) for p in truth_partitions(t, rtt_scale=beta, min_gap=gap)
                if p.truth})
            rows.append((wrong, beta, gap))
            out.append(text)
    wrong, beta, gap = min(rows)
    return out, (beta, gap)


def level_table(records: list[dict], judges: dict[str, LongRun],
                stats: list[list[dict | None]]) -> list[dict]:
    """Every level, with its separations (``stats``, per record :func:`separations`), whether
    it is right and whether the long-run data decide that (``decided``; :class:`LongRun`: a
    level that is no grouping of host groups is wrong however they judge), and its split."""
    out = []
    for r, measured in zip(records, stats):
        judge = judges[network(r)]
        split = PARTS[r["part"]].split(r["name"], r["seed"])
        rows = []
        for lv, stat in zip(r["levels"], measured):
            best, long_sep, decided = judge.verdict(np.asarray(lv["labels"]))
            right = best >= RIGHT and long_sep >= MIN_SEPARATION
            rows.append({**lv, **(stat or {}), "name": network(r), "seed": r["seed"],
                         "part": r["part"], "split": split, "best": best, "long_run": long_sep,
                         "right": bool(right), "decided": decided or best < RIGHT})
        out += rows
    return out


def confidence(level: dict, minimum: float) -> float | None:
    """A level's confidence as :func:`cluster.confidence.hierarchy_confidence` gives it: the
    mean of the share of its resamples whose separation reaches ``minimum`` and the same
    share on resamples of one iteration fewer."""
    if "resampled" not in level:
        return None
    return float(np.mean(np.asarray(level["resampled"]) >= minimum)
                 + np.mean(np.asarray(level["back"]) >= minimum)) / 2


def scores(levels: list[dict], shown, *, undecided: bool = False
           ) -> tuple[float, float, int, int]:
    """(share of supported levels right, share of right levels supported, supported, right),
    over the levels the long-run data decide on (all levels with ``undecided``)."""
    levels = [lv for lv in levels if undecided or lv["decided"]]
    sup = [lv for lv in levels if shown(lv)]
    right = [lv for lv in levels if lv["right"]]
    precision = sum(lv["right"] for lv in sup) / len(sup) if sup else float("nan")
    recall = sum(shown(lv) for lv in right) / len(right) if right else float("nan")
    return precision, recall, len(sup), len(right)


def choose_rule(levels: list[dict], fit: str = "train", *, part: str | None = None,
                thresholds: Iterable[float] = THRESHOLDS
                ) -> tuple[list[str], tuple[float, float]]:
    """Precision and recall on the ``fit`` split (of ``part`` alone, if given) per rule of
    :data:`SEPARATIONS` and ``thresholds``; the one chosen: the most right levels supported
    with at least :data:`PRECISION` of the supported right, ties to the stricter rule.  With
    ``part="real"`` and one threshold it chooses the real swarms' own line
    (:data:`cluster.confidence.SWARM_SEPARATION`)."""
    train = [lv for lv in levels if lv["split"] == fit and "resampled" in lv
             and part in (None, lv["part"])]
    out = ["| min separation | threshold | supported right | right supported | supported |",
           "|---|---|---|---|---|"]
    best = None
    for s in SEPARATIONS:
        for t in thresholds:
            p, r, n_sup, _ = scores(train, lambda lv: confidence(lv, s) >= t)
            out.append(f"| {s} | {t} | {p:.3f} | {r:.3f} | {n_sup} |")
            key = (p >= PRECISION, r if p >= PRECISION else p, -t, s)   # ties: the stricter
            if best is None or key > best[0]:
                best = (key, (s, t))
    return out, best[1]


def line_per_level(pooled: float, swarm: float) -> Callable[[dict], float]:
    """Per level, the separation its resamples must reach: ``swarm`` for the real part's
    broadcasts, ``pooled`` for the simulated ones (:func:`cluster.confidence.resample_separation`)."""
    return lambda lv: swarm if lv["part"] == "real" else pooled


DEFAULT_LINES = line_per_level(RESAMPLE_SEPARATION, SWARM_SEPARATION)
"""The toolkit's lines, per level."""


def swapped(levels: list[dict], parts: list[Part]) -> list[str]:
    """The split's weight on the goals: the rule chosen on either split, judged on the other,
    per part; and per part and split, the most right levels any rule of the grid supports
    with at least 95 % of its supported levels right."""
    measured = [lv for lv in levels if "resampled" in lv]
    out = ["| chosen on | rule | judged on | part | supported right | right supported |",
           "|---|---|---|---|---|---|"]
    for fit, other in (("train", "held-out"), ("held-out", "train")):
        _, (s, t) = choose_rule(levels, fit)
        line = line_per_level(s, choose_rule(levels, fit, part="real", thresholds=(t,))[1][0])
        for part in parts:
            mine = [lv for lv in measured if lv["split"] == other and lv["part"] == part.name]
            if mine:
                p, r, _, _ = scores(mine, lambda lv: confidence(lv, line(lv)) >= t)
                out.append(f"| {fit} | {line(mine[0])} / {t} | {other} | {part.name} | "
                           f"{p:.3f} | {r:.3f} |")
    out += ["", "| part | split | most right levels supported at 95 % right | by rule |",
            "|---|---|---|---|"]
    for part in parts:
        for split in ("train", "held-out"):
            mine = [lv for lv in measured if lv["split"] == split and lv["part"] == part.name]
            found = [(r, s, t) for s in SEPARATIONS for t in THRESHOLDS
                     for p, r, _, _ in [scores(mine, lambda lv: confidence(lv, s) >= t)]
                     if p >= 0.95]
            r, s, t = max(found) if found else (float("nan"), "-", "-")
            out.append(f"| {part.name} | {split} | {r:.3f} | {s} / {t} |")
    return out


ITERATION_SPANS = ((2, 3), (4, 7), (8, 15))
"""The spans of iteration counts the tables break figures down by."""


def best_line(levels: list[dict], value, *, undecided: bool = False) -> tuple[float, float]:
    """(share of the right levels supported, the line) of the line on ``value(level)`` that
    supports the most right levels while at least 95 % of what it supports is right, drawn
    on ``levels`` themselves: a bound for any rule on that number, not a rule."""
    levels = [lv for lv in levels if undecided or lv["decided"]]
    values = np.array([value(lv) for lv in levels])
    right = np.array([lv["right"] for lv in levels])
    best = (float("nan"), float("nan"))
    if not right.any():
        return best
    order = np.argsort(-values, kind="stable")
    hits = np.cumsum(right[order])
    count = np.arange(1, len(order) + 1)
    last = np.r_[values[order][1:] != values[order][:-1], True]   # whole ties only
    ok = (hits >= 0.95 * count) & last
    if ok.any():
        i = int(np.flatnonzero(ok)[np.argmax(hits[ok])])
        best = (float(hits[i] / right.sum()), float(values[order][i]))
    return best


def limits(levels: list[dict], parts: list[Part]) -> list[str]:
    """Per part and split, the most right levels any line on one number supports at 95 %
    right, the line drawn on the levels judged (:func:`best_line`): on the level's own
    separation, and on its confidence at the defaults' minimum separation; over the decided
    levels and over every level, and by the number of iterations."""
    out = ["| part | split | levels | on its separation | on its confidence | the same, every "
           "level | separation, n 2-3 | n 4-7 | n 8-15 |", "|---|---|---|---|---|---|---|---|---|"]
    own = (lambda lv: lv["separation"])
    conf = (lambda lv: confidence(lv, DEFAULT_LINES(lv)))
    for part in parts:
        for split in ("train", "held-out"):
            mine = [lv for lv in levels if lv["part"] == part.name and lv["split"] == split]
            if not mine:
                continue
            cells = [best_line(mine, own)[0], best_line(mine, conf)[0],
                     best_line(mine, own, undecided=True)[0]]
            cells += [best_line([lv for lv in mine if lo <= lv["n"] <= hi], own)[0]
                      for lo, hi in ITERATION_SPANS]
            out.append(f"| {part.name} | {split} | {sum(lv['decided'] for lv in mine)} | "
                       + " | ".join(f"{c:.3f}" for c in cells) + " |")
    return out


def by_iterations(levels: list[dict], parts: list[Part], shown) -> list[str]:
    """Per part and split, the share of the decided right levels that ``shown`` supports and
    the share of what it supports that is right, by the number of iterations."""
    out = ["| part | split | " + " | ".join(f"n {lo}-{hi}: right supported (supported right)"
                                           for lo, hi in ITERATION_SPANS) + " |",
           "|---|---|" + "---|" * len(ITERATION_SPANS)]
    for part in parts:
        for split in ("train", "held-out"):
            mine = [lv for lv in levels if lv["part"] == part.name and lv["split"] == split]
            if not mine:
                continue
            cells = []
            for lo, hi in ITERATION_SPANS:
                p, r, n_sup, n_right = scores([lv for lv in mine if lo <= lv["n"] <= hi], shown)
                cells.append(f"{r:.3f} of {n_right} ({p:.3f} of {n_sup})")
            out.append(f"| {part.name} | {split} | " + " | ".join(cells) + " |")
    return out


def spread(levels: list[dict], parts: list[Part]) -> list[str]:
    """How far one run's separation of a level lies from the long run's, against how far its
    resamples spread: per part and ``n``, over the levels that group host groups exactly
    (NMI 1) with a long-run separation between 0.9 and 3, the standard deviation of the log
    ratio of the run's separation to the long run's (which holds the run's own data, so it
    understates the spread between independent runs) and the mean standard deviation of the
    log of the level's resampled separations."""
    out = ["| part | n | levels | run against long run (sd of log) | resamples (mean sd of "
           "log) |", "|---|---|---|---|---|"]
    for part in parts:
        for n in (3, 5, 8, 15):
            mine = [lv for lv in levels if lv["part"] == part.name and lv["n"] == n
                    and lv["best"] >= 0.999 and 0.9 < lv["long_run"] < 3]
            if len(mine) < 2:
                continue
            run = np.log([lv["separation"] for lv in mine]) - np.log(
                [lv["long_run"] for lv in mine])
            boot = np.mean([np.std(np.log(np.maximum(lv["resampled"], 1e-6))) for lv in mine])
            out.append(f"| {part.name} | {n} | {len(mine)} | {np.std(run):.3f} | {boot:.3f} |")
    return out


def reliability(levels: list[dict], minimum: Callable[[dict], float]) -> list[str]:
    """Confidence bins against the share of levels right (each level at its line,
    ``minimum(level)``)."""
    out = ["| confidence | levels | right | share right |", "|---|---|---|---|"]
    edges = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0]
    conf = np.array([confidence(lv, minimum(lv)) for lv in levels])
    right = np.array([lv["right"] for lv in levels])
    for lo, hi in zip(edges, edges[1:]):
        inside = (conf >= lo) & ((conf < hi) if hi < 1 else (conf < 1))
        label = f"{lo:.2f}-{hi:.2f}"
        out.append(_bin(label, inside, right))
    out.append(_bin("1 (every resample)", conf >= 1, right))
    return out


def _bin(label: str, inside: np.ndarray, right: np.ndarray) -> str:
    count = int(inside.sum())
    share = f"{right[inside].mean():.3f}" if count else "-"
    return f"| {label} | {count} | {int(right[inside].sum())} | {share} |"


# ----------------------------------------------------------------------------- stop rule

@functools.lru_cache(maxsize=1)
def _dataset(part: str, name: str, seed: int):
    return read_measurement(PARTS[part].root / name.split("/")[-1] / f"seed{seed}")


@functools.lru_cache(maxsize=None)
def steady_at(part: str, name: str, seed: int, n: int) -> float:
    """The share of steady partners (:func:`cluster.partners.steady_partners`) of a run's
    first ``n`` iterations, read from its dataset (only where a rule would say "no
    hierarchy")."""
    return steady_partners(IterationWeights.from_measurement(_dataset(part, name, seed), n))


def replay(run: list[dict], shown, rule: tuple, confidence_of,
           partners: float | None = PARTNERS) -> dict:
    """``--until-converged``'s stop rule (:class:`cluster.stability.StableHierarchy` with the
    parameters of ``rule``, a :data:`STOP_RULES` tuple, and the steady-partner line
    ``partners``) fed one run's recorded levels, iteration by iteration: where it stops
    (``n``, None if not within the run), whether on "no hierarchy" (``flat``), the levels it
    settled on and the supported ones it did not."""
    k, tolerance, flat, faint, rising, holds = rule
    stop = StableHierarchy(k, tolerance=tolerance, flat_after=flat, faint=faint,
                           partners=partners, rising=rising, holds=holds)
    first = run[0] if run else {}
    by_n = defaultdict(list)
    for lv in run:
        by_n[lv["n"]].append(lv)
    for n in sorted(by_n):
        measured = [lv for lv in by_n[n] if "resampled" in lv]
        supported = [lv for lv in measured if shown(lv)]
        done = stop.observe([np.asarray(lv["labels"]) for lv in supported], bool(measured),
                            strongest=max(map(confidence_of, measured), default=0.0),
                            found=[(np.asarray(lv["labels"]), confidence_of(lv))
                                   for lv in measured],
                            partners=lambda n=n: steady_at(first["part"], first["name"],
                                                           first["seed"], n))
        if done:
            settled = [lv for lv, labels in zip(supported, stop.history[-1])
                       if any(labels is s for s in stop.settled)]
            return {"n": n, "flat": stop.flat, "levels": [] if stop.flat else settled,
                    "unstable": [] if stop.flat else
                    [lv for lv in supported if not any(lv is s for s in settled)]}
    return {"n": None, "levels": [], "unstable": [], "flat": False}


def stop_table(levels: list[dict], shown, label: str,
               rules: list[tuple], structured: dict[str, bool | None],
               minimum: Callable[[dict], float], partners: float | None = PARTNERS
               ) -> list[str]:
    """Per stop rule: runs, stopped within 15, right when stopped, mean n, unstable levels,
    and the right levels found at the stop that are supported (what a user is shown).

    A rule is a :data:`STOP_RULES` tuple.  A stop on levels is right when every level
    it settled on is right, wrong when one of them is wrong, and undecided otherwise (a
    level the long-run data do not decide on, :class:`LongRun`); a stop on "no hierarchy"
    is right when the network has no partition its long-run data separate
    (``structured`` False), undecided when the only ones are undecided (None).  The share
    right is over the decided stops."""
    runs = defaultdict(list)
    for lv in levels:
        runs[lv["name"], lv["seed"]].append(lv)
    replays: list[list] = [[] for _ in rules]   # run by run: each dataset read once
    for (name, _), run in runs.items():
        for i, rule in enumerate(rules):
            replays[i].append((name, run, replay(run, shown, rule,
                                                 lambda lv: confidence(lv, minimum(lv)),
                                                 partners)))
    out = []
    for rule, results in zip(rules, replays):
        k, tol, flat, low, rise, holds = rule
        if not results:
            continue
        stopped = [(name, run, r) for name, run, r in results if r["n"] is not None]
        verdicts = [_stop_verdict(structured[name], r) for name, _, r in stopped]
        right, undecided = verdicts.count(True), verdicts.count(None)
        at_stop = [lv for _, run, r in stopped if not r["flat"]
                   for lv in run if lv["n"] == r["n"] and lv["right"] and lv["decided"]
                   and "resampled" in lv]
        seen = sum(shown(lv) for lv in at_stop)
        flats = sum(bool(r.get("flat")) for _, _, r in stopped)
        mean_n = np.mean([r["n"] for _, _, r in stopped]) if stopped else float("nan")
        unstable = sum(bool(r["unstable"]) for _, _, r in stopped)
        name = (f"supported {k + 1} in a row, {'exact' if tol >= 1 else f'NMI >= {tol}'}"
                f", confirmed; no level at {low} {flat} in a row: flat"
                + (f"; held by a level rising from {rise}, at most {holds}" if holds else "")
                + ("" if partners is None else f"; waits at {partners} steady partners"))
        out.append(f"| {label} | {name} | {len(results)} | {len(stopped)} "
                   f"({len(stopped) / len(results):.1%}) | {flats} | {right} "
                   f"({right / max(len(stopped) - undecided, 1):.1%}) | {undecided} | "
                   f"{mean_n:.2f} | {unstable} "
                   f"| {seen} of {len(at_stop)} ({seen / max(len(at_stop), 1):.1%}) |")
    return out


def _stop_verdict(structured: bool | None, stop: dict) -> bool | None:
    """Whether a stop (:func:`replay`) is right: True, False, or None where the long-run
    data do not decide."""
    if stop.get("flat"):
        return None if structured is None else not structured
    if any(lv["decided"] and not lv["right"] for lv in stop["levels"]):
        return False
    return True if all(lv["decided"] for lv in stop["levels"]) else None


def structure(records: list[dict], levels: list[dict], judges: dict[str, LongRun]
              ) -> dict[str, bool | None]:
    """Per network, whether its long-run data separate a partition of its host groups (a
    candidate, or a level found at some ``n``): where "no hierarchy" is wrong (True), right
    (False), or undecided (None: the only partitions near the line are undecided,
    :class:`LongRun`)."""
    found = defaultdict(set)   # per network: verdicts (separated, decided) of its partitions
    for lv in levels:
        if lv["clusters"] > 1 and lv["best"] >= RIGHT:
            found[lv["name"]].add((lv["long_run"] >= MIN_SEPARATION, lv["decided"]))
    for r in records:
        judge = judges[network(r)]
        for c in r["candidates"]:
            labels = np.asarray(_host_labels(_key(c["groups"]), judge.cluster_of))
            _, sep, decided = judge.verdict(labels)
            found[network(r)].add((sep >= MIN_SEPARATION, decided))
    return {network(r): (True if (True, True) in found[network(r)] else
                         None if any(not decided for _, decided in found[network(r)]) else False)
            for r in records}


STOP_RULES = [(k, SAME_LEVEL, flat, low, 1.0, 0) for k in (1, 2) for flat in (5, 6, 7)
              for low in (0.05, 0.1, 0.2)]
"""(k, same-level NMI, iterations for "no hierarchy", faint confidence, rising confidence,
holds) of :class:`cluster.stability.StableHierarchy`: the first stage, without holds."""
HOLD_RULES = [(rise, holds) for rise in (0.3, 0.5, 0.7) for holds in (0, 1, 2)]
"""(rising confidence, holds), on the defaults' rule (:data:`DEFAULT_RULE`)."""
DEFAULT_RULE = (DEFAULT_STABLE, SAME_LEVEL, FLAT_AFTER, FAINT, 1.0, 0)
"""``--until-converged``'s rule without holds (:data:`tomography.model.stop_rule.DEFAULT_STABLE`
says why K is 2)."""


STOP_HEADER = ["| part, split | rule | runs | stopped within 15 | of them flat | right when "
               "stopped (of the decided) | undecided | mean n | with an unstable level | right "
               "levels supported at the stop |", "|---|---|---|---|---|---|---|---|---|---|"]
"""The header of :func:`stop_table`'s rows."""


def _row_cells(row: str) -> tuple[int, int, int, int, float, float]:
    """(runs, stopped, decided stops, right, mean n, share of the right levels at the stop
    supported) of a :func:`stop_table` row."""
    cells = [c.strip() for c in row.split("|")[1:-1]]
    seen, _, found = cells[9].split()[:3]
    stopped = int(cells[3].split()[0])
    return (int(cells[2]), stopped, stopped - int(cells[6]), int(cells[5].split()[0]),
            float(cells[7]), int(seen) / max(int(found), 1))


def choose_stop_rule(levels: list[dict], shown, minimum: Callable[[dict], float],
                     structured: dict[str, bool | None]) -> tuple:
    """On the training split: the most often right among the rules that stop in 90 % of runs
    (then the fewest iterations)."""
    train = [lv for lv in levels if lv["split"] == "train"]
    best = None
    for rule in STOP_RULES:
        runs, stopped, decided, right, mean_n, _ = _row_cells(
            stop_table(train, shown, "train", [rule], structured, minimum)[0])
        key = (stopped >= 0.9 * runs, right / max(decided, 1), -mean_n)
        if best is None or key > best[0]:
            best = (key, rule)
    return best[1]


def choose_holds(levels: list[dict], shown, minimum: Callable[[dict], float],
                 structured: dict[str, bool | None],
                 base: tuple) -> tuple:
    """On the training split, with the stop rule ``base``: the holds (:data:`HOLD_RULES`)
    that leave the largest share of the right levels at the stop supported (then the fewest
    iterations)."""
    train = [lv for lv in levels if lv["split"] == "train"]
    best = None
    for rise, holds in HOLD_RULES:
        rule = base[:4] + (rise, holds)
        *_, mean_n, seen = _row_cells(
            stop_table(train, shown, "train", [rule], structured, minimum)[0])
        if best is None or (seen, -mean_n) > best[0]:
            best = ((seen, -mean_n), rule)
    return best[1]


PARTNER_LINES = (None, 0.25, 0.5, 0.75)
"""Steady-partner lines for "no hierarchy" (:data:`tomography.model.stop_rule.PARTNERS`;
None: never wait)."""


def choose_partners(levels: list[dict], shown, minimum: Callable[[dict], float],
                    structured: dict[str, bool | None], base: tuple) -> float | None:
    """On the training split, with the stop rule ``base``: the steady-partner line
    (:data:`PARTNER_LINES`) chosen as :func:`choose_stop_rule` chooses a rule (the first of
    equals)."""
    train = [lv for lv in levels if lv["split"] == "train"]
    best = None
    for line in PARTNER_LINES:
        runs, stopped, decided, right, mean_n, _ = _row_cells(
            stop_table(train, shown, "train", [base], structured, minimum, line)[0])
        key = (stopped >= 0.9 * runs, right / max(decided, 1), -mean_n)
        if best is None or key > best[0]:
            best = (key, line)
    return best[1]


def thesis_rows(minimum: float, threshold: float) -> list[str]:
    """The thesis's early rows, simulated (64 MiB, the simulator's defaults): three-sites (the
    three sites at n = 2) over seeds 0-4 and N1 (the router pairs, then the halves, within
    2 iterations) over seeds 1-3; every level at n = 2 .. 5 with its NMI against the truth
    depth it matches best and its confidence (``*``: supported)."""
    from bench_support import simulated_dataset
    from cluster.accuracy import hierarchy_nmi

    out = ["| scenario | seed | n | levels (clusters: best NMI @ truth depth, confidence) |",
           "|---|---|---|---|"]
    for name, seeds in (("three-sites", range(5)), ("N1", range(1, 4))):
        for seed in seeds:
            m = read_measurement(simulated_dataset(name, 5, "64MiB", seed=seed))
            for n in range(2, 6):
                sampler = IterationSampler.from_measurement(m, iterations=n)
                h = hierarchy_confidence(
                    averaged_edge_hierarchy(sampler.graph, m.host_names, seed=0), sampler,
                    seed=0, threshold=threshold, min_separation=minimum)
                table = hierarchy_nmi(h, m.labels)
                cells = [f"{len(h.levels[k - 1])}: {row.best_nmi:.2f}@{int(row.best_depth)}, "
                         f"{h.confidence[k - 1]:.2f}{'*' if h.supported(k) else ''}"
                         for k, row in zip(range(1, h.depth + 1), table.itertuples())]
                out.append(f"| {name} | {seed} | {n} | {'; '.join(cells)} |")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--parts", nargs="+", choices=sorted(PARTS), default=list(PARTS),
                        help="the parts of the family (default: all three)")
    parser.add_argument("--quick", action="store_true",
                        help="the small part's first 6 networks, seed 0: a smoke test")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    t0 = time.perf_counter()
    parts = [PARTS["small"]] if args.quick else [PARTS[p] for p in args.parts]
    tasks = [(part, name, s) for part in parts
             for name in (part.networks()[:6] if args.quick else part.networks())
             for s in ((0,) if args.quick else part.seeds)]
    with ProcessPoolExecutor(args.jobs) as pool:
        records = list(pool.map(collect, *zip(*tasks)))
        stats = list(pool.map(separations, records))
    judges = long_runs(records)
    levels = level_table(records, judges, stats)
    structured = structure(records, levels, judges)
    for lv in levels:   # one cluster: the answer "no hierarchy", right where it is so
        if lv["clusters"] == 1:
            lv["right"] = structured[lv["name"]] is False
            lv["decided"] = structured[lv["name"]] is not None
    measured = [lv for lv in levels if "resampled" in lv]
    lines = [f"Command: `{command_line()}`", "", machine_line(), "",
             "| part | what | networks | runs | levels at n >= 2 | of them right | "
             "undecided |", "|---|---|---|---|---|---|---|"]
    for part in parts:
        mine = [lv for lv in measured if lv["part"] == part.name]
        lines.append(f"| {part.name} | {part.description} | "
                     f"{len({network(r) for r in records if r['part'] == part.name})} | "
                     f"{sum(r['part'] == part.name for r in records)} | {len(mine)} | "
                     f"{sum(lv['right'] and lv['decided'] for lv in mine)} | "
                     f"{sum(not lv['decided'] for lv in mine)} |")
    small = [r for r in records if r["part"] == "small"]
    if small:
        check, (beta, gap) = definition_check(small, judges)
        lines += ["", "### Topology-only definitions against the long-run data (small part)",
                  ""] + check + ["", f"Fewest disagreements among the rate models: RTT scale "
                                     f"{beta} s, gap {gap}.", ""]
    rule_rows, (s, t) = choose_rule(levels)
    lines += ["### The support rule on the training split (every part's)", ""] + rule_rows
    lines += ["", f"Chosen (the most right levels supported with at least "
                  f"{PRECISION:.1%} of the supported right, on the training split): "
                  f"minimum separation of a resample {s}, "
                  f"confidence threshold {t}.", ""]
    swarm_rows, (swarm, _) = choose_rule(levels, part="real", thresholds=(t,))
    chosen_line = line_per_level(s, swarm)
    lines += ["### The real swarms' line on the real part's training split, at the threshold "
              f"{t}", ""] + swarm_rows
    lines += ["", f"Chosen the same way: {swarm} (the toolkit's: {SWARM_SEPARATION}).", ""]
    lines += ["### Held-out figures, per part", "",
              "Over the levels the long-run data decide on; the last two columns over every "
              "level, the undecided ones counted as the long-run separation alone has them (a "
              "level of one cluster, on a network whose only separated groupings are "
              "undecided, as wrong).",
              "", "| part | split | rule | supported right | right supported | supported | "
              "right | every level: supported right | right supported |",
              "|---|---|---|---|---|---|---|---|---|"]
    shown = (lambda lv: confidence(lv, chosen_line(lv)) >= t)
    defaults = (lambda lv: confidence(lv, DEFAULT_LINES(lv)) >= SUPPORT_THRESHOLD)
    rules = [(line_per_level(s, s), t, "chosen, one line"), (chosen_line, t, "chosen"),
             (DEFAULT_LINES, SUPPORT_THRESHOLD, "defaults")]
    for part in parts:
        for split in ("train", "held-out"):
            mine = [lv for lv in measured if lv["part"] == part.name and lv["split"] == split]
            for line, rt, what in rules if mine else ():
                rule = (lambda lv: confidence(lv, line(lv)) >= rt)
                p, r, n_sup, n_right = scores(mine, rule)
                p_all, r_all, _, _ = scores(mine, rule, undecided=True)
                lines.append(f"| {part.name} | {split} | {line(mine[0])} / {rt} ({what}) | "
                             f"{p:.3f} | {r:.3f} | {n_sup} | {n_right} | {p_all:.3f} | "
                             f"{r_all:.3f} |")
    lines += ["", "### By the number of iterations: the defaults' rule, decided levels", ""]
    lines += by_iterations(measured, parts, defaults)
    lines += ["", "### What the data allow: a line on one number, drawn on the levels judged",
              ""] + limits(measured, parts)
    lines += ["", "### One run against the long run, and the resamples' spread", ""]
    lines += spread(measured, parts)
    lines += ["", "### The splits swapped", ""] + swapped(levels, parts)
    for part in parts:
        held = [lv for lv in measured if lv["part"] == part.name and lv["split"] == "held-out"
                and lv["decided"]]
        if held:
            lines += ["", f"### Reliability: {part.name} part, held-out levels", ""]
            lines += reliability(held, chosen_line)
    chosen = choose_stop_rule(levels, shown, chosen_line, structured)
    held = choose_holds(levels, shown, chosen_line, structured, DEFAULT_RULE)
    lines += ["", "### The stop rule", "",
              f"{sum(v is True for v in structured.values())} of {len(structured)} networks "
              "have a partition their long-run data separate; on "
              f"{sum(v is False for v in structured.values())} the right answer is \"no "
              "hierarchy\"; on the others the long-run data do not decide.", "",
              f"The training split's own choice: k = {chosen[0]}, \"no hierarchy\" after "
              f"{chosen[2]} iterations with no level at {chosen[3]}. On the defaults' rule (k = "
              f"{DEFAULT_RULE[0]}, \"no hierarchy\" after {DEFAULT_RULE[2]} at {DEFAULT_RULE[3]}) "
              f"the training split's choice of holds: an unsupported level rising from "
              f"{held[4]} holds a stop back, at most {held[5]} times.", ""] + STOP_HEADER
    holds = [DEFAULT_RULE[:4] + (rise, h) for rise, h in HOLD_RULES if h]
    for part in parts:
        for split in ("train", "held-out"):
            mine = [lv for lv in levels if lv["part"] == part.name and lv["split"] == split]
            if mine:
                lines += stop_table(mine, shown, f"{part.name}, {split}",
                                    STOP_RULES + holds, structured, chosen_line)
    default_rule = DEFAULT_RULE[:4] + (RISING, HOLDS)
    line = choose_partners(levels, defaults, DEFAULT_LINES, structured, default_rule)
    lines += ["", "### Steady partners before \"no hierarchy\"", "",
              "The defaults' rule, waiting (or not: None) while at least this share of the hosts "
              "has the same strongest partner in the even and the odd iterations. The training "
              f"split's choice: {line} (the default: {PARTNERS}).", ""] + STOP_HEADER
    for part in parts:
        for split in ("train", "held-out"):
            mine = [lv for lv in levels if lv["part"] == part.name and lv["split"] == split]
            for partners in PARTNER_LINES if mine else ():
                lines += stop_table(mine, defaults, f"{part.name}, {split}", [default_rule],
                                    structured, DEFAULT_LINES, partners)
    lines += ["", f"As `--until-converged` runs today: support {RESAMPLE_SEPARATION} "
                  f"(real swarms {SWARM_SEPARATION}) / {SUPPORT_THRESHOLD}, the defaults' stop "
                  "rule and hold:", ""] + STOP_HEADER
    for part in parts:
        for split in ("train", "held-out"):
            mine = [lv for lv in levels if lv["part"] == part.name and lv["split"] == split]
            if mine:
                lines += stop_table(mine, defaults, f"{part.name}, {split}",
                                    [default_rule], structured, DEFAULT_LINES)
    if small:
        lines += ["", "### The thesis's early rows", ""] + thesis_rows(s, t)
    lines += ["", f"Total {time.perf_counter() - t0:.0f} s."]
    text = "\n".join(lines)
    print(text)
    OUTPUT.write_text(text + "\n")


if __name__ == "__main__":
    main()
