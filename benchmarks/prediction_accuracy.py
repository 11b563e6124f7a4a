"""Predictions a planner can trust: predicted against achieved, from measured and true figures.

For each emulated network, from nothing and with the command line's defaults:

1. ``tomography measure bittorrent --testbed NET --until-converged`` (the clusters);
2. ``tomography measure figures --testbed NET --dataset RUN`` (the absolute figures of
   those clusters: capacities, bandwidths, shared links), its time beside the broadcasts';
3. ``tomography multicast --dataset RUN`` with every planner and chain, and MOB, Robber
   and BitTorrent beside them (planned over the *measured* figures);
4. the planners and chains again over a Gauge file of the *true* topology (its clusters
   and model figures, shared links included: ``--gauge``).

Prints, as Markdown for ``benchmarks/RESULTS.md``, per network and planner the
prediction, what it rests on, the achieved throughput (median of ``--repeats``) and
achieved/predicted, and the figures' cost.  Networks: the built-in ``two-sites-demo`` and
``gridlab-8``, and two defined here: ``regions-3`` (the loop benchmark's three levels) and
``shuffled-sites`` (two sites of two clusters, host names in no order; ``shuffled-sites-32``,
the same with 32 hosts).  ``--cost-only`` stops after step 2 and prints the times.  GridLab is planned
between hosts (``--level hosts``: its sites are one host each).  Needs root; about 10
minutes a network.

Run::

    sudo .venv/bin/python benchmarks/prediction_accuracy.py
    sudo .venv/bin/python benchmarks/prediction_accuracy.py --networks two-sites-demo --repeats 1
    sudo .venv/bin/python benchmarks/prediction_accuracy.py --cost-only \
        --networks two-sites-demo,shuffled-sites,regions-3,gridlab-8,shuffled-sites-32
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from adaptive_loop import network as shuffled_network  # noqa: E402
from bench_support import command_line, machine_line, require_root  # noqa: E402
from tomography.model.interrupts import stop_as_interrupt  # noqa: E402
from multicast_loop import REGIONS  # noqa: E402

HOSTS_LEVEL = ("gridlab-8",)
"""Networks planned between hosts (``--level hosts``): GridLab's sites are one host each, and
the broadcasts find them one cluster (every pair ~1 MB/s, no bandwidth clusters)."""

PLANNERS = "flat,semi-flat,max-bottleneck,fpfr,balanced,exact,binomial,chain-hosts,chain-clusters"
OTHERS = "mob,robber,bittorrent"
TOMOGRAPHY = str(Path(sys.executable).with_name("tomography"))


def _run(argv: list[str], log: Path) -> float:
    """Run a ``tomography`` command, its output to ``log``; its wall time (s)."""
    start = time.monotonic()
    with open(log, "a") as out:
        out.write(f"$ {' '.join(argv)}\n")
        out.flush()
        done = subprocess.run([TOMOGRAPHY, *argv], stdout=out, stderr=subprocess.STDOUT)
    if done.returncode:
        raise RuntimeError(f"{' '.join(argv)} failed ({done.returncode}); see {log}")
    return time.monotonic() - start


def _topology(name: str, out: Path) -> str:
    """A topology argument: a built-in name, or a file written for the networks defined here."""
    spec = {"regions-3": REGIONS, "shuffled-sites": shuffled_network(5, seed=3),
            "shuffled-sites-32": {**shuffled_network(8, seed=3), "name": "shuffled-sites-32"}
            }.get(name)
    if spec is None:
        return name
    path = out / f"{name}.yaml"
    path.write_text(yaml.safe_dump(spec))
    return str(path)


def _table(directory: Path) -> pd.DataFrame:
    from tomography.model.dataset.multicast import read_summary

    return read_summary(directory)[1].set_index("method")


def one_network(name: str, out: Path, args) -> dict:
    """Measure, measure the figures, multicast over measured and true figures."""
    from tomography.export.bandwidth import from_topology
    from tomography.export.gauge import write_gauge
    from tomography.model.dataset import read_measurement
    from tomography.model.topology import read_topology

    out.mkdir(parents=True, exist_ok=True)
    log = out / "log.txt"
    topology = _topology(name, out)
    topo = read_topology(topology)
    hosts = sorted(topo.host_index)
    labels = {h.name: h.label or h.cluster for h in topo.hosts}
    true = {}
    for h in hosts:
        true.setdefault(labels[h], []).append(h)
    root = sorted(true[sorted(true)[-1]])[0] if name == "shuffled-sites" else hosts[0]
    write_gauge(from_topology(topo, true), out / "true.gauge.xml")
    bed = ["--testbed", topology]
    result: dict = {"network": name, "hosts": len(hosts), "root": root}
    _run(["testbed", "up", topology, "--force"], log)
    try:
        run = out / "run"
        result["broadcast_wall_s"] = _run(["measure", "bittorrent", *bed, "--until-converged",
                                           "-o", str(run), "--force"], log)
        m = read_measurement(run)
        result["iterations"] = len(m.iteration_ids)
        result["broadcast_s"] = float(m.iterations["duration_s"].sum())
        level = ["--level", "hosts" if name in HOSTS_LEVEL else "clusters"]
        result["figures_wall_s"] = _run(["measure", "figures", *bed, "--dataset", str(run),
                                         *level, "--force"], log)
        figures = json.loads((run / "figures" / "meta.json").read_text())["figures"]
        result["clusters"] = len(figures["clusters"])
        result["rounds"] = figures["rounds"]
        if args.cost_only:
            return result
        common = ["multicast", *bed, "--root", root, "--size", args.size,
                  "--repeats", str(args.repeats), "--force"]
        _run([*common, "--dataset", str(run), *level, "--max-nodes", "8",
              "--method", f"{PLANNERS},{OTHERS}", "-o", str(out / "measured")], log)
        _run([*common, "--gauge", str(out / "true.gauge.xml"), "--max-nodes", "8",
              "--method", PLANNERS, "-o", str(out / "true")], log)
    finally:
        _run(["testbed", "down", "--force"], log)
    result["measured"] = _table(out / "measured")
    result["true"] = _table(out / "true")
    return result


def from_logs(name: str, out: Path) -> dict:
    """A network's results again, from what :func:`one_network` left in ``out``."""
    import re

    from tomography.model.dataset import read_measurement

    text = (out / "log.txt").read_text()
    m = read_measurement(out / "run")
    figures = json.loads((out / "run" / "figures" / "meta.json").read_text())["figures"]
    run_s = float(re.findall(r"iteration\(s\) run in (\d+) s", text)[-1])
    figures_s = float(re.findall(r"measured in (\d+) s", text)[-1])
    meta = json.loads((out / "measured" / "meta.json").read_text())
    return {"network": name, "hosts": len(m.host_names), "root": meta["params"]["root"],
            "iterations": len(m.iteration_ids),
            "broadcast_s": float(m.iterations["duration_s"].sum()),
            "broadcast_wall_s": run_s, "figures_wall_s": figures_s,
            "clusters": len(figures["clusters"]), "rounds": figures["rounds"],
            "measured": _table(out / "measured"), "true": _table(out / "true")}


