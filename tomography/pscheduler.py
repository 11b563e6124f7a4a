"""perfSONAR's throughput results as a probe dataset: cluster a site's existing meshes.

pScheduler runs throughput tests (iperf3, iperf2 or nuttcp underneath) and
archives each run as JSON: the task (``test.type`` ``throughput``, its
``spec`` with ``source`` and ``dest``), the run's times, and the result of
pScheduler's throughput schema: ``succeeded``, ``error``, ``intervals``
and ``summary`` (``summary.summary`` with ``throughput-bits``, optionally
``receiver-throughput-bits``, ``retransmits``, ``start``/``end``; one
``summary.streams`` entry per stream).  The same documents come out of a
perfSONAR archive's export.  :func:`read_pscheduler` reads them (a JSON
object, a list, JSON lines, or a directory of such files; a bare result
with its source and destination beside it is accepted too) and
:func:`import_pscheduler` writes a probe dataset that every command of the
toolkit reads.

Rates are the receiver's when the result gives one (``receiver-throughput-
bits``), as the toolkit's own iperf3 meshes record, else the sender's.
"""

from __future__ import annotations

import json
import math
import os
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable, Iterator

import pandas as pd

from tomography.dataset import MeasurementWriter
from tomography.errors import DatasetError
from tomography.topology import MAX_BANDWIDTH

__all__ = ["read_pscheduler", "import_pscheduler"]


def _documents(path: Path) -> Iterator[tuple[Path, int, Any]]:
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for file in files:
        try:
            text = file.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            raise DatasetError(f"cannot read: {exc}", path=file) from None
        try:
            doc = json.loads(text)
            items = doc if isinstance(doc, list) else [doc]
            for i, item in enumerate(items):
                yield file, i + 1, item
        except json.JSONDecodeError:
            for line, raw in enumerate(text.splitlines(), start=1):
                if raw.strip():
                    try:
                        yield file, line, json.loads(raw)
                    except json.JSONDecodeError as exc:
                        raise DatasetError(f"neither JSON nor JSON lines: {exc.msg}",
                                           path=file, line=line) from None


def _get(doc: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(doc, dict):
            return None
        doc = doc.get(key)
    return doc


def _time(value: Any) -> float | None:
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    return None


def _mapping(value: Any) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one (a malformed part reads as absent)."""
    return value if isinstance(value, dict) else {}


def _number(value: Any) -> float | None:
    """A finite JSON number (not a boolean), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _row(doc: dict[str, Any], where: str) -> dict[str, Any] | None:
    task = doc.get("task") if isinstance(doc.get("task"), dict) else doc
    test = _mapping(task.get("test"))
    if test and test.get("type") not in (None, "throughput"):
        return None  # latency, trace, ...: not a throughput result
    spec = _mapping(test.get("spec"))
    source = spec.get("source") or doc.get("source")
    dest = spec.get("dest") or doc.get("dest")
    result = doc.get("result") if isinstance(doc.get("result"), dict) else doc
    if "succeeded" not in result:
        raise DatasetError(f"{where}: not a pScheduler throughput result (no 'succeeded')")
    if not isinstance(source, str) or not isinstance(dest, str) or not source or not dest:
        raise DatasetError(f"{where}: the test names no source and dest (task.test.spec)")
    tool = _get(task, "tool") or _get(doc, "tool", "name") or "pscheduler"
    if isinstance(tool, dict):
        tool = tool.get("name", "pscheduler")
    summary = _mapping(_get(result, "summary", "summary"))
    streams = _get(result, "summary", "streams")
    streams = streams if isinstance(streams, list) else []
    parallel = _number(spec.get("parallel")) or 1
    row: dict[str, Any] = {
        "src": str(source), "dst": str(dest), "tool": str(tool),
        "streams": max(1, len(streams) or int(parallel)),
        "concurrent": 1, "start": _time(_get(doc, "run", "start-time")), "repeat": 0,
        "error": ""}
    if not result["succeeded"]:
        row["error"] = str(result.get("error") or "the test failed").replace("\n", " ")[:300]
        return row
    rate = _number(summary.get("receiver-throughput-bits", summary.get("throughput-bits")))
    if rate is None or rate < 0 or rate > MAX_BANDWIDTH:
        raise DatasetError(f"{where}: summary.summary has no throughput-bits (a finite "
                           "number of bit/s, >= 0)")
    row["bits_per_second"] = float(rate)
    if _number(summary.get("retransmits")) is not None:
        row["retransmits"] = summary["retransmits"]
    start, end = _number(summary.get("start")), _number(summary.get("end"))
    if start is not None and end is not None and end >= start:
        row["duration_s"] = end - start
        row["bytes"] = round(rate * row["duration_s"] / 8)
    rtts = [s["rtt"] for s in streams if isinstance(s, dict)
            and _number(s.get("rtt")) is not None]
    if rtts:
        row["rtt_ms"] = sum(rtts) / len(rtts) / 1000  # iperf3's microseconds, as pScheduler keeps
    return row


def read_pscheduler(paths: Iterable[str | os.PathLike[str]]) -> pd.DataFrame:
    """pScheduler throughput runs as rows of ``probes.csv`` (source and dest as given).

    Raises
    ------
    DatasetError
        A file that is not JSON, or a document that is not a throughput
        result, named with its file and item (or line).

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
    >>> _ = open(f, "w").write(json.dumps(run))
    >>> read_pscheduler([f])[["src", "dst", "bits_per_second", "retransmits", "rtt_ms"]].values.tolist()
    [['a', 'b', 940000000.0, 2, 1.2]]
    """
    rows = []
    paths = [Path(p) for p in paths]
    for path in paths:
        if not path.exists():
            raise DatasetError("no such file or directory", path=path)
        for file, item, doc in _documents(path):
            if not isinstance(doc, dict):
                raise DatasetError(f"item {item} is not a JSON object", path=file)
            row = _row(doc, f"{file}, item {item}")
            if row is not None:
                rows.append(row)
    if not rows:
        raise DatasetError("no throughput result in " + ", ".join(map(str, paths)))
    frame = pd.DataFrame(rows)
    for src, dst in zip(frame["src"], frame["dst"]):
        if src == dst:
            raise DatasetError(f"a throughput test from {src} to itself")
    order = frame.groupby(["src", "dst"]).cumcount()
    frame["repeat"] = order  # the n-th run of the same pair
    return frame


def import_pscheduler(paths: Iterable[str | os.PathLike[str]], output: str | os.PathLike[str],
                      *, hosts: pd.DataFrame | None = None, overwrite: bool = False) -> int:
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
    int
        Rows written.
    """
    frame = read_pscheduler(paths)
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
            raise DatasetError(f"the results name {unknown[0]!r}, which the hosts file has "
                               f"neither as host nor as address ({len(unknown)} unknown)")
        frame["src"], frame["dst"] = frame["src"].map(name), frame["dst"].map(name)
        table = table[table["host"].isin(set(frame["src"]) | set(frame["dst"]))]
    tools = sorted(set(frame["tool"]))
    writer = MeasurementWriter(output, {"method": "iperf3", "source": "pscheduler",
                                        "params": {"tools": tools, "runs": len(frame)}},
                               table[["host", "address", "label"]], overwrite=overwrite,
                               probes=True)
    for row in frame.to_dict("records"):
        writer.add_probe({k: (None if isinstance(v, float) and v != v else v)
                          for k, v in row.items()})
    return len(frame)
