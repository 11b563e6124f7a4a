"""A planner's figures read from the broadcasts' own trace, against iperf3's tests and the truth.

``tomography measure figures`` spends iperf3 tests on what a planner needs
(each node's capacity out and in, one flow alone across the top) once the
broadcasts have found the clusters: 0.34-0.53 of the broadcasts' time on the
networks of ``prediction_accuracy.py``, where issue 42 asks for at most 0.25.
The broadcasts themselves carried traffic out of and into every node of the
tree of clusters; their trace (``measure bittorrent --trace``: when each block
arrived, from whom) says how fast.  This script reads, per node of the tree
the figures run measured (clusters and groups of them), the most blocks that
left (entered) it in any ``--window`` of any iteration, and per cluster the
median over its hosts of the most each host received in a window; builds a
model from them as :func:`tomography.export.bandwidth.from_figures` builds one
from the iperf3 tests (no flow alone: the broadcasts ran none), and compares
both models with the topology's own figures (the truth of an emulated network).
``--multicast`` then runs every planner over each model's Gauge file on the same
testbed (unless ``--analyse`` finds those multicasts kept), and prints what each
predicted beside what it achieved.

For each network (built-in, or defined in ``prediction_accuracy.py``), from
nothing and with the command line's defaults: ``tomography measure bittorrent
--testbed NET --until-converged --trace``, then ``tomography measure figures``
on the same testbed; the datasets are kept under ``--out``.  ``--analyse``
reads them again without measuring.

Run::

    sudo .venv/bin/python benchmarks/trace_figures.py
    sudo .venv/bin/python benchmarks/trace_figures.py --networks two-sites-demo regions-3
    sudo .venv/bin/python benchmarks/trace_figures.py --analyse --multicast --networks regions-3
    .venv/bin/python benchmarks/trace_figures.py --analyse        # the kept datasets again
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_support import command_line, machine_line, require_root  # noqa: E402
from prediction_accuracy import HOSTS_LEVEL, PLANNERS, _run, _table, _topology  # noqa: E402
from tomography.export.bandwidth.trace_peaks import WINDOW  # noqa: E402

NETWORKS = ("two-sites-demo", "shuffled-sites", "regions-3", "shuffled-sites-32", "gridlab-8")


def measure(name: str, out: Path) -> None:
    """Traced broadcasts until the stop rule stops, then the figures' iperf3 tests."""
    out.mkdir(parents=True, exist_ok=True)
    log = out / "log.txt"
    topology = _topology(name, out)
    bed = ["--testbed", topology]
    level = ["--level", "hosts" if name in HOSTS_LEVEL else "clusters"]
    _run(["testbed", "up", topology, "--force"], log)
    try:
        _run(["measure", "bittorrent", *bed, "--until-converged", "--trace", "-o",
              str(out / "run"), "--force"], log)
        _run(["measure", "figures", *bed, "--dataset", str(out / "run"), *level, "--force"], log)
    finally:
        _run(["testbed", "down", "--force"], log)


def trace_model(run: Path, window: float = WINDOW):
    """The model of the tree of clusters the run's figures measured, from its trace: each
    node's most traffic out (in) in a window, each cluster's hosts' most received."""
    from tomography.export.bandwidth.figures import tree_model
    from tomography.export.bandwidth.model import FIGURES, Source
    from tomography.export.bandwidth.trace_peaks import node_peaks, peak
    from tomography.model.dataset import read_trace
    from tomography.model.dataset.figures import read_figures

    trace = read_trace(run)
    _, spec = read_figures(run)
    clusters = {c: list(hs) for c, hs in spec["clusters"].items()}
    inside = {c: float(np.nanmedian([peak(trace[trace["receiver"] == h], window) for h in hs]))
              for c, hs in clusters.items()}
    leaving, entering = node_peaks(trace, clusters, spec.get("groups"), window=window)
    how = Source("broadcast-throughput", f"the broadcasts' trace, the most in {window} s")
    return tree_model(clusters, spec.get("groups"), inside, leaving, entering, {},
                      sources={f: how for f in (*FIGURES[:3], "shared_links")}, notes=[])


