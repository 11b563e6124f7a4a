"""pScheduler throughput results (its published result schema) into a probe dataset."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tomography.cli import main
from tomography.model.dataset import read_measurement
from tomography.model.errors import DatasetError
from tomography.model.dataset.pscheduler import read_pscheduler


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
    with pytest.raises(DatasetError, match="item 1: no summary.summary.throughput-bits"):
        read_pscheduler([f])
    # precise messages: a rate out of range, a rate that is text, succeeded that is text
    f.write_text(json.dumps(_run("a", "b", _result(1e300))))
    with pytest.raises(DatasetError, match=r"throughput-bits 1e\+300 is out of range"):
        read_pscheduler([f])
    text_rate = _result(9e8)
    text_rate["summary"]["summary"]["throughput-bits"] = "9e8"
    f.write_text(json.dumps(_run("a", "b", text_rate)))
    with pytest.raises(DatasetError, match="throughput-bits is '9e8', not a number"):
        read_pscheduler([f])
    f.write_text(json.dumps(_run("a", "b", {"succeeded": "false", "error": "x"})))
    with pytest.raises(DatasetError, match="result.succeeded is 'false', not a boolean"):
        read_pscheduler([f])
    with pytest.raises(DatasetError, match="no such file"):
        read_pscheduler([tmp_path / "missing.json"])


# The layouts perfSONAR archives, each written here to its published schema.

def _throughput_task(spec: dict, tool: str = "iperf3") -> dict:
    return {"schema": 1, "test": {"type": "throughput", "spec": {"schema": 1, **spec}},
            "tool": tool, "detail": {"participants": [spec.get("source", "lead.example"),
                                                      spec.get("dest")]}}


def _import(tmp_path: Path, docs: list, *extra: str) -> tuple[int, "object"]:
    archive = tmp_path / "archive"
    archive.mkdir(exist_ok=True)
    (archive / "docs.json").write_text(json.dumps(docs))
    code = main(["import", "pscheduler", str(archive), "-o", str(tmp_path / "ds"), "--force",
                 *extra])
    return code, read_measurement(tmp_path / "ds")


def test_a_run_record_of_the_rest_api(tmp_path: Path) -> None:
    """``/tasks/<id>/runs/<id>``: participants and result-merged, no task spec."""
    record = {"href": "https://ps1/pscheduler/tasks/t1/runs/r1", "task-href":
              "https://ps1/pscheduler/tasks/t1", "result-href": "https://ps1/.../result",
              "start-time": "2026-11-23T10:00:00Z", "end-time": "2026-11-23T10:00:12Z",
              "duration": "PT12S", "participant": 0, "participants": ["ps1", "ps2"],
              "state": "finished", "state-display": "Finished", "errors": None,
              "result": _result(9e8), "result-full": [_result(9e8), None],
              "result-merged": _result(9e8, 1, received=8.8e8)}
    code, m = _import(tmp_path, [record])
    assert code == 0
    assert m.probes[["src", "dst", "bits_per_second", "protocol"]].values.tolist() == \
        [["ps1", "ps2", 8.8e8, "tcp"]]


def test_the_archivers_input_and_what_the_http_archiver_posts(tmp_path: Path, capsys) -> None:
    """The archiver's input ``{"data", "result": {...}}`` is read, not refused."""
    posted = {"id": "r1", "schedule": {"start": "2026-11-23T10:00:00Z", "duration": "PT12S"},
              "test": {"type": "throughput", "spec": {"source": "10.1.0.1", "dest": "10.1.0.2"}},
              "tool": {"name": "iperf3", "version": "1.1"}, "participants": ["10.1.0.1", "10.1.0.2"],
              "run": {"start-time": "2026-11-23T10:00:01Z", "href": "https://ps/r1"},
              "task": _throughput_task({"source": "10.1.0.1", "dest": "10.1.0.2"}),
              "result": _result(4.4e9)}
    envelope = {"data": {"_url": "https://collector/ingest", "op": "put"},
                "task-href": "https://ps/t1", "run-href": "https://ps/r1", "result": posted,
                "attempts": 0, "last-attempt": None}
    latency = {"data": {"ident": "x"}, "result": {"test": {"type": "latency",
               "spec": {"source": "a", "dest": "b"}}, "tool": {"name": "owping"},
               "participants": ["a"], "result": {"succeeded": True, "packets-sent": 100}}}
    code, m = _import(tmp_path, [envelope, posted, latency, latency, {"hello": 1}])
    assert code == 0
    assert m.probes[["src", "dst", "tool", "bits_per_second"]].values.tolist() == \
        [["10.1.0.1", "10.1.0.2", "iperf3", 4.4e9]]  # one run, read twice
    out = capsys.readouterr().out
    assert "imported 1 pScheduler throughput run " in out
    assert "skipped 3 documents that are not throughput results (2 latency, 1 unrecognised)" \
        in out
    assert "1 duplicate skipped (the same test read twice)" in out


