"""The simulator's bandwidth sharing, before and after the event-driven filling, side by side.

:func:`measure.flows.max_min_rates` is called once or twice per simulated
step.  It used to raise every rising flow round by round, scanning all the
loaded resources and rising flows each round; it now freezes flows event by
event with the resources in a heap.  This script loads ``measure/flows.py``
as it was at ``--base`` (``git show``) beside this checkout's and, for each
network of the large calibration family asked for (``large_family.py``;
224 to 2727 hosts), simulates one broadcast with each (``tomography measure
bittorrent``'s size and block quota), in one process, one after the other:

* the seconds of the broadcast and of its filling calls, and their ratio;
* the largest relative difference between the two fillings' rates on the
  same inputs (the first :data:`CHECKED` calls of the new run, given to both).

The two broadcasts are not the same run: a simulated swarm is chaotic to
rounding (a change of the capacities by 1e-13 changes the iterations'
durations by a third), so each follows its own path from the first step
whose rates differ in the last digits.

Run::

    .venv/bin/python benchmarks/flow_filling.py [--base REV] [--networks 18 10 13 2 7 12]
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import measure.flows as flows
from bench_support import ROOT, command_line, machine_line
from large_family import SIZE, large_network
from measure.simulator import simulate_broadcast
from measure.swarm import MEASURE_QUOTA, SwarmParams
from tomography.model.topology import parse_topology
from tomography.model.units import parse_size

CHECKED = 50
"""Filling calls per network whose inputs both fillings get, to compare their rates."""
BASE = "900eff3"
"""The last commit with the round-by-round filling."""


def base_filling(rev: str):
    """``measure/flows.py`` of ``rev`` as a module of its own."""
    source = subprocess.run(["git", "show", f"{rev}:measure/flows.py"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp()) / "flows_base.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("flows_base", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def broadcast(topology, fill, *, check=None) -> dict:
    """One broadcast with ``fill`` as the filling: seconds in all and in the filling, steps,
    flows per call, and with ``check`` the largest relative difference of its rates."""
    spent, calls, flows_seen, worst, checking = [0.0], [0], [], [0.0], [0.0]

    def timed(capacity, flow_of, resource_of, w, cap):
        t0 = time.perf_counter()
        rate, ok = fill(capacity, flow_of, resource_of, w, cap)
        spent[0] += time.perf_counter() - t0
        calls[0] += 1
        flows_seen.append(w.size)
        if check is not None and calls[0] <= CHECKED:
            t0 = time.perf_counter()
            other, _ = check(capacity, flow_of, resource_of, w, cap)
            worst[0] = max(worst[0], float(np.max(np.abs(rate - other) / np.maximum(
                np.abs(other), 1e-9), initial=0.0)))
            checking[0] += time.perf_counter() - t0
        return rate, ok

    hosts = sorted(h.name for h in topology.hosts)
    params = SwarmParams(block_quota=MEASURE_QUOTA)
    saved, flows._fill = flows._fill, timed
    try:
        t0 = time.perf_counter()
        result = simulate_broadcast(topology, hosts, hosts[0], parse_size(SIZE), params=params,
                                    seed=0)
        seconds = time.perf_counter() - t0 - checking[0]   # the comparison is not its cost
    finally:
        flows._fill = saved
    return {"seconds": seconds, "filling": spent[0], "calls": calls[0], "steps": result.steps,
            "flows": float(np.mean(flows_seen)), "worst": worst[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", default=BASE, help="the commit of the filling compared")
    parser.add_argument("--networks", type=int, nargs="+", default=[18, 10, 13, 2, 7, 12],
                        help="networks of the large family, by number")
    args = parser.parse_args()
    old = base_filling(args.base)
    new = flows._fill
    tiny = (np.ones(1), np.zeros(1, np.int64), np.zeros(1, np.int64), np.ones(1),
            np.full(1, np.inf))
    old._fill(*tiny), new(*tiny)             # compile (or load) both before timing
    print(f"Command: `{command_line()}`\n\n{machine_line(('numpy', 'numba'))}\n")
    print(f"One broadcast of {SIZE}, block quota {MEASURE_QUOTA}, seed 0, each filling in turn "
          f"(base: {args.base}).\n")
    print("| network | hosts | flows per call (mean) | filling | steps | broadcast (s) | "
          "filling (s) | filling per call (ms) | largest rate difference, same inputs |")
    print("|---|---|---|---|---|---|---|---|---|")
    for number in args.networks:
        model = large_network(number)
        topology = parse_topology(model, source=model["name"])
        rows = {"round by round": broadcast(topology, old._fill),
                "event by event": broadcast(topology, new, check=old._fill)}
        for label, r in rows.items():
            print(f"| {model['name']} | {len(topology.hosts)} | {r['flows']:.0f} | {label} | "
                  f"{r['steps']} | {r['seconds']:.1f} | {r['filling']:.1f} | "
                  f"{1000 * r['filling'] / max(r['calls'], 1):.2f} | "
                  + (f"{r['worst']:.1e} |" if label == "event by event" else "- |"))
        a, b = rows["round by round"], rows["event by event"]
        print(f"| | | | ratio | | {a['seconds'] / b['seconds']:.1f}x | "
              f"{a['filling'] / b['filling']:.1f}x | "
              f"{(a['filling'] / a['calls']) / (b['filling'] / b['calls']):.1f}x | |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
