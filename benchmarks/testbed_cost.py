"""What a testbed costs this machine: the constants of ``measure/testbed/resources.py``.

``testbed up`` refuses a testbed the machine cannot carry, from an estimate::

    cores  = peers x PEER_CPU + Gbit/s received x CPU_PER_GBIT
    memory = namespaces x NAMESPACE_MEMORY + peers x PEER_MEMORY

This script measures the four constants here:

* memory per namespace: ``N1`` raised whole (527 namespaces with their veth
  ends and qdiscs), the change of MemAvailable and of the kernel's
  unreclaimable slab;
* per peer and per Gbit: real BitTorrent broadcasts in ``two-sites-demo`` at
  its capacities and at 100 times them, with 20 and 8 peers.  The CPU time of
  this process and of every peer (``RUSAGE_CHILDREN``: the peers are its
  children), plus the softirq time of /proc/stat and of the ksoftirqd threads
  (packets forwarded outside any process), is fitted by least squares as
  peers x seconds x PEER_CPU + Gbit received x CPU_PER_GBIT.  The peers'
  proportional set size is sampled every second (their copy of the file, in
  /dev/shm, is counted apart).

Other processes may share the machine: the CPU is counted per process, so
they change the result little; MemAvailable moves with them, the slab less.
Needs root.  Run::

    sudo .venv/bin/python benchmarks/testbed_cost.py        # ~4 min on 2 cores
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from bench_support import machine_line, meminfo, require_root
from measure import testbed
from measure.coordinator import run_broadcasts
from measure.testbed import resources
from tomography.model.topology import read_topology
from tomography.model.units import parse_size

MiB = 2**20


def settled() -> dict[str, int]:
    subprocess.run(["sync"], check=True)
    time.sleep(2)
    return meminfo()


def namespace_memory(topology: str, name: str) -> dict[str, float]:
    """MiB per namespace of a whole topology: MemAvailable and unreclaimable slab."""
    before = settled()
    bed = testbed.up(read_topology(topology), name=name, force=True)
    try:
        after = settled()
        count = len(testbed.status(name)["namespaces"])
    finally:
        testbed.down(name)
    assert count == len(bed.hosts) + len(bed.topology.routers)
    return {"namespaces": count,
            "MemAvailable": (before["MemAvailable"] - after["MemAvailable"]) / count / MiB,
            "SUnreclaim": (after["SUnreclaim"] - before["SUnreclaim"]) / count / MiB}


def softirq_ticks() -> int:
    """Softirq time of /proc/stat and of the ksoftirqd threads, in clock ticks."""
    with open("/proc/stat", encoding="ascii") as stat:
        total = int(stat.readline().split()[7])
    for comm in Path("/proc").glob("[0-9]*/comm"):
        try:
            if comm.read_text().startswith("ksoftirqd"):
                fields = (comm.parent / "stat").read_text().rsplit(")", 1)[1].split()
                total += int(fields[11]) + int(fields[12])
        except OSError:
            pass
    return total


def peer_memory(samples: list[list[dict[str, int]]], stop: threading.Event) -> None:
    """Sample the smaps_rollup of every peer process each second."""
    while not stop.wait(1.0):
        rows = []
        for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
            try:
                argv = cmdline.read_bytes().split(b"\0")
                if b"measure.agent" not in argv or b"netns" in argv:
                    continue
                roll = {}
                for line in (cmdline.parent / "smaps_rollup").read_text().splitlines()[1:]:
                    key, value = line.split()[:2]
                    roll[key.rstrip(":")] = int(value) * 1024
                rows.append(roll)
            except (OSError, ValueError):
                pass
        samples.append(rows)


def broadcast_cost(per_cluster: int | None, scale: float, size: str, iterations: int,
                   name: str) -> dict[str, float]:
    """CPU, data and memory of real broadcasts in two-sites-demo, scaled."""
    bed = testbed.up(read_topology("two-sites-demo"), name=name, bandwidth=scale,
                     hosts_per_cluster=per_cluster, force=True)
    peers = len(bed.hosts)
    samples: list[list[dict[str, int]]] = []
    stop = threading.Event()
    sampler = threading.Thread(target=peer_memory, args=(samples, stop), daemon=True)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            s0, t0 = softirq_ticks(), time.monotonic()
            c0 = [resource.getrusage(w) for w in (resource.RUSAGE_SELF,
                                                  resource.RUSAGE_CHILDREN)]
            sampler.start()
            run = run_broadcasts(bed.host_table(), Path(tmp) / "d", iterations=iterations,
                                 file_size=int(parse_size(size)), launch=bed.command, seed=0,
                                 overwrite=True)
            wall = time.monotonic() - t0
            c1 = [resource.getrusage(w) for w in (resource.RUSAGE_SELF,
                                                  resource.RUSAGE_CHILDREN)]
            ticks = softirq_ticks() - s0
    finally:
        stop.set()
        testbed.down(name)
    cpu = sum(b.ru_utime + b.ru_stime - a.ru_utime - a.ru_stime for a, b in zip(c0, c1))
    cpu += ticks / os.sysconf("SC_CLK_TCK")
    gbit = sum(n for r in run.iterations for _, (_, n) in r.sent.items()) * 8 / 1e9
    full = [rows for rows in samples if len(rows) == peers]
    pss = max((sum(r.get("Pss", 0) - r.get("Pss_Shmem", 0) for r in rows) / peers / MiB
               for rows in full), default=float("nan"))
    return {"peers": peers, "scale": scale, "size": size, "wall": wall, "cpu": cpu,
            "gbit": gbit, "pss": pss}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--name", default="cost", help="testbed name (default cost)")
    args = parser.parse_args()
    require_root()
    print(machine_line(("libtorrent",)) + "\n")
    print("| topology | namespaces | MemAvailable MiB per namespace | unreclaimable slab MiB "
          "per namespace |")
    print("|---|---|---|---|")
    for topology in ("N1", "N1"):
        m = namespace_memory(topology, args.name)
        print(f"| {topology} | {m['namespaces']} | {m['MemAvailable']:.2f} | "
              f"{m['SUnreclaim']:.2f} |", flush=True)
    print("\n| peers | capacities | file | wall s | CPU s | Gbit received | Pss MiB per peer |")
    print("|---|---|---|---|---|---|---|")
    runs = []
    for per_cluster, scale, size in ((None, 1.0, "8MiB"), (None, 100.0, "128MiB"),
                                     (2, 1.0, "8MiB"), (2, 100.0, "128MiB")):
        r = broadcast_cost(per_cluster, scale, size, 2, args.name)
        runs.append(r)
        print(f"| {r['peers']} | x{r['scale']:g} | {r['size']} | {r['wall']:.1f} | "
              f"{r['cpu']:.1f} | {r['gbit']:.2f} | {r['pss']:.0f} |", flush=True)
    a = np.array([[r["peers"] * r["wall"], r["gbit"]] for r in runs])
    cpu = np.array([r["cpu"] for r in runs])
    (per_peer, per_gbit), *_ = np.linalg.lstsq(a, cpu, rcond=None)
    fitted = a @ [per_peer, per_gbit]
    print(f"\nfit: PEER_CPU = {per_peer:.3f} cores per peer, CPU_PER_GBIT = {per_gbit:.2f} "
          f"core-seconds per Gbit ({1 / per_gbit:.2f} Gbit/s per core); CPU fitted / measured: "
          + ", ".join(f"{f / c:.2f}" for f, c in zip(fitted, cpu)))
    print(f"in use (measure/testbed/resources.py): PEER_CPU = {resources.PEER_CPU}, "
          f"CPU_PER_GBIT = {resources.CPU_PER_GBIT}, NAMESPACE_MEMORY = "
          f"{resources.NAMESPACE_MEMORY / MiB:g} MiB, PEER_MEMORY = "
          f"{resources.PEER_MEMORY / MiB:g} MiB")


if __name__ == "__main__":
    main()
