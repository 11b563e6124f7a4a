"""The coordinator: instrumented BitTorrent broadcasts with a rotating root, written as they finish.

:func:`run_broadcasts` starts one peer (:mod:`measure.peer`) per host through
a *launcher*, a function that turns the peer's command line into the command
that runs it on that host: unchanged for local processes (:func:`local`),
``ip netns exec`` for a testbed namespace
(:meth:`measure.testbed.Testbed.command`).  It talks to the peers over their
standard input and output only (the protocol is in :mod:`measure.peer`), so
the transport is the launcher's business.

One iteration:

1. every peer is alive and listening (a peer that died is started again);
2. every peer adds the iteration's torrent (the root as its seed) and says so,
   before anyone connects: a peer that connects to one that does not know
   the torrent yet would be turned away and wait ``min_reconnect_time``;
3. ``go``: each peer connects to its peer list (:func:`measure.swarm.peer_lists`,
   drawn from ``(seed, iteration)``), the swarm runs until every downloader
   reports ``finished`` or the time limit passes;
4. after a short settling time, ``stop``: each peer reports the blocks it
   sent to each receiver; the iteration is written to the dataset at once.

A peer that dies or hangs makes its iteration incomplete: the counts of the
others are kept, the run goes on with the peer started afresh, and the
summary lists it.
"""

from __future__ import annotations

import base64
import json
import queue
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np
import pandas as pd

from measure.peer import lt_version, make_torrent, session_settings
from measure.swarm import SwarmParams, peer_lists, root_order
from tomography.dataset import HOSTS_COLUMNS, MeasurementWriter, read_measurement
from tomography.errors import DatasetError, TomographyError

__all__ = ["IterationResult", "RunSummary", "local", "local_hosts", "run_broadcasts"]

Launcher = Callable[[str, list[str]], list[str]]

STARTUP_TIMEOUT = 30.0  # s for a peer to listen (dozens start at once on two cores)
REPLY_TIMEOUT = 30.0    # s for a peer to answer add / stop
SETTLE = 0.5            # s between the last finish and stop: in-flight blocks land


def local(host: str, argv: list[str]) -> list[str]:
    """The launcher of local processes: run the peer's command as it is.

    Examples
    --------
    >>> local("h0", ["python", "-m", "measure.peer"])
    ['python', '-m', 'measure.peer']
    """
    return list(argv)


def local_hosts(n: int, *, first: int = 2) -> pd.DataFrame:
    """``n`` hosts on distinct loopback addresses ``127.0.0.<first + i>``, for local runs.

    Examples
    --------
    >>> local_hosts(2)[["host", "address"]].values.tolist()
    [['h00', '127.0.0.2'], ['h01', '127.0.0.3']]
    """
    if not 1 <= n <= 250 - first:
        raise ValueError(f"local runs take 1 to {250 - first} hosts, got {n}")
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
        Every downloader got the whole file, every peer reported, no alert lost.
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


@dataclass
class RunSummary:
    """What a run did: its dataset, its iterations, what failed, when it converged."""

    path: Path
    iterations: list[IterationResult]
    resumed_from: int = 0
    converged_at: int | None = None  # the iteration after which ``stop`` ended the run
    stop_rule: bool = False           # whether a ``stop`` rule was given

    @property
    def incomplete(self) -> list[int]:
        """Iterations that did not complete."""
        return [r.iteration for r in self.iterations if not r.complete]

    def describe(self) -> str:
        """A few lines for the operator."""
        done = len(self.iterations)
        lines = [f"{done} iteration(s) run"
                 + (f" after {self.resumed_from} already on disk" if self.resumed_from else "")
                 + f"; dataset in {self.path}"]
        for r in self.iterations:
            if not r.complete:
                lines.append(f"iteration {r.iteration} incomplete: " + "; ".join(r.notes))
            if r.warnings:
                lines.append(f"iteration {r.iteration}: {len(r.warnings)} libtorrent "
                             f"warning(s), first: {r.warnings[0]}")
        if self.converged_at is not None:
            lines.append(f"converged after {self.converged_at + 1} iterations (the stop rule "
                         f"held after iteration {self.converged_at})")
        elif self.stop_rule:
            lines.append("not converged: the stop rule never held; more iterations may help")
        return "\n".join(lines)


