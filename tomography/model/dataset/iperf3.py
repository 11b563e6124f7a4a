"""iperf3's JSON reports (``iperf3 -J``): one test's figures, and directories of them as a dataset.

:func:`parse_iperf3` reads the figures of one report; the probe meshes
(:mod:`measure.prober`) write their rows with it, and
:func:`import_iperf3` (``tomography import iperf3``) makes a probe dataset
of reports a site kept, the same rows and ``raw/`` as a mesh writes.

Who sent: iperf3's client sends unless the test is reversed
(``start.test_start.reverse``); in the client's report ``start.connected``
has the client as ``local_host``, in the server's report as
``remote_host`` (the server's report has ``start.accepted_connection``).
The client's and the server's reports of one test are one test: they
share ``start.cookie`` (else the start time and the connection's
addresses and ports), and the client's is kept.
"""

from __future__ import annotations

import ipaddress
import json
import os
from collections import Counter
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import pandas as pd

from tomography.model.dataset.schema import MAX_FILE_BYTES
from tomography.model.errors import DatasetError
from tomography.model.files import open_regular
from tomography.model.dataset.probe_import import (MAX_RETRANSMITS, MAX_STREAMS, MAX_TEST_SECONDS,
                                                   ImportSummary, _aliases, _figure, _part,
                                                   _probe_frame, _Refused, stream_count,
                                                   write_probe_import)
from tomography.model.safe_load import MAX_BYTES, DocumentError, load_json, read_bounded
from tomography.model.topology import MAX_BANDWIDTH

__all__ = ["parse_iperf3", "iperf3_endpoints", "read_iperf3", "import_iperf3", "unreachable"]

UNREACHABLE = ("no route to host", "network is unreachable", "connection timed out")
"""What the system says (``strerror``) when a connection cannot be made: the network
refuses it (a firewall that rejects the pair), or nothing answers it (one that drops it;
the probe agents' iperf3 clients give up after
:data:`measure.prober.CONNECT_TIMEOUT`)."""


def unreachable(error: object) -> bool:
    """Whether a test's error says the network refused the connection or left it unanswered
    (the pair is dead).

    Examples
    --------
    >>> unreachable("unable to connect to server: No route to host")
    True
    >>> unreachable("unable to connect to server: Connection timed out")
    True
    >>> unreachable("unable to connect to server: Connection refused"), unreachable(None)
    (False, False)
    """
    return isinstance(error, str) and any(word in error.lower() for word in UNREACHABLE)

def parse_iperf3(text: str) -> dict[str, Any]:
    """The figures of one iperf3 ``-J`` client test.

    Returns
    -------
    dict
        ``bits_per_second`` (received, the receiver's count; UDP: ``end.sum``),
        ``bytes`` (received), ``duration_s``, ``retransmits``, ``rtt_ms``
        (mean of the sender's streams, None when this side measured none:
        iperf3 measures the RTT on the sending host only, and writes
        ``mean_rtt`` 0, with ``"sender": false``, on the other),
        ``streams``, ``protocol`` (``tcp`` or ``udp``) and ``error`` (""
        when the test ran).

    Examples
    --------
    >>> doc = {"start": {"test_start": {"num_streams": 1}},
    ...        "end": {"sum_received": {"bytes": 1250000, "seconds": 1.0,
    ...                                 "bits_per_second": 1e7},
    ...                "sum_sent": {"retransmits": 3},
    ...                "streams": [{"sender": {"mean_rtt": 1500}}]}}
    >>> r = parse_iperf3(json.dumps(doc))
    >>> r["bits_per_second"], r["retransmits"], r["rtt_ms"], r["error"]
    (10000000.0, 3, 1.5, '')
    >>> doc["end"]["streams"] = [{"sender": {"mean_rtt": 0, "sender": False}}]  # -R client
    >>> parse_iperf3(json.dumps(doc))["rtt_ms"] is None
    True
    >>> parse_iperf3('{"error": "the server is busy running a test. try again later"}')["error"]
    'the server is busy running a test. try again later'
    >>> parse_iperf3("no json")["error"]
    "iperf3 gave no JSON: 'no json'"
    >>> doc["end"]["sum_received"]["seconds"] = -1
    >>> parse_iperf3(json.dumps(doc))["error"]
    'end.sum_received.seconds -1 is no figure of a test (above 0 to 1.728e+05)'
    """
    try:
        doc = json.loads(text)
    except json.JSONDecodeError:
        return {"error": f"iperf3 gave no JSON: {text.strip()[:200]!r}"}
    if not isinstance(doc, dict):
        return {"error": "iperf3's report is not a JSON object"}
    test_start = _mapping(_mapping(doc.get("start")).get("test_start"))
    udp = str(test_start.get("protocol", "")).upper() == "UDP"
    streams = stream_count(test_start.get("num_streams"))
    figures: dict[str, Any] = {"protocol": "udp" if udp else "tcp", "streams": streams or 1}
    if streams is None and test_start.get("num_streams") not in (None, ""):
        return {**figures, "error": f"start.test_start.num_streams "
                                    f"{test_start['num_streams']!r} is not a number of streams "
                                    f"(a whole number from 1 to {MAX_STREAMS})"}
    if doc.get("error"):
        return {**figures, "error": str(doc["error"])}
    try:
        return {**figures, **_figures(_mapping(doc.get("end")), udp), "error": ""}
    except _Refused as exc:
        return {**figures, "error": str(exc)}


