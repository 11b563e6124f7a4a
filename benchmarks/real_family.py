"""The calibration family measured for real: libtorrent broadcasts on the testbed, every default.

The family of ``random_networks.py`` (19 to 96 hosts, links up to 10 Gbit/s)
does not fit an emulation on a small machine; this script draws each of its
networks again at testbed size, as a user would shrink a network to emulate
it, keeping what the clustering feeds on, the share of each bottleneck a
host gets:

* every cluster keeps ``TARGET_HOSTS / hosts`` of its hosts (at least 2, so
  that a cluster can still be found) and every link's capacity is multiplied
  by that same factor (a link shared by a third of the hosts carries a third;
  :func:`random_networks.resized`);
* then every capacity, links and NICs, is multiplied by one bandwidth
  factor: the largest, at most 1, at which the testbed's estimate
  (:func:`measure.testbed.resources.estimate`) needs no more than
  :data:`CPU_SHARE` of this machine's cores.  Latencies are kept.

A network whose slowest link ends below :data:`MIN_LINK` is skipped (its
range of capacities is more than this machine can emulate: a broadcast would
take minutes behind that link) and the next one drawn, until ``--count``
networks are kept; the run's table says which were skipped.

Each network is written as a topology file next to its datasets
(``<root>/<name>/topology.yaml``, default root ``benchmarks/_data/real-family``,
ignored by git; a file already there is kept: the datasets beside it were
measured on it) and measured with the command a user runs,
``tomography measure bittorrent --testbed FILE -n ITERATIONS --seed S``
(its defaults: file size, block quota, spread roots, timing), for each seed
into ``<root>/<name>/seed<S>``.  A complete dataset is reused, a partial one
continued (``--resume``).  ``calibration.py --part real`` analyses them.

The datasets are kept in two archives: the first 30 networks measured on
2026-12-06 in ``benchmarks/real-family.tar.xz``, the 20 added on 2026-12-07
(every default of those days, receiver counts) in
``benchmarks/real-family-more.tar.xz``.  ``tar -xJf benchmarks/real-family.tar.xz -C
benchmarks/_data`` (and the same for the second) puts them where this
script, ``calibration.py`` and ``sim_vs_real.py --family`` look, without
root or the two hours of broadcasts (this script then reuses them).

Needs root.  Run::

    sudo .venv/bin/python benchmarks/real_family.py                  # 50 networks x 2 seeds x 15
    sudo .venv/bin/python benchmarks/real_family.py --count 2 --seeds 0 --iterations 3   # smoke
    .venv/bin/python benchmarks/real_family.py --list                # the networks, no run
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from bench_support import command_line, machine_line, require_root
from measure.testbed.resources import CPU_PER_GBIT, PEER_CPU, estimate, machine
from random_networks import _value, bandwidth, iterations_done, random_network, resized
from tomography.model.topology import parse_topology

REAL_ROOT = Path(__file__).resolve().parent / "_data" / "real-family"
"""Default home of the measured networks (``benchmarks/_data/`` is ignored by git)."""
TARGET_HOSTS = 20
"""Hosts of a testbed network (more where its clusters need 2 each)."""
CPU_SHARE = 0.8
"""Share of this machine's cores the estimate may use (the coordinator and Python need some)."""
MIN_LINK = 4e6
"""Bit/s: the slowest link a kept network may have once scaled (2 MiB, the quota, in 4 s)."""
DEFAULT_COUNT = 50
DEFAULT_SEEDS = (0, 1)
DEFAULT_ITERATIONS = 15
TOMOGRAPHY = str(Path(sys.executable).parent / "tomography")


