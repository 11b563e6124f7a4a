"""``tomography tree``: the topology as a maximum spanning tree of clusters."""

from __future__ import annotations

import argparse
from typing import Any

from tomography.cli.common import (add_analysis_options, add_format_option, add_hierarchy_options,
                                   add_tree_level_option, analysis, command, emit, say)

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    """Add ``tree`` to the ``tomography`` sub-commands."""
    p = command(sub, "tree", "topology as a maximum spanning tree of clusters",
                "Collapse the clusters of one level of the hierarchy into nodes and join them "
                "by the maximum spanning tree of the inter-cluster weights: the network's "
                "topology as a tree of clusters, each edge with its weight and confidence. The "
                "clusters keep the ids of the hierarchy (same options, same ids), so a cluster "
                "can be followed from the Hasse diagram to the tree and the exports.",
                ["tomography tree run", "tomography tree run --level 2   # a tree of sites",
                 "tomography tree run --format dot | dot -Tpng -o tree.png",
                 "tomography tree sim --level 0   # hosts as nodes: one host per router (tree-5)"])
    add_analysis_options(p)
    add_hierarchy_options(p)
    add_tree_level_option(p)
    add_format_option(p, ("text", "json", "dot"))
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print the maximum spanning tree of one hierarchy level's clusters."""
    from tomography.export.dot import cluster_tree_to_dot
    from tomography.model.units import format_weight
    from visualize.text import cluster_tree_text

    a = analysis(args)
    t = a.tree
    h, level = a.hierarchy, t.params["hierarchy_level"]
    if 1 <= level <= h.depth and h.supported(level) is False:
        say(f"note: level {level} is not supported by the data (confidence "
            f"{h.confidence[level - 1]:.2f}, below {h.threshold:g}): its clusters may be "
            "noise, and so may this tree; measure more iterations (--resume -n N, or "
            "--until-converged)")
    if args.format == "json":
        emit(t.to_json(indent=2))
    elif args.format == "dot":
        emit(cluster_tree_to_dot(t))
    else:
        how = t.params.get("confidence")
        sure = (f"; in parentheses, the share of {how['resamples']} {how['method']} "
                "resamples whose tree has the edge" if how else "")
        level = t.params["hierarchy_level"]
        what = "hosts" if level == 0 else f"clusters of level {level}"
        emit(f"maximum spanning tree of {len(t.clusters)} {what} (total weight "
             f"{format_weight(t.total_weight)}; {t.weight_caption}{sure})\n"
             + cluster_tree_text(t, truth=a.measurement.labels))
    return 0
