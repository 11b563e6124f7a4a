"""``tomography import``: a probe dataset from another tool's results (perfSONAR's pScheduler)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from tomography.cli.common import emit

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    """Add ``import`` to the ``tomography`` sub-commands."""
    p = sub.add_parser("import", help="make a probe dataset from another tool's results "
                                      "(perfSONAR's pScheduler)",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       description="Read pScheduler throughput results (JSON as pScheduler "
                       "archives them or a perfSONAR archive exports them: one object, a list, "
                       "JSON lines, or directories of them) and write a probe dataset that "
                       "cluster, hierarchy, tree, evaluate and export read.",
                       epilog="example:\n  tomography import pscheduler archive/*.json "
                              "--hosts hosts.csv -o site\n  tomography hierarchy site")
    p.add_argument("format", choices=("pscheduler",), help="the results' format")
    p.add_argument("files", nargs="+", type=Path, help="result files or directories")
    p.add_argument("-o", "--output", type=Path, required=True, help="dataset directory to write")
    p.add_argument("--hosts", type=Path, metavar="FILE",
                   help="host,address[,label]: names and ground-truth labels for the "
                        "addresses the results name (default: each address is a host)")
    p.add_argument("--force", action="store_true", help="overwrite an existing dataset")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Import pScheduler throughput results as a probe dataset."""
    from tomography.dataset import read_hosts_table
    from tomography.pscheduler import import_pscheduler

    hosts = read_hosts_table(args.hosts) if args.hosts else None
    rows = import_pscheduler(args.files, args.output, hosts=hosts, overwrite=args.force)
    emit(f"imported {rows} pScheduler throughput run(s) into {args.output}")
    return 0
