"""The loop, adaptive: measure, infer, then Robber over the measured clusters, on a steady
network and under mayhem.

From nothing, on a network whose host names say nothing of where the hosts
are (two sites of two clusters of ``--hosts`` hosts; each host gets a random
name): raise the testbed, run BitTorrent broadcasts of ``--measure-size``
until the stop rule holds, infer the hierarchy, and multicast ``--size``
bytes from a host of the first cluster with

* Robber and MOB over the *measured* clusters: the hierarchy's finest level,
  and its coarsest level of two clusters or more (here: the sites);
* Robber over the *true* clusters and over the true sites (the
  topology's labels);
* the methods that need no clusters: BitTorrent, and the chain through the
  hosts in name order (Kascade's; here a random order);

``--repeats`` times each, in rotated orders, first on the steady network,
then under mayhem (every link at 10-100 % of its capacity, redrawn every
``--every`` seconds).  Prints, as Markdown for ``benchmarks/RESULTS.md``,
each method's median throughput in both and the measurement's cost.
Needs root; about 15 minutes.

Run::

    sudo .venv/bin/python benchmarks/adaptive_loop.py
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_support import command_line, machine_line, require_root  # noqa: E402
from tomography.model.interrupts import stop_as_interrupt  # noqa: E402


def network(hosts: int, seed: int) -> dict:
    """Two sites of two clusters, 10 Mbit/s between the sites; one random name per host."""
    rng = np.random.default_rng(seed)
    names = rng.choice(np.arange(100, 1000), size=4 * hosts, replace=False)
    clusters = []
    for i, (site, cluster) in enumerate([(s, c) for s in ("west", "east") for c in "12"]):
        for j in range(hosts):   # a cluster of one host per name: the names are free
            clusters.append({"name": f"node{names[i * hosts + j]}",
                             "router": f"{site[0]}{cluster}", "hosts": 1,
                             "host_prefix": f"node{names[i * hosts + j]}-",
                             "label": f"{site}/{site[0]}{cluster}"})
    return {"name": "shuffled-sites",
            "description": "two sites x two clusters, host names in no order",
            "host_defaults": {"nic": "100Mbit/s", "latency": "50us"},
            "routers": ["west", "east", "w1", "w2", "e1", "e2"],
            "links": [{"between": ["west", "east"], "capacity": "10Mbit/s", "latency": "5ms"}]
                     + [{"between": [f"{s[0]}{c}", s], "capacity": "40Mbit/s",
                         "latency": "100us"} for s in ("west", "east") for c in "12"],
            "clusters": clusters}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=4, help="hosts per cluster (4)")
    parser.add_argument("--measure-size", default="8MiB", help="broadcast size (8MiB)")
    parser.add_argument("--max-iterations", type=int, default=15)
    parser.add_argument("--size", default="8MiB", help="multicast payload (8MiB)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--every", type=float, default=1.0,
                        help="seconds between mayhem's changes (1)")
    parser.add_argument("--seed", type=int, default=3, help="the host names (3)")
    parser.add_argument("--out", type=Path, default=Path("/tmp/adaptive-loop"))
    args = parser.parse_args(argv)
    require_root()
    stop_as_interrupt()
    from cluster.stability import dataset_stop_rule
    from measure import testbed
    from measure.coordinator import run_broadcasts
    from measure.swarm import SwarmParams
    from measure.transport import ProcessTransport
    from tomography.model.topology import parse_topology
    from tomography.model.units import parse_size
    from tomography.pipeline import analyze
    from tomography.planning.delivery import chain_delivery
    from tomography.planning.swarms import swarm_plan

    started = time.time()
    topo = parse_topology(network(args.hosts, args.seed))
    bed = testbed.up(topo, name="adapt")
    tables = {}
    try:
        hosts = bed.host_table()
        names = sorted(hosts["host"])
        truth = {h.name: h.label for h in topo.hosts}
        root = sorted(h for h in names if truth[h].endswith("w1"))[0]
        data = args.out / "bittorrent"
        summary = run_broadcasts(hosts, data, iterations=args.max_iterations,
                                 file_size=parse_size(args.measure_size),
                                 launch=ProcessTransport(bed.command, name="testbed"),
                                 params=SwarmParams(time_limit=300), resume=True,
                                 stop=dataset_stop_rule(data))
        measure_s = time.time() - started
        iterations = summary.iterations[-1].iteration + 1 if summary.iterations else 0
        h = analyze(data, seed=0).hierarchy
        levels = [k for k in range(1, h.depth + 1) if len(set(h.labels(k, names))) > 1]
        measured = {"finest": dict(zip(names, map(str, h.labels(levels[0], names))))}
        if len(levels) > 1:
            measured["coarsest"] = dict(zip(names, map(str, h.labels(levels[-1], names))))
        true = {"clusters": truth, "sites": {n: truth[n].split("/")[0] for n in names}}
        found = {k: [t for t, c in true.items() if _same_groups(c, m)]
                 for k, m in measured.items()}
        size = parse_size(args.size)
        swarms = []
        for (origin, clusters), method in [
                ((f"measured {k}", c), m) for k, c in measured.items() for m in ("robber", "mob")
        ] + [((f"true {k}", c), "robber") for k, c in true.items()]:
            plan = swarm_plan(clusters, root, size, method=method, seed=0)
            swarms.append((f"{method} over the {origin}", plan, len(set(clusters.values()))))
        for scenario, spec in (("steady", None),
                               ("mayhem", {"random": {"every": args.every,
                                                      "fraction": [0.1, 1.0], "link": "all",
                                                      "seed": 1}})):
            table = {}
            for label, plan, count in swarms:
                table[f"{label} ({count})"] = _run(plan, [], False, scenario, spec, bed, hosts,
                                                   args, label)
            table["bittorrent"] = _run(None, [], True, scenario, spec, bed, hosts, args,
                                       "bittorrent", root=root, size=size)
            table["chain-hosts (names' order)"] = _run(
                None, [chain_delivery(names, root, size)], False, scenario, spec, bed, hosts,
                args, "chain-hosts")
            tables[scenario] = table
    finally:
        testbed.down("adapt")
    print("### The loop, adaptive: measure, infer, Robber over the measured clusters\n")
    print(f"Command: `{command_line()}`  ")
    print(machine_line(["numpy", "libtorrent"]) + f" {(time.time() - started) / 60:.0f} min.\n")
    print(f"Two sites of two clusters of {args.hosts} hosts named at random (seed {args.seed}), "
          f"10 Mbit/s between the sites, 40 Mbit/s cluster uplinks, 100 Mbit/s NICs. Measured "
          f"with BitTorrent broadcasts of {args.measure_size} until the stop rule held "
          f"({iterations} iterations, {measure_s:.0f} s); the hierarchy's levels with two "
          f"clusters or more: {levels}; "
          + "; ".join(f"its {k} level is the true {' and '.join(v) or 'nothing'}"
                      for k, v in found.items())
          + f". Multicasts of {args.size} from {root}, median of "
          f"{args.repeats}, MiB/s; mayhem: every link at 10-100 % of its capacity, redrawn "
          f"every {args.every:g} s. In brackets, how many clusters the method was given.\n")
    print("| method | steady | mayhem | mayhem/steady |")
    print("|---|---|---|---|")
    for method in tables["steady"]:
        a, b = tables["steady"][method], tables["mayhem"][method]
        print(f"| {method} | {a:.2f} | {b:.2f} | {b / a:.0%} |")
    return 0


def _same_groups(a: dict[str, str], b: dict[str, str]) -> bool:
    """Whether two labellings of the same hosts group them alike (names aside).

    Examples
    --------
    >>> _same_groups({"x": "1", "y": "1", "z": "2"}, {"x": "b", "y": "b", "z": "a"})
    True
    """
    pairs = {(a[h], b[h]) for h in a}
    return len(pairs) == len(set(a.values())) == len(set(b.values()))


def _run(plan, deliveries, bittorrent: bool, scenario: str, spec, bed, hosts, args,
         label: str, root: str | None = None, size: int | None = None) -> float:
    """One method's multicasts in one scenario; the median throughput (MiB/s)."""
    from measure import testbed
    from measure.multicast import run_multicasts, summary_table
    from measure.transport import ProcessTransport
    from tomography.model.dataset.multicast import read_multicasts

    out = args.out / scenario / label.replace(" ", "-")
    reshaper = testbed.Reshaper(bed, testbed.read_schedule(spec)) if spec else None
    if reshaper is not None:
        reshaper.start()
    try:
        run_multicasts(hosts, deliveries, out, swarms=[plan] if plan else [],
                       bittorrent=bittorrent, root=root, size=size, repeats=args.repeats,
                       time_limit=600, overwrite=True,
                       launch=ProcessTransport(bed.command, name="testbed"),
                       meta={"scenario": scenario})
    finally:
        if reshaper is not None and reshaper.stop() is not None:
            raise SystemExit(f"the changes stopped: {reshaper.error}")
    _, runs, _ = read_multicasts(out)
    achieved = float(summary_table(runs).iloc[0]["achieved"])
    print(f"{scenario}, {label}: {achieved:.2f} MiB/s", file=sys.stderr, flush=True)
    return achieved


if __name__ == "__main__":
    sys.exit(main())
