"""``tomography export``: the topology in the formats its consumers read."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tomography.cli.common import (add_analysis_options, add_hierarchy_options,
                                   add_tree_level_option, analysis, emit, positive_int, say)
from tomography.model.errors import TomographyError
from tomography.model.units import counted

if TYPE_CHECKING:
    from tomography.model.topology import Topology

__all__ = ["add_parser", "run", "gauge_model", "FORMATS", "BANDWIDTH_SOURCES"]

FORMATS = {
    "gauge": "Gauge XML (Pool + Gauge) for multicast planners, schema-checked",
    "json": "the hierarchy and the tree of clusters with weights (tomography-topology/1)",
    "graphml": "weighted host graph, cluster ids per level as node attributes",
    "gexf": "the same graph as GEXF 1.2, for Gephi",
    "dot": "Graphviz DOT of the Hasse diagram (--graph hasse) or the tree (--graph tree)",
    "simgrid": "SimGrid platform XML (zones per cluster, links, routes)",
    "mpi": "communicators per level, leaders, rank order and broadcast schedule (JSON)",
    "hostfile": "hosts in rank order, clusters contiguous (Open MPI or MPICH syntax)",
    "rankfile": "Open MPI rankfile, clusters contiguous",
}

BANDWIDTH_SOURCES = ("auto", "figures", "probes", "topology", "broadcasts")

EXPORT_EPILOG = """\
formats:
""" + "\n".join(f"  {name:<9} {text}" for name, text in FORMATS.items()) + """

gauge and simgrid need absolute bandwidths; --bandwidth says where they come from:
  figures     the figures `tomography measure figures` measured for these clusters
              (a few iperf3 tests per cluster, with the links pairs share)
  probes      pairwise iperf3/NetPIPE runs of the dataset (probes.csv)
  topology    model values of the topology file of a simulated or emulated run
              (testbed scale factors applied)
  broadcasts  bytes moved over the broadcasts' durations (observed lower bounds:
              a plan over them predicts too little and paces itself to it)
  auto        the first of these the dataset allows (default)
Every figure written names its source and unit.