def test_esmond_metadata_with_their_data(tmp_path: Path) -> None:
    """esmond's metadata; each run a ``{ts, val}`` of the throughput event type."""
    base = "/esmond/perfsonar/archive/f6b7"
    meta = {"metadata-key": "f6b7", "subject-type": "point-to-point",
            "source": "10.2.0.1", "destination": "10.2.0.2", "input-source": "bw1.example",
            "input-destination": "bw2.example", "measurement-agent": "10.2.0.1",
            "tool-name": "pscheduler/iperf3", "ip-transport-protocol": "tcp",
            "bw-parallel-streams": "4", "time-duration": 20, "pscheduler-test-type":
            "throughput", "uri": base + "/",
            "event-types": [
                {"event-type": "throughput", "base-uri": base + "/throughput/base",
                 "summaries": [{"summary-type": "average", "summary-window": "86400"}],
                 "data": [{"ts": 1397421672, "val": 9.2e9}, {"ts": 1397442692, "val": 9.4e9}]},
                {"event-type": "streams-throughput", "base-uri": base + "/streams-throughput/base",
                 "data": [{"ts": 1397421672, "val": [2.3e9] * 4}]},
                {"event-type": "packet-retransmits", "base-uri": base + "/packet-retransmits/base",
                 "data": [{"ts": 1397421672, "val": 12}]},
                {"event-type": "failures", "base-uri": base + "/failures/base",
                 "data": [{"ts": 1397466492, "val": {"error": "iperf3 server busy"}}]}]}
    no_data = {**meta, "event-types": [{k: v for k, v in e.items() if k != "data"}
                                       for e in meta["event-types"]]}
    code, m = _import(tmp_path, [meta, no_data])
    assert code == 0
    p = m.probes
    assert len(p) == 3  # two runs and a failure; the per-stream values are not runs
    assert set(p["src"]) == {"bw1.example"} and set(p["dst"]) == {"bw2.example"}
    assert p["bits_per_second"].tolist()[:2] == [9.2e9, 9.4e9]
    assert p["streams"].tolist() == [4, 4, 4] and p["tool"].tolist() == ["iperf3"] * 3
    assert p["retransmits"].tolist()[0] == 12 and p["duration_s"].tolist()[0] == 20
    assert p["error"].tolist()[2] == "iperf3 server busy"


def test_opensearch_documents_of_perfsonar_5(tmp_path: Path) -> None:
    """The archive's documents, bare and as search hits, as its logstash pipeline writes."""
    doc = {"@timestamp": "2026-11-23T10:00:01Z",
           "test": {"type": "throughput", "spec": {"source": "ps-a.example", "dest":
                                                   "ps-b.example", "duration": 20.0,
                                                   "parallel": 2}},
           "result": {"succeeded": True, "throughput": 2.5e9, "retransmits": 7, "mss": 8948,
                      "intervals": {"json": "[]"}, "streams": {"json": json.dumps(
                          [{"throughput-bits": 1.25e9}, {"throughput-bits": 1.25e9}])}},
           "meta": {"source": {"ip": "10.3.0.1", "hostname": "ps-a.example"},
                    "destination": {"ip": "10.3.0.2", "hostname": "ps-b.example"},
                    "observer": {"ip": "10.3.0.1"}, "ip_version": 4},
           "pscheduler": {"tool": "iperf3", "start_time": "2026-11-23T10:00:01Z",
                          "participants": ["ps-a.example", "ps-b.example"],
                          "task_href": "https://ps-a.example/pscheduler/tasks/t9",
                          "run_href": "https://ps-a.example/pscheduler/tasks/t9/runs/r9"}}
    no_source = json.loads(json.dumps(doc))
    del no_source["test"]["spec"]["source"]
    # the archiver fills the task's null participant with the host's FQDN
    no_source["pscheduler"].update(participants=["ps-a.example.net", "ps-b.example"],
                                   start_time="2026-11-23T12:00:01Z",
                                   run_href="https://ps-a.example/pscheduler/tasks/t9/runs/r10")
    search = {"took": 3, "hits": {"total": {"value": 2}, "hits": [
        {"_index": "pscheduler_throughput-2026.11.23", "_id": "x", "_source": doc},
        {"_index": "pscheduler_throughput-2026.11.23", "_id": "y", "_source": no_source}]}}
    archive = tmp_path / "archive"
    archive.mkdir()
    (archive / "search.json").write_text(json.dumps(search))
    assert main(["import", "pscheduler", str(archive), "-o", str(tmp_path / "ds")]) == 0
    p = read_measurement(tmp_path / "ds").probes
    assert p[["src", "dst", "bits_per_second", "streams", "retransmits"]].values.tolist() == [
        ["ps-a.example", "ps-b.example", 2.5e9, 2, 7],
        ["10.3.0.1", "10.3.0.2", 2.5e9, 2, 7]]  # no source: the pipeline's meta addresses
    assert p["duration_s"].tolist() == [20.0, 20.0]


