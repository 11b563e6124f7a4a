"""The block quota against whole broadcasts on the testbed: what each finds, over seeds.

``benchmarks/probes_cost.py`` charges each way of ending a broadcast to the
stop rule's verdict once; this script repeats the measurement over seeds
(each seed draws other roots and peer lists), so that the levels each finds
are a frequency, not one run.  On one emulated network (``--network``,
20 hosts of ``two-sites-demo`` by default), for each seed, interleaved:
``tomography measure bittorrent --until-converged -n 12 --size 8MiB --seed S``
with the default block quota (``--block-quota 128``) and with ``--block-quota
off``, and with each way of choosing roots asked for (``--roots``: spread by
default, random the seeded rotation).  Reported per run: wall time, iterations, the stop rule's last line,
and the supported levels of the final hierarchy with their NMI against the
truth depth each matches best (1.00: a true level; below: a level that is
no level of the truth) and confidence, and the true cluster of each root.

Run as root (the testbed)::

    sudo .venv/bin/python benchmarks/quota_accuracy.py             # ~13 min on 2 cores
    sudo .venv/bin/python benchmarks/quota_accuracy.py --seeds 1 2
    sudo .venv/bin/python benchmarks/quota_accuracy.py --quotas 128 --roots spread random \
        --fixed 8 --keep DIR --seeds 1 2 3 4 5 6 7 8 9 10   # the analysis replayed
    .venv/bin/python benchmarks/quota_accuracy.py --quotas 128 --roots spread random \
        --fixed 8 --analyse DIR --seeds 1 2 3 4 5 6 7 8 9 10  # the same data analysed again
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_support import command_line, machine_line, require_root
from cluster.accuracy import hierarchy_nmi
from cluster.stability import replay_stop_rule
from tomography import analyze
from tomography.model.dataset import read_measurement

TOMOGRAPHY = str(Path(sys.executable).parent / "tomography")


def levels(data: Path, iterations: int | None = None) -> str:
    """The supported levels of the dataset's hierarchy (of its first ``iterations``), finest
    first: clusters, best NMI and confidence."""
    m = read_measurement(data)
    h = analyze(m, iterations=iterations, seed=0).hierarchy
    table = hierarchy_nmi(h, m.labels)
    return " / ".join(f"{int(r.clusters)}c {r.best_nmi:.2f} ({c:.2f})"
                      for r, c in zip(table.itertuples(), h.confidence or [float("nan")] * h.depth))


def replayed(data: Path) -> tuple[str, int]:
    """The stop rule replayed on a dataset measured with a fixed count: its verdict, and the
    iterations it analyses (where it stopped, or all)."""
    m = read_measurement(data)
    replay = replay_stop_rule(m, seed=0)
    n = replay["stops_at"] or len(m.iteration_ids)
    step = replay["steps"][n - 1]
    verdict = (f"stops at {n}: {step['settled']} settled, {step['unstable']} unstable"
               if replay["stops_at"] else f"no stop in {n}")
    return verdict, n


def row(data: Path, quota: str, roots: str, seed: int, wall: float, fixed: bool) -> str:
    """One table row of a kept dataset."""
    if fixed:
        rule, n = replayed(data)
    else:
        n = len(read_measurement(data).iteration_ids)
        rule = "until-converged"
    return (f"| {quota} | {roots} | {seed} | {wall:.0f} | {n} | {rule} | "
            f"{levels(data, n)} | {root_clusters(data)} |")


def root_clusters(data: Path) -> str:
    """The true cluster of each iteration's root, in order."""
    m = read_measurement(data)
    return " ".join(m.labels[r].rsplit("/", 1)[-1] for r in m.iterations["root"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--network", default="two-sites-demo")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    parser.add_argument("--quotas", nargs="+", default=["128", "off"])
    parser.add_argument("--fixed", type=int, metavar="N",
                        help="measure N iterations each (no --until-converged) and replay the "
                             "stop rule on them: the measurement does not depend on the analysis")
    parser.add_argument("--analyse", type=Path, metavar="DIR",
                        help="no measurement: the table of the datasets kept under DIR")
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="keep the datasets under DIR (default: a temporary directory)")
    parser.add_argument("--roots", nargs="+", default=["spread"], choices=("spread", "random"),
                        help="the ways of choosing roots to compare (measure's --roots)")
    args = parser.parse_args()
    header = ("| broadcasts | roots | seed | seconds | iterations | stop rule | levels found "
              "(clusters, best NMI, confidence) | roots' clusters |\n|---|---|---|---|---|---|---|---|")
    if args.analyse:
        print(header)
        for seed in args.seeds:
            for quota, roots in [(q, r) for q in args.quotas for r in args.roots]:
                data = args.analyse / f"{quota}-{roots}-{seed}"
                if (data / "meta.json").exists():
                    wall = float(json.loads((data / "wall.json").read_text())["seconds"])
                    print(row(data, quota, roots, seed, wall, args.fixed is not None), flush=True)
        return
    require_root()
    print(f"Command: `{command_line()}`\n")
    print(machine_line(("libtorrent", "igraph")) + "\n")
    print(header)
    name = f"qa{int(time.time()) % 10000:04d}"
    subprocess.run([TOMOGRAPHY, "testbed", "up", args.network, "--name", name],
                   check=True, capture_output=True)
    try:
        with tempfile.TemporaryDirectory() as scratch:
            tmp = args.keep or scratch
            for seed in args.seeds:
                for quota, roots in [(q, r) for q in args.quotas for r in args.roots]:
                    out = Path(tmp) / f"{quota}-{roots}-{seed}"
                    start = time.monotonic()
                    count = (["-n", str(args.fixed)] if args.fixed else
                             ["--until-converged", "-n", "12"])
                    run = subprocess.run(
                        [TOMOGRAPHY, "measure", "bittorrent", "--testbed", args.network,
                         "--name", name, *count, "--size", "8MiB", "--seed", str(seed),
                         "--block-quota", quota, "--roots", roots, "-o", str(out)],
                        capture_output=True, text=True)
                    wall = time.monotonic() - start
                    if run.returncode != 0:
                        print(f"| {quota} | {roots} | {seed} | failed: "
                              f"{run.stderr.strip()[-200:]} |||||")
                        continue
                    (out / "wall.json").write_text(json.dumps({"seconds": wall}))
                    print(row(out, quota, roots, seed, wall, args.fixed is not None),
                          flush=True)
    finally:
        subprocess.run([TOMOGRAPHY, "testbed", "down", "--name", name], capture_output=True)


if __name__ == "__main__":
    main()
