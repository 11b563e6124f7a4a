"""The simulator's TCP model: its cost, its effect on w_n, and each mechanism's share.

1. Time of one broadcast iteration (seed 0, root the first host): N2 and N1
   at 64 MiB, 1024 hosts (16 clusters of 64 on a core, all 1 Gbit/s) at 16
   MiB; with ``--previous CHECKOUT`` the same runs of that checkout's
   simulator, in a subprocess, side by side, as a ratio.
2. w_n before and after on bordeaux-64 and N1 (``--iterations`` x 64 MiB):
   the two-sample Kolmogorov-Smirnov statistic of w_n over its mean, and
   the mean w_n of pairs inside a cluster and across clusters over the mean.
3. Two sites that differ only in round-trip time (1 ms inside, 40 ms
   across, 1 Gbit/s NICs, a core that is never the bottleneck): the NMI of
   Louvain's partition against the sites with the model on, off, and with
   each mechanism off alone.

Run::

    .venv/bin/python benchmarks/tcp_model_effects.py --previous /tmp/before   # git worktree add
    .venv/bin/python benchmarks/tcp_model_effects.py --quick                  # part 3 only

Prints Markdown for ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench_support import command_line, machine_line

MiB = 2**20

TIMING = """
import json, sys, time
from measure.simulator import simulate_broadcast
from tomography.model.topology import parse_topology, read_topology
name, size = sys.argv[1], int(sys.argv[2])
if name.startswith("tree-"):
    n = int(name[5:]); k = n // 64
    topo = parse_topology({"name": name, "routers": ["core"] + [f"L{i}" for i in range(k)],
        "host_defaults": {"nic": "1Gbit/s", "latency": "50us"},
        "links": [{"between": ["core", f"L{i}"], "capacity": "1Gbit/s", "latency": "100us"}
                  for i in range(k)],
        "clusters": [{"name": f"c{i}", "router": f"L{i}", "hosts": 64} for i in range(k)]})
else:
    topo = read_topology(name)
hosts = sorted(h.name for h in topo.hosts)
small = read_topology("tree-5")     # first: compile (Numba) or load the compiled cache
t0 = time.perf_counter()
simulate_broadcast(small, [h.name for h in small.hosts], "h1-00", 2**20, seed=0)
warm = time.perf_counter() - t0
t0 = time.perf_counter()
r = simulate_broadcast(topo, hosts, hosts[0], size, seed=0)
print(json.dumps({"wall": time.perf_counter() - t0, "steps": r.steps, "simulated": r.duration,
                  "warm_up": warm}))
"""

WEIGHTS = """
import sys
from measure.simulator import simulate
from tomography.model.topology import read_topology
simulate(read_topology(sys.argv[1]), sys.argv[2], iterations=int(sys.argv[3]),
         file_size=64 * 2**20, seed=int(sys.argv[4]))
