"""Real iperf3 and NetPIPE meshes between local processes on loopback addresses."""

from __future__ import annotations

import csv
import io
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from measure.coordinator import local_hosts
from measure.mesh import MeshOptions, batches, read_pairs, run_mesh, tournament
from tomography.model.dataset import read_measurement
from tomography.model.errors import DatasetError, ParameterError

pytestmark = pytest.mark.slow

TOMOGRAPHY = str(Path(sys.executable).parent / "tomography")


def _tools() -> None:
    missing = [t for t in ("iperf3", "NPtcp") if shutil.which(t) is None]
    if missing:
        pytest.fail(f"{', '.join(missing)} missing: run scripts/setup.sh (it installs iperf3 "
                    "and netpipe-tcp)")


def _ok(m) -> pd.DataFrame:
    return m.probes[m.probes["error"].astype(str) == ""]


def test_exclusive_mesh_runs_one_test_at_a_time_and_measures_every_pair(tmp_path: Path) -> None:
    _tools()
    hosts = local_hosts(4, first=150)
    summary = run_mesh(hosts, tmp_path / "m", options=MeshOptions(duration=1))
    assert summary.done == 12 and not summary.failed
    m = read_measurement(tmp_path / "m")
    assert m.meta["method"] == "iperf3" and m.meta["launcher"] == "local"
    assert m.meta["params"]["schedule"] == "exclusive"
    ok = _ok(m)
    assert len(ok) == 12 and set(zip(ok["src"], ok["dst"])) == \
        {(a, b) for a in m.host_names for b in m.host_names if a != b}
    assert (ok["concurrent"].astype(int) == 1).all()
    assert (ok["bits_per_second"] > 1e8).all() and (ok["bytes"] > 0).all()
    assert ok["rtt_ms"].notna().all()
    # never two tests at once: each starts after the one before ended
    runs = ok.sort_values("start")
    ends = runs["start"].to_numpy() + runs["duration_s"].to_numpy()
    assert (runs["start"].to_numpy()[1:] >= ends[:-1] - 0.05).all()
    assert len(list((tmp_path / "m" / "raw").glob("*.json"))) == 12
    assert not subprocess.run(["pgrep", "-f", "iperf3 -s -B 127.0.0.15"],
                              capture_output=True).stdout  # servers gone


def test_rounds_run_disjoint_pairs_at_once() -> None:
    rounds = tournament([f"h{i}" for i in range(6)])
    assert len(rounds) == 5 and all(len(r) == 3 for r in rounds)
    for r in rounds:
        hosts = [h for pair in r for h in pair]
        assert len(set(hosts)) == len(hosts)  # disjoint
    assert sum(len(b) for b in batches([f"h{i}" for i in range(6)], "rounds")) == 30
    assert len(tournament(["a", "b", "c"])) == 3  # odd: one sits out each round


def test_rounds_mesh_records_how_many_ran_at_once(tmp_path: Path) -> None:
    _tools()
    summary = run_mesh(local_hosts(4, first=156), tmp_path / "m",
                       options=MeshOptions(duration=1, schedule="rounds", one_way=True))
    assert summary.done == 6 and not summary.failed
    ok = _ok(read_measurement(tmp_path / "m"))
    assert (ok["concurrent"].astype(int) == 2).all()
    starts = np.sort(ok["start"].to_numpy())
    gaps = np.diff(starts)
    assert (gaps < 0.3).sum() == 3 and (gaps > 0.9).sum() == 2  # 3 rounds of 2 tests at once


