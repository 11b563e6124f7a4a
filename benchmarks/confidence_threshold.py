"""Justify the support threshold of the confidence: true levels against spurious ones.

Every level of the hierarchy gets a confidence (:mod:`cluster.confidence`);
levels below :data:`cluster.confidence.SUPPORT_THRESHOLD` are not printed by
default.  This script measures, over the planted hierarchies and the
simulated scenarios of ``benchmarks/hierarchy_defaults.py`` (the same cases
and cached datasets), the confidence of every level with all levels kept, and
labels each level by the truth: **true** when it matches some depth of the truth
(NMI >= 0.95), **near** when it comes close (0.8 to 0.95: a real level seen
through few iterations), **spurious** otherwise (a split of a homogeneous
group, or a merge no truth has, such as equal sites paired by a near tie).
Levels above the first also need their joined clusters
:data:`cluster.confidence.MERGE_GAP` times closer to each other than to the
rest.  For each candidate threshold, and each candidate minimum gap, it
counts the true levels kept and the spurious levels hidden.  Planted cases are analysed at their own iterations (3 and
10), scenarios at n = 2, 3, 5 and their last n.

Prints Markdown and saves it to ``/tmp/confidence.md``.  Run::

    .venv/bin/python benchmarks/confidence_threshold.py          # ~10 min on 2 cores, data cached
    .venv/bin/python benchmarks/confidence_threshold.py --quick  # a smoke test
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from bench_support import CACHE, command_line, machine_line
from cluster.accuracy import nmi
from cluster.averaged_edge import averaged_edge_hierarchy
from cluster.confidence import (MERGE_GAP, SUPPORT_THRESHOLD, IterationSampler,
                                hierarchy_confidence)
from hierarchy_defaults import (QUICK_SCENARIOS, SCENARIOS, Planted, Scenario, generate,
                                planted_cases)
from tomography.dataset import Measurement, read_measurement
from tomography.truth_labels import labels_at_depth, truth_depth

OUTPUT = Path("/tmp/confidence.md")
TRUE, NEAR = 0.95, 0.8
THRESHOLDS = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
GAPS = (0.0, 1.2, 1.3, 1.4, 1.5, 1.7, 2.0)

Level = tuple[str, str, int, int, float, float, str, float]
"""(source, case, n, clusters, best NMI against the truth, confidence, origin, gap)."""


def levels_of(m: Measurement, n: int | None, source: str, case: str) -> list[Level]:
    """Every level of the hierarchy of ``w_n`` with its confidence and its best NMI."""
    sampler = IterationSampler.from_measurement(m, iterations=n)
    h = averaged_edge_hierarchy(sampler.graph, m.host_names, seed=0)
    h = hierarchy_confidence(h, sampler, seed=0, n_jobs=1)
    hosts = m.host_names
    depth = truth_depth({x: m.labels[x] for x in hosts})
    truths = [labels_at_depth(m.labels, d, hosts) for d in range(1, depth + 1)]
    origins = h.params.get("origins", ["?"] * h.depth)
    return [(source, case, n or len(m.iteration_ids), len(h.levels[k]),
             max(nmi(t, h.labels(k + 1)) for t in truths), h.confidence[k], origins[k],
             h.gap(k + 1) if h.gap(k + 1) is not None else np.inf)
            for k in range(h.depth)]


def task_planted(case: Planted) -> list[Level]:
    """The levels of one planted case."""
    label = f"{case.kind} {case.shape}, noise {case.noise}, seed {case.seed}"
    return levels_of(case.measurement(), None, "planted", label)


def task_scenario(scenario: Scenario, root: str) -> list[Level]:
    """The levels of one simulated scenario at n = 2, 3, 5 and its last n."""
    generate(scenario, Path(root))
    m = read_measurement(scenario.path(Path(root)))
    last = len(m.iteration_ids)
    out = []
    for n in sorted({n for n in (2, 3, 5, last) if n <= last}):
        out += levels_of(m, n, "simulated", scenario.name)
    return out


def kind(best: float) -> str:
    """true, near or spurious, by the level's best NMI against the truth."""
    return "true" if best >= TRUE else "near" if best >= NEAR else "spurious"


