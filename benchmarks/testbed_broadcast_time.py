"""Real BitTorrent broadcasts on the emulated testbed: time against file size and hosts.

The thesis's claim (docs/method.md, cost): one broadcast measures most of the
N(N-1)/2 pairs in time O(M), nearly independent of the number of hosts N.
This script raises ``two-sites-demo`` (or ``--topology``) in network
namespaces and times real libtorrent broadcasts:

* against the file size, on all hosts;
* against the number of hosts (``hosts_per_cluster`` 1, 2, ...), one size;
* side by side, the alternative a user would pick: probing pairs one at a
  time.  One pair's transfer of the same file is timed (a 2-host broadcast
  across the site link, the slowest path) and multiplied by N(N-1)/2.

Each time is also set against two physical limits: file size / slowest NIC,
and file size / the slowest link that separates hosts (the file must cross
every such link at least once).
Needs root (network namespaces, tc).  Run::

    sudo .venv/bin/python benchmarks/testbed_broadcast_time.py            # ~5 min on 2 cores
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from bench_support import machine_line, require_root
from measure import testbed
from measure.coordinator import run_broadcasts
from tomography.model.topology import read_topology
from tomography.model.units import format_size, parse_size


def broadcast_times(bed: testbed.Testbed, size: int, iterations: int,
                    hosts: list[str] | None = None) -> list[float]:
    table = bed.host_table()
    if hosts is not None:
        table = table[table["host"].isin(hosts)]
    with tempfile.TemporaryDirectory() as tmp:
        run = run_broadcasts(table, Path(tmp) / "d", iterations=iterations, file_size=size,
                             launch=bed.command, seed=0, overwrite=True)
    bad = [r.iteration for r in run.iterations if not r.complete]
    if bad:
        raise RuntimeError(f"incomplete iterations {bad}: {run.iterations[bad[0]].notes}")
    return [r.duration for r in run.iterations]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--topology", default="two-sites-demo")
    parser.add_argument("--sizes", nargs="*", default=["4MiB", "8MiB", "16MiB", "32MiB"])
    parser.add_argument("--size", default="16MiB", help="size for the hosts series")
    parser.add_argument("--iterations", type=int, default=3)
    args = parser.parse_args()
    require_root()
    topo = read_topology(args.topology)
    slowest = min(min(h.nic_up, h.nic_down) for h in topo.hosts)
    cut = min(link.capacity for link in topo.links)
    print(machine_line(("libtorrent",)))
    print(f"topology {topo.name}; {args.iterations} iterations per point; physical limit = "
          f"size / slowest NIC ({slowest / 1e6:g} Mbit/s); cut limit = size / slowest "
          f"link ({cut / 1e6:g} Mbit/s)\n")
    print("| hosts | size | broadcast s (mean ± sd) | NIC limit s | cut limit s | x cut limit "
          "| pairwise s | pairwise / broadcast |")
    print("|---|---|---|---|---|---|---|---|")
    counts = sorted({min(k, g.count) for g in topo.clusters for k in (1, 2, 3, 5)})
    series = [(None, s) for s in args.sizes] + [(k, args.size) for k in counts]
    for per_cluster, size_text in series:
        size = parse_size(size_text)
        testbed.down("bench")
        bed = testbed.up(topo, name="bench", hosts_per_cluster=per_cluster)
        try:
            times = broadcast_times(bed, size, args.iterations)
            west = [h.name for h in bed.topology.hosts]
            pair = [west[0], west[-1]]  # first and last host: across the slowest path
            pair_time = float(np.mean(broadcast_times(bed, size, 1, pair)))
        finally:
            testbed.down("bench")
        n = len(bed.topology.hosts)
        limit, cut_limit = size * 8 / slowest, size * 8 / cut
        pairwise = pair_time * n * (n - 1) / 2
        mean = float(np.mean(times))
        print(f"| {n} | {format_size(size)} | {mean:.2f} ± {np.std(times):.2f} | "
              f"{limit:.2f} | {cut_limit:.2f} | {mean / cut_limit:.1f} | {pairwise:.0f} | "
              f"{pairwise / mean:.0f} |", flush=True)
    print(f"\nlatency applied: {bed.latency_applied} ({bed.latency_note})")
    print(f"took {time.process_time():.0f} s CPU in this process")


if __name__ == "__main__":
    main()