"""


def run_in(checkout: Path | None, script: str, *args: str) -> str:
    """Run ``script`` with the simulator of ``checkout`` (None: this one)."""
    env = dict(os.environ)
    root = checkout or Path(__file__).resolve().parent.parent
    env["PYTHONPATH"] = str(root)
    out = subprocess.run([sys.executable, "-c", script, *args], env=env, check=True, cwd=root,
                         capture_output=True, text=True)
    return out.stdout


def timing(previous: Path | None) -> list[str]:
    rows = ["| network | file | steps | wall time | previous: steps | wall time | ratio |",
            "|---|---|---|---|---|---|---|"]
    warm = []
    for name, size in [("N2", 64), ("N1", 64), ("tree-1024", 16)]:
        now = json.loads(run_in(None, TIMING, name, str(size * MiB)))
        cells = [f"{name}", f"{size} MiB", str(now["steps"]), f"**{now['wall']:.1f} s**"]
        if previous is not None:
            before = json.loads(run_in(previous, TIMING, name, str(size * MiB)))
            cells += [str(before["steps"]), f"{before['wall']:.1f} s",
                      f"{before['wall'] / now['wall']:.2f}x faster" if now["wall"] < before["wall"]
                      else f"{now['wall'] / before['wall']:.2f}x slower"]
        else:
            cells += ["", "", ""]
        rows.append("| " + " | ".join(cells) + " |")
        warm.append(now["warm_up"])
    return rows + ["", f"Not counted above: a first 1 MiB broadcast on tree-5 in each process, "
                   f"{min(warm):.1f}-{max(warm):.1f} s (loading the compiled kernels; compiling "
                   "them the first time, once per installation, takes longer)."]


def pair_weights(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """w_n over its mean for every observed pair, and whether the pair shares a cluster."""
    from tomography.model.dataset import read_measurement

    m = read_measurement(path)
    edges = m.edges()
    w = edges["weight"].to_numpy()
    cluster = {h: m.labels.get(h, "") for h in m.host_names}
    same = np.array([cluster[a] == cluster[b] for a, b in zip(edges["source"], edges["target"])])
    return w / w.mean(), same


def distributions(previous: Path | None, iterations: int) -> list[str]:
    """w_n of this simulator against the previous one, beside the previous one's own seed noise.

    The KS statistic between two seeds of one simulator is the floor a
    change that keeps the distribution should stay near.
    """
    from scipy.stats import ks_2samp

    rows = ["| scenario | simulator (seed) | pairs | inside a cluster / mean | across / mean | "
            "KS against previous, seed 0 (p) |", "|---|---|---|---|---|---|"]
    runs = [("this", None, 0)]
    if previous is not None:
        runs = [("previous", previous, 0), ("previous", previous, 1)] + runs
    with tempfile.TemporaryDirectory() as tmp:
        for name in ["bordeaux-64", "N1"]:
            got = []
            for label, checkout, seed in runs:
                out = Path(tmp) / f"{name}-{label}-{seed}"
                run_in(checkout, WEIGHTS, name, str(out), str(iterations), str(seed))
                got.append((label, seed, *pair_weights(out)))
            for label, seed, w, same in got:
                ks = ""
                if previous is not None and (label, seed) != ("previous", 0):
                    test = ks_2samp(w, got[0][2])
                    ks = f"{test.statistic:.3f} ({test.pvalue:.2g})"
                inside = f"{w[same].mean():.2f}" if same.any() else "–"
                across = f"{w[~same].mean():.2f}" if (~same).any() else "–"
                rows.append(f"| {name} | {label} ({seed}) | {w.size} | {inside} | {across} | {ks} |")
    return rows


def rtt_only() -> list[str]:
    from cluster.accuracy import nmi
    from measure.simulator import simulate
    from measure.tcp import TcpModel
    from tomography import analyze
    from tomography.model.dataset import read_measurement
    from tomography.model.topology import read_topology

    topo = read_topology("two-sites-rtt")
    models = {"on (defaults)": TcpModel(), "all off": TcpModel.off(),
              "slow start off": TcpModel(slow_start=False),
              "restart after idle off": TcpModel(restart_after_idle=False),
              "1/RTT sharing off": TcpModel(rtt_fair=False),
              "receive window off": TcpModel(receive_window=None),
              "request pipeline off": TcpModel(request_pipeline=False),
              "only 1/RTT sharing": TcpModel(slow_start=False, restart_after_idle=False,
                                             receive_window=None, request_pipeline=False)}
    rows = ["| model | NMI with the sites | w_n across / inside |", "|---|---|---|"]
    with tempfile.TemporaryDirectory() as tmp:
        for label, model in models.items():
            path = simulate(topo, Path(tmp) / label.replace(" ", "-").replace("/", ""),
                            iterations=3, file_size=16 * MiB, seed=0, tcp=model)
            m = read_measurement(path)
            a = analyze(m, seed=0, resamples=0)     # the flat clusters, no confidence
            truth = [m.labels[h] for h in m.host_names]
            score = nmi(truth, a.flat.clustering.labels)
            dense = a.graph.matrix.toarray()        # w_n
            site = np.array([t == "a" for t in truth])
            same = site[:, None] == site[None, :]
            np.fill_diagonal(same, False)
            across = dense[site[:, None] != site[None, :]].mean()
            inside = dense[same].mean()
            rows.append(f"| {label} | {score:.2f} | {across / inside:.2f} |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--previous", type=Path, default=None,
                        help="a checkout of the simulator before the TCP model")
    parser.add_argument("--iterations", type=int, default=5,
                        help="64 MiB iterations per scenario for the w_n comparison (default 5)")
    parser.add_argument("--quick", action="store_true", help="the RTT-only network only")
    parser.add_argument("--parts", default="timing,weights,rtt",
                        help="which parts to run, comma-separated (default: all)")
    args = parser.parse_args()
    started = time.perf_counter()
    out = [f"Command: `{command_line()}`. {machine_line(('numpy', 'numba'))}", ""]
    parts = {"rtt"} if args.quick else set(args.parts.split(","))
    if "timing" in parts:
        out += ["### One iteration", ""] + timing(args.previous) + [""]
    if "weights" in parts:
        out += [f"### w_n before and after ({args.iterations} x 64 MiB)", ""]
        out += distributions(args.previous, args.iterations) + [""]
    if "rtt" in parts:
        out += ["### Two sites that differ only in RTT (3 x 16 MiB)", ""] + rtt_only()
    out += ["", f"Total: {time.perf_counter() - started:.0f} s."]
    print("\n".join(out))


if __name__ == "__main__":
    main()
