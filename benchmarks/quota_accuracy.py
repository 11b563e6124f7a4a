"""The block quota against whole broadcasts on the testbed: what each finds, over seeds.

``benchmarks/probes_cost.py`` charges each way of ending a broadcast to the
stop rule's verdict once; this script repeats the measurement over seeds
(each seed draws other roots and peer lists), so that the levels each finds
are a frequency, not one run.  On one emulated network (``--network``,
20 hosts of ``two-sites-demo`` by default), for each seed, interleaved:
``tomography measure bittorrent --until-converged -n 12 --size 8MiB --seed S``
with the default block quota (``--block-quota 128``) and with ``--block-quota
off``.  Reported per run: wall time, iterations, the stop rule's last line,
and the supported levels of the final hierarchy with their NMI against the
truth depth each matches best (1.00: a true level; below: a level that is
no level of the truth).

Run as root (the testbed)::

    sudo .venv/bin/python benchmarks/quota_accuracy.py             # ~13 min on 2 cores
    sudo .venv/bin/python benchmarks/quota_accuracy.py --seeds 1 2
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_support import command_line, machine_line, require_root
from cluster.accuracy import hierarchy_nmi
from tomography import analyze
from tomography.dataset import read_measurement

TOMOGRAPHY = str(Path(sys.executable).parent / "tomography")


def levels(data: Path) -> str:
    """The supported levels of the dataset's hierarchy, finest first: clusters and best NMI."""
    m = read_measurement(data)
    table = hierarchy_nmi(analyze(m, seed=0).hierarchy, m.labels)
    return " / ".join(f"{int(r.clusters)}c {r.best_nmi:.2f}" for r in table.itertuples())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--network", default="two-sites-demo")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    parser.add_argument("--quotas", nargs="+", default=["128", "off"])
    args = parser.parse_args()
    require_root()
    print(f"Command: `{command_line()}`\n")
    print(machine_line(("libtorrent", "igraph")) + "\n")
    print("| broadcasts | seed | seconds | iterations | stop rule | levels found "
          "(clusters, best NMI) |")
    print("|---|---|---|---|---|---|")
    name = f"qa{int(time.time()) % 10000:04d}"
    subprocess.run([TOMOGRAPHY, "testbed", "up", args.network, "--name", name],
                   check=True, capture_output=True)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for seed in args.seeds:
                for quota in args.quotas:
                    out = Path(tmp) / f"{quota}-{seed}"
                    start = time.monotonic()
                    run = subprocess.run(
                        [TOMOGRAPHY, "measure", "bittorrent", "--testbed", args.network,
                         "--name", name, "--until-converged", "-n", "12", "--size", "8MiB",
                         "--seed", str(seed), "--block-quota", quota, "-o", str(out)],
                        capture_output=True, text=True)
                    wall = time.monotonic() - start
                    if run.returncode != 0:
                        print(f"| {quota} | {seed} | failed: {run.stderr.strip()[-200:]} |||")
                        continue
                    printed = (run.stderr + run.stdout).splitlines()
                    rule = next((line.split(": ", 1)[-1] for line in printed
                                 if line.startswith("stop rule") and "converged" in line),
                                "no stop")
                    n = len(read_measurement(out).iteration_ids)
                    print(f"| {quota} | {seed} | {wall:.0f} | {n} | {rule} | {levels(out)} |",
                          flush=True)
    finally:
        subprocess.run([TOMOGRAPHY, "testbed", "down", "--name", name], capture_output=True)


if __name__ == "__main__":
    main()