examples:
  tomography export run --format gauge -o run.gauge.xml
  tomography export run --format gauge -o - | tomography plan - --root ca-00
  tomography export run --format graphml -o run.graphml     # open in Gephi
  tomography export run --format dot --graph tree -o - | dot -Tsvg -o tree.svg
  tomography export run --format mpi --root ca-00 -o run.mpi.json"""

def add_parser(sub: Any) -> None:
    """Add ``export`` to the ``tomography`` sub-commands."""
    p = sub.add_parser("export", help="write the topology for its consumers: Gauge, JSON, "
                                      "GraphML/GEXF, DOT, SimGrid, MPI",
                       description="Infer the hierarchy of a dataset and write it in the "
                                   "format a consumer reads.",
                       epilog=EXPORT_EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    add_analysis_options(p)
    add_hierarchy_options(p)
    p.add_argument("--format", "-f", choices=tuple(FORMATS), required=True,
                   help="what to write (the list below)")
    p.add_argument("-o", "--output", required=True, metavar="FILE",
                   help="file to write ('-' for standard output)")
    g = p.add_argument_group("gauge and simgrid")
    g.add_argument("--level", type=positive_int, default=1, metavar="K",
                   help="hierarchy level whose clusters are exported (default 1, the finest)")
    g.add_argument("--bandwidth", choices=BANDWIDTH_SOURCES, default="auto",
                   help="source of the absolute figures (default auto, see below)")
    g.add_argument("--probes", type=Path, metavar="DATASET",
                   help="a probe dataset (tomography measure iperf3/netpipe) of the same "
                        "hosts, for --bandwidth probes (default: the dataset's own probes.csv)")
    g.add_argument("--topology", metavar="FILE",
                   help="topology file for --bandwidth topology when the dataset's is not "
                        "a built-in scenario")
    g.add_argument("--host-pairs", action="store_true",
                   help="also write host-to-host bandwidths (and delays)")
    g.add_argument("--unit", default="Mbit/s",
                   help="rate unit of the Gauge file (default Mbit/s)")
    g = p.add_argument_group("dot")
    g.add_argument("--graph", choices=("hasse", "tree"), default="hasse",
                   help="Hasse diagram of the hierarchy (default) or tree of clusters")
    add_tree_level_option(p.add_argument_group("json and dot --graph tree"), "--tree-level")
    g = p.add_argument_group("mpi, hostfile and rankfile")
    g.add_argument("--root", metavar="HOST", help="broadcast root (default: the first rank)")
    g.add_argument("--slots", type=positive_int, default=1,
                   help="MPI ranks per host (default 1)")
    g.add_argument("--flavor", choices=("auto", "openmpi", "mpich"), default="auto",
                   help="hostfile syntax: host slots=N (openmpi) or host:N (mpich: MPICH, "
                        "Intel MPI, MVAPICH); default auto: the syntax of the mpiexec "
                        "installed (mpiexec --version), openmpi when there is none")
    p.set_defaults(run=run)


# --------------------------------------------------------------------------- export


def gauge_model(a: Any, *, level: int = 1, source: str = "auto", probes: Path | None = None,
                topology: "str | Topology | None" = None, host_pairs: bool = False,
                iterations: int | None = None, dataset: Path | None = None):
    """:func:`tomography.export.bandwidth.analysis_model`, its notes said on standard error."""
    from tomography.export.bandwidth import analysis_model

    model = analysis_model(a, level=level, source=source, probes=probes, topology=topology,
                           host_pairs=host_pairs, iterations=iterations, dataset=dataset)
    for note in model.notes:
        say(f"note: {note}")
    return model


def _write(output: str, text: str) -> None:
    if output == "-":
        emit(text)
    else:
        Path(output).write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")


def run(args: argparse.Namespace) -> int:
    """Write the dataset's hierarchy (and tree) in the chosen format."""
    from tomography.export import mpi
    from tomography.export.dot import cluster_tree_to_dot, hierarchy_to_dot
    from tomography.export.gauge import gauge_to_xml
    from tomography.export.graph import write_gexf, write_graphml
    from tomography.export.simgrid import simgrid_platform
    from tomography.export.topology_json import topology_to_json

    from tomography.model.topology import read_topology

    # a topology given is read before the analysis: a bad one is refused before the work
    topology = read_topology(args.topology) if args.topology else None
    a = analysis(args)   # the levels and ids `tomography hierarchy` shows
    m, hosts, h = a.measurement, a.hosts, a.hierarchy
    kind = args.format
    if kind in ("graphml", "gexf"):
        if args.output == "-":
            raise TomographyError(f"--format {kind} writes a file; give -o FILE")
        write = write_graphml if kind == "graphml" else write_gexf
        write(m, args.output, hierarchy=h, iterations=args.iterations)
        text = None
    elif kind in ("gauge", "simgrid"):
        model = gauge_model(a, level=args.level, source=args.bandwidth, probes=args.probes,
                            topology=topology, host_pairs=args.host_pairs,
                            iterations=args.iterations, dataset=args.dataset)
        text = (gauge_to_xml(model, unit=args.unit) if kind == "gauge"
                else simgrid_platform(model))
    elif kind == "json":
        text = topology_to_json(h, a.tree, params={
            "dataset": str(args.dataset), "iterations": args.iterations, "seed": args.seed})
    elif kind == "dot":
        text = (cluster_tree_to_dot(a.tree) if args.graph == "tree"
                else hierarchy_to_dot(h))
    elif kind == "mpi":
        text = json.dumps(mpi.mpi_hierarchy(h, root_host=args.root, slots=args.slots),
                          indent=2)
    elif kind == "hostfile":
        text = mpi.hostfile(h, slots=args.slots, flavor=args.flavor)
    else:
        text = mpi.rankfile(h, slots=args.slots)
    if text is not None:
        _write(args.output, text)
    if args.output != "-":
        level = min(args.level, h.depth) if kind in ("gauge", "simgrid") else 1
        say(f"wrote {kind} of {len(hosts)} hosts, {counted(len(h.level(level)), 'cluster')} "
            f"on level {level}, {counted(h.depth, 'level')} -> {args.output}", result=True)
    return 0
