"""Choose the defaults of the averaged-edge hierarchy by evidence.

Compares the options of :func:`cluster.averaged_edge.averaged_edge_hierarchy`
(``linkage``, ``start``, ``loops``, ``z``, ``engine``) and the ``linkage`` of
:func:`cluster.spanning_tree.cluster_tree`, one option at a time around the
current defaults (mean linkage, refined, loops 0.5, z 5, igraph), plus the
thesis's linkage (the default until issue 14) with the other starts, and,
since igraph makes it cheap, the full cross product linkage x start (z 3, 5,
8 for refined) x loops with igraph at analysis seed 0.  The one-at-a-time
options are also run with analysis seeds 1-4 at the last n of each scenario.
On:

* the thesis's scenarios of ``benchmarks/reproduce_thesis.py`` (bordeaux-64,
  grenoble-toulouse, three-sites, four-sites, bordeaux-toulouse, N1, N2,
  tree-5), simulated once with :func:`measure.simulator.simulate` (seed 0)
  and cached under ``benchmarks/_data/simulated``; every ``w_n``, n = 1..N, is
  analysed, N1 and N2 at 10 iterations of 32 MiB (not 5 and 15 of 64 MiB:
  about 30 s per iteration);
* planted hierarchies of :func:`tomography.model.synthetic.planted_hierarchy`
  (equal, uneven and flat shapes; noise 0.5 and 1.0; 3 and 10 iterations;
  3 seeds).

Scores, per option: NMI of each level against the truth at the matching
depth (:func:`cluster.accuracy.hierarchy_nmi`, mean over the first ``depth``
levels), which truth depths appear exactly (NMI 1) as some level, spurious
levels (levels that match no truth depth; those coarser than the truth's top
level, the thesis's post-optimal merges, are counted apart), whether the
maximum spanning tree of the flat clusters follows the physical links
(:func:`tomography.model.ground_truth.tree_is_consistent`) and is right (flat
clusters = the truth's finest clusters as well, the criterion of
``reproduce_thesis.py``), and wall time.  python-louvain (``engine="louvain"``)
runs on the cases of at most 100 hosts only.

Prints Markdown and saves it to ``/tmp/defaults.md``.  Run::

    .venv/bin/python benchmarks/hierarchy_defaults.py          # ~17 min on 2 cores, ~2 once cached
    .venv/bin/python benchmarks/hierarchy_defaults.py --quick  # under a minute: a smoke test
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

import cluster
import measure
import tomography
from bench_support import (CACHE, command_line, dataset_path, machine_line,
                           simulated_dataset)
from cluster.accuracy import hierarchy_nmi, nmi
from cluster.averaged_edge import averaged_edge_hierarchy
from cluster.spanning_tree import cluster_tree
from tomography.model.dataset import Measurement, read_measurement
from tomography.model.ground_truth import tree_is_consistent
from tomography.model.synthetic import planted_hierarchy
from tomography.model.topology import Topology, read_topology
from tomography.model.truth_labels import labels_at_depth, truth_depth
from tomography.model.weights import mean_weights

OUTPUT = Path("/tmp/defaults.md")
SMALL = 100          # python-louvain only on cases of at most this many hosts
ANALYSIS_SEED = 0    # seed of every hierarchy and tree (as reproduce_thesis.py)
SIM_SEED = 0         # seed of the simulated datasets
EXACT = 1 - 1e-9     # NMI counted as 1

Record = dict[str, Any]


# --------------------------------------------------------------------------- options


@dataclass(frozen=True)
class Option:
    """One setting of the hierarchy's options.

    Attributes
    ----------
    linkage, start, loops, z, engine
        Passed to :func:`cluster.averaged_edge.averaged_edge_hierarchy`.
    """

    linkage: str = "mean"
    start: str = "refined"
    loops: float = 0.5
    z: float = 5.0
    engine: str = "igraph"

    @property
    def label(self) -> str:
        """The options that differ from the defaults, or ``"default"``.

        Examples
        --------
        >>> Option().label, Option(linkage="thesis", start="best").label
        ('default', 'linkage=thesis, start=best')
        """
        keys = ("linkage", "start", "loops", "z", "engine")
        diff = [f"{k}={_fmt(getattr(self, k))}" for k in keys
                if getattr(self, k) != getattr(DEFAULT, k)]
        return ", ".join(diff) or "default"

    def kwargs(self) -> dict[str, Any]:
        """Keyword arguments of :func:`averaged_edge_hierarchy`."""
        return {"linkage": self.linkage, "start": self.start, "loops": self.loops,
                "z": self.z, "engine": self.engine}


def _fmt(value: Any) -> str:
    """``5.0`` as ``5``, ``0.25`` as ``0.25``, strings unchanged."""
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


DEFAULT = Option()
OPTIONS: list[Option] = [
    DEFAULT,
    Option(linkage="thesis"),
    Option(start="best"),
    Option(start="finest"),
    Option(loops=0.0),
    Option(loops=0.25),
    Option(loops=1.0),
    Option(z=3.0),
    Option(z=8.0),
    Option(engine="louvain"),
    # the thesis's linkage with the other starts (the defaults until issue 14)
    Option(linkage="thesis", start="best"),
    Option(linkage="thesis", start="finest"),
    Option(linkage="thesis", z=8.0),
]
# the full cross product of linkage x start (z for refined) x loops with igraph: cheap enough
CROSS: list[Option] = [Option(linkage=lk, start=st, loops=lp, z=z)
                       for lk in ("thesis", "mean")
                       for st, z in (("refined", 3.0), ("refined", 5.0), ("refined", 8.0),
                                     ("best", 5.0), ("finest", 5.0))
                       for lp in (0.0, 0.25, 0.5, 1.0)]
ALL_OPTIONS: list[Option] = OPTIONS + [o for o in CROSS if o not in OPTIONS]
# options shown with the other analysis seeds in the N1 and N2 sections
SEED_OPTIONS: list[Option] = [DEFAULT, Option(z=3.0), Option(z=8.0), Option(start="best"),
                              Option(start="finest"), Option(linkage="thesis"),
                              Option(linkage="thesis", start="best")]
EXTRA_SEEDS = (1, 2, 3, 4)   # analysis seeds of the one-at-a-time options (last n only)


def applies(option: Option, hosts: int) -> bool:
    """Whether an option runs on a case of this many hosts (python-louvain: small cases only)."""
    return option.engine != "louvain" or hosts <= SMALL


# --------------------------------------------------------------------------- datasets


@dataclass(frozen=True)
class Scenario:
    """A simulated scenario of ``datasets/topologies``.

    Attributes
    ----------
    name : str
        Topology name.
    iterations : int
        Broadcasts simulated.
    size : str
        File size per broadcast.
    one_host_clusters : bool
        Every host is its own cluster (tree-5): the tree's flat clustering
        gets a heavy self-loop, as in ``reproduce_thesis.py``; the hierarchy, which
        cannot leave a host alone, is not scored.
    """

    name: str
    iterations: int
    size: str
    one_host_clusters: bool = False

    def path(self, root: Path) -> Path:
        """The cached dataset's directory under ``root``."""
        return dataset_path(self.name, self.iterations, self.size, seed=SIM_SEED, root=root)