def cost_table(results: list[dict], seconds: float) -> None:
    """The figures' time beside the broadcasts', per network."""
    print(f"Command: `{command_line()}`  ")
    print(machine_line(["numpy", "scipy", "libtorrent"])
          + (f" {seconds / 60:.0f} min." if seconds else "") + "\n")
    print("| network | hosts | clusters | iterations | broadcasts (s) | figures: rounds, s | "
          "figures / broadcasts (run time) |")
    print("|---|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['network']} | {r['hosts']} | {r['clusters']} | {r['iterations']} | "
              f"{r['broadcast_s']:.0f} ({r['broadcast_wall_s']:.0f} wall) | {r['rounds']}, "
              f"{r['figures_wall_s']:.0f} | {r['figures_wall_s'] / r['broadcast_wall_s']:.2f} |")
    print()


def report(results: list[dict], args, seconds: float) -> None:
    print("### Predicted against achieved, from measured and from true figures\n")
    cost_table(results, seconds)
    for r in results:
        measured, true = r["measured"], r["true"]
        best = measured["achieved"].max()
        print(f"**{r['network']}** (root {r['root']}; MiB/s, median of {args.repeats} "
              f"multicasts of {args.size}; best method measured: {measured['achieved'].idxmax()} "
              f"{best:.2f})\n")
        print("| method | measured: predicted | achieved | ach/pred | true: predicted | "
              "achieved | ach/pred |")
        print("|---|---|---|---|---|---|---|")
        for method in measured.index:
            a = measured.loc[method]
            b = true.loc[method] if method in true.index else None

            def cells(x) -> str:
                if x is None:
                    return "| - | - | -"
                pred = "-" if x.predicted != x.predicted else f"{x.predicted:.2f}"
                ratio = "-" if x.ratio != x.ratio else f"{x.ratio:.2f}"
                got = "-" if x.achieved != x.achieved else f"{x.achieved:.2f}"
                return f"| {pred} | {got} | {ratio}"
            print(f"| {method} {cells(a)} {cells(b)} |")
        within = [m for m in measured.index if measured.loc[m, "ratio"] == measured.loc[m, "ratio"]]
        ok = [m for m in within if 0.85 <= measured.loc[m, "ratio"] <= 1.15]
        within_true = [m for m in true.index if true.loc[m, "ratio"] == true.loc[m, "ratio"]]
        ok_true = [m for m in within_true if 0.85 <= true.loc[m, "ratio"] <= 1.15]
        balanced = measured.loc["balanced", "achieved"] if "balanced" in measured.index \
            else float("nan")
        unfinished = [m for m in measured.index if measured.loc[m, "achieved"]
                      != measured.loc[m, "achieved"]]
        print(f"\nmeasured: {len(ok)} of {len(within)} predictions within 0.85-1.15; true: "
              f"{len(ok_true)} of {len(within_true)}; balanced over measured figures / best "
              f"method: {balanced / best:.2f}"
              + (f"; no multicast complete: {', '.join(unfinished)}" if unfinished else "")
              + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--networks", default="two-sites-demo,shuffled-sites,regions-3,gridlab-8")
    parser.add_argument("--size", default="8MiB", help="multicast payload (8MiB)")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("/tmp/prediction-accuracy"))
    parser.add_argument("--cost-only", action="store_true",
                        help="measure the broadcasts and the figures only, and print their "
                             "times (no multicast)")
    parser.add_argument("--report-only", action="store_true",
                        help="print the report of networks run before into --out")
    args = parser.parse_args(argv)
    if args.report_only:
        report([from_logs(n, args.out / n) for n in args.networks.split(",")], args, 0.0)
        return 0
    require_root()
    stop_as_interrupt()
    started = time.time()
    results = []
    for name in args.networks.split(","):
        results.append(one_network(name, args.out / name, args))
        print(f"{name} done, {time.time() - started:.0f} s so far", file=sys.stderr, flush=True)
    if args.cost_only:
        cost_table(results, time.time() - started)
    else:
        report(results, args, time.time() - started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
