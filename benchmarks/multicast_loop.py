"""The whole loop on emulated networks: measure with BitTorrent, infer, plan, multicast.

For each network, from nothing: raise the testbed, run BitTorrent broadcasts
of ``--measure-size`` until the stop rule holds (``tomography measure
bittorrent --until-converged``), infer the hierarchy, measure the absolute
figures of its finest level's clusters (``tomography measure figures``: the
iperf3 tests between cluster representatives that ``multicast --dataset``
runs by default), and multicast ``--size`` bytes from the first host with

(a) the plans from the *measured* topology and its figures: balanced
    multicasting and the cluster-by-cluster chain; the same over the
    broadcasts' own rates (``export --bandwidth broadcasts``, lower bounds:
    ``bounds-``);
(b) the same plans from the *true* topology file (its clusters, its
    figures);
(c) the topology-oblivious methods: the root sending to every host (flat),
    MPI's binomial tree over the hosts in name order, Kascade's chain in
    name order, a chain in a random order (a host list in no particular
    order), and BitTorrent;

``--repeats`` times each, in rotated orders.  Prints, as Markdown for
``benchmarks/RESULTS.md``, every method's achieved throughput, the ratios
(a)/(c) and (a)/(b), and how many multicasts of 1 GiB repay the time the
measurement took.  Needs root; about 20 minutes a network.

Run::

    sudo .venv/bin/python benchmarks/multicast_loop.py
    sudo .venv/bin/python benchmarks/multicast_loop.py --networks two-sites-demo
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_support import command_line, machine_line, require_root  # noqa: E402
from tomography.model.interrupts import stop_as_interrupt  # noqa: E402

REGIONS = {
    "name": "regions-3",
    "description": "three levels: 2 regions x 2 sites x 2 clusters x 3 hosts; 100 Mbit/s NICs, "
                   "40 Mbit/s cluster uplinks, 20 Mbit/s site uplinks, 8 Mbit/s between regions",
    "host_defaults": {"nic": "100Mbit/s", "latency": "50us"},
    "routers": ["north", "south"] + [f"{r}{s}" for r in ("n", "s") for s in "12"]
               + [f"{r}{s}{c}" for r in ("n", "s") for s in "12" for c in "ab"],
    "links": [{"between": ["north", "south"], "capacity": "8Mbit/s", "latency": "10ms"}]
             + [{"between": [f"{r}{s}", "north" if r == "n" else "south"],
                 "capacity": "20Mbit/s", "latency": "2ms"} for r in ("n", "s") for s in "12"]
             + [{"between": [f"{r}{s}{c}", f"{r}{s}"], "capacity": "40Mbit/s",
                 "latency": "100us"} for r in ("n", "s") for s in "12" for c in "ab"],
    "clusters": [{"name": f"{r}{s}{c}", "router": f"{r}{s}{c}", "hosts": 3,
                  "label": f"{r}/{r}{s}/{r}{s}{c}"}
                 for r in ("n", "s") for s in "12" for c in "ab"],
}
"""A three-level network small enough to emulate beside BitTorrent on two cores."""

OBLIVIOUS = ("flat-hosts", "binomial-hosts", "chain-hosts", "chain-random", "bittorrent")


def binomial_hosts(hosts: list[str], root: str, size: int):
    """MPI's binomial broadcast over the hosts in name order, rank 0 the root (no topology)."""
    from tomography.planning.delivery import Delivery, Stream

    at = hosts.index(root)
    order = hosts[at:] + hosts[:at]
    parent = {}
    for rank in range(1, len(order)):
        parent[order[rank]] = order[rank - (1 << (rank.bit_length() - 1))]
    return Delivery("binomial-hosts", root, sorted(hosts), size,
                    [Stream(0, 0, size, 0.0, parent)])


def oblivious(hosts: list[str], root: str, size: int, seed: int) -> list:
    from tomography.planning.delivery import Delivery, Stream, chain_delivery

    flat = Delivery("flat-hosts", root, sorted(hosts), size,
                    [Stream(0, 0, size, 0.0, {h: root for h in hosts if h != root})])
    shuffled = [h for h in hosts if h != root]
    np.random.default_rng(seed).shuffle(shuffled)
    return [flat, binomial_hosts(sorted(hosts), root, size),
            chain_delivery(sorted(hosts), root, size),
            chain_delivery([root] + shuffled, root, size, method="chain-random")]