def test_udp_is_kept_apart_and_never_changes_a_tcp_weight(tmp_path: Path, capsys) -> None:
    from tomography.model.weights import probe_weights

    tcp = _run("10.0.0.1", "10.0.0.2", _result(4.439e9))
    udp = _run("10.0.0.1", "10.0.0.2", _result(4.96e7))
    udp["task"]["test"]["spec"].update(udp=True, bandwidth=50_000_000)
    _, alone = _import(tmp_path, [tcp])
    code, both = _import(tmp_path, [tcp, udp])
    assert code == 0
    assert "1 UDP pScheduler throughput run kept apart from the TCP weights" in \
        capsys.readouterr().out
    assert both.probes["protocol"].tolist() == ["tcp", "udp"]
    assert both.probes["repeat"].tolist() == [0, 0]
    assert (probe_weights(both).toarray() == probe_weights(alone).toarray()).all()
    assert probe_weights(both).toarray()[0, 1] == 4439.0


def test_reverse_runs_from_dest_to_source(tmp_path: Path) -> None:
    run = _run("10.0.0.1", "10.0.0.2", _result(9e8))
    run["task"]["test"]["spec"]["reverse"] = True
    _, m = _import(tmp_path, [run])
    assert m.probes[["src", "dst"]].values.tolist() == [["10.0.0.2", "10.0.0.1"]]


def test_a_task_without_source_sends_from_its_lead_participant(tmp_path: Path) -> None:
    """``pscheduler task throughput --dest X``: the spec has no source."""
    task = _throughput_task({"dest": "10.0.0.9"})
    task["detail"]["participants"] = ["10.0.0.5", "10.0.0.9"]
    run = {"task": task, "run": {"start-time": "2026-11-23T10:00:00Z"},
           "result": _result(9e8)}
    reverse = json.loads(json.dumps(run))
    reverse["task"]["test"]["spec"]["reverse"] = True
    _, m = _import(tmp_path, [run, reverse])
    assert m.probes[["src", "dst"]].values.tolist() == [["10.0.0.5", "10.0.0.9"],
                                                        ["10.0.0.9", "10.0.0.5"]]


def test_parallel_streams_are_one_run_at_the_total_rate(tmp_path: Path) -> None:
    run = _run("10.0.0.1", "10.0.0.2", _result(8e9, streams=8))
    run["task"]["test"]["spec"]["parallel"] = 8
    run["result"]["summary"]["streams"] = [{"stream-id": i, "throughput-bits": 1e9, "rtt": 900}
                                           for i in range(8)]
    no_total = json.loads(json.dumps(run))
    del no_total["result"]["summary"]["summary"]
    no_total["run"]["start-time"] = "2026-11-23T14:00:00Z"  # another run of the task
    _, m = _import(tmp_path, [run, no_total])
    p = m.probes
    assert len(p) == 2 and p["repeat"].tolist() == [0, 1]
    assert p["bits_per_second"].tolist() == [8e9, 8e9] and p["streams"].tolist() == [8, 8]
    assert p["rtt_ms"].tolist()[0] == 0.9


