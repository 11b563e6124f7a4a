"""Pairwise probe meshes: iperf3 or NetPIPE between every ordered pair, on any launcher.

:func:`run_mesh` starts a probe agent (``python -m measure.agent --role probe``,
:mod:`measure.prober`) on every host through the run's transport (local, testbed,
SSH or MPI, with the same preflight as the BitTorrent runs), then runs one
test per ordered pair and repeat, and appends each result to ``probes.csv``
as it finishes, its raw output to ``raw/``.

Schedules (:func:`batches`), what runs at once and what it costs with N
hosts and a test of T seconds:

``exclusive``  one test at a time in the whole mesh (perfSONAR's rule):
               N(N-1) T, and no test disturbs another.
``rounds``     a round-robin tournament: N-1 rounds of N/2 disjoint pairs, each
               pair run one direction then the other, all pairs of a round at
               once: 2(N-1) T.  Disjoint pairs share no host, but they can
               share a *link* (two pairs whose paths cross one uplink): such
               tests split that link and report less than it carries alone,
               which is exactly the shared-bottleneck effect of the
               concurrency test; the ``concurrent`` column says how many ran.
``--pairs``    only the listed pairs, one at a time (or packed into rounds of
               disjoint pairs with ``rounds``).

Servers: each test gets a server of its own, started for it on a port drawn
at random from :data:`PORTS` (or the range ``MeshOptions.ports`` gives, the
one a firewall between the hosts lets through; one port will do, since a
host serves one test at a time) and serving that one test (iperf3 ``-1``;
NetPIPE's receiver does so anyway).  iperf3's servers check the run's
credentials (:func:`measure.probetools.iperf3_credentials`: a random user and
password and an RSA key pair made for the run and handed to the agents over
their command channel), so a client outside the run is refused ("test
authorization failed") and no test of an outsider reaches the dataset.

A failed test is tried again at once with a fresh server (up to
:data:`ATTEMPTS` times, unless it timed out or its agent died: an outsider
that took the server, a busy or refused server), then once more at the end;
the mesh goes on.  ``probes.csv`` holds at most one row per (src, dst,
repeat): a later attempt replaces the row of the one before, so the row is
the successful test or the last failure.  ``resume`` runs only the tests
without a successful row.
NetPIPE rows carry Hockney's ``alpha_s`` and ``beta_s_per_byte`` (``bits_per_second`` is 8 / beta)
(:func:`measure.probetools.hockney_fit`) and keep each curve in ``raw/``.
"""

from __future__ import annotations

import csv
import os
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ClassVar, Mapping, Sequence

import numpy as np
import pandas as pd

from measure.concurrency import ConcurrencyTest, verdict
from measure.coordinator import AgentGroup, checked_agents, host_frame, transport_of
from measure.preflight import HostCheck
from measure.probetools import (IPERF3_DEFAULTS, NETPIPE_DEFAULTS, Credentials, hockney_fit,
                                iperf3_credentials, parse_netpipe)
from measure.session import Run, Summary
from measure.swarm import SwarmParams
from measure.transport import Launcher, Transport, local
from tomography.model.dataset import HOSTS_COLUMNS, MeasurementWriter, read_measurement
from tomography.model.dataset.concurrency import CONCURRENCY_COLUMNS, ConcurrencyWriter
from tomography.model.dataset.iperf3 import parse_iperf3, unreachable
from tomography.model.dataset.lock import DIR_MODE, file_opener
from tomography.model.dataset.meta import refuse_other_run
from tomography.model.dataset.validation import read_csv
from tomography.model.errors import DatasetError, ParameterError, ProbeError, TomographyError

__all__ = ["MeshOptions", "MeshSummary", "ordered_pairs", "tournament", "batches",
           "read_pairs", "run_mesh", "run_concurrency", "unique_probe_rows", "SCHEDULES",
           "PORTS", "ATTEMPTS"]

SCHEDULES = ("exclusive", "rounds")
PORTS = (10000, 32767)
"""The ports a test's server is drawn from by default, at random, both included (below
Linux's ephemeral range): a server lives for its test only, at a port nobody outside the
run knows in advance."""
ATTEMPTS = 3
"""Attempts of a test within its batch, each with a fresh server (a timeout is not retried
at once); the tests still failed are tried once more at the end of the mesh."""


