"""``tomography testbed``: raise, inspect or remove an emulated network (network namespaces
and tc; needs root)."""

from __future__ import annotations

import argparse
from typing import Any

from tomography.cli.common import command
from tomography.cli.launchers import DEFAULT_TESTBED, add_testbed_scale
from tomography.model.errors import TomographyError
from tomography.model.scenarios import network_help

__all__ = ["add_parser", "run", "format_testbeds"]


def add_parser(sub: Any) -> None:
    """Add ``testbed`` to the ``tomography`` sub-commands."""
    p = command(sub, "testbed", "raise, inspect or remove an emulated network (network "
                "namespaces + tc; needs root)",
                "Raise a topology as an emulated network on this machine: one network "
                "namespace per host and router, veth links shaped by tc to the topology's "
                "capacities. measure bittorrent --testbed raises and removes one by itself; "
                "this command keeps one up between runs. up estimates the cores and memory "
                "a measurement in it needs and refuses more than this machine can carry, "
                "saying which --hosts-per-cluster and --bandwidth-scale fit (--force raises "
                "it anyway). One measurement at a time uses a testbed: a second one with the "
                "same --name is refused, and down refuses a testbed in use unless --force.",
                ["sudo tomography testbed up two-sites-demo",
                 "sudo tomography testbed up N1 --hosts-per-cluster 2 --bandwidth-scale 0.38",
                 "sudo tomography testbed status",
                 "sudo tomography testbed down --all",
                 "sudo tomography testbed down --name tb --force   # stops the measurement "
                 "in it first"])
    p.add_argument("action", choices=("up", "down", "status"),
                   help="up: raise the topology; down: remove it; status: what is up")
    p.add_argument("topology", nargs="?",
                   help=network_help() + " (for up)")
    p.add_argument("--all", action="store_true",
                   help="with down: remove every testbed this tool made (tomo-*)")
    p.add_argument("--force", action="store_true",
                   help="with up: raise it even when its estimate (cores, memory) is more "
                        "than this machine can carry; with down: also a testbed a "
                        "measurement is using, which is stopped first (SIGTERM, as Ctrl-C: it "
                        "keeps its finished iterations and exits 130); without it, down "
                        "refuses a testbed in use")
    add_testbed_scale(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Raise, remove or list testbeds; ``status`` exits 1 when none is up."""
    from measure import testbed
    from tomography.model.topology import read_topology

    if args.action == "up":
        if not args.topology:
            raise TomographyError("testbed up needs a TOPOLOGY (file or scenario name)")
        bed = testbed.up(read_topology(args.topology), name=args.name or DEFAULT_TESTBED,
                         bandwidth=args.bandwidth_scale, hosts_per_cluster=args.hosts_per_cluster,
                         force=args.force)
        need, here = testbed.estimate(bed.topology), testbed.machine()
        print(f"testbed {bed.name} up: {bed.topology.name}, {len(bed.hosts)} hosts in "
              f"namespaces tomo-{bed.name}-*; bandwidth x{bed.scale['bandwidth']:g}"
              + (f", {bed.scale['hosts_per_cluster']} hosts per cluster"
                 if bed.scale.get("hosts_per_cluster") else ""))
        print(f"estimate: {need.describe(here)}; a measurement adds one copy of its file per "
              "host in /dev/shm" + ("" if need.fits(here) else
                                    "\nMORE than this machine can carry (raised with --force): "
                                    "measured bandwidths will show the CPU, not the topology"))
        if not bed.latency_applied:
            print(f"note: {bed.latency_note}")
        if bed.topology.unreachable:
            print("unreachable (their routers refuse them): "
                  + ", ".join(f"{a}-{b}" for a, b in bed.topology.unreachable))
        print(f"run a command on a host: ip netns exec {next(iter(bed.hosts.values()))} ...")
    elif args.action == "down":
        from measure.testbed.claims import describe

        name = args.name or DEFAULT_TESTBED
        users = [b for b in (testbed.raised_testbeds() if args.all else [testbed.status(name)])
                 if b["holder"]] if args.force else []
        removed = testbed.down(name, all=args.all, force=args.force)
        for b in users:
            print(f"stopped {describe(b['holder'])}, which was using testbed {b['name']}")
        print(f"removed {len(removed)} item(s)" + (": " + ", ".join(removed[:6])
                                                   + (" ..." if len(removed) > 6 else "")
                                                   if removed else ""))
    else:
        beds = [testbed.status(args.name)] if args.name else testbed.raised_testbeds()
        print(format_testbeds(beds))
        return 0 if any(b["up"] for b in beds) else 1
    return 0


def format_testbeds(beds: list[dict[str, Any]]) -> str:
    """The testbeds as a table: name, state, topology, hosts, namespaces, since when; who uses them.

    Examples
    --------
    >>> print(format_testbeds([{"name": "tb", "phase": "down", "up": False, "namespaces": [],
    ...                         "missing": [], "state": None, "holder": None}]))
    name      state        topology              hosts  namespaces  since
    tb        down         -                         -           0  -
    >>> print(format_testbeds([]))
    no testbed raised by this tool (tomography testbed up TOPOLOGY raises one)
    """
    from measure.testbed.claims import describe

    if not beds:
        return "no testbed raised by this tool (tomography testbed up TOPOLOGY raises one)"
    lines = [f"{'name':<9} {'state':<12} {'topology':<20} {'hosts':>6} {'namespaces':>11}  since"]
    for b in beds:
        state = b["state"] if isinstance(b["state"], dict) else {}
        topo = state.get("topology_name") or "-"
        hosts = len(state["hosts"]) if "hosts" in state else "-"
        lines.append(f"{b['name']:<9} {b['phase']:<12} {topo:<20} {hosts:>6} "
                     f"{len(b['namespaces']):>11}  {state.get('created', '-')}")
    if any(b["phase"] == "half-built" for b in beds):
        lines.append("half-built: an up was interrupted; remove it with tomography testbed down "
                     "--name NAME (or --all)")
    lines += [f"{b['name']}: in use by {describe(b['holder'])}" for b in beds if b["holder"]]
    return "\n".join(lines)
