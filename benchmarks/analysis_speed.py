"""Benchmark of the analysis phase, and accuracy of the hierarchy options.

Part 1 times the whole analysis, :func:`tomography.analyze` as the commands
call it but without confidence (``resamples=0``; the whole-process part
times the commands with it), one part at a time: load the dataset from
disk, w_n, flat clustering, averaged-edge hierarchy, the tree of its flat
clusters; on planted datasets of 512, 576 and 4096 hosts, with the igraph
engine and with python-louvain (the reference a user would otherwise pick),
side by side in one run.

Part 2 measures how often the averaged-edge hierarchy recovers every level
of planted hierarchies, for the thesis and the mean linkage, the three
starts, and the share of internal weight kept as self-loops.  It studies
the options of :func:`cluster.averaged_edge.averaged_edge_hierarchy` itself,
so it calls it directly, on raw hierarchies (every level, no confidence).

Prints Markdown for ``benchmarks/RESULTS.md``.  Run::

    make bench            # or: .venv/bin/python benchmarks/analysis_speed.py [--quick]
"""

from __future__ import annotations

import argparse
import itertools
import os
import tempfile
import time
from pathlib import Path

from bench_support import machine_line
from cluster.accuracy import hierarchy_nmi
from cluster.averaged_edge import averaged_edge_hierarchy
from tomography import analyze
from tomography.model.dataset import read_measurement, write_measurement
from tomography.model.synthetic import planted_hierarchy
from tomography.model.weights import mean_weights

SIZES = {512: ((2, 4), 64), 576: ((3, 3), 64), 4096: ((8, 8), 64)}


def analyse(path: Path, engine: str) -> tuple[dict[str, float], dict[str, object]]:
    """Run the whole analysis (:func:`tomography.analyze`, no confidence); return the time
    of each stage and what it found.  The Analysis computes each part when first asked."""
    times: dict[str, float] = {}
    t0 = time.perf_counter()
    m = read_measurement(path)
    t1 = time.perf_counter()
    a = analyze(m, engine=engine, seed=0, resamples=0, truth=m.labels)   # w_n
    t2 = time.perf_counter()
    flat = a.flat.clustering
    t3 = time.perf_counter()
    h = a.hierarchy
    t4 = time.perf_counter()
    t = a.tree
    t5 = time.perf_counter()
    times.update(load=t1 - t0, aggregate=t2 - t1, cluster=t3 - t2, hierarchy=t4 - t3,
                 tree=t5 - t4, total=t5 - t0)
    levels = a.accuracy
    found = {"flat": flat.n_clusters, "levels": [len(lv) for lv in h.levels],
             "level_nmi": [round(x, 3) for x in levels["nmi"]], "tree_edges": len(t.edges)}
    return times, found