@dataclass
class MeshOptions:
    """What each test runs.

    Attributes
    ----------
    tool : {"iperf3", "netpipe"}
    duration, parallel, omit : int
        iperf3's ``-t`` (default 10 s, iperf3's), ``-P`` (1 stream) and
        ``-O`` (0 s omitted at the start); whole seconds.
    upper, samples : int
        NetPIPE's largest message (128 KiB) and round trips per size (5).
    repeats : int
        Tests per ordered pair.
    one_way : bool
        One direction per pair (a < b), half the cost.
    schedule : {"exclusive", "rounds"}
    ports : (int, int)
        The range the servers' ports are drawn from, both included
        (default :data:`PORTS`).
    """

    tool: str = "iperf3"
    duration: int = IPERF3_DEFAULTS["duration"]
    parallel: int = IPERF3_DEFAULTS["parallel"]
    omit: int = IPERF3_DEFAULTS["omit"]
    upper: int = NETPIPE_DEFAULTS["upper"]
    samples: int = NETPIPE_DEFAULTS["samples"]
    repeats: int = 1
    one_way: bool = False
    schedule: str = "exclusive"
    ports: tuple[int, int] = PORTS

    def validate(self) -> None:
        low, high = self.ports
        if not 1 <= low <= high <= 65535:
            raise ParameterError(f"ports {low}-{high} are not a range of TCP ports: give "
                                 "LOW-HIGH with 1 <= LOW <= HIGH <= 65535")
        if self.tool not in ("iperf3", "netpipe"):
            raise ParameterError(f"unknown probe tool {self.tool!r}; choose iperf3 or netpipe")
        if self.schedule not in SCHEDULES:
            raise ParameterError(f"unknown schedule {self.schedule!r}; choose "
                                 f"{' or '.join(SCHEDULES)}")
        if (int(self.duration) != self.duration or self.duration < 1 or self.parallel < 1
                or int(self.omit) != self.omit or self.omit < 0 or self.repeats < 1):
            raise ParameterError("duration must be whole seconds >= 1 (iperf3 reads 0.5 as 0, "
                                 "'for ever'), omit whole seconds >= 0, parallel and repeats >= 1; "
                                 f"got duration={self.duration}, omit={self.omit}, "
                                 f"parallel={self.parallel}, repeats={self.repeats}")


@dataclass(kw_only=True)
class MeshSummary(Summary):
    """What a mesh did: tests run, and those that failed twice."""

    done: int = 0
    failed: list[tuple[str, str, int, str]] = field(default_factory=list)
    UNIT: ClassVar[str] = "test"

    def count(self) -> int:
        return self.done

    def details(self) -> list[str]:
        return [f"{src} -> {dst} (repeat {repeat}) failed twice: {error}"
                for src, dst, repeat, error in self.failed]


def ordered_pairs(hosts: Sequence[str], *, one_way: bool = False) -> list[tuple[str, str]]:
    """Every ordered pair of hosts (or each unordered pair once, ``a < b``).

    Examples
    --------
    >>> ordered_pairs(["a", "b", "c"], one_way=True)
    [('a', 'b'), ('a', 'c'), ('b', 'c')]
    >>> len(ordered_pairs(["a", "b", "c"]))
    6
    """
    hosts = sorted(hosts)
    return [(a, b) for a in hosts for b in hosts if a != b and (not one_way or a < b)]


