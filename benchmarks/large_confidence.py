"""The confidence on large networks: planted hierarchies of 576 to 4096 hosts, sparse peer lists.

Each receiver hears from ``--peers`` random peers per broadcast (35, the
thesis's peer list and the default, or more), so in a group of hundreds of
hosts most pairs have exchanged nothing after ten broadcasts.  For each size
the planted two-level hierarchy (:func:`tomography.model.synthetic.planted_hierarchy`:
sites of leaf groups, affinity 4x per level) is analysed as ``tomography
hierarchy`` does (:func:`tomography.analyze`, every level kept, with its
confidence), and every level is reported: clusters, the NMI against the truth
depth it matches best, confidence, separation; then the confidence of each
true level itself (:func:`cluster.confidence.level_shares`), and the time.

Run::

    .venv/bin/python benchmarks/large_confidence.py          # ~5 min on 2 cores
    .venv/bin/python benchmarks/large_confidence.py --sizes 4096 --peers 35 80
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from bench_support import command_line, machine_line
from cluster.accuracy import nmi
from cluster.confidence import level_shares
from tomography import analyze
from tomography.model.synthetic import planted_hierarchy

SIZES = {576: ((3, 3), 64), 1024: ((4, 4), 64), 2048: ((4, 8), 64), 4096: ((4, 8), 128)}
"""Hosts: (sites, leaf groups per site), hosts per leaf group."""


def truth(m, depth: int) -> np.ndarray:
    names = ["/".join(m.labels[h].split("/")[:depth]) for h in m.host_names]
    return np.unique(names, return_inverse=True)[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=sorted(SIZES))
    parser.add_argument("--peers", type=int, nargs="+", default=[35])
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"Command: `{command_line()}`\n")
    print(machine_line(("igraph",)) + "\n")
    print("| hosts | groups | peers | levels found (clusters: NMI at the truth depth, "
          "confidence, separation) | true leaf groups: confidence | true sites: confidence "
          "| analysis s |")
    print("|---|---|---|---|---|---|---|")
    for hosts in args.sizes:
        branching, per = SIZES[hosts]
        for peers in args.peers:
            m = planted_hierarchy(branching, per, iterations=args.iterations, peers=peers,
                                  seed=args.seed)
            start = time.perf_counter()
            h = analyze(m, seed=0, all_levels=True).hierarchy
            took = time.perf_counter() - start
            leaves, sites = truth(m, 2), truth(m, 1)
            order = [m.host_names.index(x) for x in h.hosts]
            cells = []
            for k in range(1, h.depth + 1):
                found = h.labels(k)
                scores = [nmi(found, t[order]) for t in (sites, leaves)]
                depth = int(np.argmax(scores)) + 1
                cells.append(f"{len(h.levels[k - 1])}: {max(scores):.2f}@{depth}, "
                             f"{h.confidence[k - 1]:.2f}, {h.separation(k):.2f}x")
            judged = level_shares(m, [leaves, sites], seed=0)
            print(f"| {hosts} | {len(set(leaves))} of {per} in {len(set(sites))} | {peers} | "
                  f"{'; '.join(cells)} | {judged[0].share:.2f} ({judged[0].separation:.2f}x) | "
                  f"{judged[1].share:.2f} ({judged[1].separation:.2f}x) | {took:.1f} |",
                  flush=True)


if __name__ == "__main__":
    main()
