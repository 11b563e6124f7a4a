"""The cost claim of the method, charged to the stop rule: BitTorrent against the probe meshes.

On each emulated network (by default ``two-sites-demo``, 20 hosts, and
``emulated-4x16-fast`` at 8 hosts per cluster with capacities x0.1, 32 hosts
in 4 clusters), raised once, side by side in one run:

(a) BitTorrent broadcasts of 8 MiB with the defaults of ``tomography measure
    bittorrent`` (each ended once every downloader holds ``--block-quota``
    128 blocks) until the stop rule of ``--until-converged`` says the
    hierarchy has settled: the cost is the whole call's wall time
    (preflight, peers' start-up, every broadcast, the stop rule's analysis
    after each), the accuracy the NMI of every level of its verdict (the
    settled levels; those it reports unstable apart);
(b) the same with a time box of 5 s instead of the quota, and with whole
    broadcasts (``--block-quota off``): the other ways of ending a broadcast;
(c) the exclusive iperf3 mesh (one test at a time, perfSONAR's rule), one
    way per pair and (d) both ways;
(e) the rounds iperf3 mesh (disjoint pairs at once), one way per pair;
(f) optionally (``--netpipe``) a NetPIPE mesh, one way per pair.

Each mesh's cost is its wall time (agents' start-up included), its accuracy
the NMI of every level of its hierarchy (``tomography.analyze``'s, as
``tomography hierarchy`` shows it).  The machine's load average is printed
before and after each part.  The crossover sizes come from the measured
figures: a mesh costs its per-test time times N(N-1)/2 (exclusive) or its
per-round time times N-1 rounds (rounds), BitTorrent its measured cost
(nearly constant in N at these sizes: the quota bounds each iteration).
Needs root.  Run::

    sudo .venv/bin/python benchmarks/probes_cost.py            # ~55 min on 2 cores
"""

from __future__ import annotations

import argparse
import json
import math
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_support import machine_line, require_root
import numpy as np

from cluster.accuracy import hierarchy_nmi, nmi
from cluster.stability import StableHierarchy
from measure import testbed
from measure.coordinator import run_broadcasts
from measure.mesh import MeshOptions, run_mesh
from measure.swarm import SwarmParams
from measure.transport import ProcessTransport
from tomography import analyze
from measure.swarm import MEASURE_QUOTA
from tomography.model.dataset import read_measurement
from tomography.model.topology import read_topology
from tomography.model.truth_labels import labels_at_depth, truth_depth
from tomography.model.units import parse_size, parse_time

MAX_ITERATIONS = 15
"""The most iterations a BitTorrent run may take before the stop rule's verdict."""


def load() -> str:
    """The 1-minute load average, as ``top`` shows it."""
    return f"{os.getloadavg()[0]:.2f}"


def accuracy(data: Path, iterations: int | None = None) -> dict[str, Any]:
    """NMI of the flat partition against the finest truth and of every shown level."""
    a = analyze(data, iterations=iterations, seed=0)
    truth = a.measurement.labels
    finest = labels_at_depth(truth, truth_depth(truth), a.hosts)
    levels = hierarchy_nmi(a.hierarchy, truth)
    return {"flat_nmi": nmi(finest, a.flat.clustering.labels),
            "flat_clusters": a.flat.clustering.n_clusters,
            "levels": [{"level": int(r.level), "clusters": int(r.clusters),
                        "truth_clusters": int(r.truth_clusters), "nmi": float(r.nmi),
                        "best_depth": int(r.best_depth), "best_nmi": float(r.best_nmi)}
                       for r in levels.itertuples()]}


def scored(labels: list[np.ndarray], truth: dict[str, str], hosts: list[str]
           ) -> list[dict[str, Any]]:
    """Clusters of each level and its NMI against the truth depth it matches best."""
    depths = {d: labels_at_depth(truth, d, hosts) for d in range(1, truth_depth(truth) + 1)}
    out = []
    for level in labels:
        scores = {d: nmi(cut, list(level)) for d, cut in depths.items()}
        best = max(scores, key=lambda d: (round(scores[d], 12), d))
        out.append({"clusters": len(set(level.tolist())), "best_depth": best,
                    "best_nmi": scores[best]})
    return out


