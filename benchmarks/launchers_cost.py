"""The launchers' cost: one 16-peer broadcast under local, MPI and SSH; the preflight's time.

Two measurements, each side by side in one run:

1. **Transport overhead.** The same swarm (16 peers on loopback addresses,
   the same seed, file size and upload cap) measured with the local
   launcher, under ``mpiexec`` (rank 0 + 16 agent ranks relaying over MPI)
   and over SSH (a throwaway sshd on loopback, one ssh session per peer).
   For each: the time to the first iteration (start-up and preflight), the
   wall time per iteration (add, broadcast, report, written) and the
   broadcast time the peers measure (``duration_s``), as ratios to local.
2. **Preflight against hosts.** ``--check`` over SSH with 4 to 48 simulated
   hosts (every host is the same loopback sshd, each peer on its own
   address), beside ``--check`` of the local launcher.

Everything runs on this one machine, so the relays (agent ranks, ssh and
sshd) compete with the peers for the same cores: on a cluster they sit on
other nodes.  Run::

    .venv/bin/python benchmarks/launchers_cost.py            # ~6 min on 2 cores
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench_support import machine_line
from measure.ssh import loopback_sshd

BIN = Path(sys.executable).parent
TOMOGRAPHY = str(BIN / "tomography")


def _hosts_csv(path: Path, n: int, first: int, target: str | None = None) -> Path:
    with path.open("w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["host", "address", "label"] if target is None else
                     ["host", "ssh", "address", "label"])
        for i in range(n):
            row = [f"h{i:02d}", f"127.0.0.{first + i}", ""]
            out.writerow(row if target is None else [row[0], target, row[1], ""])
    return path


def timed_run(argv: list[str], out: Path, iterations: int) -> dict[str, float]:
    """Run a measurement; when it wrote meta.json (preflight done) and each iteration."""
    start = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    ready, seen = None, []
    while proc.poll() is None:
        if ready is None and (out / "meta.json").exists():
            ready = time.monotonic() - start
        listed = out / "iterations.csv"
        lines = len(listed.read_text().splitlines()) - 1 if listed.exists() else 0
        while len(seen) < lines:
            seen.append(time.monotonic() - start)
        time.sleep(0.02)
    if proc.returncode != 0:
        raise RuntimeError(f"{argv[:6]} failed: {proc.stderr.read()[-800:]}")
    total = time.monotonic() - start
    with (out / "iterations.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    if len(rows) != iterations or not all(r["complete"] == "true" for r in rows):
        raise RuntimeError(f"{argv[:6]}: incomplete run {rows}")
    walls = np.diff([ready, *seen[:iterations]]) if ready is not None else np.array([np.nan])
    return {"startup_s": ready or float("nan"), "iteration_wall_s": float(np.mean(walls)),
            "broadcast_s": float(np.mean([float(r["duration_s"]) for r in rows])),
            "total_s": total}


def overhead(peers: int, size: str, limit: str, iterations: int, sshd: dict) -> dict:
    common = ["-n", str(iterations), "--size", size, "--upload-limit", limit, "--seed", "7"]
    ssh = ["--remote-python", sys.executable, "--ssh-identity", sshd["identity"],
           "--ssh-connections", "16", *[x for o in sshd["options"] for x in ("--ssh-option", o)]]
    target = f"ssh://{sshd['user']}@127.0.0.1:{sshd['port']}"
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        runs = {
            "local": [TOMOGRAPHY, "measure", "bittorrent", "--hosts",
                      str(_hosts_csv(tmp / "local.csv", peers, 2)), *common],
            "mpi": [str(BIN / "mpiexec"), "-n", str(peers + 1), TOMOGRAPHY, "measure",
                    "bittorrent", "--mpi", "--network", "127.0.0.0/8", *common],
            "ssh": [TOMOGRAPHY, "measure", "bittorrent", "--ssh",
                    str(_hosts_csv(tmp / "ssh.csv", peers, 2, target)), *ssh, *common],
        }
        for name, argv in runs.items():
            out = tmp / name
            results[name] = timed_run([*argv, "-o", str(out)], out, iterations)
            print(f"  {name:5s} " + "  ".join(f"{k} {v:.2f}" for k, v in results[name].items()),
                  flush=True)
    return results


def preflight_times(counts: list[int], sshd: dict) -> dict[int, dict[str, float]]:
    target = f"ssh://{sshd['user']}@127.0.0.1:{sshd['port']}"
    ssh = ["--remote-python", sys.executable, "--ssh-identity", sshd["identity"],
           *[x for o in sshd["options"] for x in ("--ssh-option", o)]]
    out: dict[int, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in counts:
            row = {}
            for name, argv in (
                    ("local", [TOMOGRAPHY, "measure", "bittorrent", "--hosts",
                               str(_hosts_csv(Path(tmp) / "l.csv", n, 130))]),
                    ("ssh", [TOMOGRAPHY, "measure", "bittorrent", "--ssh",
                             str(_hosts_csv(Path(tmp) / "s.csv", n, 130, target)), *ssh])):
                start = time.monotonic()
                done = subprocess.run([*argv, "--check"], capture_output=True, text=True)
                if done.returncode != 0:
                    raise RuntimeError(f"--check of {n} {name} hosts failed: {done.stdout}"
                                       f"{done.stderr}")
                row[name] = time.monotonic() - start
            out[n] = row
            print(f"  {n:3d} hosts: local {row['local']:.2f} s, ssh {row['ssh']:.2f} s",
                  flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--peers", type=int, default=16)
    parser.add_argument("--size", default="8MiB")
    parser.add_argument("--upload-limit", default="4MiB/s")
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=2, help="runs of each launcher")
    parser.add_argument("--hosts", type=int, nargs="*", default=[4, 8, 16, 32, 48])
    args = parser.parse_args()
    print(machine_line(("libtorrent", "mpi4py", "mpich")))
    with tempfile.TemporaryDirectory() as tmp, loopback_sshd(Path(tmp) / "sshd") as sshd:
        print(f"\n1. {args.peers} peers, {args.size} per broadcast, upload cap "
              f"{args.upload_limit}, {args.iterations} iterations, {args.repeats} repeats")
        runs = [overhead(args.peers, args.size, args.upload_limit, args.iterations, sshd)
                for _ in range(args.repeats)]
        print("\n| launcher | start-up + preflight (s) | wall per iteration (s) | "
              "broadcast (s) | wall per iteration / local |")
        print("|---|---|---|---|---|")
        mean = {k: {m: float(np.mean([r[k][m] for r in runs])) for m in runs[0][k]}
                for k in runs[0]}
        for name, row in mean.items():
            print(f"| {name} | {row['startup_s']:.2f} | {row['iteration_wall_s']:.2f} | "
                  f"{row['broadcast_s']:.2f} | "
                  f"{row['iteration_wall_s'] / mean['local']['iteration_wall_s']:.2f} |")
        print("\n2. --check (preflight alone) against hosts")
        times = preflight_times(args.hosts, sshd)
        print("\n| hosts | local (s) | ssh (s) | ssh / local |")
        print("|---|---|---|---|")
        for n, row in times.items():
            print(f"| {n} | {row['local']:.2f} | {row['ssh']:.2f} | "
                  f"{row['ssh'] / row['local']:.2f} |")


if __name__ == "__main__":
    main()