def test_only_documents_that_are_not_throughput_is_said(tmp_path: Path) -> None:
    f = tmp_path / "x.json"
    f.write_text(json.dumps([{"test": {"type": "rtt"}}, [1, 2]]))
    with pytest.raises(DatasetError, match=r"no throughput result in .*x.json \(skipped 2 "
                                           r"documents .*\(1 rtt, 1 unrecognised\)"):
        read_pscheduler([f])


def test_an_old_probes_file_without_protocol_reads_as_tcp(tmp_path: Path) -> None:
    _import(tmp_path, [_run("a", "b", _result(9e8))])
    probes = tmp_path / "ds" / "probes.csv"
    lines = probes.read_text().splitlines()
    header = lines[0].split(",")
    keep = [i for i, c in enumerate(header) if c != "protocol"]
    probes.write_text("\n".join(",".join(line.split(",")[i] for i in keep) for line in lines)
                      + "\n")
    assert read_measurement(tmp_path / "ds").probes["protocol"].tolist() == ["tcp"]


# What a reviewer found on real perfSONAR documents, each written here in the shape
# perfSONAR gives it.

def _envelope(run_id: str, spec: dict, result: dict, start: str) -> tuple[dict, dict]:
    """What an archiver receives for one run, and what the http archiver posts of it."""
    href = f"https://10.0.0.1/pscheduler/tasks/t1/runs/{run_id}"
    run = {"start-time": start, "participants": [None, spec["dest"]], "href": href,
           "task-href": "https://10.0.0.1/pscheduler/tasks/t1", "result-merged": result}
    posted = {"id": run_id, "schedule": {"start": start.replace("Z", "+00:00")},
              "test": {"type": "throughput", "spec": spec}, "tool": {"name": "iperf3"},
              "run": run, "task": {"test": {"type": "throughput", "spec": spec},
                                   "href": "https://10.0.0.1/pscheduler/tasks/t1",
                                   "detail": {"participants": [None, spec["dest"]]}},
              "participants": ["10.0.0.1", spec["dest"]], "result": result}
    return {"data": {"_url": "http://archive/"}, "run-href": href, "result": posted}, posted


def test_the_same_run_read_twice_adds_no_repeat(tmp_path: Path, capsys) -> None:
    """An archiver's input and its http post, the REST run record, one document in two files."""
    spec = {"schema": 1, "dest": "10.0.0.3", "reverse": True, "duration": "PT10S"}
    envelope, posted = _envelope("r1", spec, _result(5.9e8), "2026-11-16T10:00:00Z")
    record = {**posted["run"], "participants": [None, "10.0.0.3"], "result": _result(5.9e8)}
    later, _ = _envelope("r2", spec, _result(6.1e8), "2026-11-16T14:00:00Z")
    plain = _run("10.0.0.1", "10.0.0.2", _result(9e8))
    archive = tmp_path / "archive"
    (archive / "sub").mkdir(parents=True)
    (archive / "envelope.json").write_text(json.dumps(envelope))
    (archive / "posted.json").write_text(json.dumps(posted))
    (archive / "record.json").write_text(json.dumps(record))
    (archive / "runs.json").write_text(json.dumps([later, plain]))
    (archive / "sub" / "copy.jsonl").write_text(json.dumps(plain) + "\n")
    assert main(["import", "pscheduler", str(archive), "-o", str(tmp_path / "ds")]) == 0
    out = capsys.readouterr().out
    assert "3 duplicates skipped (the same test read twice)" in out
    p = read_measurement(tmp_path / "ds").probes
    assert p[["src", "dst", "bits_per_second", "repeat"]].values.tolist() == [
        ["10.0.0.3", "10.0.0.1", 5.9e8, 0], ["10.0.0.3", "10.0.0.1", 6.1e8, 1],
        ["10.0.0.1", "10.0.0.2", 9e8, 0]]
    frame = read_pscheduler([archive])
    assert frame.attrs["duplicates"] == 3 and frame.attrs["listed"] == 0


def test_an_rtt_of_0_is_not_measured(tmp_path: Path) -> None:
    """The receiver's side of iperf3 measures no RTT: pScheduler's stream ``rtt`` is 0 then."""
    result = _result(9e8)
    for stream in result["summary"]["streams"]:
        stream["rtt"] = 0
    _, m = _import(tmp_path, [_run("10.0.0.1", "10.0.0.2", result)])
    assert m.probes["rtt_ms"].isna().all()
    header, row = (tmp_path / "ds" / "probes.csv").read_text().splitlines()
    assert dict(zip(header.split(","), row.split(",")))["rtt_ms"] == ""


