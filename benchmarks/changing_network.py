"""Multicasts on a network that changes under them: the thesis's global-bottleneck test cases 1
and 2 (den Burger 2009, ch. 4.6.2), scaled to what 2 cores carry.

Four clusters (ca, cb, cc, cd) of ``--sizes`` hosts (test case 1: 4,4,4,4, the
default, for the thesis's 16 each; test case 2: 1,3,4,8 for its 4, 12, 16 and
32) in a full mesh of WAN
links with the bandwidths of the thesis's Fig 4.16 (ca-cb 10, ca-cc 3,
cb-cd 2, cc-cd 6, ca-cd 8, cb-cc 8 MB/s), times ``--scale`` (default 0.25),
10 ms one way; the hosts' NICs 100 MB/s times the scale.  The root (ca-00)
sends ``--size`` bytes with each method, one multicast per method and
scenario, each on a freshly reshaped network (``--changes``'s machinery,
:class:`measure.testbed.Reshaper`, started just before the multicast's
agents, so its time 0 is a second or two before the first byte):

1. fast links: as above, static;
2. slow links: ca-cd and cb-cc at 0.8 MB/s (times the scale), static;
3. fast -> slow: fast until ``--at`` seconds, then slow;
4. slow -> fast: the reverse;
5. mayhem: every link at 10 to 100 % of its capacity, redrawn every ``--every``
   seconds from a fixed seed (the thesis: 5 s).

The thesis's times (a 600 MB file, the change at 30 s, mayhem every 5 s)
are scaled with the payload, so that the change falls mid-multicast.
Methods: balanced multicasting over the scenario's initial figures (the
thesis's "exact initial emulated bandwidth values"), the cluster chain,
MOB and Robber over the four clusters, and BitTorrent; on request
(``--methods ...,balanced-measured``) balanced over the figures of a
measurement: BitTorrent broadcasts on the fast network until the stop rule
holds, the finest level's clusters and their figures measured on it
(``tomography measure figures``, as ``multicast --dataset`` does).  Prints, as
Markdown for ``benchmarks/RESULTS.md``, each method's throughput per
scenario, its share of its static (fast links) throughput, and the
balanced plan's prediction (the LP's maximum over the initial figures).
Needs root; about 14 minutes with the defaults.

Run::

    sudo .venv/bin/python benchmarks/changing_network.py
    sudo .venv/bin/python benchmarks/changing_network.py --sizes 1,3,4,8
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_support import command_line, machine_line, require_root  # noqa: E402
from tomography.model.interrupts import stop_as_interrupt  # noqa: E402

MB = 8e6   # bit/s of one MB/s
FAST = {("ca", "cb"): 10, ("ca", "cc"): 3, ("cb", "cd"): 2, ("cc", "cd"): 6,
        ("ca", "cd"): 8, ("cb", "cc"): 8}
SLOW = {("ca", "cd"): 0.8, ("cb", "cc"): 0.8}
METHODS = ("balanced", "balanced-measured", "chain-clusters", "mob", "robber", "bittorrent")


def topology(scale: float, sizes: list[int], slow: bool = False) -> dict:
    links = {**FAST, **(SLOW if slow else {})}
    return {"name": "four-clusters-" + ("slow" if slow else "fast"),
            "description": "den Burger's test case 1, scaled",
            "host_defaults": {"nic": f"{100 * scale}MB/s", "latency": "50us"},
            "routers": ["ra", "rb", "rc", "rd"],
            "links": [{"between": [f"r{a[1]}", f"r{b[1]}"], "capacity": f"{mbs * scale}MB/s",
                       "latency": "10ms"} for (a, b), mbs in links.items()],
            "clusters": [{"name": c, "router": f"r{c[1]}", "hosts": n, "label": c}
                         for c, n in zip(("ca", "cb", "cc", "cd"), sizes)]}


def scenarios(scale: float, at: float, every: float) -> dict[str, dict]:
    slow = [{"at": 0, "link": [f"r{a[1]}", f"r{b[1]}"], "capacity": f"{mbs * scale}MB/s"}
            for (a, b), mbs in SLOW.items()]
    back = [{"at": at, "link": [f"r{a[1]}", f"r{b[1]}"], "fraction": 1}
            for (a, b) in SLOW]
    return {"fast links": {},
            "slow links": {"changes": slow},
            "fast -> slow": {"changes": [{**c, "at": at} for c in slow]},
            "slow -> fast": {"changes": slow + back},
            "mayhem": {"random": {"every": every, "fraction": [0.1, 1.0], "link": "all",
                                  "seed": 1}}}


def _measured(bed, hosts, members: dict[str, list[str]], out: Path):
    """The fast network measured with BitTorrent broadcasts, then its clusters' figures; the
    Gauge model of what was found."""
    from cluster.stability import dataset_stop_rule
    from measure.coordinator import run_broadcasts
    from measure.figures import run_figures
    from measure.swarm import SwarmParams
    from measure.transport import ProcessTransport
    from tomography.export.bandwidth import analysis_model, figure_groups
    from tomography.pipeline import analyze

    data = out / "measured"
    run_broadcasts(hosts, data, iterations=15, file_size=8 * 2**20,
                   launch=ProcessTransport(bed.command, name="testbed"),
                   params=SwarmParams(time_limit=300), resume=True,
                   stop=dataset_stop_rule(data))
    a = analyze(data, seed=0)
    clusters, groups = figure_groups(a.hierarchy, 1)
    run_figures(hosts, data, clusters, groups, level=1, overwrite=True,
                launch=ProcessTransport(bed.command, name="testbed"))
    model = analysis_model(a, level=1, source="figures", dataset=data)
    print(f"measured: {len(model.clusters)} clusters", file=sys.stderr, flush=True)
    return model


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="24MiB", help="payload (default 24MiB)")
    parser.add_argument("--sizes", default="4,4,4,4",
                        help="hosts of ca, cb, cc and cd (4,4,4,4: test case 1; 1,3,4,8: "
                             "test case 2)")
    parser.add_argument("--scale", type=float, default=0.25,
                        help="bandwidths times this (0.25)")
    parser.add_argument("--at", type=float, default=5.0,
                        help="seconds to the change of the fast/slow scenarios (5)")
    parser.add_argument("--every", type=float, default=1.0,
                        help="seconds between mayhem's changes (1)")
    parser.add_argument("--methods", default="balanced,chain-clusters,mob,robber,bittorrent",
                        help=f"comma-separated, among {', '.join(METHODS)} (all but "
                             "balanced-measured, which first measures the fast network with "
                             "BitTorrent broadcasts until the stop rule holds, then its "
                             "clusters' figures, and plans over them)")
    parser.add_argument("--scenarios", default="all",
                        help="comma-separated scenario numbers 1-5 (all)")
    parser.add_argument("--repeats", type=int, default=1,
                        help="multicasts per method and scenario, their median shown (1)")
    parser.add_argument("--out", type=Path, default=Path("/tmp/changing-network"))
    args = parser.parse_args(argv)
    methods = [m for m in args.methods.split(",") if m]
    if not methods or set(methods) - set(METHODS):
        parser.error(f"--methods takes some of {', '.join(METHODS)}")
    require_root()
    stop_as_interrupt()
    from measure import testbed
    from measure.multicast import run_multicasts, summary_table
    from measure.transport import ProcessTransport
    from tomography.export.bandwidth import from_topology
    from tomography.model.dataset.multicast import read_multicasts
    from tomography.model.topology import parse_topology
    from tomography.model.units import parse_size
    from tomography.planning.deliveries import deliveries
    from tomography.planning.swarms import swarm_plan

    size = parse_size(args.size)
    sizes = [int(x) for x in args.sizes.split(",")]
    if len(sizes) != 4 or min(sizes) < 1:
        parser.error("--sizes takes four numbers >= 1")
    started = time.time()
    fast, slow = (parse_topology(topology(args.scale, sizes, s)) for s in (False, True))
    bed = testbed.up(fast, name="chg")
    rows: dict[tuple[str, str], tuple[float, float]] = {}
    try:
        hosts = bed.host_table()
        names = list(hosts["host"])
        members = {c: [h for h in names if h.startswith(c)] for c in ("ca", "cb", "cc", "cd")}
        measured = _measured(bed, hosts, members, args.out) \
            if "balanced-measured" in methods else None
        chosen = list(scenarios(args.scale, args.at, args.every).items())
        if args.scenarios != "all":
            chosen = [chosen[int(i) - 1] for i in args.scenarios.split(",")]
        for scenario, spec in chosen:
            initial = slow if scenario.startswith("slow") else fast
            model = from_topology(initial, members)
            plans = {d.method: d for d in deliveries(["balanced", "chain-clusters"], names,
                                                     "ca-00", size, model)}
            if measured is not None:
                plans["balanced-measured"] = dataclasses.replace(
                    deliveries(["balanced"], names, "ca-00", size, measured)[0],
                    method="balanced-measured")
            swarms = {m: swarm_plan({h: c for c, hs in members.items() for h in hs}, "ca-00",
                                    size, method=m, seed=0) for m in ("mob", "robber")}
            for method in methods:
                achieved, predicted = [], float("nan")
                for repeat in range(args.repeats):   # each on a freshly reshaped network
                    out = (args.out / scenario.replace(" ", "").replace(">", "") / method
                           / f"r{repeat}")
                    reshaper = (testbed.Reshaper(bed, testbed.read_schedule(spec)) if spec
                                else None)
                    if reshaper is not None:
                        reshaper.start()
                    try:
                        run_multicasts(hosts, [plans[method]] if method in plans else [], out,
                                       swarms=[swarms[method]] if method in swarms else [],
                                       bittorrent=method == "bittorrent", root="ca-00",
                                       size=size, repeats=1, seed=repeat, time_limit=900,
                                       overwrite=True,
                                       launch=ProcessTransport(bed.command, name="testbed"),
                                       meta={"scenario": scenario, "schedule": spec})
                    finally:
                        if reshaper is not None and reshaper.stop() is not None:
                            raise SystemExit(f"the changes stopped: {reshaper.error}")
                    _, runs, _ = read_multicasts(out)
                    t = summary_table(runs, unit_bytes=1e6).iloc[0]
                    achieved.append(float(t.achieved))
                    predicted = float(t.predicted)
                rows[(scenario, method)] = (float(np.median(achieved)), predicted)
                print(f"{scenario}, {method}: {np.round(achieved, 2)} MB/s, "
                      f"{time.time() - started:.0f} s so far", file=sys.stderr, flush=True)
    finally:
        testbed.down("chg")
    case = "1" if len(set(sizes)) == 1 else "2"
    print(f"### Multicasts on a network that changes under them (test case {case}, scaled)\n")
    print(f"Command: `{command_line()}`  ")
    print(machine_line(["numpy", "scipy"]) + f" {(time.time() - started) / 60:.0f} min.\n")
    print(f"Four clusters of {args.sizes} hosts, the thesis's WAN bandwidths times "
          f"{args.scale}, 10 ms one way; {args.size} from ca-00; the change at {args.at} s, "
          f"mayhem every {args.every} s; the median of {args.repeats} multicast(s) per cell, "
          "each on a freshly reshaped network (the changes start afresh with each "
          "multicast); MB/s (10^6 bytes/s), in "
          "brackets the share of the method's fast-links throughput.\n")
    names = [s for s, _ in chosen]
    print("| method | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for method in methods:
        static = rows.get(("fast links", method), (float("nan"),))[0]
        cells = [f"{rows[(s, method)][0]:.2f} ({rows[(s, method)][0] / static:.0%})"
                 for s in names]
        print(f"| {method} | " + " | ".join(cells) + " |")
    for planned in ("balanced", "balanced-measured"):
        if planned in methods:
            print(f"| {planned}'s prediction" + (" (the LP's maximum)" if planned == "balanced"
                                                 else "") + " | " + " | ".join(
                f"{rows[(s, planned)][1]:.2f}" for s in names) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