class _PeerProcess:
    """One peer process and the thread that reads its events into the shared inbox."""

    def __init__(self, host: str, address: str, argv: list[str],
                 inbox: "queue.Queue[tuple[str, dict[str, Any]]]") -> None:
        self.host, self.address = host, address
        self.port = 0
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, bufsize=1,
                                     start_new_session=True)  # Ctrl-C is the coordinator's
        self.stderr: list[str] = []
        threading.Thread(target=self._read, args=(inbox,), daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read(self, inbox: "queue.Queue[tuple[str, dict[str, Any]]]") -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                inbox.put((self.host, json.loads(line)))
            except json.JSONDecodeError:
                inbox.put((self.host, {"event": "error", "message": f"not JSON: {line[:200]!r}"}))
        inbox.put((self.host, {"event": "exit", "code": self.proc.wait()}))

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr = (self.stderr + [line.rstrip()])[-20:]

    def send(self, command: dict[str, Any]) -> bool:
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(json.dumps(command, separators=(",", ":")) + "\n")
            self.proc.stdin.flush()
            return True
        except (BrokenPipeError, OSError, ValueError):
            return False

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self, timeout: float = 5.0) -> None:
        self.send({"cmd": "quit"})
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class _Swarm:
    """The peer processes of a run and the waiting on their events."""

    def __init__(self, hosts: pd.DataFrame, launch: Launcher, params: SwarmParams,
                 port: int, upload_limit: int) -> None:
        self.hosts = hosts
        self.launch, self.params, self.port = launch, params, port
        self.upload_limit = upload_limit
        self.inbox: queue.Queue[tuple[str, dict[str, Any]]] = queue.Queue()
        self.peers: dict[str, _PeerProcess] = {}
        self.hello: dict[str, Any] = {}
        self.by_address = dict(zip(hosts["address"], hosts["host"]))

    def start(self, names: Iterable[str]) -> list[str]:
        """Start peers on ``names`` (those not running); return those that failed to listen."""
        argv = [sys.executable, "-m", "measure.peer", "--port", str(self.port),
                "--upload-limit", str(self.upload_limit), "--params", json.dumps(asdict(self.params))]
        address = dict(zip(self.hosts["host"], self.hosts["address"]))
        waiting = set()
        for name in names:
            old = self.peers.get(name)
            if old is not None and old.alive():
                continue
            self.peers[name] = _PeerProcess(name, address[name],
                                            self.launch(name, argv + ["--address", address[name]]),
                                            self.inbox)
            waiting.add(name)
        replies = self.wait(waiting, "hello", STARTUP_TIMEOUT)
        for name, event in replies.items():
            self.peers[name].port = int(event["port"])
            self.hello = self.hello or event
        return sorted(waiting - set(replies))

    def wait(self, names: set[str], event: str, timeout: float,
             on_other: Callable[[str, dict[str, Any]], None] | None = None) -> dict[str, dict]:
        """Collect ``event`` from each of ``names`` until ``timeout``; dead peers drop out."""
        got: dict[str, dict] = {}
        pending = set(names)
        deadline = time.monotonic() + timeout
        while pending:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            try:
                host, message = self.inbox.get(timeout=min(left, 0.5))
            except queue.Empty:
                continue
            kind = message.get("event")
            if kind == event and host in pending:
                got[host] = message
                pending.discard(host)
            elif kind == "exit":
                pending.discard(host)
                if on_other is not None:
                    on_other(host, message)
            elif on_other is not None:
                on_other(host, message)
        return got

    def describe_death(self, name: str) -> str:
        peer = self.peers[name]
        code = peer.proc.poll()
        tail = f" ({peer.stderr[-1]})" if peer.stderr else ""
        return (f"peer {name} exited with code {code}{tail}" if code is not None
                else f"peer {name} did not answer")

    def close(self) -> None:
        for peer in self.peers.values():
            peer.close()
        self.peers.clear()


