"""The coordinator: instrumented BitTorrent broadcasts with a rotating root, written as they finish.

:func:`run_broadcasts` starts one peer (``python -m measure.agent --role
bittorrent``, :mod:`measure.peer`) per host, an :class:`AgentGroup`, through
a *transport* (:mod:`measure.transport`): local processes, processes in the
namespaces of a testbed, processes started over SSH (:mod:`measure.ssh`), or
peers beside MPI ranks (:mod:`measure.mpi`).  It speaks the same protocol to
all of them; how the protocol travels is the transport's business.

Before the first iteration a preflight (:mod:`measure.preflight`) starts
every peer and checks it: it answers, its versions agree, it listens on its
address; a few clock readings give each host's clock offset.  A host that
fails is named in one line and the run does not start, unless
``skip_failed`` leaves it out (recorded in ``meta.json``).

One iteration:

1. every peer is alive and listening (a peer that died is started again);
2. every peer adds the iteration's torrent (the root as its seed) and says so,
   before anyone connects: a peer that connects to one that does not know
   the torrent yet would be turned away and wait ``min_reconnect_time``;
3. ``go``: each peer connects to its peer list (:func:`measure.swarm.peer_lists`,
   drawn from ``(seed, iteration)``), the swarm runs until every downloader
   reports ``finished``, every downloader holds the block quota or the time
   box passes (``SwarmParams.block_quota``, ``time_box``: the iteration is
   complete as it stands), or the time limit passes;
4. after a short settling time (none after a quota or a box), ``stop``: each peer
   reports the blocks it received from each sender; once all have, ``drop``
   removes the torrents; the iteration is written to the dataset at once.

A peer that dies or hangs makes its iteration incomplete: the counts of the
others are kept, the run goes on with the peer started afresh, and the
summary lists it.
"""

from __future__ import annotations

import base64
import json
import queue
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, ClassVar, Iterable, Sequence

import numpy as np
import pandas as pd

from measure.agent import host_facts, remove_stale
from measure.peer import lt_version, make_torrent, session_settings
from measure.preflight import HostCheck, PreflightError, failure_reason, version_mismatch
from measure.roots import RootChooser
from measure.session import Run, Summary
from measure.swarm import TRACE_HOSTS, SwarmParams, peer_lists
from measure.transport import Channel, Launcher, ProcessTransport, Transport, local
from tomography.model.dataset import HOSTS_COLUMNS, MeasurementWriter, read_measurement
from tomography.model.dataset.meta import refuse_other_run
from tomography.model.errors import ParameterError, TomographyError
from tomography.model.units import listed

__all__ = ["IterationResult", "RunSummary", "AgentGroup", "checked_agents", "local",
           "local_hosts", "preflight", "broadcast", "run_broadcasts"]

STARTUP_TIMEOUT = 30.0  # s for a peer to listen (dozens start at once on two cores)
MAX_STARTING = 64
"""Peers starting at once at most, whatever the transport allows: each start is a process
(or an ssh handshake) and its pipes, and a thousand at once exhaust the open files."""
REPLY_TIMEOUT = 30.0    # s for a peer to answer add / stop
REPORT_FLOOR = 5.0      # s a peer has at least to report after stop, however short the limit
SETTLE = 0.5            # s between the last finish and stop: in-flight blocks land
CLOCK_ROUNDS = 5        # clock readings per host; the one with the shortest round trip counts


def local_hosts(n: int, *, first: int = 2) -> pd.DataFrame:
    """``n`` hosts on distinct loopback addresses ``127.0.0.<first + i>``, for local runs.

    Examples
    --------
    >>> local_hosts(2)[["host", "address"]].values.tolist()
    [['h00', '127.0.0.2'], ['h01', '127.0.0.3']]
    """
    if not 1 <= n <= 250 - first:
        raise ParameterError(f"local runs take 1 to {250 - first} hosts, got {n}")
    return pd.DataFrame({"host": [f"h{i:02d}" for i in range(n)],
                         "address": [f"127.0.0.{first + i}" for i in range(n)],
                         "label": [""] * n})


