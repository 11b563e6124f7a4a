"""Balanced multicasting between clusters behind a WAN as the hosts used per cluster grow
(den Burger 2009, Fig 3.12; den Burger et al. 2005, Fig 8).

DAS-2's clusters had a fast local network (Myrinet) and one FastEthernet
card per node for the wide area, all behind a gigabit WAN: one node pair
moves at most one card's worth across, six side by side fill the WAN.  The built-in
topologies ``das-2x8`` and ``das-chain-3x8`` emulate that shape, scaled to
what a 2-core machine carries: every host has its own router with a
60 Mbit/s link into its cluster's switch and a 2 Mbit/s one (the "card") to
its cluster's WAN gateway, the gateways joined by the 12 Mbit/s WAN; two
clusters, then a chain of three.  For k = 1 ... 8 hosts per cluster it multicasts
``--size`` bytes from the first cluster with balanced multicasting over the
clusters, k hosts of each cluster carrying the tree side by side
(``tomography multicast --parallel k``), and with the number the plan
chooses (``--parallel auto``: the tree's rate over one host's capacity),
``--repeats`` times each.  Prints, as Markdown for ``benchmarks/RESULTS.md``,
achieved against predicted throughput for every k.  Needs root; about 15
minutes with the defaults.

Run::

    sudo .venv/bin/python benchmarks/multicast_wan.py
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

from tomography.export.bandwidth import BandwidthModel, Source  # noqa: E402

NAMES = "abc"


def cluster_model(clusters: int, k: int, *, host_wan: float, wan: float) -> BandwidthModel:
    """The Gauge figures of den Burger's cluster model with k hosts a cluster (bit/s).

    A cluster's capacity is its hosts' cards together, at most the WAN; a
    chain's clusters reach only their neighbours.
    """
    names = NAMES[:clusters]
    members = {c.upper(): [f"{c}{i}-00" for i in range(k)] for c in names}
    n = clusters * k
    capacity = min(wan, k * host_wan)
    bandwidth = np.zeros((clusters, clusters))
    for i in range(clusters - 1):
        bandwidth[i, i + 1] = bandwidth[i + 1, i] = wan
    np.fill_diagonal(bandwidth, np.nan)
    source = Source("topology-model", "den Burger's cluster model of the emulated network")
    return BandwidthModel(members, host_out=[host_wan] * n, host_in=[host_wan] * n,
                          cluster_out=[capacity] * clusters, cluster_in=[capacity] * clusters,
                          cluster_bandwidth=bandwidth,
                          sources={"host_capacity": source, "cluster_capacity": source,
                                   "cluster_bandwidth": source})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="8MiB", help="payload (default 8MiB)")
    parser.add_argument("--repeats", type=int, default=2, help="multicasts per k (2)")
    parser.add_argument("--topologies", default="das-2x8,das-chain-3x8",
                        help="built-in topologies of that shape (das-2x8,das-chain-3x8)")
    parser.add_argument("--out", type=Path, default=Path("/tmp/multicast-wan"))
    args = parser.parse_args(argv)
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
    started = time.time()
    rows = []
    for name in args.topologies.split(","):
        topo = read_topology(name)
        clusters = len({h.label for h in topo.hosts})
        per_cluster = len(topo.hosts) // clusters
        host_wan = topo.link_capacity("a0", "a-wan")
        wan = topo.link_capacity("a-wan", "b-wan")
        bed = testbed.up(topo, name="wan")
        try:
            table = bed.host_table()
            for k in range(1, per_cluster + 1):
                hosts = table[table["host"].str[1:].str.split("-").str[0].astype(int) < k]
                model = cluster_model(clusters, k, host_wan=host_wan, wan=wan)
                plans = []
                for parallel in ([k] if k * host_wan <= wan else [k, "auto"]):
                    d = deliveries(["balanced"], list(hosts["host"]), "a0-00", size, model,
                                   parallel=parallel)[0]
                    plans.append((parallel, d))
                for parallel, d in plans:
                    out = args.out / f"{clusters}-clusters-k{k}-{parallel}"
                    run_multicasts(hosts, [d], out, repeats=args.repeats, resume=True,
                                   launch=ProcessTransport(bed.command, name="testbed"),
                                   time_limit=600, meta={"topology": topo.name})
                    _, runs, _ = read_multicasts(out)
                    t = summary_table(runs, unit_bytes=1e6 / 8).iloc[0]
                    rows.append((clusters, k, parallel, len(d.streams), t.predicted,
                                 t.achieved, t.low, t.high))
                    print(f"{clusters} clusters, k={k}, parallel={parallel}: "
                          f"{t.achieved:.2f} of {t.predicted:.2f} Mbit/s, "
                          f"{time.time() - started:.0f} s so far", file=sys.stderr, flush=True)
        finally:
            testbed.down("wan")
    print("### Balanced multicasting between clusters behind a WAN\n")
    print(f"Command: `{command_line()}`  ")
    print(machine_line(["numpy", "scipy"]) + f" {(time.time() - started) / 60:.0f} min.\n")
    print(f"Topologies {args.topologies}: each host a 60 Mbit/s LAN link and a 2 Mbit/s WAN "
          f"card, 12 Mbit/s between clusters; {args.size} from a0-00, median of "
          f"{args.repeats}; Mbit/s.\n")
    print("| clusters | hosts per cluster k | hosts side by side | streams | predicted | "
          "achieved | range | achieved/predicted |")
    print("|---|---|---|---|---|---|---|---|")
    for clusters, k, parallel, streams, pred, ach, low, high in rows:
        print(f"| {clusters} | {k} | {parallel} | {streams} | {pred:.2f} | {ach:.2f} | "
              f"{low:.2f}-{high:.2f} | {ach / pred:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