def _figures(end: dict[str, Any], udp: bool) -> dict[str, Any]:
    """The figures of a report's ``end``, each checked (:class:`_Refused` names the field)."""
    names = ("sum", "sum_received") if udp else ("sum_received", "sum")
    parts = {name: _part(end, name, "end.") for name in (*names, "sum_sent")}
    name = next((n for n in names if parts[n]), None)
    if name is None:
        raise _Refused("no end.sum_received (a report without \"error\" gives "
                       "end.sum_received: bits_per_second, bytes, seconds)")
    received, where = parts[name], f"end.{name}."
    streams = _part(end, "streams", "end.", list) or []
    senders = [s.get("sender") for s in streams if isinstance(s, dict)]
    rtts = [s["mean_rtt"] for s in senders if isinstance(s, dict) and s.get("sender") is not False
            and isinstance(s.get("mean_rtt"), (int, float)) and not isinstance(s["mean_rtt"], bool)
            and 0 < s["mean_rtt"] < 1e12]
    return {"bits_per_second": _figure(received, "bits_per_second", where, high=MAX_BANDWIDTH),
            "bytes": int(_figure(received, "bytes", where, high=MAX_FILE_BYTES, whole=True)),
            "duration_s": _figure(received, "seconds", where, high=MAX_TEST_SECONDS,
                                  positive=True),
            "retransmits": int(_figure(parts["sum_sent"] or {}, "retransmits", "end.sum_sent.",
                                       high=MAX_RETRANSMITS, whole=True, default=0)),
            "rtt_ms": float(np.mean(rtts)) / 1000 if rtts else None}


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def iperf3_endpoints(doc: dict[str, Any]) -> tuple[str | None, str | None]:
    """(sender, receiver) addresses of an iperf3 report, None where it does not say.

    Only ``start.connected`` and ``start.connecting_to`` name hosts
    (``start.system_info`` names the machine, not an address): a failed
    client report without a connection knows its server and not itself,
    and a report without ``start.test_start`` does not say who sent.

    Examples
    --------
    >>> client = {"start": {"connecting_to": {"host": "10.0.0.2", "port": 5201},
    ...           "connected": [{"local_host": "10.0.0.1", "remote_host": "10.0.0.2"}],
    ...           "test_start": {"reverse": 0}}}
    >>> iperf3_endpoints(client)
    ('10.0.0.1', '10.0.0.2')
    >>> client["start"]["test_start"]["reverse"] = 1       # -R: the server sends
    >>> iperf3_endpoints(client)
    ('10.0.0.2', '10.0.0.1')
    >>> client["start"]["connected"][0]["remote_host"] = "::ffff:10.0.0.2"   # dual-stack
    >>> iperf3_endpoints(client)
    ('10.0.0.2', '10.0.0.1')
    >>> iperf3_endpoints({"start": {"connecting_to": {"host": "10.0.0.2"}, "connected": [],
    ...                             "system_info": "Linux ps-a 6.1.0 x86_64"}})
    (None, None)
    """
    start = _mapping(doc.get("start"))
    connected = start.get("connected")
    first = _mapping(connected[0]) if isinstance(connected, list) and connected else {}
    local, remote = first.get("local_host"), first.get("remote_host")
    server = "accepted_connection" in start and "connecting_to" not in start
    if not first:  # no connection (a failed test): the server the client tried, itself unknown
        local, remote = None, _mapping(start.get("connecting_to")).get("host")
    client, srv = (remote, local) if server else (local, remote)
    if "test_start" not in start:  # who sent is not said
        return None, None
    reverse = bool(_mapping(start.get("test_start")).get("reverse"))
    sender, receiver = (srv, client) if reverse else (client, srv)
    text = [_address(v) if isinstance(v, str) and v else None for v in (sender, receiver)]
    return text[0], text[1]


