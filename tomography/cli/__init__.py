"""The ``tomography`` command line: a thin layer over the library.

The analysis commands read a measurement dataset directory (format 1,
described in README.md, "The measurement dataset"); the others read a topology
or a Gauge file, or measure.  Each prints text for people or JSON/DOT for
programs.  User mistakes print one line ``tomography: error: ...`` and exit
with status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from tomography.cli.common import (add_analysis_options, add_format_option,
                                   add_hierarchy_options, add_host_connections_option,
                                   add_tree_level_option, command, emit, full_truth, hierarchy,
                                   load_shared, observable_truths, positive_int, tree_of,
                                   weight_unit)
from tomography.cli import export as export_commands
from tomography.cli import measure as measure_commands
from tomography.cli import plot as plot_commands
from tomography.errors import TomographyError

__all__ = ["main", "build_parser"]

EPILOG = """\
examples:
  tomography demo -o /tmp/demo                 # measure an emulated network (root) and analyse it
  tomography testbed up two-sites-demo         # raise an emulated network (root)
  tomography measure bittorrent --testbed two-sites-demo --until-converged -o run
  tomography info DATASET
  tomography cluster DATASET --format json
  tomography hierarchy DATASET                  # Hasse diagram as text
  tomography tree DATASET --format dot | dot -Tpng -o tree.png
  tomography evaluate DATASET --truth labels
  tomography truth N1                          # the ground-truth model of a topology
  tomography simulate N2 -n 5 --size 64MiB -o n2   # simulated BitTorrent broadcasts
  tomography export DATASET --format gauge -o - | tomography plan - --root HOST
  tomography export DATASET --format graphml -o hosts.graphml   # for Gephi

