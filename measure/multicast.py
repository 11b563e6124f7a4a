"""Multicasts that run: planned trees, chains, MOB, Robber and BitTorrent, executed and measured.

:func:`run_multicasts` starts a multicast agent (``python -m measure.agent
--role multicast``, :mod:`measure.multicaster`) on every host through the
run's transport (local, testbed, SSH or MPI, with the same preflight as the
measurements), then runs each :class:`~tomography.planning.delivery.Delivery`
``repeats`` times, the methods in a different order each repeat (rotated
from a seeded shuffle, so that none always goes first), and writes every
multicast to the dataset as it finishes.  BitTorrent (``"bittorrent"``)
runs as the receiver-initiated baseline: one instrumented broadcast from
the same root among peers of the same hosts (:func:`measure.coordinator.broadcast`).
MOB and Robber (:class:`~tomography.planning.swarms.SwarmPlan`) run on the
multicast agents too: every host steals pieces (:mod:`measure.robber`).

One multicast:

1. ``prepare``: every agent learns its part of every stream (parent,
   children and their addresses, byte range, rate) and the addresses it
   may accept streams from;
2. ``connect``: every sender opens its children's connections and sets
   their pacing; a child it cannot reach fails the multicast at once;
3. ``go``: the root sends each stream; interior hosts forward as data
   arrives; every host reports each stream's end (bytes, BLAKE2b digest,
   first and last byte).  Several unpaced trees (FPFR, :func:`dealt`) take
   the payload in chunks of :data:`DEAL_CHUNK` bytes, each tree as its
   receivers confirm what it brought, rather than a share fixed in advance;
   each receiver then reports the whole payload too;
4. ``finish`` closes what is left.  A receiver that died ends its subtree
   (its children see the end of their input short); a receiver that stops
   taking data is dropped by its parent after ``stall`` seconds and its
   agent killed, so its subtree ends too; nothing waits past ``time_limit``.

The dataset (docs/formats.md, "Multicast datasets"): ``meta.json`` (plans,
rates, pacing, launcher, versions), ``hosts.csv``, ``multicasts.csv`` (one
row per multicast), ``receivers.csv`` (one row per receiver and multicast)
and ``streams.csv`` (one row per receiver, multicast and stream: the tree
it came by, its parent, its rate against the target).
"""

from __future__ import annotations

import queue
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from typing import Any, Callable, ClassVar, Sequence

import numpy as np
import pandas as pd

from measure.coordinator import (REPLY_TIMEOUT, AgentGroup, broadcast, checked_agents,
                                 host_frame, transport_of)
from measure.fileset import Files
from measure.multicaster import PACINGS, WHOLE, payload_digest
from measure.session import Run, Summary
from measure.swarm import SwarmParams
from measure.transport import Launcher, Transport, local
from tomography.model.dataset.multicast import MulticastWriter, prepare_output, summary_table
from tomography.model.errors import ParameterError
from tomography.model.units import listed
from tomography.planning.delivery import UNPACED_TREES, Delivery
from tomography.planning.swarms import SwarmPlan

__all__ = ["BITTORRENT", "MulticastResult", "MulticastSummary", "method_order",
           "run_multicasts", "summary_table"]

BITTORRENT = "bittorrent"
"""The name of the BitTorrent baseline among the methods."""

STALL = 30.0   # s a sender waits for a child that takes no data before dropping it
FINISH_GRACE = 2.0   # s for the reports of streams cut short by ``finish``
DEAL_CHUNK = 1 << 14   # bytes of a chunk dealt to the trees of an unpaced plan
DEAL_AHEAD = 1.0       # s of a tree's predicted rate it may have on its way, unconfirmed
DEAL_WINDOW = 2        # chunks a tree may have on its way at least


@dataclass
class MulticastResult:
    """One multicast as the coordinator saw it.

    Attributes
    ----------
    run : str
        ``METHOD-REPEAT``.
    method : str
    repeat : int
    complete : bool
        Every receiver got every byte, digests right.
    achieved : float
        Payload bytes over the time from ``go`` to the last receiver's last
        byte (bytes/s); NaN when incomplete.
    completion : float
        Seconds from ``go`` to the last byte that arrived.
    receivers : list of dict
        One row of ``receivers.csv`` per receiver.
    streams : list of dict
        One row of ``streams.csv`` per receiver and stream.
    notes : list of str
        What went wrong, in words.
    """

    run: str
    method: str
    repeat: int
    complete: bool
    achieved: float
    completion: float
    predicted: float
    receivers: list[dict[str, Any]] = field(default_factory=list)
    streams: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(kw_only=True)