def _spread(values: list[float]) -> str:
    values = [v for v in values if v == v]
    if not values:
        return "-"
    return f"{np.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def compare(name: str, out: Path, window: float = WINDOW) -> str:
    """A Markdown row: each kind of figure of iperf3's tests and of the trace over the truth's
    (median and range), and what the broadcasts and the tests took."""
    from tomography.export.bandwidth import from_figures, from_topology
    from tomography.model.dataset import read_measurement
    from tomography.model.topology import read_topology

    run = out / "run"
    tests = from_figures(run)
    truth = from_topology(read_topology(_topology(name, out)), tests.clusters)
    traced = trace_model(run, window)
    off = ~np.eye(len(tests.clusters), dtype=bool)
    alive = off & (truth.cluster_bandwidth > 0)
    cells = []
    for model in (tests, traced):
        nodes = [*(model.cluster_out / truth.cluster_out), *(model.cluster_in / truth.cluster_in)]
        shared = [mine.capacity / link.capacity for link in truth.shared_links or []
                  for mine in model.shared_links or [] if set(mine.pairs) == set(link.pairs)]
        pairs = (model.cluster_bandwidth[alive] / truth.cluster_bandwidth[alive]).tolist()
        dead = int((off & (truth.cluster_bandwidth == 0) & (model.cluster_bandwidth > 0)).sum())
        cells.append(f"{_spread(nodes)} | {_spread(shared)} | {_spread(pairs)} | {dead}")
    m = read_measurement(run)
    figures = json.loads((run / "figures" / "meta.json").read_text())["figures"]
    took = re.findall(r"figures of \d+ clusters measured in (\d+) s", (out / "log.txt").read_text())
    return (f"| {name} | {len(tests.hosts)} / {len(tests.clusters)} | {cells[0]} | {cells[1]} | "
            f"{float(m.iterations['duration_s'].sum()):.0f} s, {len(m.iteration_ids)} | "
            f"{took[-1] if took else '?'} s, {figures['rounds']} |")


def multicast(name: str, out: Path, *, size: str = "8MiB", repeats: int = 2,
              window: float = WINDOW) -> pd.DataFrame:
    """Every planner over each model's Gauge file, on one testbed: predicted and achieved
    (MiB/s), per figures (``iperf3``, ``trace``)."""
    from tomography.export.bandwidth import from_figures
    from tomography.export.gauge import write_gauge

    run = out / "run"
    topology = _topology(name, out)
    models = {"iperf3": from_figures(run), "trace": trace_model(run, window)}
    root = sorted(next(iter(models["iperf3"].clusters.values())))[0]
    log = out / "log.txt"
    _run(["testbed", "up", topology, "--force"], log)
    try:
        for what, model in models.items():
            write_gauge(model, out / f"{what}.gauge.xml")
            _run(["multicast", "--testbed", topology, "--root", root, "--size", size,
                  "--repeats", str(repeats), "--force", "--gauge", str(out / f"{what}.gauge.xml"),
                  "--max-nodes", "8", "--method", PLANNERS, "-o", str(out / f"mc-{what}")], log)
    finally:
        _run(["testbed", "down", "--force"], log)
    return multicast_table(out)


def multicast_table(out: Path) -> pd.DataFrame:
    """The multicasts :func:`multicast` left in ``out``, one row per planner."""
    tables = {what: _table(out / f"mc-{what}") for what in ("iperf3", "trace")}
    return pd.concat({what: t[["predicted", "achieved", "ratio"]] for what, t in tables.items()},
                     axis=1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--networks", nargs="+", default=list(NETWORKS))
    parser.add_argument("--out", type=Path, default=Path("/tmp/trace-figures"))
    parser.add_argument("--window", type=float, default=WINDOW,
                        help=f"seconds of a window of the trace (default {WINDOW})")
    parser.add_argument("--analyse", action="store_true",
                        help="read the kept broadcasts and figures again, measure none")
    parser.add_argument("--multicast", action="store_true",
                        help="then every planner over each model's Gauge file on the testbed: "
                             "predicted against achieved")
    args = parser.parse_args(argv)
    if not args.analyse:
        require_root()
        for name in args.networks:
            measure(name, args.out / name)
    print(f"Command: `{command_line()}`  \n{machine_line()}\n")
    print("Each figure over the truth's: median (range). Nodes: every cluster's capacity out and "
          "in; shared: the links several cluster pairs cross; pairs: every two clusters the "
          "truth joins; dead: pairs the truth has dead that the figures give a bandwidth.\n")
    print("| network | hosts / clusters | iperf3: nodes | shared | pairs | dead | trace: nodes "
          "| shared | pairs | dead | broadcasts, iterations | iperf3 figures, rounds |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in args.networks:
        print(compare(name, args.out / name, args.window))
    for name in args.networks if args.multicast else ():
        here = args.out / name
        if (here / "mc-trace").is_dir() and args.analyse:
            table = multicast_table(here)
        else:
            require_root()
            table = multicast(name, here, window=args.window)
        print(f"\n**{name}**: planned over each model's Gauge file (MiB/s, median of 2 "
              "multicasts of 8 MiB)\n")
        print("| method | iperf3: predicted | achieved | ach/pred | trace: predicted | achieved "
              "| ach/pred |")
        print("|---|---|---|---|---|---|---|")
        for method, row in table.iterrows():
            print(f"| {method} | " + " | ".join(
                "-" if v != v else f"{v:.2f}" for v in row.to_numpy(dtype=float)) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
