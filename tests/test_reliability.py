"""Bad input, fuzzed: every reader answers a clear error naming its file, or reads; never a crash.

Property-based (Hypothesis) over the readers a user feeds: dataset files,
topology files, Gauge XML, hosts files and pScheduler results.  Each example
starts from a valid file and applies one fault of a class (a field replaced
by a hostile value, a cut, binary garbage, a line duplicated, dropped or
given a column more or less, a byte-order mark, CRLF line ends).  The
property: the reader returns, or raises the toolkit's error, whose message
names the file; and the CLI on the dataset exits 0 or 2 with one line on
standard error, never a traceback.  docs/reliability.md summarises the
classes and outcomes.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import SMALL, write_files
from tomography.cli import main
from tomography.model.dataset import read_hosts_table, read_measurement
from tomography.model.errors import TomographyError
from tomography.export.gauge import read_gauge
from tomography.model.dataset.pscheduler import read_pscheduler
from tomography.model.topology import parse_topology

ROOT = Path(__file__).resolve().parents[1]
GAUGE = (ROOT / "datasets" / "gauges" / "gridlab-8.gauge.xml").read_text(encoding="utf-8")

HOSTILE = ["", " ", "-1", "-0", "0", "1.5", "nan", "NaN", "inf", "-inf", "1e400", "9" * 31,
           "99999999", "abc", "a", "b", "zz", "true", "null", "\x00", "\ufeff7", "é", "1,2",
           '"', "0x10", "1_000", "+3", " 4 ", "\t"]
SETTINGS = settings(max_examples=120, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


@st.composite
def faults(draw, text: str) -> bytes:
    """One fault of a class applied to ``text``."""
    kind = draw(st.sampled_from(["field", "cut", "garbage", "duplicate", "drop", "column",
                                 "bom", "crlf", "empty"]))
    lines = text.split("\n")
    if kind == "field":
        row = draw(st.integers(0, max(len(lines) - 2, 0)))
        cells = lines[row].split(",")
        cells[draw(st.integers(0, len(cells) - 1))] = draw(st.sampled_from(HOSTILE))
        lines[row] = ",".join(cells)
        return "\n".join(lines).encode("utf-8")
    if kind == "cut":
        return text.encode()[:draw(st.integers(0, len(text.encode()) - 1))]
    if kind == "garbage":
        at = draw(st.integers(0, len(text.encode())))
        junk = draw(st.binary(min_size=1, max_size=12))
        return text.encode()[:at] + junk + text.encode()[at:]
    if kind == "duplicate":
        row = draw(st.integers(0, max(len(lines) - 2, 0)))
        return "\n".join(lines[:row + 1] + lines[row:]).encode()
    if kind == "drop":
        row = draw(st.integers(0, max(len(lines) - 2, 0)))
        return "\n".join(lines[:row] + lines[row + 1:]).encode()
    if kind == "column":
        row = draw(st.integers(0, max(len(lines) - 2, 0)))
        lines[row] = lines[row] + ",x" if draw(st.booleans()) else lines[row].rpartition(",")[0]
        return "\n".join(lines).encode()
    if kind == "bom":
        return b"\xef\xbb\xbf" + text.encode()
    if kind == "crlf":
        return text.replace("\n", "\r\n").encode()
    return b""


def _names_the_file(exc: BaseException, name: str) -> bool:
    return name in str(exc)


def _reads_or_names_the_file(reader, name: str, content: bytes) -> None:
    """``reader`` on a file ``name`` holding ``content`` reads it or names the file."""
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / name
        f.write_bytes(content)
        try:
            reader(f)
        except TomographyError as exc:
            assert _names_the_file(exc, name), f"error does not name {name}: {exc}"


@pytest.mark.slow  # over 2 s
@SETTINGS
@given(data=st.data(), name=st.sampled_from(sorted(SMALL)))
def test_dataset_files(data, name) -> None:
    broken = data.draw(faults(SMALL[name]))
    with tempfile.TemporaryDirectory() as tmp:
        d = write_files(Path(tmp) / "d", SMALL)
        (d / name).write_bytes(broken)
        try:
            read_measurement(d)
        except TomographyError as exc:
            assert _names_the_file(exc, name), f"error does not name {name}: {exc}"
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main(["cluster", str(d), "--resamples", "0"])
        assert code in (0, 2), err.getvalue()
        if code == 2:
            assert err.getvalue().startswith("tomography: error: ")
            assert err.getvalue().count("\n") == 1, err.getvalue()


TOPOLOGY = {"name": "t", "routers": ["A", "B", "C"],
            "host_defaults": {"nic": "1Gbit/s", "latency": "50us"},
            "links": [{"between": ["A", "B"], "capacity": "1Gbit/s", "latency": "1ms"},
                      {"between": ["B", "C"], "capacity": "100Mbit/s", "latency": "1ms"}],
            "clusters": [{"name": "a", "router": "A", "hosts": 2, "label": "s/a"},
                         {"name": "c", "router": "C", "hosts": 3}]}


def _paths(value, prefix=()):
    """Every path to a value inside nested dicts and lists."""
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, prefix + (i,))


def _mutated(document, path, value, delete):
    """A copy of ``document`` with the value at ``path`` replaced, or its key deleted."""
    copied = copy.deepcopy(document)
    parent = copied
    for key in path[:-1]:
        parent = parent[key]
    if delete and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return copied


PATHS = [p for p in _paths(TOPOLOGY) if p]


@SETTINGS
@given(path=st.sampled_from(PATHS),
       value=st.one_of(st.sampled_from(HOSTILE), st.integers(-5, 10**6), st.none(),
                       st.floats(allow_nan=True), st.lists(st.text(max_size=3), max_size=2),
                       st.sampled_from(["1e30Gbit/s", "0Mbit/s", "-1ms", "1Gbit", "fast"])),
       delete=st.booleans())
def test_topology_files(path, value, delete) -> None:
    try:
        parse_topology(_mutated(TOPOLOGY, path, value, delete), source="t.yaml")
    except TomographyError as exc:
        assert "t.yaml" in str(exc)


@SETTINGS
@given(data=st.data())
def test_gauge_files(data) -> None:
    attrs = GAUGE.split('"')
    at = data.draw(st.integers(0, len(attrs) // 2 - 1)) * 2 + 1    # an attribute value
    kind = data.draw(st.sampled_from(["value", "cut", "garbage"]))
    if kind == "value":
        attrs[at] = data.draw(st.sampled_from(HOSTILE + ["1e300", "-0.5", "fs0", "MB/s"]))
        text = '"'.join(attrs).encode()
    elif kind == "cut":
        text = GAUGE.encode()[:data.draw(st.integers(0, len(GAUGE) - 1))]
    else:
        where = data.draw(st.integers(0, len(GAUGE)))
        text = GAUGE.encode()[:where] + data.draw(st.binary(min_size=1, max_size=8)) \
            + GAUGE.encode()[where:]
    _reads_or_names_the_file(read_gauge, "g.gauge.xml", text)


HOSTS = "host,address,label\nh1,10.0.0.1,s/a\nh2,10.0.0.2,s/b\nh3,10.0.0.3,s/b\n"


@SETTINGS
@given(data=st.data())
def test_hosts_files(data) -> None:
    _reads_or_names_the_file(read_hosts_table, "hosts.csv", data.draw(faults(HOSTS)))


RUN = {"task": {"test": {"type": "throughput", "spec": {"source": "a", "dest": "b"}},
                "tool": "iperf3"},
       "run": {"start-time": "2026-11-23T10:00:00Z"},
       "result": {"schema": 1, "succeeded": True, "diags": "", "intervals": [],
                  "summary": {"summary": {"throughput-bits": 9.4e8, "sent": 1, "retransmits": 0,
                                          "start": 0, "end": 10}}}}
RUN_PATHS = [p for p in _paths(RUN) if p]


@SETTINGS
@given(path=st.sampled_from(RUN_PATHS),
       value=st.one_of(st.sampled_from(HOSTILE), st.none(), st.floats(allow_nan=True),
                       st.integers(), st.booleans(), st.dictionaries(st.text(max_size=2),
                                                                     st.none(), max_size=1)),
       delete=st.booleans())
def test_pscheduler_results(path, value, delete) -> None:
    _reads_or_names_the_file(lambda f: read_pscheduler([f]), "run.json",
                             json.dumps(_mutated(RUN, path, value, delete)).encode())