def part_speed(iterations: int, sizes: list[int], repeats: int) -> list[str]:
    out = ["### Whole analysis: igraph engine against python-louvain", "",
           f"Planted hierarchies of 64-host groups, {iterations} iterations each, written "
           "to disk and read back, analysed by `tomography.analyze` (seed 0, no confidence: "
           "`resamples=0`); stages: load (read and validate), aggregate (w_n), cluster "
           "(flat Louvain), hierarchy (averaged edge), tree (the hierarchy's level of "
           "Louvain's best partition collapsed, maximum spanning tree). Best of "
           f"{repeats} runs, seconds.", "",
           "| hosts | groups | transfers rows | engine | load | aggregate | cluster | "
           "hierarchy | tree | **total** | levels found | level NMI |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    ratios = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            branching, per = SIZES[n]
            m = planted_hierarchy(branching, per, iterations=iterations, seed=n)
            path = Path(tmp) / f"planted-{n}"
            write_measurement(m, path)
            totals = {}
            for engine in ("igraph", "louvain"):
                best = None
                for _ in range(repeats):
                    times, found = analyse(path, engine)
                    if best is None or times["total"] < best[0]["total"]:
                        best = (times, found)
                times, found = best
                totals[engine] = times["total"]
                out.append(
                    f"| {n} | {'x'.join(map(str, branching))} | {len(m.transfers)} | {engine} | "
                    + " | ".join(f"{times[k]:.2f}" for k in
                                 ("load", "aggregate", "cluster", "hierarchy", "tree"))
                    + f" | **{times['total']:.2f}** | {found['levels']} | {found['level_nmi']} |")
            ratios.append((n, totals["louvain"] / totals["igraph"]))
    out += ["", "Speed-up of the igraph engine over python-louvain (total time ratio): "
            + ", ".join(f"{n} hosts **{r:.1f}x**" for n, r in ratios) + "."]
    return out


def part_accuracy(seeds: int) -> list[str]:
    shapes = [((3, 3), 16), ((2, 2), 16), ((2, 2, 2), 16), ((2, 4), 16), ((4, 3), 12),
              ((2, 2), 64), ((2, 2), [8, 40, 16, 24]), ((3, 3), [4, 8, 12, 16, 20, 24, 28, 32, 36]),
              ((2, 3), [6, 30, 12, 48, 8, 16])]
    iteration_counts = (2, 5)
    options = [("thesis", "refined", 0.5), ("mean", "refined", 0.5),
               ("thesis", "refined", 0.0), ("thesis", "refined", 0.25),
               ("thesis", "refined", 1.0), ("thesis", "refined", 3.0),
               ("thesis", "finest", 0.5), ("mean", "finest", 0.5),
               ("thesis", "best", 0.5), ("mean", "best", 0.5)]
    cases = list(itertools.product(shapes, iteration_counts, range(seeds)))
    stats = {opt: {it: [0, 0, 0.0] for it in iteration_counts} for opt in options}
    for (branching, per), iterations, seed in cases:
        m = planted_hierarchy(branching, per, iterations=iterations, seed=seed)
        W = mean_weights(m)
        depth = len(branching)
        for opt in options:
            linkage, start, loops = opt
            h = averaged_edge_hierarchy(W, m.host_names, linkage=linkage, start=start,
                                        loops=loops, seed=seed)
            table = hierarchy_nmi(h, m.labels)
            exact = {int(r.truth_depth) for r in table.itertuples() if r.nmi > 1 - 1e-9}
            s = stats[opt][iterations]
            s[0] += int(exact >= set(range(1, depth + 1)))
            s[1] += 1
            s[2] += float(table["nmi"].iloc[: min(depth, len(table))].mean())
    shape_text = "; ".join(f"{'x'.join(map(str, b))} of {p}" for b, p in shapes)
    out = ["### Hierarchy accuracy: starts, linkages and self-loops", "",
           f"Planted hierarchies ({shape_text} hosts per leaf group; affinity ratio 4 per "
           f"level, log-normal noise 0.5, 40 random peers per receiver), {seeds} seeds each. "
           "'All levels' = every level of the truth appears as a hierarchy level with "
           "NMI 1; 'mean NMI' = mean NMI of the first levels against the matching truth "
           "depths.", "",
           "'loops' = a collapsed cluster's self-loop as a share of its strongest tie "
           "to another cluster.", "",
           "| linkage | start | loops | all levels (2 it.) | mean NMI (2 it.) | "
           "all levels (5 it.) | mean NMI (5 it.) |", "|---|---|---|---|---|---|---|"]
    for opt in options:
        cells = []
        for it in iteration_counts:
            ok, total, nmi_sum = stats[opt][it]
            cells += [f"{ok}/{total}", f"{nmi_sum / total:.3f}"]
        out.append(f"| {opt[0]} | {opt[1]} | {opt[2]} | " + " | ".join(cells) + " |")
    return out


HERE = Path(__file__).resolve().parent


def _run(command: list[str]) -> tuple[float, float]:
    """Wall seconds and peak resident memory (MiB) of one command (its own process)."""
    import subprocess

    t0 = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - t0
    if status != 0:
        raise RuntimeError(f"{' '.join(command)} failed with status {status}")
    return wall, usage.ru_maxrss / 1024


def part_reference(shapes: list[tuple[tuple[int, ...], int, int]], repeats: int,
                   previous: Path | None = None, commands: list[str] | None = None) -> list[str]:
    """Whole ``tomography`` processes against a user's short script, side by side.

    With ``previous`` (a checkout of an earlier commit), its ``tomography``
    commands run too, under the same interpreter, for the ratio of this
    version to that one; ``commands`` keeps only those commands (and the
    scripts they are compared with).
    """
    import sys

    tool = [sys.executable, "-m", "tomography"]
    # the checkout first on the path: it shadows the installed (editable) package
    old_tool = ([sys.executable, "-c", f"import runpy, sys; sys.path.insert(0, {str(previous)!r}); "
                 "runpy.run_module('tomography', run_name='__main__')"] if previous else None)
    script = [sys.executable, str(HERE / "reference_louvain.py")]
    out = ["### Against a short script, whole processes", "",
           "Planted hierarchies, 35 random peers per receiver, written to disk; each command "
           "is a fresh process (imports, reading and validating the files, analysis, "
           "confidence, output: a hierarchy's from 64 resampled separations of all n "
           "iterations and 64 of the first n - 1, the levels on every core; a tree's and a flat "
           "clustering's from 4 resamples on every core). The reference is "
           "`benchmarks/reference_louvain.py`: pandas read, SciPy matrix, one igraph Louvain "
           "(one flat clustering, no validation, no confidence); for `evaluate`, whose "
           "convergence table analyses every w_n, its `--every-n` form (a Louvain and "
           f"scikit-learn's NMI for every n). Best of {repeats}; peak resident memory of the "
           "largest process (forked workers share the parent's pages).", "",
           "| hosts | iterations | transfers rows | command | seconds | ratio to script | "
           "peak MiB |", "|---|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as tmp:
        for branching, per, iterations in shapes:
            m = planted_hierarchy(branching, per, iterations=iterations, peers=35, seed=14)
            path = Path(tmp) / f"planted-{m.n_hosts}-{iterations}"
            write_measurement(m, path)
            rows = len(m.transfers)
            del m
            # (command, the script it is compared with)
            runs = {"reference script": (script + [str(path)], "reference script"),
                    "reference script --every-n": (script + [str(path), "--every-n"],
                                                   "reference script --every-n"),
                    "tomography cluster": (tool + ["cluster", str(path)], "reference script"),
                    "tomography hierarchy": (tool + ["hierarchy", str(path)],
                                             "reference script"),
                    "tomography tree": (tool + ["tree", str(path)], "reference script"),
                    "tomography evaluate": (tool + ["evaluate", str(path)],
                                            "reference script --every-n")}
            if old_tool and branching_hosts(branching, per) <= 4096:   # minutes at 16384
                for command in ("hierarchy", "evaluate"):
                    runs[f"previous: tomography {command}"] = (
                        old_tool + [command, str(path)], runs[f"tomography {command}"][1])
            if commands:   # the commands asked for, and the scripts they are compared with
                kept = {name for name in runs
                        if any(name.endswith(f"tomography {c}") for c in commands)}
                runs = {name: run for name, run in runs.items()
                        if name in kept or name in {runs[k][1] for k in kept}}
            best = {name: min((_run(cmd) for _ in range(repeats)), key=lambda r: r[0])
                    for name, (cmd, _) in runs.items()}
            for name, (wall, peak) in best.items():
                base = best[runs[name][1]][0]
                out.append(f"| {branching_hosts(branching, per)} | {iterations} | {rows} | "
                           f"{name} | {wall:.2f} | {wall / base:.2f}x | {peak:.0f} |")
    return out


def branching_hosts(branching: tuple[int, ...], per: int) -> int:
    """Hosts of a planted hierarchy with ``per`` hosts per leaf group."""
    total = per
    for b in branching:
        total *= b
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="small sizes and one seed, to check the script runs")
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--reference-only", action="store_true",
                        help="only the comparison of whole processes with the short script")
    parser.add_argument("--reference-hosts", type=int, nargs="+", metavar="N",
                        help="only these sizes in the comparison with the script (4096, 16384)")
    parser.add_argument("--commands", nargs="+", metavar="COMMAND",
                        help="only these tomography commands in the comparison (hierarchy, ...)")
    parser.add_argument("--previous", type=Path, metavar="CHECKOUT",
                        help="also time the commands of an earlier version, checked out in "
                             "this directory (git worktree add CHECKOUT COMMIT)")
    args = parser.parse_args()
    sizes = [512] if args.quick else [512, 576, 4096]
    lines = [machine_line(("igraph", "python-louvain", "numpy", "scipy")), ""]
    shapes = ([((4, 8), 8, 5)] if args.quick else
              [((4, 8), 128, 5), ((4, 8), 128, 10), ((4, 8), 512, 5)])
    if args.reference_hosts:
        shapes = [s for s in shapes if branching_hosts(s[0], s[1]) in args.reference_hosts]
    lines += part_reference(shapes, repeats=1 if args.quick else 2,
                            previous=args.previous, commands=args.commands) + [""]
    if args.reference_only:
        print("\n".join(lines))
        return
    lines += part_speed(args.iterations, sizes, repeats=1 if args.quick else 2)
    lines += [""] + part_accuracy(seeds=1 if args.quick else 3)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