def test_a_killed_server_is_recorded_retried_and_the_mesh_finishes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import measure.mesh

    _tools()
    hosts = local_hosts(3, first=162)
    victim = "127.0.0.164"
    killed: list[str] = []
    failures: set[str] = set()
    probes = tmp_path / "m" / "probes.csv"
    replace_rows = measure.mesh.unique_probe_rows

    def replaced(path: Path, drop: set | None = None) -> set:
        """The real row replacement, noting the failed rows it replaces (no polling race)."""
        for row in csv.DictReader(io.StringIO(Path(path).read_text())):
            key = (row["src"], row["dst"], int(float(row.get("repeat") or 0)))
            if drop and key in drop and row["error"]:
                failures.add(f"{row['src']}->{row['dst']}: {row['error']}")
        return replace_rows(path, drop=drop)

    monkeypatch.setattr(measure.mesh, "unique_probe_rows", replaced)

    def kill_server() -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not killed:
            out = subprocess.run(["pgrep", "-f", f"iperf3 -s -B {victim} "],
                                 capture_output=True, text=True).stdout.split()
            if out and probes.exists() and len(probes.read_text().splitlines()) >= 2:
                for pid in out:
                    os.kill(int(pid), signal.SIGKILL)
                killed.append(victim)
            time.sleep(0.05)

    thread = threading.Thread(target=kill_server)
    thread.start()
    summary = run_mesh(hosts, tmp_path / "m", options=MeshOptions(duration=1))
    thread.join()
    assert killed and failures
    assert all("->h02:" in failure for failure in failures), failures
    # the failed attempt was recorded, then tried again with a fresh server; its row was
    # replaced by the successful one: one row per test
    m = read_measurement(tmp_path / "m")
    ok = _ok(m)
    assert len(m.probes) == len(ok) == 6
    assert set(zip(ok["src"], ok["dst"])) == {(a, b) for a in m.host_names
                                              for b in m.host_names if a != b}
    assert summary.failed == []


