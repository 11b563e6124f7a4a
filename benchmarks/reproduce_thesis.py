"""Reproduce the thesis's scenarios with simulated tomography.

For every reference scenario (the built-in topologies of ``datasets/topologies``):
simulate N broadcast iterations, then for each n = 1..N analyse ``w_n`` with
:func:`tomography.analyze` (``iterations=n``, the CLI's defaults, seed 0, no
confidence: ``resamples=0`` keeps every level, as the thesis scored them and
as the convergence table of ``tomography evaluate`` does):

* flat: Louvain (best level) against the full truth labels;
* hierarchy: the averaged-edge hierarchy, and which depths of the truth
  appear as levels with NMI 1;
* tree: the tree ``tomography tree`` reports, the maximum spanning tree of
  the clusters of the hierarchy's level of Louvain's best partition (level 0,
  the hosts, for the networks of one host per router); right when its
  clusters are the truth's finest clusters and every tree edge splits the
  hosts as a physical link does (:func:`tomography.model.ground_truth.tree_is_consistent`).

Writes the table between the ``reproduce`` markers of ``benchmarks/RESULTS.md``
(and prints it).  Run::

    .venv/bin/python benchmarks/reproduce_thesis.py            # every scenario, ~15 min on 2 cores
    .venv/bin/python benchmarks/reproduce_thesis.py --only tree-5 N1 --iterations 3
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tqdm import tqdm

from bench_support import command_line, machine_line
from cluster.accuracy import nmi
from measure.simulator import simulate
from tomography import analyze
from tomography.model.dataset import read_measurement
from tomography.model.ground_truth import threshold_partitions, tree_is_consistent
from tomography.model.topology import read_topology
from tomography.model.truth_labels import labels_at_depth, truth_depth
from tomography.model.units import parse_size

RESULTS = Path(__file__).with_name("RESULTS.md")
START, END = "<!-- reproduce:start -->", "<!-- reproduce:end -->"


@dataclass(frozen=True)
class Scenario:
    """A scenario and what the thesis reports for it.

    ``flat_depth`` is the depth of the truth labels the thesis's flat
    clustering found (None: the finest); ``flat_n``, ``hier_n`` and
    ``tree_n`` are the iterations by which the thesis had the flat
    partition, every level of the hierarchy and the tree (None: no count
    given, or nothing reported); ``within`` when the thesis says "within n"
    (any n' <= n matches) rather than "after n".
    """

    name: str
    iterations: int
    size: str
    thesis: str
    one_host_clusters: bool = False
    flat_depth: int | None = None
    flat_n: int | None = None
    hier_n: int | None = None
    tree_n: int | None = None
    within: bool = True
    reported: tuple[str, ...] = ("flat",)


SCENARIOS = [
    Scenario("bordeaux-2x2", 5, "64MiB", "one cluster"),
    Scenario("bordeaux-64", 5, "64MiB", "2 clusters, NMI 1 after 2 iterations", flat_n=2,
             within=False),
    Scenario("bordeaux-toulouse", 8, "64MiB", "flat: the 2 sites (NMI ~0.7 against this "
             "truth); hierarchy: Toulouse, Bordeaux split in two", flat_depth=1,
             reported=("flat", "hierarchy")),
    Scenario("grenoble-toulouse", 5, "64MiB", "2 clusters, NMI 1 within 2 iterations", flat_n=2),
    Scenario("three-sites", 5, "64MiB", "3 clusters, NMI 1 within 2 iterations", flat_n=2),
    Scenario("four-sites", 15, "64MiB", "4 clusters, NMI 1 by ~15 iterations", flat_n=15),
    Scenario("N1", 5, "64MiB", "level 1 the 4 router pairs, then the halves; hierarchy right "
             "within 2 iterations, tree within 2", flat_n=2, hier_n=2, tree_n=2,
             reported=("flat", "hierarchy", "tree")),
    Scenario("N2", 15, "64MiB", "level 1: 7 partitions (R1+R2, R3+R4 merged); level 2 "
             "{R1..R4} against {R5..R9}; converges by 14 iterations; tree within 5",
             flat_n=14, hier_n=14, tree_n=5, reported=("flat", "hierarchy", "tree")),
    Scenario("tree-5", 30, "10MB", "maximum spanning tree right within 30 iterations",
             one_host_clusters=True, tree_n=30, reported=("tree",)),
    Scenario("emulated-4x16-fast", 8, "64MiB", "(no thesis figure) 4 clusters", reported=()),
    Scenario("emulated-4x16-slow", 8, "64MiB", "(no thesis figure) 4 clusters", reported=()),
]


def verdict(ours: int | None, thesis: int | None, within: bool) -> str:
    """Matched, faster, slower or not reproduced: our first n against the thesis's.

    Examples
    --------
    >>> verdict(2, 2, True), verdict(1, 2, True), verdict(1, 2, False), verdict(3, 2, True)
    ('matched', 'matched', 'faster', 'slower')
    >>> verdict(None, 2, True), verdict(4, None, True)
    ('not reproduced', 'matched')
    """
    if ours is None:
        return "not reproduced"
    if thesis is None or ours == thesis or (within and ours <= thesis):
        return "matched"
    return "faster" if ours < thesis else "slower"


def first_kept(values: list[bool]) -> int | None:
    """The first n (1-based) from which every value is true, or None."""
    for i in range(len(values)):
        if all(values[i:]):
            return i + 1
    return None


def run(scenario: Scenario, iterations: int | None, seed: int = 1) -> dict:
    topo = read_topology(scenario.name)
    n_iter = iterations or scenario.iterations
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        path = simulate(topo, Path(tmp) / "data", iterations=n_iter,
                        file_size=parse_size(scenario.size), seed=seed)
        m = read_measurement(path)
    sim_time = time.perf_counter() - t0
    hosts = m.host_names
    truth = m.labels
    depth = truth_depth(truth)
    finest = labels_at_depth(truth, depth, hosts)
    target = labels_at_depth(truth, scenario.flat_depth or depth, hosts)
    flat_ok, flat_nmi, depths_ok, tree_ok, levels = [], [], [], [], []
    acceptable = ([p.labels(topo) for p in threshold_partitions(topo) if p.acceptable]
                  if topo.is_tree else [])
    model_ok, model_best = [], []
    for n in range(1, n_iter + 1):
        a = analyze(m, iterations=n, seed=0, resamples=0,
                    tree_level=0 if scenario.one_host_clusters else None, truth=truth)
        flat = a.flat.clustering
        score = nmi(target, flat.labels)
        flat_nmi.append(score)
        flat_ok.append(score > 1 - 1e-9)
        if acceptable:
            against = [nmi([a[h_] for h_ in hosts], flat.labels) for a in acceptable]
            model_best.append((max(against), len(set(acceptable[int(np.argmax(against))].values()))))
            model_ok.append(max(against) > 1 - 1e-9)
        h = a.hierarchy
        table = a.accuracy
        matched = {d for d in range(1, depth + 1)
                   if any(nmi(labels_at_depth(truth, d, hosts), h.labels(k)) > 1 - 1e-9
                          for k in range(1, h.depth + 1))}
        depths_ok.append(matched == set(range(1, depth + 1)))
        levels.append(([len(lv) for lv in h.levels], [round(x, 2) for x in table["nmi"]]))
        if topo.is_tree:
            t = a.tree
            groups = [next(i for i, c in enumerate(t.clusters) if h_ in c.hosts) for h_ in hosts]
            same = nmi(finest, groups) > 1 - 1e-9
            tree_ok.append(same and tree_is_consistent(t, topo))
    wall = time.perf_counter() - t0
    return {"scenario": scenario, "hosts": len(hosts), "iterations": n_iter,
            "flat_first": first_kept(flat_ok), "flat_final": flat_nmi[-1],
            "flat_clusters": flat.n_clusters,          # n = n_iter: every iteration
            "model_first": first_kept(model_ok) if model_ok else None,
            "model_final": model_best[-1] if model_best else None,
            "depths_first": first_kept(depths_ok), "depth": depth, "levels": levels[-1],
            "tree_first": first_kept(tree_ok) if tree_ok else "n/a",
            "tree_final": (tree_ok[-1] if tree_ok else None), "sim_time": sim_time,
            "wall": wall, "durations": [round(float(x), 1) for x in m.iterations["duration_s"]]}


def judge(aspect: str, firsts: list[int | None], thesis: int | None, within: bool) -> str:
    """One aspect's verdict over the seeds, the most frequent first, for the table.

    Examples
    --------
    >>> judge("flat", [2, 2, 3], 2, True)
    'flat: **matched** 2/3, slower 1/3 (median n=2; thesis <=2)'
    >>> judge("tree", [None], 5, True)
    'tree: **not reproduced** 1/1 (never kept; thesis <=5)'
    """
    verdicts = [verdict(n, thesis, within) for n in firsts]
    ranked = sorted(set(verdicts), key=lambda v: (-verdicts.count(v), v))
    counts = ", ".join(f"{'**' + v + '**' if i == 0 else v} {verdicts.count(v)}/{len(verdicts)}"
                       for i, v in enumerate(ranked))
    kept = sorted(n for n in firsts if n)
    mine = f"median n={kept[(len(kept) - 1) // 2]}" if kept else "never kept"
    theirs = f"thesis {'<=' if within else ''}{thesis}" if thesis else "thesis: no count"
    return f"{aspect}: {counts} ({mine}; {theirs})"


def row(runs: list[dict]) -> str:
    """The table's row of a scenario: the first seed in detail, the verdicts over all seeds."""
    r = runs[0]
    s = r["scenario"]
    flat = (f"from n={r['flat_first']}" if r["flat_first"]
            else f"not kept; final NMI {r['flat_final']:.3f}")
    if r["model_final"] is None:
        model = "n/a"
    elif r["model_first"]:
        model = f"NMI 1 from n={r['model_first']} ({r['model_final'][1]}-cluster cut)"
    else:
        model = f"best final NMI {r['model_final'][0]:.3f} ({r['model_final'][1]}-cluster cut)"
    counts, scores = r["levels"]
    hier = (f"all {r['depth']} depths from n={r['depths_first']}" if r["depths_first"]
            else f"not all {r['depth']} depths")
    tree = r["tree_first"]
    tree_text = ("n/a (cycles)" if tree == "n/a" else
                 f"right from n={tree}" if tree else
                 f"wrong at n={r['iterations']}")
    ours = {"flat": [x["flat_first"] for x in runs],
            "hierarchy": [x["depths_first"] for x in runs],
            "tree": [x["tree_first"] if x["tree_first"] != "n/a" else None for x in runs]}
    theirs = {"flat": s.flat_n, "hierarchy": s.hier_n, "tree": s.tree_n}
    judged = "; ".join(judge(aspect, ours[aspect], theirs[aspect], s.within)
                       for aspect in s.reported) or "n/a"
    return (f"| {s.name} | {r['hosts']} | {r['iterations']} x {s.size} | "
            f"{r['flat_clusters']} clusters; NMI 1 {flat} | {model} | {counts} (NMI {scores}); {hier} | "
            f"{tree_text} | {r['wall']:.0f} s | {s.thesis} | {judged} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", nargs="*", help="scenario names (default: all)")
    parser.add_argument("--iterations", type=int, help="override the iterations of each")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--seeds", type=int, default=5,
                        help="simulator seeds 1..K per scenario; the verdicts count them "
                             "(default 5)")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    chosen = [s for s in SCENARIOS if not args.only or s.name in args.only]
    t0 = time.perf_counter()
    jobs = [(s, seed) for s in chosen for seed in range(1, args.seeds + 1)]
    bar = tqdm(total=len(jobs), desc="reproducing", unit="run", file=sys.stderr)
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        futures = {pool.submit(run, s, args.iterations, seed): i
                   for i, (s, seed) in enumerate(jobs)}
        done: list = [None] * len(jobs)
        for count, future in enumerate(as_completed(futures), 1):
            i = futures[future]
            done[i] = future.result()
            bar.set_postfix_str(f"{jobs[i][0].name} seed {jobs[i][1]} done")
            bar.update(1)
    bar.close()
    results = [done[i * args.seeds:(i + 1) * args.seeds] for i in range(len(chosen))]
    total = time.perf_counter() - t0
    lines = [
        f"Command: `{command_line()}`; {args.workers} workers, {total / 60:.1f} min in all. "
        f"{machine_line(('numpy', 'igraph', 'numba'))} Simulator defaults (libtorrent's "
        f"settings); the detail columns are seed 1's, the verdicts count seeds 1-{args.seeds}; "
        "analysis: `tomography.analyze` with the CLI's defaults (seed 0), without confidence "
        "(every level kept); wall time of seed 1's simulation and analysis.",
        "",
        "| scenario | hosts | iterations | flat clustering vs the thesis's partition | flat vs acceptable "
        "Eq 5.3 truths | hierarchy at the last n (levels, NMI per level) | tree | wall time | "
        "thesis | against the thesis |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ] + [row(runs) for runs in results]
    text = "\n".join(lines)
    print(text)
    if not args.no_write and RESULTS.exists():
        body = RESULTS.read_text(encoding="utf-8")
        if START in body and END in body:
            body = re.sub(re.escape(START) + ".*?" + re.escape(END),
                          lambda _: f"{START}\n{text}\n{END}", body, flags=re.S)
        else:
            body += f"\n## Reproduction of the thesis scenarios (simulated)\n\n{START}\n{text}\n{END}\n"
        RESULTS.write_text(body, encoding="utf-8")


if __name__ == "__main__":
    main()
