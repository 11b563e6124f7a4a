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
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable, Iterator

import pandas as pd

from tomography.model.dataset.lock import LOCK_NAME
from tomography.model.errors import DatasetError
from tomography.model.dataset.probe_import import (MAX_RETRANSMITS, MAX_STREAMS, MAX_TEST_SECONDS,
                                                   ImportSummary, _aliases, _figure, _probe_frame,
                                                   _Refused, _text, stream_count,
                                                   write_probe_import)
from tomography.model.topology import MAX_BANDWIDTH

__all__ = ["read_pscheduler", "import_pscheduler"]

UNRECOGNISED = "unrecognised"
LOOPBACK = "loopback test{s} (source and destination one host) skipped"
NO_END = "run{s} with a null participant name{v} no sender or receiver (skipped)"
_LATENCY_EVENTS = {"histogram-owdelay": "latency", "histogram-ttl": "latency",
                   "packet-loss-rate": "latency", "packet-count-lost": "latency",
                   "packet-count-sent": "latency", "packet-duplicates": "latency",
                   "packet-reorders": "latency", "time-error-estimates": "latency",
                   "histogram-rtt": "rtt", "packet-loss-rate-bidir": "rtt",
                   "packet-trace": "trace", "path-mtu": "trace"}
"""esmond event types of the other tests (owamp/powstream, ping, traceroute)."""


def _documents(path: Path) -> Iterator[tuple[Path, int, Any]]:
    """Every document of a file or directory: a JSON object or list (an OpenSearch search
    response's hits), or JSON lines, each read within :mod:`tomography.model.safe_load`'s limits
    of size, nesting and number of values."""
    from tomography.model.safe_load import DocumentError, load_json, read_bounded

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
    tomography.model.errors.DatasetError: x.json, item 1: spec.parallel 1e+308 is not a number of streams (a whole number from 1 to 128)
    """
    if value is None or value == "":
        return None
    count = stream_count(value)
    if count is None:
        raise DatasetError(f"{where}: {field} {value!r} is not a number of streams (a whole "
                           f"number from 1 to {MAX_STREAMS})")
    return count


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
