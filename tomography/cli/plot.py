"""The ``plot`` command: the figures of :mod:`visualize`, written to PNG, SVG or PDF."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from tomography.cli.common import (add_analysis_options, add_hierarchy_options,
                                   add_tree_level_option, analysis, positive_int, say)
from tomography.model.errors import TomographyError
from tomography.model.units import counted

__all__ = ["add_parser", "run", "KINDS", "FORMATS"]

KINDS = {
    "layout": "Kamada-Kawai view: colour = found cluster, shape = true label (Figs 5.3-5.7)",
    "heatmap": "blocks each host received from each host, by cluster (Fig 5.1)",
    "timeline": "blocks sent + received per second per host, traced broadcast (Fig 5.2)",
    "hasse": "the hierarchy of bandwidth clusters as a Hasse diagram (Figs 5.19, 5.20)",
    "tree": "maximum spanning tree of the clusters with edge weights (Fig 5.23)",
    "convergence": "NMI after 1..n iterations, flat and per level (Figs 5.13, 5.21)",
    "edge": "w of one edge per iteration and its running mean w_n (Fig 4.5; --edge)",
    "distribution": "w_n / mean over all pairs; --compare overlays datasets (App. A Fig 2)",
}

FORMATS = ("png", "svg", "pdf")

EPILOG = """\
kinds:
""" + "\n".join(f"  {name:<13} {text}" for name, text in KINDS.items()) + """

The file format comes from the suffix of -o: .png (--dpi applies), .svg, .pdf.
Figures are one paper column wide (3.4 in; --width double: 7 in) with
colour-blind-safe colours (Okabe-Ito, viridis).  The layout engine that ran
is printed and written on the figure.