def test_null_participants_and_run_records_without_their_task(tmp_path: Path,
                                                              capsys) -> None:
    """A REST run record has no spec: the sender unknown is skipped, else taken as listed."""
    nameless = {"href": "https://10.0.0.1/pscheduler/tasks/t1/runs/r1",
                "start-time": "2026-11-16T10:00:00Z", "participants": [None, "10.0.0.3"],
                "result-merged": _result(5.9e8)}
    listed = {**nameless, "href": "https://10.0.0.1/pscheduler/tasks/t1/runs/r2",
              "start-time": "2026-11-16T14:00:00Z", "participants": ["10.0.0.1", "10.0.0.3"]}
    failed = _throughput_task({"dest": "10.0.0.4"})
    failed["detail"]["participants"] = [None, "10.0.0.4"]
    code, m = _import(tmp_path, [nameless, listed, {"task": failed, "result": {
        "succeeded": False, "error": "refused"}}])
    assert code == 0
    assert m.probes[["src", "dst", "bits_per_second"]].values.tolist() == [
        ["10.0.0.1", "10.0.0.3", 5.9e8]]
    captured = capsys.readouterr()
    assert "2 runs with a null participant name no sender or receiver (skipped)" in captured.out
    assert ("warning: 1 run without their task: direction as the participants list it"
            in captured.err)


def test_loopback_tests_are_skipped_and_counted(tmp_path: Path, capsys) -> None:
    loop = _run("10.0.2.15", "10.0.2.15", _result(4e10))
    loop["task"]["test"]["spec"]["loopback"] = True
    flagged = _run("10.0.2.15", "10.0.2.16", _result(4e10))
    flagged["task"]["test"]["spec"]["loopback"] = True
    code, m = _import(tmp_path, [loop, flagged, _run("10.0.2.15", "10.0.2.4", _result(9e8))])
    assert code == 0 and len(m.probes) == 1
    assert "2 loopback tests (source and destination one host) skipped" in \
        capsys.readouterr().out


def test_nuttcp_parallel_tests_count_the_streams_the_spec_asked_for(tmp_path: Path) -> None:
    """pScheduler's nuttcp parser writes one made-up ``summary.streams`` entry."""
    total = {"start": 0, "end": 10, "stream-id": 1, "throughput-bits": 1.84e9,
             "retransmits": 237}
    nuttcp = _run("10.0.0.1", "10.0.0.2", {"schema": 1, "succeeded": True, "intervals": [],
                                            "summary": {"summary": total, "streams": [total]}},
                  tool="nuttcp")
    nuttcp["task"]["test"]["spec"]["parallel"] = 4
    iperf = _run("10.0.0.1", "10.0.0.3", _result(4e8, streams=3))  # no parallel: 3 entries
    _, m = _import(tmp_path, [nuttcp, iperf])
    assert m.probes[["dst", "streams"]].values.tolist() == [["10.0.0.2", 4], ["10.0.0.3", 3]]


def test_esmond_text_values_bwctl_tools_and_latency_metadata(tmp_path: Path, capsys) -> None:
    """esmond keeps metadata as text; bwctl's metadata name no pScheduler test type."""
    meta = {"source": "198.129.254.38", "destination": "198.124.238.66",
            "input-source": "sacr-pt1.es.net", "input-destination": "bost-pt1.es.net",
            "tool-name": "bwctl/iperf3", "time-duration": "20", "ip-transport-protocol": "tcp",
            "bw-parallel-streams": "4", "metadata-key": "67a3",
            "event-types": [
                {"event-type": "throughput", "data": [{"ts": "1497971206", "val": 3.9e8}]},
                {"event-type": "packet-retransmits",
                 "data": [{"ts": 1497971206, "val": 159}]}]}
    owamp = {"source": "198.129.254.38", "destination": "198.124.238.66",
             "tool-name": "bwctl/owping", "event-types": [
                 {"event-type": "histogram-owdelay", "data": []},
                 {"event-type": "packet-loss-rate", "data": []}]}
    code, m = _import(tmp_path, [meta, owamp])
    assert code == 0
    p = m.probes
    assert p[["tool", "streams", "duration_s", "start"]].values.tolist() == [
        ["iperf3", 4, 20.0, 1497971206.0]]
    assert "skipped 1 document that is not a throughput result (1 latency)" in \
        capsys.readouterr().out
    header, row = (tmp_path / "ds" / "probes.csv").read_text().splitlines()
    assert dict(zip(header.split(","), row.split(",")))["retransmits"] == "159"  # a count