SCENARIOS = [
    Scenario("bordeaux-64", 5, "64MiB"),
    Scenario("grenoble-toulouse", 5, "64MiB"),
    Scenario("three-sites", 5, "64MiB"),
    Scenario("four-sites", 15, "64MiB"),
    Scenario("bordeaux-toulouse", 8, "64MiB"),
    Scenario("N1", 10, "32MiB"),
    Scenario("N2", 10, "32MiB"),
    Scenario("tree-5", 30, "10MB", one_host_clusters=True),
]
QUICK_SCENARIOS = [Scenario("bordeaux-toulouse", 3, "8MiB"),
                   Scenario("tree-5", 5, "10MB", one_host_clusters=True)]


@dataclass(frozen=True)
class Planted:
    """A planted hierarchy of :func:`planted_hierarchy`.

    Attributes
    ----------
    branching : tuple of int
    per : int or tuple of int
        Hosts per leaf group.
    kind : {"equal", "uneven", "flat"}
    noise : float
    iterations : int
    seed : int
    """

    branching: tuple[int, ...]
    per: int | tuple[int, ...]
    kind: str
    noise: float
    iterations: int
    seed: int

    @property
    def hosts(self) -> int:
        """Number of hosts."""
        return (int(np.prod(self.branching)) * self.per if isinstance(self.per, int)
                else sum(self.per))

    @property
    def shape(self) -> str:
        """``3x3 of 16`` or ``2x2 of [8, 40, 16, 24]``."""
        per = self.per if isinstance(self.per, int) else list(self.per)
        return f"{'x'.join(map(str, self.branching))} of {per}"

    def measurement(self) -> Measurement:
        """The synthetic dataset (in memory)."""
        return planted_hierarchy(self.branching, self.per if isinstance(self.per, int)
                                 else list(self.per), iterations=self.iterations,
                                 noise=self.noise, seed=self.seed)


SHAPES: list[tuple[tuple[int, ...], int | tuple[int, ...], str]] = [
    ((2, 2), 16, "equal"), ((3, 3), 16, "equal"), ((2, 2, 2), 16, "equal"),
    ((2, 4), 16, "equal"), ((4, 3), 12, "equal"),
    ((2, 2), (8, 40, 16, 24), "uneven"), ((3, 3), (4, 8, 12, 16, 20, 24, 28, 32, 36), "uneven"),
    ((2, 3), (6, 30, 12, 48, 8, 16), "uneven"),
    ((8,), 16, "flat"), ((4,), (8, 16, 24, 48), "flat"),
]


def planted_cases(quick: bool) -> list[Planted]:
    """Every planted case: shapes x noise {0.5, 1} x iterations {3, 10} x seeds {0, 1, 2}.

    Parameters
    ----------
    quick : bool
        Two small shapes, noise 0.5, 3 iterations, seed 0.
    """
    if quick:
        return [Planted(b, p, k, 0.5, 3, 0) for b, p, k in (SHAPES[0], SHAPES[-1])]
    return [Planted(b, p, k, noise, it, seed) for b, p, k in SHAPES
            for noise in (0.5, 1.0) for it in (3, 10) for seed in (0, 1, 2)]


