"""The cost comparison the method exists for: BitTorrent against iperf3 and NetPIPE meshes.

On one emulated network (``emulated-4x16-fast`` at 8 hosts per cluster: 32
hosts in 4 clusters, capacities x0.1 so that 2 cores can shape them), side
by side in one run:

(a) BitTorrent broadcasts, ``--iterations`` of them; the cost is the wall
    time until the flat partition is right (NMI 1 against the clusters)
    and stays right for every later iteration;
(b) an exclusive iperf3 mesh (one test at a time), one way per pair;
(c) a rounds iperf3 mesh (disjoint pairs at once), one way per pair;
(d) a NetPIPE mesh, one way per pair, small messages (its cost grows with
    the largest message).

Each mesh's cost is its wall time (start-up included), its accuracy the NMI
of its flat partition (:func:`tomography.analyze`'s, as ``tomography
cluster`` finds it).  Then each cost is extrapolated to 128 and 512 hosts
from the measured per-test, per-round and per-iteration times: a mesh costs
N(N-1)/2 tests (exclusive, NetPIPE) or N-1 rounds; a broadcast's time
comes from the flow-level simulator of the same network at that size
(calibrated against these real broadcasts at 32 hosts), times the
iterations needed at 32 hosts.  Needs root.  Run::

    sudo .venv/bin/python benchmarks/probes_cost.py            # ~30 min on 2 cores
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from bench_support import machine_line, require_root
from cluster.accuracy import nmi
from measure import testbed
from measure.coordinator import run_broadcasts
from measure.mesh import MeshOptions, run_mesh
from measure.simulator import simulate
from measure.transport import ProcessTransport
from tomography import analyze
from tomography.dataset import read_measurement
from tomography.topology import parse_topology, read_topology, scenario_path
from tomography.units import parse_size


def flat_nmi(m, n: int | None = None) -> float:
    """NMI against the truth of the flat clusters of the first ``n`` iterations (or repeats)."""
    truth = [m.labels[h] for h in m.host_names]
    flat = analyze(m, iterations=n, seed=0, resamples=0).flat.clustering   # no confidence
    return nmi(truth, flat.labels)


def bittorrent(bed, out: Path, iterations: int, size: int) -> dict:
    stamps: list[float] = []
    start = time.monotonic()
    run_broadcasts(bed.host_table(), out, iterations=iterations, file_size=size,
                   launch=ProcessTransport(bed.command, name="testbed"), seed=0,
                   progress=lambda r: stamps.append(time.monotonic() - start))
    m = read_measurement(out)
    scores = [flat_nmi(m, n) for n in range(1, len(m.iteration_ids) + 1)]
    right = next((n for n in range(1, len(scores) + 1)
                  if all(s == 1.0 for s in scores[n - 1:])), None)
    durations = m.iterations["duration_s"].to_numpy()
    return {"cost_s": stamps[right - 1] if right else float("nan"), "iterations": right,
            "nmi": scores[-1], "scores": scores, "wall_per_iteration_s":
            float(np.diff([0.0, *stamps]).mean()), "broadcast_s": float(durations.mean()),
            "startup_s": stamps[0] - float(durations[0])}


def mesh(bed, out: Path, options: MeshOptions) -> dict:
    start = time.monotonic()
    summary = run_mesh(bed.host_table(), out, options=options,
                       launch=ProcessTransport(bed.command, name="testbed"))
    wall = time.monotonic() - start
    m = read_measurement(out)
    tests = len(m.probes)
    rounds = m.probes["start"].round(0).nunique() if options.schedule == "rounds" else tests
    return {"cost_s": wall, "nmi": flat_nmi(m), "tests": tests, "failed": len(summary.failed),
            "per_test_s": wall / tests, "per_round_s": wall / rounds}


def grown(name: str, hosts_per_cluster: int, bandwidth: float):
    """The scenario with ``hosts_per_cluster`` hosts in every cluster, capacities scaled."""
    import yaml

    data = yaml.safe_load(scenario_path(name).read_text())
    for cluster in data["clusters"]:
        cluster["hosts"] = hosts_per_cluster
    return testbed.scaled(parse_topology(data), bandwidth=bandwidth)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--topology", default="emulated-4x16-fast")
    parser.add_argument("--hosts-per-cluster", type=int, default=8)
    parser.add_argument("--bandwidth-scale", type=float, default=0.1)
    parser.add_argument("--iterations", type=int, default=6)
    parser.add_argument("--size", default="8MiB")
    parser.add_argument("--duration", type=int, default=1, help="iperf3 seconds per test")
    parser.add_argument("--netpipe-upper", default="16KiB")
    parser.add_argument("--netpipe-samples", type=int, default=2)
    parser.add_argument("--skip", nargs="*", default=[], help="parts to skip: bt exclusive "
                        "rounds netpipe simulate")
    args = parser.parse_args()
    require_root()
    topo = read_topology(args.topology)
    print(machine_line(("libtorrent",)))
    print(f"network {topo.name} at {args.hosts_per_cluster} hosts per cluster, capacities "
          f"x{args.bandwidth_scale}")
    size = int(parse_size(args.size))
    results: dict[str, dict] = {}
    testbed.down("cost")
    bed = testbed.up(topo, name="cost", bandwidth=args.bandwidth_scale,
                     hosts_per_cluster=args.hosts_per_cluster)
    n = len(bed.hosts)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            if "bt" not in args.skip:
                results["bittorrent"] = bittorrent(bed, tmp / "bt", args.iterations, size)
                print("  bittorrent", results["bittorrent"], flush=True)
            for name, options in (
                    ("iperf3 exclusive", MeshOptions(duration=args.duration, one_way=True)),
                    ("iperf3 rounds", MeshOptions(duration=args.duration, one_way=True,
                                                  schedule="rounds")),
                    ("netpipe", MeshOptions(tool="netpipe", one_way=True,
                                            upper=int(parse_size(args.netpipe_upper)),
                                            samples=args.netpipe_samples))):
                key = name.split()[-1]
                if key in args.skip:
                    continue
                results[name] = mesh(bed, tmp / key, options)
                print(f"  {name}", results[name], flush=True)
    finally:
        testbed.down("cost")
    print(f"\n{n} hosts, one way per pair for the meshes ({n * (n - 1) // 2} pairs)\n")
    print("| method | wall time to the right partition (s) | NMI | tests or iterations | "
          "cost / BitTorrent |")
    print("|---|---|---|---|---|")
    bt = results.get("bittorrent", {}).get("cost_s", float("nan"))
    for name, r in results.items():
        count = r.get("iterations") if name == "bittorrent" else r["tests"]
        print(f"| {name} | {r['cost_s']:.0f} | {r['nmi']:.2f} | {count} | "
              f"{r['cost_s'] / bt:.1f} |")
    if "simulate" in args.skip or "bittorrent" not in results:
        return
    print("\nextrapolated cost (s), one way per pair:\n")
    print("| hosts | BitTorrent (simulated broadcast x iterations) | iperf3 exclusive | "
          "iperf3 rounds | NetPIPE | exclusive / BitTorrent |")
    print("|---|---|---|---|---|---|")
    bt_iter = results["bittorrent"]
    for hosts in (n, 128, 512):
        per_cluster = hosts // len(topo.clusters)
        with tempfile.TemporaryDirectory() as tmp:
            simulate(grown(args.topology, per_cluster, args.bandwidth_scale), Path(tmp) / "s",
                     iterations=1, file_size=size, seed=0)
            simulated = float(read_measurement(Path(tmp) / "s").iterations["duration_s"].mean())
        iterations = bt_iter["iterations"] or args.iterations
        bt_cost = iterations * (simulated + bt_iter["startup_s"])
        pairs = hosts * (hosts - 1) // 2
        row = [f"{bt_cost:.0f}"]
        for name, scale in (("iperf3 exclusive", pairs), ("iperf3 rounds", hosts - 1),
                            ("netpipe", pairs)):
            r = results.get(name)
            per = r["per_test_s"] if name != "iperf3 rounds" else r["per_round_s"]
            row.append(f"{per * scale:.0f}" if r else "-")
        ratio = (results["iperf3 exclusive"]["per_test_s"] * pairs / bt_cost
                 if "iperf3 exclusive" in results else float("nan"))
        print(f"| {hosts} | {' | '.join(row)} | {ratio:.0f} |")


if __name__ == "__main__":
    main()