def _row(label: str, kept: np.ndarray, kinds: np.ndarray) -> str:
    true_kept = int((kept & (kinds == "true")).sum())
    near_kept = int((kept & (kinds == "near")).sum())
    hidden = int((~kept & (kinds == "spurious")).sum())
    wrong = int((~kept & (kinds == "true")).sum() + (kept & (kinds == "spurious")).sum())
    return (f"| {label} | {true_kept}/{int((kinds == 'true').sum())} | "
            f"{near_kept}/{int((kinds == 'near').sum())} | "
            f"{hidden}/{int((kinds == 'spurious').sum())} | {wrong} |")


def table(levels: list[Level]) -> list[str]:
    """Kept and hidden levels per threshold and per minimum gap, and the confidence of each kind."""
    kinds = np.array([kind(lv[4]) for lv in levels])
    conf = np.array([lv[5] for lv in levels])
    gap = np.array([lv[7] for lv in levels])
    head = ["true kept | near kept | spurious hidden | wrong decisions |", "---|---|---|---|"]
    out = [f"| threshold (gap {MERGE_GAP}) | " + head[0], "|---|" + head[1]]
    for t in THRESHOLDS:
        mark = " (default)" if t == SUPPORT_THRESHOLD else ""
        out.append(_row(f"{t}{mark}", (conf >= t) & (gap >= MERGE_GAP), kinds))
    out += ["", f"| minimum gap (threshold {SUPPORT_THRESHOLD}) | " + head[0], "|---|" + head[1]]
    for g in GAPS:
        mark = " (default)" if g == MERGE_GAP else " (none)" if g == 0 else ""
        out.append(_row(f"{g}{mark}", (conf >= SUPPORT_THRESHOLD) & (gap >= g), kinds))
    out += ["", "| kind | levels | confidence: min | 10 % | median | 90 % | max |",
            "|---|---|---|---|---|---|---|"]
    for k in ("true", "near", "spurious"):
        c = conf[kinds == k]
        if len(c):
            q = np.quantile(c, [0, 0.1, 0.5, 0.9, 1])
            out.append(f"| {k} | {len(c)} | " + " | ".join(f"{x:.2f}" for x in q) + " |")
    return out


def worst(levels: list[Level]) -> list[str]:
    """The levels the default threshold gets wrong, to read one by one."""
    out = ["| source | case | n | clusters | origin | best NMI | confidence | gap | verdict |",
           "|---|---|---|---|---|---|---|---|---|"]
    for source, case, n, k, best, c, origin, gap in levels:
        shown = c >= SUPPORT_THRESHOLD and gap >= MERGE_GAP
        wrong = (kind(best) == "true" and not shown) or (kind(best) == "spurious" and shown)
        if wrong:
            verdict = "true, hidden" if kind(best) == "true" else "spurious, shown"
            out.append(f"| {source} | {case} | {n} | {k} | {origin} | {best:.3f} | {c:.2f} | "
                       f"{gap:.2f} | {verdict} |")
    return out if len(out) > 2 else ["No level is on the wrong side of the default threshold."]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="two planted cases, one scenario")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    args = parser.parse_args()
    t0 = time.perf_counter()
    planted = planted_cases(args.quick)
    scenarios = [s for s in (QUICK_SCENARIOS if args.quick else SCENARIOS)
                 if not s.one_host_clusters]
    root = str(CACHE / "quick") if args.quick else str(CACHE)
    levels: list[Level] = []
    with ProcessPoolExecutor(args.jobs) as pool:
        jobs = ([pool.submit(task_scenario, s, root) for s in scenarios]
                + [pool.submit(task_planted, c) for c in planted])
        for job in jobs:
            levels += job.result()
    lines = [f"Command: `{command_line()}` ({time.perf_counter() - t0:.0f} s, {args.jobs} "
             f"workers). {machine_line(('numpy', 'igraph'))} "
             f"{len(planted)} planted cases at their own iterations and {len(scenarios)} simulated "
             f"scenarios at n = 2, 3, 5 and their last n: {len(levels)} levels. A level is true "
             f"at NMI >= {TRUE} with some depth of the truth, near from {NEAR}, spurious below.",
             "", *table(levels), "", "Planted only:", "",
             *table([lv for lv in levels if lv[0] == "planted"]), "", "Simulated only:", "",
             *table([lv for lv in levels if lv[0] == "simulated"]), "",
             "Levels on the wrong side of the default threshold:", "", *worst(levels)]
    text = "\n".join(lines)
    OUTPUT.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