@dataclass
class IterationResult:
    """One broadcast as the coordinator saw it.

    Attributes
    ----------
    iteration : int
    root : str
    duration : float
        Seconds from ``go`` to the last downloader's finish (or to the stop).
    complete : bool
        Every downloader got the whole file (or the quota or the time box
        ended the broadcast after a block was sent), every peer reported, no
        alert lost.
    finished : dict
        Downloader -> seconds after ``go`` when it had the whole file.
    sent : dict
        ``(receiver, sender) -> (blocks, bytes)`` sent directly.
    payload : dict
        Receiver -> payload bytes it received (libtorrent's own count).
    redundant : dict
        Receiver -> bytes it received and threw away (end-game duplicates).
    failed : list of str
        Hosts that died, hung or reported an error in this iteration.
    notes : list of str
        What made the iteration incomplete, in words.
    warnings : list of str
        Errors libtorrent reported that did not spoil the iteration.
    """

    iteration: int
    root: str
    duration: float
    complete: bool
    finished: dict[str, float]
    sent: dict[tuple[str, str], tuple[int, int]]
    payload: dict[str, int]
    redundant: dict[str, int]
    failed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    trace: list[tuple[float, str, str, int, int]] = field(default_factory=list)

    @property
    def redundant_bytes(self) -> int:
        """Redundant bytes over all receivers."""
        return sum(self.redundant.values())


@dataclass(kw_only=True)
class RunSummary(Summary):
    """What a run of broadcasts did: its dataset, its iterations, what failed, when it
    converged."""

    iterations: list[IterationResult]
    converged_at: int | None = None  # the iteration after which ``stop`` ended the run
    stop_rule: bool = False           # whether a ``stop`` rule was given
    UNIT: ClassVar[str] = "iteration"

    @property
    def incomplete(self) -> list[int]:
        """Iterations that did not complete."""
        return [r.iteration for r in self.iterations if not r.complete]

    def count(self) -> int:
        return len(self.iterations)

    def details(self) -> list[str]:
        lines = []
        for r in self.iterations:
            if not r.complete:
                lines.append(f"iteration {r.iteration} incomplete: " + "; ".join(r.notes))
            if r.warnings:
                lines.append(f"iteration {r.iteration}: {len(r.warnings)} libtorrent "
                             f"warning(s), first: {r.warnings[0]}")
        if self.converged_at is not None:
            lines.append(f"converged: the stop rule ended the run after iteration "
                         f"{self.converged_at + 1}")
        elif self.stop_rule:
            lines.append("not converged: the stop rule never ended the run; more iterations "
                         "may help")
        return lines


