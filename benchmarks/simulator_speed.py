"""Speed of the flow-level simulator: N1 and N2, and how the cost grows.

Measures, on this machine, the wall time of one broadcast iteration:

1. a 64 MiB broadcast on N2 (576 hosts) and on N1 (512 hosts), the bar of
   issue 3 (under 60 s, aim 10 s);
2. against the number of hosts, 64 to 10,048, on a two-level tree of 64-host
   1 Gbit/s clusters joined by 1 Gbit/s links (16 MiB, so the number of
   pieces, 1024 with libtorrent's rule, is the same for every size), each
   in a fresh process, with its peak memory (resident set), and a power law
   fitted to the largest sizes to say what 100,000 hosts would take;
3. against the file size, 8 to 128 MiB, on the 64-host ``bordeaux-64``
   scenario, with libtorrent's automatic piece size and with pieces fixed
   at 256 KiB.

Prints Markdown for ``benchmarks/RESULTS.md``.  Run::

    .venv/bin/python benchmarks/simulator_speed.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from bench_support import command_line, machine_line
from measure.simulator import simulate_broadcast
from measure.swarm import SwarmParams
from tomography.model.topology import Topology, parse_topology, read_topology

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


SIZED = """
import json, resource, sys, time
sys.path.insert(0, sys.argv[2])
from simulator_speed import clusters_tree, one
from tomography.model.topology import read_topology
one(read_topology("tree-5"), 2**20)              # load the compiled kernels first
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
wall, r = one(clusters_tree(int(sys.argv[1])), 16 * 2**20)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"wall": wall, "steps": r.steps, "simulated": r.duration,
                  "peak_mib": peak / 1024, "extra_mib": (peak - base) / 1024}))
"""


def sized(n_hosts: int) -> dict:
    """One 16 MiB broadcast over ``clusters_tree(n_hosts)`` in a fresh process."""
    here = Path(__file__).resolve().parent
    out = subprocess.run([sys.executable, "-c", SIZED, str(n_hosts), str(here)], check=True,
                         capture_output=True, text=True, cwd=here.parent)
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only")
    args = parser.parse_args()
    out = [f"Command: `{command_line()}`. {machine_line(('numpy', 'numba'))} "
           "One broadcast iteration each, seed 0, "
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
    out += ["", "### Cost against hosts (16 MiB, 1024 pieces of 16 KiB, one fresh process each)",
            "", "| hosts | wall time | simulated time | steps | wall time per host | peak memory "
            "(process) | of it for the broadcast |", "|---|---|---|---|---|---|---|"]
    sizes = [64, 128] if args.quick else [64, 128, 256, 512, 1024, 2048, 4096, 8192, 10048]
    runs = {n: sized(n) for n in sizes}
    for n, r in runs.items():
        out.append(f"| {n} | {r['wall']:.1f} s | {r['simulated']:.2f} s | {r['steps']} | "
                   f"{1000 * r['wall'] / n:.1f} ms | {r['peak_mib']:.0f} MiB | "
                   f"{r['extra_mib']:.0f} MiB |")
    big = [n for n in sizes if n >= 2048] or sizes
    if len(big) >= 2:   # power laws through the largest sizes, to 100,000 hosts
        x = np.log(big)
        t_exp, t_c = np.polyfit(x, np.log([runs[n]["wall"] for n in big]), 1)
        m_exp, m_c = np.polyfit(x, np.log([max(runs[n]["extra_mib"], 1.0) for n in big]), 1)
        out += ["", f"Fitted over {big[0]}-{big[-1]} hosts: wall time ~ hosts^{t_exp:.2f}, "
                f"memory for the broadcast ~ hosts^{m_exp:.2f}; at 100,000 hosts: "
                f"**{np.exp(t_c) * 1e5 ** t_exp / 60:.0f} min** and "
                f"**{np.exp(m_c) * 1e5 ** m_exp / 1024:.1f} GiB** per 16 MiB iteration."]
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
