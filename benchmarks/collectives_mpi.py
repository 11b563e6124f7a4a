"""Hierarchical MPI collectives against MPI's own, ranks in the testbed's namespaces.

Raises an emulated network (``two-sites-demo`` or ``N1``, scaled to fit two
cores), then, in one MPI job per step, the way a user's allocation runs:

1. ``tomography measure bittorrent --mpi``: rank 0 coordinates, one rank in
   each host's namespace runs a peer (the measurement, timed);
2. the collectives program (this file, ``--program``), one rank per host in
   its namespace, which builds :class:`tomography.collectives.HierarchicalComm`
   twice, from the true hierarchy (the topology's labels) and from the
   dataset of step 1 (analysed by rank 0), and times broadcast, reduce,
   allreduce and allgather from 1 KiB to 64 MiB against the plain
   ``MPI_COMM_WORLD`` collectives, in rotated order, the median of
   ``--repeats`` runs with its range (each run's time is the slowest rank's).

MPICH runs with ``MPIR_CVAR_NOLOCAL=1 UCX_TLS=tcp`` (ranks on one machine
would otherwise meet in shared memory, past the shaping) and
``MPIR_CVAR_CH4_PROGRESS_THROTTLE=1`` (ranks waiting in MPI sleep a little
instead of spinning: more ranks than cores), for both sides alike.  Also
sweeps the segment size at 16 MiB and runs the small sizes with the
fallback switched off (``threshold=0``), which is how the defaults in
``tomography.collectives.comm`` were chosen.  Prints Markdown for
benchmarks/RESULTS.md and keeps the raw times in benchmarks/_data/.  Needs
root; about 15 minutes per network.

Run::

    sudo .venv/bin/python benchmarks/collectives_mpi.py                      # two-sites-demo
    sudo .venv/bin/python benchmarks/collectives_mpi.py --order interleaved
    sudo .venv/bin/python benchmarks/collectives_mpi.py --network N1
    .venv/bin/python benchmarks/collectives_mpi.py --overhead                # no root
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

HERE = Path(__file__).resolve()
KIB = 1024
SIZES = [KIB, 4 * KIB, 16 * KIB, 64 * KIB, 256 * KIB, 1 << 20, 4 << 20, 16 << 20, 64 << 20]
COLLECTIVES = ("Bcast", "Reduce", "Allreduce", "Allgather")
SEGMENTS = [64 * KIB, 256 * KIB, 1 << 20, 4 << 20]
NETWORKS = {   # topology, hosts per cluster, bandwidth scale
    "two-sites-demo": ("two-sites-demo", 2, 8.0),
    "N1": ("N1", 1, 0.5),
}
MPICH_ENV = {"MPIR_CVAR_NOLOCAL": "1", "UCX_TLS": "tcp", "MPIR_CVAR_CH4_PROGRESS_THROTTLE": "1"}


# -- the MPI program -------------------------------------------------------------------------

def call(comm, name: str, send, recv) -> None:
    """One collective, root 0, MPI.SUM: ``recv`` is the result (Allgather: of every rank)."""
    from mpi4py import MPI

    if name == "Bcast":
        comm.Bcast(send, root=0)
    elif name == "Reduce":
        comm.Reduce(send, recv, op=MPI.SUM, root=0)
    elif name == "Allreduce":
        comm.Allreduce(send, recv, op=MPI.SUM)
    else:
        comm.Allgather(send, recv)


def program(args: argparse.Namespace) -> int:
    import numpy as np
    from mpi4py import MPI

    from tomography.collectives import HierarchicalComm
    from tomography.model.hierarchy import Hierarchy

    world = MPI.COMM_WORLD
    rank, size = world.Get_rank(), world.Get_size()
    truth = Hierarchy.from_json(Path(args.truth).read_text(encoding="utf-8"))
    addresses = json.loads(Path(args.truth).with_suffix(".addresses.json").read_text())
    comms = {"mpi": world, "true": HierarchicalComm(world, truth, addresses=addresses)}
    if args.measured:
        comms["measured"] = HierarchicalComm(world, args.measured)
    raw = HierarchicalComm(world, truth, addresses=addresses, threshold=0)
    by_segment = {s: HierarchicalComm(world, truth, addresses=addresses, segment=s, threshold=0)
                  for s in SEGMENTS}
    wide = HierarchicalComm(world, truth, addresses=addresses, threshold=0, window=4)
    rows: list[dict] = []

    def timed(comm, name: str, nbytes: int) -> float:
        n = max(1, nbytes // 8)
        if name == "Allgather":
            n = max(1, nbytes // 8 // size)
            send, recv = np.full(n, rank, dtype=np.float64), np.empty(n * size)
        else:
            send, recv = np.full(n, rank + 1.0), np.empty(n)
        world.Barrier()
        start = MPI.Wtime()
        call(comm, name, send, recv)
        return world.allreduce(MPI.Wtime() - start, op=MPI.MAX)

    for comm in [*comms.values(), raw, wide, *by_segment.values()]:   # split once, warm up
        for name in COLLECTIVES:
            timed(comm, name, 64 * KIB)
    chosen = [c for c in COLLECTIVES if c in args.collectives]
    cases = [(name, nbytes, variant, comm) for nbytes in args.sizes for name in chosen
             for variant, comm in comms.items()]
    cases += [(name, nbytes, "true, no fallback", raw) for nbytes in args.sizes
              if nbytes <= 1 << 20 for name in chosen]
    cases += [(name, 16 << 20, f"true, segment {s // KIB} KiB", comm)
              for s, comm in by_segment.items() for name in ("Bcast", "Allreduce")
              if name in chosen]
    cases += [(name, 16 << 20, "true, window 4", wide) for name in ("Bcast", "Allreduce")
              if name in chosen]
    groups: dict[tuple[str, int], list] = {}
    for case in cases:
        groups.setdefault(case[:2], []).append(case)
    small = 3 * args.repeats   # below 1 MiB a run takes milliseconds and its time is noisy

    for repeat in range(small):
        for key, group in groups.items():
            if repeat >= (args.repeats if key[1] >= 1 << 20 else small):
                continue
            shift = repeat % len(group)
            for name, nbytes, variant, comm in group[shift:] + group[:shift]:
                t = timed(comm, name, nbytes)
                rows.append({"collective": name, "bytes": nbytes, "variant": variant,
                             "repeat": repeat, "seconds": t})
        if rank == 0:
            print(f"  repeat {repeat + 1}/{small} done", file=sys.stderr, flush=True)
    if rank == 0:
        layout = {v: c.layout.names for v, c in comms.items() if v != "mpi"}
        Path(args.out).write_text(json.dumps({"rows": rows, "ranks": size, "layout": layout,
                                              "library": MPI.Get_library_version().splitlines()[0]},
                                             indent=1))
    return 0


def overhead(args: argparse.Namespace) -> int:
    """Below the threshold a call is the plain collective: what the wrapper adds, per call."""
    import socket

    import numpy as np
    from mpi4py import MPI

    from tomography.collectives import HierarchicalComm
    from tomography.model.hierarchy import Hierarchy

    world = MPI.COMM_WORLD
    size = world.Get_size()
    node = socket.gethostname()
    hosts = [f"{node}-{i}" for i in range(1, size + 1)]
    comm = HierarchicalComm(world, Hierarchy.from_partitions(
        hosts, [[i // 2 for i in range(size)], [i // 4 for i in range(size)]]))
    calls, rounds = 200, 15
    send, recv = np.ones(128), np.empty(128)                     # 1 KiB
    rows = []
    for name in COLLECTIVES:
        out = np.empty(128 * size) if name == "Allgather" else recv
        for r in range(rounds):
            for variant, c in (("mpi", world), ("hierarchical", comm))[::1 if r % 2 else -1]:
                world.Barrier()
                start = MPI.Wtime()
                for _ in range(calls):
                    call(c, name, send, out)
                t = world.allreduce((MPI.Wtime() - start) / calls, op=MPI.MAX)
                rows.append((name, variant, t))
    if world.Get_rank() == 0:
        print(f"\nFallback overhead: {size} ranks on this machine (loopback, shared memory), "
              f"1 KiB, {rounds} rounds of {calls} calls alternating; microseconds per call, "
              "median (range)\n")
        print("| collective | MPI | hierarchical (falls back) | hierarchical / MPI |")
        print("|---|---|---|---|")
        for name in COLLECTIVES:
            t = {v: [x * 1e6 for n, w, x in rows if n == name and w == v]
                 for v in ("mpi", "hierarchical")}
            a, b = statistics.median(t["mpi"]), statistics.median(t["hierarchical"])
            print(f"| {name} | {a:.1f} ({min(t['mpi']):.1f}-{max(t['mpi']):.1f}) | {b:.1f} "
                  f"({min(t['hierarchical']):.1f}-{max(t['hierarchical']):.1f}) | {b / a:.2f} |")
    return 0


# -- the driver ------------------------------------------------------------------------------

def truth_hierarchy(table):
    """The hierarchy the topology's labels give (``west/w1``: level 1 ``west/w1``, level 2 ``west``)."""
    from tomography.model.hierarchy import Hierarchy
    from tomography.model.truth_labels import labels_at_depth, truth_depth

    paths = dict(zip(table["host"], table["label"]))
    hosts = sorted(paths)
    depth = truth_depth(paths)
    return Hierarchy.from_partitions(hosts, [labels_at_depth(paths, d, hosts)
                                             for d in range(depth, 0, -1)])