def testbed_network(seed: int, cores: float | None = None) -> dict[str, Any]:
    """Family network ``seed`` at testbed size (see the module's text).

    Parameters
    ----------
    seed : int
        The family network (:func:`random_networks.random_network`).
    cores : float, optional
        The cores the bandwidth factor is fitted to; default this machine's.

    Returns
    -------
    dict
        A topology dict (:func:`tomography.model.topology.parse_topology`), named as
        the family's network, its description saying both factors.

    Examples
    --------
    >>> t = testbed_network(3, cores=2)
    >>> t["name"], sum(c["hosts"] for c in t["clusters"])
    ('family-003', 20)
    """
    topo = resized(random_network(seed), TARGET_HOSTS)
    kept = sum(c["hosts"] for c in topo["clusters"])
    cores = machine().cores if cores is None else cores
    rate = estimate(parse_topology(topo)).rate
    spare = cores * CPU_SHARE - kept * PEER_CPU
    factor = min(1.0, spare / (rate / 1e9 * CPU_PER_GBIT))
    for link in topo["links"]:
        link["capacity"] = bandwidth(_value(link["capacity"]) * factor)
    topo["host_defaults"]["nic"] = bandwidth(_value(topo["host_defaults"]["nic"]) * factor)
    topo["description"] += f"; every capacity x {factor:.3g} to fit {cores} cores"
    return topo


def kept_networks(count: int, cores: float | None = None) -> tuple[list[dict], list[str]]:
    """The first ``count`` family networks at testbed size whose slowest link is at least
    :data:`MIN_LINK`, and the names of those skipped on the way."""
    kept, skipped = [], []
    seed = 0
    while len(kept) < count:
        t = testbed_network(seed, cores)
        slowest = min(_value(link["capacity"]) if not link["capacity"].startswith("0")
                      else 0.0 for link in t["links"])
        (kept if slowest >= MIN_LINK else skipped).append(t if slowest >= MIN_LINK
                                                          else t["name"])
        seed += 1
    return kept, skipped


def measure(topology: Path, out: Path, seed: int, iterations: int) -> tuple[float, str]:
    """One run as a user types it; (wall seconds, the last line of its output or error)."""
    resume = ["--resume"] if iterations_done(out) else []
    start = time.monotonic()
    run = subprocess.run([TOMOGRAPHY, "measure", "bittorrent", "--testbed", str(topology),
                          "--name", f"rf{seed}", "-n", str(iterations), "--seed", str(seed),
                          "-o", str(out), *resume], capture_output=True, text=True)
    wall = time.monotonic() - start
    text = (run.stdout if run.returncode == 0 else run.stderr).strip().splitlines()
    return wall, (text[-1] if text else f"exit {run.returncode}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=DEFAULT_COUNT,
                        help=f"networks kept (default {DEFAULT_COUNT})")
    parser.add_argument("--seeds", type=int, nargs="+", default=list(DEFAULT_SEEDS))
    parser.add_argument("--iterations", type=int, default=DEFAULT_ITERATIONS)
    parser.add_argument("--root", type=Path, default=REAL_ROOT)
    parser.add_argument("--list", action="store_true", help="print the networks, run nothing")
    args = parser.parse_args()
    networks, skipped = kept_networks(args.count)
    if args.list:
        for t in networks:
            print(f"{t['name']}: {t['description']}")
        print(f"skipped (a link below {MIN_LINK / 1e6:g} Mbit/s): {', '.join(skipped)}")
        return
    require_root()
    print(f"Command: `{command_line()}`\n\n{machine_line(('libtorrent',))}\n", flush=True)
    print(f"{len(networks)} networks kept, {len(skipped)} skipped (a link below "
          f"{MIN_LINK / 1e6:g} Mbit/s once scaled): {', '.join(skipped)}\n", flush=True)
    print("| network | seed | hosts | seconds | iterations | last line |\n"
          "|---|---|---|---|---|---|", flush=True)
    for t in networks:
        folder = args.root / t["name"]
        folder.mkdir(parents=True, exist_ok=True)
        topology = folder / "topology.yaml"
        if not topology.exists():   # else what the datasets there were measured on
            topology.write_text(yaml.safe_dump(t, sort_keys=False))
        for seed in args.seeds:
            out = folder / f"seed{seed}"
            if iterations_done(out) >= args.iterations:
                continue
            wall, last = measure(topology, out, seed, args.iterations)
            (folder / f"seed{seed}.wall.json").write_text(json.dumps({"seconds": wall}))
            print(f"| {t['name']} | {seed} | {sum(c['hosts'] for c in t['clusters'])} | "
                  f"{wall:.0f} | {iterations_done(out)} | {last[:120]} |", flush=True)


if __name__ == "__main__":
    main()