class MulticastSummary(Summary):
    """What a run of multicasts did."""

    results: list[MulticastResult]
    UNIT: ClassVar[str] = "multicast"

    def count(self) -> int:
        return len(self.results)

    def details(self) -> list[str]:
        return [f"{r.run} incomplete: " + "; ".join(r.notes) for r in self.results
                if not r.complete]


def method_order(methods: Sequence[str], repeats: int, seed: int = 0) -> list[tuple[str, int]]:
    """``(method, repeat)`` in the order they run: a seeded shuffle, rotated each repeat.

    Every method runs first once in every ``len(methods)`` repeats, so that
    none is favoured by a warm network or a cold one.

    Examples
    --------
    >>> method_order(["a", "b", "c"], 3, seed=1)
    [('a', 0), ('b', 0), ('c', 0), ('b', 1), ('c', 1), ('a', 1), ('c', 2), ('a', 2), ('b', 2)]
    """
    base = list(methods)
    np.random.default_rng(seed).shuffle(base)
    out = []
    for r in range(repeats):
        shift = r % len(base)
        out.extend((m, r) for m in base[shift:] + base[:shift])
    return out


def _parts(delivery: Delivery, host: str, group: AgentGroup) -> list[dict[str, Any]]:
    """The streams as the agent on ``host`` takes them in ``prepare``."""
    parts = []
    for s in delivery.streams:
        parts.append({"stream": s.index, "offset": s.offset, "length": s.length,
                      "rate": s.rate, "parent": s.parent.get(host),
                      "children": [[c, group.address[c], group.ports[c]]
                                   for c in s.children(host)]})
    return parts


@dataclass
class _Outcome:
    """What one multicast's steps left: the time of ``go``, each host's reports, the hosts
    that failed and why, notes, and the receivers whose real files failed."""

    go: float
    reports: dict[tuple[str, int], dict[str, Any]]
    failed: dict[str, str]
    notes: list[str]
    unverified: dict[str, str]


