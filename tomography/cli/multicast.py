"""``tomography multicast``: run planned multicasts, chains and BitTorrent; measure what they achieve."""

from __future__ import annotations

import argparse
import textwrap
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tomography.cli.broadcasts import dataset_writer, parse_option, resuming, say_stopped
from tomography.cli.common import Progress, positive_int, say
from tomography.cli.launchers import add_launcher_options, mpi_world, open_launcher
from tomography.model.errors import DatasetError, ParameterError, TomographyError
from tomography.model.units import counted, listed

if TYPE_CHECKING:
    import pandas as pd

    from tomography.planning.delivery import Delivery
    from tomography.planning.swarms import SwarmPlan

__all__ = ["add_parser", "run", "multicast_table", "ALL_METHODS"]

"""Pipelined chains: hosts in name order (Kascade's, topology-oblivious) or cluster by cluster."""

MULTICAST_EPILOG = """\
methods (comma-separated, or all):
  flat, semi-flat, max-bottleneck, fpfr, balanced, exact, binomial
                  the planners of `tomography plan`, over the Gauge file's clusters
                  (or hosts with --level hosts); balanced and exact pace 2+ trees
  chain-hosts     a pipelined chain through the hosts in name order (Kascade's,
                  topology-oblivious)
  chain-clusters  a pipelined chain cluster by cluster, each next cluster the
                  one the last reaches best (topology-aware)
  mob             MOB: receiver-initiated and cluster-aware; each host steals an
                  equal share of the pieces from other clusters and trades the
                  rest inside its cluster, so each piece enters a cluster once
  robber          Robber: MOB whose hosts, once their share is requested, steal
                  half of a cluster mate's remaining share (adapts to slow hosts)
  bittorrent      one BitTorrent broadcast (receiver-initiated, adaptive)
  all             every method the plan source allows (default)

mob and robber need only which hosts form a cluster: --clusters, or the
clusters of --dataset (its --hierarchy-level) or --gauge.

A cluster-level plan reaches each cluster through one leader (the root in its
own cluster, else the first host by name); inside, the leader passes the data
down a chain of the cluster's hosts. Every receiver checks length and digest.

examples:
  tomography multicast --testbed gridlab-8 \\
      --gauge datasets/gauges/gridlab-8-testbed.gauge.xml --root fs0-00 --size 4MiB -o mc
  tomography multicast --testbed two-sites-demo --dataset run --root w1-00 -o mc
  tomography multicast --local 6 --method chain-hosts,bittorrent --root h00 -o mc
  tomography multicast --testbed two-sites-demo --clusters labels:1 \\
      --method mob,robber,bittorrent --root w1-00 -o mc
  tomography multicast --ssh hosts.csv --clusters labels --method robber \\
      --file /srv/images --dest /srv/images --root node-1 -o dist
  mpiexec -n 17 tomography multicast --mpi --gauge site.gauge.xml --root node-1 -o mc"""


