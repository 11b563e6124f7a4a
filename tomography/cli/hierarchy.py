"""``tomography hierarchy``: the averaged-edge hierarchy of bandwidth clusters (Hasse diagram)."""

from __future__ import annotations

import argparse
from typing import Any

from tomography.cli.common import (add_analysis_options, add_hierarchy_options, analysis, command,
                                   emit)

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    """Add ``hierarchy`` to the ``tomography`` sub-commands."""
    p = command(sub, "hierarchy", "averaged-edge hierarchy of bandwidth clusters",
                "Build the hierarchy of bandwidth clusters (collapsed clusters joined by their "
                "mean w_n per host pair, the averaged edges of Eq 5.4/5.5; --linkage thesis "
                "for the equations as written; finer levels refined by a permutation test) "
                "and print it as a Hasse diagram, an indented tree, JSON or DOT. Level 1 is "
                "the finest.",
                ["tomography hierarchy run", "tomography hierarchy run --format tree",
                 "tomography hierarchy run --format dot | dot -Tsvg -o hierarchy.svg"])
    add_analysis_options(p)
    add_hierarchy_options(p)
    p.add_argument("--format", choices=("hasse", "tree", "json", "dot"), default="hasse",
                   help="hasse: text Hasse diagram (default); tree: indented tree; json; "
                        "dot: Graphviz")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print the dataset's hierarchy as a Hasse diagram, an indented tree, JSON or DOT."""
    from tomography.export.dot import hierarchy_to_dot
    from visualize.text import hasse_text, hierarchy_text

    a = analysis(args)
    h, labels = a.hierarchy, a.measurement.labels
    if args.format == "json":
        emit(h.to_json(indent=2))
    elif args.format == "dot":
        emit(hierarchy_to_dot(h))
    elif args.format == "tree":
        emit(hierarchy_text(h, truth=labels))
    else:
        emit(hasse_text(h, truth=labels))
    return 0