DATASET is a measurement directory: meta.json, hosts.csv, transfers.csv,
iterations.csv (the README's section "The measurement dataset" lists every column)."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``tomography`` command."""
    parser = argparse.ArgumentParser(
        prog="tomography",
        description="Bandwidth tomography of grid and cluster networks: infer bandwidth "
                    "clusters, their hierarchy and a tree from BitTorrent block counts.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version",
                        version=f"%(prog)s {__import__('tomography').__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = command(sub, "info", "hosts, iterations, completeness and totals of a dataset",
                "Check a measurement dataset before analysing it: how it was made (method, "
                "topology, parameters), its hosts, its iterations (complete or not, duration, "
                "root) and the blocks counted.",
                ["tomography info run", "tomography info run --format json | jq .iterations"])
    p.add_argument("dataset", type=Path, help="measurement dataset directory")
    add_format_option(p, ("text", "json"))

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

    p = command(sub, "hierarchy", "averaged-edge hierarchy of bandwidth clusters",
                "Build the hierarchy of bandwidth clusters (averaged-edge linkage, Eq 5.4/5.5; "
                "finer levels refined by a permutation test) and print it as a Hasse diagram, "
                "an indented tree, JSON or DOT. Level 1 is the finest.",
                ["tomography hierarchy run", "tomography hierarchy run --format tree",
                 "tomography hierarchy run --format dot | dot -Tsvg -o hierarchy.svg"])
    add_analysis_options(p)
    add_hierarchy_options(p)
    p.add_argument("--format", choices=("hasse", "tree", "json", "dot"), default="hasse",
                   help="hasse: text Hasse diagram (default); tree: indented tree; json; "
                        "dot: Graphviz")

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

    p = command(sub, "truth", "the ground-truth model of a topology: connections and "
                "bandwidth per connection per link (Eq 5.2, 5.3), and the partitions "
                "thresholds give",
                "For a network you know, which partitions bandwidth tomography should find: "
                "per router link the connections crossing it during a broadcast (Eq 5.2) and "
                "the bandwidth each gets (Eq 5.3); every partition a threshold on it gives, "
                "acceptable at a clear gap, unobservable above a NIC's share per connection "
                "(docs/ground-truth.md).",
                ["tomography truth N1", "tomography truth my-site.yaml --format json",
                 "tomography truth N2 --host-connections 9   # as the simulator's peers (8 + 1)",
                 "tomography truth N2 --host-connections 1   # the NIC unshared, as published"])
    p.add_argument("topology", help="a topology file or a built-in scenario name (N1, ...)")
    p.add_argument("--min-gap", type=float, default=1.5,
                   help="bandwidth ratio across a threshold for an acceptable truth "
                        "(default 1.5)")
    add_host_connections_option(p, "8, libtorrent's unchoke slots; the simulator's peers "
                                "use 9 (8 slots + 1 optimistic): pass 9 to judge a simulation; "
                                "evaluate reads it from the dataset")
    add_format_option(p, ("text", "json"))

    p = sub.add_parser("import", help="make a probe dataset from another tool's results "
                                      "(perfSONAR's pScheduler)",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       description="Read pScheduler throughput results (JSON as pScheduler "
                       "archives them or a perfSONAR archive exports them: one object, a list, "
                       "JSON lines, or directories of them) and write a probe dataset that "
                       "cluster, hierarchy, tree, evaluate and export read.",
                       epilog="example:\n  tomography import pscheduler archive/*.json "
                              "--hosts hosts.csv -o site\n  tomography hierarchy site")
    p.add_argument("format", choices=("pscheduler",), help="the results' format")
    p.add_argument("files", nargs="+", type=Path, help="result files or directories")
    p.add_argument("-o", "--output", type=Path, required=True, help="dataset directory to write")
    p.add_argument("--hosts", type=Path, metavar="FILE",
                   help="host,address[,label]: names and ground-truth labels for the "
                        "addresses the results name (default: each address is a host)")
    p.add_argument("--force", action="store_true", help="overwrite an existing dataset")

    p = command(sub, "synthetic", "write a planted-partition dataset (synthetic, not a "
                "measurement)",
                "Write a dataset of block counts drawn from a planted hierarchy of groups "
                "(stronger inside a group than across), with its truth as labels: for "
                "trying the analysis without measuring anything.",
                ["tomography synthetic -o flat --branching 8",
                 "tomography synthetic -o two-level --branching 3,3 --iterations 10",
                 "tomography evaluate two-level"])
    p.add_argument("-o", "--output", type=Path, required=True, help="dataset directory to write")
    p.add_argument("--branching", default="8", metavar="B1,B2,...",
                   help="groups per level, top first (default 8: flat; 3,3: 9 in 3)")
    p.add_argument("--hosts-per-group", type=positive_int, default=8,
                   help="hosts in each group of the finest level (default 8)")
    p.add_argument("--iterations", type=positive_int, default=5,
                   help="iterations to draw (default 5)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--force", action="store_true", help="overwrite an existing dataset")

    measure_commands.add_commands(sub)
    export_commands.add_commands(sub)
    plot_commands.add_commands(sub)
    return parser


# --------------------------------------------------------------------------- commands


def cmd_info(args: argparse.Namespace) -> int:
    from tomography.dataset import read_measurement

    m = read_measurement(args.dataset)
    it = m.iterations
    per_iteration = m.transfers.groupby("iteration")["blocks"].sum()
    info: dict[str, Any] = {
        "dataset": str(args.dataset), "method": m.meta["method"],
        "topology": m.meta.get("topology"), "created": m.meta.get("created"),
        "hosts": m.n_hosts, "labelled_hosts": len(m.labels),
        "labels": sorted(set(m.labels.values())),
        "iterations": len(it), "complete_iterations": int(it["complete"].sum()),
        "incomplete_iterations": [int(i) for i in it.loc[~it["complete"], "iteration"]],
        "roots": sorted(set(it["root"])),
        "total_blocks": int(m.transfers["blocks"].sum()),
        "total_bytes": int(m.transfers["blocks"].sum()) * int(m.meta["block_size"]),
        "mean_blocks_per_iteration": float(per_iteration.mean()) if len(per_iteration) else 0.0,
        "pairs_measured": int(len(m.transfers[["receiver", "sender"]].drop_duplicates())),
        "probes": 0 if m.probes is None else len(m.probes),
        "params": m.meta.get("params", {}),
    }
    if args.format == "json":
        emit(json.dumps(info, indent=2))
        return 0
    n = m.n_hosts
    lines = [
        f"dataset     {info['dataset']}  ({info['method']}, created {info['created']})",
        f"hosts       {n}, {info['labelled_hosts']} with a ground-truth label"
        + (f" ({len(info['labels'])} distinct)" if info["labels"] else ""),
        f"iterations  {info['iterations']}, {info['complete_iterations']} complete"
        + (f"; incomplete: {info['incomplete_iterations']}" if info["incomplete_iterations"] else ""),
        f"roots       {len(info['roots'])} distinct",
        f"blocks      {info['total_blocks']} ({info['total_bytes'] / 2**20:.1f} MiB), "
        f"{info['mean_blocks_per_iteration']:.0f} per iteration",
        f"pairs       {info['pairs_measured']} of {n * (n - 1)} ordered pairs exchanged blocks",
    ]
    if info["probes"]:
        lines.append(f"probes      {info['probes']}")
    emit("\n".join(lines))
    return 0


def cmd_cluster(args: argparse.Namespace) -> int:
    from tomography.units import counted
    from cluster.louvain import louvain
    from visualize.text import describe_hosts

    m, graph, sampler = load_shared(args)
    result = louvain(graph, engine=args.engine, seed=args.seed, restarts=args.restarts,
                     resolution=args.resolution, level=args.level)
    hosts = m.host_names
    clusters = [{"id": f"C{c}", "hosts": [hosts[i] for i in idx]}
                for c, idx in enumerate(result.clusters())]
    confidence = None
    if sampler is not None:
        from cluster.confidence import DEFAULT_RESAMPLES, flat_confidence

        per, overall, method, count = flat_confidence(
            result.labels, sampler, resamples=args.resamples or DEFAULT_RESAMPLES,
            engine=args.engine, resolution=args.resolution, level=args.level, seed=args.seed,
            n_jobs=args.jobs)
        for c, value in zip(clusters, per):
            c["confidence"] = float(value)
        confidence = {"partition": overall, "method": method, "resamples": count}
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
    labels = m.labels
    for c in clusters:
        truth = sorted({labels.get(h, "?") for h in c["hosts"]}) if labels else []
        note = f"  truth: {', '.join(truth[:3])}{' …' if len(truth) > 3 else ''}" if truth else ""
        sure = f"  conf {c['confidence']:.2f}" if "confidence" in c else ""
        lines.append(f"  {c['id']:>3}  {len(c['hosts']):>5} hosts{sure}  "
                     f"{describe_hosts(c['hosts'])}{note}")
    emit("\n".join(lines))
    return 0


def cmd_hierarchy(args: argparse.Namespace) -> int:
    from tomography.export.dot import hierarchy_to_dot
    from visualize.text import hasse_text, hierarchy_text

    m, graph, sampler = load_shared(args)
    h = hierarchy(args, graph, m.host_names, sampler)
    h.params.update(iterations=args.iterations, weight_unit=weight_unit(m))
    if args.format == "json":
        emit(h.to_json(indent=2))
    elif args.format == "dot":
        emit(hierarchy_to_dot(h))
    elif args.format == "tree":
        emit(hierarchy_text(h, m.labels))
    else:
        emit(hasse_text(h, m.labels))
    return 0


def cmd_tree(args: argparse.Namespace) -> int:
    from tomography.export.dot import cluster_tree_to_dot
    from tomography.units import format_weight
    from visualize.text import cluster_tree_text

    m, graph, sampler = load_shared(args)
    h = hierarchy(args, graph, m.host_names, sampler)
    t = tree_of(args, m, graph, h, sampler)
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
             + cluster_tree_text(t, m.labels))
    return 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    from cluster.accuracy import convergence, hierarchy_nmi, nmi
    from tomography.ground_truth import nic_share, observable_labels
    from tomography.truth import labels_at_depth
    from tomography.units import counted, format_bandwidth

    m, graph, sampler = load_shared(args)
    truth = full_truth(args, m)
    h = hierarchy(args, graph, m.host_names, sampler)
    levels = hierarchy_nmi(h, truth)
    topo, k, unchecked = observable_truths(args, m)
    hidden = []
    if topo is not None:
        observable, scores = [], []
        for row in levels.itertuples():
            cut = dict(zip(m.host_names, labels_at_depth(truth, row.truth_depth, m.host_names)))
            seen = observable_labels(topo, cut, host_connections=k)
            found = len(set(seen.values()))
            observable.append(found == row.truth_clusters)
            scores.append(nmi([seen[x] for x in m.host_names], h.labels(row.level)))
            if found != row.truth_clusters and row.truth_depth not in [d for d, _, _ in hidden]:
                hidden.append((row.truth_depth, row.truth_clusters, found))
        levels["observable"] = observable
        levels["nmi_observable"] = scores
    if h.confidence:
        levels["confidence"] = h.confidence
        levels["supported"] = [h.supported(k) for k in levels["level"]]
    table = convergence(m, truth, iterations=args.iterations, engine=args.engine,
                        seed=args.seed, linkage=args.linkage, start=args.start, progress=True,
                        n_jobs=args.jobs)
    stop = _stop_rule_replay(args, m) if args.until_converged is not None else None
    if args.format == "json":
        emit(json.dumps({"levels": levels.to_dict("records"),
                          "observability": {"checked": topo is not None, "note": unchecked,
                                            "host_connections": k,
                                            "nic_share_bps": nic_share(topo, k) if topo else None},
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
                f"share ({format_bandwidth(nic_share(topo, k))}, {_per_host(topo, k)}); a "
                f"broadcast can reveal at most {counted(f, 'cluster')} of it (nmi_observable "
                "scores against those; a difference in latency alone can still separate "
                "them)" for d, c, f in hidden]
        out += [] if hidden else ["every truth level is observable by bandwidth "
                                  f"({_per_host(topo, k)})"]
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


def _per_host(topo: Any, k: int) -> str:
    """``8 connections per host``, or why fewer: a network with fewer other hosts."""
    from tomography.ground_truth import connections_per_host
    from tomography.units import counted

    used = connections_per_host(topo, k)
    return counted(used, "connection") + " per host" + (
        "" if used == k else f", {k} capped at the {used} other hosts")


def _stop_rule_replay(args: argparse.Namespace, m: Any) -> dict[str, Any]:
    """What ``measure --until-converged K`` would have decided after each iteration."""
    from cluster.stability import DEFAULT_STABLE, StableHierarchy
    from tomography.weights import rounds

    k = DEFAULT_STABLE if args.until_converged == -1 else args.until_converged
    rule = StableHierarchy(k, seed=args.seed, linkage=args.linkage, start=args.start,
                           loops=args.loops, engine=args.engine)
    steps, stops_at = [], None
    last = rounds(m) if args.iterations is None else min(args.iterations, rounds(m))
    for n in range(1, last + 1):
        done = rule.update(m, n)
        steps.append({"n": n, "levels": rule.levels[-1], "stop": done,
                      "held_back": rule.held_back})
        if done and stops_at is None:
            stops_at = n
    return {"k": k, "stops_at": stops_at, "steps": steps}


def cmd_truth(args: argparse.Namespace) -> int:
    from tomography.ground_truth import HOST_CONNECTIONS, link_table, nic_share, threshold_partitions
    from tomography.topology import read_topology
    from tomography.units import counted, format_bandwidth, listed

    topo = read_topology(args.topology)
    table = link_table(topo)
    k = args.host_connections or HOST_CONNECTIONS
    if not args.min_gap >= 1:
        raise TomographyError(f"--min-gap is a ratio of bandwidths, at least 1; got "
                              f"{args.min_gap}")
    parts = threshold_partitions(topo, min_gap=args.min_gap, host_connections=k)
    share = nic_share(topo, k)
    if args.format == "json":
        emit(json.dumps({
            "topology": topo.name, "hosts": len(topo.hosts), "host_connections": k,
            "nic_share_bps": share,
            "links": json.loads(table.to_json(orient="records")),
            "partitions": [{"low_bps": p.low, "high_bps": p.high, "gap": p.gap,
                            "acceptable": p.acceptable, "observable": p.observable,
                            "clusters": [list(c) for c in p.clusters]}
                           for p in parts]}, indent=2))
        return 0
    lines = [f"{topo.name}: {len(topo.hosts)} hosts in {len(topo.clusters)} clusters, "
             f"{len(topo.routers)} routers",
             "", "per link, lowest bandwidth per connection first (Eq 5.2, 5.3):",
             f"  {'link':<32} {'capacity':>11} {'hosts':>11} {'conn':>8} {'bw/conn':>11}"]
    for r in table.itertuples():
        lines.append(f"  {r.link:<32} {format_bandwidth(r.capacity_bps):>11} "
                     f"{f'{r.hosts_a}|{r.hosts_b}':>11} {r.connections:>8.2f} "
                     f"{format_bandwidth(r.bw_per_connection_bps) if np.isfinite(r.bw_per_connection_bps) else '-':>11}")
    lines += ["", f"partitions by threshold (acceptable: gap >= {args.min_gap} and observable; "
              f"unobservable: a threshold at or above a NIC's share per connection, "
              f"{format_bandwidth(share)} = the smallest NIC over {_per_host(topo, k)}):"]
    for p in parts:
        mark = ("acceptable" if p.acceptable else "" if p.observable
                else "unobservable").ljust(12)
        groups = "  ".join("{" + ",".join(c) + "}" for c in p.clusters)
        lines.append(f"  {mark}  {format_bandwidth(p.low) if p.low else '0':>10} .. "
                     f"{format_bandwidth(p.high):<10} gap {p.gap:>6.2f}  "
                     f"{counted(len(p.clusters), 'cluster'):>12}: {groups}")
    if any(not p.observable for p in parts):
        lines += ["", "unobservable partitions split links that give a connection more than "
                  "a host's NIC share: block counts cannot tell their sides apart by bandwidth "
                  "(only a difference in latency can); --host-connections 1 is the model "
                  "without the share (the NIC unshared)"]
    nic = min(min(c.nic_up, c.nic_down) for c in topo.clusters)
    fast = [r.link for r in table.itertuples()
            if np.isfinite(r.bw_per_connection_bps) and r.bw_per_connection_bps >= nic]
    if fast:
        lines += ["", f"{'links' if len(fast) > 1 else 'link'} {listed(fast)} "
                  f"give{'' if len(fast) > 1 else 's'} a "
                  "connection at least a whole NIC, so no threshold splits the hosts there: by "
                  "bandwidth their sides are one cluster; a long round trip can still separate "
                  "them (the simulator's TCP model, a real swarm)"]
    emit("\n".join(lines))
    return 0


def cmd_synthetic(args: argparse.Namespace) -> int:
    from tomography.dataset import write_measurement
    from tomography.synthetic import planted_hierarchy

    try:
        branching = tuple(int(b) for b in args.branching.split(","))
    except ValueError:
        raise TomographyError(f"--branching takes integers separated by commas, got "
                              f"{args.branching!r}") from None
    m = planted_hierarchy(branching, args.hosts_per_group, iterations=args.iterations,
                          seed=args.seed)
    write_measurement(m, args.output, overwrite=args.force)
    emit(f"wrote {m.n_hosts} hosts x {len(m.iteration_ids)} iterations (synthetic) "
          f"to {args.output}")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from tomography.dataset import read_hosts_table
    from tomography.pscheduler import import_pscheduler

    hosts = read_hosts_table(args.hosts) if args.hosts else None
    rows = import_pscheduler(args.files, args.output, hosts=hosts, overwrite=args.force)
    emit(f"imported {rows} pScheduler throughput run(s) into {args.output}")
    return 0


COMMANDS = {"info": cmd_info, "import": cmd_import, "cluster": cmd_cluster, "hierarchy": cmd_hierarchy,
            "tree": cmd_tree, "evaluate": cmd_evaluate, "truth": cmd_truth,
            "synthetic": cmd_synthetic, **measure_commands.COMMANDS,
            **export_commands.COMMANDS, **plot_commands.COMMANDS}


def _import_igraph_without_pyplot() -> None:
    """Import igraph with matplotlib hidden, unless either is loaded already.

    igraph imports ``matplotlib.pyplot`` for its drawing functions, which this
    command never uses: 0.8 s of a 3-second analysis of 4096 hosts.  Only the
    import is affected; ``tomography plot`` imports matplotlib as usual.
    """
    if "igraph" in sys.modules or "matplotlib" in sys.modules:
        return
    sys.modules["matplotlib"] = None   # type: ignore[assignment]  # makes its import fail
    try:
        import igraph  # noqa: F401
    except ImportError:   # igraph is optional for python-louvain users
        pass
    finally:
        del sys.modules["matplotlib"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``tomography`` command; returns the exit status.

    Examples
    --------
    >>> main(["info", "/nonexistent"])
    2
    """
    args = build_parser().parse_args(argv)
    _import_igraph_without_pyplot()
    try:
        return COMMANDS[args.command](args)
    except TomographyError as exc:
        for line in str(exc).splitlines():  # one line per problem (a preflight's hosts)
            print(f"tomography: error: {line}", file=sys.stderr)
        return 2
    except ValueError as exc:  # invalid option values reaching the library
        print(f"tomography: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except OSError as exc:   # a file the user named: missing directory, no permission, full disk
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"tomography: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("tomography: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
