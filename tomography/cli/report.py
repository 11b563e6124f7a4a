"""``tomography report``: one self-contained HTML page per run (:mod:`tomography.report`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from tomography.cli.common import (add_analysis_options, add_hierarchy_options,
                                   add_tree_level_option, analysis, command, positive_int, say)
from tomography.model.stop_rule import stop_rule_text

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    """Add ``report`` to the ``tomography`` sub-commands."""
    p = command(sub, "report", "one self-contained HTML page of a run: how it was measured, "
                "heat map, Hasse diagram, tree, convergence, accuracy, probes, multicasts",
                "Write one HTML file that opens anywhere without a server or the network "
                "(figures inline): how the dataset was measured (meta.json), the heat map of "
                "w_n (a probe dataset: a source x destination grid of Mbit/s with failed tests "
                "marked), Louvain's clusters, the Hasse diagram and the tree with every "
                "confidence, the stop rule's verdict per iteration, with a truth the NMI per "
                "level and per iteration, the probe table, and the table of a multicast run "
                "beside the dataset (DATASET/../multicast, as the demo writes it, or "
                "--multicast). Every number is the analysis of the other commands with the "
                "same options. Large runs stay usable: the heat map is a bounded image, big "
                "diagrams are summarised and tables cut after --max-rows rows.",
                ["tomography report run -o run.html",
                 "tomography report out/demo/dataset -o demo.html   # finds out/demo/multicast",
                 "tomography report mesh -o mesh.html               # an iperf3 probe dataset",
                 "tomography report run --truth truth.csv --until-converged 4 -o run.html"])
    add_analysis_options(p)
    add_hierarchy_options(p)
    add_tree_level_option(p, "--tree-level")
    p.add_argument("-o", "--output", type=Path, required=True, metavar="FILE",
                   help="the HTML file to write")
    p.add_argument("--truth", default=None,
                   help="'labels' (hosts.csv), a CSV file with columns host,label, or 'none' "
                        "(default: the labels of hosts.csv when it has any)")
    p.add_argument("--multicast", type=Path, default=None, metavar="DIR",
                   help="a `tomography multicast` output directory whose table the page "
                        "shows (default: DATASET/multicast or DATASET/../multicast when it "
                        "holds multicasts.csv)")
    p.add_argument("--no-multicast", action="store_true",
                   help="leave out the multicast table even when a run is found")
    p.add_argument("--until-converged", type=positive_int, default=None, metavar="K",
                   dest="stop_k",
                   help=f"the stop rule replayed: {stop_rule_text()} (default K 2, as "
                        "measure --until-converged)")
    p.add_argument("--max-rows", type=positive_int, default=None, metavar="N",
                   help="rows each table shows at most (default 200)")
    p.add_argument("--title", help="the page's title (default: the dataset's name)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Analyse the dataset and write its report."""
    import time
    from dataclasses import replace

    from tomography.model.dataset import read_measurement
    from tomography.pipeline import refuse_nothing_exchanged
    from tomography.report import MAX_ROWS, write_report

    started = time.perf_counter()
    if args.multicast is not None and not args.no_multicast:   # refused before the analysis
        from tomography.model.dataset.multicast import read_multicasts

        read_multicasts(args.multicast)
    m = read_measurement(args.dataset)
    refuse_nothing_exchanged(m, Path(args.dataset))
    truth: Any = args.truth
    if truth is None:
        truth = "labels" if m.labels else None   # the dataset's own truth, when it has one
    elif truth == "none":
        truth = None
    a = analysis(args, m, truth=truth)
    report = write_report(a, args.output, dataset=args.dataset,
                          multicast=False if args.no_multicast else args.multicast,
                          stop_k=args.stop_k, max_rows=args.max_rows or MAX_ROWS,
                          title=args.title or _name(args.dataset))
    say(replace(report, seconds=time.perf_counter() - started).describe(), result=True)
    return 0


def _name(dataset: Path) -> str:
    """The page's title: the dataset's name (its parent's for ``.../dataset``)."""
    path = dataset.resolve()
    return path.parent.name if path.name == "dataset" and path.parent.name else path.name
