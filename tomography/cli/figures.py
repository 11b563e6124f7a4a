"""``tomography measure figures``: a planner's absolute figures for a dataset's clusters.

Also what ``tomography multicast --dataset`` runs first when the dataset has
no figures for the clusters it plans over.
"""

from __future__ import annotations

import argparse
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from measure.probetools import FIGURES_DURATION
from measure.swarm import TRACE_HOSTS
from tomography.cli.common import Progress, positive_int, say
from tomography.cli.launchers import add_launcher_options, mpi_world, open_launcher
from tomography.model.errors import ParameterError

if TYPE_CHECKING:
    import pandas as pd

    from tomography.model.hierarchy import Hierarchy

__all__ = ["add_parser", "run", "measure_figures"]

FIGURES_EPILOG = f"""\
The broadcasts found the clusters; a planner also needs what the links carry.
After them, a few iperf3 tests between one representative host per cluster
measure it: two hosts of each cluster (the hosts' capacity); for each cluster
and group of clusters, flows side by side out of it and into it, towards its
siblings (its local capacity; a link all its pairs share, when together they
get less than its clusters could send); one flow alone between the top-level
groups. Tests that share no host and no link of the tree of clusters run at
once, so the cost grows with the clusters, not the hosts: for two sites of
two clusters, whatever their size, 4 rounds of flows side by side (--duration,
2 s) and 2 of one flow alone (as long; the hosts' tests half as long, beside
them). --level hosts measures between
the hosts instead (a grid whose sites are one host each).

Where the broadcasts were traced (runs of up to {TRACE_HOSTS} hosts are, unless
--no-trace), the flows alone run first, and a cluster or group whose busiest
second out and in during the broadcasts was at most half of what its hosts'
cards carry, and not below 0.8 of what a flow alone got across its link, takes
that figure from the trace: a link the broadcasts filled.
Its flows side by side do not run. For two sites of two clusters this leaves
the 2 rounds of flows alone.

Written to DATASET/figures (figures.csv, the runs in probes.csv);
`tomography export DATASET --format gauge` and `tomography multicast
--dataset DATASET` then plan on them (their --bandwidth auto).

examples:
  tomography measure figures --testbed two-sites-demo --dataset run
  tomography measure figures --ssh hosts.csv --dataset run --hierarchy-level 2
  tomography measure figures --testbed gridlab-8 --dataset run --level hosts"""


def add_parser(msub: Any, fmt: Any) -> None:
    """Add ``figures`` to the methods of ``tomography measure``."""
    p = msub.add_parser("figures", formatter_class=fmt, epilog=FIGURES_EPILOG,
                        help="a planner's figures (capacities, bandwidths, shared links) for "
                             "the clusters of a broadcast dataset",
                        description="Measure, with a few iperf3 tests per cluster, the "
                                    "absolute figures a multicast planner needs for the "
                                    "clusters a broadcast dataset found, and write them into "
                                    "the dataset. The links the broadcasts filled are read "
                                    "from their trace instead of tested.")
    add_launcher_options(p)
    g = p.add_argument_group("the figures")
    g.add_argument("--dataset", type=Path, required=True, metavar="DIR",
                   help="the broadcast dataset whose clusters are measured (its hosts are "
                        "the launcher's)")
    g.add_argument("--hierarchy-level", type=positive_int, default=1, metavar="K",
                   help="the level whose clusters are measured (default 1, the finest)")
    g.add_argument("--level", choices=("clusters", "hosts"), default="clusters",
                   help="measure between the clusters (default), or between the hosts, "
                        "each host a cluster of its own (as `multicast --level hosts` plans; "
                        "the tests then grow with the hosts)")
    g.add_argument("--duration", type=positive_int, default=FIGURES_DURATION, metavar="S",
                   help=f"seconds of a test of flows side by side (default "
                        f"{FIGURES_DURATION}), and of one flow alone between groups; a flow "
                        "inside a cluster runs half as long, at least 1 s")
    g.add_argument("--force", action="store_true", help="replace figures measured before")
    p.set_defaults(run=run)


def measure_figures(hosts: pd.DataFrame, transport: Any, dataset: Path, hierarchy: Hierarchy,
                    level: int, *, duration: int = FIGURES_DURATION, force: bool = False,
                    each_host: bool = False, keep_transport: bool = False) -> Path:
    """Run :func:`measure.figures.run_figures` for ``dataset``'s clusters with a progress
    bar; say what it cost beside the broadcasts.  ``keep_transport``: agents of another
    role follow on the same transport (``multicast --dataset``)."""
    import time

    from measure.figures import run_figures
    from tomography.export.bandwidth import figure_groups
    from tomography.model.dataset import read_measurement

    clusters, groups = figure_groups(hierarchy, level, hosts=each_host)
    if len(clusters) < 2:
        raise ParameterError(f"level {min(level, hierarchy.depth)} of {dataset}'s hierarchy is "
                             f"one cluster of all {len(hierarchy.hosts)} hosts: no pair of "
                             "clusters to measure; --level hosts measures between its hosts")
    missing = sorted({h for hs in clusters.values() for h in hs} - set(hosts["host"]))
    if missing:
        raise ParameterError(f"the launcher's hosts are not the dataset's: "
                             f"{len(missing)} of its hosts are missing (e.g. {missing[0]!r})")
    bar = Progress("figures", unit="round")
    start = time.monotonic()
    try:
        out = run_figures(hosts, dataset, clusters, groups, level=min(level, hierarchy.depth),
                          launch=transport, duration=duration, overwrite=force,
                          keep_transport=keep_transport,
                          progress=lambda done, total: bar.set(done, total=total))
    finally:
        bar.close()
    seconds = time.monotonic() - start
    spent = read_measurement(dataset).iterations.get("duration_s")
    broadcasts = float(spent.sum()) if spent is not None else float("nan")
    share = f", {seconds / broadcasts:.0%} of the broadcasts' {broadcasts:.0f} s" \
        if broadcasts == broadcasts and broadcasts > 0 else ""
    say(f"figures of {len(clusters)} clusters measured in {seconds:.0f} s{share}: {out}", result=True)
    return out


def run(args: argparse.Namespace) -> int:
    """``tomography measure figures``."""
    from tomography.cli.broadcasts import dataset_writer, say_stopped, terminate_as_interrupt
    from tomography.cli.common import analysis

    comm, agent_status = mpi_world(args)
    if agent_status is not None:   # this rank ran an agent for rank 0
        return agent_status
    if args.output is not None:
        raise ParameterError("measure figures writes into --dataset DIR (its figures/); "
                             "leave out -o")
    a = analysis(args, dataset=args.dataset)
    terminate_as_interrupt(args.dataset / "figures", "figures")
    with ExitStack() as held:
        held.enter_context(dataset_writer(args.dataset / "figures"))
        hosts, transport, _ = open_launcher(args, held, comm)
        if args.check:
            from measure.coordinator import preflight
            from measure.preflight import format_checks

            checks = preflight(hosts, launch=transport, port=args.port, role="probe")
            print(format_checks(checks))
            return 0 if all(c.ok for c in checks) else 2
        try:
            measure_figures(hosts, transport, args.dataset, a.hierarchy,
                            args.hierarchy_level, duration=args.duration, force=args.force,
                            each_host=args.level == "hosts")
        except KeyboardInterrupt:
            say_stopped(f"interrupted; the tests run so far are in {args.dataset}/figures "
                        "(figures.csv.part, probes.csv); run the same command with --force "
                        "for whole figures")
            return 130
    return 0
