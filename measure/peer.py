"""One instrumented BitTorrent peer: a libtorrent session closed to everyone but the run.

The ``bittorrent`` role of the agent (:mod:`measure.agent`): started as
``python -m measure.agent --role bittorrent --address IP --peer-id N
--params JSON [--upload-limit B]``, it speaks the agents' protocol
(``hello``, ``clock``, ``quit``, errors; see :mod:`measure.agent`), its
``hello`` adds the ``libtorrent`` version and the effective ``settings``,
and it takes these commands:

=====================================  ==========================================
``{"cmd": "add", "iteration": i,       add the iteration's torrent (base64 of the
"torrent": B64, "seed": bool,          ``.torrent``), as the seed (seed mode, data
"allow": [ip, ...], "trace": bool,     already there) or empty; only ``allow``
"quota": blocks or null}``             addresses pass the IP filter.  Answer:
                                       ``{"event": "added", "iteration": i}``.
``{"cmd": "go", "peers":               connect to these peers; the broadcast runs.
[[ip, port], ...]}``                   A downloader sends ``{"event": "finished",
                                       "t": s}`` when it has every piece (``t``
                                       seconds after ``go``), and ``{"event":
                                       "quota", "t": s}`` once it holds
                                       ``quota`` blocks of the file.
``{"cmd": "stop"}``                    report what was received: ``{"event":
                                       "report", "iteration", "from": {id:
                                       [blocks, bytes]}, "trace_wall", "payload_download",
                                       "redundant_bytes", "failed_bytes",
                                       "have_pieces", "num_pieces", "alerts_dropped",
                                       "trace": [[t, id, piece, block], ...]}``,
                                       ``t`` in seconds after the wall-clock time
                                       ``trace_wall`` (when the torrent was added).
                                       The torrent stays, so that peers still to
                                       report lose no connection to it.
``{"cmd": "drop"}``                    remove the torrent and its file.  No answer.
=====================================  ==========================================

libtorrent's error alerts, which need not spoil the iteration, are sent as
``{"event": "warning", "message": ...}``.

Counting: each peer counts what it **received** from each other peer: the
payload bytes of every connection (libtorrent's ``peer_info.total_download``),
read every :data:`READ_INTERVAL` seconds while the broadcast runs and once
more at ``stop``, so a connection that closes keeps what it had carried up to
its last read (at most 50 ms before it closed).
``stop`` leaves the torrent in place and ``drop`` removes it: the coordinator
drops the torrents once every peer has reported, so no peer's leaving cuts a
connection another peer has not read yet.
Bytes become 16 KiB blocks, rounded to the nearest.  Counting on the
sender's side (``block_uploaded_alert``) would credit a slow link with the
blocks queued in the sender's socket buffers when the iteration stops: up to
twice what a 10 Mbit/s site link carried, on the testbed, once the quota cuts
the broadcast.  The coordinator gives each peer a number (``--peer-id``)
that becomes its whole 20-byte BitTorrent peer id (:func:`peer_id`), so
several peers may share an address (several MPI ranks on one node) and still
be told apart.

The trace (``"trace": true``) records each block when it is written, from
``block_finished_alert``: its time, sender, piece and block.  libtorrent posts
no such alert for a block that arrived twice (the end game), nor for a block
whose write ends after the download has completed (it drops its piece picker
then), so a trace holds fewer blocks than the counts.  How many fewer depends on
how far the writes lag: on loopback, where a 1 MiB download takes a few
milliseconds, 40-100 % of a receiver's blocks were traced on a loaded machine.
The alert queue is raised far above one iteration's blocks and a dropped alert
is reported, never ignored.

The file is dummy data: a sparse file of zeros in ``/dev/shm`` (memory, no
disk I/O on the measured path); the seed starts in seed mode.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any, TextIO

import libtorrent as lt

from measure.agent import (WORK_BASE, Send, check_address, event_sender, hello_event,
                           host_facts, work_directory)
from measure.agent import serve as serve_agent
from measure.swarm import SwarmParams
from tomography.model.dataset.schema import BLOCK_SIZE
from tomography.model.errors import ParameterError

__all__ = ["session_settings", "make_torrent", "lt_version", "peer_id", "peer_index", "Peer",
           "serve", "add_arguments", "run"]

ALERT_QUEUE = 4_000_000  # alerts; one per 16 KiB block received must never be dropped
READ_INTERVAL = 0.05  # seconds between reads of the connections' payload counters
PEER_ID_PREFIX = "-TM0100-"  # 8 characters, then 12 digits: a whole 20-byte peer id


def peer_id(index: int) -> str:
    """The 20-character BitTorrent peer id of the run's peer number ``index``.

    Examples
    --------
    >>> peer_id(7)
    '-TM0100-000000000007'
    >>> peer_index(peer_id(7).encode())
    7
    """
    if not 0 <= index < 10**12:
        raise ParameterError(f"peer index must be in [0, 10**12), got {index}")
    return f"{PEER_ID_PREFIX}{index:012d}"


def peer_index(raw: bytes) -> int | None:
    """The peer number in a peer id made by :func:`peer_id`, or None for another client's id.

    Examples
    --------
    >>> peer_index(b"-LT2110-abcdefghijkl") is None
    True
    """
    if len(raw) != 20 or not raw.startswith(PEER_ID_PREFIX.encode()) or not raw[8:].isdigit():
        return None
    return int(raw[8:])


def session_settings(address: str, port: int, params: SwarmParams = SwarmParams(),
                     upload_limit: int = 0, index: int = 0) -> dict[str, Any]:
    """libtorrent settings of a measurement peer: closed, TCP only, with the swarm's parameters.

    No DHT, local peer discovery, UPnP, NAT-PMP, uTP or WebTorrent STUN
    server; listen on ``address`` only and bind outgoing connections to it.

    Parameters
    ----------
    address : str
        The host's IPv4 address in the run.
    port : int
        The port to listen on (0: any free port).
    params : SwarmParams
        Upload slots, choking, intervals.
    upload_limit : int, default 0
        Upload rate cap in bytes/s (0: none), for runs on one machine
        without a testbed; :class:`Peer` makes it apply to loopback and
        private addresses too, which libtorrent otherwise exempts.
    index : int, default 0
        The peer's number in the run: its peer id is :func:`peer_id` of it.

    Returns
    -------
    dict
        A settings pack for ``libtorrent.session``.

    Examples
    --------
    >>> s = session_settings("127.0.0.2", 6881)
    >>> s["enable_dht"], s["enable_outgoing_utp"], s["listen_interfaces"]
    (False, False, '127.0.0.2:6881')
    >>> session_settings("127.0.0.2", 0, SwarmParams(tit_for_tat=False))["unchoke_slots_limit"]
    -1
    """
    return {
        "listen_interfaces": f"{address}:{port}",
        "outgoing_interfaces": address,
        "enable_dht": False,
        "enable_lsd": False,
        "enable_upnp": False,
        "enable_natpmp": False,
        "enable_incoming_utp": False,
        "enable_outgoing_utp": False,
        "webtorrent_stun_server": "",
        "dht_bootstrap_nodes": "",
        "announce_to_all_trackers": False,
        "alert_queue_size": ALERT_QUEUE,
        "alert_mask": int(lt.alert_category.block_progress | lt.alert_category.status
                          | lt.alert_category.error),
        "min_reconnect_time": 1,
        "peer_fingerprint": peer_id(index),
        # peers told apart by id, not address: several may share a node's address
        "allow_multiple_connections_per_ip": True,
        "close_redundant_connections": False,
        "choking_algorithm": int(lt.choking_algorithm_t.fixed_slots_choker),
        "seed_choking_algorithm": int(lt.seed_choking_algorithm_t.round_robin),
        "unchoke_slots_limit": params.upload_slots if params.tit_for_tat else -1,
        "unchoke_interval": int(round(params.unchoke_interval)),
        "optimistic_unchoke_interval": int(round(params.optimistic_unchoke_interval)),
        "upload_rate_limit": int(upload_limit),
        "user_agent": f"tomography-peer/libtorrent-{lt.__version__}",
    }


def lt_version() -> str:
    """The version of the libtorrent the peers run.

    Examples
    --------
    >>> lt_version().count(".") >= 2
    True
    """
    return lt.__version__


def make_torrent(file_size: int, piece_size: int, name: str) -> bytes:
    """The ``.torrent`` of a file of ``file_size`` zero bytes, v1 only.

    Every peer and every run gives the same bytes for the same arguments;
    the iteration goes into ``name`` so each broadcast has its own info hash.

    Examples
    --------
    >>> t = lt.torrent_info(lt.bdecode(make_torrent(100_000, 32768, "x")))
    >>> t.num_pieces(), t.total_size(), t.name()
    (4, 100000, 'x')
    """
    if file_size < 1:
        raise ParameterError(f"file_size must be >= 1 byte, got {file_size}")
    if piece_size < BLOCK_SIZE or piece_size % BLOCK_SIZE:
        raise ParameterError(f"piece_size must be a positive multiple of {BLOCK_SIZE}, "
                             f"got {piece_size}")
    torrent = lt.create_torrent([lt.create_file_entry(name, file_size)], piece_size,
                                flags=lt.create_torrent.v1_only)
    full = hashlib.sha1(bytes(piece_size)).digest()
    for piece in range(torrent.num_pieces()):
        length = min(piece_size, file_size - piece * piece_size)
        torrent.set_hash(piece, full if length == piece_size else hashlib.sha1(bytes(length)).digest())
    torrent.set_creator("tomography")
    return lt.bencode(torrent.generate())


class Peer:
    """A measurement peer: a libtorrent session and the counts of one broadcast at a time.

    Parameters
    ----------
    address : str
        The host's address in the run.
    port : int
        Listening port (0: any).
    params : SwarmParams
    upload_limit : int, default 0
        Upload cap in bytes/s for every peer it talks to (0: none).
    workdir : path, optional
        Where the dummy file lives; default a fresh directory in ``/dev/shm``.
    index : int, default 0
        The peer's number in the run (its peer id, :func:`peer_id`).

    Examples
    --------
    >>> p = Peer("127.0.0.1", 0)
    >>> p.port > 0
    True
    >>> p.close()
    """

    def __init__(self, address: str, port: int = 0, params: SwarmParams = SwarmParams(),
                 upload_limit: int = 0, workdir: str | os.PathLike[str] | None = None,
                 index: int = 0) -> None:
        why = check_address(address, port)
        if why:
            raise OSError(why)
        self.address, self.index = address, index
        self.settings = session_settings(address, port, params, upload_limit, index)
        self.session = lt.session(self.settings)
        if upload_limit:  # put every address in the global (rate-limited) peer class
            classes = lt.ip_filter()
            classes.add_rule("0.0.0.0", "255.255.255.255", 1 << self.session.global_peer_class_id)
            self.session.set_peer_class_filter(classes)
        self.workdir = Path(workdir) if workdir else work_directory("peer", address, WORK_BASE)
        self.port = self._wait_listening()
        self.handle: Any = None
        self._reset()

    def _wait_listening(self, timeout: float = 10.0) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for alert in self.session.pop_alerts():
                if isinstance(alert, lt.listen_failed_alert):
                    raise OSError(f"cannot listen on {self.settings['listen_interfaces']}: "
                                  f"{alert.message()}")
            if self.session.is_listening() and self.session.listen_port():
                return self.session.listen_port()
            self.session.wait_for_alert(50)
        raise OSError(f"no listening socket on {self.settings['listen_interfaces']} "
                      f"after {timeout:.0f} s")

    def _reset(self) -> None:
        self.iteration: int | None = None
        self.seed = False
        # each connection by its remote endpoint: [sender's peer number or None, bytes received]
        self.connections: dict[tuple[str, int], list[Any]] = {}
        self.closed: dict[str, int] = {}  # bytes of connections since replaced, by sender
        self.read_at = 0.0
        self.trace: list[list[Any]] | None = None
        self.started = 0.0
        # the trace's zero, on both clocks: set when the torrent is added, since a peer may
        # receive blocks before its own ``go`` (from peers that were told to go first)
        self.trace_zero = (time.monotonic(), time.time())
        self.finished_at: float | None = None
        self.quota_bytes: int | None = None
        self.alerts_dropped = False
        self.errors: list[str] = []
        self.reported = False  # stopped: counts sent, nothing more to say of this torrent

    def add(self, iteration: int, torrent: bytes, *, seed: bool, allow: list[str],
            trace: bool = False, quota: int | None = None) -> None:
        """Add one iteration's torrent, as its seed or as a downloader.

        With ``quota`` a downloader says ``quota`` once it holds that many blocks.
        """
        self.drop()
        self._reset()
        self.iteration, self.seed = iteration, seed
        self.trace = [] if trace else None
        info = lt.torrent_info(lt.bdecode(torrent))
        self.file_size = info.total_size()
        if quota is not None and not seed:
            self.quota_bytes = min(int(quota) * BLOCK_SIZE, self.file_size)
        if seed:
            with open(self.workdir / info.name(), "wb") as fh:
                fh.truncate(self.file_size)
        ip_filter = lt.ip_filter()
        ip_filter.add_rule("0.0.0.0", "255.255.255.255", 1)
        for address in allow:
            ip_filter.add_rule(address, address, 0)
        self.session.set_ip_filter(ip_filter)
        atp = lt.add_torrent_params()
        atp.ti = info
        atp.save_path = str(self.workdir)
        flags = (lt.torrent_flags.default_flags & ~lt.torrent_flags.auto_managed
                 & ~lt.torrent_flags.paused)
        flags |= (lt.torrent_flags.disable_pex | lt.torrent_flags.disable_dht
                  | lt.torrent_flags.disable_lsd | lt.torrent_flags.apply_ip_filter)
        if seed:
            flags |= lt.torrent_flags.seed_mode
        atp.flags = flags
        self.handle = self.session.add_torrent(atp)

    def go(self, peers: list[tuple[str, int]]) -> None:
        """Start the broadcast: connect to ``peers``."""
        self.started = time.monotonic()
        for address, port in peers:
            self.handle.connect_peer((address, int(port)))

    def poll(self, timeout_ms: int = 50) -> list[dict[str, Any]]:
        """Handle pending alerts; return the events to send (``finished``, ``error``)."""
        events: list[dict[str, Any]] = []
        self.session.wait_for_alert(timeout_ms)
        if self.reported:  # the torrent only serves peers still to report
            self.session.pop_alerts()
            return events
        for alert in self.session.pop_alerts():
            if isinstance(alert, lt.block_finished_alert):
                if self.trace is not None:
                    self._trace(alert)
            elif isinstance(alert, lt.torrent_finished_alert):
                if not self.seed and self.finished_at is None and self.handle is not None:
                    self.finished_at = time.monotonic() - self.started
                    events.append({"event": "finished", "iteration": self.iteration,
                                   "t": self.finished_at})
            elif isinstance(alert, lt.alerts_dropped_alert):
                self.alerts_dropped = True
                events.append({"event": "error", "message": "libtorrent dropped alerts: "
                               "this iteration's counts are incomplete"})
            elif alert.category() & lt.alert_category.error:
                message = f"{type(alert).__name__}: {alert.message()}"
                self.errors.append(message)
                events.append({"event": "warning", "message": message})
        if (self.handle is not None and self.started
                and time.monotonic() - self.read_at >= READ_INTERVAL):
            self._read_connections()
        if self.quota_bytes is not None and self.handle is not None and self.started:
            if self.handle.status(0).total_wanted_done >= self.quota_bytes:   # 0: no extras
                self.quota_bytes = None     # said once
                events.append({"event": "quota", "iteration": self.iteration,
                               "t": time.monotonic() - self.started})
        return events

    def _read_connections(self) -> None:
        """Read every open connection's payload received so far."""
        self.read_at = time.monotonic()
        for info in self.handle.get_peer_info():
            entry = self.connections.setdefault((info.ip[0], info.ip[1]), [None, 0])
            if info.total_download < entry[1]:  # a new connection from the same endpoint
                key = entry[0] or info.ip[0]
                self.closed[key] = self.closed.get(key, 0) + entry[1]
                entry[0] = None
            index = peer_index(info.pid.to_bytes())
            if index is not None:
                entry[0] = str(index)
            entry[1] = info.total_download

    def received(self) -> dict[str, list[int]]:
        """Blocks and bytes received so far, by sender (peer number, or address if unknown).

        Examples
        --------
        >>> p = Peer("127.0.0.1", 0)
        >>> p.received()
        {}
        >>> p.close()
        """
        totals = dict(self.closed)
        for (address, _), (sender, nbytes) in self.connections.items():
            key = sender or address
            totals[key] = totals.get(key, 0) + nbytes
        return {key: [(nbytes + BLOCK_SIZE // 2) // BLOCK_SIZE, nbytes]
                for key, nbytes in totals.items() if nbytes >= BLOCK_SIZE // 2}

    def _trace(self, alert: Any) -> None:
        index = peer_index(alert.pid.to_bytes())
        sender = str(index) if index is not None else alert.ip[0]
        self.trace.append([round(time.monotonic() - self.trace_zero[0], 6), sender,
                           alert.piece_index, alert.block_index])

    def stop(self) -> dict[str, Any]:
        """End the iteration: report the counts; the torrent stays until :meth:`drop`."""
        self.poll(0)
        self._read_connections()
        status = self.handle.status()
        report = {"event": "report", "iteration": self.iteration, "from": self.received(),
                  "trace_wall": self.trace_zero[1],
                  "payload_download": status.total_payload_download,
                  "redundant_bytes": status.total_redundant_bytes,
                  "failed_bytes": status.total_failed_bytes,
                  "have_pieces": status.num_pieces,
                  "num_pieces": self.handle.torrent_file().num_pieces(),
                  "alerts_dropped": self.alerts_dropped, "errors": self.errors,
                  "trace": self.trace or []}
        self.reported = True
        return report

    def drop(self) -> None:
        """Remove the torrent, if any, and its file."""
        if self.handle is None:
            return
        self.session.remove_torrent(self.handle)
        self.handle = None
        for item in self.workdir.iterdir():  # unlinking a file libtorrent still maps is fine
            item.unlink(missing_ok=True) if item.is_file() else shutil.rmtree(item, ignore_errors=True)

    def close(self) -> None:
        """Drop any torrent, the session and the work directory."""
        self.drop()
        del self.session
        shutil.rmtree(self.workdir, ignore_errors=True)


def _command(peer: Peer, command: dict[str, Any], send: Send) -> bool:
    """Carry out one BitTorrent command (``add``, ``go``, ``stop``, ``drop``); False for another."""
    kind = command.get("cmd")
    if kind == "add":
        peer.add(int(command["iteration"]), base64.b64decode(command["torrent"]),
                 seed=bool(command["seed"]), allow=list(command["allow"]),
                 trace=bool(command.get("trace", False)), quota=command.get("quota"))
        send({"event": "added", "iteration": peer.iteration})
    elif kind == "go":
        peer.go([tuple(p) for p in command["peers"]])
    elif kind == "stop":
        send(peer.stop() if peer.handle is not None and not peer.reported else
             {"event": "error", "message": "stop: no torrent"})
    elif kind == "drop":
        peer.drop()
    else:
        return False
    return True


def serve(peer: Peer, commands: TextIO | None = None, events: TextIO | None = None) -> None:
    """Run the protocol on a pair of text streams until ``quit`` or end of input.

    Between commands the peer polls libtorrent and sends what it has to say
    (``finished``, ``warning``, ``error``).

    Examples
    --------
    >>> import io
    >>> p = Peer("127.0.0.1", 0)
    >>> out = io.StringIO()
    >>> serve(p, io.StringIO('{"cmd": "stop"}\\n{"cmd": "quit"}\\n'), out)
    >>> p.close()
    >>> [json.loads(line).get("message", "hello") for line in out.getvalue().splitlines()]
    ['hello', 'stop: no torrent']
    """
    def poll(send: Send) -> None:
        for event in peer.poll(20):
            send(event)

    serve_agent(hello_event("bittorrent", peer.address, peer.port, peer.index,
                            libtorrent=lt_version(), settings=peer.settings),
                lambda command, send: _command(peer, command, send), commands, events,
                idle=poll)


def add_arguments(parser: argparse._ActionsContainer) -> None:
    """The options of ``python -m measure.agent --role bittorrent``.

    Examples
    --------
    >>> parser = argparse.ArgumentParser()
    >>> add_arguments(parser)
    >>> parser.parse_args(["--params", '{"upload_slots": 4}']).upload_limit
    0
    """
    parser.add_argument("--params", default="{}",
                        help="SwarmParams as JSON (upload_slots, unchoke_interval, ...)")
    parser.add_argument("--upload-limit", type=int, default=0,
                        help="upload cap in bytes/s, loopback included (0: none)")


def run(args: argparse.Namespace) -> int:
    """The ``bittorrent`` role of :func:`measure.agent.main`: serve as a peer; the exit status.

    Examples
    --------
    >>> import contextlib, io
    >>> args = argparse.Namespace(address="203.0.113.77", port=0, peer_id=0, params="{}",
    ...                           upload_limit=0)
    >>> out = io.StringIO()
    >>> with contextlib.redirect_stdout(out):
    ...     code = run(args)
    >>> code, json.loads(out.getvalue())["message"]
    (1, 'address 203.0.113.77 is not on this host')
    """
    params = SwarmParams(**json.loads(args.params))
    try:
        peer = Peer(args.address, args.port, params, args.upload_limit, index=args.peer_id)
    except OSError as exc:
        event_sender(sys.stdout)({"event": "error", "message": str(exc), **host_facts(),
                                  "libtorrent": lt_version()})
        return 1
    try:
        serve(peer)
    finally:
        peer.close()
    return 0
