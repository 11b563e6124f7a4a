"""Choose K of ``--until-converged``: how long must the flat partition stay unchanged?

For each scenario and seed, simulate N iterations (the flow-level model),
cluster ``w_n`` for n = 1..N (:class:`cluster.stability.StablePartition`
keeps the history) and, for each K, find where the rule "unchanged for K
iterations" stops.  A stop is *premature* when the partition there is not
the one the run ends with (n = N), or has a lower NMI against the truth.
The default K is the smallest with no premature stop.

Run::

    .venv/bin/python benchmarks/stop_rule.py                  # ~10 min on 2 cores
    .venv/bin/python benchmarks/stop_rule.py --only N1 --seeds 1
"""

from __future__ import annotations

import argparse
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from bench_support import machine_line
from cluster.accuracy import nmi
from cluster.stability import StablePartition
from measure.simulator import simulate
from tomography.model.dataset import read_measurement
from tomography.model.topology import read_topology
from tomography.model.truth_labels import labels_at_depth, truth_depth
from tomography.model.units import parse_size

SCENARIOS = ["bordeaux-64", "grenoble-toulouse", "three-sites", "four-sites", "N1", "N2",
             "emulated-4x16-fast", "emulated-4x16-slow", "two-sites-demo"]
KS = (1, 2, 3, 4, 5)


def run(job: tuple[str, int, int, str]) -> dict:
    name, seed, iterations, size = job
    with tempfile.TemporaryDirectory() as tmp:
        simulate(read_topology(name), Path(tmp) / "d", iterations=iterations,
                 file_size=parse_size(size), seed=seed)
        m = read_measurement(Path(tmp) / "d")
    truth = m.labels
    flat_truth = labels_at_depth(truth, truth_depth(truth), m.host_names)
    rule = StablePartition(k=1)
    scores = []
    for n in range(1, iterations + 1):
        rule.update(m, n)
        scores.append(nmi(flat_truth, rule.history[-1]))
    final = rule.history[-1]
    out = {"scenario": name, "seed": seed, "final_nmi": scores[-1], "stops": {}}
    for k in KS:
        stop = next((n for n in range(k + 1, iterations + 1)
                     if all(np.array_equal(rule.history[n - 1 - j], rule.history[n - 1])
                            for j in range(1, k + 1))), None)
        if stop is None:
            out["stops"][k] = (None, False)
        else:
            premature = (not np.array_equal(rule.history[stop - 1], final)
                         or scores[stop - 1] < scores[-1])
            out["stops"][k] = (stop, premature)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", nargs="*", default=SCENARIOS)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--iterations", type=int, default=12)
    parser.add_argument("--size", default="8MiB")
    args = parser.parse_args()
    jobs = [(name, seed, args.iterations, args.size) for name in args.only
            for seed in range(args.seeds)]
    started = time.time()
    with ProcessPoolExecutor(2) as pool:
        results = list(pool.map(run, jobs))
    print(machine_line(("numpy", "igraph", "numba")))
    print(f"{len(jobs)} runs of {args.iterations} simulated iterations of {args.size}, "
          f"{time.time() - started:.0f} s\n")
    print("| scenario | seed | final NMI | " + " | ".join(f"K={k}: stop (premature?)"
                                                       for k in KS) + " |")
    print("|---|---|---|" + "---|" * len(KS))
    for r in results:
        cells = [("never" if s is None else f"{s}" + (" **early**" if p else ""))
                 for s, p in (r["stops"][k] for k in KS)]
        print(f"| {r['scenario']} | {r['seed']} | {r['final_nmi']:.2f} | " + " | ".join(cells)
              + " |")
    print()
    for k in KS:
        early = sum(r["stops"][k][1] for r in results)
        used = [r["stops"][k][0] for r in results if r["stops"][k][0] is not None]
        print(f"K={k}: {early} premature stop(s) of {len(results)}; mean iterations "
              f"{np.mean(used) if used else float('nan'):.1f}; never stopped: "
              f"{sum(r['stops'][k][0] is None for r in results)}")


if __name__ == "__main__":
    main()
