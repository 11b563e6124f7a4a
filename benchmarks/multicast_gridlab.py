"""Executed multicasts on the emulated GridLab, every method from every root (den Burger 2009,
Fig 3.11; den Burger et al. 2005, Fig 7).

Raises the built-in ``gridlab-8`` testbed (eight single-host sites, the local
capacities of Table 3.1, a full mesh of links at the asymmetric achievable
bandwidths of Table 3.2, 10 % scaling as in the thesis), and from each of the
eight roots runs every method of ``tomography multicast`` (the planners, the
exact optimum over all spanning trees, the two chains and BitTorrent) over
the Gauge file of the same figures, ``--repeats`` times each in rotated
orders.  The tables give achievable bandwidth, what TCP delivers; a shaped
link of rate C delivers 1448/1514 of C as TCP payload with 1500-byte frames,
so the links are raised by 1514/1448 to deliver the tables' figures
(``--wire`` shapes them at the figures themselves).  Prints, as Markdown for ``benchmarks/RESULTS.md``: achieved
throughput (median, MB/s of 2^20 bytes) per root and method with the
prediction beside it, achieved/predicted of balanced multicasting, and the
papers' findings checked (balanced achieves the most of the static methods
at every root; FPFR sometimes less than one tree; balanced reaches its
prediction).  Needs root; about 25 minutes with the defaults.

Run::

    sudo .venv/bin/python benchmarks/multicast_gridlab.py
    .venv/bin/python benchmarks/multicast_gridlab.py --write-gauge datasets/gauges/gridlab-8-testbed.gauge.xml

The second form writes the Gauge file of the testbed's hosts (``fs0-00``
... in clusters ``fs0`` ...) and exits.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_support import command_line, machine_line, require_root  # noqa: E402
from tomography.model.interrupts import stop_as_interrupt  # noqa: E402
from multicast_planners import gridlab8_model  # noqa: E402

from tomography.export.bandwidth import BandwidthModel  # noqa: E402
from tomography.export.gauge import read_gauge, write_gauge  # noqa: E402

GOODPUT = 1514 / 1448
"""Wire bytes per TCP payload byte of a full 1500-byte frame: the tables give achievable
bandwidth (what TCP delivers), a ``tbf`` of rate C delivers C / GOODPUT of it; the testbed's
links are raised by this factor so that they carry the tables' figures as TCP payload."""

STATIC = ("flat", "semi-flat", "max-bottleneck", "fpfr", "balanced", "exact", "binomial",
          "chain-hosts", "chain-clusters")
SINGLE_TREES = ("flat", "semi-flat", "max-bottleneck", "binomial")


def testbed_model() -> BandwidthModel:
    """The GridLab figures with the testbed's host names: site ``s`` is cluster ``s``, host ``s-00``."""
    m = gridlab8_model()
    order = sorted(m.clusters, key=lambda c: f"{c}-00")
    index = {h: i for i, h in enumerate(m.hosts)}
    rows = [index[c] for c in order]
    return BandwidthModel({c: [f"{c}-00"] for c in m.clusters},
                          host_out=m.host_out[rows], host_in=m.host_in[rows],
                          cluster_out=m.cluster_out, cluster_in=m.cluster_in,
                          cluster_bandwidth=m.cluster_bandwidth, sources=m.sources,
                          timestamp=m.timestamp, notes=list(m.notes))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="4MiB", help="payload (default 4MiB)")
    parser.add_argument("--repeats", type=int, default=3, help="multicasts per method (3)")
    parser.add_argument("--roots", default="all", help="comma-separated sites, or all")
    parser.add_argument("--out", type=Path, default=Path("/tmp/multicast-gridlab"),
                        help="where the datasets go, one per root (resumed when there)")
    parser.add_argument("--wire", dest="goodput", action="store_false",
                        help="shape the links at the tables' figures as wire rates (TCP then "
                             "delivers 4.4 %% less) instead of as TCP payload")
    parser.add_argument("--report", action="store_true",
                        help="only print the report of the datasets in --out")
    parser.add_argument("--write-gauge", type=Path, metavar="FILE",
                        help="only write the testbed's Gauge file")
    args = parser.parse_args(argv)
    if args.write_gauge:
        write_gauge(testbed_model(), args.write_gauge, unit="MiB/s")
        print(f"wrote {args.write_gauge}")
        return 0
    if args.report:
        from tomography.model.dataset.multicast import summary_table
        from tomography.model.dataset.multicast import read_multicasts

        tables = {}
        for path in sorted(args.out.glob("root-*"), key=lambda p: _site_order(p.name[5:])):
            tables[path.name[5:]] = summary_table(read_multicasts(path)[1]).set_index("method")
        report(tables, args, float("nan"))
        return 0
    require_root()
    stop_as_interrupt()
    from measure import testbed
    from measure.multicast import run_multicasts, summary_table
    from tomography.model.dataset.multicast import read_multicasts
    from measure.transport import ProcessTransport
    from tomography.planning.deliveries import deliveries
    from tomography.model.topology import read_topology
    from tomography.model.units import parse_size

    size = parse_size(args.size)
    args.out.mkdir(parents=True, exist_ok=True)
    gauge = args.out / "gridlab-8-testbed.gauge.xml"
    write_gauge(testbed_model(), gauge, unit="MiB/s")
    model = read_gauge(gauge)
    sites = list(model.clusters)
    roots = sites if args.roots == "all" else args.roots.split(",")
    started = time.time()
    bed = testbed.up(read_topology("gridlab-8"), name="gridlab",
                     bandwidth=GOODPUT if args.goodput else 1.0)
    tables = {}
    try:
        hosts = bed.host_table()
        for site in roots:
            root = f"{site}-00"
            plans = deliveries(list(STATIC), list(hosts["host"]), root, size, model,
                               max_nodes=8)
            out = args.out / f"root-{site}"
            transport = ProcessTransport(bed.command, name="testbed")
            run = run_multicasts(hosts, plans, out, launch=transport, repeats=args.repeats,
                                 bittorrent=True, resume=True, time_limit=600,
                                 meta={"topology": "gridlab-8", "testbed": bed.to_meta()})
            print(f"root {site}: {len(run.results)} multicasts, "
                  f"{time.time() - started:.0f} s so far", file=sys.stderr, flush=True)
            _, runs, _ = read_multicasts(out)
            tables[site] = summary_table(runs).set_index("method")
    finally:
        testbed.down("gridlab")
    report(tables, args, time.time() - started)
    return 0


