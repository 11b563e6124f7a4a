"""Speed of the flow-level simulator: N1 and N2, and how the cost grows.

Measures, on this machine, the wall time of one broadcast iteration:

1. a 64 MiB broadcast on N2 (576 hosts) and on N1 (512 hosts), the bar of
   issue 3 (under 60 s, aim 10 s);
2. against the number of hosts, 64 to 1024, on a two-level tree of 64-host
   1 Gbit/s clusters joined by 1 Gbit/s links (16 MiB, so the number of
   pieces, 2048 with libtorrent's rule, is the same for every size);
3. against the file size, 8 to 128 MiB, on the 64-host ``bordeaux-64``
   scenario, with libtorrent's automatic piece size and with pieces fixed
   at 256 KiB.

Prints Markdown for ``benchmarks/RESULTS.md``.  Run::

    .venv/bin/python benchmarks/simulator.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import time

from measure.simulator import simulate_broadcast
from measure.swarm import SwarmParams
from tomography.dataset import software_versions
from tomography.topology import Topology, parse_topology, read_topology

MiB = 2**20


def clusters_tree(n_hosts: int) -> Topology:
    """``n_hosts / 64`` clusters of 64 hosts, leaf routers on a core router, all 1 Gbit/s."""
    k = max(1, n_hosts // 64)
    return parse_topology({
        "name": f"tree-{n_hosts}", "routers": ["core"] + [f"L{i}" for i in range(k)],
        "host_defaults": {"nic": "1Gbit/s", "latency": "50us"},
        "links": [{"between": ["core", f"L{i}"], "capacity": "1Gbit/s", "latency": "100us"}
                  for i in range(k)],
        "clusters": [{"name": f"c{i}", "router": f"L{i}", "hosts": min(64, n_hosts)}
                     for i in range(k)]})


def one(topology: Topology, size: int, params: SwarmParams = SwarmParams()) -> tuple[float, object]:
    hosts = sorted(h.name for h in topology.hosts)
    t0 = time.perf_counter()
    result = simulate_broadcast(topology, hosts, hosts[0], size, params=params, seed=0)
    return time.perf_counter() - t0, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only")
    args = parser.parse_args()
    v = software_versions()
    out = [f"Command: `.venv/bin/python benchmarks/simulator.py`; {os.cpu_count()} cores, "
           f"Python {v['python']}, numpy {v['numpy']}. One broadcast iteration each, seed 0, "
           "root the first host; libtorrent's defaults (8+1 upload slots, 15 s unchoke "
           "interval, automatic piece size), peer list 35.", ""]
    out += ["### The thesis networks, 64 MiB", "",
            "| network | hosts | pieces | wall time | simulated time | steps | bar / aim |",
            "|---|---|---|---|---|---|---|"]
    for name in ([] if args.quick else ["N2", "N1"]):
        topo = read_topology(name)
        wall, r = one(topo, 64 * MiB)
        out.append(f"| {name} | {len(topo.hosts)} | {64 * MiB // SwarmParams().piece_bytes(64 * MiB)} "
                   f"| **{wall:.1f} s** | {r.duration:.1f} s | {r.steps} | 60 s / 10 s |")
    out += ["", "### Cost against hosts (16 MiB, 1024 pieces of 16 KiB)", "",
            "| hosts | wall time | simulated time | steps | wall time per host |",
            "|---|---|---|---|---|"]
    for n in ([64, 128] if args.quick else [64, 128, 256, 512, 1024]):
        wall, r = one(clusters_tree(n), 16 * MiB)
        out.append(f"| {n} | {wall:.1f} s | {r.duration:.2f} s | {r.steps} | "
                   f"{1000 * wall / n:.1f} ms |")
    out += ["", "### Cost against file size (bordeaux-64, 64 hosts)", "",
            "| file | pieces (automatic) | wall time | simulated | pieces (256 KiB) | wall time | "
            "simulated |", "|---|---|---|---|---|---|---|"]
    topo = read_topology("bordeaux-64")
    for size in ([8, 16] if args.quick else [8, 16, 32, 64, 128]):
        auto = SwarmParams()
        fixed = SwarmParams(piece_size=256 * 1024)
        w1, r1 = one(topo, size * MiB, auto)
        w2, r2 = one(topo, size * MiB, fixed)
        out.append(f"| {size} MiB | {size * MiB // auto.piece_bytes(size * MiB)} | {w1:.1f} s | "
                   f"{r1.duration:.2f} s | {size * 4} | {w2:.1f} s | {r2.duration:.2f} s |")
    print("\n".join(out))


if __name__ == "__main__":
    main()