def add_parser(sub: Any) -> None:
    """Add ``multicast`` to the ``tomography`` sub-commands."""
    from tomography.cli.export import BANDWIDTH_SOURCES

    p = sub.add_parser("multicast", help="run planned multicasts (and chains, BitTorrent) "
                                         "among real hosts and measure their throughput",
                       description="Multicast a payload from a root to every other host with "
                                   "each method, several times, over the launchers of "
                                   "`measure`; record what every receiver got and when, and "
                                   "print achieved against predicted throughput.",
                       epilog=MULTICAST_EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    add_launcher_options(p)
    g = p.add_argument_group("the multicast")
    g.add_argument("--root", help="the sending host (required unless --check)")
    g.add_argument("--size", default="64MiB",
                   help="payload of pseudo-random bytes, with its unit (default 64MiB)")
    g.add_argument("--file", metavar="PATH",
                   help="send this file or directory (its regular files) instead: PATH on the "
                        "root, read here too; every receiver gets it in --dest, verified")
    g.add_argument("--dest", metavar="DIR",
                   help="--file: the directory each receiver puts it in ({host} is the "
                        "receiver's name: one directory each on a shared file system)")
    g.add_argument("--method", default="all", metavar="M[,M...]",
                   help="methods to run (the list below; default all)")
    g.add_argument("--repeats", type=positive_int, default=3,
                   help="multicasts per method, in rotated orders (default 3)")
    g.add_argument("--pacing", choices=("kernel", "sleep"), default="kernel",
                   help="how senders hold a paced tree to its rate: the kernel's TCP pacing "
                        "(SO_MAX_PACING_RATE, default) or a sleeping sender")
    g.add_argument("--time-limit", default="300s",
                   help="time after which a multicast is cut short (default 300s)")
    g.add_argument("--stall", default="30s",
                   help="time without progress after which a receiver counts as stopped or "
                        "hung and is dropped (default 30s)")
    g.add_argument("--seed", type=int, default=0,
                   help="payload bytes, method order, analysis (default 0)")
    g.add_argument("--resume", action="store_true",
                   help="run only the multicasts the dataset does not have yet")
    g.add_argument("--force", action="store_true", help="replace an existing dataset")
    g.add_argument("--unit", default="MiB/s", help="unit of the table (default MiB/s)")
    g = p.add_argument_group("the plan (one of --gauge or --dataset for the planners)")
    source = g.add_mutually_exclusive_group()
    source.add_argument("--gauge", type=Path, metavar="FILE",
                        help="a Gauge file of the run's hosts (as `plan` reads)")
    source.add_argument("--dataset", type=Path, metavar="DIR",
                        help="a measurement of the run's hosts: analysed and exported as "
                             "`export --format gauge` does, then planned")
    g.add_argument("--level", choices=("clusters", "hosts"), default="clusters",
                   help="plan between clusters (default) or hosts (needs host-pair figures)")
    g.add_argument("--parallel", default="auto", metavar="K|auto",
                   help="hosts of each cluster that carry a tree side by side: auto (default) "
                        "as many as the tree's rate needs over the hosts' own capacities (the "
                        "Gauge file's host figures), or K")
    g.add_argument("--max-nodes", type=positive_int, default=7,
                   help="largest network the exact optimum enumerates (default 7)")
    g.add_argument("--hierarchy-level", type=positive_int, default=1, metavar="K",
                   help="--dataset: the hierarchy level whose clusters are planned over "
                        "(default 1, the finest)")
    g.add_argument("--bandwidth", choices=BANDWIDTH_SOURCES, default="auto",
                   help="--dataset: where absolute figures come from, as for export; auto "
                        "(default): the dataset's figures, else its probes, else figures "
                        "measured now on the run's hosts (tomography measure figures)")
    g.add_argument("--probes", type=Path, metavar="DATASET",
                   help="--dataset: a probe dataset of the same hosts for --bandwidth probes")
    g.add_argument("--topology", metavar="FILE",
                   help="--dataset: topology file for --bandwidth topology")
    g.add_argument("--clusters", metavar="labels[:D]|FILE",
                   help="mob, robber: the hosts' clusters: 'labels' (each host's label, a "
                        "testbed's ground truth or the hosts file's label column; labels:1 "
                        "cuts each to its first part, the site), a CSV host,label, or a "
                        "topology (file or built-in name); default the clusters of --dataset "
                        "or --gauge")
    p.set_defaults(run=run)


ALL_METHODS = ("flat", "semi-flat", "max-bottleneck", "fpfr", "balanced", "exact", "binomial",
               "chain-hosts", "chain-clusters", "mob", "robber", "bittorrent")
"""Every method ``--method`` takes, in the order ``all`` runs them."""


def _methods(text: str, planned: bool, clustered: bool
             ) -> tuple[list[str], list[str], bool]:
    """The static methods, the swarms (mob, robber) and whether BitTorrent runs, from
    ``--method``; ``clustered``: --clusters was given."""
    from tomography.planning import METHODS
    from tomography.planning.swarms import SWARM_METHODS

    wanted = [m.strip() for m in text.split(",") if m.strip()]
    unknown = [m for m in wanted if m not in (*ALL_METHODS, "all")]
    if unknown or not wanted:
        raise ParameterError(f"--method: unknown method {unknown[0] if unknown else text!r}; "
                             f"choose among {', '.join(ALL_METHODS)} or all")
    if "all" in wanted:
        wanted = [m for m in ALL_METHODS if planned or m in ("chain-hosts", "bittorrent")
                  or (clustered and m in SWARM_METHODS)]
        if not planned:
            say("note: without --gauge or --dataset only chain-hosts, bittorrent (and mob, "
                "robber with --clusters) run (the planners and chain-clusters need a plan)")
    needs_plan = [m for m in wanted if m in METHODS or m == "chain-clusters"]
    if needs_plan and not planned:
        raise ParameterError(f"--method {needs_plan[0]} needs a plan: give --gauge FILE or "
                             "--dataset DIR")
    swarms = [m for m in wanted if m in SWARM_METHODS]
    if swarms and not (planned or clustered):
        raise ParameterError(f"--method {swarms[0]} needs the hosts' clusters: give --clusters "
                             "labels|FILE, --dataset DIR or --gauge FILE")
    return ([m for m in wanted if m not in ("bittorrent", *SWARM_METHODS)], swarms,
            "bittorrent" in wanted)


def _label_depth(text: str | None) -> int | None:
    """The depth of ``--clusters labels[:D]`` (0: whole labels), None for a file.

    Examples
    --------
    >>> _label_depth("labels"), _label_depth("labels:1"), _label_depth("x.csv")
    (0, 1, None)
    """
    if text is None or not (text == "labels" or text.startswith("labels:")):
        return None
    depth = text.partition(":")[2] or "0"
    if not depth.isdigit() or (text != "labels" and int(depth) < 1):
        raise ParameterError(f"--clusters takes labels or labels:D with D >= 1, got {text!r}")
    return int(depth)


def _dataset_clusters(args: argparse.Namespace) -> dict[str, str]:
    """The clusters of ``--dataset``'s hierarchy level ``--hierarchy-level`` (no figures)."""
    from tomography.cli.common import analysis

    hierarchy = analysis(args, dataset=args.dataset).hierarchy
    level = min(args.hierarchy_level, hierarchy.depth)
    hosts = list(hierarchy.hosts)
    return dict(zip(hosts, (f"c{x}" for x in hierarchy.labels(level, hosts))))


def _cluster_source(text: str | None) -> dict[str, str] | None:
    """The clusters of ``--clusters`` FILE (None for ``labels`` or none given): a CSV
    ``host,label``, or a topology's clusters."""
    if text is None or _label_depth(text) is not None:
        return None
    from tomography.model.topology import read_topology
    from tomography.model.truth_labels import read_truth_file

    if text.endswith(".csv"):
        return read_truth_file(text)
    try:
        topology = read_topology(text)
    except (TomographyError, OSError) as exc:
        raise ParameterError(f"--clusters: {exc}; give labels, a CSV host,label or a "
                             "topology") from None
    return {h.name: h.cluster for h in topology.hosts}


def _cluster_of(args: argparse.Namespace, read: dict[str, str] | None, model: Any,
                hosts: pd.DataFrame) -> dict[str, str]:
    """Each run host's cluster for mob and robber (``read``: from ``_cluster_source``)."""
    from tomography.model.truth_labels import labels_at_depth

    names = list(hosts["host"])
    depth = _label_depth(args.clusters)
    if depth is not None:
        labels = dict(zip(hosts["host"], hosts["label"].fillna("").astype(str)))
        blank = [h for h in names if not labels[h].strip()]
        if blank:
            raise ParameterError(f"--clusters {args.clusters}: {counted(len(blank), 'host')} "
                                 f"({listed(blank, 4)}) have no label; give --clusters FILE")
        read = dict(zip(names, labels_at_depth(labels, depth, names))) if depth else labels
    elif read is None:
        read = model.cluster_of
    missing = [h for h in names if h not in read]
    if missing:
        raise ParameterError(f"--clusters: {counted(len(missing), 'host')} of the run "
                             f"({listed(missing, 4)}) are in no cluster")
    return {h: str(read[h]) for h in names}


def _figures_wanted(args: argparse.Namespace, a: Any) -> bool:
    """Whether ``--dataset`` lacks the figures its plan needs, which are then measured on
    the run's hosts first: ``--bandwidth figures``, or ``auto`` on a dataset with neither
    figures for the clusters planned over nor probes."""
    from tomography.export.bandwidth import figure_groups, has_figures

    if args.bandwidth not in ("auto", "figures") or args.probes is not None:
        return False
    clusters, _ = figure_groups(a.hierarchy, args.hierarchy_level,
                                hosts=args.level == "hosts")
    if len(clusters) < 2 or has_figures(args.dataset, clusters):
        return False
    m = a.measurement
    return args.bandwidth == "figures" or m.probes is None or not len(m.probes)


def _model(args: argparse.Namespace, static: list[str] | None = None,
           figures: Path | None = None, a: Any = None):
    """The Gauge model of ``--gauge`` or ``--dataset``, or None.

    None too when ``--dataset`` needs its figures measured first
    (:func:`_figures_wanted`); once ``figures`` are measured, the model over them
    (``a``: the dataset's analysis, when made already).

    A dataset whose hierarchy level is one cluster is refused only when a
    method of ``static`` plans between clusters (a planner or
    ``chain-clusters``, with ``--level clusters``); ``chain-hosts`` and
    BitTorrent need no clusters and run (the chain's prediction is then NaN).
    Without a static method (MOB, Robber, BitTorrent need no figures) a
    dataset gives no model: :func:`_dataset_clusters` reads its clusters."""
    if args.gauge is not None:
        from tomography.export.gauge import read_gauge

        return read_gauge(args.gauge)
    if args.dataset is not None and static:
        from tomography.cli.common import analysis
        from tomography.cli.export import gauge_model

        a = a if a is not None else analysis(args, dataset=args.dataset)
        if _figures_wanted(args, a) and figures is None:
            return None    # measured once the launcher is up (run)
        model = gauge_model(a, level=args.hierarchy_level,
                            source="figures" if figures is not None else args.bandwidth,
                            probes=args.probes, topology=args.topology,
                            host_pairs=args.level == "hosts", dataset=args.dataset)
        between = [m for m in (static or []) if m != "chain-hosts"]
        if len(model.clusters) < 2 and args.level == "clusters" and between:
            raise TomographyError(
                f"--dataset {args.dataset}: level {min(args.hierarchy_level, a.hierarchy.depth)} "
                f"of its hierarchy is one cluster of {len(model.hosts)} hosts, so there is "
                f"nothing to plan between clusters for {', '.join(between)}; run --method "
                "chain-hosts,bittorrent (they need no clusters), or plan over a Gauge file "
                "(--gauge)")
        return model
    return None


def _files(args: argparse.Namespace):
    """The :class:`~measure.fileset.Files` of ``--file`` and ``--dest``, or None."""
    if args.file is None:
        if args.dest is not None:
            raise ParameterError("--dest goes with --file PATH")
        return None
    if args.dest is None:
        raise ParameterError("--file needs --dest DIR, where every receiver puts it")
    if not Path(args.dest).is_absolute():
        raise ParameterError(f"--dest takes an absolute path (the receivers' own), got "
                             f"{args.dest!r}")
    from measure.fileset import Files, manifest
    from tomography.planning.swarms import PIECE

    try:
        found = manifest(Path(args.file).absolute(), PIECE)
    except OSError as exc:
        raise ParameterError(str(exc) if str(exc).startswith("--file")
                             else f"--file {args.file}: {exc.strerror or exc}") from None
    return Files(str(Path(args.file).absolute()), args.dest, found)


def _parallel(text: str) -> int | str:
    if text == "auto":
        return text
    try:
        return positive_int(text)
    except (argparse.ArgumentTypeError, ValueError):
        raise ParameterError(f"--parallel takes auto or a whole number >= 1, got {text!r}") \
            from None


def run(args: argparse.Namespace) -> int:
    """Run the multicasts of ``args`` and print the table of what they achieved."""
    from tomography.cli.measure import terminate_as_interrupt
    from tomography.model.units import parse_bandwidth, parse_size, parse_time

    comm, agent_status = mpi_world(args)
    if agent_status is not None:   # this rank ran an agent for rank 0
        return agent_status
    size = parse_option("--size", args.size, parse_size)
    time_limit = parse_option("--time-limit", args.time_limit, parse_time)
    stall = parse_option("--stall", args.stall, parse_time)
    if not args.unit[:1].isalpha():
        raise ParameterError(f"--unit takes a unit such as MiB/s or Mbit/s, got {args.unit!r}")
    unit_bytes = parse_option("--unit", f"1{args.unit}", parse_bandwidth) / 8
    if args.seed < 0:
        raise ParameterError(f"--seed takes a whole number >= 0, got {args.seed}")
    if args.skip_failed:
        raise ParameterError("multicast does not take --skip-failed: every method reaches "
                             "every host; leave a failing host out of the hosts file and the "
                             "plan")
    files = _files(args)
    if files is not None:
        size = files.manifest["size"]
    if args.gauge is not None and (args.probes or args.topology):
        raise ParameterError("--probes and --topology go with --dataset, not --gauge")
    static, swarms, bittorrent = ([], [], False) if args.check else _methods(
        args.method, args.gauge is not None or args.dataset is not None,
        args.clusters is not None)
    clusters_read = _cluster_source(args.clusters) if swarms else None
    if swarms and clusters_read is None and args.clusters is None and not static \
            and args.dataset is not None:
        clusters_read = _dataset_clusters(args)
    if files is not None and bittorrent:
        if args.method.strip() != "all":
            raise ParameterError("--file goes with the planned methods, chain-hosts, mob and "
                                 "robber; bittorrent sends its synthetic payload only")
        bittorrent = False
        say("note: bittorrent left out: it sends only its synthetic payload, not --file")
    parallel = _parallel(args.parallel)   # read once, refused before anything starts
    if not args.check and args.root is None:
        raise ParameterError("--root HOST is needed (the sending host)")
    planned = None   # the dataset's analysis, made once
    if args.dataset is not None and static and not args.check:
        from tomography.cli.common import analysis

        planned = analysis(args, dataset=args.dataset)
    model = _model(args, static, a=planned) if not args.check else None   # a bad plan source fails before any start
    terminate_as_interrupt(args.output, "multicasts")
    with ExitStack() as held:
        if not args.check and args.output is not None:  # one writer, before anything starts
            held.enter_context(dataset_writer(args.output))
        if not args.check:
            kept = _check_early(args, model, size)
        try:
            hosts, transport, meta = open_launcher(args, held, comm)
            if args.check:
                from measure.coordinator import preflight
                from measure.preflight import format_checks

                checks = preflight(hosts, launch=transport, port=args.port, role="multicast")
                print(format_checks(checks))
                return 0 if all(c.ok for c in checks) else 2
            if args.output is None:
                raise TomographyError("-o/--output DIR is needed (or --check for the "
                                      "preflight alone)")
            if model is None and args.dataset is not None and static:
                model = _measured_model(args, hosts, transport, static, planned)
            from tomography.planning.deliveries import deliveries

            left_out: dict[str, str] = {}
            plans = deliveries(static, list(hosts["host"]), args.root, size, model,
                               level=args.level, max_nodes=args.max_nodes,
                               parallel=parallel, left_out=left_out)
            for method, why in left_out.items():
                say(f"note: {method} left out: {why}")
            meta = {**meta, "left_out": left_out}
            if swarms:
                from tomography.planning.swarms import swarm_plan

                cluster_of = _cluster_of(args, clusters_read, model, hosts)
                plans = [*plans, *(swarm_plan(cluster_of, args.root, size, method=m,
                                              seed=args.seed) for m in swarms)]
            summary = _run(args, hosts, transport, meta, plans, bittorrent, time_limit, stall,
                           size, kept, files)
        except KeyboardInterrupt:
            return _interrupted(args.output)
    print(summary.describe())
    print(multicast_table(args.output, unit_bytes, args.unit))
    return 0


def _measured_model(args: argparse.Namespace, hosts: pd.DataFrame,
                    transport: Any, static: list[str], a: Any):
    """Measure ``--dataset``'s figures on the run's own hosts, then its model over them
    (``a``: the dataset's analysis)."""
    from tomography.cli.broadcasts import dataset_writer
    from tomography.cli.figures import measure_figures

    say(f"note: {args.dataset} has no figures for its clusters: measuring them on the "
        "run's hosts first (tomography measure figures)")
    with dataset_writer(args.dataset / "figures"):
        figures = measure_figures(hosts, transport, args.dataset, a.hierarchy,
                                  args.hierarchy_level, force=True,
                                  each_host=args.level == "hosts", keep_transport=True)
    model = _model(args, static, figures, a)
    if args.root not in model.hosts:
        raise ParameterError(f"--root {args.root!r} is not a host of the plan "
                             f"({listed(sorted(model.hosts), 8)})")
    return model


def _check_early(args: argparse.Namespace, model: Any, size: int) -> int:
    """What can be refused before any agent starts (or a testbed is raised); the multicasts
    a resumed dataset has."""
    from tomography.model.dataset.multicast import prepare_output

    if args.output is None:
        raise TomographyError("-o/--output DIR is needed (or --check for the preflight alone)")
    if model is not None and args.root not in model.hosts:
        raise ParameterError(f"--root {args.root!r} is not a host of the plan "
                             f"({listed(sorted(model.hosts), 8)})")
    return len(prepare_output(Path(args.output), {"root": args.root, "bytes": size,
                                                  "seed": args.seed},
                              {}, None, resume=args.resume, overwrite=args.force))


def _run(args: argparse.Namespace, hosts: pd.DataFrame, transport: Any, meta: dict[str, Any],
         plans: list[Delivery | SwarmPlan], bittorrent: bool, time_limit: float, stall: float,
         size: int, kept: int, files: Any):
    from measure.multicast import run_multicasts
    from measure.swarm import SwarmParams
    from tomography.planning.swarms import SwarmPlan

    total = (len(plans) + bittorrent) * args.repeats - kept
    bar = Progress("multicasts", total=total, unit="multicast")
    source = ({"gauge": str(args.gauge)} if args.gauge else
              {"dataset": str(args.dataset), "bandwidth": args.bandwidth,
               "hierarchy_level": args.hierarchy_level} if args.dataset else {})
    if args.clusters:
        source = {**source, "clusters": args.clusters}
    try:
        return run_multicasts(hosts, [p for p in plans if not isinstance(p, SwarmPlan)],
                              args.output, swarms=[p for p in plans if isinstance(p, SwarmPlan)],
                              launch=transport,
                              repeats=args.repeats, seed=args.seed, bittorrent=bittorrent,
                              bittorrent_params=SwarmParams(time_limit=time_limit),
                              pacing=args.pacing, time_limit=time_limit, stall=stall,
                              port=args.port, root=args.root, size=size, files=files,
                              meta={**meta, "plan_source": source, "level": args.level,
                                    "parallel": args.parallel},
                              resume=resuming(args.resume, args.output), overwrite=args.force,
                              progress=lambda result: bar.set(bar.done + 1))
    finally:
        bar.close()


def _interrupted(output: Path | None) -> int:
    from tomography.model.dataset.multicast import read_multicasts

    kept = 0
    if output is not None and (Path(output) / "meta.json").exists():
        try:
            kept = len(read_multicasts(output)[1])
        except DatasetError:     # stopped before the dataset was whole: nothing kept
            pass
    say_stopped(f"interrupted; {kept} finished multicast(s) are in {output}; run the same "
                "command with --resume for the rest")
    return 130


def multicast_table(output: Path, unit_bytes: float = 2**20, unit: str = "MiB/s") -> str:
    """The table of a multicast dataset: method, predicted, achieved (median, range), ratio."""
    from tomography.model.dataset.multicast import read_summary
    from tomography.planning.delivery import unpaced_note

    meta, table = read_summary(output, unit_bytes=unit_bytes)
    width = max([15, *map(len, table["method"])])

    def number(x: float) -> str:
        return "-" if x != x else f"{x:.4g}"

    files = meta["params"].get("file")
    what = (f"{files['name']} ({counted(len(files['files']), 'file')}, "
            f"{meta['params']['bytes']} bytes)" if files else f"{meta['params']['bytes']} bytes")
    lines = [f"multicast of {what} from {meta['params']['root']} "
             f"to {counted(len(meta['hosts']) - 1, 'host')} (throughput in {unit})", "",
             f"  {'method':<{width}} {'predicted':>9} {'basis':<11} {'achieved':>9} "
             f"{'range':>17} {'ach/pred':>8} {'seconds':>8} {'complete':>8}"]
    for r in table.itertuples():
        spread = f"{number(r.low)}-{number(r.high)}" if r.complete else "-"
        lines.append(f"  {r.method:<{width}} {number(r.predicted):>9} {r.basis or '-':<11} "
                     f"{number(r.achieved):>9} {spread:>17} {number(r.ratio):>8} "
                     f"{number(r.completion_s):>8} {f'{r.complete}/{r.runs}':>8}")
    if (table["basis"] == "lower bound").any():
        lines += ["", "  lower bound: planned over rates the broadcasts reached, not what the "
                  "links carry;", "  measure the figures (tomography measure figures) for a "
                  "forecast"]
    for method, p in sorted(meta.get("plans", {}).items()):
        if note := unpaced_note(method, len(p.get("streams", []))):
            lines += ["", *textwrap.wrap(note, 90, initial_indent="  ",
                                         subsequent_indent="  ")]
    return "\n".join(lines)