def loop(topo, out: Path, args) -> dict:
    """One network through the loop; its figures."""
    from measure import testbed
    from measure.coordinator import run_broadcasts
    from measure.multicast import run_multicasts
    from tomography.model.dataset.multicast import read_summary
    from measure.swarm import SwarmParams
    from measure.transport import ProcessTransport
    from cluster.stability import dataset_stop_rule
    from measure.figures import run_figures
    from tomography.export.bandwidth import analysis_model, figure_groups
    from tomography.planning.deliveries import deliveries
    from tomography.export.bandwidth import from_topology
    from tomography.pipeline import analyze
    from tomography.model.units import parse_size

    bed = testbed.up(topo, name="loop")
    figures: dict = {"network": topo.name}
    try:
        hosts = bed.host_table()
        names = sorted(hosts["host"])
        root = names[0]
        transport = ProcessTransport(bed.command, name="testbed")
        started = time.time()
        data = out / "bittorrent"
        summary = run_broadcasts(hosts, data, iterations=args.max_iterations,
                                 file_size=parse_size(args.measure_size), launch=transport,
                                 params=SwarmParams(time_limit=300), resume=True,
                                 stop=dataset_stop_rule(data), meta={"topology": topo.name})
        figures["measure_s"] = time.time() - started
        figures["iterations"] = summary.iterations[-1].iteration + 1 if summary.iterations \
            else None
        a = analyze(data, seed=0)
        figures["levels"] = a.hierarchy.depth
        clusters, groups = figure_groups(a.hierarchy, 1)
        started = time.time()
        run_figures(hosts, data, clusters, groups, level=1, overwrite=True,
                    launch=ProcessTransport(bed.command, name="testbed"))
        figures["figures_s"] = time.time() - started
        measured = analysis_model(a, level=1, source="figures", dataset=data)
        bounds = analysis_model(a, level=1, source="broadcasts")
        truth = from_topology(topo, {g.name: g.host_names for g in topo.clusters})
        size = parse_size(args.size)
        plans = []
        for prefix, model in (("measured", measured), ("bounds", bounds), ("true", truth)):
            for d in deliveries(["balanced", "chain-clusters"], names, root, size, model):
                plans.append(dataclasses.replace(d, method=f"{prefix}-{d.method}"))
        plans += oblivious(names, root, size, seed=1)
        run_multicasts(hosts, plans, out / "multicasts", launch=ProcessTransport(
            bed.command, name="testbed"), repeats=args.repeats, bittorrent=True, resume=True,
            time_limit=900, meta={"topology": topo.name, "measured_with": str(data)})
        figures["table"] = read_summary(out / "multicasts")[1].set_index("method")
        figures["clusters"] = len(measured.clusters)
    finally:
        testbed.down("loop")
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--networks", default="two-sites-demo,regions-3",
                        help="built-in topologies, or regions-3 (defined here)")
    parser.add_argument("--measure-size", default="8MiB", help="broadcast size (8MiB)")
    parser.add_argument("--max-iterations", type=int, default=15)
    parser.add_argument("--size", default="4MiB", help="multicast payload (4MiB)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("/tmp/multicast-loop"))
    args = parser.parse_args(argv)
    require_root()
    stop_as_interrupt()
    from tomography.model.topology import parse_topology, read_topology

    started = time.time()
    results = []
    for name in args.networks.split(","):
        if name == "regions-3":
            path = Path(tempfile.mkdtemp()) / "regions-3.yaml"
            path.write_text(yaml.safe_dump(REGIONS))
            topo = parse_topology(REGIONS, source=str(path))
        else:
            topo = read_topology(name)
        results.append(loop(topo, args.out / name, args))
        print(f"{name} done, {time.time() - started:.0f} s so far", file=sys.stderr, flush=True)
    report(results, args, time.time() - started)
    return 0


def report(results: list[dict], args, seconds: float) -> None:
    print("### The whole loop: measure, infer, plan, multicast\n")
    print(f"Command: `{command_line()}`  ")
    print(machine_line(["numpy", "scipy", "libtorrent"]) + f" {seconds / 60:.0f} min.\n")
    for f in results:
        t = f["table"]
        print(f"**{f['network']}**: measured with BitTorrent broadcasts of {args.measure_size} "
              f"until the stop rule held ({f['iterations']} iterations, {f['measure_s']:.0f} s); "
              f"{f['levels']} level(s) inferred, {f['clusters']} clusters on level 1; their "
              f"figures measured in {f['figures_s']:.0f} s. "
              f"Multicasts of {args.size}, median of {args.repeats} (MiB/s):\n")
        print("| method | predicted | basis | achieved | ach/pred | range | complete |")
        print("|---|---|---|---|---|---|---|")
        for method, r in t.iterrows():
            pred = f"{r.predicted:.2f}" if r.predicted == r.predicted else "-"
            ratio = f"{r.ratio:.2f}" if r.ratio == r.ratio else "-"
            print(f"| {method} | {pred} | {r.basis or '-'} | {r.achieved:.2f} | {ratio} | "
                  f"{r.low:.2f}-{r.high:.2f} | {r.complete}/{r.runs} |")
        a = t.loc[[m for m in t.index if m.startswith("measured")], "achieved"]
        b = t.loc[[m for m in t.index if m.startswith("true")], "achieved"]
        best = a.max()
        print(f"\n(a) best measured-topology plan: {a.idxmax()} {best:.2f}; (b) best "
              f"true-topology plan: {b.idxmax()} {b.max():.2f}; (a)/(b) = "
              f"{best / b.max():.2f}.\n")
        print("| against | (a)/it | 1 GiB multicasts that repay the measurement |")
        print("|---|---|---|")
        gib = 2**30 / 2**20
        for method in OBLIVIOUS:
            if method not in t.index:
                continue
            other = t.loc[method, "achieved"]
            saved = gib / other - gib / best
            spent = f["measure_s"] + f["figures_s"]
            repay = (f"{spent / saved:.2f} (each saves {saved:.0f} s)" if saved > 1
                     else "none: as fast")
            print(f"| {method} | {best / other:.2f} | {repay} |")
        print()

if __name__ == "__main__":
    sys.exit(main())