def test_a_host_may_have_several_addresses_in_the_hosts_file(tmp_path: Path,
                                                              capsys) -> None:
    """The same machine named by its IP in one run and its FQDN in another."""
    runs = [_run("10.0.0.1", "10.0.0.2", _result(9e8)),
            _run("ps-a.example.net", "10.0.0.2", _result(9.1e8)),
            _run("2001:db8::2", "10.0.0.1", _result(8e8))]
    runs[1]["run"]["start-time"] = "2026-11-23T11:00:00Z"
    hosts = tmp_path / "hosts.csv"
    hosts.write_text("host,address,label\nh1,10.0.0.1,A\nh2,10.0.0.2,B\n"
                     "h1,ps-a.example.net,\nh2,2001:db8::2,B\n")
    code, m = _import(tmp_path, runs, "--hosts", str(hosts))
    assert code == 0
    assert m.probes[["src", "dst", "repeat"]].values.tolist() == [
        ["h1", "h2", 0], ["h1", "h2", 1], ["h2", "h1", 0]]
    assert (tmp_path / "ds" / "hosts.csv").read_text().splitlines()[1:] == [
        "h1,10.0.0.1,A", "h2,10.0.0.2,B"]  # one row a host: its first address
    hosts.write_text("host,address\nh1,10.0.0.1\nh2,10.0.0.2\nh2,10.0.0.1\n")
    assert main(["import", "pscheduler", str(tmp_path / "archive"), "--hosts", str(hosts),
                 "-o", str(tmp_path / "ds2")]) != 0
    assert "hosts.csv: address '10.0.0.1' is given to two hosts, 'h1' and 'h2'" in \
        capsys.readouterr().err
    from tomography.model.dataset import read_hosts_table
    hosts.write_text("host,address\nh1,10.0.0.1\nh1,ps-a.example.net\n")
    with pytest.raises(DatasetError, match="duplicate host"):  # other commands: one row a host
        read_hosts_table(hosts)


@pytest.mark.parametrize("value", [1e308, 0, -4, 2.5, "abc", 129, True])
def test_a_stream_count_no_reader_would_accept_is_refused_at_import(tmp_path: Path,
                                                                    value) -> None:
    run = _run("10.0.0.1", "10.0.0.2", _result(9e8))
    run["task"]["test"]["spec"]["parallel"] = value
    (tmp_path / "run.json").write_text(json.dumps(run))
    with pytest.raises(DatasetError, match=r"run.json, item 1: spec.parallel .* is not a "
                                           r"number of streams \(a whole number from 1 to 128\)"):
        read_pscheduler([tmp_path / "run.json"])
    assert main(["import", "pscheduler", str(tmp_path / "run.json"),
                 "-o", str(tmp_path / "ds")]) == 2
    assert not (tmp_path / "ds").exists()


def test_a_hosts_file_that_contradicts_the_documents_names_is_warned_of(tmp_path: Path,
                                                                        capsys) -> None:
    docs = []
    for src, dst, lead, other in (("10.0.0.1", "10.0.0.2", "ps-a.example.net",
                                   "ps-b.example.net"),
                                  ("10.0.0.2", "10.0.0.1", "ps-b.example.net",
                                   "ps-a.example.net")):
        run = _run(src, dst, _result(9e8))
        run["participants"] = [lead, other]
        docs.append(run)
    (tmp_path / "runs.json").write_text(json.dumps(docs))
    swapped = tmp_path / "hosts.csv"   # addresses of a and b swapped, names right
    swapped.write_text("host,address\na,10.0.0.2\na,ps-a.example.net\n"
                       "b,10.0.0.1\nb,ps-b.example.net\n")
    assert main(["import", "pscheduler", str(tmp_path / "runs.json"), "--hosts", str(swapped),
                 "-o", str(tmp_path / "ds")]) == 0
    err = capsys.readouterr().err
    assert "warning: the hosts file gives 10.0.0.1 to b but ps-a.example.net to a" in err
