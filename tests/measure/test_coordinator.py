"""Real libtorrent swarms on loopback addresses: counts, closure, failures, resume."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from measure.coordinator import local_hosts, run_broadcasts
from measure.peer import Peer, make_torrent, session_settings
from measure.swarm import SwarmParams
from tomography.model.dataset import read_measurement
from tomography.model.dataset.schema import BLOCK_SIZE
from tomography.model.errors import DatasetError

from tests.conftest import assert_trace_within_counts

from .conftest import peer_pids, wait_for_iterations

MiB = 2**20


@pytest.mark.slow  # real libtorrent peers
def test_counts_conserve_data(tmp_path: Path) -> None:
    size = 4 * MiB + 12345  # a short last piece and a short last block
    run = run_broadcasts(local_hosts(5, first=20), tmp_path / "bt", iterations=2,
                         file_size=size, seed=4, trace=True)
    m = read_measurement(tmp_path / "bt")
    assert m.meta["method"] == "bittorrent" and m.iteration_ids == [0, 1]
    assert m.meta["params"]["file_size"] == size and "settings" in m.meta["libtorrent"]
    for result in run.iterations:
        assert result.complete, result.notes
        assert set(result.finished) == set(m.host_names) - {result.root}
        for host in m.host_names:
            received = sum(b for (r, _), (_, b) in result.sent.items() if r == host)
            # each receiver's counts per sender add up to what libtorrent says it got, but for
            # what a connection carried after the last read before it closed (50 ms at most)
            assert 0.99 * result.payload[host] <= received <= result.payload[host]
            if host != result.root:
                # ... and a complete iteration gave every receiver the whole file
                assert result.payload[host] - result.redundant[host] == size
        blocks = m.transfers[m.transfers["iteration"] == result.iteration]
        assert blocks["blocks"].sum() == sum(b for b, _ in result.sent.values())
        assert not (blocks["sender"] == blocks["receiver"]).any()
    trace = pd.read_csv(tmp_path / "bt" / "trace.csv")
    assert list(trace.columns) == ["iteration", "time_s", "sender", "receiver", "piece", "block"]
    # a row per block written, no more than each pair's counts
    assert len(trace) <= 2 * 4 * -(-size // BLOCK_SIZE)
    assert_trace_within_counts(trace, m.transfers)
    assert not trace.duplicated(["iteration", "receiver", "piece", "block"]).any()
    # times on the coordinator's clock, from its go: none before it (a block a peer got before
    # its own go, or a clock offset read a little off, once made them negative), none after the
    # iteration ended
    ends = trace["iteration"].map({r.iteration: r.duration for r in run.iterations})
    assert (trace["time_s"] >= 0).all() and (trace["time_s"] <= ends + 0.1).all()


@pytest.mark.slow  # real libtorrent peers
def test_time_box_ends_iterations_complete_with_the_blocks_sent(tmp_path: Path) -> None:
    # a box of 4 s: the first iteration's peers connect inside it, which took over 2 s on a
    # loaded machine (a fresh clone's test run, the other lane beside it)
    hosts = local_hosts(4, first=210)
    run = run_broadcasts(hosts, tmp_path / "bt", iterations=2, file_size=16 * MiB, seed=2,
                         upload_limit=MiB, params=SwarmParams(time_box=4.0))
    m = read_measurement(tmp_path / "bt")
    assert m.meta["params"]["time_box"] == 4.0
    whole = 3 * 16 * MiB / (16 * 1024)     # blocks of a whole broadcast to 3 downloaders
    for result in run.iterations:
        assert result.complete and not result.notes
        assert 4.0 <= result.duration < 5.0 and len(result.finished) < 3
        assert 0 < sum(b for b, _ in result.sent.values()) < whole / 2
    assert m.iterations["complete"].all() and m.transfers["blocks"].sum() > 0


@pytest.mark.slow  # real libtorrent peers
def test_block_quota_ends_iterations_once_every_downloader_holds_it(tmp_path: Path) -> None:
    run = run_broadcasts(local_hosts(4, first=220), tmp_path / "bt", iterations=2,
                         file_size=16 * MiB, seed=3, upload_limit=2 * MiB,
                         params=SwarmParams(block_quota=64))
    m = read_measurement(tmp_path / "bt")
    assert m.meta["params"]["block_quota"] == 64 and m.iterations["complete"].all()
    received = m.transfers.groupby(["iteration", "receiver"])["blocks"].sum()
    for result in run.iterations:
        assert result.complete and not result.notes and len(result.finished) < 3
        got = received[result.iteration]
        assert sorted(got.index) == sorted(set(m.host_names) - {result.root})
        assert got.min() >= 64 and got.sum() < 3 * 16 * MiB / (16 * 1024) / 2


@pytest.mark.slow  # real libtorrent peers
def test_a_time_box_too_short_for_a_block_is_incomplete(tmp_path: Path) -> None:
    run = run_broadcasts(local_hosts(3, first=216), tmp_path / "bt", iterations=1,
                         file_size=4 * MiB, seed=0, params=SwarmParams(time_box=1e-3))
    (result,) = run.iterations
    assert not result.complete
    assert result.notes == ["the time box passed before a block was sent: lengthen --time-box"]
    assert not read_measurement(tmp_path / "bt").iterations["complete"].any()


@pytest.mark.slow  # real libtorrent peers
def test_a_peer_that_reports_first_cuts_no_one_else_s_count(tmp_path: Path) -> None:
    # the seed reports while the downloader still receives from it: the downloader, reporting
    # after, still has the connection and counts every byte it got
    addresses = ["127.0.0.226", "127.0.0.227"]
    seed, leecher = (Peer(a, 0, SwarmParams(), MiB, workdir=tmp_path / a, index=i)
                     for i, a in enumerate(addresses))
    (tmp_path / addresses[0]).mkdir(), (tmp_path / addresses[1]).mkdir()
    try:
        torrent = make_torrent(8 * MiB, 256 * 1024, "cut")
        seed.add(0, torrent, seed=True, allow=addresses)
        leecher.add(0, torrent, seed=False, allow=addresses)
        seed.go([]), leecher.go([(addresses[0], seed.port)])
        deadline = time.monotonic() + 20
        while leecher.handle.status().total_payload_download < MiB and time.monotonic() < deadline:
            seed.poll(10), leecher.poll(10)
        first = seed.stop()
        assert first["from"] == {} and seed.handle is not None      # stopped, not gone
        time.sleep(0.3)                                               # the seed still uploads
        report = leecher.stop()
        got = report["from"]["0"][1]
        assert got == report["payload_download"] >= MiB
        assert report["from"]["0"][0] == round(got / BLOCK_SIZE)
        seed.drop(), leecher.drop()
        assert seed.handle is None and not any((tmp_path / addresses[0]).iterdir())
    finally:
        seed.close(), leecher.close()


@pytest.mark.slow  # real libtorrent peers
def test_swarm_is_closed(tmp_path: Path) -> None:
    settings = session_settings("127.0.0.30", 0)
    assert not any(settings[k] for k in ("enable_dht", "enable_lsd", "enable_upnp",
                                         "enable_natpmp", "enable_incoming_utp",
                                         "enable_outgoing_utp", "webtorrent_stun_server",
                                         "dht_bootstrap_nodes"))
    if shutil.which("ss") is None:
        pytest.skip("ss (iproute2) is missing: the socket check cannot run")
    hosts = local_hosts(4, first=30)
    allowed = set(hosts["address"])
    seen: list[str] = []
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            pids = peer_pids(allowed)
            out = subprocess.run(["ss", "-Htanup"], capture_output=True, text=True).stdout
            seen.extend(line for line in out.splitlines()
                        if any(f"pid={pid}," in line for pid in pids))
            time.sleep(0.2)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        run_broadcasts(hosts, tmp_path / "bt", iterations=1, file_size=6 * MiB, seed=0,
                       upload_limit=2 * MiB)
    finally:
        done.set()
        watcher.join()
    assert seen, "no peer socket was seen during the broadcast"
    assert any(line.startswith("tcp") and "ESTAB" in line for line in seen)
    for line in seen:
        fields = line.split()
        local = fields[4].rsplit(":", 1)[0].split("%")[0]
        peer = fields[5].rsplit(":", 1)[0].split("%")[0]
        assert local in allowed, line
        if fields[0] == "udp":
            # libtorrent keeps one UDP socket on the listen address (uTP, UDP
            # trackers); with uTP, DHT and trackers off it is never connected
            assert fields[1] == "UNCONN" and peer == "0.0.0.0", line
        else:
            assert fields[0] == "tcp", line
            assert peer in allowed or fields[1] == "LISTEN", line


@pytest.mark.slow  # real libtorrent peers
@pytest.mark.parametrize("quota", [None, 256], ids=["whole", "quota"])
def test_killed_peer_gives_incomplete_iteration_and_run_goes_on(tmp_path: Path,
                                                                quota: int | None) -> None:
    hosts = local_hosts(4, first=40)
    params = SwarmParams(time_limit=60, block_quota=quota)
    run_root = None
    killed: list[str] = []

    def killer() -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not killed:
            pids = peer_pids(set(hosts["address"]))
            if len(pids) == 4:
                time.sleep(2.5)  # peers up, torrent added, broadcast under way
                for pid, address in pids.items():
                    host = hosts.loc[hosts["address"] == address, "host"].item()
                    if host != run_root:
                        os.kill(pid, signal.SIGKILL)
                        killed.append(host)
                        return
            time.sleep(0.1)

    from measure.swarm import root_order
    run_root = root_order(sorted(hosts["host"]), 0)[0]
    thread = threading.Thread(target=killer)
    thread.start()
    run = run_broadcasts(hosts, tmp_path / "bt", iterations=2, file_size=8 * MiB, seed=0,
                         params=params, upload_limit=2 * MiB)
    thread.join()
    assert killed
    first, second = run.iterations
    assert not first.complete and killed[0] in first.failed
    assert any(killed[0] in note for note in first.notes)
    # said as a death, not as a time limit that never passed (the run took seconds)
    assert not any("time limit" in note for note in first.notes), first.notes
    assert second.complete  # the dead peer was started again
    m = read_measurement(tmp_path / "bt")
    assert m.iterations["complete"].tolist() == [False, True]
    assert m.iterations["failed_peers"].tolist()[0] == killed[0]
    assert m.transfers[m.transfers["iteration"] == 0]["blocks"].sum() > 0  # counts kept
    assert "incomplete" in run.describe()


@pytest.mark.slow  # real libtorrent peers
def test_ctrl_c_keeps_iterations_and_resume_finishes(tmp_path: Path) -> None:
    out = tmp_path / "bt"
    hosts = tmp_path / "hosts.csv"
    local_hosts(3, first=50).to_csv(hosts, index=False)
    cmd = [sys.executable, "-m", "tomography", "measure", "bittorrent", "--hosts", str(hosts),
           "-o", str(out), "-n", "6", "--size", "3MiB", "--block-quota", "off",
           "--upload-limit", "3MiB/s"]
    # A shell without job control starts background commands with SIGINT ignored, and
    # Python then installs no KeyboardInterrupt handler: give the child Ctrl-C back.
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    wait_for_iterations(out, 1)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "--resume" in err
    kept = read_measurement(out).iteration_ids
    assert 1 <= len(kept) < 6
    assert not peer_pids({"127.0.0.50", "127.0.0.51", "127.0.0.52"})
    with pytest.raises(DatasetError, match="file_size"):
        run_broadcasts(local_hosts(3, first=50), out, iterations=6, file_size=MiB,
                       resume=True, upload_limit=3 * MiB)
    done = subprocess.run(cmd + ["--resume"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert read_measurement(out).iteration_ids == list(range(6))


def test_bad_hosts_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at least 2 hosts"):
        run_broadcasts(local_hosts(1), tmp_path / "a", iterations=1, file_size=MiB)
    same = [("a", "127.0.0.2", ""), ("b", "127.0.0.2", "")]
    with pytest.raises(ValueError, match="own address"):
        run_broadcasts(same, tmp_path / "b", iterations=1, file_size=MiB)