def _address(value: str) -> str:
    """An IPv4 address as iperf3 gives it on a dual-stack socket (``::ffff:10.0.0.1``) as
    itself (``10.0.0.1``); any other name as it is."""
    try:
        mapped = ipaddress.IPv6Address(value).ipv4_mapped
    except ValueError:
        return value
    return value if mapped is None else str(mapped)


NO_ENDS = "failed report{s} name{v} no endpoints (skipped)"
NO_DIRECTION = "failed report{s} without start.test_start: who sent unknown (skipped)"
SAME_HOST = "report{s} of a test from a host to itself (skipped)"


def _identify(row: dict[str, Any], doc: dict[str, Any]) -> None:
    """Keys naming the test of a report (its cookie; its connection) and its rank: the
    client's report first, as :func:`tomography.model.dataset.pscheduler._drop_duplicates`
    takes them."""
    start = _mapping(doc.get("start"))
    test = _mapping(start.get("test_start"))
    keys: list[Any] = []
    if isinstance(start.get("cookie"), str) and start["cookie"]:
        keys.append(("cookie", start["cookie"]))
    connected = start.get("connected")
    first = _mapping(connected[0]) if isinstance(connected, list) and connected else {}
    if first.get("local_host") and first.get("remote_host"):
        keys.append(("connection", frozenset(map(str, (first["local_host"],
                                                       first["remote_host"]))),
                     frozenset(map(str, (first.get("local_port"), first.get("remote_port"))))))
    row["_keys"] = keys
    row["_sig"] = (test.get("num_streams"), bool(test.get("reverse")), bool(test.get("bidir")))
    row["_rank"] = 1 if "accepted_connection" in start and "connecting_to" not in start else 0


