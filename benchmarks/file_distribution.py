"""Distributing a real file to seven clusters: Robber, BitTorrent, and scp the way people do it
(den Burger 2009, ch. 5.1, scaled to what 2 cores carry).

Seven clusters behind uplinks of different speeds (the root's cluster of one
host at 50 Mbit/s; six of ``N`` hosts at 40, 30, 20, 20, 10 and 10 Mbit/s),
100 Mbit/s NICs, for each ``N`` of ``--sizes``.  A random file of ``--size``
goes from the root to every host:

* **robber**: ``tomography multicast``'s Robber over the clusters (the
  topology's labels) with ``--file``: every receiver ends with the file,
  verified, its mode set;
* **bittorrent**: the BitTorrent baseline (libtorrent) moving the same
  number of bytes (it sends its synthetic payload; the transfer is the same);
* **scp**: what an operator does without a tool: ``scp`` from the root to
  one host of each cluster, all at once, then from that host to the others
  of its cluster, all at once (a real sshd in every host's namespace; the
  time until the last copy ends).

``--repeats`` times each; prints, as Markdown for ``benchmarks/RESULTS.md``,
the median seconds until every host has the file.  The thesis (a 600 MB
file, real clusters): Robber 41 to 47 s, BitTorrent 56 to 77 s, the scp
way 82 to 90 s as the clusters grow.  Needs root; about 10 minutes.

Run::

    sudo .venv/bin/python benchmarks/file_distribution.py
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_support import command_line, machine_line, require_root  # noqa: E402
from tomography.model.interrupts import stop_as_interrupt  # noqa: E402

UPLINKS = (40, 30, 20, 20, 10, 10)   # Mbit/s of the six receiving clusters


def network(n: int) -> dict:
    """The root's cluster of one host and six clusters of ``n`` behind their uplinks."""
    names = ["c0"] + [f"c{i + 1}" for i in range(len(UPLINKS))]
    capacities = (50, *UPLINKS)
    return {"name": f"seven-clusters-{n}",
            "description": "seven clusters behind uplinks of 10 to 50 Mbit/s",
            "host_defaults": {"nic": "100Mbit/s", "latency": "50us"},
            "routers": ["core", *(f"r{c}" for c in names)],
            "links": [{"between": [f"r{c}", "core"], "capacity": f"{mbit}Mbit/s",
                       "latency": "2ms"} for c, mbit in zip(names, capacities)],
            "clusters": [{"name": c, "router": f"r{c}", "hosts": 1 if c == "c0" else n,
                          "label": c} for c in names]}


class Sshd:
    """A throwaway sshd in every host's namespace, listening on its address only."""

    def __init__(self, bed, hosts, directory: Path) -> None:
        self.dir = directory
        for key in ("hostkey", "userkey"):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f",
                            str(directory / key)], check=True)
        (directory / "authorized_keys").write_text((directory / "userkey.pub").read_text())
        os.chmod(directory / "authorized_keys", 0o600)
        os.makedirs("/run/sshd", exist_ok=True)
        self.bed, self.procs = bed, []
        for host, address in zip(hosts["host"], hosts["address"]):
            config = directory / f"{host}.conf"
            config.write_text(
                f"Port 2222\nListenAddress {address}\nHostKey {directory}/hostkey\n"
                f"AuthorizedKeysFile {directory}/authorized_keys\nPasswordAuthentication no\n"
                "KbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\n"
                f"UsePAM no\nStrictModes no\nPidFile {directory}/{host}.pid\n"
                "MaxStartups 100\nSubsystem sftp /usr/lib/openssh/sftp-server\n")
            self.procs.append(subprocess.Popen(bed.command(host, ["/usr/sbin/sshd", "-D", "-e",
                                                                  "-f", str(config)]),
                                               stderr=open(directory / f"{host}.log", "w")))
        time.sleep(1.0)

    def scp(self, source_host: str, path: str, address: str, dest: str) -> list[str]:
        """The command that copies ``path`` from ``source_host`` to ``address:dest``."""
        return self.bed.command(source_host, [
            "scp", "-q", "-P", "2222", "-i", str(self.dir / "userkey"), "-o",
            "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o",
            "LogLevel=ERROR", path, f"root@{address}:{dest}"])

    def close(self) -> None:
        for proc in self.procs:
            proc.terminate()
            proc.wait(5)