def tournament(hosts: Sequence[str]) -> list[list[tuple[str, str]]]:
    """A round-robin tournament (the circle method): N-1 rounds of disjoint pairs.

    With an odd number of hosts one sits out each round (N rounds).

    Examples
    --------
    >>> rounds = tournament(["a", "b", "c", "d"])
    >>> len(rounds), [len(r) for r in rounds]
    (3, [2, 2, 2])
    >>> sorted(tuple(sorted(p)) for r in rounds for p in r) == ordered_pairs("abcd", one_way=True)
    True
    """
    players: list[str | None] = sorted(hosts)
    if len(players) % 2:
        players.append(None)
    n = len(players)
    rounds = []
    for _ in range(n - 1):
        pairs = [(players[i], players[n - 1 - i]) for i in range(n // 2)]
        rounds.append([(a, b) for a, b in pairs if a is not None and b is not None])
        players = [players[0], players[-1], *players[1:-1]]
    return rounds


def _pack(pairs: list[tuple[str, str]]) -> list[list[tuple[str, str]]]:
    """Greedy rounds of pairs that share no host."""
    rounds: list[list[tuple[str, str]]] = []
    busy: list[set[str]] = []
    for a, b in pairs:
        for r, used in zip(rounds, busy):
            if a not in used and b not in used:
                r.append((a, b))
                used.update((a, b))
                break
        else:
            rounds.append([(a, b)])
            busy.append({a, b})
    return rounds


def batches(hosts: Sequence[str], schedule: str = "exclusive", *, one_way: bool = False,
            pairs: list[tuple[str, str]] | None = None) -> list[list[tuple[str, str]]]:
    """The tests of one repeat, in batches that run at once.

    Examples
    --------
    >>> [len(b) for b in batches("abcd")]   # exclusive: 12 tests, one at a time
    [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]
    >>> [len(b) for b in batches("abcd", "rounds")]   # 3 rounds x 2 directions
    [2, 2, 2, 2, 2, 2]
    >>> batches("abcd", "rounds", pairs=[("a", "b"), ("c", "d"), ("a", "c")])
    [[('a', 'b'), ('c', 'd')], [('a', 'c')]]
    """
    if pairs is not None:
        return [[p] for p in pairs] if schedule == "exclusive" else _pack(list(pairs))
    if schedule == "exclusive":
        return [[p] for p in ordered_pairs(hosts, one_way=one_way)]
    out = []
    for round_ in tournament(hosts):
        out.append(round_)
        if not one_way:
            out.append([(b, a) for a, b in round_])
    return [b for b in out if b]


def read_pairs(path: str | Path, hosts: Sequence[str]) -> list[tuple[str, str]]:
    """A ``--pairs`` file: CSV ``src,dst``, hosts of the run.

    Raises
    ------
    DatasetError
        Naming the file, line and field of an unknown host or a self-pair.
    """
    path = Path(path)
    if not path.exists():
        raise DatasetError("no such pairs file", path=path)
    frame = read_csv(path, ("src", "dst"))    # a regular UTF-8 file within the limits
    known = set(hosts)
    out = []
    for line, (src, dst) in enumerate(zip(frame["src"].str.strip(), frame["dst"].str.strip()),
                                      start=2):
        for column, host in (("src", src), ("dst", dst)):
            if host not in known:
                raise DatasetError(f"unknown host {host!r}", path=path, line=line,
                                   field=column)
        if src == dst:
            raise DatasetError("a host cannot probe itself", path=path, line=line, field="dst")
        out.append((src, dst))
    return out


Key = tuple[str, str, int]


def _row_key(header: list[str], fields: list[str]) -> Key | None:
    """(src, dst, repeat) of one row of ``probes.csv``; None for a line that is no row."""
    try:
        row = dict(zip(header, fields))
        return row["src"], row["dst"], int(float(row.get("repeat") or 0))
    except (KeyError, ValueError):
        return None


def unique_probe_rows(path: str | os.PathLike[str], drop: set[Key] | None = None
                      ) -> set[Key]:
    """Make ``probes.csv`` hold at most one row per (src, dst, repeat), in place and atomically.

    Of several rows of one test the successful one is kept (the last, if
    several succeeded), else the last failure; the rows of the tests in
    ``drop`` go (a new attempt is about to be written).  The file is
    rewritten only when a row goes, through a temporary file and
    ``os.replace``: a reader sees the old file or the new one.

    Parameters
    ----------
    path : path
        A ``probes.csv`` (or the dataset directory holding it).
    drop : set of (src, dst, repeat), optional
        Tests whose rows are removed.

    Returns
    -------
    set of (src, dst, repeat)
        The tests that keep a row.

    Examples
    --------
    >>> import tempfile
    >>> f = Path(tempfile.mkdtemp(), "probes.csv")
    >>> _ = f.write_text("src,dst,bits_per_second,repeat,error\\n"
    ...                  "a,b,,0,the server is busy\\n" "a,b,9e8,0,\\n" "b,a,,0,refused\\n"
    ...                  "b,a,,0,timeout\\n" "a,b,8e8,1,\\n")
    >>> sorted(unique_probe_rows(f))
    [('a', 'b', 0), ('a', 'b', 1), ('b', 'a', 0)]
    >>> print(f.read_text(), end="")
    src,dst,bits_per_second,repeat,error
    a,b,9e8,0,
    b,a,,0,timeout
    a,b,8e8,1,
    >>> sorted(unique_probe_rows(f, drop={("b", "a", 0)}))
    [('a', 'b', 0), ('a', 'b', 1)]
    """
    path = Path(path)
    if path.is_dir():
        path = path / "probes.csv"
    lines = path.read_text(encoding="utf-8-sig").splitlines(keepends=True)
    if not lines:
        return set()
    header = [c.strip() for c in next(csv.reader([lines[0]]))]
    chosen: dict[Key, tuple[int, bool]] = {}   # test -> (line number kept, it succeeded)
    keys: list[Key | None] = [None]
    for number, line in enumerate(lines[1:], start=1):
        fields = next(csv.reader([line]), [])
        key = _row_key(header, fields)
        keys.append(key)
        if key is None:
            continue
        ok = not dict(zip(header, fields)).get("error", "").strip()
        if key not in chosen or ok or not chosen[key][1]:
            chosen[key] = (number, ok)
    for key in drop or ():
        chosen.pop(key, None)
    keep = [0] + [n for n in range(1, len(lines))
                  if keys[n] is None or chosen.get(keys[n], (None,))[0] == n]
    if len(keep) < len(lines):
        fresh = path.with_name(path.name + ".tmp")
        with fresh.open("w", encoding="utf-8", newline="") as fh:
            fh.writelines(lines[n] for n in keep)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(fresh, path)
    return set(chosen)


def _interfered(error: str) -> bool:
    """Whether a failed test is worth another attempt at once (not a timeout, not a lost agent,
    not a pair the network refuses)."""
    text = error.lower()
    return not unreachable(text) and not any(word in text for word in
                                             ("timeout", "no result", "hockney"))


class _Mesh:
    """Runs batches of tests on a checked group of probe agents and writes each row.

    With ``unique`` (a mesh; not the concurrency test, whose tests repeat
    pairs on purpose) a test's row replaces the row an earlier attempt of
    the same (src, dst, repeat) left.
    """

    def __init__(self, agents: AgentGroup, writer: MeasurementWriter, options: MeshOptions,
                 raw: Path, *, unique: bool = True) -> None:
        self.agents, self.writer, self.options, self.raw = agents, writer, options, raw
        self.next_id = 0
        self.port: dict[str, int] = {}
        self.random = random.SystemRandom()
        self.unique = unique
        self.last: dict[tuple[str, str], dict[str, Any]] = {}   # each test's last row, its end
        self.on_disk: set[Key] = set()
        if unique and (writer.path / "probes.csv").exists():
            self.on_disk = unique_probe_rows(writer.path / "probes.csv")

    def authenticate(self, credentials: Credentials) -> dict[str, str]:
        """Give every agent the run's credentials; the hosts that failed, with why."""
        hosts = set(self.agents.peers)
        for h in hosts:
            self.agents.peers[h].send({"cmd": "auth", **credentials.message()})
        errors: dict[str, str] = {}
        replies = self.agents.wait(hosts, "auth", 30,
                                   lambda h, m: errors.setdefault(h, m.get("message", str(m))))
        return {h: errors.get(h, "no answer") for h in sorted(hosts) if h not in replies}

    def serve(self, hosts: Sequence[str]) -> dict[str, str]:
        """Start a server for one test on each of ``hosts``, each on a fresh random port; the
        hosts that failed, with why."""
        o = self.options
        hosts = sorted(set(hosts))
        span = range(o.ports[0], o.ports[1] + 1)
        # distinct ports where the range allows; a host serves one test at a time, so
        # hosts may share one where it does not
        ports = (self.random.sample(span, len(hosts)) if len(span) >= len(hosts)
                 else [self.random.choice(span) for _ in hosts])
        for h, port in zip(hosts, ports):
            self.port[h] = port
            self.agents.peers[h].send({"cmd": "serve", "tool": o.tool, "port": port,
                                       "upper": o.upper, "samples": o.samples})
        errors: dict[str, str] = {}
        replies = self.agents.wait(set(hosts), "serving", 30,
                                   lambda h, m: errors.setdefault(h, m.get("message", str(m))))
        return {h: errors.get(h, "no answer") for h in hosts if h not in replies}

    def run(self, batch: list[tuple[str, str]], repeat: int) -> list[tuple[str, str, str]]:
        """Run one batch at once; write its rows; return the failed tests with their errors."""
        return [(s, d, error) for (s, d), (_, error) in self.measure(batch, repeat).items()
                if error]

    def measure(self, batch: list[tuple[str, str]], repeat: int,
                reverse: frozenset[tuple[str, str]] = frozenset(),
                duration: Mapping[tuple[str, str], int] | None = None
                ) -> dict[tuple[str, str], tuple[float | None, str]]:
        """Run one batch at once, a failed test again up to :data:`ATTEMPTS` times; write the
        rows; each test's rate (bit/s) or its last error.  The pairs of ``reverse`` (iperf3)
        run from a server on their sender to a client on their receiver (``-R``): a host
        receives several of them at once (it serves one test at a time).  ``duration``
        gives pairs seconds of their own (iperf3; the others run the options')."""
        out: dict[tuple[str, str], tuple[float | None, str]] = {}
        todo = list(batch)
        for _ in range(ATTEMPTS):
            got = self._attempt(todo, repeat, len(batch), reverse, duration)
            out.update(got)
            todo = [pair for pair, (_, error) in got.items() if error and _interfered(error)]
            if not todo:
                break
        return out

    def _attempt(self, batch: list[tuple[str, str]], repeat: int, concurrent: int,
                 reverse: frozenset[tuple[str, str]] = frozenset(),
                 duration: Mapping[tuple[str, str], int] | None = None
                 ) -> dict[tuple[str, str], tuple[float | None, str]]:
        """One attempt of the tests of ``batch``, at once, each with a server of its own."""
        out: dict[tuple[str, str], tuple[float | None, str]] = {}
        o = self.options
        seconds = {pair: duration.get(pair, o.duration) for pair in batch} if duration \
            else dict.fromkeys(batch, o.duration)

        def ends(pair: tuple[str, str]) -> tuple[str, str]:
            """The test's client and server hosts."""
            return pair[::-1] if pair in reverse else pair

        down = self.serve([ends(pair)[1] for pair in batch])
        sent: dict[int, tuple[str, str]] = {}
        for src, dst in batch:
            client, server = ends((src, dst))
            if server in down:
                error = f"server on {server}: {down[server]}"
                self._write(src, dst, repeat, concurrent, {"start": time.time(), "end":
                                                           time.time(), "result":
                                                           {"error": error}})
                out[(src, dst)] = (None, error)
                continue
            self.next_id += 1
            sent[self.next_id] = (src, dst)
            self.agents.peers[client].send({"cmd": "probe", "id": self.next_id, "tool": o.tool,
                                            "dst": self.agents.address[server],
                                            "port": self.port[server],
                                            "duration": seconds[(src, dst)],
                                            "parallel": o.parallel, "omit": o.omit,
                                            "upper": o.upper, "samples": o.samples,
                                            "reverse": (src, dst) in reverse})
        limit = (max(seconds.values(), default=o.duration) + o.omit + 30
                 if o.tool == "iperf3" else 240)
        pending = dict(sent)
        deadline = time.monotonic() + limit
        results: list[dict[str, Any]] = []   # a host may run several tests at once

        def also(host: str, event: dict[str, Any]) -> None:
            if event.get("event") == "probed":
                results.append(event)

        while pending and time.monotonic() < deadline:
            got = self.agents.wait({ends(pair)[0] for pair in pending.values()}, "probed",
                                   max(0.1, deadline - time.monotonic()), also)
            results.extend(got.values())
            if not results:
                break
            for event in results:
                key = event.get("id")
                if key in pending:
                    pair = pending.pop(key)
                    out[pair] = self._write(*pair, repeat, concurrent, event)
            results.clear()
        for s, d in pending.values():
            client = ends((s, d))[0]
            error = (f"no result: the agent on {client} "
                     + ("died" if not self.agents.peers[client].alive() else "did not answer"))
            self._write(s, d, repeat, concurrent, {"start": time.time(), "end": time.time(),
                                                   "result": {"error": error}})
            out[(s, d)] = (None, error)
        return out

    def _write(self, src: str, dst: str, repeat: int, concurrent: int,
               event: dict[str, Any]) -> tuple[float | None, str]:
        result = _result(self.options.tool, event)
        error = result.get("error", "")
        row: dict[str, Any] = {"src": src, "dst": dst, "tool": self.options.tool,
                               "streams": self.options.parallel if self.options.tool ==
                               "iperf3" else 1, "concurrent": concurrent,
                               "start": round(float(event["start"]), 3), "repeat": repeat,
                               "error": error.replace("\n", " ")[:300]}
        stem = f"{src}--{dst}--{repeat}"
        if self.options.tool == "iperf3":
            if not error:
                row.update({k: result[k] for k in ("bits_per_second", "bytes", "retransmits",
                                                   "rtt_ms", "streams") if k in result})
                row["duration_s"] = result.get("duration_s")
            if event.get("raw"):
                with open(self.raw / f"{stem}.json", "w", encoding="utf-8",
                          opener=file_opener) as fh:
                    fh.write(event["raw"])
        elif not error:
            curve = np.array(result["curve"])
            with open(self.raw / f"{stem}.csv", "w", encoding="utf-8", newline="",
                      opener=file_opener) as fh:
                pd.DataFrame(curve, columns=["bytes", "seconds", "bits_per_second"]).to_csv(
                    fh, index=False)
            try:
                alpha, beta = hockney_fit(curve)
                row.update({"bits_per_second": 8 / beta, "alpha_s": alpha,
                            "beta_s_per_byte": beta})
            except ValueError as exc:
                error = row["error"] = f"Hockney fit: {exc}"
            row["duration_s"] = round(float(event["end"]) - float(event["start"]), 3)
        if self.unique:
            key = (src, dst, int(repeat))
            if key in self.on_disk:   # an earlier attempt's row: this one takes its place
                unique_probe_rows(self.writer.path / "probes.csv", drop={key})
            self.on_disk.add(key)
        self.writer.add_probe(row)
        self.last[(src, dst)] = {**row, "end": float(event["end"])}
        return (None if error else row.get("bits_per_second")), error


def _result(tool: str, event: dict[str, Any]) -> dict[str, Any]:
    """A ``probed`` event's figures, read from the tool's output the agent sent (the agents
    stay light: they parse nothing); ``error`` is "" when the test ran.

    Examples
    --------
    >>> _result("iperf3", {"error": "timeout after 22 s", "raw": ""})
    {'error': 'timeout after 22 s'}
    >>> _result("netpipe", {"raw": "1 0.5 0.001" + chr(10) + "2 0.9 0.002"})["curve"]
    [[1.0, 0.001, 524288.0], [2.0, 0.002, 943718.4]]
    >>> _result("netpipe", {"raw": "garbage"})["error"]
    "NetPIPE output line 1 is not 'bytes Mbps seconds': 'garbage'"
    """
    if "result" in event:   # a failure the coordinator wrote itself
        return event["result"]
    if event.get("error"):
        return {"error": str(event["error"])}
    if tool == "iperf3":
        return parse_iperf3(str(event.get("raw", "")))
    try:
        return {"curve": parse_netpipe(str(event.get("raw", ""))).tolist(), "error": ""}
    except ProbeError as exc:
        return {"error": str(exc)}


def _start(run: Run, frame: pd.DataFrame, options: MeshOptions, launch: Launcher | Transport,
           meta: dict[str, Any] | None, params: dict[str, Any], overwrite: bool,
           skip_failed: bool, *, unique: bool = True) -> tuple[list[HostCheck], _Mesh]:
    """Checked probe agents (iperf3: each able to check credentials, and given the run's),
    handed to ``run``, and its dataset (new, or the one ``run`` reopened): what every mesh
    begins with."""
    agents, checks = checked_agents(frame, transport_of(launch), SwarmParams(), 0, 0,
                                    skip_failed, role="probe", tools=[options.tool])
    run.agents = agents
    names = sorted(agents.peers)
    if options.tool == "iperf3":
        unable = [h for h in names if not agents.hello[h].get("iperf3_auth")]
        if unable:
            raise ProbeError(f"iperf3 on {', '.join(unable)} cannot check credentials (it "
                             "needs iperf3 3.5 or later built with OpenSSL): its servers "
                             "would take tests from anyone")
        credentials = iperf3_credentials()
    writer = run.begin(checks, agents.transport.name, lambda records: MeasurementWriter(
        run.path, {"method": options.tool, **(meta or {}), **records, "params": params,
                   "tools": {h: agents.hello[h].get("tools", {}) for h in names}},
        frame[frame["host"].isin(names)][list(HOSTS_COLUMNS)], overwrite=overwrite,
        probes=True))
    raw = run.path / "raw"
    raw.mkdir(mode=DIR_MODE, exist_ok=True)
    mesh = _Mesh(agents, writer, options, raw, unique=unique)
    if options.tool == "iperf3":
        down = mesh.authenticate(credentials)
        if down:
            raise TomographyError("\n".join(f"host {h}: iperf3 credentials: {why}"
                                            for h, why in sorted(down.items())))
    return checks, mesh


def run_mesh(hosts: pd.DataFrame | Sequence[tuple[str, str, str]], output: str | Path, *,
             options: MeshOptions = MeshOptions(), pairs: list[tuple[str, str]] | None = None,
             launch: Launcher | Transport = local, meta: dict[str, Any] | None = None,
             resume: bool = False, overwrite: bool = False, skip_failed: bool = False,
             progress: Callable[[int, int], None] | None = None) -> MeshSummary:
    """Run a probe mesh among ``hosts`` and write a probe dataset (method iperf3 or netpipe).

    Parameters
    ----------
    hosts : DataFrame or sequence of (host, address, label)
    output : path
        The dataset directory.
    options : MeshOptions
        Tool, test parameters, repeats, one-way, schedule.
    pairs : list of (src, dst), optional
        Only these tests (``--pairs``).
    launch : callable or transport
        As for :func:`measure.coordinator.run_broadcasts`.
    meta : dict, optional
        More keys for ``meta.json``.
    resume : bool
        Run only the tests without a successful row in ``probes.csv``.
    overwrite, skip_failed : bool
        As for :func:`measure.coordinator.run_broadcasts`.
    progress : callable, optional
        ``progress(done, total)`` after each batch.

    Returns
    -------
    MeshSummary

    Examples
    --------
    >>> import tempfile
    >>> from measure.coordinator import local_hosts
    >>> s = run_mesh(local_hosts(2, first=240), tempfile.mkdtemp() + "/m",
    ...              options=MeshOptions(duration=1))
    >>> s.done, s.failed
    (2, [])
    """
    options.validate()
    frame = host_frame(hosts)
    run = Run(output, resume=resume, overwrite=overwrite)
    summary = MeshSummary(path=run.path)
    try:
        with run:
            done_keys: set[tuple[str, str, int]] = set()
            if run.resuming:
                existing = read_measurement(run.path)
                if existing.meta.get("method") != options.tool:
                    raise DatasetError(f"cannot resume: the dataset is a "
                                       f"{existing.meta.get('method')} run, not {options.tool}",
                                       path=run.path / "meta.json", field="method")
                refuse_other_run(existing.meta, run.path / "meta.json", hosts=frame["host"],
                                 recorded_hosts=existing.host_names)
                ok = existing.probes[existing.probes["error"].astype(str).str.strip() == ""] \
                    if "error" in existing.probes else existing.probes
                done_keys = {(s, d, int(r)) for s, d, r in
                             zip(ok["src"], ok["dst"],
                                 ok.get("repeat", pd.Series(0, index=ok.index)))}
                run.writer = MeasurementWriter.reopen(run.path)
                summary.kept = len(done_keys)
            params = dict(vars(options), **({"pairs": len(pairs)} if pairs is not None else {}))
            summary.checks, mesh = _start(run, frame, options, launch, meta, params, overwrite,
                                          skip_failed)
            names = sorted(run.agents.peers)
            wanted = [p for p in (pairs or []) if p[0] in names and p[1] in names] \
                if pairs is not None else None
            plan = [(batch, r) for r in range(options.repeats)
                    for batch in batches(names, options.schedule, one_way=options.one_way,
                                         pairs=wanted)]
            plan = [([p for p in batch if (*p, r) not in done_keys], r) for batch, r in plan]
            plan = [(batch, r) for batch, r in plan if batch]
            total = sum(len(batch) for batch, _ in plan)
            retry: list[tuple[str, str, int]] = []
            for batch, r in plan:
                retry += [(s, d, r) for s, d, _ in mesh.run(batch, r)]
                summary.done += len(batch)
                if progress is not None:
                    progress(summary.done, total)
            for src, dst, r in retry:  # once more, one at a time, each with a fresh server
                for s, d, error in mesh.run([(src, dst)], r):
                    summary.failed.append((s, d, r, error))
    finally:
        summary.seconds = run.seconds
    return summary


def run_concurrency(hosts: pd.DataFrame | Sequence[tuple[str, str, str]], output: str | Path,
                    tests: list[ConcurrencyTest], *, options: MeshOptions = MeshOptions(),
                    repeats: int = 3, launch: Launcher | Transport = local,
                    meta: dict[str, Any] | None = None, overwrite: bool = False,
                    skip_failed: bool = False,
                    progress: Callable[[int, int], None] | None = None) -> pd.DataFrame:
    """The concurrency test: each pair A alone, then with pair B, ``repeats`` times each.

    Writes a probe dataset (every test in ``probes.csv``, ``concurrent`` 1
    or 2) and ``concurrency.csv`` (one row per test, its verdict, see
    :mod:`measure.concurrency`), row by row.

    Returns
    -------
    pandas.DataFrame
        The rows of ``concurrency.csv``.
    """
    options = MeshOptions(**{**vars(options), "tool": "iperf3"})
    options.validate()
    if repeats < 2:
        raise ParameterError("the concurrency test needs repeats >= 2 to know A's noise")
    frame = host_frame(hosts)
    known = set(frame["host"])
    for t in tests:
        for host in (*t.a, *t.b):
            if host not in known:
                raise TomographyError(f"concurrency test names host {host!r}, not in the run")
    params = dict(vars(options), concurrency=len(tests), repeats_per_test=repeats)
    rows = []
    with Run(output, resume=False, overwrite=overwrite, resumable=False) as run:
        _, mesh = _start(run, frame, options, launch, {**(meta or {}), "concurrency": True},
                         params, overwrite, skip_failed, unique=False)
        verdicts = ConcurrencyWriter(run.path)
        for done, t in enumerate(tests, start=1):
            alone, a_with, b_with = [], [], []
            for r in range(repeats):
                rate, _ = mesh.measure([t.a], r)[t.a]
                if rate is not None:
                    alone.append(rate)
            for r in range(repeats):
                both = mesh.measure([t.a, t.b], r)
                if both[t.a][0] is not None and both[t.b][0] is not None:
                    a_with.append(both[t.a][0])
                    b_with.append(both[t.b][0])
            if alone and a_with:
                drop, threshold, shared = verdict(alone, a_with)
            else:
                drop, threshold, shared = float("nan"), float("nan"), False
            row = {"cluster_a": t.cluster_a, "cluster_b": t.cluster_b, "a_src": t.a[0],
                   "a_dst": t.a[1], "b_src": t.b[0], "b_dst": t.b[1],
                   "a_alone_bps": float(np.mean(alone)) if alone else float("nan"),
                   "a_alone_sd": float(np.std(alone, ddof=1)) if len(alone) > 1 else 0.0,
                   "a_together_bps": float(np.mean(a_with)) if a_with else float("nan"),
                   "b_together_bps": float(np.mean(b_with)) if b_with else float("nan"),
                   "drop": drop, "threshold": threshold, "shared": shared,
                   "repeats": min(len(alone), len(a_with))}
            rows.append(row)
            verdicts.add(row)
            if progress is not None:
                progress(done, len(tests))
    return pd.DataFrame(rows, columns=list(CONCURRENCY_COLUMNS))