def _launch(group: AgentGroup, hosts: list[str], root: str, run_id: str,
            prepare: Callable[[str], dict[str, Any]], starters: list[str],
            wanted: set[tuple[str, int]], *, stall: float, time_limit: float,
            files: Files | None = None) -> _Outcome:
    """Run one multicast's steps (the module's docstring) and collect the reports in ``wanted``.

    ``prepare(host)`` is the rest of the host's ``prepare`` command; ``go``
    goes to ``starters`` once every host is connected.  With real
    ``files``, each receiver is told where they go in ``prepare`` and, once
    its reports are in, to put them in place (``verify``).
    """
    notes: list[str] = []
    failed: dict[str, str] = {}

    def note(host: str, message: dict[str, Any]) -> None:
        if message.get("event") == "exit":
            failed.setdefault(host, group.describe_death(host))
        elif message.get("event") == "error":
            failed.setdefault(host, f"agent {host}: {message.get('message')}")

    def silent(asked: list[str], answered: dict[str, dict]) -> None:
        """Agents that did not answer are hung: killed, started afresh next time."""
        for h in set(asked) - set(answered):
            failed.setdefault(h, group.describe_death(h))
            group.peers[h].kill()

    # the root hashes its files and a resumed receiver its staging file in the set-up
    slack = 0.0 if files is None else files.manifest["size"] / 50e6

    def answered(asked: list[str], event: str) -> dict[str, dict]:
        """The agents that answered ``event``; an error answers too (the host failed)."""
        got = group.wait(set(asked), (event, "error"), REPLY_TIMEOUT + slack, note)
        for h, message in got.items():
            if message.get("event") == "error":
                note(h, message)
        silent(asked, got)
        return {h: m for h, m in got.items() if m.get("event") == event}

    for name in group.start(hosts):   # an agent that died (or was killed) before
        failed[name] = group.describe_death(name)
    allow = sorted({group.address[h] for h in hosts})
    live = [h for h in hosts if h not in failed]
    for h in live:
        extra = {} if files is None else {"file": files.command(h, h == root)}
        group.peers[h].send({"cmd": "prepare", "run": run_id, "stall": stall, "allow": allow,
                             **prepare(h), **extra})
    ready = answered(live, "prepared")
    for h in ready:
        group.peers[h].send({"cmd": "connect", "run": run_id})
    connected = answered(list(ready), "connected")
    reports: dict[tuple[str, int], dict[str, Any]] = {}
    unverified: dict[str, str] = {}
    go = time.time()
    started = set(starters) <= set(connected) and not failed
    if started:
        for h in starters:
            group.peers[h].send({"cmd": "go", "run": run_id})
        reports, timed_out = _collect(group, wanted, run_id, time_limit, stall, note, failed)
        if timed_out:
            notes.append(f"the time limit of {time_limit:g} s passed")
        if files is not None:   # before finish, which closes what is not in place
            done, unverified = _verify(group, run_id, files, reports, failed)
            for h in {h for h, _ in wanted} - {root} - done:
                unverified.setdefault(h, "its files were not put in place: not every byte "
                                         "arrived")
    else:
        notes.append("not started: " + "; ".join(f"{h}: {why}" for h, why in failed.items()))
    for h in hosts:
        if h in group.peers and group.peers[h].alive():
            group.peers[h].send({"cmd": "finish", "run": run_id})
    if started and len(reports) < len(wanted):
        # the receivers cut short by ``finish`` report what did arrive
        late, _ = _collect(group, wanted, run_id, FINISH_GRACE, stall, note, failed,
                           got=reports)
        reports.update(late)
    failed.update({h: why for h, why in unverified.items() if h not in failed})
    return _Outcome(go, reports, failed, notes, unverified)


def _verify(group: AgentGroup, run_id: str, files: Files,
            reports: dict[tuple[str, int], dict[str, Any]], failed: dict[str, str]
            ) -> tuple[set[str], dict[str, str]]:
    """Have every receiver that got its bytes put the files in place: those that did, and
    those that failed and why."""
    got = {h for (h, _), r in reports.items() if r.get("event") == "received"}
    got = {h for h in got if all(r.get("error") in ("", None)
                                 for (x, _), r in reports.items() if x == h)}
    asked = {h for h in got if h not in failed and group.peers[h].alive()}
    for h in asked:
        group.peers[h].send({"cmd": "verify", "run": run_id})
    # writing the files takes time: at 20 MB/s at least
    answers = group.wait(asked, "verified", REPLY_TIMEOUT + files.manifest["size"] / 20e6)
    bad = {}
    for h in asked:
        answer = answers.get(h)
        if answer is None:
            bad[h] = f"agent {h} did not put the files in place"
        elif not answer.get("ok"):
            bad[h] = f"files on {h}: {answer.get('error')}"
    return asked - set(bad), bad


def dealt(delivery: Delivery) -> bool:
    """Whether the root deals the payload's chunks to the trees as their receivers take them
    (several unpaced trees, :data:`tomography.planning.delivery.UNPACED_TREES`) rather than
    sending each tree its share fixed in advance.

    Examples
    --------
    >>> from tomography.planning.delivery import chain_delivery
    >>> dealt(chain_delivery(["a", "b"], "a", 10))
    False
    """
    return delivery.method in UNPACED_TREES and len(delivery.streams) > 1


def deal_windows(delivery: Delivery) -> dict[str, int]:
    """Chunks each tree of a dealt delivery may have on their way (by stream number, as JSON
    keys): :data:`DEAL_AHEAD` seconds of its predicted rate (its share of the prediction), at
    least :data:`DEAL_WINDOW`.

    Examples
    --------
    >>> from tomography.planning.delivery import Delivery, Stream
    >>> trees = [Stream(0, 0, 3 << 20, 0.0, {"b": "a"}), Stream(1, 3 << 20, 1 << 20, 0.0,
    ...                                                          {"b": "a"})]
    >>> deal_windows(Delivery("fpfr", "a", ["a", "b"], 4 << 20, trees, predicted=2 ** 20))
    {'0': 48, '1': 16}
    """
    predicted = delivery.predicted if delivery.predicted > 0 else float("nan")
    return {str(s.index): max(DEAL_WINDOW, int(np.nan_to_num(np.ceil(
        s.length / delivery.size * predicted * DEAL_AHEAD / DEAL_CHUNK)))) for s in
            delivery.streams}


