"""``tomography truth``: the ground-truth model of a topology (Eq 5.2, 5.3)."""

from __future__ import annotations

import argparse
import json
import math
from typing import Any

from tomography.cli.common import add_format_option, add_host_connections_option, command, emit
from tomography.model.errors import TomographyError
from tomography.model.scenarios import network_help

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    """Add ``truth`` to the ``tomography`` sub-commands."""
    p = command(sub, "truth", "the ground-truth model of a topology: connections and "
                "bandwidth per connection per link (Eq 5.2, 5.3), and the partitions "
                "thresholds give",
                "For a network you know, which partitions bandwidth tomography should find: "
                "per router link the connections crossing it during a broadcast (Eq 5.2) and "
                "the bandwidth each gets (Eq 5.3); every partition a threshold on it gives, "
                "acceptable at a clear gap; one above a NIC's share per connection is not set "
                "apart by bandwidth alone (round trips may still do it: tomography evaluate "
                "judges on a dataset which levels its broadcasts show; docs/ground-truth.md).",
                ["tomography truth N1", "tomography truth my-site.yaml --format json",
                 "tomography truth N2 --host-connections 9   # as the simulator's peers (8 + 1)",
                 "tomography truth N2 --host-connections 1   # the NIC unshared, as published"])
    p.add_argument("topology", help=network_help())
    p.add_argument("--min-gap", type=float, default=1.5,
                   help="bandwidth ratio across a threshold for an acceptable truth "
                        "(default 1.5)")
    add_host_connections_option(p, "8, libtorrent's unchoke slots; the simulator's peers "
                                "use 9 (8 slots + 1 optimistic): pass 9 to judge a simulation")
    add_format_option(p, ("text", "json"))
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print the ground-truth model of a topology: per link, and the partitions thresholds give."""
    from tomography.model.ground_truth import (HOST_CONNECTIONS, describe_connections, link_table,
                                               nic_share, threshold_partitions)
    from tomography.model.topology import read_topology
    from tomography.model.units import counted, format_bandwidth, listed

    topo = read_topology(args.topology)
    table = link_table(topo)
    k = args.host_connections or HOST_CONNECTIONS
    if not args.min_gap >= 1:
        raise TomographyError(f"--min-gap is a ratio of bandwidths, at least 1; got "
                              f"{args.min_gap}")
    parts = threshold_partitions(topo, min_gap=args.min_gap, host_connections=k)
    share = nic_share(topo, k)
    if args.format == "json":
        emit(json.dumps({
            "topology": topo.name, "hosts": len(topo.hosts), "host_connections": k,
            "nic_share_bps": share,
            "links": json.loads(table.to_json(orient="records")),
            "partitions": [{"low_bps": p.low, "high_bps": p.high, "gap": p.gap,
                            "acceptable": p.acceptable, "observable": p.observable,
                            "clusters": [list(c) for c in p.clusters]}
                           for p in parts]}, indent=2))
        return 0
    lines = [f"{topo.name}: {len(topo.hosts)} hosts in {len(topo.clusters)} clusters, "
             f"{len(topo.routers)} routers",
             "", "per link, lowest bandwidth per connection first (Eq 5.2, 5.3):",
             f"  {'link':<32} {'capacity':>11} {'hosts':>11} {'conn':>8} {'bw/conn':>11}"]
    for r in table.itertuples():
        lines.append(f"  {r.link:<32} {format_bandwidth(r.capacity_bps):>11} "
                     f"{f'{r.hosts_a}|{r.hosts_b}':>11} {r.connections:>8.2f} "
                     f"{format_bandwidth(r.bw_per_connection_bps) if math.isfinite(r.bw_per_connection_bps) else '-':>11}")
    lines += ["", f"partitions by threshold (acceptable: gap >= {args.min_gap} and below the "
              f"NIC share; beyond NIC share: a threshold at or above a NIC's share per "
              f"connection, {format_bandwidth(share)} = the smallest NIC over "
              f"{describe_connections(topo, k)}):"]
    for p in parts:
        mark = ("acceptable" if p.acceptable else "" if p.observable
                else "beyond share").ljust(12)
        groups = "  ".join("{" + ",".join(c) + "}" for c in p.clusters)
        lines.append(f"  {mark}  {format_bandwidth(p.low) if p.low else '0':>10} .. "
                     f"{format_bandwidth(p.high):<10} gap {p.gap:>6.2f}  "
                     f"{counted(len(p.clusters), 'cluster'):>12}: {groups}")
    if any(not p.observable for p in parts):
        lines += ["", "partitions beyond the share split links that give a connection more "
                  "than a host's NIC share: bandwidth alone does not tell their sides apart, "
                  "a longer round trip can (on a dataset, tomography evaluate says which truth "
                  "levels the broadcasts set apart); --host-connections 1 is the model without "
                  "the share (the NIC unshared)"]
    uneven = [f"{link.a}-{link.b} ({link.a}->{link.b} "
              f"{format_bandwidth(link.capacity_from(link.a))}, {link.b}->{link.a} "
              f"{format_bandwidth(link.capacity_from(link.b))})"
              for link in topo.links if not link.symmetric]
    if uneven:
        lines += ["", f"{'links' if len(uneven) > 1 else 'link'} with a capacity per direction "
                  f"{'are' if len(uneven) > 1 else 'is'} taken at the slower one: "
                  f"{listed(uneven)}"]
    nic = min(min(c.nic_up, c.nic_down) for c in topo.clusters)
    fast = [r.link for r in table.itertuples()
            if math.isfinite(r.bw_per_connection_bps) and r.bw_per_connection_bps >= nic]
    if fast:
        lines += ["", f"{'links' if len(fast) > 1 else 'link'} {listed(fast)} "
                  f"give{'' if len(fast) > 1 else 's'} a "
                  "connection at least a whole NIC, so no threshold splits the hosts there: by "
                  "bandwidth their sides are one cluster; a long round trip can still separate "
                  "them (the simulator's TCP model, a real swarm)"]
    emit("\n".join(lines))
    return 0
