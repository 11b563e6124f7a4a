"""Commands that hand the topology to its consumers: ``export`` and ``plan``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from tomography.cli.common import (add_analysis_options, add_format_option,
                                   add_hierarchy_options, add_tree_level_option, emit,
                                   hierarchy, load_shared, positive_int, tree_of, weight_unit)
from tomography.errors import TomographyError
from tomography.units import counted, listed

__all__ = ["add_commands", "COMMANDS", "FORMATS", "BANDWIDTH_SOURCES"]

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

BANDWIDTH_SOURCES = ("auto", "probes", "topology", "broadcasts")

EXPORT_EPILOG = """\
formats:
""" + "\n".join(f"  {name:<9} {text}" for name, text in FORMATS.items()) + """

gauge and simgrid need absolute bandwidths; --bandwidth says where they come from:
  probes      pairwise iperf3/NetPIPE runs of the dataset (probes.csv)
  topology    model values of the topology file of a simulated or emulated run
              (testbed scale factors applied)
  broadcasts  bytes moved over the broadcasts' durations (observed lower bounds)
  auto        the first of these the dataset allows (default)
Every figure written names its source and unit.

examples:
  tomography export run --format gauge -o run.gauge.xml
  tomography export run --format gauge -o - | tomography plan - --root ca-00
  tomography export run --format graphml -o run.graphml     # open in Gephi
  tomography export run --format dot --graph tree -o - | dot -Tsvg -o tree.svg
  tomography export run --format mpi --root ca-00 -o run.mpi.json"""

PLAN_EPILOG = """\
methods (balanced multicasting and the trees it is compared with):
  flat            the root sends to every node itself
  semi-flat       minimum-height tree over live links, highest throughput
  max-bottleneck  Prim's variant: the tree whose weakest link is strongest
  fpfr            Fast Parallel File Replication trees, sharing capacities uncoordinated
  balanced        FPFR trees with rates from a linear program (balanced multicasting)
  exact           the LP over every spanning tree (small networks only)
  binomial        MPI's binomial broadcast tree, hosts in the order of their clusters
  all             every method side by side (default)

