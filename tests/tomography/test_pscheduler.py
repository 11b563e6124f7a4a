"""pScheduler throughput results (its published result schema) into a probe dataset."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tomography.cli import main
from tomography.dataset import read_measurement
from tomography.errors import DatasetError
from tomography.pscheduler import read_pscheduler


def _result(rate: float, retransmits: int = 0, *, received: float | None = None,
            streams: int = 1) -> dict:
    """A result of pScheduler's throughput schema (version 1): summary, streams, intervals."""
    data = {"throughput-bits": rate, "throughput-bytes": rate / 8, "retransmits": retransmits,
            "start": 0, "end": 10.0, "omitted": False}
    if received is not None:
        data["receiver-throughput-bits"] = received
    stream = {**data, "stream-id": 5, "rtt": 1500, "tcp-window-size": 1 << 20}
    return {"schema": 1, "succeeded": True, "diags": "iperf3 ...", "mss": 1448,
            "intervals": [{"streams": [stream] * streams, "summary": data}],
            "summary": {"streams": [stream] * streams, "summary": data}}


def _run(src: str, dst: str, result: dict, tool: str = "iperf3") -> dict:
    return {"task": {"test": {"type": "throughput",
                              "spec": {"schema": 1, "source": src, "dest": dst,
                                       "duration": "PT10S"}}, "tool": tool},
            "run": {"start-time": "2026-11-23T10:00:00Z", "end-time": "2026-11-23T10:00:11Z"},
            "result": result}


def test_import_gives_the_right_numbers_and_a_dataset_the_analysis_reads(tmp_path: Path) -> None:
    runs = [_run("10.0.0.1", "10.0.0.2", _result(9.4e8, 3, received=9.3e8)),
            _run("10.0.0.2", "10.0.0.1", _result(9.1e8)),
            _run("10.0.0.1", "10.0.0.3", _result(1e8, streams=4), tool="nuttcp"),
            _run("10.0.0.3", "10.0.0.1", {"schema": 1, "succeeded": False, "diags": "",
                                          "error": "iperf3 server busy", "intervals": [],
                                          "summary": {}}),
            {"task": {"test": {"type": "latency", "spec": {"source": "a", "dest": "b"}}},
             "result": {"succeeded": True}}]
    (tmp_path / "archive").mkdir()
    (tmp_path / "archive" / "a.json").write_text(json.dumps(runs[:2]))
    (tmp_path / "archive" / "b.jsonl").write_text("\n".join(json.dumps(r) for r in runs[2:]))
    hosts = tmp_path / "hosts.csv"
    hosts.write_text("host,address,label\nn1,10.0.0.1,siteA\nn2,10.0.0.2,siteA\n"
                     "n3,10.0.0.3,siteB\n")
    assert main(["import", "pscheduler", str(tmp_path / "archive"), "--hosts", str(hosts),
                 "-o", str(tmp_path / "ds")]) == 0
    m = read_measurement(tmp_path / "ds")
    assert m.meta["method"] == "iperf3" and m.meta["source"] == "pscheduler"
    p = m.probes.set_index(["src", "dst"])
    assert p.loc[("n1", "n2"), "bits_per_second"] == 9.3e8  # the receiver's rate
    assert p.loc[("n1", "n2"), "retransmits"] == 3
    assert p.loc[("n1", "n2"), "duration_s"] == 10.0
    assert p.loc[("n1", "n2"), "rtt_ms"] == 1.5
    assert p.loc[("n2", "n1"), "bits_per_second"] == 9.1e8  # the sender's, none other given
    assert p.loc[("n1", "n3"), "tool"] == "nuttcp" and p.loc[("n1", "n3"), "streams"] == 4
    assert p.loc[("n3", "n1"), "error"] == "iperf3 server busy"
    assert len(m.probes) == 4  # the latency test is not a throughput result
    assert m.labels == {"n1": "siteA", "n2": "siteA", "n3": "siteB"}
    assert main(["cluster", str(tmp_path / "ds")]) == 0


def test_bad_results_are_named(tmp_path: Path) -> None:
    f = tmp_path / "x.json"
    f.write_text("{not json")
    with pytest.raises(DatasetError, match="x.json, line 1: neither JSON nor JSON lines"):
        read_pscheduler([f])
    f.write_text(json.dumps({"task": {"test": {"type": "throughput", "spec": {}}},
                             "result": {"succeeded": True}}))
    with pytest.raises(DatasetError, match="item 1: the test names no source and dest"):
        read_pscheduler([f])
    f.write_text(json.dumps(_run("a", "b", {"succeeded": True, "summary": {"summary": {}}})))
    with pytest.raises(DatasetError, match="no throughput-bits"):
        read_pscheduler([f])
    with pytest.raises(DatasetError, match="no such file"):
        read_pscheduler([tmp_path / "missing.json"])