class AgentGroup:
    """A run's agents, one per host, reached through a transport, and the waiting on their events.

    Starts, checks (:meth:`preflight`), clocks and closes the run's agents
    (:mod:`measure.agent`), all in one role: libtorrent peers
    (``role="bittorrent"``, :mod:`measure.peer`, with ``params`` and
    ``upload_limit``), probe agents (``role="probe"``,
    :mod:`measure.prober`, needing ``tools``) or multicast agents
    (``role="multicast"``, :mod:`measure.multicaster`).  Its ``peers`` are the
    agents' channels by host.
    """

    def __init__(self, hosts: pd.DataFrame, transport: Transport, params: SwarmParams,
                 port: int, upload_limit: int, *, role: str = "bittorrent",
                 tools: Sequence[str] = ()) -> None:
        self.hosts = hosts
        self.role, self.tools = role, list(tools)
        self.transport, self.params, self.port = transport, params, port
        self.upload_limit = upload_limit
        self.inbox: queue.Queue[tuple[Channel, dict[str, Any]]] = queue.Queue()
        self.peers: dict[str, Channel] = {}
        self.ports: dict[str, int] = {}
        self.hello: dict[str, dict[str, Any]] = {}
        self.errors: dict[str, dict[str, Any]] = {}  # a peer's error event before its hello
        self.offsets: dict[str, float] = {}
        # each host's agent number (--peer-id) is its place in the sorted host table;
        # a BitTorrent peer makes it its peer id (measure.peer.peer_id)
        self.by_index = {str(i): h for i, h in enumerate(hosts["host"])}
        self.index = {h: i for i, h in enumerate(hosts["host"])}
        self.address = dict(zip(hosts["host"], hosts["address"]))
        self.port_of = (dict(zip(hosts["host"], hosts["port"].astype(int)))
                        if "port" in hosts.columns else {})

    def _agent_args(self, name: str) -> list[str]:
        """The ``python -m measure.agent`` arguments of the agent on ``name``."""
        common = ["--role", self.role, "--address", self.address[name],
                  "--port", str(self.port_of.get(name, self.port)),
                  "--peer-id", str(self.index[name])]
        if self.role == "probe":
            return common + ["--tools", ",".join(self.tools)]
        if self.role == "multicast":
            return common
        return common + ["--upload-limit", str(self.upload_limit),
                         "--params", json.dumps(asdict(self.params))]

    def start(self, names: Iterable[str]) -> list[str]:
        """Start peers on ``names`` (those not running); return those that failed to listen.

        At most ``transport.max_starting`` peers (an SSH connection limit), and
        never more than ``MAX_STARTING``, are starting at any time; each has
        ``STARTUP_TIMEOUT`` from its own start.
        """
        todo = [n for n in names if n not in self.peers or not self.peers[n].alive()]
        limit = max(1, min(self.transport.max_starting or MAX_STARTING, MAX_STARTING))
        starting: dict[str, float] = {}
        failed: list[str] = []
        while todo or starting:
            while todo and len(starting) < limit:
                name = todo.pop(0)
                self.errors.pop(name, None)
                self.peers[name] = self.transport.open(name, self._agent_args(name), self.inbox)
                starting[name] = time.monotonic()
            try:
                channel, message = self.inbox.get(timeout=0.2)
            except queue.Empty:
                channel, message = None, {}
            if channel is not None and self.peers.get(channel.host) is channel \
                    and channel.host in starting:
                kind = message.get("event")
                if kind == "hello":
                    self.ports[channel.host] = int(message["port"])
                    self.hello[channel.host] = message
                    del starting[channel.host]
                elif kind == "error":
                    self.errors[channel.host] = message
                elif kind == "exit":
                    failed.append(channel.host)
                    del starting[channel.host]
            now = time.monotonic()
            for name in [n for n, t in starting.items() if now - t > STARTUP_TIMEOUT]:
                failed.append(name)
                del starting[name]
        return sorted(failed)

    def wait(self, names: set[str], event: str | tuple[str, ...], timeout: float,
             on_other: Callable[[str, dict[str, Any]], None] | None = None) -> dict[str, dict]:
        """Collect ``event`` (or the first of several) from each of ``names`` until
        ``timeout``; dead peers drop out."""
        events = (event,) if isinstance(event, str) else event
        got: dict[str, dict] = {}
        pending = set(names)
        deadline = time.monotonic() + timeout
        while pending:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            try:
                channel, message = self.inbox.get(timeout=min(left, 0.5))
            except queue.Empty:
                continue
            host = channel.host
            if self.peers.get(host) is not channel:
                continue  # the last words of a peer that was replaced
            kind = message.get("event")
            if kind in events and host in pending:
                message["received"] = time.time()
                got[host] = message
                pending.discard(host)
            elif kind == "exit":
                pending.discard(host)
                if on_other is not None:
                    on_other(host, message)
            elif on_other is not None:
                on_other(host, message)
        return got

    def failure(self, name: str) -> str:
        """Why the peer on ``name`` never said hello, in one line."""
        channel = self.peers.get(name)
        error = self.errors.get(name, {}).get("message")
        if channel is None:
            return error or "not started"
        return failure_reason(channel.exit_code(), channel.stderr_tail(), error,
                              self.transport.name)

    def peer_named(self, key: str) -> str | None:
        """The host a peer's report names by its number, or by its address if that is unique.

        Examples
        --------
        >>> from measure.transport import ProcessTransport
        >>> hosts = host_frame([("a", "10.0.0.1", ""), ("b", "10.0.0.2", "")])
        >>> group = AgentGroup(hosts, ProcessTransport(), SwarmParams(), 0, 0)
        >>> group.peer_named("1"), group.peer_named("10.0.0.1"), group.peer_named("9")
        ('b', 'a', None)
        """
        if key in self.by_index:
            return self.by_index[key]
        named = [h for h, address in self.address.items() if address == key]
        return named[0] if len(named) == 1 else None

    def describe_death(self, name: str) -> str:
        channel = self.peers[name]
        code = channel.exit_code()
        tail = channel.stderr_tail()
        return (f"peer {name} exited with code {code}" + (f" ({tail[-1]})" if tail else "")
                if code is not None else f"peer {name} did not answer")

    def clock(self, names: list[str], rounds: int = CLOCK_ROUNDS) -> dict[str, tuple[float, float]]:
        """Each host's clock offset against ours and the round trip it was read with.

        NTP's estimate from the exchange with the shortest round trip:
        ``offset = t_host - (t_sent + t_received) / 2``.
        """
        best: dict[str, tuple[float, float]] = {}
        for _ in range(rounds):
            sent = {}
            for name in names:
                sent[name] = time.time()
                self.peers[name].send({"cmd": "clock"})
            for name, reply in self.wait(set(names), "clock", REPLY_TIMEOUT).items():
                rtt = reply["received"] - sent[name]
                offset = float(reply["t"]) - (sent[name] + reply["received"]) / 2
                if name not in best or rtt < best[name][1]:
                    best[name] = (offset, rtt)
        self.offsets.update({name: offset for name, (offset, _) in best.items()})
        return best

    def preflight(self) -> list[HostCheck]:
        """Start every peer and check it: answers, versions, address, port; read its clock."""
        hosts = list(self.hosts["host"])
        failed = set(self.start(hosts))
        here = host_facts()
        if self.role == "bittorrent":
            here["libtorrent"] = lt_version()
        checks: dict[str, HostCheck] = {}
        for name in hosts:
            facts = self.hello.get(name) if name not in failed else self.errors.get(name)
            facts = facts or {}
            check = HostCheck(name, self.address[name], ok=name not in failed,
                              hostname=facts.get("hostname", ""), cpus=facts.get("cpus", 0),
                              toolkit=facts.get("toolkit", ""),
                              libtorrent=facts.get("libtorrent", ""),
                              python=facts.get("python", ""))
            if name in failed:
                check.reason = self.failure(name)
            else:
                mismatch = version_mismatch(facts, here)
                missing = facts.get("missing") or []
                if mismatch:
                    check.ok, check.reason = False, mismatch
                elif missing:
                    check.ok, check.reason = False, (
                        f"{missing[0]} is not installed there (apt-get install "
                        f"{'netpipe-tcp' if missing[0] == 'netpipe' else missing[0]})")
            checks[name] = check
        ready = [name for name in hosts if checks[name].ok]
        for name, (offset, rtt) in self.clock(ready).items():
            checks[name].clock_offset_s, checks[name].clock_rtt_s = offset, rtt
        for name in ready:
            if checks[name].clock_offset_s is None:
                checks[name].ok, checks[name].reason = False, "no answer to the clock reading"
        return [checks[name] for name in hosts]

    def drop(self, names: Iterable[str]) -> None:
        """Close the peers of ``names`` and leave them out of the run."""
        for name in names:
            channel = self.peers.pop(name, None)
            if channel is not None:
                channel.close()

    def close(self, timeout: float = 5.0, *, transport: bool = True) -> None:
        """Ask every peer to quit at once; kill those still there after ``timeout`` in all.

        ``transport=False`` keeps the transport open for agents of another role
        (a multicast run's BitTorrent baseline on the same MPI ranks).
        """
        for channel in self.peers.values():
            channel.send({"cmd": "quit"})
        deadline = time.monotonic() + timeout
        for channel in self.peers.values():
            channel.close(timeout=max(0.1, deadline - time.monotonic()))
        self.peers.clear()
        if transport:
            self.transport.close()
        if self.transport.name in ("local", "testbed"):   # peers on this machine
            remove_stale("peer")   # the directory of a peer that had to be killed


