"""``tomography evaluate``: NMI per level and per iteration against a ground truth."""

from __future__ import annotations

import argparse
import json
from typing import Any

from tomography.cli.common import (add_analysis_options, add_format_option, add_hierarchy_options,
                                   add_host_connections_option, analysis, command, emit,
                                   positive_int)

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    """Add ``evaluate`` to the ``tomography`` sub-commands."""
    p = command(sub, "evaluate", "NMI per level and per iteration against a ground truth",
                "Score the hierarchy against a ground truth (the labels of hosts.csv or a "
                "file): NMI per level, NMI after each number of iterations, and which truth "
                "levels bandwidth cannot reveal on the dataset's topology.",
                ["tomography evaluate run", "tomography evaluate run --truth truth.csv",
                 "tomography evaluate run --until-converged 3 --format json"])
    add_analysis_options(p)
    p.add_argument("--truth", default="labels",
                   help="'labels' (the label column of hosts.csv, default) or a CSV file "
                        "with columns host,label")
    add_hierarchy_options(p)
    p.add_argument("--until-converged", nargs="?", type=positive_int, const=-1, metavar="K",
                   help="also say after how many iterations the stop rule of measure "
                        "--until-converged would have stopped: every supported level of the "
                        "hierarchy unchanged for K iterations (default K 3)")
    p.add_argument("--topology", metavar="FILE",
                   help="the network the dataset was measured on, to mark truth levels that "
                        "bandwidth cannot reveal (default: the one a simulated dataset records "
                        "in meta.json, else the topology meta.json names when it is a built-in "
                        "scenario or a readable file)")
    add_host_connections_option(p, "the swarm that measured the dataset: the simulator's "
                                "upload slots + 1, a real run's upload slots; else 8")
    add_format_option(p, ("text", "json"))
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print the NMI of every level and after every iteration, and what bandwidth can reveal."""
    from tomography.ground_truth import describe_connections
    from tomography.units import counted, format_bandwidth

    from tomography.topology import read_topology

    # a topology given is read before the analysis: a bad one is refused before the work
    topology = read_topology(args.topology) if args.topology else None
    a = analysis(args, truth=args.truth, topology=topology,
                 host_connections=args.host_connections)
    h, levels = a.hierarchy, a.accuracy
    seen = a.observability
    topo, k, unchecked, hidden, share = (seen["topology"], seen["host_connections"],
                                         seen["note"], seen["hidden"], seen["nic_share_bps"])
    table = a.convergence(progress=True)
    stop = (a.stop_rule(None if args.until_converged == -1 else args.until_converged)
            if args.until_converged is not None else None)
    if args.format == "json":
        emit(json.dumps({"levels": levels.to_dict("records"),
                          "observability": {"checked": topo is not None, "note": unchecked,
                                            "host_connections": k,
                                            "nic_share_bps": share},
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
    if topo is not None:
        out += [f"truth depth {d} ({counted(c, 'cluster')}) is not observable by bandwidth "
                f"on {topo.name}: it splits links that give a connection more than a NIC's "
                f"share ({format_bandwidth(share)}, {describe_connections(topo, k)}); a "
                f"broadcast can reveal at most {counted(f, 'cluster')} of it (nmi_observable "
                "scores against those; a difference in latency alone can still separate "
                "them)" for d, c, f in hidden]
        out += [] if hidden else ["every truth level is observable by bandwidth "
                                  f"({describe_connections(topo, k)})"]
    else:
        out += [f"observability not checked: {unchecked}"]
    out += ["",
           "convergence: NMI after n iterations. nmi: Louvain's flat clustering against the "
           "finest truth labels (the thesis's Figs 5.13, 5.21), so a flat clustering that finds "
           "a coarser true level, such as the sites, stays below 1; level_k_nmi: each level of "
           "the hierarchy (all levels, supported or not) against its own truth depth",
           table.to_string(index=False, float_format=lambda x: f"{x:.4f}")]
    if stop:
        out += ["", f"stop rule (every supported level unchanged for {stop['k']} iterations): "
                + (f"stops after n={stop['stops_at']}" if stop["stops_at"] else
                   f"does not stop within {len(stop['steps'])} iterations")]
        out += [f"  n={s['n']}: {s['levels']} supported level(s); "
                + ("stop" if s["stop"] else s["held_back"]) for s in stop["steps"]]
    emit("\n".join(out))
    return 0
