"""``tomography info``: hosts, iterations (or probe tests), completeness and totals of a dataset."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from tomography.cli.common import add_format_option, command, emit, say

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    """Add ``info`` to the ``tomography`` sub-commands."""
    p = command(sub, "info", "hosts, iterations, completeness and totals of a dataset",
                "Check a measurement dataset before analysing it: how it was made (method, "
                "topology, parameters), its hosts, its iterations (complete or not, duration, "
                "root) and the blocks counted; for a probe dataset (iperf3, NetPIPE, "
                "imported) its tests (successful, failed), the pairs measured and their "
                "repeats (successful TCP tests: what the weights use), tools, protocols and "
                "the range of bandwidths.",
                ["tomography info run", "tomography info run --format json | jq .iterations"])
    p.add_argument("dataset", type=Path, help="measurement dataset directory")
    add_format_option(p, ("text", "json"))
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print how a dataset was made, its hosts, iterations and totals."""
    from tomography.model.dataset.multicast import is_multicast_dataset
    from tomography.model.dataset import read_measurement

    if is_multicast_dataset(args.dataset):
        return _multicast(args)
    m = read_measurement(args.dataset)
    say(f"read {args.dataset}: {m!r}", verbose=True)
    if m.probes is not None and not m.iteration_ids:
        return _probes(args, m)
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


def _probes(args: argparse.Namespace, m: Any) -> int:
    """A probe dataset: its tests, pairs, repeats, tools, protocols and bandwidths."""
    p = m.probes
    failed = (p["error"].astype(str).str.strip() != "") if "error" in p \
        else p["bits_per_second"].isna()
    ok = p[~failed & p["bits_per_second"].notna()]
    tcp = ok[ok["protocol"] != "udp"] if "protocol" in ok else ok
    udp = int((p["protocol"] == "udp").sum()) if "protocol" in p else 0
    n = m.n_hosts
    per_pair = tcp.groupby(["src", "dst"]).size()  # successful TCP tests: what the weights use
    mbit = tcp["bits_per_second"] / 1e6
    source = m.meta.get("source") or ("mesh" if m.meta.get("launcher") else None)
    info: dict[str, Any] = {
        "dataset": str(args.dataset), "method": m.meta["method"], "source": source,
        "created": m.meta.get("created"), "hosts": n, "labelled_hosts": len(m.labels),
        "labels": sorted(set(m.labels.values())),
        "tests": len(p), "successful_tests": len(ok), "failed_tests": int(failed.sum()),
        "pairs_measured": len(per_pair), "pairs_tested": len(p.groupby(["src", "dst"])),
        "ordered_pairs": n * (n - 1), "udp_tests": udp,
        "repeats_per_pair": {"min": int(per_pair.min()) if len(per_pair) else 0,
                             "max": int(per_pair.max()) if len(per_pair) else 0},
        "tools": {str(k): int(v) for k, v in p["tool"].value_counts().sort_index().items()},
        "protocols": {str(k): int(v) for k, v in
                      (p["protocol"] if "protocol" in p else p["src"].map(lambda _: "tcp"))
                      .value_counts().sort_index().items()},
        "tcp_mbit_per_s": None if mbit.empty else {
            "min": float(mbit.min()), "median": float(mbit.median()), "max": float(mbit.max())},
        "params": m.meta.get("params", {}),
    }
    if args.format == "json":
        emit(json.dumps(info, indent=2))
        return 0
    reps = info["repeats_per_pair"]
    bw = info["tcp_mbit_per_s"]
    apart = ([f"{udp} UDP"] if udp else []) + \
        ([f"{info['failed_tests']} failed"] if info["failed_tests"] else [])
    lines = [
        f"dataset     {info['dataset']}  (probes: {info['method']}"
        + (f" from {source}" if source else "") + f", created {info['created']})",
        f"hosts       {n}, {info['labelled_hosts']} with a ground-truth label"
        + (f" ({len(info['labels'])} distinct)" if info["labels"] else ""),
        f"tests       {info['tests']}: {info['successful_tests']} successful, "
        f"{info['failed_tests']} failed",
        f"pairs       {info['pairs_measured']} of {n * (n - 1)} ordered pairs measured by "
        "successful TCP tests, "
        + (f"{reps['min']} test(s) each" if reps["min"] == reps["max"]
           else f"{reps['min']} to {reps['max']} tests each")
        + (f" (not counted: {', '.join(apart)})" if apart else ""),
        "tools       " + ", ".join(f"{k} ({v})" for k, v in info["tools"].items()),
        "protocol    " + ", ".join(f"{k.upper()} {v}" for k, v in info["protocols"].items())
        + ("  (UDP tests are not in the bandwidths)" if "udp" in info["protocols"] else ""),
        "bandwidth   " + ("no successful TCP test" if bw is None else
                          f"{bw['min']:.4g} / {bw['median']:.4g} / {bw['max']:.4g} Mbit/s "
                          "(min / median / max of the successful TCP tests)"),
    ]
    emit("\n".join(lines))
    return 0


def _multicast(args: argparse.Namespace) -> int:
    """A multicast dataset: how it was made and the table of ``tomography multicast``."""
    from tomography.model.dataset.multicast import summary_table
    from tomography.model.dataset.multicast import read_multicasts
    from tomography.cli.multicast import multicast_table

    meta, runs, receivers = read_multicasts(args.dataset)
    if args.format == "json":
        table = summary_table(runs, unit_bytes=1.0)
        emit(json.dumps({"dataset": str(args.dataset), "method": "multicast",
                         "created": meta.get("created"), "launcher": meta.get("launcher"),
                         "hosts": len(meta.get("hosts", {})), "multicasts": len(runs),
                         "params": meta.get("params", {}),
                         "methods": json.loads(table.to_json(orient="records"))}, indent=2))
        return 0
    emit(f"dataset     {args.dataset}  (multicast, created {meta.get('created')}, launcher "
         f"{meta.get('launcher')})\n" + multicast_table(args.dataset))
    return 0