def scp_way(sshd: Sshd, hosts, clusters: dict[str, list[str]], root: str, source: Path,
            dest: Path) -> float:
    """scp to one host per cluster, then inside each cluster, each stage all at once; seconds."""
    address = dict(zip(hosts["host"], hosts["address"]))
    for h in address:
        (dest / h).mkdir(parents=True, exist_ok=True)
    leaders = {c: members[0] for c, members in clusters.items() if root not in members}
    started = time.monotonic()
    stage = [subprocess.Popen(sshd.scp(root, str(source), address[h], str(dest / h)))
             for h in leaders.values()]
    if any(p.wait() != 0 for p in stage):
        raise SystemExit("scp to a cluster's first host failed")
    stage = [subprocess.Popen(sshd.scp(lead, str(dest / lead / source.name), address[h],
                                       str(dest / h)))
             for c, lead in leaders.items() for h in clusters[c][1:]]
    if any(p.wait() != 0 for p in stage):
        raise SystemExit("scp inside a cluster failed")
    seconds = time.monotonic() - started
    for h in address:
        if h != root and (dest / h / source.name).stat().st_size != source.stat().st_size:
            raise SystemExit(f"scp left {h} without the whole file")
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1,2,3", help="hosts per receiving cluster (1,2,3)")
    parser.add_argument("--size", default="16MiB", help="the file (16MiB)")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("/tmp/file-distribution"))
    args = parser.parse_args(argv)
    require_root()
    stop_as_interrupt()
    from measure import testbed
    from measure.fileset import Files, manifest
    from measure.multicast import run_multicasts
    from measure.transport import ProcessTransport
    from tomography.model.dataset.multicast import read_multicasts
    from tomography.model.topology import parse_topology
    from tomography.model.units import parse_size
    from tomography.planning.swarms import PIECE, swarm_plan

    started = time.time()
    size = parse_size(args.size)
    work = Path(tempfile.mkdtemp(prefix="file-distribution-"))
    source = work / "payload.bin"
    source.write_bytes(np.random.default_rng(5).bytes(size))
    files = Files(str(source), str(work / "dest" / "{host}"), manifest(source, PIECE))
    rows = []
    try:
        for n in [int(x) for x in args.sizes.split(",")]:
            topo = parse_topology(network(n))
            bed = testbed.up(topo, name="files")
            sshd = None
            try:
                hosts = bed.host_table()
                labels = {h.name: h.cluster for h in topo.hosts}
                clusters = {c.name: c.host_names for c in topo.clusters}
                root = clusters["c0"][0]
                transport = ProcessTransport(bed.command, name="testbed")
                out = args.out / f"n{n}"
                run_multicasts(hosts, [], out / "robber",
                               swarms=[swarm_plan(labels, root, size, method="robber", seed=0)],
                               files=files, repeats=args.repeats, time_limit=600,
                               overwrite=True, launch=transport)
                run_multicasts(hosts, [], out / "bittorrent", bittorrent=True, root=root,
                               size=size, repeats=args.repeats, time_limit=600, overwrite=True,
                               launch=ProcessTransport(bed.command, name="testbed"))
                times = {}
                for method in ("robber", "bittorrent"):
                    _, runs, _ = read_multicasts(out / method)
                    if not runs["complete"].all():
                        raise SystemExit(f"{method} did not complete: {runs['note'].tolist()}")
                    times[method] = float(runs["completion_s"].median())
                sshd = Sshd(bed, hosts, Path(tempfile.mkdtemp(prefix="sshd-", dir=work)))
                scp = []
                for r in range(args.repeats):
                    dest = work / f"scp-{n}-{r}"
                    scp.append(scp_way(sshd, hosts, clusters, root, source, dest))
                    shutil.rmtree(dest)
                times["scp"] = float(np.median(scp))
                rows.append((n, len(hosts), times))
                print(f"N={n}: {times}", file=sys.stderr, flush=True)
            finally:
                if sshd is not None:
                    sshd.close()
                testbed.down("files")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("### Distributing a real file to seven clusters: Robber, BitTorrent, scp\n")
    print(f"Command: `{command_line()}`  ")
    print(machine_line(["libtorrent"]) + f" {(time.time() - started) / 60:.0f} min.\n")
    print(f"A random file of {args.size} from the root's cluster (one host, 50 Mbit/s uplink) "
          f"to six clusters of N hosts behind uplinks of {', '.join(map(str, UPLINKS))} "
          f"Mbit/s, 100 Mbit/s NICs; seconds until every host has it, median of "
          f"{args.repeats}.\n")
    print("| N | hosts | robber | bittorrent | scp to one host per cluster, then inside |")
    print("|---|---|---|---|---|")
    for n, count, t in rows:
        print(f"| {n} | {count} | {t['robber']:.1f} | {t['bittorrent']:.1f} | {t['scp']:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