def _multicast(group: AgentGroup, delivery: Delivery, repeat: int, *, seed: int, pacing: str,
               stall: float, time_limit: float, files: Files | None) -> MulticastResult:
    """Run one delivery once: the root sends every stream down its tree (its share fixed in
    advance, or the chunks dealt to the trees as they take them, :func:`dealt`)."""
    run_id = f"{delivery.method}-{repeat}"
    receivers = [h for h in delivery.hosts if h != delivery.root]
    deal = ({"size": delivery.size, "chunk": DEAL_CHUNK, "windows": deal_windows(delivery),
             "receivers": len(receivers)} if dealt(delivery) else {})
    wanted = {(h, s.index) for s in delivery.streams for h in delivery.hosts}
    if deal:
        wanted |= {(h, WHOLE) for h in receivers}
    out = _launch(
        group, delivery.hosts, delivery.root, run_id,
        lambda h: {"seed": seed, "pacing": pacing, "streams": _parts(delivery, h, group),
                   **({"deal": {**deal, "me": receivers.index(h) if h in receivers else -1}}
                      if deal else {})},
        [delivery.root], wanted, stall=stall, time_limit=time_limit, files=files)
    digest = files.digest if files is not None else partial(payload_digest, seed)
    return _result(group, delivery, repeat, run_id, out, digest)


def _swarm(group: AgentGroup, plan: SwarmPlan, repeat: int, *, seed: int, stall: float,
           time_limit: float, files: Files | None) -> MulticastResult:
    """Run one MOB or Robber multicast once: every host steals (:mod:`measure.robber`)."""
    run_id = f"{plan.method}-{repeat}"
    hosts = plan.hosts

    def prepare(h: str) -> dict[str, Any]:
        first = plan.share(h)
        mine = set(plan.connect[h])
        # a pair that chose each other shares one connection, opened by the first by name
        peers = []
        for p in plan.peers(h):
            local = plan.cluster_of[p] == plan.cluster_of[h]
            share = plan.share(p)   # a mate's: taken over should it die
            peers.append([p, group.address[p], group.ports[p], local,
                          p in mine and not (h in plan.connect[p] and p < h),
                          *([share.start, share.stop] if local else [])])
        return {"seed": seed, "swarm": {"method": plan.method, "host": h, "root": plan.root,
                                        "size": plan.size, "piece": plan.piece, "peers": peers,
                                        "share": [first.start, first.stop]}}

    receivers = [h for h in hosts if h != plan.root]
    out = _launch(group, hosts, plan.root, run_id, prepare, hosts, {(h, 0) for h in receivers},
                  stall=stall, time_limit=time_limit, files=files)
    go, reports, failed, notes = out.go, out.reports, out.failed, out.notes
    common = {"run": run_id, "method": plan.method, "repeat": repeat}
    expected = (files.digest if files is not None else partial(payload_digest, seed))(
        0, plan.size)
    rows, lasts = [], []
    for h in receivers:
        report = reports.get((h, 0)) or {}
        shift = group.offsets.get(h, 0.0)
        got = int(report.get("bytes", 0))
        ok = got == plan.size and report.get("digest") == expected and h not in out.unverified
        first = report.get("first")
        last = float("nan") if report.get("last") is None else report["last"] - shift - go
        if last == last:
            lasts.append(last)
        sources = report.get("sources") or {}
        rows.append({**common, "receiver": h, "bytes": got, "expected_bytes": plan.size,
                     "digest_ok": ok,
                     "first_s": float("nan") if first is None else first - shift - go,
                     "last_s": last, "throughput_Bps": plan.size / last if ok and last > 0
                     else float("nan"), "complete": ok,
                     "parents": " ".join(f"{p}:{n}" for p, n in sorted(sources.items())),
                     "error": report.get("error") or failed.get(h, "" if ok else "no report")})
    bad = [r["receiver"] for r in rows if not r["complete"]]
    if bad:
        notes.append(f"{len(bad)} receiver(s) incomplete: {listed(bad)}")
        notes.extend(f"{h}: {why}" for h, why in sorted(failed.items()))
    completion = max(lasts) if lasts else float("nan")
    return MulticastResult(run_id, plan.method, repeat, not bad,
                           plan.size / completion if not bad and completion > 0
                           else float("nan"), completion, plan.predicted, rows, [], notes)


