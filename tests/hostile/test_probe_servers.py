"""Who may connect to a probe mesh's servers: nobody outside the run gets a test, and the
run's rows stay one per (src, dst, repeat) while an outsider hammers the servers.

Everything runs on loopback: the run's hosts are 127.0.0.244-246, the outsider sends from
127.0.0.249 (every 127/8 address is on ``lo``; nothing leaves the machine).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from measure.coordinator import local_hosts
from measure.mesh import MeshOptions, run_mesh, unique_probe_rows
from measure.prober import Prober, iperf3_authenticates
from measure.probetools import iperf3_client, iperf3_credentials, iperf3_server
from tomography.model.dataset import MeasurementWriter, read_measurement
from tomography.model.dataset.iperf3 import parse_iperf3
from tomography.model.errors import ParameterError

OUTSIDER = "127.0.0.249"


def _need_iperf3() -> None:
    if shutil.which("iperf3") is None or shutil.which("openssl") is None:
        pytest.fail("iperf3 and openssl are needed: run scripts/setup.sh")
    assert iperf3_authenticates(), "this iperf3 cannot check credentials (needs OpenSSL)"


def _outsider_test(address: str, port: int, *, user: str | None = None,
                   public_key: str | None = None, password: str | None = None) -> str:
    """One iperf3 test from the outsider's address; its error ("" when it got a test)."""
    env = {k: v for k, v in os.environ.items() if k != "IPERF3_PASSWORD"}
    if password is not None:
        env["IPERF3_PASSWORD"] = password
    try:
        done = subprocess.run(iperf3_client(OUTSIDER, address, port, duration=1, user=user,
                                            public_key=public_key),
                              capture_output=True, text=True, timeout=10, env=env)
    except subprocess.TimeoutExpired:
        return "timeout"
    try:
        return json.loads(done.stdout).get("error", "") or ""
    except json.JSONDecodeError:
        return (done.stderr or done.stdout).strip()[-200:] or f"status {done.returncode}"


def _listening(addresses: set[str]) -> list[tuple[str, int]]:
    import psutil

    return sorted({(c.laddr.ip, c.laddr.port) for c in psutil.net_connections(kind="tcp")
                   if c.status == psutil.CONN_LISTEN and c.laddr.ip in addresses})


def _keys(probes: pd.DataFrame) -> list[tuple[str, str, int]]:
    return list(zip(probes["src"], probes["dst"], probes["repeat"].astype(int)))


def test_tool_lines_refuse_half_credentials() -> None:
    with pytest.raises(ParameterError, match="both"):
        iperf3_server("127.0.0.1", 5201, private_key="k.pem")
    with pytest.raises(ParameterError, match="both"):
        iperf3_client("127.0.0.1", "127.0.0.2", 5201, user="run")


def test_unique_rows_keep_the_success_or_the_last_failure(tmp_path: Path) -> None:
    w = MeasurementWriter(tmp_path / "d", {"method": "iperf3"},
                          [("a", "127.0.0.1", ""), ("b", "127.0.0.2", "")], probes=True)
    base = {"tool": "iperf3", "streams": 1, "concurrent": 1}
    w.add_probe({**base, "src": "a", "dst": "b", "repeat": 0, "error": "the server is busy"})
    w.add_probe({**base, "src": "a", "dst": "b", "repeat": 0, "bits_per_second": 9e8})
    w.add_probe({**base, "src": "a", "dst": "b", "repeat": 0, "error": "refused"})
    w.add_probe({**base, "src": "b", "dst": "a", "repeat": 0, "error": "busy"})
    w.add_probe({**base, "src": "b", "dst": "a", "repeat": 0, "error": "timeout after 21 s"})
    assert unique_probe_rows(tmp_path / "d") == {("a", "b", 0), ("b", "a", 0)}
    probes = read_measurement(tmp_path / "d").probes
    assert sorted(_keys(probes)) == [("a", "b", 0), ("b", "a", 0)]
    assert probes.set_index("src").loc["a", "bits_per_second"] == 9e8
    assert probes.set_index("src").loc["b", "error"] == "timeout after 21 s"
    assert not (tmp_path / "d" / "probes.csv.tmp").exists()