def read_iperf3(paths: Iterable[str | os.PathLike[str]]) -> tuple[pd.DataFrame, list[str]]:
    """iperf3 ``-J`` reports (files, or directories of ``*.json``) as rows of ``probes.csv``.

    Returns
    -------
    (DataFrame, list of str)
        The rows (``src`` and ``dst`` the addresses the reports give) and
        each row's report as it was written.  ``attrs["duplicates"]``
        counts the second reports of one test (the server's beside the
        client's), ``attrs["dropped"]`` the failed reports that name no
        endpoints or do not say who sent.

    Raises
    ------
    DatasetError
        A file that is neither an iperf3 report nor readable, or a report
        of a test that ran without its figures (``end.sum_received``), named.

    Examples
    --------
    >>> import tempfile
    >>> doc = {"start": {"connected": [{"local_host": "10.0.0.1", "remote_host": "10.0.0.2"}],
    ...                  "connecting_to": {"host": "10.0.0.2"},
    ...                  "test_start": {"protocol": "TCP", "num_streams": 1, "reverse": 0}},
    ...        "end": {"sum_received": {"bytes": 1175000000, "seconds": 10.0,
    ...                                 "bits_per_second": 9.4e8}, "sum_sent": {"retransmits": 0}}}
    >>> f = tempfile.mkdtemp() + "/t.json"
    >>> _ = open(f, "w").write(json.dumps(doc))
    >>> read_iperf3([f])[0][["src", "dst", "bits_per_second"]].values.tolist()
    [['10.0.0.1', '10.0.0.2', 940000000.0]]
    """
    rows: list[dict[str, Any]] = []
    paths = [Path(p) for p in paths]
    for path in paths:
        if not path.exists():
            raise DatasetError("no such file or directory", path=path)
        files = sorted(p for p in path.rglob("*.json") if not p.is_dir()) if path.is_dir() \
            else [path]
        for file in files:
            with open_regular(file, MAX_BYTES, kind="iperf3 report") as fh:   # no FIFO, device
                data, _ = read_bounded(fh, what=str(file), kind="iperf3 report")
            try:
                text = data.decode("utf-8-sig")
            except UnicodeDecodeError as exc:
                raise DatasetError(f"not UTF-8 text (byte {exc.start}): not an iperf3 -J "
                                   "report", path=file) from None
            try:
                doc = load_json(data, what=str(file), kind="iperf3 report")
            except DocumentError as exc:
                raise DatasetError(f"{exc.reason} (iperf3 -J writes one JSON document)",
                                   path=file, line=exc.line) from None
            if not isinstance(doc, dict) or not ("start" in doc or "error" in doc):
                raise DatasetError("not an iperf3 -J report (no 'start')", path=file)
            sender, receiver = iperf3_endpoints(doc)
            figures = parse_iperf3(text)
            start = _mapping(doc.get("start"))
            if figures["error"].startswith("start.test_start."):   # a field out of range
                raise DatasetError(figures["error"], path=file)
            if figures["error"] and not doc.get("error"):  # the test ran: its figures must
                raise DatasetError(figures["error"], path=file)
            try:
                stamp = _part(start, "timestamp", "start.") or {}
                began = (None if stamp.get("timesecs") is None else
                         _figure(stamp, "timesecs", "start.timestamp.", high=2.0**40))
            except _Refused as exc:
                raise DatasetError(str(exc), path=file) from None
            row = {"src": sender or "", "dst": receiver or "", "tool": "iperf3",
                   "concurrent": 1, "start": began,
                   "repeat": 0, **figures, "error": figures["error"].replace("\n", " ")[:300],
                   "_where": str(file), "_raw": text}
            _identify(row, doc)
            connected = start.get("connected")
            first = _mapping(connected[0]) if isinstance(connected, list) and connected else {}
            machine = str(start.get("system_info") or "").split()
            if len(machine) > 1:   # "Linux NAME ...": the machine the report was written on
                _aliases(row, (first.get("local_host"), machine[1]))
            if sender is None or receiver is None:
                if not figures["error"]:
                    raise DatasetError("the report names no endpoints (start.connected)",
                                       path=file)
                row["_drop"] = NO_DIRECTION if _connection(start) and "test_start" not in start \
                    else NO_ENDS
            elif sender == receiver:
                row["_drop"] = SAME_HOST
            elif _mapping(start.get("test_start")).get("bidir"):
                raise DatasetError("a bidirectional test (--bidir): two tests in one report, "
                                   "not read", path=file)
            rows.append(row)
    if not rows:
        raise DatasetError("no iperf3 report in " + ", ".join(map(str, paths)))
    frame = _probe_frame(rows, paths, Counter(), "whose test failed before it named its hosts")
    raws = frame.pop("_raw").tolist()
    return frame, raws


def _connection(start: dict[str, Any]) -> bool:
    """Whether a report names both ends of its connection (``start.connected``)."""
    connected = start.get("connected")
    first = _mapping(connected[0]) if isinstance(connected, list) and connected else {}
    return bool(first.get("local_host") and first.get("remote_host"))


def import_iperf3(paths: Iterable[str | os.PathLike[str]], output: str | os.PathLike[str], *,
                  hosts: pd.DataFrame | None = None, overwrite: bool = False) -> ImportSummary:
    """Write a probe dataset (method ``iperf3``, source ``iperf3-json``) from iperf3 reports.

    Parameters
    ----------
    paths : iterable of path
        Report files or directories of them.
    output : path
        The dataset directory; ``raw/`` gets each report, as a mesh keeps them.
    hosts : DataFrame, optional
        ``host,address[,label]``: names for the addresses; by default each
        address is a host.

    Returns
    -------
    ImportSummary
        Rows written, UDP rows among them, failed tests, reports skipped.

    Examples
    --------
    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> doc = {"start": {"connected": [{"local_host": "10.0.0.1", "remote_host": "10.0.0.2"}],
    ...                  "connecting_to": {"host": "10.0.0.2"}, "test_start": {"reverse": 0}},
    ...        "end": {"sum_received": {"bytes": 1.175e9, "seconds": 10.0,
    ...                                 "bits_per_second": 9.4e8}}}
    >>> _ = open(d + "/t.json", "w").write(json.dumps(doc))
    >>> import_iperf3([d + "/t.json"], d + "/ds").rows
    1
    """
    frame, raws = read_iperf3(paths)
    return write_probe_import(frame, output, "iperf3-json", hosts=hosts, overwrite=overwrite,
                              raw=raws, params={"files": len(raws)})