def broadcast(swarm: AgentGroup, iteration: int, root: str, file_size: int, *, seed: int,
              time_limit: float, trace: bool, time_box: float | None = None,
              block_quota: int | None = None) -> IterationResult:
    """One instrumented broadcast of ``file_size`` bytes from ``root`` among the group's peers.

    The four steps of the module's docstring; a peer that died before is
    started again first.  :func:`run_broadcasts` runs one per iteration, a
    multicast run (:mod:`measure.multicast`) one as its BitTorrent baseline.
    With ``block_quota`` the broadcast ends once every downloader holds that
    many blocks, with ``time_box`` after that many seconds: complete, with
    the blocks sent by then (:class:`measure.swarm.SwarmParams`).

    Returns
    -------
    IterationResult
    """
    hosts = list(swarm.hosts["host"])
    params = swarm.params
    failed: dict[str, str] = {}
    warnings: list[str] = []

    def note_failure(host: str, message: dict[str, Any]) -> None:
        if message.get("event") == "exit":
            failed.setdefault(host, swarm.describe_death(host))
        elif message.get("event") == "error":
            failed.setdefault(host, f"peer {host}: {message.get('message')}")
        elif message.get("event") == "warning":
            warnings.append(f"peer {host}: {message.get('message')}")

    for name in swarm.start(hosts):
        failed[name] = swarm.describe_death(name)
    active = [h for h in hosts if h not in failed and swarm.peers[h].alive()]
    torrent = base64.b64encode(make_torrent(file_size, params.piece_bytes(file_size),
                                            f"tomography-{seed}-{iteration}")).decode()
    allow = sorted({swarm.address[h] for h in active})
    for h in active:
        swarm.peers[h].send({"cmd": "add", "iteration": iteration, "torrent": torrent,
                             "seed": h == root, "allow": allow, "trace": trace,
                             "quota": block_quota})
    added = swarm.wait(set(active), "added", REPLY_TIMEOUT, note_failure)
    for h in set(active) - set(added):
        failed.setdefault(h, swarm.describe_death(h))
    active = [h for h in active if h in added]
    lists = peer_lists(len(active), params.peer_list, np.random.default_rng([seed, iteration]))
    started, go_wall = time.monotonic(), time.time()
    for i, h in enumerate(active):
        swarm.peers[h].send({"cmd": "go", "peers": [[swarm.address[active[j]],
                                                     swarm.ports[active[j]]]
                                                    for j in lists[i]]})
    downloaders = {h for h in active if h != root}
    boxed = time_box is not None and time_box < time_limit
    reached = swarm.wait(downloaders, ("finished", "quota") if block_quota else "finished",
                         time_box if boxed else time_limit, note_failure)
    finished = {h: float(e["t"]) for h, e in reached.items() if e["event"] == "finished"}
    whole = len(finished) == len(downloaders)
    duration = (max(finished.values(), default=0.0) if whole
                else time.monotonic() - started)
    # ended by the quota (every downloader that lives holds it) or by the box: complete as
    # it stands, but for the peers that died (named as such, not as late)
    cut = not whole and (boxed or downloaders <= set(reached) | set(failed))
    if whole:
        time.sleep(SETTLE)
    alive = [h for h in active if swarm.peers[h].alive()]
    for h in alive:
        swarm.peers[h].send({"cmd": "stop"})
    # a live peer reports at once; one that is stopped (SIGSTOP) never will: wait no longer
    # than the time limit itself (a run of --time-limit 10s is not held 30 s more by it)
    reports = swarm.wait(set(alive), "report", min(REPLY_TIMEOUT, max(REPORT_FLOOR, time_limit)),
                         note_failure)
    for h in set(active) - set(reports):
        failed.setdefault(h, swarm.describe_death(h))
        swarm.peers[h].kill()  # hung or dead: started afresh next iteration
    # only now that every peer has counted: a torrent removed earlier would cut connections
    # whose last bytes a peer still to report had not read
    for h in reports:
        swarm.peers[h].send({"cmd": "drop"})
    result = _result(swarm, iteration, root, duration, hosts, downloaders, finished, reports,
                     failed, None if cut else time_limit, go_wall)
    result.warnings = warnings
    return result