def generate(scenario: Scenario, root: Path) -> float:
    """Simulate a scenario into its cache directory, or finish it; seconds spent.

    Parameters
    ----------
    scenario : Scenario
    root : Path
        Cache directory.

    Returns
    -------
    float
        Wall time of the simulation (about 0 when the dataset was complete).
    """
    t0 = time.perf_counter()
    simulated_dataset(scenario.name, scenario.iterations, scenario.size, seed=SIM_SEED, root=root)
    return time.perf_counter() - t0


@lru_cache(maxsize=4)
def load(path: str, iterations: int) -> tuple[list[str], dict[str, str], list]:
    """Hosts, truth and ``w_n`` for n = 1..N of a cached dataset (cached per worker)."""
    m = read_measurement(path)
    return m.host_names, m.labels, [mean_weights(m, n) for n in range(1, iterations + 1)]


# --------------------------------------------------------------------------- scoring


def describe(found: Sequence, truth: Sequence[str]) -> str:
    """How a partition differs from the truth's finest clusters.

    Parameters
    ----------
    found : sequence of labels
    truth : sequence of str
        Truth labels of the same hosts (paths; the last part names a cluster).

    Returns
    -------
    str
        ``"= truth"``, or the truth clusters cut in pieces and the found
        clusters that span several truth clusters.

    Examples
    --------
    >>> describe([0, 1, 2, 2], ["a/x", "a/x", "b/y", "b/y"])
    'x in 2'
    >>> describe([0, 0, 0, 1], ["a/x", "a/x", "b/y", "b/z"])
    'merged x+y'
    """
    found, truth = np.asarray(found), np.asarray(truth, dtype=object)
    if nmi(truth, found) > EXACT:
        return "= truth"
    short = np.array([str(t).split("/")[-1] for t in truth], dtype=object)
    parts = []
    for t in sorted(set(short)):
        pieces = len(set(found[short == t].tolist()))
        if pieces > 1:
            parts.append(f"{t} in {pieces}")
    for c in sorted(set(found.tolist())):
        spans = sorted(set(short[found == c].tolist()))
        if len(spans) > 1:
            parts.append("merged " + "+".join(spans))
    return "; ".join(parts)


def score(h, truth: dict[str, str]) -> Record:
    """Score a hierarchy against a hierarchical truth.

    Parameters
    ----------
    h : tomography.model.hierarchy.Hierarchy
    truth : dict of host to label path

    Returns
    -------
    dict
        ``levels`` (clusters per level), ``nmi`` (per level, at the matching
        depth), ``depth``, ``matched`` (truth depths equal to some level),
        ``spurious`` (levels matching no depth, not coarser than the truth's
        top), ``above`` (levels matching no depth and coarser than the top:
        post-optimal merges), ``mean_nmi`` (mean NMI of the first ``depth``
        levels), ``best_nmi`` (mean over depths of the best level's NMI),
        ``level1`` (:func:`describe` of level 1).
    """
    hosts = h.hosts
    depth = truth_depth({x: truth[x] for x in hosts})
    truths = {d: labels_at_depth(truth, d, hosts) for d in range(1, depth + 1)}
    top = len(set(truths[1]))
    scores = np.array([[nmi(truths[d], h.labels(k)) for d in range(1, depth + 1)]
                       for k in range(1, h.depth + 1)])
    sizes = [len(level) for level in h.levels]
    unmatched = [k for k in range(h.depth) if not (scores[k] > EXACT).any()]
    table = hierarchy_nmi(h, truth)
    return {"levels": sizes, "nmi": [round(float(x), 3) for x in table["nmi"]],
            "depth": depth,
            "matched": sorted(d + 1 for d in range(depth) if (scores[:, d] > EXACT).any()),
            "spurious": sum(1 for k in unmatched if sizes[k] >= top),
            "above": sum(1 for k in unmatched if sizes[k] < top),
            "mean_nmi": float(table["nmi"].iloc[:min(depth, len(table))].mean()),
            "best_nmi": float(scores.max(axis=0).mean()),
            "level1": describe(h.labels(1), truths[depth]),
            "level1_nmi": float(nmi(truths[depth], h.labels(1)))}


def mixture(labels: Sequence, hosts: Sequence[str], where: dict[str, str], *,
            most: int = 6) -> str:
    """The clusters of a partition that are not whole topology clusters, by composition.

    Parameters
    ----------
    labels : sequence
        Cluster of each host.
    hosts : sequence of str
    where : dict of host to topology cluster (router) name
    most : int, default 6
        Clusters listed at most (largest first).

    Returns
    -------
    str
        ``"{R1:63 R2:57 R3:1} {R2:7 R3:3}"``; ``"-"`` when every cluster is
        a union of whole topology clusters.

    Examples
    --------
    >>> mixture([0, 0, 1, 1], ["a", "b", "c", "d"], {"a": "X", "b": "X", "c": "X", "d": "Y"})
    '{X:2} {X:1 Y:1}'
    """
    total: dict[str, int] = defaultdict(int)
    for x in hosts:
        total[where[x]] += 1
    groups: dict[Any, dict[str, int]] = {}
    for x, lab in zip(hosts, labels):
        groups.setdefault(lab, defaultdict(int))[where[x]] += 1
    mixed = [g for g in groups.values() if any(c != total[k] for k, c in g.items())]
    mixed.sort(key=lambda g: -sum(g.values()))
    text = " ".join("{" + " ".join(f"{k}:{v}" for k, v in sorted(g.items())) + "}"
                    for g in mixed[:most])
    return (text + (" …" if len(mixed) > most else "")) or "-"