def _collect(group: AgentGroup, wanted: set[tuple[str, int]], run_id: str, time_limit: float,
             stall: float, note: Callable[[str, dict[str, Any]], None],
             failed: dict[str, str], got: dict[tuple[str, int], dict[str, Any]] | None = None
             ) -> tuple[dict[tuple[str, int], dict[str, Any]], bool]:
    """Every host's report of every stream, until all are in, dead, or the time is up.

    After ``stall`` seconds without an event, the hosts still owing a report
    are asked for their clock; one that does not answer within ``stall``
    seconds is hung (its stream's data may all sit in its socket buffers, so
    no sender notices): it is killed, and its subtree ends with it.  Returns
    the reports and whether the time limit cut the wait short.
    """
    got = dict(got or {})
    deadline = time.monotonic() + time_limit
    last_event = time.monotonic()
    asked: dict[str, float] = {}
    while wanted - set(got):
        owing = {h for h, _ in wanted - set(got)}
        if all(not group.peers[h].alive() for h in owing):
            return got, False
        now = time.monotonic()
        if now >= deadline:
            return got, True
        if now - last_event > stall:
            for h in owing - set(asked):
                if group.peers[h].alive():
                    group.peers[h].send({"cmd": "clock"})
                    asked[h] = now
        for h, t in list(asked.items()):
            if now - t > stall and group.peers[h].alive():
                failed.setdefault(h, f"agent {h} hung: no answer for {stall:g} s")
                group.peers[h].kill()
        try:
            channel, message = group.inbox.get(timeout=min(deadline - now, 0.5))
        except queue.Empty:
            continue
        host = channel.host
        if group.peers.get(host) is not channel:
            continue
        last_event = time.monotonic()
        asked.pop(host, None)
        kind = message.get("event")
        if kind in ("received", "sent") and message.get("run") == run_id:
            got[(host, int(message["stream"]))] = message
            for child, why in (message.get("dropped") or {}).items():
                failed.setdefault(child, f"dropped by {host}: {why}")
                if "took no data" in why and group.peers[child].alive():
                    group.peers[child].kill()   # stopped: its subtree ends with it
        elif kind != "clock":
            note(host, message)
    return got, False