def test_ctrl_c_keeps_finished_tests_and_resume_runs_only_the_missing(tmp_path: Path) -> None:
    _tools()
    hosts = tmp_path / "hosts.csv"
    local_hosts(3, first=168).to_csv(hosts, index=False)
    out = tmp_path / "m"
    cmd = [TOMOGRAPHY, "measure", "iperf3", "--hosts", str(hosts), "--duration", "1",
           "-o", str(out)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        probes = out / "probes.csv"
        if probes.exists() and len(probes.read_text().splitlines()) >= 3:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "--resume" in err
    before = _ok(read_measurement(out))
    assert 2 <= len(before) < 6
    done = subprocess.run(cmd + ["--resume"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    after = _ok(read_measurement(out))
    assert len(after) == 6  # the finished tests were not run again
    assert set(zip(after["src"], after["dst"])) == {(a, b) for a in ["h00", "h01", "h02"]
                                                    for b in ["h00", "h01", "h02"] if a != b}
    assert f"{6 - len(before)} test(s) run" in done.stdout


def test_netpipe_fits_hockney_per_pair(tmp_path: Path) -> None:
    _tools()
    summary = run_mesh(local_hosts(2, first=174), tmp_path / "np",
                       options=MeshOptions(tool="netpipe", upper=1 << 20, samples=3))
    assert summary.done == 2 and not summary.failed
    m = read_measurement(tmp_path / "np")
    ok = _ok(m)
    assert m.meta["method"] == "netpipe" and len(ok) == 2
    assert (ok["alpha_s"] > 0).all() and (ok["alpha_s"] < 1e-3).all()  # loopback latency
    assert (ok["beta_s_per_byte"] > 0).all()
    curve = pd.read_csv(tmp_path / "np" / "raw" / "h00--h01--0.csv")
    assert list(curve.columns) == ["bytes", "seconds", "bits_per_second"]
    assert curve["bytes"].max() >= 1 << 20 and (curve["seconds"] > 0).all()
    # the rate NetPIPE printed is bytes * 8 / one-way time, in bit/s (its Mbps are 2^20)
    assert np.allclose(curve["bits_per_second"], curve["bytes"] * 8 / curve["seconds"],
                       rtol=0.01)


def test_probe_datasets_are_analysed_like_broadcasts(tmp_path: Path) -> None:
    _tools()
    run_mesh(local_hosts(3, first=178), tmp_path / "m", options=MeshOptions(duration=1))
    for command in ("cluster", "hierarchy", "tree", "info"):
        done = subprocess.run([TOMOGRAPHY, command, str(tmp_path / "m")], capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 0, done.stderr
    assert "measured bandwidth in Mbit/s" in done.stderr or command == "info"
    tree = subprocess.run([TOMOGRAPHY, "tree", str(tmp_path / "m")], capture_output=True,
                          text=True, timeout=60)
    assert "summed over the host pairs" in tree.stdout and "in Mbit/s" in tree.stdout
    assert "clusters are combined by sum" in tree.stderr


def test_pairs_files_name_file_line_and_field(tmp_path: Path) -> None:
    f = tmp_path / "pairs.csv"
    f.write_text("src,dst\nh00,h01\nh00,h09\n")
    with pytest.raises(DatasetError, match=r"line 3, field 'dst': unknown host 'h09'"):
        read_pairs(f, ["h00", "h01"])
    f.write_text("src,dst\nh00,h00\n")
    with pytest.raises(DatasetError, match="cannot probe itself"):
        read_pairs(f, ["h00", "h01"])
    f.write_text("from,to\n")
    with pytest.raises(DatasetError, match="field 'src': missing column"):
        read_pairs(f, ["h00"])
    fifo = tmp_path / "fifo.csv"
    os.mkfifo(fifo)
    with pytest.raises(DatasetError, match="not a regular file"):   # not read: it would block
        read_pairs(fifo, ["h00"])
    with pytest.raises(ValueError, match="whole seconds"):
        MeshOptions(duration=0.5).validate()


def test_gauge_takes_its_bandwidths_from_a_probe_mesh_after_a_broadcast_run(tmp_path: Path
                                                                             ) -> None:
    """Measure with BitTorrent, then probe the same hosts; the Gauge file's figures are the
    probes' (labelled so), and a planner reads it."""
    from measure.coordinator import run_broadcasts
    from tomography.export.gauge import read_gauge

    _tools()
    hosts = local_hosts(4, first=182)
    run_broadcasts(hosts, tmp_path / "bt", iterations=2, file_size=2**21, seed=0,
                   upload_limit=4 * 2**20)
    run_mesh(hosts, tmp_path / "ip", options=MeshOptions(duration=1))
    gauge = tmp_path / "g.xml"
    done = subprocess.run([TOMOGRAPHY, "export", str(tmp_path / "bt"), "--format", "gauge",
                           "--bandwidth", "probes", "--probes", str(tmp_path / "ip"),
                           "--host-pairs", "-o", str(gauge)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    text = gauge.read_text()
    assert "probes" in text and "iperf3" in text
    network = read_gauge(gauge)
    assert network is not None
    # one loopback "cluster": plan between its hosts, with the probes' host-pair figures
    plan = subprocess.run([TOMOGRAPHY, "plan", str(gauge), "--root", "h00", "--level", "hosts"],
                          capture_output=True, text=True, timeout=120)
    assert plan.returncode == 0, plan.stderr
    other = tmp_path / "other"
    run_mesh(local_hosts(2, first=190), other, options=MeshOptions(duration=1))
    wrong = subprocess.run([TOMOGRAPHY, "export", str(tmp_path / "bt"), "--format", "gauge",
                            "--probes", str(other), "-o", str(tmp_path / "x.xml")],
                           capture_output=True, text=True, timeout=120)
    assert wrong.returncode == 2 and "is not in the probe dataset" in wrong.stderr


def test_servers_listen_on_the_ports_given_even_one_for_every_host(tmp_path: Path) -> None:
    _tools()
    summary = run_mesh(local_hosts(4, first=200), tmp_path / "m",
                       options=MeshOptions(duration=1, schedule="rounds", one_way=True,
                                           ports=(5301, 5301)))   # what a firewall lets by
    assert summary.done == 6 and not summary.failed   # two servers at once, on two hosts
    ports = {json_port(f) for f in (tmp_path / "m" / "raw").glob("*.json")}
    assert ports == {5301}
    assert read_measurement(tmp_path / "m").meta["params"]["ports"] == [5301, 5301]


def json_port(path: Path) -> int:
    """The server port an iperf3 client report connected to."""
    import json

    return int(json.loads(path.read_text())["start"]["connecting_to"]["port"])


def test_a_port_range_that_is_not_one_is_refused_before_anything_starts(tmp_path: Path
                                                                       ) -> None:
    run = subprocess.run([TOMOGRAPHY, "measure", "iperf3", "--local", "2", "--ports",
                          "6000-5000", "-o", str(tmp_path / "m")], capture_output=True,
                         text=True)
    assert run.returncode == 2
    assert "--ports: must be LOW-HIGH with 1 <= LOW <= HIGH <= 65535" in run.stderr
    assert not (tmp_path / "m").exists()
    with pytest.raises(ParameterError, match="not a range of TCP ports"):
        run_mesh(local_hosts(2, first=204), tmp_path / "n",
                 options=MeshOptions(ports=(0, 70000)))


@pytest.mark.parametrize("error, again", [
    ("unable to connect to server: Connection refused", True),      # a server not ready yet
    ("unable to connect to server: No route to host", False),        # the network refuses it
    ("unable to connect to server: Network is unreachable", False),
    ("timeout after 32 s", False),
    ("no result: the agent on a died", False),
])
def test_a_test_runs_again_at_once_unless_the_network_or_the_agent_failed(error, again) -> None:
    from measure.mesh import _interfered

    assert _interfered(error) is again