examples:
  tomography plan datasets/gauges/gridlab-8.gauge.xml --root fs0
  tomography plan run.gauge.xml --root ca-00 --method balanced --format json"""


def add_commands(sub: Any) -> None:
    """Add ``export`` and ``plan`` to the ``tomography`` sub-parsers."""
    fmt = argparse.RawDescriptionHelpFormatter
    p = sub.add_parser("export", help="write the topology for its consumers: Gauge, JSON, "
                                      "GraphML/GEXF, DOT, SimGrid, MPI",
                       description="Infer the hierarchy of a dataset and write it in the "
                                   "format a consumer reads.",
                       epilog=EXPORT_EPILOG, formatter_class=fmt)
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

    from tomography.planning import METHODS

    p = sub.add_parser("plan", help="plan a multicast over a Gauge file (balanced "
                                    "multicasting and the other trees)",
                       description="Plan a multicast from a root over the network of a Gauge "
                                   "file and predict its throughput, local capacities shared.",
                       epilog=PLAN_EPILOG, formatter_class=fmt)
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


# --------------------------------------------------------------------------- export


def _topology_of(m: Any, path: str | None):
    """The topology a simulated or emulated dataset ran on, as it ran (scaled)."""
    from measure.testbed import scaled
    from tomography.topology import read_topology

    name = path or m.meta.get("topology")
    if not name:
        raise TomographyError("--bandwidth topology: the dataset names no topology; give "
                              "--topology FILE")
    try:
        topo = read_topology(name)
    except (TomographyError, OSError) as exc:
        raise TomographyError(f"--bandwidth topology: cannot read topology {name!r} ({exc}); "
                              "give --topology FILE") from None
    scale = (m.meta.get("testbed") or {}).get("scale") or {}
    if scale:
        topo = scaled(topo, bandwidth=float(scale.get("bandwidth", 1.0)),
                      hosts_per_cluster=scale.get("hosts_per_cluster"))
    return topo


def _bandwidth_model(args: argparse.Namespace, m: Any, clusters: dict[str, Any]):
    """The absolute figures of the clusters, from the source ``args.bandwidth`` names."""
    from tomography.export.bandwidth import from_broadcasts, from_probes, from_topology

    source = args.bandwidth
    if args.probes is not None:  # a probe mesh run beside the broadcasts
        from tomography.dataset import read_measurement

        probes = read_measurement(args.probes)
        unknown = sorted(set(m.host_names) - set(probes.host_names))
        if unknown:
            raise TomographyError(f"--probes {args.probes}: host {unknown[0]!r} of the dataset "
                                  f"is not in the probe dataset ({len(unknown)} missing)")
        if source in ("auto", "probes"):
            return from_probes(probes, clusters, host_pairs=args.host_pairs)
    if source == "auto":
        if m.probes is not None and len(m.probes):
            source = "probes"
        elif m.meta.get("topology") or args.topology:
            source = "topology"
        elif "duration_s" in m.iterations and m.iterations["duration_s"].notna().all():
            source = "broadcasts"
        else:
            raise TomographyError("no source of absolute bandwidths: the dataset has no "
                                  "probes, no topology and no broadcast durations")
    if source == "probes":
        return from_probes(m, clusters, host_pairs=args.host_pairs)
    if source == "topology":
        model = from_topology(_topology_of(m, args.topology), clusters,
                              host_pairs=args.host_pairs)
        if m.meta.get("testbed", {}).get("latency_applied") is False:
            model.notes.append("the delays are the topology's: the testbed that measured the "
                               "dataset ran without them (no netem)")
        return model
    return from_broadcasts(m, clusters, iterations=None if args.iterations is None
                           else m.iteration_ids[:args.iterations], host_pairs=args.host_pairs)


def _shared_links(h: Any, level: int) -> list[str]:
    """A warning when the clusters of ``level`` reach each other over shared links.

    Two clusters under different parents (level + 1) reach each other over
    the link between the parents, which every such pair of the two parents
    shares; a Gauge file gives each pair its bandwidth alone, so a planner
    over-predicts what several trees across it get.
    """
    if level >= h.depth:
        return []
    parent = {c.id: c.parent for c in h.level(level)}
    ids = list(parent)
    crossing = sum(parent[a] != parent[b] for i, a in enumerate(ids) for b in ids[i + 1:])
    shared = crossing - sum(
        1 for i, a in enumerate(h.level(level + 1)) for b in h.level(level + 1)[i + 1:])
    if shared <= 0:
        return []
    return [f"{crossing} cluster pairs of level {level} cross between level-{level + 1} "
            f"clusters, several over one link: the file gives each pair its bandwidth "
            f"alone, so a planner may over-predict trees across them; export --level "
            f"{level + 1} to plan across level {level + 1}"]


def _write(output: str, text: str) -> None:
    if output == "-":
        emit(text)
    else:
        Path(output).write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")


def cmd_export(args: argparse.Namespace) -> int:
    from tomography.export import mpi
    from tomography.export.bandwidth import clusters_from
    from tomography.export.dot import cluster_tree_to_dot, hierarchy_to_dot
    from tomography.export.gauge import gauge_to_xml
    from tomography.export.graph import write_gexf, write_graphml
    from tomography.export.simgrid import simgrid_platform
    from tomography.export.topology_json import topology_to_json

    m, W, sampler = load_shared(args)   # the levels and ids `tomography hierarchy` shows
    hosts = m.host_names
    h = hierarchy(args, W, hosts, sampler)
    h.params.update(iterations=args.iterations, weight_unit=weight_unit(m))
    kind = args.format
    if kind in ("graphml", "gexf"):
        if args.output == "-":
            raise TomographyError(f"--format {kind} writes a file; give -o FILE")
        write = write_graphml if kind == "graphml" else write_gexf
        write(m, args.output, hierarchy=h, n=args.iterations)
        text = None
    elif kind in ("gauge", "simgrid"):
        clusters = clusters_from(h, level=min(args.level, h.depth))
        if args.level > h.depth:
            print(f"note: the hierarchy has {h.depth} levels; exporting level {h.depth}",
                  file=sys.stderr)
        model = _bandwidth_model(args, m, clusters)
        model.notes.extend(_shared_links(h, min(args.level, h.depth)))
        for note in model.notes:
            print(f"note: {note}", file=sys.stderr)
        text = (gauge_to_xml(model, unit=args.unit) if kind == "gauge"
                else simgrid_platform(model))
    elif kind == "json":
        text = topology_to_json(h, tree_of(args, m, W, h, sampler), params={
            "dataset": str(args.dataset), "iterations": args.iterations, "seed": args.seed})
    elif kind == "dot":
        text = (cluster_tree_to_dot(tree_of(args, m, W, h, sampler)) if args.graph == "tree"
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
        print(f"wrote {kind} of {len(hosts)} hosts, {counted(len(h.level(level)), 'cluster')} "
              f"on level {level}, {counted(h.depth, 'level')} -> {args.output}",
              file=sys.stderr)
    return 0


# --------------------------------------------------------------------------- plan


def _read_gauge_arg(path: str):
    import tempfile

    from tomography.export.gauge import read_gauge

    if path != "-":
        return read_gauge(path)
    with tempfile.NamedTemporaryFile("w", suffix=".gauge.xml", encoding="utf-8") as tmp:
        tmp.write(sys.stdin.read())
        tmp.flush()
        return read_gauge(tmp.name)


def cmd_plan(args: argparse.Namespace) -> int:
    from tomography.export.gauge import gauge_to_network
    from tomography.planning import METHODS, compare, plan

    model = _read_gauge_arg(args.gauge)
    net = gauge_to_network(model, args.level, unit=args.unit)
    root = args.root
    if args.level == "clusters" and root not in net.nodes and root in model.cluster_of:
        root = model.cluster_of[root]
        print(f"root host {args.root} is in cluster {root}", file=sys.stderr)
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
            "nodes": net.nodes,
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
    lines = [f"multicast from {root} over {net.size} {args.level} of {args.gauge} "
             f"(throughput in {unit}, local capacities shared)", "",
             f"  {'method':<15} {'throughput':>11} {'trees':>6} {'ms':>9}  note"]
    for r in table.itertuples():
        value = "-" if r.throughput != r.throughput else f"{r.throughput:.4g}"
        ms = "-" if r.seconds != r.seconds else f"{r.seconds * 1e3:.2f}"
        lines.append(f"  {r.method:<15} {value:>11} {r.trees:>6} {ms:>9}  {r.note}")
    best = max(plans.values(), key=lambda p: p.throughput, default=None)
    if best is not None:
        lines += ["", f"trees of {best.method} ({best.throughput:.4g} {unit}):"]
        for tree, rate in zip(best.trees, best.rates):
            edges = ", ".join(f"{a}->{b}" for a, b in tree.edge_names(net.nodes))
            lines.append(f"  rate {rate:>9.4g}  {edges}")
    emit("\n".join(lines))
    return 0


COMMANDS = {"export": cmd_export, "plan": cmd_plan}
