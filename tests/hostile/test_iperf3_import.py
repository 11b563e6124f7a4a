"""Hostile iperf3 reports (issue 39): ``tomography import iperf3`` refuses them in one line
naming the report and the field, and writes nothing, anywhere (``import pscheduler`` goes
through the same door for host names).

* host names that would become paths outside the dataset (``..``, ``/``), or no names at all
  (NUL, a line end, HTML, 100,000 characters);
* figures no test gives: infinite, NaN, 31-digit, negative or boolean rates, negative bytes
  or retransmits, a test of zero or negative seconds, a start time that is text;
* parts of the wrong type (``end.sum_sent`` a string, ``end.streams`` a number);
* a report that is a FIFO, and a FIFO or a link to ``/dev/zero`` inside a directory of
  reports.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from tests.hostile.common import refused, refused_here
from tests.tomography.iperf3_reports import report, write


def _import(tmp_path: Path, doc: dict | str, *, name: str = "t.json") -> tuple[list, Path]:
    """The argv importing one report (``doc``: a document, or its text as written)."""
    logs = tmp_path / "logs"
    logs.mkdir(exist_ok=True)
    (logs / name).write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return ["import", "iperf3", logs, "-o", tmp_path / "site" / "ds"], logs / name


def _nothing_written(tmp_path: Path) -> None:
    assert not (tmp_path / "site").exists(), "a refused import left a dataset"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["logs"], "written outside"


@pytest.mark.parametrize("name", ["../../../escaped", "a/b", "<b>x</b>", "x" * 100_000,
                                  "a\x00b", "a\nb", "..", "-rf"])
def test_a_host_name_that_is_no_safe_file_name_is_refused(tmp_path: Path, name: str) -> None:
    argv, where = _import(tmp_path, report(name, "10.0.0.2", 9.4e8))
    line = refused_here(argv, says=[r"t\.json", "host name"])
    assert len(line) < 400, "the name is echoed whole"
    _nothing_written(tmp_path)


@pytest.mark.parametrize("name", ["../../../escaped", "a/b", "a\x00b", "<script>x</script>",
                                  "y" * 100_000])
def test_pscheduler_names_go_through_the_same_check(tmp_path: Path, name: str) -> None:
    from tests.tomography.test_pscheduler import _result, _run

    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "runs.json").write_text(json.dumps([_run(name, "10.0.0.2",
                                                                  _result(9.4e8))]))
    refused_here(["import", "pscheduler", tmp_path / "logs", "-o", tmp_path / "site" / "ds"],
                 says=[r"runs\.json", "host name"])
    _nothing_written(tmp_path)


@pytest.mark.parametrize("key, value, says", [
    ("throughput-bits", 1e308, "throughput-bits"), ("throughput-bits", -1, "throughput-bits"),
    ("retransmits", -3, "summary.summary.retransmits"),
    ("retransmits", 1e300, "summary.summary.retransmits"),
    ("end", -10.0, "summary.summary.end"), ("end", 1e12, "end - start"),
])
def test_pscheduler_figures_are_checked_alike(tmp_path: Path, key: str, value: float,
                                              says: str) -> None:
    from tests.tomography.test_pscheduler import _result, _run

    result = _result(9.4e8)
    result["summary"]["summary"][key] = value
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "runs.json").write_text(json.dumps([_run("10.0.0.1", "10.0.0.2",
                                                                  result)]))
    refused_here(["import", "pscheduler", tmp_path / "logs", "-o", tmp_path / "site" / "ds"],
                 says=[r"runs\.json", re.escape(says)])
    _nothing_written(tmp_path)


RATE = "end.sum_received.bits_per_second"


@pytest.mark.parametrize("part, key, value, says", [
    ("sum_received", "bits_per_second", "1e308", RATE),
    ("sum_received", "bits_per_second", "1e400", RATE),
    ("sum_received", "bits_per_second", "1" * 31, RATE),
    ("sum_received", "bits_per_second", "NaN", RATE),
    ("sum_received", "bits_per_second", "-5", RATE),
    ("sum_received", "bits_per_second", "true", RATE),
    ("sum_received", "bits_per_second", '"fast"', RATE),
    ("sum_received", "bytes", "-1", "end.sum_received.bytes"),
    ("sum_received", "bytes", "1e300", "end.sum_received.bytes"),
    ("sum_received", "seconds", "0", "end.sum_received.seconds"),
    ("sum_received", "seconds", "-3", "end.sum_received.seconds"),
    ("sum_sent", "retransmits", "-2", "end.sum_sent.retransmits"),
    ("sum_sent", "retransmits", "2.5", "end.sum_sent.retransmits"),
])
def test_figures_no_test_gives_are_refused(tmp_path: Path, part: str, key: str, value: str,
                                           says: str) -> None:
    doc = report("10.0.0.1", "10.0.0.2", 9.4e8)
    doc["end"][part][key] = "@@"
    argv, _ = _import(tmp_path, json.dumps(doc).replace('"@@"', value))
    refused_here(argv, says=[r"t\.json", says.replace(".", r"\.")])
    _nothing_written(tmp_path)


@pytest.mark.parametrize("change, says", [
    (lambda d: d["start"]["timestamp"].update(timesecs="yesterday"), r"start\.timestamp"),
    (lambda d: d["end"].update(sum_sent="lots"), r"end\.sum_sent"),
    (lambda d: d["end"].update(sum_received=[1, 2]), r"end\.sum_received"),
    (lambda d: d["end"].update(streams=7), r"end\.streams"),
])
def test_parts_of_the_wrong_type_are_refused(tmp_path: Path, change, says: str) -> None:
    doc = report("10.0.0.1", "10.0.0.2", 9.4e8)
    change(doc)
    argv, _ = _import(tmp_path, doc)
    refused_here(argv, says=[r"t\.json", says])
    _nothing_written(tmp_path)


def test_what_the_import_writes_every_reader_accepts(tmp_path: Path) -> None:
    """The limits at the door are the dataset's: an import that passes reads back."""
    from tomography.cli import main

    doc = report("10.0.0.1", "10.0.0.2", 1e14)      # 100 Tbit/s, the largest rate taken
    doc["end"]["sum_sent"]["retransmits"] = 0
    argv, _ = _import(tmp_path, doc)
    assert main([str(a) for a in argv]) == 0
    assert main(["info", str(tmp_path / "site" / "ds")]) == 0


def test_a_fifo_or_a_device_among_the_reports_is_refused_unread(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    write(logs, "good.json", report("10.0.0.1", "10.0.0.2", 9.4e8))
    os.mkfifo(logs / "pipe.json")
    refused(["import", "iperf3", logs, "-o", tmp_path / "site" / "ds"],
            says=[r"pipe\.json", r"not a regular file \(a named pipe"], watch=[tmp_path],
            timeout=20)
    refused(["import", "iperf3", logs / "pipe.json", "-o", tmp_path / "site" / "ds"],
            says=[r"pipe\.json", r"not a regular file \(a named pipe"], watch=[tmp_path],
            timeout=20)
    (logs / "pipe.json").unlink()
    (logs / "zero.json").symlink_to("/dev/zero")
    refused_here(["import", "iperf3", logs, "-o", tmp_path / "site" / "ds"],
                 says=[r"zero\.json", "character device"])
    _nothing_written(tmp_path)