def _result(group: AgentGroup, delivery: Delivery, repeat: int, run_id: str, out: _Outcome,
            digest: Callable[[int, int], str]) -> MulticastResult:
    """Rows of ``receivers.csv`` and ``streams.csv``, and the multicast's figures."""
    go, reports, failed, notes = out.go, out.reports, out.failed, out.notes
    common = {"run": run_id, "method": delivery.method, "repeat": repeat}
    receivers, streams = [], []
    whole = dealt(delivery)
    expected = ({WHOLE: digest(0, delivery.size)} if whole else
                {s.index: digest(s.offset, s.length) for s in delivery.streams})
    lasts = []
    for h in delivery.hosts:
        if h == delivery.root:
            continue
        total, ok, firsts, host_lasts, errors = 0, True, [], [], []
        shift = group.offsets.get(h, 0.0)
        for s in delivery.streams:
            report = reports.get((h, s.index))
            row = {**common, "stream": s.index, "receiver": h, "parent": s.parent[h],
                   "bytes": 0, "expected_bytes": s.length, "digest_ok": False,
                   "first_s": float("nan"), "last_s": float("nan"), "rate_Bps": float("nan"),
                   "target_Bps": s.rate or float("nan"), "error": ""}
            parent = s.parent[h]
            upstream = (f"its parent {parent} failed: {failed[parent]}" if parent in failed
                        else "")
            if report is None:
                row["error"] = failed.get(h) or upstream or "no report"
            else:
                row["bytes"] = int(report["bytes"])
                row["digest_ok"] = (not report.get("error") if whole else
                                    row["bytes"] == s.length
                                    and report.get("digest") == expected[s.index])
                row["error"] = report.get("error") or ""
                if report.get("first") is not None:
                    row["first_s"] = float(report["first"]) - shift - go
                    row["last_s"] = float(report["last"]) - shift - go
                    # the bytes after the first read over the time they took
                    span = row["last_s"] - row["first_s"]
                    after = row["bytes"] - int(report.get("first_bytes", 0))
                    row["rate_Bps"] = after / span if span > 0 and after > 0 else float("nan")
                    firsts.append(row["first_s"])
                    host_lasts.append(row["last_s"])
                if row["bytes"] < s.length and not row["error"] and not whole:
                    row["error"] = (failed.get(h) or upstream
                                    or f"{row['bytes']} of {s.length} bytes: the stream "
                                    "ended short")
            total += row["bytes"]
            ok = ok and row["digest_ok"]
            if row["error"]:
                errors.append(f"stream {s.index}: {row['error']}")
            streams.append(row)
        if whole:   # every chunk, whichever trees brought it
            report = reports.get((h, WHOLE)) or {}
            total = int(report.get("bytes", 0))
            ok = report.get("digest") == expected[WHOLE]
            if report.get("last") is not None:
                host_lasts = [float(report["last"]) - shift - go]
            if report.get("error") or not report:
                errors.append(report.get("error") or failed.get(h)
                              or "no report on the whole payload")
        last = max(host_lasts) if host_lasts else float("nan")
        complete = ok and total == delivery.size and h not in out.unverified
        if h in out.unverified:
            errors.append(out.unverified[h])
        receivers.append({**common, "receiver": h, "bytes": total,
                          "expected_bytes": delivery.size, "digest_ok": ok,
                          "first_s": min(firsts) if firsts else float("nan"), "last_s": last,
                          "throughput_Bps": delivery.size / last if complete and last > 0
                          else float("nan"),
                          "complete": complete,
                          "parents": " ".join(f"{s.index}:{s.parent[h]}"
                                              for s in delivery.streams),
                          "error": "; ".join(errors)})
        if host_lasts:
            lasts.append(last)
    bad = [r["receiver"] for r in receivers if not r["complete"]]
    if bad:
        notes.append(f"{len(bad)} receiver(s) incomplete: {listed(bad)}")
        notes.extend(f"{h}: {why}" for h, why in sorted(failed.items()))
    completion = max(lasts) if lasts else float("nan")
    complete = not bad
    return MulticastResult(run_id, delivery.method, repeat, complete,
                           delivery.size / completion if complete and completion > 0
                           else float("nan"), completion, delivery.predicted,
                           receivers, streams, notes)


def _bittorrent(group: AgentGroup, root: str, size: int, repeat: int, *, seed: int,
                time_limit: float) -> MulticastResult:
    """The BitTorrent baseline: one instrumented broadcast from ``root``, as a multicast."""
    run_id = f"{BITTORRENT}-{repeat}"
    common = {"run": run_id, "method": BITTORRENT, "repeat": repeat}
    result = broadcast(group, repeat, root, size, seed=seed, time_limit=time_limit, trace=False)
    receivers = []
    for h in sorted(group.peers):
        if h == root:
            continue
        done = result.finished.get(h)
        unique = result.payload.get(h, 0) - result.redundant.get(h, 0)   # end-game doubles out
        receivers.append({**common, "receiver": h, "bytes": unique,
                          "expected_bytes": size, "digest_ok": done is not None,
                          "first_s": float("nan"),
                          "last_s": float("nan") if done is None else done,
                          "throughput_Bps": float("nan") if not done else size / done,
                          "complete": done is not None, "parents": "swarm",
                          "error": "" if done is not None else "did not finish"})
    complete = result.complete
    return MulticastResult(run_id, BITTORRENT, repeat, complete,
                           size / result.duration if complete and result.duration > 0
                           else float("nan"), result.duration, float("nan"), receivers, [],
                           list(result.notes))