def hierarchy_record(W, hosts: list[str], truth: dict[str, str], option: Option,
                     seed: int, where: dict[str, str] | None = None) -> Record:
    """Build one hierarchy, time it and score it.

    ``where`` (host to topology cluster) adds ``level1_mix``, the
    :func:`mixture` of level 1.
    """
    t0 = time.perf_counter()
    h = averaged_edge_hierarchy(W, hosts, seed=seed, **option.kwargs())
    elapsed = time.perf_counter() - t0
    rec = {**score(h, truth), "time": elapsed, "option": option.label, "seed": seed}
    if where is not None:
        rec["level1_mix"] = mixture(h.labels(1), h.hosts, where)
    return rec


# --------------------------------------------------------------------------- tasks


def task_planted(case: Planted, options: list[Option]) -> list[Record]:
    """Every applicable option on one planted hierarchy."""
    m = case.measurement()
    W = mean_weights(m)
    info = {"kind": "planted", "dataset": case.shape, "shape_kind": case.kind,
            "noise": case.noise, "iterations": case.iterations, "data_seed": case.seed,
            "hosts": case.hosts, "n": case.iterations, "last": True}
    return [{**info, **hierarchy_record(W, m.host_names, m.labels, option, ANALYSIS_SEED)}
            for option in options if applies(option, case.hosts)]


def task_scenario(scenario: Scenario, root: str, option: Option, seeds: tuple[int, ...],
                  every_n: bool) -> list[Record]:
    """One option on one simulated scenario, at every n or at the last n only."""
    hosts, truth, weights = load(str(scenario.path(Path(root))), scenario.iterations)
    where = {h.name: h.cluster for h in read_topology(scenario.name).hosts}
    out = []
    ns = range(1, scenario.iterations + 1) if every_n else [scenario.iterations]
    for seed in seeds:
        for n in ns:
            rec = hierarchy_record(weights[n - 1], hosts, truth, option, seed, where)
            out.append({"kind": "scenario", "dataset": scenario.name, "hosts": len(hosts),
                        "n": n, "last": n == scenario.iterations, **rec})
    return out


def tree_text(tree, topo: Topology) -> tuple[str, int]:
    """A tree's edges, named by the topology clusters in each tree cluster; its largest degree."""
    where = {h.name: h.cluster for h in topo.hosts}
    names = {}
    for c in tree.clusters:
        groups = sorted({where[x] for x in c.hosts})
        whole = all(sum(1 for x in c.hosts if where[x] == g) ==
                    sum(1 for h in topo.hosts if h.cluster == g) for g in groups)
        names[c.id] = "+".join(groups) + ("" if whole else "(part)")
    degree: dict[str, int] = defaultdict(int)
    for e in tree.edges:
        degree[e.source] += 1
        degree[e.target] += 1
    text = ", ".join(f"{names[e.source]}–{names[e.target]}" for e in tree.edges)
    return text, max(degree.values(), default=0)


def task_tree(scenario: Scenario, root: str, linkage: str, engine: str) -> list[Record]:
    """The maximum spanning tree of the flat clusters at every n, for one linkage and engine."""
    topo = read_topology(scenario.name)
    hosts, truth, weights = load(str(scenario.path(Path(root))), scenario.iterations)
    finest = labels_at_depth(truth, truth_depth(truth), hosts)
    out = []
    for n, W in enumerate(weights, start=1):
        t0 = time.perf_counter()
        loop = float(W.max()) * 100 if scenario.one_host_clusters else 0.0
        t = cluster_tree(W, hosts, linkage=linkage, engine=engine, seed=ANALYSIS_SEED,
                         self_loop=loop)
        elapsed = time.perf_counter() - t0
        groups = [next(i for i, c in enumerate(t.clusters) if x in c.hosts) for x in hosts]
        consistent = tree_is_consistent(t, topo)
        flat_ok = nmi(finest, groups) > EXACT
        text, max_degree = tree_text(t, topo)
        out.append({"kind": "tree", "dataset": scenario.name, "linkage": linkage,
                    "engine": engine, "n": n, "last": n == scenario.iterations,
                    "clusters": len(t.clusters), "consistent": consistent, "flat_ok": flat_ok,
                    "right": consistent and flat_ok, "edges": text, "max_degree": max_degree,
                    "star": len(t.edges) >= 3 and max_degree == len(t.edges), "time": elapsed})
    return out


def _call(job: tuple) -> list[Record]:
    """Run one job ``(function, args)`` (top level, for the process pool)."""
    function, args = job
    return function(*args)


# --------------------------------------------------------------------------- tables


def first_kept(values: Sequence[bool]) -> int | None:
    """The first n (1-based) from which every value is true, or None.

    Examples
    --------
    >>> first_kept([False, True, True]), first_kept([True, False]), first_kept([])
    (2, None, None)
    """
    for i in range(len(values)):
        if all(values[i:]):
            return i + 1
    return None


def _mean(xs: Iterable[float]) -> float:
    xs = list(xs)
    return float(np.mean(xs)) if xs else float("nan")


