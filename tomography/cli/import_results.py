"""``tomography import``: a probe dataset from another tool's results (perfSONAR, iperf3 -J)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from tomography.cli.common import emit, say

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    """Add ``import`` to the ``tomography`` sub-commands."""
    p = sub.add_parser("import", help="make a probe dataset from another tool's results "
                                      "(perfSONAR's pScheduler, iperf3 -J reports)",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       description="Read throughput results another tool wrote and write a "
                       "probe dataset that cluster, hierarchy, tree, evaluate and export read.\n\n"
                       "pscheduler  perfSONAR's JSON: pScheduler run records, what its "
                       "archivers receive or post, esmond metadata with their data, perfSONAR "
                       "5's OpenSearch documents (one object, a list, JSON lines, or "
                       "directories of them); other tests are skipped and counted.\n"
                       "iperf3      iperf3 -J reports, one test a file (directories: every "
                       "*.json below), the client's or the server's; the dataset is the one a "
                       "probe mesh writes, reports kept in raw/.\n\n"
                       "UDP tests are kept as rows of their own (protocol udp) and never "
                       "count in the TCP bandwidths. The same test read twice (the client's "
                       "and the server's iperf3 report, an archiver's input and what it "
                       "posted) is one row; loopback tests and tests whose sender is unknown "
                       "are skipped and counted.",
                       epilog="examples:\n  tomography import pscheduler archive/*.json "
                              "--hosts hosts.csv -o site\n"
                              "  tomography import iperf3 iperf3-logs/ --hosts hosts.csv -o lab\n"
                              "  tomography hierarchy site")
    p.add_argument("format", choices=("pscheduler", "iperf3"), help="the results' format")
    p.add_argument("files", nargs="+", type=Path, help="result files or directories")
    p.add_argument("-o", "--output", type=Path, required=True, help="dataset directory to write")
    p.add_argument("--hosts", type=Path, metavar="FILE",
                   help="host,address[,label]: names and ground-truth labels for the "
                        "addresses the results name, one row per address (a host may have "
                        "several: its name, IPv4, IPv6); default: each address is a host")
    p.add_argument("--force", action="store_true", help="overwrite an existing dataset")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Import pScheduler results or iperf3 reports as a probe dataset."""
    from tomography.model.hosts_checks import read_import_hosts

    hosts = read_import_hosts(args.hosts) if args.hosts else None
    if args.format == "iperf3":
        from tomography.model.dataset.iperf3 import import_iperf3
        summary = import_iperf3(args.files, args.output, hosts=hosts, overwrite=args.force)
        emit(summary.describe("iperf3 test"))
    else:
        from tomography.model.dataset.pscheduler import import_pscheduler
        summary = import_pscheduler(args.files, args.output, hosts=hosts, overwrite=args.force)
        emit(summary.describe("pScheduler throughput run"))
    for warning in summary.warnings:
        say(f"warning: {warning}")
    return 0
