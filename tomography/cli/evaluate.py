"""``tomography evaluate``: NMI per level and per iteration against a ground truth."""

from __future__ import annotations

import argparse
import json
from typing import Any

from tomography.cli.common import (add_analysis_options, add_format_option, add_hierarchy_options,
                                   analysis, command, emit, positive_int, say)
from tomography.model.stop_rule import stop_rule_text

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    """Add ``evaluate`` to the ``tomography`` sub-commands."""
    p = command(sub, "evaluate", "NMI per level and per iteration against a ground truth",
                "Score the hierarchy against a ground truth (the labels of hosts.csv or a "
                "file): NMI per level, NMI after each number of iterations, and which truth "
                "levels the broadcasts do not set apart (judged on the data: each cluster's "
                "weakest inside cut against its strongest outside tie).",
                ["tomography evaluate run", "tomography evaluate run --truth truth.csv",
                 "tomography evaluate run --until-converged 3 --format json"])
    add_analysis_options(p)
    p.add_argument("--truth", default="labels",
                   help="'labels' (the label column of hosts.csv, default) or a CSV file "
                        "with columns host,label")
    add_hierarchy_options(p)
    p.add_argument("--until-converged", nargs="?", type=positive_int, const=-1, metavar="K",
                   help="also say after how many iterations the stop rule of measure "
                        f"--until-converged would have stopped: {stop_rule_text()} "
                        "(default K 2)")
    p.add_argument("--topology", help=argparse.SUPPRESS)          # ignored since the data
    p.add_argument("--host-connections", type=int, help=argparse.SUPPRESS)   # judge it
    add_format_option(p, ("text", "json"))
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print the NMI of every level and after every iteration, and which truth levels the
    broadcasts do not set apart."""
    from tomography.model.units import counted

    if args.topology is not None or args.host_connections is not None:
        say("evaluate: --topology and --host-connections are no longer used: which truth "
            "levels the broadcasts show is judged on the data")
    a = analysis(args, truth=args.truth)
    h, levels = a.hierarchy, a.accuracy
    seen = a.observability
    hidden, needed = seen["hidden"], seen["min_separation"]
    table = a.convergence(progress=True)
    stop = (a.stop_rule(None if args.until_converged == -1 else args.until_converged)
            if args.until_converged is not None else None)
    if args.format == "json":
        emit(json.dumps({"levels": levels.to_dict("records"),
                          "observability": {
                              "min_separation": needed,
                              "separations": {str(d): v for d, v in
                                              seen["separations"].items()},
                              "hidden": [{"truth_depth": d, "truth_clusters": c,
                                          "shown_clusters": f} for d, c, f in hidden]},
                          **({"stop_rule": stop} if stop else {}),
                          "convergence": json.loads(table.to_json(orient="records")),
                          "nmi_normalization": "arithmetic mean of entropies",
                          "params": h.params}, indent=2))
        return 0
    out = ["NMI per hierarchy level (arithmetic-mean NMI; overlapping NMI of "
           "Lancichinetti-Fortunato-Kertesz) against truth_depth, the truth cut to the "
           "level's depth counted from the finest; best_depth: the truth depth the level "
           "matches best",
           levels.to_string(index=False, float_format=lambda x: f"{x:.4f}"), ""]
    dropped = h.params.get("dropped_levels") or []
    if dropped:
        out += [f"only the supported levels are shown and numbered here; "
                f"{counted(len(dropped), 'unsupported level')} "
                f"({', '.join(str(d['clusters']) + ' clusters' for d in dropped)}) "
                f"{'is' if len(dropped) == 1 else 'are'} left out (--all-levels shows "
                f"{'it' if len(dropped) == 1 else 'them'}), so the convergence table below, "
                "which numbers every level, may number the levels differently", ""]
    out += [f"truth depth {d} ({counted(c, 'cluster')}) is not set apart by these broadcasts "
            f"(separation {seen['separations'][d]:.2f}, below {needed:g}: some cluster's "
            f"weakest inside cut is not {needed:g}x its strongest outside tie); they show "
            f"at most {counted(f, 'cluster')} of it (nmi_observable scores against those)"
            for d, c, f in hidden]
    out += [] if hidden else [f"every truth level is set apart by these broadcasts "
                              f"(separation {needed:g} or more)"]
    out += ["",
           "convergence: NMI after n iterations. nmi: Louvain's flat clustering against the "
           "finest truth labels (the thesis's Figs 5.13, 5.21), so a flat clustering that finds "
           "a coarser true level, such as the sites, stays below 1; level_k_nmi: each level of "
           "the hierarchy (all levels, supported or not) against its own truth depth",
           table.to_string(index=False, float_format=lambda x: f"{x:.4f}")]
    if stop:
        out += ["", f"stop rule ({stop_rule_text(stop['k'])}): "
                + (f"stops after n={stop['stops_at']}" if stop["stops_at"] else
                   f"does not stop within {len(stop['steps'])} iterations")]
        out += [f"  n={s['n']}: {s['levels']} "
                + ("supported level(s)" if s["measured"] else "level(s) found, none judged")
                + f", {s['settled']} settled"
                + (f", {s['unstable']} unstable" if s["unstable"] else "") + "; "
                + (("stop: no hierarchy" if s["flat"] else "stop") if s["stop"]
                   else s["held_back"]) for s in stop["steps"]]
    emit("\n".join(out))
    return 0