def _site_order(site: str) -> int:
    sites = list(gridlab8_model().clusters)
    return sites.index(site) if site in sites else len(sites)


def report(tables, args, seconds: float) -> None:
    methods = [*STATIC, "bittorrent"]
    print("### Executed multicasts on the emulated GridLab\n")
    print(f"Command: `{command_line()}`  ")
    print(machine_line(["numpy", "scipy", "libtorrent"]) + f" {seconds / 60:.0f} min.\n")
    print("Links shaped to deliver the tables' figures as TCP payload (x 1514/1448 on the wire)"
          if args.goodput else "Links shaped at the tables' figures as wire rates (--wire)",
          end="; ")
    print(f"payload {args.size}.\n")
    print(f"Achieved throughput, median of {args.repeats} (MB/s of 2^20 bytes), predicted in "
          "parentheses; - where a method cannot plan from that root; fails where no multicast "
          "completed (a plan over a pair the network refuses, predicted 0).\n")
    print("| root | " + " | ".join(methods) + " |")
    print("|---|" + "---|" * len(methods))
    findings = {"best": [], "ratio": {}, "fpfr_below_tree": []}
    for site, t in tables.items():
        cells = []
        for m in methods:
            if m not in t.index:
                cells.append("-")
                continue
            r = t.loc[m]
            pred = "" if r.predicted != r.predicted else f" ({r.predicted:.2f})"
            got = "fails" if r.achieved != r.achieved else f"{r.achieved:.2f}"
            cells.append(f"{got}{pred}")
        print(f"| {site} | " + " | ".join(cells) + " |")
        static = t.loc[[m for m in STATIC if m in t.index]]
        best = static["achieved"].idxmax()
        findings["best"].append((site, best))
        if "balanced" in t.index:
            findings["ratio"][site] = float(t.loc["balanced", "ratio"])
        trees = [m for m in SINGLE_TREES if m in t.index]
        if "fpfr" in t.index and trees and t.loc["fpfr", "achieved"] < t.loc[trees, "achieved"].max():
            findings["fpfr_below_tree"].append(site)
    wins = sum(best == "balanced" for _, best in findings["best"])
    print(f"\nBalanced multicasting achieves the most of the static methods at {wins} of "
          f"{len(tables)} roots (best elsewhere: "
          + (", ".join(f"{s}: {b}" for s, b in findings["best"] if b != "balanced") or "none")
          + ");  ")
    papers = [m for m in STATIC if m != "exact"]   # the methods the papers ran
    wins_papers = [s for s, t in tables.items()
                   if t.loc[[m for m in papers if m in t.index], "achieved"].idxmax()
                   == "balanced"]
    gaps = [t.loc["exact", "achieved"] / t.loc["balanced", "achieved"] - 1
            for t in tables.values() if {"exact", "balanced"} <= set(t.index)]
    print(f"of the methods the papers ran (all but exact) at {len(wins_papers)} of "
          f"{len(tables)}; exact against balanced: {min(gaps):+.1%} to {max(gaps):+.1%}.  ")
    fpfr = {s: t.loc["fpfr", "ratio"] for s, t in tables.items() if "fpfr" in t.index}
    print("FPFR achieved/predicted: " + ", ".join(f"{s} {r:.2f}" for s, r in fpfr.items())
          + ".  ")
    bt = [t.loc["balanced", "achieved"] / t.loc["bittorrent", "achieved"]
          for t in tables.values() if {"bittorrent", "balanced"} <= set(t.index)]
    print(f"Balanced over BitTorrent: {min(bt):.2f}x to {max(bt):.2f}x.  ")
    ratios = findings["ratio"]
    print("Balanced achieved/predicted: " + ", ".join(f"{s} {r:.2f}" for s, r in ratios.items())
          + f" ({sum(r >= 0.9 for r in ratios.values())} of {len(ratios)} at 90 % or more).  ")
    print("FPFR achieves less than the best single tree at: "
          + (", ".join(findings["fpfr_below_tree"]) or "no root") + ".")


if __name__ == "__main__":
    sys.exit(main())