def _result(swarm: AgentGroup, iteration: int, root: str, duration: float, hosts: list[str],
            downloaders: set[str], finished: dict[str, float], reports: dict[str, dict],
            failed: dict[str, str], time_limit: float | None, go_wall: float
            ) -> IterationResult:
    """The iteration's :class:`IterationResult`; ``time_limit`` None: the quota or the time box
    ended it (the peers still downloading are no fault)."""
    notes = list(failed.values())
    sent: dict[tuple[str, str], tuple[int, int]] = {}
    trace: list[tuple[float, str, str, int, int]] = []
    for receiver, report in sorted(reports.items()):
        for peer, (blocks, nbytes) in report["from"].items():
            sender = swarm.peer_named(peer)
            if sender is None:
                raise TomographyError(f"peer {receiver} reports blocks received from {peer}, "
                                      "which is not a peer of this run")
            sent[(receiver, sender)] = (int(blocks), int(nbytes))
        # the peer's times count from when it added the torrent: shift them onto the
        # coordinator's clock, from its ``go``, through the host's clock offset, so that traces
        # of several machines agree.  No block arrives before that ``go``: an earlier time is
        # the offset's error (half the round trip it was read with), and reads as 0.
        shift = float(report["trace_wall"]) - swarm.offsets.get(receiver, 0.0) - go_wall
        trace.extend((max(0.0, round(t + shift, 6)), swarm.peer_named(peer) or peer, receiver,
                      int(p), int(b)) for t, peer, p, b in report["trace"])
        if report["alerts_dropped"]:
            notes.append(f"peer {receiver} lost alerts: its trace is short")
    if time_limit is None and not any(blocks for blocks, _ in sent.values()):
        notes.append("the time box passed before a block was sent: lengthen --time-box")
    missing = sorted(set(downloaders) - set(finished) - set(failed))
    if missing and time_limit is not None:
        notes.append(f"time limit of {time_limit:g} s passed before {len(missing)} peer(s) "
                     f"had the file: {listed(missing)}")
    dead_root = root in failed
    complete = (not notes and not dead_root
                and (time_limit is None or len(finished) == len(hosts) - 1))
    trace.sort()
    return IterationResult(
        iteration=iteration, root=root, duration=duration, complete=complete,
        finished=finished, sent=sent,
        payload={h: int(r["payload_download"]) for h, r in reports.items()},
        redundant={h: int(r["redundant_bytes"]) for h, r in reports.items()},
        failed=sorted(failed), notes=notes, trace=trace)


