"""The calibration family at scale: its networks grown to 200-4096 hosts and simulated as
``tomography measure bittorrent`` broadcasts end.

Network ``i`` of the large family is network ``i`` of ``random_networks.py``
grown to a host count drawn log-uniformly in :data:`HOSTS` (``numpy``
generator seeded ``(LARGE_STREAM, i)``), each host's share of every link
kept (:func:`random_networks.resized`: clusters and link capacities times
the same factor, so clusters of 4-24 hosts become clusters of tens to a
thousand and more), and named ``large-<i:03d>``.  Each is simulated
(:func:`measure.simulator.simulate`) with what a real measurement uses by
default: ``tomography measure bittorrent``'s file size and block quota, spread
roots, 35 peers per host, libtorrent's piece size, for :data:`ITERATIONS`
broadcasts and each seed, into ``<root>/<name>/seed<s>`` (default root
``benchmarks/_data/large-family``, ignored by git; complete datasets are
reused, partial ones continued; the smallest networks first, so a run cut
short keeps the most networks).  ``calibration.py --part large`` analyses them.

Run::

    .venv/bin/python benchmarks/large_family.py --list          # the networks
    .venv/bin/python benchmarks/large_family.py                 # 24 networks x 2 seeds x 15
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np

from bench_support import command_line, machine_line
from random_networks import random_network, resized, simulate_family, summary
from measure.swarm import MEASURE_QUOTA

LARGE_ROOT = Path(__file__).resolve().parent / "_data" / "large-family"
"""Default cache (``benchmarks/_data/`` is ignored by git)."""
HOSTS = (200, 4096)
"""Hosts of a large network, drawn log-uniformly."""
LARGE_STREAM = 38
"""First word of each network's host-count generator seed (apart from the family's)."""
DEFAULT_COUNT = 24
DEFAULT_SEEDS = (0, 1)
ITERATIONS = 15
SIZE = "16MiB"
"""``tomography measure bittorrent``'s default ``--size``."""


def large_network(seed: int) -> dict:
    """Network ``seed`` of the large family (see the module's text).

    Examples
    --------
    >>> t = large_network(3)
    >>> t["name"], 200 <= sum(c["hosts"] for c in t["clusters"]) <= 4096 + 2 * 24
    ('large-003', True)
    """
    rng = np.random.default_rng((LARGE_STREAM, seed))
    hosts = int(round(np.exp(rng.uniform(np.log(HOSTS[0]), np.log(HOSTS[1])))))
    topology = resized(random_network(seed), hosts)
    topology["name"] = f"large-{seed:03d}"
    return topology


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=DEFAULT_COUNT)
    parser.add_argument("--seeds", type=int, nargs="+", default=list(DEFAULT_SEEDS))
    parser.add_argument("--iterations", type=int, default=ITERATIONS)
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--root", type=Path, default=LARGE_ROOT)
    parser.add_argument("--list", action="store_true", help="print the networks, simulate nothing")
    args = parser.parse_args()
    networks = sorted((large_network(i) for i in range(args.count)),   # cheapest first:
                      key=lambda t: sum(c["hosts"] for c in t["clusters"]))  # a cut run keeps most
    if args.list:
        for t in networks:
            s = summary(t)
            print(f"{t['name']}  {s['kind']:<10} hosts {s['hosts']:>4}  levels {s['levels']}  "
                  f"clusters {s['clusters']:>2}  {s['shape']}")
        return
    print(f"Command: `{command_line()}`\n\n{machine_line(('numpy',))}\n", flush=True)
    simulate_family(args.root, seeds=args.seeds, iterations=args.iterations,
                    size=SIZE, jobs=args.jobs, topologies=networks,
                    block_quota=MEASURE_QUOTA)


if __name__ == "__main__":
    main()
