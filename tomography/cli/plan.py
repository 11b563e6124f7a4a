"""``tomography plan``: a multicast planned over a Gauge file, its throughput predicted."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

from tomography.cli.common import add_format_option, emit, positive_int, say
from tomography.model.errors import ParameterError, TomographyError
from tomography.model.units import listed

__all__ = ["add_parser", "run"]

PLAN_EPILOG = """\
methods (balanced multicasting and the trees it is compared with):
  flat            the root sends to every node itself
  semi-flat       minimum-height tree over live links, highest throughput
  max-bottleneck  Prim's variant: the tree whose weakest link is strongest
  fpfr            Fast Parallel File Replication trees, sharing capacities uncoordinated
  balanced        balanced multicasting: FPFR trees and the trees the LP's prices ask
                  for, at the LP's rates (the optimum over every spanning tree)
  exact           the same LP over every spanning tree enumerated (small networks only)
  binomial        MPI's binomial broadcast tree, hosts in the order of their clusters
  all             every method side by side (default)

examples:
  tomography plan datasets/gauges/gridlab-8.gauge.xml --root fs0
  tomography plan run.gauge.xml --root ca-00 --method balanced --format json"""


def add_parser(sub: Any) -> None:
    """Add ``plan`` to the ``tomography`` sub-commands."""
    from tomography.planning.methods import METHODS

    p = sub.add_parser("plan", help="plan a multicast over a Gauge file (balanced "
                                    "multicasting and the other trees)",
                       description="Plan a multicast from a root over the network of a Gauge "
                                   "file and predict its throughput, local capacities shared.",
                       epilog=PLAN_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("gauge", help="Gauge file ('-' for standard input)")
    p.add_argument("--root", required=True,
                   help="sending node: a cluster, or a host (then its cluster, unless "
                        "--level hosts)")
    p.add_argument("--method", choices=(*METHODS, "all"), default="all",
                   help="one planner, or all side by side (default; the list below)")
    p.add_argument("--level", choices=("clusters", "hosts"), default="clusters",
                   help="plan between clusters (each as one node, default) or hosts "
                        "(needs host-pair figures)")
    p.add_argument("--unit", default="MiB/s",
                   help="unit of the throughputs printed (default MiB/s, the 'MB/s' of "
                        "the papers)")
    p.add_argument("--max-nodes", type=positive_int, default=7,
                   help="largest network the exact optimum enumerates (default 7)")
    add_format_option(p, ("text", "json"))
    p.set_defaults(run=run)


def _read_gauge_arg(path: str):
    """The Gauge file ``path``, or the document on standard input for ``-``.

    Standard input is read in chunks up to the largest Gauge document
    (:data:`tomography.export.gauge.MAX_GAUGE_BYTES`) and refused beyond it,
    never read to its end; nothing is written.
    """
    from tomography.export.gauge import MAX_GAUGE_BYTES, GaugeError, read_gauge
    from tomography.model.safe_load import DocumentError, read_stream

    if path != "-":
        if Path(path).is_dir():
            raise ParameterError(
                f"{path} is a directory: plan reads a Gauge file; write one from a dataset "
                f"with `tomography export {path} --format gauge -o FILE`, or plan and run "
                f"multicasts over it with `tomography multicast --dataset {path}`")
        return read_gauge(path)
    try:
        data = read_stream(sys.stdin.buffer, what="standard input", max_bytes=MAX_GAUGE_BYTES,
                           kind="Gauge document")
    except DocumentError as exc:
        raise GaugeError(exc.reason, path=exc.path) from None
    return read_gauge(data, name="standard input")


def _basis_line(model) -> str:
    """What the predictions rest on, in words, so that no one takes a bound for a forecast.

    Examples
    --------
    >>> from tomography.export.bandwidth import from_topology
    >>> from tomography.model.topology import read_topology
    >>> topo = read_topology("two-sites-demo")
    >>> print(_basis_line(from_topology(topo, {g.name: g.host_names for g in topo.clusters})))
    predictions: forecasts from the topology's model values; 2 shared links counted
    """
    what = {"measured": "forecasts from measured figures",
            "topology": "forecasts from the topology's model values",
            "lower bound": "LOWER BOUNDS (rates the broadcasts reached, not what the links "
                           "carry; measure the figures for a forecast)"}[model.basis]
    shared = model.shared_links
    links = ("; links shared by several cluster pairs unknown (the file has no sharedLinks)"
             if shared is None else f"; {len(shared)} shared link{'s' * (len(shared) != 1)} "
             "counted")
    return f"predictions: {what}{links}"


def run(args: argparse.Namespace) -> int:
    """Plan a multicast over a Gauge file with one or every planner and print the throughputs."""
    from tomography.export.gauge import gauge_to_network
    from tomography.planning import METHODS, compare, plan
    from tomography.planning.delivery import unpaced_note

    model = _read_gauge_arg(args.gauge)
    net = gauge_to_network(model, args.level, unit=args.unit)
    root = args.root
    if args.level == "clusters" and root not in net.nodes and root in model.cluster_of:
        root = model.cluster_of[root]
        say(f"root host {args.root} is in cluster {root}")
    if root not in net.nodes:  # a clear error before any planning
        clusters = args.level == "clusters"
        raise TomographyError(
            f"unknown root {args.root!r}: give "
            + (f"a host ({listed(sorted(model.cluster_of), 8)}) or a cluster "
               f"({listed(net.nodes, 8)})" if clusters else f"a host ({listed(net.nodes, 8)})")
            + f" of {args.gauge}")
    methods = METHODS if args.method == "all" else (args.method,)
    table = compare(net, root, methods=methods, max_nodes=args.max_nodes)
    plans = {}
    for method in methods:
        if table.loc[table.method == method, "note"].iloc[0]:
            continue
        plans[method] = plan(net, root, method, max_nodes=args.max_nodes)
    if args.format == "json":
        emit(json.dumps({
            "gauge": args.gauge, "root": root, "level": args.level, "unit": args.unit,
            "nodes": net.nodes, "basis": model.basis,
            "shared_links": None if model.shared_links is None else len(model.shared_links),
            "methods": [{"method": r.method,
                         "throughput": None if r.throughput != r.throughput else r.throughput,
                         "seconds": None if r.seconds != r.seconds else r.seconds,
                         "note": r.note,
                         "trees": [{"rate": float(rate), "edges": t.edge_names(net.nodes)}
                                   for t, rate in zip(plans[r.method].trees,
                                                      plans[r.method].rates)]
                         if r.method in plans else []}
                        for r in table.itertuples()]}, indent=2))
        return 0
    unit = args.unit or "(no unit)"
    source = "standard input" if args.gauge == "-" else args.gauge
    lines = [f"multicast from {root} over {net.size} {args.level} of {source} "
             f"(throughput in {unit}, local capacities shared)", _basis_line(model), "",
             f"  {'method':<15} {'throughput':>11} {'trees':>6} {'ms':>9}  note"]
    for r in table.itertuples():
        value = "-" if r.throughput != r.throughput else f"{r.throughput:.4g}"
        ms = "-" if r.seconds != r.seconds else f"{r.seconds * 1e3:.2f}"
        lines.append(f"  {r.method:<15} {value:>11} {r.trees:>6} {ms:>9}  {r.note}")
    for p in plans.values():
        if note := unpaced_note(p.method, len(p.trees)):
            lines += ["", *textwrap.wrap(note, 90, initial_indent="  ", subsequent_indent="  ")]
    best = max(plans.values(), key=lambda p: p.throughput, default=None)
    if best is not None:
        lines += ["", f"trees of {best.method} ({best.throughput:.4g} {unit}):"]
        for tree, rate in zip(best.trees, best.rates):
            edges = ", ".join(f"{a}->{b}" for a, b in tree.edge_names(net.nodes))
            lines.append(f"  rate {rate:>9.4g}  {edges}")
    emit("\n".join(lines))
    return 0
