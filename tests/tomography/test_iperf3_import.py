"""``tomography import iperf3``: iperf3 -J reports (written here to iperf3's schema) as a dataset."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.tomography.iperf3_reports import report as _report, write as _write
from tomography.cli import main
from tomography.model.dataset import read_hosts_table, read_measurement
from tomography.model.errors import DatasetError
from tomography.model.dataset.iperf3 import import_iperf3, read_iperf3
from tomography.model.weights import probe_weights


def test_a_directory_of_reports_becomes_the_dataset_a_mesh_writes(tmp_path: Path, capsys) -> None:
    logs = tmp_path / "logs"
    _write(logs, "a-b.json", _report("10.0.0.1", "10.0.0.2", 9.4e8))
    _write(logs, "a-b-R.json", _report("10.0.0.1", "10.0.0.2", 8e8, reverse=True))
    _write(logs / "udp", "a-c-udp.json", _report("10.0.0.1", "10.0.0.3", 5e7, udp=True))
    _write(logs, "c-a-P4.json", _report("10.0.0.3", "10.0.0.1", 4e9, streams=4))
    _write(logs, "b-c-server.json", _report("10.0.0.3", "10.0.0.2", 1e9, server=True))
    failed = _report("10.0.0.2", "10.0.0.3", 0)  # connected: a row with its error
    failed["end"] = {}
    failed["error"] = "the server has terminated"
    _write(logs, "b-c-failed.json", failed)
    nowhere = {"start": {"connected": []}, "intervals": [], "end": {},
               "error": "unable to create a new stream"}
    _write(logs, "lost.json", nowhere)
    (logs / "notes.txt").write_text("not read: only *.json")
    hosts = tmp_path / "hosts.csv"
    hosts.write_text("host,address,label\nn1,10.0.0.1,A\nn2,10.0.0.2,A\nn3,10.0.0.3,B\n")
    assert main(["import", "iperf3", str(logs), "--hosts", str(hosts),
                 "-o", str(tmp_path / "ds")]) == 0
    out = capsys.readouterr().out
    assert "imported 6 iperf3 tests" in out and "1 UDP iperf3 test kept apart" in out
    assert "1 failed report names no endpoints (skipped)" in out
    m = read_measurement(tmp_path / "ds")
    assert m.meta["method"] == "iperf3" and m.meta["source"] == "iperf3-json"
    p = m.probes.set_index(["src", "dst", "protocol"])
    assert p.loc[("n1", "n2", "tcp"), "bits_per_second"] == 9.4e8 * 0.99  # the receiver's count
    assert p.loc[("n2", "n1", "tcp"), "bits_per_second"] == 8e8 * 0.99   # -R: server sends
    assert p.loc[("n1", "n3", "udp"), "bits_per_second"] == 5e7    # UDP: end.sum
    parallel = p.loc[("n3", "n1", "tcp")]
    assert parallel["streams"] == 4 and parallel["retransmits"] == 8
    assert parallel["rtt_ms"] == 0.55                               # mean of the senders' RTT
    assert parallel["duration_s"] == 10.04 and parallel["bytes"] == int(4e9 * 10 / 8 * 0.99)
    server = m.probes[(m.probes["src"] == "n2") & (m.probes["dst"] == "n3")]
    assert server["bits_per_second"].dropna().tolist() == [1e9 * 0.99]  # the server's report
    errors = m.probes[m.probes["error"] != ""]
    assert errors[["src", "dst", "error"]].values.tolist() == [
        ["n2", "n3", "the server has terminated"]]
    assert m.labels == {"n1": "A", "n2": "A", "n3": "B"}
    raw = sorted(f.name for f in (tmp_path / "ds" / "raw").iterdir())
    assert "n1--n2--0.json" in raw and "n1--n3--0--udp.json" in raw and len(raw) == 6
    assert json.loads((tmp_path / "ds" / "raw" / "n1--n2--0.json").read_text())["start"]
    weights = probe_weights(m).toarray()
    assert weights[0, 2] == pytest.approx(4e9 * 0.99 / 1e6)   # n3 -> n1 only: UDP n1 -> n3 not
    assert main(["cluster", str(tmp_path / "ds")]) == 0


def test_without_hosts_each_address_is_a_host(tmp_path: Path) -> None:
    f = _write(tmp_path, "t.json", _report("10.0.0.1", "10.0.0.2", 9.4e8))
    assert main(["import", "iperf3", str(f), "-o", str(tmp_path / "ds")]) == 0
    assert read_measurement(tmp_path / "ds").host_names == ["10.0.0.1", "10.0.0.2"]


def test_an_address_nobody_names_and_a_file_that_is_no_report(tmp_path: Path) -> None:
    f = _write(tmp_path / "logs", "x.json", _report("10.0.0.1", "10.0.0.9", 9.4e8))
    hosts = tmp_path / "hosts.csv"
    hosts.write_text("host,address\nn1,10.0.0.1\n")
    with pytest.raises(DatasetError, match=r"x.json names '10.0.0.9', which the hosts file"):
        import_iperf3([f], tmp_path / "ds", hosts=read_hosts_table(hosts))
    f.write_text("Connecting to host 10.0.0.9, port 5201")
    with pytest.raises(DatasetError, match=r"x.json, line 1: not valid JSON.*iperf3 -J writes "
                                           r"one JSON document"):
        import_iperf3([f], tmp_path / "ds")


# What a reviewer found on real iperf3 3.16 reports, each written here in iperf3's shape.

def _v316(report: dict, *, server: bool = False, cookie: str | None = None) -> dict:
    """iperf3 3.16's fields: the test cookie, ``"sender"`` in each stream entry, and on the
    side that did not send ``mean_rtt`` 0 (iperf3 measures the RTT where it sends)."""
    start = report["start"]
    if cookie is not None:
        start["cookie"] = cookie
    sends = bool(start["test_start"]["reverse"]) == server
    for stream in report["end"].get("streams", []):
        for side in ("sender", "receiver"):
            stream[side]["sender"] = sends
        if not sends:
            stream["sender"].update(mean_rtt=0, min_rtt=0, max_rtt=0)
    return report


def _server_of(client: dict) -> dict:
    """The server's report of the client's test: ``connected`` seen from the other end."""
    server = json.loads(json.dumps(client))
    start = server["start"]
    start.pop("connecting_to")
    for c in start["connected"]:
        c.update(local_host=c["remote_host"], remote_host=c["local_host"],
                 local_port=c["remote_port"], remote_port=c["local_port"])
    start["accepted_connection"] = {"host": start["connected"][0]["remote_host"],
                                    "port": start["connected"][0]["remote_port"]}
    start["timestamp"]["timesecs"] += 1  # the server's clock
    return server


def test_the_client_and_server_reports_of_one_test_are_one_row(tmp_path: Path,
                                                              capsys) -> None:
    logs = tmp_path / "logs"
    for name, (dst, rate, reverse, cookie) in {"forward": ("10.0.0.2", 9.4e8, False, "a" * 36),
                                               "reverse": ("10.0.0.3", 6e8, True, "b" * 36)
                                               }.items():
        test = _report("10.0.0.1", dst, rate, reverse=reverse)
        _write(logs / "server", f"{name}.json", _v316(_server_of(test), server=True,
                                                      cookie=cookie))
        _write(logs / "client", f"{name}.json", _v316(test, cookie=cookie))
    old = _report("10.0.0.2", "10.0.0.3", 5e8)  # no cookie: the start time and connection
    _write(logs / "client", "old.json", old)
    _write(logs / "server", "old.json", _server_of(old))
    later = _report("10.0.0.2", "10.0.0.3", 5.2e8)
    later["start"]["timestamp"]["timesecs"] += 3600
    _write(logs / "client", "later.json", later)
    assert main(["import", "iperf3", str(logs), "-o", str(tmp_path / "ds")]) == 0
    assert "imported 4 iperf3 tests" in capsys.readouterr().out
    assert "3 duplicates skipped (the same test read twice)" in \
        str(import_iperf3([logs], tmp_path / "ds", overwrite=True).describe())
    p = read_measurement(tmp_path / "ds").probes
    assert p[["src", "dst", "bits_per_second", "retransmits", "repeat"]].values.tolist() == [
        ["10.0.0.1", "10.0.0.2", 9.4e8 * 0.99, 2, 0],                  # client/forward.json
        ["10.0.0.2", "10.0.0.3", 5.2e8 * 0.99, 2, 0],                  # client/later.json
        ["10.0.0.2", "10.0.0.3", 5e8 * 0.99, 2, 1],                    # client/old.json
        ["10.0.0.3", "10.0.0.1", 6e8 * 0.99, 2, 0]]                    # client/reverse.json
    # -R: the client's report has no RTT (mean_rtt 0), the server's, which sent, has it
    assert p["rtt_ms"].tolist()[0] == 0.4 and p["rtt_ms"].tolist()[3] == 0.4
    raw = json.loads((tmp_path / "ds" / "raw" / "10.0.0.1--10.0.0.2--0.json").read_text())
    assert "connecting_to" in raw["start"]  # the client's report is kept


def test_no_rtt_measured_is_an_empty_rtt(tmp_path: Path) -> None:
    """A -R client report of iperf3 3.16: ``"sender": false`` entries, ``mean_rtt`` 0."""
    f = _write(tmp_path, "r.json", _v316(_report("10.0.0.1", "10.0.0.3", 6e8, reverse=True)))
    import_iperf3([f], tmp_path / "ds")
    header, row = (tmp_path / "ds" / "probes.csv").read_text().splitlines()
    values = dict(zip(header.split(","), row.split(",")))
    assert values["rtt_ms"] == "" and values["retransmits"] == "2"  # a count, not 2.0


def test_failed_reports_never_take_a_host_from_system_info(tmp_path: Path, capsys) -> None:
    busy = _report("10.0.0.1", "10.0.0.2", 0)
    busy["start"]["connected"], busy["end"] = [], {}
    del busy["start"]["test_start"]
    busy["error"] = "the server is busy running a test. try again later"
    refused = {"start": {"connected": [], "version": "iperf 3.16",
                         "system_info": "Linux ps-a 6.1.0 x86_64"}, "intervals": [], "end": {},
               "error": "unable to connect to server: Connection refused"}
    reverse = _report("10.0.0.1", "10.0.0.3", 0, reverse=True)  # connected, then failed
    del reverse["start"]["test_start"]
    reverse["end"], reverse["error"] = {}, "unable to receive parameters from client"
    logs = tmp_path / "logs"
    for name, doc in (("busy", busy), ("refused", refused), ("reverse", reverse),
                      ("ok", _report("10.0.0.1", "10.0.0.2", 9e8))):
        _write(logs, f"{name}.json", doc)
    assert main(["import", "iperf3", str(logs), "-o", str(tmp_path / "ds")]) == 0
    out = capsys.readouterr().out
    assert "2 failed reports name no endpoints (skipped)" in out
    assert "1 failed report without start.test_start: who sent unknown (skipped)" in out
    m = read_measurement(tmp_path / "ds")
    assert m.host_names == ["10.0.0.1", "10.0.0.2"] and len(m.probes) == 1  # no "ps-a"


def test_a_report_of_a_test_that_ran_without_its_rate_is_an_error(tmp_path: Path) -> None:
    doc = _report("10.0.0.1", "10.0.0.2", 9.4e8)
    del doc["end"]["sum_received"]["bits_per_second"]
    f = _write(tmp_path, "norate.json", doc)
    with pytest.raises(DatasetError, match=r"norate.json: no end.sum_received.bits_per_second"):
        import_iperf3([f], tmp_path / "ds")


def test_ipv4_and_ipv6_addresses_of_one_host(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    _write(logs, "v4.json", _report("10.0.0.1", "10.0.0.2", 9.4e8))
    _write(logs, "v6.json", _report("2001:db8::1", "2001:db8::2", 9.3e8))
    hosts = tmp_path / "hosts.csv"
    hosts.write_text("host,address\nn1,10.0.0.1\nn1,2001:db8::1\nn2,10.0.0.2\nn2,2001:db8::2\n")
    assert main(["import", "iperf3", str(logs), "--hosts", str(hosts),
                 "-o", str(tmp_path / "ds")]) == 0
    m = read_measurement(tmp_path / "ds")
    assert m.probes[["src", "dst", "repeat"]].values.tolist() == [["n1", "n2", 0],
                                                                  ["n1", "n2", 1]]
    assert m.hosts["address"].tolist() == ["10.0.0.1", "10.0.0.2"]


@pytest.mark.parametrize("value", [1e308, 0, "abc", 500])
def test_a_stream_count_no_reader_would_accept_is_refused_at_import(tmp_path: Path,
                                                                    value) -> None:
    report = _report("10.0.0.1", "10.0.0.2", 9e8)
    report["start"]["test_start"]["num_streams"] = value
    _write(tmp_path / "logs", "a.json", report)
    assert main(["import", "iperf3", str(tmp_path / "logs"), "-o", str(tmp_path / "ds")]) == 2
    assert not (tmp_path / "ds").exists()
    with pytest.raises(DatasetError, match=r"a.json: start.test_start.num_streams .* is not a "
                                           r"number of streams"):
        read_iperf3([tmp_path / "logs"])


def test_a_hosts_file_that_swaps_two_hosts_addresses_is_warned_of(tmp_path: Path,
                                                                   capsys) -> None:
    logs = tmp_path / "logs"
    _write(logs, "a.json", _report("10.0.0.1", "10.0.0.2", 9e8))   # written on machine 10.0.0.1
    _write(logs, "b.json", _report("10.0.0.2", "10.0.0.1", 8e8))
    for doc in ("a.json", "b.json"):   # the machines' own names in the reports
        report = json.loads((logs / doc).read_text())
        local = report["start"]["connected"][0]["local_host"]
        report["start"]["system_info"] = f"Linux {'ps-a' if local == '10.0.0.1' else 'ps-b'} 6.1"
        (logs / doc).write_text(json.dumps(report))
    right = tmp_path / "right.csv"
    right.write_text("host,address\nps-a,10.0.0.1\nps-b,10.0.0.2\n")
    swapped = tmp_path / "swapped.csv"
    swapped.write_text("host,address\nps-a,10.0.0.2\nps-b,10.0.0.1\n")
    assert main(["import", "iperf3", str(logs), "--hosts", str(right), "-o",
                 str(tmp_path / "ok")]) == 0
    assert "warning" not in capsys.readouterr().err
    assert main(["import", "iperf3", str(logs), "--hosts", str(swapped), "-o",
                 str(tmp_path / "bad")]) == 0
    err = capsys.readouterr().err
    assert "warning: the hosts file gives 10.0.0.1 to ps-b but ps-a to ps-a" in err
    assert "swapped?" in err


@pytest.mark.slow   # a subprocess per command
@pytest.mark.parametrize("content, says", [
    (b"[" * 100_000 + b"]" * 100_000, "nested deeper than 100 levels"),
    (b'{"start": ' * 200 + b"1" + b"}" * 200, "nested deeper"),
    (b"\xff\xfe{\x00}\x00", "not UTF-8 text"),
])
def test_a_hostile_report_is_refused_in_one_line(tmp_path: Path, content: bytes,
                                                 says: str) -> None:
    from tests.hostile.common import refused

    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "x.json").write_bytes(content)
    (tmp_path / "run.json").write_bytes(content)
    for argv in (["import", "iperf3", tmp_path / "logs", "-o", tmp_path / "a"],
                 ["import", "pscheduler", tmp_path / "run.json", "-o", tmp_path / "b"]):
        refused(argv, says=[says], watch=[tmp_path], timeout=20)