examples:
  tomography plot run --kind layout -o layout.png
  tomography plot run --kind layout --layout neato --top 0.25 -o layout.pdf
  tomography plot run --kind heatmap --iteration 0 -o received.png    # one broadcast
  tomography plot run --kind heatmap --weights w --level 2 -o w_n.svg
  tomography plot run --kind timeline --iteration 0 -o timeline.png   # needs --trace data
  tomography plot run --kind hasse -o hasse.pdf
  tomography plot run --kind tree -o tree.pdf
  tomography plot run --kind convergence --iterations 10 -o nmi.png
  tomography plot run --kind edge --edge e1-00 e1-01 -o edge.png
  tomography plot sim --kind distribution --compare real --names simulated real -o w.png"""


def add_parser(sub: Any) -> None:
    """Add ``plot`` to the ``tomography`` sub-commands."""
    p = sub.add_parser("plot", help="draw a figure of a dataset (layout, heatmap, timeline, "
                                    "Hasse diagram, tree, convergence, edge, distribution) "
                                    "to PNG, SVG or PDF",
                       description="Draw one figure of a measurement dataset and its "
                                   "analysis, as in the thesis's figures.",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_analysis_options(p)
    add_hierarchy_options(p)
    p.add_argument("--kind", "-k", choices=tuple(KINDS), required=True, help="the figure")
    p.add_argument("-o", "--output", type=Path, required=True, metavar="FILE",
                   help="file to write: .png, .svg or .pdf")
    p.add_argument("--dpi", type=positive_int, default=300,
                   help="resolution of a PNG (default 300)")
    p.add_argument("--width", choices=("single", "double"), default=None,
                   help="one paper column (3.4 in) or the page (7 in); default: per kind")
    p.add_argument("--truth", default="labels",
                   help="'labels' (hosts.csv, default) or a CSV file with columns host,label")
    g = p.add_argument_group("layout and heatmap")
    g.add_argument("--level", type=positive_int, default=1, metavar="K",
                   help="hierarchy level whose clusters colour (layout) or order (heatmap) "
                        "the hosts (default 1, the finest)")
    add_tree_level_option(p.add_argument_group("tree"), "--tree-level")
    g.add_argument("--layout", choices=("auto", "networkx", "igraph", "neato"),
                   default="auto", help="layout engine (default auto: networkx under 150 "
                                        "hosts, igraph above)")
    g.add_argument("--top", type=float, default=0.5,
                   help="share of the edges drawn, heaviest first (default 0.5)")
    g.add_argument("--weights", choices=("received", "w"), default="received",
                   help="heatmap: directed blocks received (default) or the symmetric w_n")
    g.add_argument("--log", action="store_true", help="heatmap: logarithmic colour scale")
    g = p.add_argument_group("heatmap and timeline")
    g.add_argument("--iteration", type=int, metavar="I",
                   help="one broadcast (heatmap: instead of the mean; timeline: default the "
                        "first traced)")
    g.add_argument("--metric", choices=("blocks", "peers"), default="blocks",
                   help="timeline: blocks sent + received per second (default) or peers "
                        "exchanging blocks")
    g = p.add_argument_group("convergence, edge and distribution")
    g.add_argument("--bars", action="store_true",
                   help="convergence: grouped bars per n (as Fig 5.21) instead of lines")
    g.add_argument("--edge", nargs=2, metavar=("A", "B"), help="edge: the two hosts")
    g.add_argument("--compare", type=Path, action="append", default=[], metavar="DATASET",
                   help="distribution, convergence: another dataset drawn with the first "
                        "(repeatable)")
    g.add_argument("--names", nargs="+", metavar="NAME",
                   help="legend names of DATASET and the --compare datasets")
    g.add_argument("--linear", action="store_true",
                   help="distribution: linear x axis (default logarithmic)")
    p.set_defaults(run=run)


def _format(path: Path) -> str:
    suffix = path.suffix.lower().lstrip(".")
    if suffix not in FORMATS:
        raise TomographyError(f"{path}: the format comes from the suffix; use .png, .svg or "
                              f".pdf (got {path.suffix or 'no suffix'!r})")
    return suffix


def _names(args: argparse.Namespace, count: int) -> list[str] | None:
    if args.names is None:
        return None
    if len(args.names) != count:
        raise TomographyError(f"--names gives {len(args.names)} names for {count} datasets "
                              "(DATASET and each --compare)")
    return list(args.names)


def _short(path: Path) -> str:
    """A legend name for a dataset directory: its name (its parent's for ``.../dataset``)."""
    path = path.resolve()
    return path.parent.name if path.name == "dataset" and path.parent.name else path.name


def _labels(args: argparse.Namespace, m: Any) -> dict[str, str] | None:
    """The truth labels to show: hosts.csv's or a file's (None when there are none)."""
    from tomography.model.truth_labels import read_truth_file

    return (m.labels if args.truth == "labels" else read_truth_file(args.truth)) or None


def _figure(args: argparse.Namespace) -> tuple[Any, str]:
    """The figure of ``args.kind`` and a note for the user."""
    import visualize

    kind, width = args.kind, {} if args.width is None else {"width": args.width}
    if kind == "timeline":
        fig = visualize.plot_timeline(args.dataset, iteration=args.iteration,
                                      metric=args.metric, **width)
        info = fig.tomography_info
        return fig, (f"iteration {info['iteration']}, {info['blocks']} blocks traced, "
                     f"{info['shape'][0]} hosts")
    # the Hasse diagram and the tree show each level's, cluster's and edge's confidence
    a = analysis(args, **({} if kind in ("hasse", "tree") else {"resamples": 0}))
    m = a.measurement
    if kind in ("layout", "heatmap", "hasse"):
        h = a.hierarchy
        level = min(args.level, h.depth)
        if args.level > h.depth:
            say(f"note: the hierarchy has {h.depth} levels; using level {h.depth}")
        if kind == "layout":
            fig = visualize.plot_layout(m, clusters=h.level(level), iterations=args.iterations,
                                        top=args.top, engine=args.layout, seed=args.seed,
                                        **width)
            info = fig.tomography_info
            return fig, (f"Kamada-Kawai layout by {info['engine']}, {info['nodes']} hosts, "
                         f"{info['edges']} of {info['edges_total']} edges drawn, colour = "
                         f"level-{level} cluster")
        if kind == "heatmap":
            fig = visualize.plot_heatmap(m, iterations=args.iterations, clusters=h.level(level),
                                         iteration=args.iteration, weights=args.weights,
                                         log=args.log, **width)
            return fig, f"{m.n_hosts} x {m.n_hosts} hosts ordered by level-{level} cluster"
        fig = visualize.plot_hasse(h, truth=_labels(args, m), **width)
        return fig, f"{h.depth} levels, {len(h.levels[0])} clusters on level 1"
    if kind == "tree":
        t = a.tree
        fig = visualize.plot_tree(t, truth=_labels(args, m), **width)
        return fig, f"{counted(len(t.clusters), 'cluster')}, {counted(len(t.edges), 'edge')}"
    if kind == "edge":
        if not args.edge:
            raise TomographyError("--kind edge needs --edge A B (two hosts of the dataset)")
        a, b = args.edge
        fig = visualize.plot_edge_weight(m, a, b, **width)
        return fig, f"edge {a} - {b} over {len(m.iteration_ids)} iterations"
    from tomography.model.dataset import read_measurement

    others = [read_measurement(path) for path in args.compare]
    names = _names(args, 1 + len(others))
    if kind == "convergence":
        tables = [analysis(args, x, truth=args.truth).convergence(progress=True)
                  for x in (m, *others)]
        if len(tables) == 1 and names is None:
            table: Any = tables[0]
        else:
            keys = names or [_short(path) for path in (args.dataset, *args.compare)]
            table = dict(zip(keys, tables))
        fig = visualize.plot_convergence(table, kind="bar" if args.bars else "line", **width)
        return fig, f"NMI after 1..{len(tables[0])} iterations"
    fig = visualize.plot_weight_distribution(m, *others, names=names, iterations=args.iterations,
                                             log=not args.linear, **width)
    ks = fig.tomography_info["ks"]
    return fig, f"{len(others) + 1} dataset(s)" + (f", Kolmogorov-Smirnov D = {ks:.3f}"
                                                   if ks is not None else "")


def run(args: argparse.Namespace) -> int:
    """Draw one figure of the dataset to a PNG, SVG or PDF file."""
    import matplotlib

    if "matplotlib.pyplot" not in sys.modules:
        matplotlib.use("Agg")   # files only: no window, no display needed
    fmt = _format(args.output)
    fig, note = _figure(args)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    from tomography import __version__

    title = f"tomography plot {args.dataset} --kind {args.kind}"
    metadata = {"png": {"Title": title, "Software": f"tomography {__version__}"},
                "svg": {"Title": title, "Creator": f"tomography {__version__}", "Date": None},
                "pdf": {"Title": title, "Creator": f"tomography {__version__}",
                        "CreationDate": None}}[fmt]
    fig.savefig(args.output, format=fmt, dpi=args.dpi, bbox_inches="tight", pad_inches=0.02,
                metadata=metadata)
    w, h = fig.get_size_inches()
    say(f"wrote {args.kind} ({note}; {w:.1f} x {h:.1f} in) -> {args.output}", result=True)
    return 0
