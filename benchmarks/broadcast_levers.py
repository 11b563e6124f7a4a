"""The cost levers of BitTorrent tomography, simulated at 512 hosts: do they keep the answer?

``benchmarks/probes_cost.py`` measures the levers on the testbed at 20 and
32 hosts; this script checks, with the flow-level simulator, that their
effect is not a property of one small testbed.  Each network is a built-in
scenario grown to ``--hosts-per-cluster`` hosts in every cluster (512 hosts
by default).  For each way of ending a broadcast (``--variants``: whole
broadcasts, a time box, a block quota per downloader) and seed, ``--iterations`` broadcasts of ``--size`` are simulated; then the
stop rule of ``--until-converged`` (:class:`cluster.stability.StableHierarchy`)
is replayed with K = 1 (a rule that stops one iteration sooner) and K = 2
(the default).  Reported per run: simulated seconds per iteration (the
cost of a broadcast; the testbed adds start-up and gaps the simulator does
not model), the stop, and the levels shown at the stop with their NMI
against the truth depth each matches best.

Run::

    .venv/bin/python benchmarks/broadcast_levers.py             # ~20 min on 2 cores
    .venv/bin/python benchmarks/broadcast_levers.py --networks two-sites-demo --seeds 0
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from bench_support import machine_line
from cluster.accuracy import hierarchy_nmi
from cluster.stability import StableHierarchy
from measure.simulator import simulate
from measure.swarm import SwarmParams
from measure.testbed import scaled
from tomography import analyze
from tomography.model.dataset import read_measurement
from tomography.model.topology import Topology, parse_topology, scenario_path
from tomography.model.units import parse_size, parse_time


def grown(name: str, hosts_per_cluster: int, bandwidth: float) -> Topology:
    """The scenario with ``hosts_per_cluster`` hosts in every cluster, capacities scaled."""
    data = yaml.safe_load(scenario_path(name).read_text())
    for cluster in data["clusters"]:
        cluster["hosts"] = hosts_per_cluster
    return scaled(parse_topology(data), bandwidth=bandwidth)


def verdict(data: Path, k: int, iterations: int) -> dict[str, Any]:
    """Where the stop rule with ``k`` stops, and the levels it shows there."""
    m = read_measurement(data)
    rule = StableHierarchy(k, seed=0)
    stop = None
    for n in range(1, iterations + 1):
        if rule.update(m, n):
            stop = n
            break
    levels = hierarchy_nmi(analyze(m, iterations=stop, seed=0).hierarchy, m.labels)
    return {"stop": stop, "levels": [(int(r.clusters), float(r.best_nmi), int(r.best_depth))
                                     for r in levels.itertuples()],
            "right": bool(len(levels)) and bool((levels["best_nmi"] > 0.999).all())}


def variant(text: str) -> SwarmParams:
    """``whole``, ``box:5s`` (a time box) or ``quota:256`` (a block quota per downloader)."""
    kind, _, value = text.partition(":")
    if kind == "whole":
        return SwarmParams()
    if kind == "box":
        return SwarmParams(time_box=parse_time(value))
    if kind == "quota":
        return SwarmParams(block_quota=int(value))
    raise SystemExit(f"unknown variant {text!r}: whole, box:SECONDS or quota:BLOCKS")


def run(topology: Topology, params: SwarmParams, seed: int, args: argparse.Namespace
        ) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "d"
        start = time.monotonic()
        simulate(topology, data, iterations=args.iterations, file_size=parse_size(args.size),
                 seed=seed, params=params)
        wall = time.monotonic() - start
        m = read_measurement(data)
        out = {"seconds_per_iteration": float(m.iterations["duration_s"].mean()),
               "blocks_per_iteration": float(m.transfers["blocks"].sum()) / args.iterations,
               "simulator_wall_s": wall}
        for k in (1, 2):
            out[k] = verdict(data, k, args.iterations)
    return out


def text(v: dict[str, Any]) -> str:
    levels = " / ".join(f"{c}c {s:.2f}@{d}" for c, s, d in v["levels"]) or "none"
    return f"{v['stop'] or 'none'} ({levels})"


def right(v: dict[str, Any]) -> str:
    """Every shown level a truth level (NMI 1), at the stop; "-" without a stop."""
    return "-" if v["stop"] is None else "yes" if v["right"] else "no"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--networks", nargs="+",
                        default=["emulated-4x16-fast:0.1", "two-sites-demo:1"],
                        help="name[:bandwidth_scale] of each built-in scenario")
    parser.add_argument("--hosts-per-cluster", type=int, default=128)
    parser.add_argument("--variants", nargs="+",
                        default=["whole", "quota:128", "quota:256", "box:5s"],
                        help="whole broadcasts, box:SECONDS or quota:BLOCKS")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--iterations", type=int, default=15)
    parser.add_argument("--size", default="8MiB")
    args = parser.parse_args()
    print(machine_line(("numba",)))
    print(f"{args.size} per broadcast, at most {args.iterations} iterations\n")
    print("| network | hosts | broadcast | seed | simulated s per iteration | blocks per "
          "iteration | stop K=2 (levels shown: clusters, NMI@truth depth) | right | "
          "stop K=1 | right |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for spec in args.networks:
        name, _, scale = spec.partition(":")
        topology = grown(name, args.hosts_per_cluster, float(scale or 1.0))
        for text_ in args.variants:
            params = variant(text_)
            for seed in args.seeds:
                r = run(topology, params, seed, args)
                print(f"| {name} x{scale or 1} | {len(topology.hosts)} | {text_} | {seed} | "
                      f"{r['seconds_per_iteration']:.1f} | {r['blocks_per_iteration']:.0f} | "
                      f"{text(r[2])} | {right(r[2])} | {text(r[1])} | {right(r[1])} |",
                      flush=True)


if __name__ == "__main__":
    main()
