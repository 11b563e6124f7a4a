"""Real MPI runs (the mpich wheel's mpiexec): rank 0 coordinates, ranks 1..N run peers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import ks_2samp

from measure.coordinator import local_hosts, run_broadcasts
from measure.mpi import rank_table
from tomography.model.dataset import BLOCK_SIZE, read_measurement

from .conftest import mpiexec, peer_pids, wait_for_iterations

pytestmark = pytest.mark.slow

MiB = 2**20
TOMOGRAPHY = str(Path(sys.executable).parent / "tomography")
LOOPBACK6 = {f"127.0.0.{i}" for i in range(2, 8)}


@pytest.fixture(autouse=True)
def no_mpich_leftovers():
    """MPICH leaves its shared-memory segments behind when a job is killed: remove ours."""
    shm = Path("/dev/shm")
    before = set(shm.glob("mpich_shm_*")) if shm.is_dir() else set()
    yield
    for leftover in (set(shm.glob("mpich_shm_*")) if shm.is_dir() else set()) - before:
        leftover.unlink(missing_ok=True)


def _mpi(n: int, *args: str, timeout: float = 180, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([mpiexec(), "-n", str(n), TOMOGRAPHY, "measure", "bittorrent",
                           "--mpi", *args], capture_output=True, text=True, timeout=timeout,
                          **kw)


def _downloaded(address: str, pid: int) -> int:
    """Bytes a peer agent holds in its work directory (0 before its broadcast starts)."""
    held = 0
    for directory in Path("/dev/shm").glob(f"tomography-peer-{address}-{pid}-*"):
        for f in directory.rglob("*"):
            try:
                held += f.stat().st_blocks * 512 if f.is_file() else 0
            except OSError:
                pass  # removed between the listing and the look
    return held


def _blocks_per_pair(m) -> np.ndarray:
    t = m.transfers
    return t.groupby(["iteration", "receiver", "sender"])["blocks"].sum().to_numpy()


def test_six_peers_under_mpiexec_conserve_the_data_like_local_ones(tmp_path: Path) -> None:
    size = 4 * MiB
    run = _mpi(7, "--network", "127.0.0.0/8", "-n", "3", "--size", "4MiB", "--block-quota",
               "off", "--upload-limit", "4MiB/s", "--seed", "3", "-o", str(tmp_path / "mpi"))
    assert run.returncode == 0, run.stderr
    assert "6 peers share node" in run.stderr  # one machine: the warning is given
    m = read_measurement(tmp_path / "mpi")
    assert m.n_hosts == 6 and m.iteration_ids == [0, 1, 2]
    assert m.iterations["complete"].all()
    assert m.meta["launcher"] == "mpi" and sorted(m.meta["mpi"]["ranks"].values()) == \
        [1, 2, 3, 4, 5, 6]
    assert set(m.hosts["address"]) == LOOPBACK6  # each peer on its own loopback address
    for host, record in m.meta["hosts"].items():
        assert record["toolkit"] and record["libtorrent"] and record["cpus"] >= 1
        assert abs(record["clock_offset_s"]) <= record["clock_rtt_s"] / 2 + 0.005  # one clock
    blocks = -(-size // BLOCK_SIZE)
    for it in m.iteration_ids:
        t = m.transfers[m.transfers["iteration"] == it]
        root = m.iterations.loc[m.iterations["iteration"] == it, "root"].item()
        got = t.groupby("receiver")["blocks"].sum()
        # every receiver but the root got the whole file, from the others' counts
        assert set(got.index) == set(m.host_names) - {root}
        assert (got >= blocks).all()
        assert not (t["sender"] == t["receiver"]).any()
    # the same swarm with the local launcher: the same metric within its noise
    run_broadcasts(local_hosts(6), tmp_path / "local", iterations=3, file_size=size, seed=3,
                   upload_limit=4 * MiB)
    local = read_measurement(tmp_path / "local")
    a, b = _blocks_per_pair(m), _blocks_per_pair(local)
    assert ks_2samp(a, b).pvalue > 0.001
    assert abs(a.sum() - b.sum()) / b.sum() < 0.2  # the same bytes moved, give or take end-game
    assert not peer_pids(LOOPBACK6)


def test_a_killed_peer_gives_an_incomplete_iteration_and_a_finished_run(tmp_path: Path) -> None:
    out = tmp_path / "run"
    # 16 MiB at 2 MiB/s a peer: at least 6 s a broadcast. The kill waits for a peer that
    # holds part of the file (not the root, not before the swarm started: a peer process
    # appears seconds before its broadcast on a loaded machine, and one killed then is
    # started again in time for a complete iteration)
    proc = subprocess.Popen([mpiexec(), "-n", "5", TOMOGRAPHY, "measure", "bittorrent", "--mpi",
                             "--network", "127.0.0.0/8", "-n", "2", "--size", "16MiB",
                             "--block-quota", "off", "--upload-limit", "2MiB/s",
                             "--time-limit", "30s", "-o", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    addresses = {f"127.0.0.{i}" for i in range(2, 6)}
    killed, pid = None, 0
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and killed is None:
        pids = peer_pids(addresses)
        for candidate, address in pids.items():
            if 0 < _downloaded(address, candidate) < 16 * MiB:
                pid, killed = candidate, address
                os.kill(pid, signal.SIGKILL)
                break
        time.sleep(0.05)
    assert killed is not None, "no peer was seen downloading within 60 s"
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    m = read_measurement(out)
    host = m.hosts.loc[m.hosts["address"] == killed, "host"].item()
    assert m.iterations["complete"].tolist() == [False, True]  # started again by its agent
    assert host in m.iterations["failed_peers"].iloc[0]
    assert "incomplete" in stdout
    assert not peer_pids(addresses)
    # the killed peer could not remove its directory; the one started after it did
    assert not list(Path("/dev/shm").glob(f"tomography-peer-{killed}-{pid}-*"))


def test_sigterm_keeps_finished_iterations_and_resume_continues(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["--network", "127.0.0.0/8", "-n", "4", "--size", "3MiB", "--block-quota", "off",
            "--upload-limit", "2MiB/s", "-o", str(out)]
    proc = subprocess.Popen([mpiexec(), "-n", "4", TOMOGRAPHY, "measure", "bittorrent", "--mpi",
                             *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for_iterations(out, 1, timeout=90)
    proc.send_signal(signal.SIGTERM)  # what a batch scheduler does at the end of a job
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode != 0
    assert "--resume" in stderr
    kept = read_measurement(out).iteration_ids
    assert 1 <= len(kept) < 4
    assert not peer_pids({"127.0.0.2", "127.0.0.3", "127.0.0.4"})
    again = _mpi(4, *args, "--resume")  # a new allocation of the same hosts
    assert again.returncode == 0, again.stderr
    m = read_measurement(out)
    assert m.iteration_ids == [0, 1, 2, 3]
    assert m.meta["resumes"][0]["kept"] == len(kept)
    assert m.meta["resumes"][0]["launcher"] == "mpi"


def test_mpiexec_killed_from_outside_leaves_no_peer(tmp_path: Path) -> None:
    proc = subprocess.Popen([mpiexec(), "-n", "4", TOMOGRAPHY, "measure", "bittorrent", "--mpi",
                             "--network", "127.0.0.0/8", "-n", "3", "--size", "8MiB",
                             "--upload-limit", "1MiB/s", "-o", str(tmp_path / "run")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    addresses = {"127.0.0.2", "127.0.0.3", "127.0.0.4"}
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(peer_pids(addresses)) < 3:
        time.sleep(0.1)
    assert len(peer_pids(addresses)) == 3
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and peer_pids(addresses):
        time.sleep(0.2)
    assert not peer_pids(addresses)
    left = subprocess.run(["ps", "-eo", "args="], capture_output=True, text=True).stdout
    assert str(tmp_path / "run") not in left  # no rank either


def test_check_prints_the_table_and_too_few_ranks_is_refused(tmp_path: Path) -> None:
    run = _mpi(3, "--network", "lo", "--check", timeout=60)
    assert run.returncode == 0, run.stderr
    assert "2 of 2 hosts ready" in run.stdout and "clock offset" in run.stdout
    few = _mpi(2, "-o", str(tmp_path / "x"), timeout=60)
    assert few.returncode == 2
    assert "at least 3 ranks" in few.stderr
    missing = _mpi(3, "--network", "203.0.113.0/24", "-o", str(tmp_path / "y"), timeout=60)
    assert missing.returncode == 2
    lines = [line for line in missing.stderr.splitlines() if line.startswith("tomography: error")]
    assert len(lines) == 2 and all("no address in 203.0.113.0/24" in line for line in lines)
    assert not (tmp_path / "y").exists()


def test_rank_table_names_shared_nodes_and_keeps_namespaces_apart() -> None:
    reports = [{"rank": 1, "hostname": "vm", "address": "10.201.2.2", "netns": 11},
               {"rank": 2, "hostname": "vm", "address": "10.201.2.3", "netns": 12}]
    table, warnings = rank_table(reports)
    assert table["host"].tolist() == ["vm-1", "vm-2"]
    assert table["address"].tolist() == ["10.201.2.2", "10.201.2.3"]
    assert warnings == []  # two network stacks: not the memory of one node
    same = [{**r, "netns": 11, "address": "10.0.0.1"} for r in reports]
    table, warnings = rank_table(same)
    assert table["address"].tolist() == ["10.0.0.1", "10.0.0.1"] and len(warnings) == 1
    assert json.dumps(table.to_dict())  # plain values, recorded as they are