def run_multicasts(hosts: pd.DataFrame | Sequence[tuple[str, str, str]],
                   deliveries: Sequence[Delivery], output: str | Path, *,
                   swarms: Sequence[SwarmPlan] = (),
                   launch: Launcher | Transport = local, repeats: int = 3, seed: int = 0,
                   bittorrent: bool = False, bittorrent_params: SwarmParams = SwarmParams(),
                   pacing: str = "kernel", stall: float = STALL, time_limit: float = 300.0,
                   port: int = 0, meta: dict[str, Any] | None = None, resume: bool = False,
                   overwrite: bool = False, root: str | None = None, size: int | None = None,
                   files: Files | None = None, progress: Callable[[MulticastResult], None] | None = None
                   ) -> MulticastSummary:
    """Run multicasts with each method ``repeats`` times among ``hosts`` and write the dataset.

    Parameters
    ----------
    hosts : DataFrame or sequence of (host, address, label)
        The run's hosts (as :func:`measure.coordinator.run_broadcasts` takes them).
    deliveries : sequence of Delivery
        One per static method (planned trees, chains), all from one root
        with one payload size over exactly these hosts.
    output : path
        The dataset directory.
    swarms : sequence of SwarmPlan
        MOB and Robber multicasts (:func:`~tomography.planning.swarms.swarm_plan`),
        from the same root with the same payload over the same hosts.
    launch : callable or transport
        How agents start on the hosts (as for the broadcasts).
    repeats : int
        Multicasts per method.
    seed : int
        The payload's bytes and the methods' order derive from it.
    bittorrent : bool
        Also run the BitTorrent baseline (``bittorrent_params``).
    pacing : {"kernel", "sleep"}
        How senders pace a stream with a rate (:mod:`measure.multicaster`).
    stall : float
        Seconds a sender waits for a child that takes no data.
    time_limit : float
        Seconds after ``go`` when a multicast is cut short.
    port : int
        The agents' listening port (0: any).
    meta : dict, optional
        More keys for ``meta.json``.
    resume : bool
        Run only the multicasts not yet in the dataset (same hosts and parameters).
    overwrite : bool
        Replace a dataset at ``output``.
    root, size : optional
        The sending host and the payload bytes, when ``deliveries`` is empty
        (BitTorrent alone); otherwise they must be the deliveries'.
    files : Files, optional
        Real files to deliver instead of the synthetic payload (their size
        is the payload's); every receiver checks its free space first and
        puts them in ``files.dest``, verified (:mod:`measure.fileset`).
        BitTorrent does not take them.
    progress : callable, optional
        Called with each :class:`MulticastResult`.

    Returns
    -------
    MulticastSummary

    Examples
    --------
    >>> import tempfile
    >>> from measure.coordinator import local_hosts
    >>> from tomography.planning.delivery import chain_delivery
    >>> hosts = local_hosts(3, first=90)
    >>> d = chain_delivery(list(hosts["host"]), "h00", 2**20)
    >>> run = run_multicasts(hosts, [d], tempfile.mkdtemp() + "/mc", repeats=1)
    >>> r = run.results[0]
    >>> r.run, r.complete, [x["bytes"] for x in r.receivers]
    ('chain-hosts-0', True, [1048576, 1048576])
    """
    if not deliveries and not swarms and not bittorrent:
        raise ParameterError("no method to run")
    if repeats < 1:
        raise ParameterError(f"repeats must be >= 1, got {repeats}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ParameterError(f"seed must be a whole number >= 0, got {seed!r}")
    if pacing not in PACINGS:
        raise ParameterError(f"unknown pacing {pacing!r}; choose {' or '.join(PACINGS)}")
    if not (stall > 0 and time_limit > 0):
        raise ParameterError(f"stall and time_limit must be > 0, got {stall}, {time_limit}")
    frame = host_frame(hosts)
    names = sorted(frame["host"])
    planned = [*deliveries, *swarms]
    roots = {d.root for d in planned} | ({root} if root is not None else set())
    sizes = {d.size for d in planned} | ({size} if size is not None else set())
    if len(roots) != 1 or len(sizes) != 1:
        raise ParameterError("every method must multicast one payload from one root, got "
                             f"roots {sorted(roots)} and sizes {sorted(sizes)}")
    root, size = roots.pop(), int(sizes.pop())
    if root not in names or size < 1:
        raise ParameterError(f"the root {root!r} must be a host of the run and the size >= 1 "
                             f"byte, got {size}")
    for d in planned:
        if sorted(d.hosts) != names:
            others = sorted(set(d.hosts) ^ set(names))
            raise ParameterError(f"the plan of {d.method} is over other hosts than the run's: "
                                 f"{listed(others)} in one but not the other")
    if files is not None and bittorrent:
        raise ParameterError("real files go with the planned methods, MOB and Robber; the "
                             "BitTorrent baseline moves the synthetic payload only")
    if files is not None and size != files.manifest["size"]:
        raise ParameterError(f"the payload is the files' {files.manifest['size']} bytes, "
                             f"not {size}")
    methods = [d.method for d in planned] + ([BITTORRENT] if bittorrent else [])
    if len(set(methods)) < len(methods):
        raise ParameterError(f"a method is given twice: {methods}")
    transport = transport_of(launch)
    params = {"root": root, "bytes": size, "seed": int(seed), "pacing": pacing, "stall": stall,
              "time_limit": time_limit, "repeats": repeats, "methods": methods,
              **({"file": files.to_meta()} if files is not None else {})}
    plans = {d.method: d.to_meta() for d in planned}
    by_method = {d.method: d for d in deliveries}
    swarm_of = {p.method: p for p in swarms}
    run = Run(output, resume=resume, overwrite=overwrite)
    summary = MulticastSummary(path=run.path, results=[])
    try:
        with run:
            done = prepare_output(run.path, params, plans, names, resume=resume,
                                  overwrite=overwrite)
            if run.resuming:
                run.writer = MulticastWriter.reopen(run.path)
            summary.kept = len(done)
            todo = [(m, r) for m, r in method_order(methods, repeats, seed)
                    if f"{m}-{r}" not in done]
            group: AgentGroup | None = None
            for method, repeat in todo:
                role = "bittorrent" if method == BITTORRENT else "multicast"
                if group is None or group.role != role:
                    if group is not None:   # run.agents closes it again, with the transport
                        group.close(transport=False)
                    # every plan reaches every host: a host failing the preflight stops the run
                    group, checks = checked_agents(frame, transport, bittorrent_params, port, 0,
                                                   False, role=role)
                    run.agents = group
                    if not summary.checks:
                        summary.checks = checks
                        run.begin(checks, transport.name, lambda records: MulticastWriter(
                            run.path, {**(meta or {}), "params": params, "methods": methods,
                                       **records, "plans": plans,
                                       **({"bittorrent": asdict(bittorrent_params)}
                                          if bittorrent else {})}, frame), kept=len(done))
                started = datetime.now(timezone.utc).isoformat(timespec="seconds")
                if method == BITTORRENT:
                    result = _bittorrent(group, root, size, repeat, seed=seed,
                                         time_limit=time_limit)
                    streams, paced = 0, "-"
                elif method in swarm_of:
                    result = _swarm(group, swarm_of[method], repeat, seed=seed, stall=stall,
                                    time_limit=time_limit, files=files)
                    streams, paced = 0, "-"
                else:
                    result = _multicast(group, by_method[method], repeat, seed=seed,
                                        pacing=pacing, stall=stall, time_limit=time_limit,
                                        files=files)
                    streams = len(by_method[method].streams)
                    paced = pacing if any(x.rate > 0 for x in by_method[method].streams) \
                        else "none"
                run.writer.add(_row(result, root, size, streams, paced, started),
                               result.receivers, result.streams)
                summary.results.append(result)
                if progress is not None:
                    progress(result)
    finally:
        if not summary.checks:       # no agent started: the transport is ours to close
            transport.close()
        summary.seconds = run.seconds
    return summary


def _row(result: MulticastResult, root: str, size: int, streams: int, pacing: str,
         started: str) -> dict[str, Any]:
    """The multicast's row of ``multicasts.csv``."""
    return {"run": result.run, "method": result.method, "repeat": result.repeat,
            "root": root, "bytes": size, "streams": streams, "pacing": pacing,
            "predicted_Bps": result.predicted, "achieved_Bps": result.achieved,
            "completion_s": result.completion, "complete": result.complete,
            "receivers_complete": sum(r["complete"] for r in result.receivers),
            "started": started, "note": "; ".join(result.notes)}