def _run_params(file_size: int, seed: int, params: SwarmParams) -> dict[str, Any]:
    return {"file_size": file_size, "seed": seed, **asdict(params),
            "piece_bytes": params.piece_bytes(file_size)}


def host_frame(hosts: pd.DataFrame | Sequence[tuple[str, str, str]]) -> pd.DataFrame:
    """The run's hosts, validated and sorted by name (``host,address,label[,port]``).

    Examples
    --------
    >>> host_frame([("b", "10.0.0.2", ""), ("a", "10.0.0.1", "")])["host"].tolist()
    ['a', 'b']
    >>> host_frame([("a", "10.0.0.1", ""), ("b", "10.0.0.1", "")])
    Traceback (most recent call last):
    ...
    tomography.model.errors.ParameterError: every host needs its own address (one address is one peer, unless a port column tells the peers apart)
    """
    frame = hosts if isinstance(hosts, pd.DataFrame) else pd.DataFrame(
        list(hosts), columns=list(HOSTS_COLUMNS))
    frame = frame.sort_values("host").reset_index(drop=True)
    if len(frame) < 2:
        raise ParameterError(f"a broadcast needs at least 2 hosts, got {len(frame)}")
    duplicated = frame["host"][frame["host"].duplicated()]
    if len(duplicated):
        raise ParameterError(f"duplicate host name {duplicated.iloc[0]!r}")
    if (frame["address"].astype(str).str.strip() == "").any():
        raise ParameterError("every host needs an address")
    if frame["address"].duplicated().any():
        if "port" not in frame.columns:
            raise ParameterError("every host needs its own address (one address is one peer, "
                                 "unless a port column tells the peers apart)")
        fixed = frame[frame["port"].astype(int) != 0]
        if fixed[["address", "port"]].duplicated().any():
            raise ParameterError("two hosts share an address and a port")
    if "label" not in frame.columns:
        frame = frame.assign(label="")
    return frame