def _all(r: Record) -> bool:
    return len(r["matched"]) == r["depth"]


def _firsts(rows: list[Record]) -> list[int | None]:
    """Per scenario, the first n from which every truth depth is a level (seed 0)."""
    out = []
    for name in sorted({r["dataset"] for r in rows}):
        mine = sorted((r for r in rows if r["dataset"] == name and r["seed"] == ANALYSIS_SEED),
                      key=lambda r: r["n"])
        out.append(first_kept([_all(r) for r in mine]))
    return out


def option_cells(records: list[Record], option: Option, scored: list[str]) -> dict[str, str]:
    """The summary's cells of one option (see :func:`summary_table`)."""
    p = [r for r in records if r["kind"] == "planted" and r["option"] == option.label]
    s = [r for r in records if r["kind"] == "scenario" and r["option"] == option.label
         and r["dataset"] in scored]
    last = [r for r in s if r["last"] and r["seed"] == ANALYSIS_SEED]
    seeds = [r for r in s if r["last"]]
    cells: dict[str, str] = {}
    for it in (3, 10):
        q = [r for r in p if r["iterations"] == it]
        cells[f"p_all_{it}"] = f"{sum(map(_all, q))}/{len(q)}" if q else "–"
    cells["p_depths"] = (f"{sum(len(r['matched']) for r in p)}/{sum(r['depth'] for r in p)}"
                         if p else "–")
    cells["p_nmi"] = f"{_mean(r['mean_nmi'] for r in p):.3f}" if p else "–"
    cells["p_spur"] = (f"{_mean(r['spurious'] for r in p):.2f} / {_mean(r['above'] for r in p):.2f}"
                       if p else "–")
    if last:
        firsts = _firsts(s)
        kept = [f for f in firsts if f is not None]
        cells["s_all"] = f"{sum(map(_all, last))}/{len(last)}"
        cells["s_depths"] = (f"{sum(len(r['matched']) for r in last)}/"
                             f"{sum(r['depth'] for r in last)}")
        cells["s_first"] = (f"{len(kept)}/{len(firsts)}" +
                            (f", mean n={np.mean(kept):.1f}" if kept else ""))
        cells["s_nmi"] = f"{_mean(r['mean_nmi'] for r in last):.3f}"
        cells["s_spur"] = f"{sum(r['spurious'] for r in last)} / {sum(r['above'] for r in last)}"
    else:
        cells.update({k: "–" for k in ("s_all", "s_depths", "s_first", "s_nmi", "s_spur")})
    n_seeds = len({r["seed"] for r in seeds})
    cells["s_seeds"] = (f"{sum(map(_all, seeds))}/{len(seeds)}; "
                        f"{sum(r['spurious'] for r in seeds)}" if n_seeds > 1 else "–")
    by = {name: r for name in ("N1", "N2") for r in last if r["dataset"] == name}
    cells["n1"] = ("·".join(map(str, by["N1"]["levels"])) + (" ✓" if _all(by["N1"]) else "")
                   if "N1" in by else "–")
    cells["n2"] = ("·".join(map(str, by["N2"]["levels"])) + (" ✓" if _all(by["N2"]) else "")
                   if "N2" in by else "–")
    big = [r["time"] for r in s if r["dataset"] in ("N1", "N2") and r["seed"] == ANALYSIS_SEED]
    cells["time"] = (f"{_mean(r['time'] for r in p):.2f}; "
                     + (f"{_mean(big):.2f}" if big else "–"))
    return cells


def summary_table(records: list[Record], scored: list[str]) -> list[str]:
    """The main table: one row per option varied one at a time (and the pairs).

    Planted: all hierarchies; scenarios: the simulated ones but tree-5, at
    the last n with seed 0, and at the last n with every analysis seed.
    """
    out = ["| option | planted: all depths (3 it.) | planted: all depths (10 it.) | "
           "planted: depths recovered | planted: mean level NMI | planted: spurious / "
           "above top, per hierarchy | scenarios: all depths (last n) | scenarios: depths "
           "recovered | scenarios: all depths kept from n | scenarios: mean level NMI | "
           "scenarios: spurious / above top | scenarios, 5 analysis seeds: all depths; "
           "spurious | N1 levels | N2 levels | s per hierarchy (planted; N1+N2) |",
           "|---|" + "---|" * 14]
    keys = ("p_all_3", "p_all_10", "p_depths", "p_nmi", "p_spur", "s_all", "s_depths",
            "s_first", "s_nmi", "s_spur", "s_seeds", "n1", "n2", "time")
    for option in OPTIONS:
        c = option_cells(records, option, scored)
        if all(c[k] == "–" for k in keys[:-1]):
            continue
        name = f"**{option.label}**" if option == DEFAULT else option.label
        if option.engine == "louvain":
            name += f" (cases of at most {SMALL} hosts)"
        out.append(f"| {name} | " + " | ".join(c[k] for k in keys) + " |")
    return out