def bittorrent(bed: Any, out: Path, size: int, params: SwarmParams) -> dict[str, Any]:
    """Broadcasts until the stop rule's verdict (at most :data:`MAX_ITERATIONS`).

    The rule is ``--until-converged``'s (:class:`StableHierarchy`, its defaults), asked after
    every iteration as the command asks it; the verdict's levels are its settled levels.
    """
    stamps: list[float] = []
    rule = StableHierarchy(seed=0)
    start = time.monotonic()
    summary = run_broadcasts(bed.host_table(), out, iterations=MAX_ITERATIONS, file_size=size,
                             launch=ProcessTransport(bed.command, name="testbed"), seed=0,
                             params=params,
                             stop=lambda i: rule.update(read_measurement(out)),
                             progress=lambda r: stamps.append(time.monotonic() - start))
    wall = time.monotonic() - start
    m = read_measurement(out)
    durations = m.iterations["duration_s"].to_numpy()
    n = len(durations)
    return {"cost_s": wall, "iterations": n, "stopped": summary.converged_at is not None,
            "startup_s": stamps[0] - float(durations[0]),
            "broadcast_s": float(durations.mean()),
            "gap_s": (stamps[-1] - stamps[0] - float(durations[1:].sum())) / max(n - 1, 1),
            "blocks_per_iteration": float(m.transfers["blocks"].sum()) / n,
            **accuracy(out),
            "levels": scored(rule.settled, m.labels, m.host_names),
            "unstable": scored(rule.unstable, m.labels, m.host_names)}


def mesh(bed: Any, out: Path, options: MeshOptions) -> dict[str, Any]:
    """One mesh: its wall time, tests and accuracy."""
    start = time.monotonic()
    summary = run_mesh(bed.host_table(), out, options=options,
                       launch=ProcessTransport(bed.command, name="testbed"))
    wall = time.monotonic() - start
    m = read_measurement(out)
    tests = len(m.probes)
    rounds = m.probes["start"].round(0).nunique() if options.schedule == "rounds" else tests
    return {"cost_s": wall, "tests": tests, "failed": len(summary.failed),
            "per_test_s": wall / tests, "per_round_s": wall / rounds, **accuracy(out)}


def network(spec: str) -> tuple[str, int | None, float]:
    """``name[:hosts_per_cluster[:bandwidth_scale]]``."""
    name, *rest = spec.split(":")
    per = int(rest[0]) if rest and rest[0] else None
    scale = float(rest[1]) if len(rest) > 1 else 1.0
    return name, per, scale


def levels_text(r: dict[str, Any]) -> str:
    """``4c 1.00@2 / 2c 1.00@1``: every level of the answer, finest first: its clusters, and
    its NMI against the truth depth it matches best; unstable levels in brackets."""
    def one(lv: dict[str, Any]) -> str:
        return f"{lv['clusters']}c {lv['best_nmi']:.2f}@{lv['best_depth']}"
    text = " / ".join(one(lv) for lv in r["levels"]) or "none"
    return text + "".join(f" [unstable {one(lv)}]" for lv in r.get("unstable", []))


def crossover(bt: float, per: float, pairs: bool) -> int:
    """The smallest N at which the mesh costs more than ``bt``."""
    n = 2
    while (per * n * (n - 1) / 2 if pairs else per * (n - 1)) <= bt:
        n += 1
    return n


