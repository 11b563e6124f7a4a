"""perfSONAR's throughput results as a probe dataset: cluster a site's existing meshes.

pScheduler runs throughput tests (iperf3, iperf2 or nuttcp underneath) and
archives each run as JSON.  :func:`read_pscheduler` reads the layouts
perfSONAR writes (a JSON object, a list, JSON lines, or a directory of
such files):

* a task and its run: ``{"task": {"test": ..., "tool": ...}, "run": ...,
  "result": ...}``, or a bare result with ``source`` and ``dest`` beside it;
* a run record, as pScheduler's REST API gives ``/tasks/<id>/runs/<id>``:
  ``start-time``, ``participants``, ``result-merged`` (``result-full``
  holds each participant's part and is not read);
* what an archiver receives (``{"data": ..., "result": {"test", "tool",
  "run", "task", "participants", "result"}}``) and what the ``http``
  archiver posts (the inner ``result`` object);
* esmond's metadata (``source``, ``destination``, ``input-source``,
  ``input-destination``, ``tool-name``, ``ip-transport-protocol``,
  ``bw-parallel-streams``, ``event-types``) with each event type's base
  data inline, as ``"data": [{"ts": ..., "val": ...}]`` beside its
  ``event-type`` (``throughput``, ``failures``, ``packet-retransmits``);
* perfSONAR 5's OpenSearch documents (``test.type``, ``test.spec``,
  ``result.throughput``, ``meta.source.ip``, ``meta.destination.ip``,
  ``pscheduler.tool``, ``pscheduler.start_time``), bare or as search hits
  (``hits.hits[]._source``).

The result of pScheduler's throughput schema has ``succeeded``, ``error``,
``intervals`` and ``summary``: ``summary.summary`` is the whole test (all
streams together: the pair's rate, one row), ``summary.streams`` one entry
per parallel stream (they give ``streams`` and the RTT, never rows of
their own).  Rates are the receiver's when the result gives one
(``receiver-throughput-bits``), as the toolkit's own iperf3 meshes record,
else the sender's.

Directions: the toolkit's ``src -> dst`` is the way the data flows.  A
``reverse`` test (the receiver initiates) sends from the spec's ``dest``
to its ``source``; a task without ``source`` sends from its lead
participant (the first of ``participants``), as perfSONAR's archivers
take it (a ``null`` participant is unknown: a run whose sender or
receiver is unknown is skipped and counted).  A run record without its
task (no spec) cannot say whether the test was reversed: its direction is
the participants' order, and the import warns how many runs it took so.
OpenSearch documents of a task without ``source`` take the pipeline's
``meta.source.ip`` and ``meta.destination.ip``.  UDP tests (``udp``;
esmond's ``ip-transport-protocol``) are rows with ``protocol`` ``udp``,
kept out of the TCP weights.  Documents that are not throughput results,
loopback tests and the same run read twice (an archiver's input and what
it posted, one document in two files) are skipped and counted.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable, Iterator

import pandas as pd

from tomography.dataset import MeasurementWriter
from tomography.dataset.lock import DIR_MODE, LOCK_NAME, file_opener
from tomography.errors import DatasetError
from tomography.topology import MAX_BANDWIDTH
from tomography.units import counted, listed

__all__ = ["read_pscheduler", "import_pscheduler", "ImportSummary", "write_probe_import",
           "stream_count", "MAX_STREAMS"]

UNRECOGNISED = "unrecognised"
NOT_THROUGHPUT = "that {are} not {a}throughput result{s}"
LOOPBACK = "loopback test{s} (source and destination one host) skipped"
NO_END = "run{s} with a null participant name{v} no sender or receiver (skipped)"
ONE_HOST = "test{s} between two addresses of one host (the hosts file) skipped"
SAME_RUN_SECONDS = 60.0
"""Two copies of one test start within this many seconds of each other (the client's
and the server's clocks, an archive's rounding)."""
_LATENCY_EVENTS = {"histogram-owdelay": "latency", "histogram-ttl": "latency",
                   "packet-loss-rate": "latency", "packet-count-lost": "latency",
                   "packet-count-sent": "latency", "packet-duplicates": "latency",
                   "packet-reorders": "latency", "time-error-estimates": "latency",
                   "histogram-rtt": "rtt", "packet-loss-rate-bidir": "rtt",
                   "packet-trace": "trace", "path-mtu": "trace"}
"""esmond event types of the other tests (owamp/powstream, ping, traceroute)."""


def _documents(path: Path) -> Iterator[tuple[Path, int, Any]]:
    """Every document of a file or directory: a JSON object or list (an OpenSearch search
    response's hits), or JSON lines, each read within :mod:`tomography.safe_load`'s limits
    of size, nesting and number of values."""
    from tomography.safe_load import DocumentError, load_json, read_bounded

    files = sorted(p for p in path.rglob("*") if p.is_file() and p.name != LOCK_NAME) \
        if path.is_dir() else [path]
    for file in files:
        data, _ = read_bounded(file, kind="pScheduler result")
        try:
            doc = load_json(data, what=str(file), kind="pScheduler result")
        except DocumentError as exc:
            if not str(exc).split(": ", 1)[-1].startswith("not valid JSON"):
                raise   # too large, too deep, too many values: not worth a second look
            lines = data.split(b"\n")
            if len([line for line in lines if line.strip()]) < 2:
                raise DatasetError(f"neither JSON nor JSON lines: {exc.reason}", path=file,
                                   line=exc.line) from None
            for number, raw in enumerate(lines, start=1):
                if raw.strip():
                    try:
                        yield file, number, load_json(raw, what=str(file),
                                                      kind="pScheduler result")
                    except DocumentError as bad:
                        raise DatasetError(f"neither JSON nor JSON lines: {bad.reason}",
                                           path=file, line=number) from None
            continue
        hits = _get(doc, "hits", "hits")  # an OpenSearch search response
        items = hits if isinstance(hits, list) else doc if isinstance(doc, list) else [doc]
        for i, item in enumerate(items):
            yield file, i + 1, item


def _get(doc: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(doc, dict):
            return None
        doc = doc.get(key)
    return doc


def _time(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        number = _numeric(value)
        if number is not None:  # esmond's "ts": "1497971206"
            return number
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    return None


def _seconds(value: Any) -> float | None:
    """Seconds of a number or an ISO 8601 duration such as ``PT10S`` (``PT1M30S``)."""
    number = _number(value)
    if number is not None or not isinstance(value, str) or not value.startswith("PT"):
        return number
    total, digits = 0.0, ""
    for char in value[2:]:
        if char.isdigit() or char == ".":
            digits += char
            continue
        scale = {"H": 3600, "M": 60, "S": 1}.get(char)
        try:
            total += float(digits) * scale  # type: ignore[operator]
        except (TypeError, ValueError):
            return None
        digits = ""
    return total if not digits else None


def _mapping(value: Any) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one (a malformed part reads as absent)."""
    return value if isinstance(value, dict) else {}


def _number(value: Any) -> float | None:
    """A finite JSON number (not a boolean), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _numeric(value: Any) -> float | None:
    """A finite number, or a string of one (esmond keeps its metadata as text: ``"20"``)."""
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    return _number(value)


MAX_STREAMS = 128
"""The most parallel streams a test can have (iperf3's own limit, ``-P``)."""

MAX_TEST_SECONDS = 2 * 86_400.0
"""The longest test a report may give (s): iperf3 runs a test a day at most (``-t``), and the
server's side ends a little after the client's."""

MAX_RETRANSMITS = 2**40
"""The most retransmitted segments a report may give (far beyond a day at 100 Tbit/s)."""


class _Refused(ValueError):
    """A report's field that no iperf3 test gives (its message names the field)."""


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:40] + "..."


def _part(parent: dict[str, Any], key: str, where: str, kind: type = dict) -> Any:
    """``parent[key]`` when it is a ``kind`` (None when absent), refused otherwise."""
    value = parent.get(key)
    if value is None or isinstance(value, kind):
        return value
    raise _Refused(f"{where}{key} is {_short(value)}, not a JSON "
                   f"{'object' if kind is dict else 'list'}")


def _figure(part: dict[str, Any], key: str, where: str, *, high: float, whole: bool = False,
            positive: bool = False, default: float | None = None) -> float:
    """A report's number ``part[key]``: finite, from 0 (above 0 if ``positive``) to ``high``,
    whole if asked; refused naming ``where + key`` otherwise."""
    value = part.get(key, default)
    name = where + key
    if value is None:
        raise _Refused(f"no {name}")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _Refused(f"{name} is {_short(value)}, not a number")
    number = float(value)
    low = "above 0" if positive else "from 0"
    if not (math.isfinite(number) and (number > 0 if positive else number >= 0)
            and number <= high and (number.is_integer() or not whole)):
        raise _Refused(f"{name} {_short(value)} is no figure of a test "
                       f"({'a whole number ' if whole else ''}{low} to {high:.4g})")
    return number


def stream_count(value: Any) -> int | None:
    """A stream count as a report gives it: a whole number from 1 to :data:`MAX_STREAMS`
    (``4``, ``4.0``, ``"4"``), else None.

    Examples
    --------
    >>> stream_count(4), stream_count("2"), stream_count(1e308), stream_count("abc")
    (4, 2, None, None)
    """
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    if not (1 <= number <= MAX_STREAMS) or not number.is_integer():
        return None
    return int(number)


def _streams(value: Any, where: str, field: str) -> int | None:
    """A test's stream count from ``field``: None when absent, else a whole number from 1 to
    :data:`MAX_STREAMS`, refused otherwise (a value no reader of the dataset would accept).

    Examples
    --------
    >>> _streams("4", "x.json, item 1", "spec.parallel"), _streams(None, "", "")
    (4, None)
    >>> _streams(1e308, "x.json, item 1", "spec.parallel")
    Traceback (most recent call last):
    ...
    tomography.errors.DatasetError: x.json, item 1: spec.parallel 1e+308 is not a number of streams (a whole number from 1 to 128)
    """
    if value is None or value == "":
        return None
    count = stream_count(value)
    if count is None:
        raise DatasetError(f"{where}: {field} {value!r} is not a number of streams (a whole "
                           f"number from 1 to {MAX_STREAMS})")
    return count


def _text(value: Any) -> str | None:
    """A non-empty string (a participant may be ``{"host": ...}``), else None."""
    if isinstance(value, dict):
        value = value.get("host")
    return value.strip() if isinstance(value, str) and value.strip() else None


def _flag(value: Any) -> bool:
    """A JSON true (``true``, ``1`` or ``"true"``)."""
    return value is True or (isinstance(value, str) and value.lower() == "true") or \
        (type(value) is int and value == 1)


def _tool(value: Any) -> str:
    """The tool's name (``"iperf3"``, ``{"name": "iperf3"}``, esmond's ``pscheduler/iperf3``
    and ``bwctl/iperf3``)."""
    name = _text(_get(value, "name") if isinstance(value, dict) else value) or "pscheduler"
    return name.removeprefix("pscheduler/").removeprefix("bwctl/")


def _endpoints(spec: dict[str, Any], participants: Any, where: str, *,
               fallback: tuple[Any, Any] = (None, None)
               ) -> tuple[str | None, str | None, str | None]:
    """(sender, receiver, why not): the spec's source and dest, the lead participant when
    the task names no source, turned round for a ``reverse`` test (data from dest to source).

    A ``null`` participant is unknown: a run whose sender or receiver is unknown gives the
    ends it knows and :data:`NO_END`; a loopback test gives :data:`LOOPBACK`.
    """
    parts = participants if isinstance(participants, list) else []
    lead = _text(parts[0]) if parts else None
    other = _text(parts[1]) if len(parts) > 1 else None
    source = (_text(spec.get("source")) or _text(spec.get("source-node")) or lead
              or _text(fallback[0]))
    dest = _text(spec.get("dest")) or _text(spec.get("dest-node")) or other or _text(fallback[1])
    ends = (dest, source) if _flag(spec.get("reverse")) else (source, dest)
    if source is None or dest is None:
        if not any(p is None for p in parts):
            raise DatasetError(f"{where}: the test names no source and dest (task.test.spec, "
                               "participants)")
        return ends[0], ends[1], NO_END
    if source == dest or _flag(spec.get("loopback")):
        return ends[0], ends[1], LOOPBACK
    return ends[0], ends[1], None


def _row(src: str, dst: str, tool: str, protocol: str, streams: int, start: float | None
         ) -> dict[str, Any]:
    return {"src": src, "dst": dst, "tool": tool, "protocol": protocol,
            "streams": max(1, streams), "concurrent": 1, "start": start, "repeat": 0,
            "error": ""}


def _error(row: dict[str, Any], message: Any) -> dict[str, Any]:
    row["error"] = str(message or "the test failed").replace("\n", " ")[:300]
    return row


def _rate(row: dict[str, Any], value: Any, where: str, name: str) -> None:
    """``bits_per_second`` from the result's ``name``, or an error saying what is wrong."""
    if value is None:
        raise DatasetError(f"{where}: no {name} (a finite number of bit/s, >= 0)")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise DatasetError(f"{where}: {name} is {value!r}, not a number of bit/s")
    rate = float(value)
    if not math.isfinite(rate) or rate < 0 or rate > MAX_BANDWIDTH:
        raise DatasetError(f"{where}: {name} {value!r} is out of range (0 to "
                           f"{MAX_BANDWIDTH:.0e} bit/s)")
    row["bits_per_second"] = rate


def _succeeded(result: dict[str, Any], where: str) -> bool:
    """The result's ``succeeded``, which must be a JSON boolean."""
    value = result.get("succeeded")
    if not isinstance(value, bool):
        raise DatasetError(f"{where}: result.succeeded is {value!r}, not a boolean "
                           "(true or false)")
    return value


_RUN_HREF = re.compile(r"tasks/([^/?#]+)/runs/([^/?#]+)")
_TASK_HREF = re.compile(r"tasks/([^/?#]+)")


def _identify(row: dict[str, Any], ends: tuple[str | None, str | None], *hrefs: Any,
              run_id: Any = None, task: Any = None, content: Any = None) -> None:
    """Keys naming the run a row comes from (its run, its task and start, its content), the
    known ends: :func:`drop_duplicates` finds the same run read twice by them."""
    keys: list[Any] = []
    for href in hrefs:
        if isinstance(href, str):
            if (m := _RUN_HREF.search(href)) is not None:
                keys.append(("run", m.group(1), m.group(2)))
            elif (m := _TASK_HREF.search(href)) is not None and row["start"] is not None:
                keys.append(("task", m.group(1), row["start"]))
    if _text(run_id) is not None:
        keys.append(("run-id", _text(run_id)))
    if _text(task) is not None and row["start"] is not None:
        keys.append(("task", _text(task), row["start"]))
    if content is not None:
        keys.append(("content", json.dumps(content, sort_keys=True, default=str),
                     row["start"]))
    row["_keys"], row["_ends"] = keys, frozenset(e for e in ends if e is not None)


def _aliases(row: dict[str, Any], *pairs: tuple[Any, Any]) -> None:
    """Record that the document names one endpoint by both names of each pair (an address
    and its host name, the spec's source and the lead participant): a hosts file that maps
    the two to different hosts has swapped something (:func:`alias_conflicts`)."""
    names = [(a, b) for a, b in ((_text(x), _text(y)) for x, y in pairs)
             if a is not None and b is not None and a != b]
    if names:
        row["_names"] = row.get("_names", []) + names


def alias_conflicts(frame: pd.DataFrame, name: dict[str, str]) -> list[str]:
    """Where a hosts file contradicts the documents: two names the documents give one
    endpoint (``_names`` of the rows) that the hosts file (``name``: address or host ->
    host) gives to two different hosts.

    Examples
    --------
    >>> rows = pd.DataFrame({"_names": [[("10.0.0.1", "ps-a.example.net")]]})
    >>> alias_conflicts(rows, {"10.0.0.1": "n2", "ps-a.example.net": "n1"})
    ["the hosts file gives 10.0.0.1 to n2 but ps-a.example.net to n1, which the documents name as one endpoint (1 test): two hosts' addresses swapped?"]
    """
    if "_names" not in frame:
        return []
    found: Counter = Counter()
    for names in frame["_names"]:
        for a, b in names if isinstance(names, list) else []:
            if a in name and b in name and name[a] != name[b]:
                found[(a, b)] += 1
    return [f"the hosts file gives {a} to {name[a]} but {b} to {name[b]}, which the documents "
            f"name as one endpoint ({counted(n, 'test')}): two hosts' addresses swapped?"
            for (a, b), n in sorted(found.items())]


def _duration(row: dict[str, Any], seconds: float | None) -> None:
    if seconds is not None and seconds >= 0:
        row["duration_s"] = seconds
        row["bytes"] = round(row["bits_per_second"] * seconds / 8)


def _guess_type(result: dict[str, Any]) -> str:
    """A result's test type when no task comes with it (a run record on its own)."""
    if isinstance(_get(result, "summary"), dict):
        return "throughput"
    for key, kind in (("histogram-latency", "latency"), ("roundtrips", "rtt"),
                      ("paths", "trace")):
        if key in result:
            return kind
    return UNRECOGNISED


def _skip(row: dict[str, Any], why: str | None) -> dict[str, Any]:
    """The row of a throughput test the import skips (and counts) for ``why``."""
    if why is not None:
        row["_drop"] = why
    return row


def _pscheduler(doc: dict[str, Any], where: str) -> list[dict[str, Any]] | str:
    """A task and run (or a run record, an archiver's input) with pScheduler's result."""
    task, run = _mapping(doc.get("task")), _mapping(doc.get("run"))
    test = _mapping(doc.get("test")) or _mapping(task.get("test"))
    result = next((r for r in (doc.get("result-merged"), run.get("result-merged"),
                               doc.get("result")) if isinstance(r, dict)), doc)
    kind = test.get("type") if test else _guess_type(result)
    if kind != "throughput":
        return kind if isinstance(kind, str) and kind else UNRECOGNISED
    if "succeeded" not in result:
        return UNRECOGNISED
    spec = _mapping(test.get("spec"))
    participants = next((p for p in (doc.get("participants"), _get(task, "detail", "participants"),
                                     task.get("participants"), run.get("participants"))
                         if isinstance(p, list)), None)
    src, dst, why = _endpoints(spec, participants, where, fallback=(doc.get("source"),
                                                                    doc.get("dest")))
    summary = _mapping(_get(result, "summary", "summary"))
    streams = _get(result, "summary", "streams")
    streams = [s for s in streams if isinstance(s, dict)] if isinstance(streams, list) else []
    protocol = "udp" if _flag(spec.get("udp")) or (not spec and any(
        _number(summary.get(k)) is not None for k in ("lost", "jitter"))) else "tcp"
    start = next((t for t in map(_time, (run.get("start-time"), doc.get("start-time"),
                                         _get(doc, "schedule", "start"))) if t is not None), None)
    # nuttcp's parser writes one made-up summary.streams entry: the spec says how many ran
    row = _row(src or "", dst or "", _tool(doc.get("tool") or task.get("tool")), protocol,
               _streams(spec.get("parallel"), where, "spec.parallel") or len(streams) or 1,
               start)
    parts = participants if isinstance(participants, list) else []
    _aliases(row, (spec.get("source"), parts[0] if parts else None),
             (spec.get("dest"), parts[1] if len(parts) > 1 else None))
    href = doc.get("href") if isinstance(doc.get("href"), str) and "/runs/" in doc["href"] \
        else None
    _identify(row, (src, dst), run.get("href"), href, doc.get("run-href"),
              task.get("href"), doc.get("task-href"), run.get("task-href"),
              run_id=doc.get("id") if test else None,
              content=[kind, spec, row["tool"]] if spec and start is not None else None)
    if not spec:  # a run record without its task: reverse unknown
        row["_listed"] = True
    if not _succeeded(result, where):
        return [_skip(_error(row, result.get("error")), why)]
    if why is not None:
        return [_skip(row, why)]
    name = "summary.summary." + ("receiver-throughput-bits"
                                 if "receiver-throughput-bits" in summary else "throughput-bits")
    rate = summary.get("receiver-throughput-bits", summary.get("throughput-bits"))
    if not summary and streams:  # no total: the streams together are the pair's rate
        rates = [_number(s.get("receiver-throughput-bits", s.get("throughput-bits")))
                 for s in streams]
        rate = None if None in rates else sum(rates)  # type: ignore[arg-type]
        name = "throughput-bits of summary.streams"
    _rate(row, rate, where, name)
    try:
        if summary.get("retransmits") is not None:
            row["retransmits"] = int(_figure(summary, "retransmits", "summary.summary.",
                                             high=MAX_RETRANSMITS, whole=True))
        if summary.get("start") is not None and summary.get("end") is not None:
            _figure({"end - start": _figure(summary, "end", "summary.summary.", high=2.0**40)
                     - _figure(summary, "start", "summary.summary.", high=2.0**40)},
                    "end - start", "summary.summary.", high=MAX_TEST_SECONDS, positive=True)
    except _Refused as exc:
        raise DatasetError(f"{where}: {exc}") from None
    start_s, end_s = _number(summary.get("start")), _number(summary.get("end"))
    _duration(row, end_s - start_s if start_s is not None and end_s is not None else None)
    rtts = [_number(s.get("rtt")) for s in streams]
    rtts = [r for r in rtts if r is not None and r > 0]  # 0: not measured (the receiver's side)
    if rtts:
        row["rtt_ms"] = sum(rtts) / len(rtts) / 1000  # iperf3's microseconds, as pScheduler keeps
    return [row]


def _opensearch(doc: dict[str, Any], where: str) -> list[dict[str, Any]] | str:
    """perfSONAR 5's archive: one OpenSearch document a run, as its logstash pipeline writes."""
    test, result, ps = _mapping(doc.get("test")), _mapping(doc.get("result")), \
        _mapping(doc.get("pscheduler"))
    if test.get("type") != "throughput":
        kind = test.get("type")
        return kind if isinstance(kind, str) and kind else UNRECOGNISED
    if "succeeded" not in result and "throughput" not in result:
        return UNRECOGNISED
    spec = _mapping(test.get("spec"))
    meta = (_text(_get(doc, "meta", "source", "ip")), _text(_get(doc, "meta", "destination", "ip")))
    ends = spec
    if not (_text(spec.get("source")) or _text(spec.get("source-node"))) and meta[0]:
        # no source: the pipeline's addresses, not the participant the archiver filled in
        ends = {**spec, "source": meta[0], "dest": meta[1] or spec.get("dest")}
    src, dst, why = _endpoints(ends, ps.get("participants"), where, fallback=meta)
    try:
        streams = json.loads(_get(result, "streams", "json") or "[]")
    except (TypeError, json.JSONDecodeError):
        streams = _get(result, "streams", "json")
    streams = streams if isinstance(streams, list) else []
    start = _time(ps.get("start_time")) or _time(doc.get("@timestamp"))
    row = _row(src or "", dst or "", _tool(ps.get("tool")),
               "udp" if _flag(spec.get("udp")) else "tcp",
               _streams(spec.get("parallel"), where, "test.spec.parallel") or len(streams) or 1,
               start)
    _aliases(row, (spec.get("source"), meta[0]), (spec.get("dest"), meta[1]))
    _identify(row, (src, dst), ps.get("run_href"), ps.get("task_href"),
              run_id=f"{ps['task_id']}/{ps['run_id']}" if _text(ps.get("task_id")) and
              _text(ps.get("run_id")) else None)
    if "succeeded" in result and not _succeeded(result, where):
        return [_skip(_error(row, result.get("error")), why)]
    if why is not None:
        return [_skip(row, why)]
    _rate(row, result.get("throughput"), where, "result.throughput")
    if _number(result.get("retransmits")) is not None:
        row["retransmits"] = int(result["retransmits"])
    if (_number(result.get("rtt")) or 0) > 0:
        row["rtt_ms"] = result["rtt"] / 1000
    _duration(row, _seconds(spec.get("duration")))
    return [row]


def _esmond(doc: dict[str, Any], where: str) -> list[dict[str, Any]] | str:
    """esmond's metadata with the base data of its event types inline (``data``)."""
    kind = doc.get("pscheduler-test-type")
    types = {_get(e, "event-type"): e for e in doc["event-types"] if isinstance(e, dict)}
    if kind is None and "throughput" not in types:  # bwctl's metadata name no test type
        kind = next((_LATENCY_EVENTS[t] for t in types if t in _LATENCY_EVENTS), None)
    if (kind is not None and kind != "throughput") or "throughput" not in types:
        return kind if isinstance(kind, str) and kind else UNRECOGNISED
    points: dict[str, dict[float, Any]] = {}
    for name in ("throughput", "failures", "packet-retransmits"):
        data = _get(types.get(name), "data")
        points[name] = {_time(p.get("ts")): p.get("val") for p in data
                        if isinstance(p, dict) and _time(p.get("ts")) is not None} \
            if isinstance(data, list) else {}
    if not points["throughput"] and not points["failures"]:
        return "esmond metadata without data"
    spec = {"source": doc.get("input-source") or doc.get("source"),
            "dest": doc.get("input-destination") or doc.get("destination")}
    src, dst, why = _endpoints(spec, None, where)
    protocol = "udp" if str(doc.get("ip-transport-protocol")).lower() == "udp" else "tcp"
    # esmond keeps metadata as text
    streams = _streams(doc.get("bw-parallel-streams"), where, "bw-parallel-streams") or 1
    rows = []
    for ts in sorted(set(points["throughput"]) | set(points["failures"])):
        row = _row(src or "", dst or "", _tool(doc.get("tool-name")), protocol, streams, ts)
        _identify(row, (src, dst), content=[doc.get("metadata-key") or spec, protocol])
        _aliases(row, (doc.get("input-source"), doc.get("source")),
                 (doc.get("input-destination"), doc.get("destination")))
        if ts in points["failures"] and ts not in points["throughput"]:
            rows.append(_skip(_error(row, _get(points["failures"][ts], "error")), why))
            continue
        if why is not None:
            rows.append(_skip(row, why))
            continue
        _rate(row, points["throughput"][ts], f"{where}, ts {ts:.0f}",
              "value of the throughput event")
        if _number(points["packet-retransmits"].get(ts)) is not None:
            row["retransmits"] = int(points["packet-retransmits"][ts])
        _duration(row, _numeric(doc.get("time-duration")))
        rows.append(row)
    return rows


def _rows(doc: Any, where: str) -> list[dict[str, Any]] | str:
    """The rows of one document, or why it is skipped (its test type, or unrecognised)."""
    if not isinstance(doc, dict):
        return UNRECOGNISED
    if isinstance(doc.get("_source"), dict):  # an OpenSearch hit
        doc = doc["_source"]
    inner = doc.get("result")
    if "data" in doc and isinstance(inner, dict) and ({"test", "task", "participants"} & set(inner)):
        doc = inner  # an archiver's input: the run is the "result"
    if isinstance(doc.get("event-types"), list):
        return _esmond(doc, where)
    if isinstance(doc.get("pscheduler"), dict) or isinstance(doc.get("meta"), dict):
        return _opensearch(doc, where)
    return _pscheduler(doc, where)


def read_pscheduler(paths: Iterable[str | os.PathLike[str]]) -> pd.DataFrame:
    """pScheduler throughput runs as rows of ``probes.csv`` (source and dest as given).

    Documents that are not throughput results are skipped; the frame's
    ``attrs["skipped"]`` counts them by test type (``unrecognised`` when
    it has none).  ``repeat`` counts the runs of a pair and protocol.

    Raises
    ------
    DatasetError
        A file that is not JSON, or a throughput result without endpoints
        or rate, named with its file and item (or line).

    Examples
    --------
    >>> import tempfile
    >>> run = {"task": {"test": {"type": "throughput", "spec": {"source": "a", "dest": "b"}},
    ...                 "tool": "iperf3"},
    ...        "run": {"start-time": "2026-11-23T10:00:00Z"},
    ...        "result": {"schema": 1, "succeeded": True, "diags": "", "intervals": [],
    ...                   "summary": {"streams": [{"throughput-bits": 9.4e8, "rtt": 1200}],
    ...                               "summary": {"throughput-bits": 9.4e8, "retransmits": 2,
    ...                                           "start": 0, "end": 10}}}}
    >>> f = tempfile.mkdtemp() + "/run.json"
    >>> _ = open(f, "w").write(json.dumps([run, {"task": {"test": {"type": "latency"}}}]))
    >>> frame = read_pscheduler([f])
    >>> frame[["src", "dst", "bits_per_second", "retransmits", "rtt_ms"]].values.tolist()
    [['a', 'b', 940000000.0, 2, 1.2]]
    >>> frame.attrs["skipped"]
    {'latency': 1}
    """
    rows = []
    skipped: Counter[str] = Counter()
    paths = [Path(p) for p in paths]
    for path in paths:
        if not path.exists():
            raise DatasetError("no such file or directory", path=path)
        for file, item, doc in _documents(path):
            got = _rows(doc, f"{file}, item {item}")
            if isinstance(got, str):
                skipped[got] += 1
            else:
                rows += [{**row, "_where": f"{file}, item {item}"} for row in got]
    return _probe_frame(rows, paths, skipped)


def _same_test(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two rows that share a key are one test: same protocol, outcome, start (within
    :data:`SAME_RUN_SECONDS`), ends and ``_sig`` where both know them."""
    if a["protocol"] != b["protocol"] or bool(a.get("error")) != bool(b.get("error")) or \
            a.get("_sig") != b.get("_sig"):
        return False
    starts = [a.get("start"), b.get("start")]
    if None not in starts and not all(isinstance(t, float) and t != t for t in starts) and \
            abs(float(starts[0]) - float(starts[1])) > SAME_RUN_SECONDS:  # type: ignore[arg-type]
        return False
    ends = [a.get("_ends"), b.get("_ends")]
    return None in ends or ends[0] <= ends[1] or ends[1] <= ends[0]  # type: ignore[operator]


def _drop_duplicates(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """The rows without the second copies of one test (same key, :func:`_same_test`), the
    preferred copy kept (lowest ``_rank``, then the first read), and how many were dropped.

    A kept row without ``rtt_ms`` takes its copy's (iperf3's server sends in a ``-R`` test).
    """
    order = sorted(range(len(rows)), key=lambda i: (rows[i].get("_rank", 0),
                                                    "_drop" in rows[i], i))
    seen: dict[Any, list[int]] = {}
    kept: list[int] = []
    duplicates = 0
    for i in order:
        row = rows[i]
        twin = next((j for key in row.get("_keys", ()) for j in seen.get(key, ())
                     if _same_test(row, rows[j])), None)
        if twin is not None:
            duplicates += 1
            if rows[twin].get("rtt_ms") is None and row.get("rtt_ms") is not None:
                rows[twin]["rtt_ms"] = row["rtt_ms"]
            continue
        kept.append(i)
        for key in row.get("_keys", ()):
            seen.setdefault(key, []).append(i)
    return [rows[i] for i in sorted(kept)], duplicates


def _probe_frame(rows: list[dict[str, Any]], paths: list[Path], skipped: Counter[str],
                 because: str = NOT_THROUGHPUT) -> pd.DataFrame:
    """The imported rows as a frame: duplicates and skipped tests counted in ``attrs``."""
    rows, duplicates = _drop_duplicates(rows)
    dropped = Counter(row["_drop"] for row in rows if "_drop" in row)
    rows = [row for row in rows if "_drop" not in row]
    if not rows:
        notes = ([_skips(skipped, because)] if skipped else []) + \
            ([f"skipped {counted(duplicates, 'duplicate')}"] if duplicates else []) + \
            [_dropped(why, n) for why, n in sorted(dropped.items())]
        raise DatasetError("no throughput result in " + ", ".join(map(str, paths))
                           + (f" ({'; '.join(notes)})" if notes else ""))
    frame = pd.DataFrame(rows)
    n_listed = int(frame["_listed"].eq(True).sum()) if "_listed" in frame else 0
    frame = frame.drop(columns=[c for c in ("_keys", "_ends", "_drop", "_listed", "_rank",
                                            "_sig") if c in frame])
    frame["repeat"] = frame.groupby(["src", "dst", "protocol"]).cumcount()  # n-th run of a pair
    frame.attrs.update(skipped=dict(skipped), skipped_because=because, duplicates=duplicates,
                       dropped=dict(dropped), listed=n_listed)
    return frame


def _dropped(why: str, n: int) -> str:
    """``3 loopback tests (...) skipped``: a count and its phrase, singular or plural."""
    return f"{n} " + why.format(s="" if n == 1 else "s", v="s" if n == 1 else "")


def _skips(skipped: Counter[str] | dict[str, int], what: str = NOT_THROUGHPUT) -> str:
    total = sum(skipped.values())
    kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(skipped.items(),
                                                          key=lambda kv: (-kv[1], kv[0])))
    one = total == 1
    because = what.format(are="is" if one else "are", a="a " if one else "", s="" if one else "s")
    return f"skipped {counted(total, 'document')} {because} ({kinds})"


LISTED = "{n} without their task: direction as the participants list it (a reverse test " \
    "would be the wrong way round)"


@dataclass
class ImportSummary:
    """What an import wrote: rows, UDP rows kept apart, failed tests, what it skipped.

    ``skipped`` counts the documents that are not throughput results (by
    test type), ``duplicates`` the second copies of one test (the same run
    read twice), ``dropped`` the tests skipped for a reason (loopback, an
    unknown end) and ``listed`` the runs whose direction is the order of
    their participants (no task to say whether they were reversed).
    """

    path: Path
    rows: int = 0
    udp: int = 0
    failed: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    skipped_because: str = NOT_THROUGHPUT
    duplicates: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    listed: int = 0
    conflicts: list[str] = field(default_factory=list)

    def describe(self, what: str = "run") -> str:
        """One line for the user.

        Examples
        --------
        >>> ImportSummary(Path("site"), 12, udp=2, skipped={"latency": 2, "unrecognised": 1}
        ...               ).describe()
        'imported 12 runs into site (2 UDP runs kept apart from the TCP weights); skipped 3 documents that are not throughput results (2 latency, 1 unrecognised)'
        >>> ImportSummary(Path("site"), 1, skipped={"rtt": 1}, duplicates=1,
        ...               dropped={LOOPBACK: 2}).describe()
        'imported 1 run into site; skipped 1 document that is not a throughput result (1 rtt); 1 duplicate skipped (the same test read twice); 2 loopback tests (source and destination one host) skipped'
        """
        text = f"imported {counted(self.rows, what)} into {self.path}"
        notes = ([f"{counted(self.udp, 'UDP ' + what)} kept apart from the TCP weights"]
                 if self.udp else []) + ([f"{self.failed} failed"] if self.failed else [])
        text += f" ({'; '.join(notes)})" if notes else ""
        text += f"; {_skips(self.skipped, self.skipped_because)}" if self.skipped else ""
        text += (f"; {counted(self.duplicates, 'duplicate')} skipped (the same test read "
                 "twice)") if self.duplicates else ""
        return text + "".join(f"; {_dropped(why, n)}" for why, n in sorted(self.dropped.items()))

    @property
    def warnings(self) -> list[str]:
        """What the user should check: runs whose direction is only the participants' order,
        and a hosts file that gives two names of one endpoint to two hosts.

        Examples
        --------
        >>> ImportSummary(Path("site"), 3, listed=2).warnings
        ['2 runs without their task: direction as the participants list it (a reverse test would be the wrong way round)']
        """
        return ([LISTED.format(n=counted(self.listed, "run"))] if self.listed else []) \
            + list(self.conflicts)


def write_probe_import(frame: pd.DataFrame, output: str | os.PathLike[str], source: str, *,
                       hosts: pd.DataFrame | None = None, overwrite: bool = False,
                       params: dict[str, Any] | None = None,
                       raw: list[str] | None = None) -> ImportSummary:
    """Write imported probe rows as a probe dataset (method ``iperf3``), naming the addresses.

    Parameters
    ----------
    frame : DataFrame
        Rows of ``probes.csv`` with addresses (or host names) in ``src`` and ``dst``.
    output : path
        The dataset directory.
    source : str
        ``meta.json``'s ``source``: ``pscheduler``, ``iperf3-json``.
    hosts : DataFrame, optional
        ``host,address[,label]``; by default each address is a host.
    params : dict, optional
        More keys for ``meta.json``'s ``params``.
    raw : list of str, optional
        The tools' own documents, one per row, written to ``raw/`` as the
        probe meshes do (``SRC--DST--REPEAT.json``).

    Returns
    -------
    ImportSummary

    Raises
    ------
    DatasetError
        An address the hosts file does not name.

    Examples
    --------
    >>> import tempfile
    >>> rows = pd.DataFrame({"src": ["10.0.0.1"], "dst": ["10.0.0.2"], "tool": ["iperf3"],
    ...                      "protocol": ["tcp"], "bits_per_second": [9.4e8], "streams": [1],
    ...                      "concurrent": [1], "repeat": [0], "error": [""]})
    >>> write_probe_import(rows, tempfile.mkdtemp() + "/d", "pscheduler").rows
    1
    """
    skipped = dict(frame.attrs.get("skipped", {}))
    because = frame.attrs.get("skipped_because", NOT_THROUGHPUT)
    dropped = Counter(frame.attrs.get("dropped", {}))
    duplicates, as_listed = frame.attrs.get("duplicates", 0), frame.attrs.get("listed", 0)
    addresses = sorted(set(frame["src"]) | set(frame["dst"]))
    conflicts: list[str] = []
    if hosts is None:
        table = pd.DataFrame({"host": addresses, "address": addresses, "label": ""})
    else:
        table = hosts.copy()
        if "label" not in table:
            table["label"] = ""
        name = {**dict(zip(table["address"], table["host"])),  # several addresses a host
                **dict(zip(table["host"], table["host"]))}
        unknown = [a for a in addresses if a not in name]
        if unknown:
            where = frame.loc[(frame["src"] == unknown[0]) | (frame["dst"] == unknown[0]),
                              "_where"].iloc[0] if "_where" in frame else "the results"
            raise DatasetError(f"{where} names {unknown[0]!r}, which the hosts file has "
                               f"neither as host nor as address ({len(unknown)} unknown: "
                               f"{listed(unknown)})")
        conflicts = alias_conflicts(frame, name)
        frame = frame.assign(src=frame["src"].map(name), dst=frame["dst"].map(name))
        one_host = (frame["src"] == frame["dst"]).to_numpy(dtype=bool)
        if one_host.any():  # two addresses of one host: a loopback test
            dropped[ONE_HOST] += int(one_host.sum())
            if raw is not None:
                raw = [r for r, drop in zip(raw, one_host) if not drop]
            frame = frame[~one_host]
            if frame.empty:
                raise DatasetError(f"every test is between two addresses of one host "
                                   f"({len(one_host)} tests): nothing to import")
        # hosts.csv: one row a host, with its first address
        table = table.drop_duplicates("host", keep="first")
        table = table[table["host"].isin(set(frame["src"]) | set(frame["dst"]))]
    _check_names(frame)     # they name the files of raw/: nothing outside the dataset
    frame = frame.assign(repeat=frame.groupby(["src", "dst", "protocol"]).cumcount())
    tools = sorted(set(frame["tool"]))
    out = Path(output)
    made = next((p for p in (out, *out.parents) if p.parent.exists() or p == p.parent), out)
    existed = made.exists()
    writer = MeasurementWriter(output, {"method": "iperf3", "source": source,
                                        "params": {"tools": tools, "runs": len(frame),
                                                   **(params or {})}},
                               table[["host", "address", "label"]], overwrite=overwrite,
                               probes=True)
    try:
        if raw is not None:
            (writer.path / "raw").mkdir(mode=DIR_MODE, exist_ok=True)
        for i, row in enumerate(frame.drop(columns=["_where", "_names"], errors="ignore")
                                .to_dict("records")):
            writer.add_probe({k: _cell(k, v) for k, v in row.items()})
            if raw is not None:
                name = (f"{row['src']}--{row['dst']}--{row['repeat']}"
                        f"{'' if row['protocol'] == 'tcp' else '--' + row['protocol']}.json")
                with open(writer.path / "raw" / name, "w", encoding="utf-8",
                          opener=file_opener) as fh:   # 0644 at most, whatever the umask
                    fh.write(raw[i])
    except BaseException:   # all or nothing: a refused or interrupted import leaves no dataset
        writer.close()
        _remove_import(out, made if not existed else None)
        raise
    writer.close()
    failed = int((frame["error"].astype(str).str.strip() != "").sum()) if "error" in frame else 0
    return ImportSummary(Path(output), len(frame), udp=int((frame["protocol"] == "udp").sum()),
                         failed=failed, skipped=skipped, skipped_because=because,
                         duplicates=duplicates, dropped=dict(dropped), listed=as_listed,
                         conflicts=conflicts)


def _check_names(frame: pd.DataFrame) -> None:
    """Refuse a sender or receiver name that is no safe file name part (``..``, ``/``, a
    control character, HTML, hundreds of characters), naming the document that gives it."""
    from tomography.hosts_checks import check_host_name

    for column, role in (("src", "sender"), ("dst", "receiver")):
        for i in frame.drop_duplicates(column).index:
            where = frame.at[i, "_where"] if "_where" in frame else None
            try:
                check_host_name(str(frame.at[i, column]), path=where, field=role)
            except DatasetError as exc:
                raise DatasetError(f"{exc.reason}; an address that is no file name (IPv6 "
                                   "with a zone) takes a name from --hosts", path=exc.path,
                                   field=exc.field) from None


def _remove_import(out: Path, made: Path | None) -> None:
    """What a failed import wrote at ``out``: the directories it made (``made``), else the
    dataset's files in a directory that was there before."""
    import shutil

    from tomography.dataset.incremental import DATA_FILES

    if made is not None:
        shutil.rmtree(made, ignore_errors=True)
        return
    for name in (*DATA_FILES, "meta.json", "hosts.csv", LOCK_NAME):
        (out / name).unlink(missing_ok=True)
    shutil.rmtree(out / "raw", ignore_errors=True)


_WHOLE = ("streams", "concurrent", "repeat", "bytes", "retransmits")
"""Columns of counts: written as whole numbers (``159``, not ``159.0``)."""


def _cell(column: str, value: Any) -> Any:
    """A value as ``probes.csv`` has it: empty for a missing number, counts whole."""
    if isinstance(value, float):
        if value != value:
            return None
        if column in _WHOLE and value.is_integer():
            return int(value)
    return value


def import_pscheduler(paths: Iterable[str | os.PathLike[str]], output: str | os.PathLike[str],
                      *, hosts: pd.DataFrame | None = None,
                      overwrite: bool = False) -> ImportSummary:
    """Write a probe dataset (method ``iperf3``, source ``pscheduler``) from pScheduler results.

    Parameters
    ----------
    paths : iterable of path
        Result files or directories.
    output : path
        The dataset directory.
    hosts : DataFrame, optional
        ``host,address,label``: names and ground-truth labels for the
        addresses the tests name; by default each address is a host.

    Returns
    -------
    ImportSummary
        Rows written, UDP rows among them, documents skipped.

    Examples
    --------
    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> run = {"test": {"type": "throughput", "spec": {"dest": "b", "udp": True}},
    ...        "participants": ["a", "b"], "result": {"succeeded": True,
    ...        "summary": {"summary": {"throughput-bits": 5e7}, "streams": []}}}
    >>> _ = open(d + "/r.json", "w").write(json.dumps({"data": {}, "result": run}))
    >>> import_pscheduler([d + "/r.json"], d + "/ds").describe()  # doctest: +ELLIPSIS
    'imported 1 run into .../ds (1 UDP run kept apart from the TCP weights)'
    """
    frame = read_pscheduler(paths)
    return write_probe_import(frame, output, "pscheduler", hosts=hosts, overwrite=overwrite)
