"""``tomography cluster``: flat bandwidth clusters (Louvain modularity) with their confidence."""

from __future__ import annotations

import argparse
import json
from typing import Any

from tomography.cli.common import add_analysis_options, add_format_option, analysis, command, emit

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    """Add ``cluster`` to the ``tomography`` sub-commands."""
    p = command(sub, "cluster", "flat bandwidth clusters (Louvain modularity)",
                "Partition the hosts into bandwidth clusters: Louvain modularity on the mean "
                "symmetric block counts w_n (Eq 4.2), with each cluster's confidence from "
                "bootstrap resamples of the iterations.",
                ["tomography cluster run", "tomography cluster run -n 3    # after 3 iterations",
                 "tomography cluster run --format json > clusters.json"])
    add_analysis_options(p)
    p.add_argument("--level", choices=("best", "finest"), default="best",
                   help="Louvain dendrogram level (default best: highest modularity)")
    add_format_option(p, ("text", "json"))
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print Louvain's bandwidth clusters of the dataset with their confidence."""
    from tomography.model.units import counted
    from visualize.text import describe_hosts

    a = analysis(args, flat_level=args.level)
    flat, hosts = a.flat, a.hosts
    result = flat.clustering
    clusters = [{"id": f"C{c}", "hosts": [hosts[i] for i in idx]}
                for c, idx in enumerate(result.clusters())]
    confidence = None
    if flat.confidence is not None:
        for c, value in zip(clusters, flat.confidence):
            c["confidence"] = value
        confidence = {"partition": flat.overall, "method": flat.method,
                      "resamples": flat.resamples}
    if args.format == "json":
        emit(json.dumps({"clusters": clusters, "modularity": result.modularity,
                          **({"confidence": confidence} if confidence else {}),
                          "params": {"engine": args.engine, "seed": args.seed,
                                     "restarts": args.restarts, "resolution": args.resolution,
                                     "level": args.level, "iterations": args.iterations}},
                         indent=2))
        return 0
    lines = [f"{counted(len(clusters), 'cluster')}, modularity {result.modularity:.4f} "
             f"({args.engine}, seed {args.seed})"
             + (f", confidence {confidence['partition']:.2f} ({confidence['resamples']} "
                f"{confidence['method']} resamples)" if confidence else "")]
    labels = a.measurement.labels
    for c in clusters:
        truth = sorted({labels.get(h, "?") for h in c["hosts"]}) if labels else []
        note = f"  truth: {', '.join(truth[:3])}{' …' if len(truth) > 3 else ''}" if truth else ""
        sure = f"  conf {c['confidence']:.2f}" if "confidence" in c else ""
        lines.append(f"  {c['id']:>3}  {len(c['hosts']):>5} hosts{sure}  "
                     f"{describe_hosts(c['hosts'])}{note}")
    emit("\n".join(lines))
    return 0