def cross_table(records: list[Record], scored: list[str]) -> list[str]:
    """The full cross product linkage x start (x z) x loops, igraph, seed 0."""
    out = ["| linkage | start | z | loops | planted: all depths (3 it.) | planted: all depths "
           "(10 it.) | planted: spurious / above top | scenarios: all depths (last n) | "
           "scenarios: all depths kept from n | scenarios: spurious / above top | N1 levels | "
           "N2 levels |", "|---|" + "---|" * 11]
    keys = ("p_all_3", "p_all_10", "p_spur", "s_all", "s_first", "s_spur", "n1", "n2")
    for option in CROSS:
        c = option_cells(records, option, scored)
        if all(c[k] == "–" for k in keys):
            continue
        z = _fmt(option.z) if option.start == "refined" else "–"
        bold = "**" if option == DEFAULT else ""
        out.append(f"| {bold}{option.linkage} | {option.start} | {z} | "
                   f"{_fmt(option.loops)}{bold} | " + " | ".join(c[k] for k in keys) + " |")
    return out


def scenario_table(records: list[Record], scenarios: list[Scenario]) -> list[str]:
    """Simulated scenarios: levels at the last n, depths matched, first n keeping them all."""
    names = [s.name for s in scenarios]
    out = ["| option | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for option in OPTIONS:
        cells = []
        for name in names:
            rows = sorted((r for r in records if r["kind"] == "scenario" and r["dataset"] == name
                           and r["option"] == option.label and r["seed"] == ANALYSIS_SEED),
                          key=lambda r: r["n"])
            if not rows:
                cells.append("–")
                continue
            r = rows[-1]
            first = first_kept([_all(x) for x in rows])
            extra = (f" +{r['spurious']}sp" if r["spurious"] else "") + \
                    (f" +{r['above']}up" if r["above"] else "")
            cells.append(f"{r['levels']} {len(r['matched'])}/{r['depth']}"
                         f"{' from n=' + str(first) if first else ''}{extra}")
        if any(c != "–" for c in cells):
            out.append(f"| {option.label} | " + " | ".join(cells) + " |")
    return out


def planted_table(records: list[Record]) -> list[str]:
    """Planted hierarchies by noise, iterations and kind of shape."""
    planted = [r for r in records if r["kind"] == "planted"]
    groups = [(f"noise {n:g}, {i} it.",
               lambda r, n=n, i=i: r["noise"] == n and r["iterations"] == i)
              for n in (0.5, 1.0) for i in (3, 10)]
    groups += [(k, lambda r, k=k: r["shape_kind"] == k) for k in ("equal", "uneven", "flat")]
    groups = [(g, f) for g, f in groups if any(f(r) for r in planted)]
    out = ["| option | " + " | ".join(f"all depths: {g}" for g, _ in groups)
           + " | level-1 NMI (mean) |", "|---|" + "---|" * (len(groups) + 1)]
    for option in OPTIONS:
        p = [r for r in planted if r["option"] == option.label]
        if not p:
            continue
        cells = []
        for _, f in groups:
            q = [r for r in p if f(r)]
            cells.append(f"{sum(map(_all, q))}/{len(q)}" if q else "–")
        cells.append(f"{_mean(r['nmi'][0] for r in p):.3f}")
        out.append(f"| {option.label} | " + " | ".join(cells) + " |")
    return out


def engine_table(records: list[Record]) -> list[str]:
    """igraph against python-louvain on the same small cases."""
    hier = [r for r in records if r["kind"] in ("planted", "scenario")
            and r["seed"] == ANALYSIS_SEED]
    louv = [r for r in hier if r["option"] == Option(engine="louvain").label]
    keys = {(r["kind"], r["dataset"], r.get("noise"), r.get("iterations"), r.get("data_seed"),
             r["n"]) for r in louv}
    ig = [r for r in hier if r["option"] == "default"
          and (r["kind"], r["dataset"], r.get("noise"), r.get("iterations"), r.get("data_seed"),
               r["n"]) in keys]
    out = ["| engine | hierarchies | all depths | depths recovered | mean level NMI | "
           "spurious / above top | same levels as the other engine | s per hierarchy |",
           "|---|---|---|---|---|---|---|---|"]
    index = {(r["kind"], r["dataset"], r.get("noise"), r.get("iterations"), r.get("data_seed"),
              r["n"]): r for r in ig}
    same = sum(1 for r in louv if index.get((r["kind"], r["dataset"], r.get("noise"),
                                             r.get("iterations"), r.get("data_seed"),
                                             r["n"]), {}).get("levels") == r["levels"])
    for name, rows in (("igraph", ig), ("louvain", louv)):
        if not rows:
            continue
        out.append(f"| {name} | {len(rows)} | {sum(map(_all, rows))}/{len(rows)} | "
                   f"{sum(len(r['matched']) for r in rows)}/{sum(r['depth'] for r in rows)} | "
                   f"{_mean(r['mean_nmi'] for r in rows):.3f} | "
                   f"{sum(r['spurious'] for r in rows)} / {sum(r['above'] for r in rows)} | "
                   f"{same}/{len(rows)} | {_mean(r['time'] for r in rows):.3f} |")
    return out


def tree_table(records: list[Record], scenarios: list[Scenario]) -> list[str]:
    """Trees per scenario, linkage and engine: right / consistent from which n."""
    trees = [r for r in records if r["kind"] == "tree"]
    combos = [(lk, en) for en in ("igraph", "louvain") for lk in ("thesis", "mean")
              if any(r["linkage"] == lk and r["engine"] == en for r in trees)]
    out = ["| scenario | flat clusters (last n) | " + " | ".join(
        f"{lk} ({en})" for lk, en in combos) + " |", "|---|---|" + "---|" * len(combos)]
    for s in scenarios:
        cells = []
        clusters = "–"
        for lk, en in combos:
            rows = sorted((r for r in trees if r["dataset"] == s.name and r["linkage"] == lk
                           and r["engine"] == en), key=lambda r: r["n"])
            if not rows:
                cells.append("–")
                continue
            clusters = str(rows[-1]["clusters"]) + (" = truth" if rows[-1]["flat_ok"] else "")
            right = first_kept([r["right"] for r in rows])
            cons = first_kept([r["consistent"] for r in rows])
            text = (f"right from n={right}" if right else
                    f"follows the links from n={cons}" if cons else
                    f"wrong at n={rows[-1]['n']}" + (" (star)" if rows[-1]["star"] else ""))
            cells.append(text)
        out.append(f"| {s.name} | {clusters} | " + " | ".join(cells) + " |")
    return out


def n2_section(records: list[Record]) -> list[str]:
    """Known weakness 1: N2's tree per linkage and n, and its edges at the last n."""
    trees = sorted((r for r in records if r["kind"] == "tree" and r["dataset"] == "N2"
                    and r["engine"] == "igraph"), key=lambda r: r["n"])
    if not trees:
        return []
    ns = sorted({r["n"] for r in trees})
    out = ["| linkage | " + " | ".join(f"n={n}" for n in ns) + " |", "|---|" + "---|" * len(ns)]
    for lk in ("thesis", "mean"):
        rows = {r["n"]: r for r in trees if r["linkage"] == lk}
        cells = [("follows links" if rows[n]["consistent"] else
                  "star" if rows[n]["star"] else "wrong") + f" ({rows[n]['clusters']} cl.)"
                 for n in ns if n in rows]
        out.append(f"| {lk} | " + " | ".join(cells) + " |")
    out.append("")
    for n in sorted({min(4, max(ns)), max(ns)}):
        for lk in ("thesis", "mean"):
            rows = [r for r in trees if r["linkage"] == lk and r["n"] == n]
            if rows:
                out.append(f"- {lk}, n={n}: {rows[0]['edges']}")
    return out


def levels_section(records: list[Record], name: str) -> list[str]:
    """Levels per n of one scenario for every option (seed 0), and the seed check at the last n."""
    rows = [r for r in records if r["kind"] == "scenario" and r["dataset"] == name]
    if not rows:
        return []
    ns = sorted({r["n"] for r in rows})
    out = ["| option | " + " | ".join(f"n={n}" for n in ns)
           + " | level 1 at the last n: NMI vs finest truth; clusters not made of whole "
           "routers' clusters (hosts per router) |",
           "|---|" + "---|" * (len(ns) + 1)]
    for option in OPTIONS:
        mine = {r["n"]: r for r in rows if r["option"] == option.label
                and r["seed"] == ANALYSIS_SEED}
        if not mine:
            continue
        cells = ["·".join(map(str, mine[n]["levels"])) + (" ✓" if _all(mine[n]) else "")
                 for n in ns if n in mine]
        last = mine[max(mine)]
        out.append(f"| {option.label} | " + " | ".join(cells)
                   + f" | {last['level1_nmi']:.3f}; {last.get('level1_mix', '')} |")
    seeded = [r for r in rows if r["last"]]
    seeds = sorted({r["seed"] for r in seeded})
    if len(seeds) > 1:
        out += ["", f"Analysis seeds {', '.join(map(str, seeds))} at n={max(ns)} "
                "(clusters per level; ✓ = every truth depth is a level; in brackets the "
                "NMI of level 1 against the finest truth):", "",
                "| option | " + " | ".join(f"seed {s}" for s in seeds) + " |",
                "|---|" + "---|" * len(seeds)]
        for option in SEED_OPTIONS:
            mine = {r["seed"]: r for r in seeded if r["option"] == option.label}
            if len(mine) < len(seeds):
                continue
            cells = ["·".join(map(str, mine[s]["levels"])) + (" ✓" if _all(mine[s]) else "")
                     + f" ({mine[s]['level1_nmi']:.2f})"
                     for s in seeds]
            out.append(f"| {option.label} | " + " | ".join(cells) + " |")
    return out


# --------------------------------------------------------------------------- main


def code_state() -> str:
    """The commit of the repository and a hash of the library sources actually imported."""
    digest = hashlib.sha1()
    for package in (cluster, measure, tomography):
        for f in sorted(Path(package.__file__).parent.rglob("*.py")):
            digest.update(f.read_bytes())
    repo = Path(__file__).resolve().parent.parent
    mine = hashlib.sha1()
    for name in ("cluster", "measure", "tomography"):
        for f in sorted((repo / name).rglob("*.py")):
            mine.update(f.read_bytes())
    try:
        head = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        head = "unknown"
    where = Path(cluster.__file__).resolve().parent.parent
    same = ("the same sources as" if mine.digest() == digest.digest()
            else "sources differing from")
    return (f"library imported from `{where}` (sources sha1 {digest.hexdigest()[:10]}), "
            f"{same} the working tree of `{repo}` at the end of the run (HEAD {head})")


def main() -> None:
    """Generate (or reuse) the data, run every comparison, print and save the Markdown."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smoke test under a minute")
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--data", type=Path, default=CACHE, help="cache of simulated datasets")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args()
    t_start = time.perf_counter()
    root = args.data / "quick" if args.quick else args.data
    root.mkdir(parents=True, exist_ok=True)
    scenarios = QUICK_SCENARIOS if args.quick else SCENARIOS
    cases = planted_cases(args.quick)

    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        sim_times = dict(zip([s.name for s in scenarios],
                             pool.map(generate, scenarios, [root] * len(scenarios))))
        options = OPTIONS if args.quick else ALL_OPTIONS
        jobs: list[tuple] = []
        for s in sorted(scenarios, key=lambda s: -len(read_topology(s.name).hosts) * s.iterations):
            hosts = len(read_topology(s.name).hosts)
            if not s.one_host_clusters:
                for option in options:
                    if applies(option, hosts):
                        jobs.append((task_scenario, (s, str(root), option, (ANALYSIS_SEED,), True)))
                for option in OPTIONS:
                    if applies(option, hosts):
                        jobs.append((task_scenario, (s, str(root), option, EXTRA_SEEDS, False)))
            for engine in ("igraph", "louvain"):
                if engine == "igraph" or hosts <= SMALL:
                    for linkage in ("thesis", "mean"):
                        jobs.append((task_tree, (s, str(root), linkage, engine)))
        jobs += [(task_planted, (case, options)) for case in cases]
        records = [r for batch in pool.map(_call, jobs) for r in batch]
    total = time.perf_counter() - t_start

    scored = [s.name for s in scenarios if not s.one_host_clusters]
    sim_text = ", ".join(f"{s.name} {s.iterations} x {s.size} ({sim_times[s.name]:.0f} s)"
                         for s in scenarios)
    n_planted = len(cases)
    lines = [
        "# Defaults of the averaged-edge hierarchy",
        "",
        f"Command: `{command_line()}`; {args.workers} workers, {total / 60:.1f} min in all "
        f"(simulation included); {code_state()}. {machine_line(('numpy', 'igraph'))}",
        "",
        f"Simulated datasets (seed {SIM_SEED}, cached in `{root}`; seconds to simulate, 0 when "
        f"cached): {sim_text}. Planted hierarchies: {n_planted} "
        f"({'; '.join(sorted({c.shape + ' (' + c.kind + ')' for c in cases}))}; "
        f"noise {sorted({c.noise for c in cases})}, "
        f"iterations {sorted({c.iterations for c in cases})}, "
        f"seeds {sorted({c.seed for c in cases})}). Analysis seed {ANALYSIS_SEED}. "
        f"Options vary one at a time around the defaults (mean, refined, loops 0.5, z 5, "
        f"igraph); python-louvain on cases of at most {SMALL} hosts only. tree-5 (one host per "
        "cluster) scores the tree only.",
        "",
        "Definitions: *all depths* = every truth depth equals (NMI 1) some level; *depths "
        "recovered* = truth depths equal to a level, of all depths; *mean level NMI* = NMI of "
        "levels 1..depth against the matching truth depth (`hierarchy_nmi`); *spurious* = levels "
        "equal to no truth depth and not coarser than the truth's top level; *above top* = "
        "levels coarser than the truth's top level (the thesis's post-optimal merges, down "
        "to at most two clusters).",
        "",
        "## Summary by option",
        "",
        "N1 / N2 levels: clusters per level at the last n, analysis seed 0 (✓ = every truth "
        "depth is a level). python-louvain's row covers only its small cases (compare "
        "with igraph on the same cases in the engines' table).",
        "",
        *summary_table(records, scored),
        "",
        "## Full cross product (igraph, analysis seed 0)",
        "",
        *cross_table(records, scored),
        "",
        "## Simulated scenarios: hierarchy at the last n",
        "",
        "Cell: clusters per level; truth depths matched / depth; first n from which every "
        "depth is a level and stays one; +k sp = spurious levels, +k up = levels above the top.",
        "",
        *scenario_table(records, [s for s in scenarios if not s.one_host_clusters]),
        "",
        "## Planted hierarchies by case",
        "",
        *planted_table(records),
        "",
        "## Engines on the small cases (default options otherwise)",
        "",
        *engine_table(records),
        "",
        "## Trees (flat clusters, collapse with the linkage, maximum spanning tree)",
        "",
        "*right* = the flat clusters are the truth's finest and every edge splits the hosts "
        "as a router link does (reproduce_thesis.py's criterion); *follows the links* = the second "
        "condition only (`tree_is_consistent`); *star* = one cluster on every edge. The tree "
        "does not depend on start, loops or z.",
        "",
        *tree_table(records, scenarios),
        "",
    ]
    n2 = n2_section(records)
    if n2:
        lines += ["## Known weakness 1: N2's tree", "", *n2, "",
                  "N2's hierarchy per n (✓ = every truth depth is a level):", "",
                  *levels_section(records, "N2"), ""]
    n1 = levels_section(records, "N1")
    if n1:
        lines += ["## Known weakness 2: N1's levels", "",
                  "Clusters per level at each n (✓ = every truth depth is a level); last "
                  "column: level 1 against the 4 router pairs.", "", *n1, ""]
    text = "\n".join(lines)
    print(text)
    args.output.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