def run_network(spec: str, args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    name, per, scale = network(spec)
    topo = read_topology(name)
    testbed.down("cost", force=True)
    bed = testbed.up(topo, name="cost", bandwidth=scale, hosts_per_cluster=per, force=True)
    n = len(bed.hosts)
    print(f"\n## {name}: {n} hosts (hosts per cluster {per or 'all'}, capacities x{scale})",
          flush=True)
    parts: dict[str, Any] = {}
    size = int(parse_size(args.size))
    plan: list[tuple[str, Any]] = [
        (f"BitTorrent, quota {args.quota}", lambda out: bittorrent(
            bed, out, size, SwarmParams(time_limit=600, block_quota=int(args.quota)))),
        (f"BitTorrent, time box {args.time_box}", lambda out: bittorrent(
            bed, out, size, SwarmParams(time_limit=600, time_box=parse_time(args.time_box)))),
        ("BitTorrent, whole broadcasts", lambda out: bittorrent(
            bed, out, size, SwarmParams(time_limit=600))),
        ("iperf3 exclusive, one way", lambda out: mesh(bed, out, MeshOptions(
            duration=args.duration, one_way=True))),
        ("iperf3 exclusive, both ways", lambda out: mesh(bed, out, MeshOptions(
            duration=args.duration))),
        ("iperf3 rounds, one way", lambda out: mesh(bed, out, MeshOptions(
            duration=args.duration, one_way=True, schedule="rounds")))]
    if args.netpipe:
        plan.append(("NetPIPE, one way", lambda out: mesh(bed, out, MeshOptions(
            tool="netpipe", one_way=True, upper=int(parse_size("16KiB")), samples=2))))
    try:
        for i, (label, part) in enumerate(plan):
            if any(word in label.lower() for word in args.skip):
                continue
            before = load()
            parts[label] = part(tmp / f"{name}-{i}")
            parts[label]["load"] = f"{before} -> {load()}"
            print(f"  {label}: {json.dumps(parts[label])}", flush=True)
    finally:
        testbed.down("cost", force=True)
    return {"network": name, "hosts": n, "hosts_per_cluster": per, "scale": scale,
            "parts": parts}


def report(result: dict[str, Any], default: str) -> None:
    n, parts = result["hosts"], result["parts"]
    print(f"\n### {result['network']}, {n} hosts ({n * (n - 1) // 2} pairs)\n")
    print("| method | wall time (s) | iterations or tests | levels of the answer, finest "
          "first: clusters, NMI@truth depth | flat NMI (finest truth) | cost / BitTorrent | "
          "load before -> after |")
    print("|---|---|---|---|---|---|---|")
    bt = parts.get(f"BitTorrent, {default}", {}).get("cost_s", math.nan)
    for label, r in parts.items():
        count = (f"{r['iterations']}" + ("" if r["stopped"] else " (no verdict)")
                 if "iterations" in r else f"{r['tests']}")
        print(f"| {label} | {r['cost_s']:.0f} | {count} | {levels_text(r)} | "
              f"{r['flat_nmi']:.2f} | {r['cost_s'] / bt:.1f} | {r['load']} |")
    bits = parts.get(f"BitTorrent, {default}")
    if bits:
        print(f"\nBitTorrent: start-up {bits['startup_s']:.1f} s, broadcast "
              f"{bits['broadcast_s']:.1f} s, gap between iterations {bits['gap_s']:.2f} s, "
              f"{bits['blocks_per_iteration']:.0f} blocks per iteration")
        for label, pairs in (("iperf3 exclusive, one way", True),
                             ("iperf3 exclusive, both ways", True),
                             ("iperf3 rounds, one way", False)):
            r = parts.get(label)
            if r:
                per = r["per_test_s"] * (2 if "both" in label else 1) if pairs \
                    else r["per_round_s"]
                print(f"- crossover against {label}: {crossover(bits['cost_s'], per, pairs)} "
                      f"hosts ({per:.2f} s per {'pair' if pairs else 'round'})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--networks", nargs="+",
                        default=["two-sites-demo", "emulated-4x16-fast:8:0.1"],
                        help="name[:hosts_per_cluster[:bandwidth_scale]] of each network")
    parser.add_argument("--size", default="8MiB")
    parser.add_argument("--quota", default=str(MEASURE_QUOTA),
                        help="block quota (the default's)")
    parser.add_argument("--time-box", default="5s", help="the time box compared")
    parser.add_argument("--duration", type=int, default=1, help="iperf3 seconds per test")
    parser.add_argument("--netpipe", action="store_true", help="also a NetPIPE mesh")
    parser.add_argument("--skip", nargs="*", default=[],
                        help="parts to skip, by a word of their label: whole, both, rounds, ...")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    require_root()
    print(machine_line(("libtorrent",)))
    print(f"load average at the start: {load()}")
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for spec in args.networks:
            results.append(run_network(spec, args, Path(tmp)))
    for result in results:
        report(result, f"quota {args.quota}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