def transport_of(launch: Launcher | Transport) -> Transport:
    """A transport as it is, or a launcher wrapped as a :class:`ProcessTransport`."""
    return launch if hasattr(launch, "open") else ProcessTransport(launch)  # type: ignore


def checked_agents(frame: pd.DataFrame, transport: Transport, params: SwarmParams, port: int,
                   upload_limit: int, skip_failed: bool, **role: Any
                   ) -> tuple[AgentGroup, list[HostCheck]]:
    """The run's :class:`AgentGroup`, its agents checked; failures raise unless ``skip_failed``.

    ``role`` goes to :class:`AgentGroup` (``role``, ``tools``).
    """
    agents = AgentGroup(frame, transport, params, port, upload_limit, **role)
    try:
        checks = agents.preflight()
        bad = [c for c in checks if not c.ok]
        if bad and not skip_failed:
            raise PreflightError("\n".join(f"host {c.host} ({c.address}): {c.reason}"
                                           for c in bad))
        if len(checks) - len(bad) < 2:
            raise PreflightError(f"only {len(checks) - len(bad)} host(s) passed the preflight; "
                                 "a broadcast needs 2")
    except BaseException:
        agents.close()
        raise
    agents.drop(c.host for c in bad)
    return agents, checks


def preflight(hosts: pd.DataFrame | Sequence[tuple[str, str, str]], *,
              launch: Launcher | Transport = local, params: SwarmParams = SwarmParams(),
              port: int = 0, role: str = "bittorrent", tools: Sequence[str] = ()
              ) -> list[HostCheck]:
    """Check every host as a run would, without measuring: one :class:`HostCheck` each.

    Starts a peer (or, with ``role="probe"``, a probe agent needing
    ``tools``) on each host through the run's transport (so the check takes
    the run's path), reads its versions and clock, and stops it.

    Examples
    --------
    >>> checks = preflight(local_hosts(2, first=60))
    >>> [(c.host, c.ok) for c in checks]
    [('h00', True), ('h01', True)]
    >>> abs(checks[0].clock_offset_s) < 1.0
    True
    """
    agents = AgentGroup(host_frame(hosts), transport_of(launch), params, port, 0, role=role,
                        tools=tools)
    try:
        return agents.preflight()
    finally:
        agents.close()


