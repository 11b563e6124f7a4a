"""``tomography info`` on a probe dataset speaks of tests, pairs and bandwidths."""

from __future__ import annotations

import json
from pathlib import Path

from tomography.cli import main
from tomography.model.dataset import MeasurementWriter


def _probe_dataset(path: Path, meta: dict) -> Path:
    w = MeasurementWriter(path, {"method": "iperf3", **meta},
                          [("a", "10.0.0.1", "x"), ("b", "10.0.0.2", "x"), ("c", "10.0.0.3", "y")],
                          probes=True)
    rows = [("a", "b", 9e8, 0, ""), ("a", "b", 9.4e8, 1, ""), ("b", "a", 1e8, 0, ""),
            ("a", "c", None, 0, "iperf3 server busy")]
    for src, dst, rate, repeat, error in rows:
        w.add_probe({"src": src, "dst": dst, "tool": "iperf3", "bits_per_second": rate,
                     "streams": 1, "concurrent": 1, "repeat": repeat, "error": error,
                     "protocol": "tcp"})
    w.add_probe({"src": "c", "dst": "a", "tool": "iperf3", "bits_per_second": 5e7,
                 "streams": 1, "concurrent": 1, "repeat": 0, "protocol": "udp"})
    return path


def test_info_on_a_probe_dataset_counts_tests_pairs_and_bandwidths(tmp_path: Path,
                                                                    capsys) -> None:
    d = _probe_dataset(tmp_path / "ds", {"source": "pscheduler"})
    assert main(["info", str(d)]) == 0
    out = capsys.readouterr().out
    assert "probes: iperf3 from pscheduler" in out
    assert "tests       5: 4 successful, 1 failed" in out
    # pairs and repeats count the successful TCP tests (a -> b twice, b -> a once): the
    # failed a -> c and the UDP c -> a are said apart
    assert ("2 of 6 ordered pairs measured by successful TCP tests, 1 to 2 tests each "
            "(not counted: 1 UDP, 1 failed)") in out
    assert "tools       iperf3 (5)" in out
    assert "TCP 4, UDP 1" in out
    assert "100 / 900 / 940 Mbit/s" in out   # TCP only: the UDP 50 Mbit/s is not a bandwidth
    assert "iteration" not in out and "block" not in out
    assert main(["info", str(d), "--format", "json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["tests"] == 5 and info["failed_tests"] == 1 and info["pairs_measured"] == 2
    assert info["pairs_tested"] == 4 and info["udp_tests"] == 1
    assert info["repeats_per_pair"] == {"min": 1, "max": 2}
    assert info["protocols"] == {"tcp": 4, "udp": 1} and info["source"] == "pscheduler"
    assert info["tcp_mbit_per_s"] == {"min": 100.0, "median": 900.0, "max": 940.0}


def test_a_mesh_dataset_says_it_is_one(tmp_path: Path, capsys) -> None:
    d = _probe_dataset(tmp_path / "ds", {"launcher": "local"})
    assert main(["info", str(d), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["source"] == "mesh"
