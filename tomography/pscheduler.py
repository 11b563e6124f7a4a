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
take it.  UDP tests (``udp``; esmond's ``ip-transport-protocol``) are
rows with ``protocol`` ``udp``, kept out of the TCP weights.  Documents
that are not throughput results are skipped and counted.
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable, Iterator

import pandas as pd

from tomography.dataset import MeasurementWriter
from tomography.errors import DatasetError
from tomography.topology import MAX_BANDWIDTH
from tomography.units import counted, listed

__all__ = ["read_pscheduler", "import_pscheduler", "ImportSummary", "write_probe_import"]

UNRECOGNISED = "unrecognised"
NOT_THROUGHPUT = "that {are} not throughput results"


def _documents(path: Path) -> Iterator[tuple[Path, int, Any]]:
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for file in files:
        try:
            text = file.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            raise DatasetError(f"cannot read: {exc}", path=file) from None
        try:
            doc = json.loads(text)
        except json.JSONDecodeError:
            for line, raw in enumerate(text.splitlines(), start=1):
                if raw.strip():
                    try:
                        yield file, line, json.loads(raw)
                    except json.JSONDecodeError as exc:
                        raise DatasetError(f"neither JSON nor JSON lines: {exc.msg}",
                                           path=file, line=line) from None
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
    """The tool's name (``"iperf3"``, ``{"name": "iperf3"}``, esmond's ``pscheduler/iperf3``)."""
    name = _text(_get(value, "name") if isinstance(value, dict) else value) or "pscheduler"
    return name.removeprefix("pscheduler/")


def _endpoints(spec: dict[str, Any], participants: Any, where: str, *,
               fallback: tuple[Any, Any] = (None, None)) -> tuple[str, str]:
    """(sender, receiver): the spec's source and dest, the lead participant when the task
    names no source, turned round for a ``reverse`` test (data from dest to source)."""
    parts = participants if isinstance(participants, list) else []
    lead = _text(parts[0]) if parts else None
    other = _text(parts[1]) if len(parts) > 1 else None
    source = (_text(spec.get("source")) or _text(spec.get("source-node")) or lead
              or _text(fallback[0]))
    dest = _text(spec.get("dest")) or _text(spec.get("dest-node")) or other or _text(fallback[1])
    if source is None or dest is None:
        raise DatasetError(f"{where}: the test names no source and dest (task.test.spec, "
                           "participants)")
    if source == dest:
        raise DatasetError(f"{where}: a throughput test from {source} to itself")
    return (dest, source) if _flag(spec.get("reverse")) else (source, dest)


def _row(src: str, dst: str, tool: str, protocol: str, streams: int, start: float | None
         ) -> dict[str, Any]:
    return {"src": src, "dst": dst, "tool": tool, "protocol": protocol,
            "streams": max(1, streams), "concurrent": 1, "start": start, "repeat": 0,
            "error": ""}


def _error(row: dict[str, Any], message: Any) -> dict[str, Any]:
    row["error"] = str(message or "the test failed").replace("\n", " ")[:300]
    return row


def _rate(row: dict[str, Any], rate: float | None, where: str, what: str) -> None:
    if rate is None or rate < 0 or rate > MAX_BANDWIDTH:
        raise DatasetError(f"{where}: {what} (a finite number of bit/s, >= 0)")
    row["bits_per_second"] = rate


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
    src, dst = _endpoints(spec, participants, where, fallback=(doc.get("source"),
                                                               doc.get("dest")))
    summary = _mapping(_get(result, "summary", "summary"))
    streams = _get(result, "summary", "streams")
    streams = [s for s in streams if isinstance(s, dict)] if isinstance(streams, list) else []
    protocol = "udp" if _flag(spec.get("udp")) or (not spec and any(
        _number(summary.get(k)) is not None for k in ("lost", "jitter"))) else "tcp"
    start = next((t for t in map(_time, (run.get("start-time"), doc.get("start-time"),
                                         _get(doc, "schedule", "start"))) if t is not None), None)
    row = _row(src, dst, _tool(doc.get("tool") or task.get("tool")), protocol,
               len(streams) or int(_number(spec.get("parallel")) or 1), start)
    if not result["succeeded"]:
        return [_error(row, result.get("error"))]
    rate = _number(summary.get("receiver-throughput-bits", summary.get("throughput-bits")))
    if not summary and streams:  # no total: the streams together are the pair's rate
        rates = [_number(s.get("receiver-throughput-bits", s.get("throughput-bits")))
                 for s in streams]
        rate = None if None in rates else sum(rates)  # type: ignore[arg-type]
    _rate(row, rate, where, "summary.summary has no throughput-bits")
    if _number(summary.get("retransmits")) is not None:
        row["retransmits"] = summary["retransmits"]
    start_s, end_s = _number(summary.get("start")), _number(summary.get("end"))
    _duration(row, end_s - start_s if start_s is not None and end_s is not None else None)
    rtts = [_number(s.get("rtt")) for s in streams]
    rtts = [r for r in rtts if r is not None]
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
    src, dst = _endpoints(spec, ps.get("participants"), where,
                          fallback=(_get(doc, "meta", "source", "ip"),
                                    _get(doc, "meta", "destination", "ip")))
    try:
        streams = json.loads(_get(result, "streams", "json") or "[]")
    except (TypeError, json.JSONDecodeError):
        streams = []
    streams = streams if isinstance(streams, list) else []
    start = _time(ps.get("start_time")) or _time(doc.get("@timestamp"))
    row = _row(src, dst, _tool(ps.get("tool")), "udp" if _flag(spec.get("udp")) else "tcp",
               int(_number(spec.get("parallel")) or len(streams) or 1), start)
    if result.get("succeeded") is False:
        return [_error(row, result.get("error"))]
    _rate(row, _number(result.get("throughput")), where, "result has no throughput")
    if _number(result.get("retransmits")) is not None:
        row["retransmits"] = result["retransmits"]
    if _number(result.get("rtt")) is not None:
        row["rtt_ms"] = result["rtt"] / 1000
    _duration(row, _seconds(spec.get("duration")))
    return [row]


def _esmond(doc: dict[str, Any], where: str) -> list[dict[str, Any]] | str:
    """esmond's metadata with the base data of its event types inline (``data``)."""
    kind = doc.get("pscheduler-test-type")
    types = {_get(e, "event-type"): e for e in doc["event-types"] if isinstance(e, dict)}
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
    src, dst = _endpoints(spec, None, where)
    protocol = "udp" if str(doc.get("ip-transport-protocol")).lower() == "udp" else "tcp"
    streams = doc.get("bw-parallel-streams")  # esmond keeps metadata as text
    streams = int(streams) if isinstance(streams, str) and streams.isdigit() else \
        int(_number(streams) or 1)
    rows = []
    for ts in sorted(set(points["throughput"]) | set(points["failures"])):
        row = _row(src, dst, _tool(doc.get("tool-name")), protocol, streams, ts)
        if ts in points["failures"] and ts not in points["throughput"]:
            rows.append(_error(row, _get(points["failures"][ts], "error")))
            continue
        _rate(row, _number(points["throughput"][ts]), f"{where}, ts {ts:.0f}",
              "the throughput event has no value")
        if _number(points["packet-retransmits"].get(ts)) is not None:
            row["retransmits"] = points["packet-retransmits"][ts]
        _duration(row, _number(doc.get("time-duration")))
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
    if not rows:
        raise DatasetError("no throughput result in " + ", ".join(map(str, paths))
                           + (f" ({_skips(skipped)})" if skipped else ""))
    frame = pd.DataFrame(rows)
    frame["repeat"] = frame.groupby(["src", "dst", "protocol"]).cumcount()  # n-th run of a pair
    frame.attrs["skipped"] = dict(skipped)
    return frame


def _skips(skipped: Counter[str] | dict[str, int], what: str = NOT_THROUGHPUT) -> str:
    total = sum(skipped.values())
    kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(skipped.items(),
                                                          key=lambda kv: (-kv[1], kv[0])))
    return f"skipped {counted(total, 'document')} " \
           f"{what.format(are='is' if total == 1 else 'are')} ({kinds})"