def rank_order(hosts: dict[str, str], truth, order: str) -> list[tuple[str, str]]:
    """(host, namespace) in rank order: by name, or dealt over the top-level clusters."""
    ranked = sorted(hosts.items())
    if order == "sorted":
        return ranked
    top = dict(zip(truth.hosts, truth.labels(truth.depth)))
    sites: dict[int, list] = {}
    for item in ranked:
        sites.setdefault(top[item[0]], []).append(item)
    columns = list(sites.values())
    return [c[i] for i in range(max(map(len, columns))) for c in columns if i < len(c)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--network", choices=sorted(NETWORKS), default="two-sites-demo",
                        help="the emulated network (default two-sites-demo)")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)),
                        type=lambda s: [int(x) for x in s.split(",")],
                        help="message sizes in bytes, comma-separated (default 1 KiB to 64 MiB)")
    parser.add_argument("--repeats", type=int, default=3,
                        help="runs per case from 1 MiB on, three times as many below (default 3)")
    parser.add_argument("--collectives", default=",".join(COLLECTIVES),
                        type=lambda s: s.split(","), help="which of them (default all)")
    parser.add_argument("--order", choices=("sorted", "interleaved"), default="sorted",
                        help="rank order: hosts by name (the sites contiguous, MPI's best "
                             "case) or dealt round-robin over the top-level clusters")
    parser.add_argument("--overhead", action="store_true",
                        help="instead: what the fallback adds to a 1 KiB call, on this machine "
                             "(no root needed; 2 ranks, one per core, under the set-up's mpiexec)")
    parser.add_argument("--program", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--truth", help=argparse.SUPPRESS)
    parser.add_argument("--measured", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.program:
        return overhead(args) if args.overhead else program(args)
    if args.overhead:
        return subprocess.run([str(Path(sys.executable).parent / "mpiexec"), "-n", "2",
                               sys.executable, str(HERE), "--program", "--overhead"]).returncode

    from bench_support import command_line, machine_line, require_root
    from tomography.model.interrupts import stop_as_interrupt

    from measure import testbed
    from tomography.model.topology import read_topology

    require_root()
    stop_as_interrupt()
    topology_name, per_cluster, scale = NETWORKS[args.network]
    data = HERE.parent / "_data" / (f"collectives-{args.network}-{args.order}"
                                    + ("" if args.collectives == list(COLLECTIVES)
                                       else "-" + "-".join(args.collectives)))
    data.mkdir(parents=True, exist_ok=True)
    name = "coll"
    bed = testbed.up(read_topology(topology_name), name=name, bandwidth=scale,
                     hosts_per_cluster=per_cluster)
    python = sys.executable
    tomography = str(Path(python).parent / "tomography")
    mpiexec = str(Path(python).parent / "mpiexec")
    env = [f"{k}={v}" for k, v in MPICH_ENV.items()]
    table = bed.host_table()
    try:
        truth = truth_hierarchy(table)
        (data / "truth.json").write_text(truth.to_json())
        (data / "truth.addresses.json").write_text(json.dumps(dict(zip(table["host"],
                                                                       table["address"]))))
        # 1. the measurement, by the same kind of MPI job
        run = data / "bittorrent"
        if run.exists():
            import shutil

            shutil.rmtree(run)
        argv = [mpiexec, "-n", "1", tomography, "measure", "bittorrent", "--mpi", "--network",
                "10.201.0.0/16", "-n", "4", "--size", "8MiB", "--seed", "1", "-o", str(run)]
        for ns in bed.hosts.values():
            argv += [":", "-n", "1", "ip", "netns", "exec", ns, tomography, "measure",
                     "bittorrent", "--mpi", "--network", "10.201.0.0/16"]
        started = time.monotonic()
        subprocess.run(argv, check=True, timeout=1800)
        measure_s = time.monotonic() - started
        # 2. the collectives, one rank per host, told nothing: rank 0 analyses the dataset and
        #    each rank finds its host by its address
        out = data / "times.json"
        argv = [mpiexec]
        for i, (host, ns) in enumerate(rank_order(bed.hosts, truth, args.order)):
            argv += ([":"] if i else []) + [
                "-n", "1", "ip", "netns", "exec", ns, "env", *env, python, str(HERE),
                "--program", "--truth", str(data / "truth.json"), "--measured", str(run),
                "--sizes", ",".join(map(str, args.sizes)), "--repeats", str(args.repeats),
                "--collectives", ",".join(args.collectives),
                "--out", str(out)]
        started = time.monotonic()
        subprocess.run(argv, check=True, timeout=7200)
        collectives_s = time.monotonic() - started
    finally:
        testbed.down(name)
    result = json.loads(out.read_text())
    result.update(repeats=args.repeats, measure_s=measure_s, collectives_s=collectives_s,
                  network=args.network, order=args.order, scale=scale, hosts_per_cluster=per_cluster)
    out.write_text(json.dumps(result, indent=1))
    report(result, command_line(), machine_line())
    return 0


def report(result: dict, command: str, machine: str) -> None:
    """Markdown tables: median (range) per collective and size, ratios to MPI's own."""
    rows = result["rows"]
    times: dict[tuple, list[float]] = {}
    for r in rows:
        times.setdefault((r["collective"], r["bytes"], r["variant"]), []).append(r["seconds"])

    def med(key):
        return statistics.median(times[key]) if key in times else None

    def size_text(b):
        return f"{b // (1 << 20)} MiB" if b >= 1 << 20 else f"{b // KIB} KiB"

    print(f"\n`{command}`; {machine}; {result['library']}; {result['ranks']} ranks, network "
          f"{result['network']} ({result['hosts_per_cluster']} hosts per cluster, bandwidth x"
          f"{result['scale']}), ranks {result['order']}; levels: {result['layout']}\n")
    sizes = sorted({r["bytes"] for r in rows if r["variant"] == "mpi"})
    for name in [c for c in COLLECTIVES if any(r["collective"] == c for r in rows)]:
        print(f"\n**{name}** (seconds, median and range of {result['repeats']} runs, "
              f"{3 * result['repeats']} below 1 MiB; ratio = MPI's time / hierarchical time)\n")
        print("| size | MPI | hierarchical (true) | ratio | hierarchical (measured) | ratio "
              "| no fallback (true) |")
        print("|---|---|---|---|---|---|---|")
        for b in sizes:
            cells = []
            base = med((name, b, "mpi"))
            for variant in ("mpi", "true", "measured"):
                key = (name, b, variant)
                if key not in times:
                    cells.append("")
                    continue
                t = times[key]
                cells.append(f"{med(key):.4f} ({min(t):.4f}-{max(t):.4f})")
                if variant != "mpi":
                    cells.append(f"{base / med(key):.2f}")
            raw = med((name, b, "true, no fallback"))
            cells.append("" if raw is None else f"{raw:.4f} (x{base / raw:.2f})")
            print(f"| {size_text(b)} | " + " | ".join(cells) + " |")
    seg = sorted({r["variant"] for r in rows if "segment" in r["variant"]},
                 key=lambda v: int(v.split()[-2])) + ["true, window 4"]
    if seg:
        print("\n**Segment size and window** (16 MiB, true hierarchy, no fallback, window 2 "
              "unless said, seconds)\n")
        print("| segment | Bcast | Allreduce |\n|---|---|---|")
        for v in seg:
            cells = [med((name, 16 << 20, v)) for name in ("Bcast", "Allreduce")]
            print(f"| {v.split(', ')[1]} | "
                  + " | ".join("" if c is None else f"{c:.3f}" for c in cells) + " |")
    big = med(("Bcast", 64 << 20, "mpi")), med(("Bcast", 64 << 20, "measured"))
    if None not in big:
        saved = big[0] - big[1]
        print(f"\nMeasurement (BitTorrent, 4 iterations of 8 MiB, MPI launcher): "
              f"{result['measure_s']:.0f} s; "
              + (f"a 64 MiB broadcast saves {saved:.1f} s over MPI_Bcast, so "
                 f"{result['measure_s'] / saved:.0f} such broadcasts repay it" if saved > 0
                 else "a 64 MiB broadcast over the measured hierarchy saves nothing"))


if __name__ == "__main__":
    sys.exit(main())