def _broadcast(swarm: _Swarm, iteration: int, root: str, file_size: int, *, seed: int,
               time_limit: float, trace: bool) -> IterationResult:
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
    allow = [swarm.peers[h].address for h in active]
    for h in active:
        swarm.peers[h].send({"cmd": "add", "iteration": iteration, "torrent": torrent,
                             "seed": h == root, "allow": allow, "trace": trace})
    added = swarm.wait(set(active), "added", REPLY_TIMEOUT, note_failure)
    for h in set(active) - set(added):
        failed.setdefault(h, swarm.describe_death(h))
    active = [h for h in active if h in added]
    lists = peer_lists(len(active), params.peer_list, np.random.default_rng([seed, iteration]))
    started = time.monotonic()
    for i, h in enumerate(active):
        swarm.peers[h].send({"cmd": "go", "peers": [[swarm.peers[active[j]].address,
                                                     swarm.peers[active[j]].port]
                                                    for j in lists[i]]})
    downloaders = {h for h in active if h != root}
    finished = {h: float(e["t"]) for h, e in
                swarm.wait(downloaders, "finished", time_limit, note_failure).items()}
    duration = max(finished.values(), default=time.monotonic() - started)
    if len(finished) < len(downloaders):
        duration = time.monotonic() - started
    time.sleep(SETTLE)
    alive = [h for h in active if swarm.peers[h].alive()]
    for h in alive:
        swarm.peers[h].send({"cmd": "stop"})
    reports = swarm.wait(set(alive), "report", REPLY_TIMEOUT, note_failure)
    for h in set(active) - set(reports):
        failed.setdefault(h, swarm.describe_death(h))
        swarm.peers[h].proc.kill()  # hung or dead: started afresh next iteration
    result = _result(swarm, iteration, root, duration, hosts, downloaders, finished, reports,
                     failed, time_limit)
    result.warnings = warnings
    return result


def _result(swarm: _Swarm, iteration: int, root: str, duration: float, hosts: list[str],
            downloaders: set[str], finished: dict[str, float], reports: dict[str, dict],
            failed: dict[str, str], time_limit: float) -> IterationResult:
    notes = list(failed.values())
    sent: dict[tuple[str, str], tuple[int, int]] = {}
    trace: list[tuple[float, str, str, int, int]] = []
    for sender, report in sorted(reports.items()):
        for address, (blocks, nbytes) in report["sent"].items():
            receiver = swarm.by_address.get(address)
            if receiver is None:
                raise TomographyError(f"peer {sender} reports blocks sent to {address}, "
                                      "which is not a host of this run")
            sent[(receiver, sender)] = (int(blocks), int(nbytes))
        trace.extend((t, sender, swarm.by_address.get(ip, ip), int(p), int(b))
                     for t, ip, p, b in report["trace"])
        if report["alerts_dropped"]:
            notes.append(f"peer {sender} lost alerts: its counts are short")
    missing = sorted(set(downloaders) - set(finished) - set(failed))
    if missing:
        notes.append(f"time limit of {time_limit:g} s passed before {len(missing)} peer(s) "
                     f"had the file: {', '.join(missing[:5])}{' ...' if len(missing) > 5 else ''}")
    dead_root = root in failed
    complete = not notes and not dead_root and len(finished) == len(hosts) - 1
    trace.sort()
    return IterationResult(
        iteration=iteration, root=root, duration=duration, complete=complete,
        finished=finished, sent=sent,
        payload={h: int(r["payload_download"]) for h, r in reports.items()},
        redundant={h: int(r["redundant_bytes"]) for h, r in reports.items()},
        failed=sorted(failed), notes=notes, trace=trace)


def _run_params(file_size: int, seed: int, params: SwarmParams) -> dict[str, Any]:
    out = {"file_size": file_size, "seed": seed, **asdict(params),
           "piece_bytes": params.piece_bytes(file_size)}
    del out["tcp_window"]  # the simulator's alone
    return out