@dataclass
class ImportSummary:
    """What an import wrote: rows, UDP rows kept apart, failed tests, documents skipped."""

    path: Path
    rows: int = 0
    udp: int = 0
    failed: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    skipped_because: str = NOT_THROUGHPUT

    def describe(self, what: str = "run") -> str:
        """One line for the user.

        Examples
        --------
        >>> ImportSummary(Path("site"), 12, udp=2, skipped={"latency": 2, "unrecognised": 1}
        ...               ).describe()
        'imported 12 runs into site (2 UDP runs kept apart from the TCP weights); skipped 3 documents that are not throughput results (2 latency, 1 unrecognised)'
        """
        text = f"imported {counted(self.rows, what)} into {self.path}"
        notes = ([f"{counted(self.udp, 'UDP ' + what)} kept apart from the TCP weights"]
                 if self.udp else []) + ([f"{self.failed} failed"] if self.failed else [])
        text += f" ({'; '.join(notes)})" if notes else ""
        return text + (f"; {_skips(self.skipped, self.skipped_because)}" if self.skipped
                       else "")


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
    addresses = sorted(set(frame["src"]) | set(frame["dst"]))
    if hosts is None:
        table = pd.DataFrame({"host": addresses, "address": addresses, "label": ""})
    else:
        table = hosts.copy()
        if "label" not in table:
            table["label"] = ""
        name = {**dict(zip(table["address"], table["host"])),
                **dict(zip(table["host"], table["host"]))}
        unknown = [a for a in addresses if a not in name]
        if unknown:
            where = frame.loc[(frame["src"] == unknown[0]) | (frame["dst"] == unknown[0]),
                              "_where"].iloc[0] if "_where" in frame else "the results"
            raise DatasetError(f"{where} names {unknown[0]!r}, which the hosts file has "
                               f"neither as host nor as address ({len(unknown)} unknown: "
                               f"{listed(unknown)})")
        frame = frame.assign(src=frame["src"].map(name), dst=frame["dst"].map(name))
        table = table[table["host"].isin(set(frame["src"]) | set(frame["dst"]))]
    for src, dst in zip(frame["src"], frame["dst"]):
        if src == dst:
            raise DatasetError(f"a throughput test from {src} to itself (two of its "
                               "addresses name one host)")
    frame = frame.assign(repeat=frame.groupby(["src", "dst", "protocol"]).cumcount())
    tools = sorted(set(frame["tool"]))
    writer = MeasurementWriter(output, {"method": "iperf3", "source": source,
                                        "params": {"tools": tools, "runs": len(frame),
                                                   **(params or {})}},
                               table[["host", "address", "label"]], overwrite=overwrite,
                               probes=True)
    if raw is not None:
        (writer.path / "raw").mkdir(exist_ok=True)
    for i, row in enumerate(frame.drop(columns="_where", errors="ignore").to_dict("records")):
        writer.add_probe({k: (None if isinstance(v, float) and v != v else v)
                          for k, v in row.items()})
        if raw is not None:
            (writer.path / "raw" / f"{row['src']}--{row['dst']}--{row['repeat']}"
             f"{'' if row['protocol'] == 'tcp' else '--' + row['protocol']}.json").write_text(
                raw[i], encoding="utf-8")
    failed = int((frame["error"].astype(str).str.strip() != "").sum()) if "error" in frame else 0
    return ImportSummary(Path(output), len(frame), udp=int((frame["protocol"] == "udp").sum()),
                         failed=failed, skipped=skipped, skipped_because=because)


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