def run_broadcasts(hosts: pd.DataFrame | Sequence[tuple[str, str, str]],
                   output: str | Path, *, iterations: int, file_size: int,
                   launch: Launcher | Transport = local, seed: int = 0,
                   params: SwarmParams = SwarmParams(), port: int = 0,
                   upload_limit: int = 0, trace: bool | None = None,
                   meta: dict[str, Any] | None = None,
                   resume: bool = False, overwrite: bool = False, skip_failed: bool = False,
                   stop: Callable[[int], bool] | None = None,
                   progress: Callable[[IterationResult], None] | None = None) -> RunSummary:
    """Run instrumented BitTorrent broadcasts among ``hosts`` and write the dataset.

    Parameters
    ----------
    hosts : DataFrame or sequence of (host, address, label)
        The run's hosts; each peer listens on its host's address.  Hosts
        may share an address when a ``port`` column gives each its own
        port, or 0 for any free one (several MPI ranks on one node).
    output : path
        The dataset directory (format 1, method ``bittorrent``).
    iterations : int
        Iterations wanted in all (including those on disk with ``resume``);
        the most when ``stop`` ends the run earlier.
    file_size : int
        Bytes broadcast per iteration.
    launch : callable or transport
        ``launch(host, argv) -> argv``: how to run a peer on a host (local
        processes by default; ``Testbed.command`` for a testbed;
        :func:`measure.ssh.ssh_transport`), or a transport object
        (:class:`measure.mpi.MpiTransport`).
    seed : int
        Roots, peer lists and everything random derive from it.
    params : SwarmParams
        BitTorrent settings; ``time_limit`` bounds each iteration.
    port : int
        The peers' listening port (0: any free port).
    upload_limit : int
        Upload cap per peer in bytes/s (0: none): gives a swarm on one
        machine without a testbed a finite speed.
    trace : bool, optional
        Also write ``trace.csv``: one row per block (time on the
        coordinator's clock, sender, receiver).  Default: when the run has
        at most :data:`TRACE_HOSTS` hosts.
    meta : dict, optional
        More keys for ``meta.json`` (``topology``, ``testbed``, ...).
    resume : bool
        Continue a dataset made with the same hosts and parameters.
    overwrite : bool
        Replace an existing dataset.
    skip_failed : bool
        Leave out the hosts that fail the preflight (recorded) instead of
        refusing to start.
    stop : callable, optional
        ``stop(iteration) -> bool``, asked after each written iteration:
        true ends the run (e.g. the partition stopped changing).
    progress : callable, optional
        Called with each :class:`IterationResult`.

    Returns
    -------
    RunSummary

    Raises
    ------
    PreflightError
        A host failed the preflight (one line per host), unless ``skip_failed``.

    Examples
    --------
    >>> import tempfile
    >>> run = run_broadcasts(local_hosts(3), tempfile.mkdtemp() + "/bt", iterations=1,
    ...                      file_size=2**20, seed=1)
    >>> run.iterations[0].complete, sorted(run.iterations[0].finished) != []
    (True, True)
    >>> sum(b for (r, s), (_, b) in run.iterations[0].sent.items() if r != run.iterations[0].root) >= 2 * 2**20
    True
    """
    if iterations < 1:
        raise ParameterError(f"iterations must be >= 1, got {iterations}")
    if file_size < 1:
        raise ParameterError(f"file_size must be >= 1 byte, got {file_size}")
    frame = host_frame(hosts)
    trace = len(frame) <= TRACE_HOSTS if trace is None else trace
    transport = transport_of(launch)
    # counted_by: datasets of earlier versions counted blocks on the sender's side
    run_params = {**_run_params(file_size, seed, params), "upload_limit": upload_limit,
                  "counted_by": "receiver"}
    summary = RunSummary(path=Path(output), iterations=[], stop_rule=stop is not None)
    run = Run(output, resume=resume, overwrite=overwrite)
    try:
        with run:
            if run.resuming:
                run.writer = MeasurementWriter.reopen(run.path)  # drops unlisted rows first
                existing = read_measurement(run.path)
                refuse_other_run(existing.meta, run.path / "meta.json", hosts=frame["host"],
                                 recorded_hosts=existing.host_names, params=run_params)
                summary.kept = len(existing.iteration_ids)
            swarm, summary.checks = checked_agents(frame, transport, params, port,
                                                   upload_limit, skip_failed)
            run.agents = swarm
            session = {"version": lt_version(),
                       "settings": session_settings("<host address>", port, params,
                                                    upload_limit)}
            writer = run.begin(summary.checks, transport.name, lambda records:
                               MeasurementWriter(
                                   run.path, {"method": "bittorrent", **(meta or {}), **records,
                                              "params": run_params, "libtorrent": session},
                                   frame[frame["host"].isin(swarm.peers)][list(HOSTS_COLUMNS)],
                                   overwrite=overwrite,
                                   iteration_columns=("redundant_bytes", "failed_peers")),
                               kept=summary.kept)
            hosts_sorted = sorted(swarm.peers)
            roots = RootChooser(hosts_sorted, seed, params.roots)
            if run.resuming:
                roots.replay(existing)
            swarm.hosts = frame[frame["host"].isin(hosts_sorted)].reset_index(drop=True)
            for i in range(summary.kept, iterations):
                result = broadcast(swarm, i, roots.next(), file_size, seed=seed,
                                   time_limit=params.time_limit, trace=trace,
                                   time_box=params.time_box, block_quota=params.block_quota)
                if trace:
                    writer.add_trace(i, result.trace)
                sent = [(r, s, b) for (r, s), (b, _) in sorted(result.sent.items())]
                writer.add_iteration(
                    i, root=result.root, nbytes=file_size, duration_s=result.duration,
                    complete=result.complete,
                    transfers=sent, extra={"redundant_bytes": result.redundant_bytes,
                                           "failed_peers": " ".join(result.failed)})
                roots.add(result.root, *(zip(*sent) if sent else ([], [], [])))
                summary.iterations.append(result)
                if progress is not None:
                    progress(result)
                if stop is not None and stop(i):
                    summary.converged_at = i
                    break
    finally:
        summary.seconds = run.seconds
    return summary