def run_broadcasts(hosts: pd.DataFrame | Sequence[tuple[str, str, str]],
                   output: str | Path, *, iterations: int, file_size: int,
                   launch: Launcher = local, seed: int = 0,
                   params: SwarmParams = SwarmParams(), port: int = 0,
                   upload_limit: int = 0, trace: bool = False, meta: dict[str, Any] | None = None,
                   resume: bool = False, overwrite: bool = False,
                   stop: Callable[[int], bool] | None = None,
                   progress: Callable[[IterationResult], None] | None = None) -> RunSummary:
    """Run instrumented BitTorrent broadcasts among ``hosts`` and write the dataset.

    Parameters
    ----------
    hosts : DataFrame or sequence of (host, address, label)
        The run's hosts; each peer listens on its host's address.
    output : path
        The dataset directory (format 1, method ``bittorrent``).
    iterations : int
        Iterations wanted in all (including those on disk with ``resume``);
        the most when ``stop`` ends the run earlier.
    file_size : int
        Bytes broadcast per iteration.
    launch : callable
        ``launch(host, argv) -> argv``: how to run a peer on a host.
    seed : int
        Roots, peer lists and everything random derive from it.
    params : SwarmParams
        BitTorrent settings; ``time_limit`` bounds each iteration.
    port : int
        The peers' listening port (0: any free one).
    upload_limit : int
        Upload cap per peer in bytes/s (0: none): gives a swarm on one
        machine without a testbed a finite speed.
    trace : bool
        Also write ``trace.csv``: one row per block (time, sender, receiver).
    meta : dict, optional
        More keys for ``meta.json`` (``topology``, ``testbed``, ...).
    resume : bool
        Continue a dataset made with the same hosts and parameters.
    overwrite : bool
        Replace an existing dataset.
    stop : callable, optional
        ``stop(iteration) -> bool``, asked after each written iteration:
        true ends the run (e.g. the partition stopped changing).
    progress : callable, optional
        Called with each :class:`IterationResult`.

    Returns
    -------
    RunSummary

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
        raise ValueError(f"iterations must be >= 1, got {iterations}")
    if file_size < 1:
        raise ValueError(f"file_size must be >= 1 byte, got {file_size}")
    frame = hosts if isinstance(hosts, pd.DataFrame) else pd.DataFrame(
        list(hosts), columns=list(HOSTS_COLUMNS))
    frame = frame.sort_values("host").reset_index(drop=True)
    if len(frame) < 2:
        raise ValueError(f"a broadcast needs at least 2 hosts, got {len(frame)}")
    if frame["address"].duplicated().any() or (frame["address"].astype(str).str.strip() == "").any():
        raise ValueError("every host needs its own address (one address is one peer)")
    run_params = {**_run_params(file_size, seed, params), "upload_limit": upload_limit}
    out = Path(output)
    if resume and (out / "meta.json").exists():
        existing = read_measurement(out)
        recorded = existing.meta.get("params", {})
        differ = [k for k, v in run_params.items() if recorded.get(k) != v]
        if differ or sorted(existing.host_names) != sorted(frame["host"]):
            what = differ[0] if differ else "hosts"
            raise DatasetError(f"cannot resume: the dataset was made with other {what}",
                               path=out / "meta.json", field=what)
        writer = MeasurementWriter.reopen(out)
        start = len(existing.iteration_ids)
    else:
        session = {"version": lt_version(),
                   "settings": session_settings("<host address>", port, params, upload_limit)}
        writer = MeasurementWriter(out, {"method": "bittorrent", **(meta or {}),
                                         "params": run_params, "libtorrent": session},
                                   frame, overwrite=overwrite,
                                   iteration_columns=("redundant_bytes", "failed_peers"))
        start = 0
    hosts_sorted = list(frame["host"])
    roots = root_order(hosts_sorted, seed)
    swarm = _Swarm(frame, launch, params, port, upload_limit)
    summary = RunSummary(path=out, iterations=[], resumed_from=start,
                         stop_rule=stop is not None)
    try:
        for i in range(start, iterations):
            result = _broadcast(swarm, i, roots[i % len(roots)], file_size, seed=seed,
                                time_limit=params.time_limit, trace=trace)
            if trace:
                writer.add_trace(i, result.trace)
            writer.add_iteration(
                i, root=result.root, nbytes=file_size, duration_s=result.duration,
                complete=result.complete,
                transfers=[(r, s, b) for (r, s), (b, _) in sorted(result.sent.items())],
                extra={"redundant_bytes": result.redundant_bytes,
                       "failed_peers": " ".join(result.failed)})
            summary.iterations.append(result)
            if progress is not None:
                progress(result)
            if stop is not None and stop(i):
                summary.converged_at = i
                break
    finally:
        swarm.close()
    return summary
