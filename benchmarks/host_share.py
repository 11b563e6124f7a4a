"""Which clusters can a broadcast reveal?  The host's NIC share against simulated broadcasts.

Eq 5.3 as published leaves a host's NIC unshared; the ground-truth model
here shares it among a host's connections (``truth --host-connections``,
default 8: libtorrent's unchoke slots) and marks partitions that split a
link giving a connection more than that share as unobservable.  This script
puts the rule against the simulator on networks built around it:

* ``chain-above`` / ``chain-below``: four 16-host clusters in a chain, the
  A-B link giving 3x a NIC's share per connection (above) or 0.75x (below);
* ``pods-above`` / ``pods-below``: two pods of two 16-host racks, the rack
  uplinks giving 1.5x a NIC's share (above) or 0.75x (below);
* ``N2`` with the simulator's 8 + 1 upload connections and with 7 + 1 (8,
  as libtorrent): the thesis's level 1 hinges on a link at 121.5 Mbit/s
  per connection, between the two shares (111 and 125 Mbit/s).

With ``--testbed`` (root), also real libtorrent broadcasts on the emulated
testbed over a scaled chain of three 4-host clusters, 100 Mbit/s NICs (a
share of 12.5 Mbit/s): ``chain3-above`` (A-B gives 33 Mbit/s per
connection, 2.7x the share) and ``chain3-below`` (6.7 Mbit/s, 0.53x); B-C
gives 2 Mbit/s in both.

For each (N2: at least 15 iterations): the truth's finest level, what the rule says a broadcast can
reveal of it, and what Louvain and the averaged-edge hierarchy find after
``--iterations`` x 64 MiB (:func:`tomography.analyze`, seed 0, every level:
no confidence, ``resamples=0``), and the contrast at the link in question: mean
w_n of the pairs inside the first two clusters (A and B; the first pod's
racks; N2's R1R2 and R3R4) over the pairs between them.  Prints Markdown
for ``benchmarks/RESULTS.md``.

Run::

    .venv/bin/python benchmarks/host_share.py              # ~5 min on 2 cores
    sudo .venv/bin/python benchmarks/host_share.py --testbed   # + ~5 min of real broadcasts
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench_support import command_line, machine_line
from cluster.accuracy import nmi
from measure.simulator import simulate
from measure.swarm import SwarmParams
from tomography import analyze
from tomography.model.dataset import read_measurement
from tomography.model.ground_truth import observable_labels
from tomography.model.topology import Topology, parse_topology, read_topology

MiB = 2**20


def chain(ab: str) -> Topology:
    links = [("A", "B", ab), ("B", "C", "1Gbit/s"), ("C", "D", "100Mbit/s")]
    return parse_topology({
        "name": f"chain-{'above' if ab == '4Gbit/s' else 'below'}", "routers": list("ABCD"),
        "host_defaults": {"nic": "1Gbit/s", "latency": "50us"},
        "links": [{"between": [a, b], "capacity": c, "latency": "100us"} for a, b, c in links],
        "clusters": [{"name": r.lower(), "router": r, "hosts": 16, "label": r.lower()}
                     for r in "ABCD"]})


def pods(rack: str) -> Topology:
    links = [("core", "p1", "2Gbit/s"), ("core", "p2", "2Gbit/s")] + [
        (f"p{p}", f"r{p}{r}", rack) for p in (1, 2) for r in (1, 2)]
    return parse_topology({
        "name": f"pods-{'above' if rack == '2Gbit/s' else 'below'}",
        "routers": ["core", "p1", "p2", "r11", "r12", "r21", "r22"],
        "host_defaults": {"nic": "1Gbit/s", "latency": "50us"},
        "links": [{"between": [a, b], "capacity": c, "latency": "100us"} for a, b, c in links],
        "clusters": [{"name": f"r{p}{r}", "router": f"r{p}{r}", "hosts": 16,
                      "label": f"pod{p}/rack{p}{r}"} for p in (1, 2) for r in (1, 2)]})


def chain3(ab: str) -> dict:
    """The testbed's scaled chain A-B-C of 4-host clusters (a topology file's content)."""
    return {"name": f"chain3-{'above' if ab == '100Mbit/s' else 'below'}",
            "routers": list("ABC"), "host_defaults": {"nic": "100Mbit/s", "latency": "50us"},
            "links": [{"between": ["A", "B"], "capacity": ab, "latency": "100us"},
                      {"between": ["B", "C"], "capacity": "6Mbit/s", "latency": "100us"}],
            "clusters": [{"name": r.lower(), "router": r, "hosts": 4, "label": r.lower()}
                         for r in "ABC"]}


def on_testbed(model: dict, iterations: int, tmp: Path) -> str:
    """Real broadcasts on the emulated testbed; the same columns, plus pair contrasts."""
    import yaml

    topo_file = tmp / f"{model['name']}.yaml"
    topo_file.write_text(yaml.safe_dump(model))
    out = tmp / f"{model['name']}-run"
    t0 = time.perf_counter()
    subprocess.run([str(Path(sys.executable).with_name("tomography")), "measure", "bittorrent",
                    "--testbed", str(topo_file), "-n", str(iterations), "--size", "8MiB",
                    "--seed", "0", "-o", str(out)], check=True, capture_output=True)
    return analyse(parse_topology(model), out, 8, t0, real=True)


def analyse(topo: Topology, path: Path, connections: int, t0: float, real: bool = False) -> str:
    m = read_measurement(path)
    hosts = m.host_names
    truth = {h: m.labels[h] for h in hosts}
    seen = observable_labels(topo, truth, host_connections=connections)
    a = analyze(m, seed=0, resamples=0)     # w_n of every iteration; every level kept
    flat, h = a.flat.clustering, a.hierarchy
    finest = [truth[x] for x in hosts]
    reveal = [seen[x] for x in hosts]
    levels = [len(level) for level in h.levels]
    best = max(nmi(reveal, h.labels(k)) for k in range(1, h.depth + 1))
    edges = m.edges()
    # the contrast at the link in question: the first two truth clusters (A and B, the
    # first pod's racks, N2's R1R2 and R3R4), pairs inside them against pairs between them
    first, second = sorted(set(finest))[:2]
    pairs = list(zip(edges["source"], edges["target"]))
    inside = np.array([truth[a] == truth[b] in (first, second) for a, b in pairs])
    between = np.array([{truth[a], truth[b]} == {first, second} for a, b in pairs])
    w = edges["weight"].to_numpy()
    contrast = f"{w[inside].mean() / w[between].mean():.2f}"
    return (f"| {topo.name}{' (testbed)' if real else ''} | {connections} | {len(set(finest))} | "
            f"{len(set(reveal))} | {flat.n_clusters} (NMI {nmi(finest, flat.labels):.2f} / "
            f"{nmi(reveal, flat.labels):.2f}) | {levels} (best {best:.2f}) | {contrast} | "
            f"{time.perf_counter() - t0:.0f} s |")


def run(topo: Topology, params: SwarmParams, iterations: int, tmp: Path) -> str:
    connections = params.upload_slots + 1            # the simulator's slots + the optimistic one
    t0 = time.perf_counter()
    path = simulate(topo, tmp / f"{topo.name}-{params.upload_slots}", iterations=iterations,
                    file_size=64 * MiB, seed=0, params=params)
    return analyse(topo, path, connections, t0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--iterations", type=int, default=6)
    parser.add_argument("--testbed", action="store_true",
                        help="also real broadcasts on the emulated testbed (root)")
    args = parser.parse_args()
    started = time.perf_counter()
    rows = ["| network | connections per host | truth clusters | revealable (rule) | "
            "Louvain (NMI vs truth / vs revealable) | hierarchy levels (best NMI vs "
            "revealable) | w_n inside / between the first two clusters | time |",
            "|---|---|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as tmp:
        cases = [(chain("4Gbit/s"), SwarmParams()), (chain("1Gbit/s"), SwarmParams()),
                 (pods("2Gbit/s"), SwarmParams()), (pods("1Gbit/s"), SwarmParams()),
                 (read_topology("N2"), SwarmParams()),
                 (read_topology("N2"), SwarmParams(upload_slots=7))]
        for topo, params in cases:      # N2: as many iterations as the thesis's 14, and one
            n = max(args.iterations, 15) if topo.name == "N2" else args.iterations
            rows.append(run(topo, params, n, Path(tmp)))
            print(rows[-1], file=sys.stderr, flush=True)
        for ab in (["100Mbit/s", "20Mbit/s"] if args.testbed else []):
            rows.append(on_testbed(chain3(ab), args.iterations, Path(tmp)))
            print(rows[-1], file=sys.stderr, flush=True)
    print(f"Command: `{command_line()}`; {args.iterations} x 64 MiB, seed 0; "
          f"{time.perf_counter() - started:.0f} s. {machine_line(('numpy', 'libtorrent'))}\n")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