@pytest.mark.slow
def test_a_server_refuses_clients_without_the_runs_credentials(tmp_path: Path) -> None:
    """The agent's server takes the run's client and nobody else, and lives for one test."""
    _need_iperf3()
    credentials = iperf3_credentials()
    server, client = Prober("127.0.0.244"), Prober("127.0.0.245")
    try:
        for p in (server, client):
            assert p.authenticate(**credentials.message()) == {"event": "auth"}
            for name in ("private.pem", "public.pem", "users.csv"):
                assert (p.workdir / name).stat().st_mode & 0o077 == 0   # owner only
        port = 24401
        assert server.serve("iperf3", port)["event"] == "serving"
        # no credentials, then the run's user with a key and password of its own
        assert "authorization failed" in _outsider_test("127.0.0.244", port)
        other = tmp_path / "other.pem"
        other.write_text(iperf3_credentials().public_key)
        assert server.serve("iperf3", port)["event"] == "serving"   # the first one exited
        assert "authorization failed" in _outsider_test(
            "127.0.0.244", port, user=credentials.user, public_key=str(other),
            password="guessed")
        # the run's client gets its test
        assert server.serve("iperf3", port)["event"] == "serving"
        event = client.probe({"id": 1, "tool": "iperf3", "dst": "127.0.0.244", "port": port,
                              "duration": 1})
        result = parse_iperf3(event["raw"])
        assert "error" not in event and result["error"] == ""
        assert result["bits_per_second"] > 1e8
        # one test per server: nothing listens on the port any more
        time.sleep(0.3)
        assert ("127.0.0.244", port) not in _listening({"127.0.0.244"})
    finally:
        server.close()
        client.close()
    assert not server.workdir.exists()   # the keys go with the agent


@pytest.mark.slow
def test_a_hammering_outsider_gets_no_test_and_rows_stay_unique(tmp_path: Path) -> None:
    """An outsider that finds every server the run opens (it reads the listening sockets)
    and connects to it over and over, without credentials, completes no test; the mesh ends,
    with one row per (src, dst, repeat); --resume over a dataset with duplicate rows (left
    by an older version) keeps one row per test too."""
    _need_iperf3()
    hosts = local_hosts(3, first=244)
    addresses = set(hosts["address"])
    stop = threading.Event()
    seen: dict[str, int] = {}

    def hammer() -> None:
        while not stop.is_set():
            for address, port in _listening(addresses):
                error = _outsider_test(address, port)
                seen[error] = seen.get(error, 0) + 1
            time.sleep(0.005)

    thread = threading.Thread(target=hammer, daemon=True)
    thread.start()
    try:
        summary = run_mesh(hosts, tmp_path / "m", options=MeshOptions(duration=1, repeats=2))
    finally:
        stop.set()
        thread.join(timeout=30)
    assert "" not in seen, f"an outsider got a test: {seen}"
    assert sum(n for e, n in seen.items() if "authorization failed" in e) >= 1, seen
    probes = read_measurement(tmp_path / "m").probes
    keys = _keys(probes)
    pairs = {(a, b) for a in hosts["host"] for b in hosts["host"] if a != b}
    assert len(keys) == len(set(keys)) == 12, probes[["src", "dst", "repeat", "error"]]
    assert set(keys) == {(a, b, r) for a, b in pairs for r in (0, 1)}
    ok = probes[probes["error"].astype(str) == ""]
    assert len(ok) == 12 - len(summary.failed)
    assert len(ok) >= 10, (seen, probes[["src", "dst", "repeat", "error"]])
    # no outsider's test in the raw reports: each names the run's two addresses
    for report in (tmp_path / "m" / "raw").glob("*.json"):
        start = json.loads(report.read_text()).get("start", {})
        for connection in start.get("connected", []):
            assert connection["local_host"] in addresses
            assert connection["remote_host"] in addresses

    # an older version's duplicates, and failures to resume
    csv = tmp_path / "m" / "probes.csv"
    lines = csv.read_text().splitlines(keepends=True)
    header, first = lines[0], lines[1]
    row = dict(zip(header.strip().split(","), first.rstrip("\n").split(",")))
    failed = ",".join("" if c == "bits_per_second" else
                      ("the server is busy running a test" if c == "error" else v)
                      for c, v in row.items()) + "\n"
    kept = [line for line in lines[1:] if line != first]
    csv.write_text(header + failed + failed + "".join(kept))
    assert len(read_measurement(tmp_path / "m").probes) == 13
    again = run_mesh(hosts, tmp_path / "m", options=MeshOptions(duration=1, repeats=2),
                     resume=True)
    assert again.done == 1
    probes = read_measurement(tmp_path / "m").probes
    keys = _keys(probes)
    assert len(keys) == len(set(keys)) == 12
    assert _listening(addresses) == []   # every server of the run is gone
