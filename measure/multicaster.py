"""The multicast agent: sends, forwards and receives the streams of a planned multicast, or
trades the pieces of a MOB or Robber multicast.

The ``multicast`` role of the agent (:mod:`measure.agent`): started as
``python -m measure.agent --role multicast --address IP`` through the same
transports as the BitTorrent peers and the probe agents (local, testbed,
SSH, MPI), it listens for the streams of its parents on its address and
speaks the agents' JSON-lines protocol (``hello``, ``clock``, ``quit``,
errors) with these commands, one multicast (``run``) at a time:

=====================================  ==========================================
``{"cmd": "prepare", "run": r,         take the run's streams: ``streams`` is a
"seed": s, "streams": [...],           list of ``{"stream": k, "offset": o,
"allow": [IP, ...], "pacing": P,       "length": n, "rate": bytes/s, "parent":
"stall": s}``                          host or null, "children": [[host, IP,
                                       port], ...]}`` (this host's part of each
                                       tree); accept connections only from
                                       ``allow``; answer ``{"event":
                                       "prepared", "run": r}``.
``{"cmd": "connect", "run": r}``       open a connection to every child of every
                                       stream (a header line names run and
                                       stream), set its pacing; answer
                                       ``{"event": "connected", "run": r}``.
``{"cmd": "go", "run": r}``            at the root: send every stream's bytes.
``{"cmd": "finish", "run": r}``        close what is left of the run.
=====================================  ==========================================

``{"cmd": "verify", "run": r}`` (real files) puts the files in place
(:class:`measure.fileset.Staging`) and answers ``{"event": "verified",
"run", "ok", "files", "error"}``; ``prepare`` then carries ``"file":
{"source", "manifest"}`` at the root and ``{"dest", "manifest"}`` elsewhere.

A MOB or Robber multicast comes as ``prepare`` with ``"swarm": {"method",
"host", "root", "size", "piece", "peers": [[host, IP, port, local,
connect, (first, stop of a local peer's share)], ...], "share": [first,
stop]}`` instead of streams; the agent
holds a :class:`measure.robber.SwarmNode` for it, which opens the
connections it chooses on ``connect`` (a header line names run and peer),
takes its peers' on the listening socket, starts stealing on ``go`` (sent
to every host) and reports ``received`` for stream 0 once it has every
piece, with ``sources``, the bytes from each peer.

Plans of several unpaced trees (FPFR) are *dealt*: ``prepare`` carries ``"deal": {"size",
"chunk", "windows": {stream: chunks}, "receivers": n, "me": i}`` (``me``: this receiver's
number, -1 at the root).  The root then sends no fixed share down each tree but frames (a
12-byte header, offset and length, then a chunk of the payload) to whichever tree has room in
its window (:class:`Dealer`); every receiver puts the frames of all its streams in place
(:class:`Assembly`) and confirms each new chunk up the stream it came by (6 bytes: its number
and the chunk's), on the stream's own connection, which interior hosts pass on to their
parents.  Besides one report per stream (``digest`` empty), each receiver reports the whole
payload as stream :data:`WHOLE` once it holds every chunk.

Each host reports one event per stream when the stream ends for it:
``{"event": "received", "run", "stream", "bytes", "first_bytes", "digest",
"first", "last", "error", "dropped"}`` at a receiver (first and last byte on
the host's wall clock, the bytes of its first read, the BLAKE2b digest of
what arrived) and ``{"event":
"sent", ...}`` at the root; ``dropped`` names the children it stopped
sending to and why (the connection broke, or a child took no data for
``stall`` seconds: it died or stopped).  Interior hosts forward each chunk
to their children as it arrives, so the stream is pipelined down the tree.

Pacing (``pacing``): ``kernel`` sets ``SO_MAX_PACING_RATE`` on each child's
connection, and the kernel's TCP pacing (fq, or TCP's own since Linux 4.13)
spaces the packets at the rate: exact to within a percent, no CPU spent,
no bursts.  ``sleep`` is den Burger's sleeping sender: after each chunk the
sending thread sleeps until the bytes sent match the rate (bursts of one
chunk).  A rate of 0 is not paced.

The payload is ``size`` bytes of a pseudo-random block drawn from ``seed``,
repeated (:func:`payload_chunks`); the coordinator computes the digest each
receiver must report (:func:`payload_digest`) without moving a byte.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import queue
import socket
import struct
import sys
import threading
import time
from functools import lru_cache
from typing import Any, Callable, Iterator

import numpy as np

from measure.agent import Send, check_address, event_sender, hello_event, host_facts, serve
from measure.fileset import Staging, source_bytes
from measure.robber import SwarmNode

__all__ = ["PACINGS", "BLOCK", "CHUNK", "WHOLE", "payload_chunks", "payload_digest", "Dealer",
           "Assembly", "Multicaster", "add_arguments", "run"]

PACINGS = ("kernel", "sleep")
"""How a sender paces a stream: the kernel's TCP pacing, or a sleeping sender."""

BLOCK = 1 << 20       # bytes of the pseudo-random block the payload repeats
CHUNK = 1 << 16       # bytes read, hashed and forwarded at a time
QUEUE_CHUNKS = 64     # chunks waiting for one child (4 MiB): a child falls this far behind
SO_MAX_PACING_RATE = getattr(socket, "SO_MAX_PACING_RATE", 47)   # Linux
HEADER_LIMIT = 1024   # bytes of a connection's header line
HEADER_TIMEOUT = 5.0  # s for a connecting parent to send its header
CONNECT_TIMEOUT = 10.0
FRAME = struct.Struct("!QI")   # a dealt chunk's header: its offset and length
ACK = struct.Struct("!HI")     # a receiver's word to the root that it holds a chunk
WHOLE = -1
"""The stream number of a receiver's report on the whole payload of a dealt multicast."""
LATE = 2.0
"""The end game of a dealt multicast (:class:`Dealer`) sends a chunk again on an idle tree
when its own tree is expected to take more than this many times as long as the idle tree
takes for one chunk, or it has been on its way this many times as long as its tree's chunks
take."""


@lru_cache(maxsize=4)
def _block(seed: int) -> bytes:
    block = np.random.default_rng(seed).bytes(BLOCK)
    return block + block   # any CHUNK-long slice from an offset < BLOCK is one slice


def payload_chunks(seed: int, offset: int, length: int, chunk: int = CHUNK
                   ) -> Iterator[memoryview]:
    """The payload's bytes ``offset`` to ``offset + length``, ``chunk`` bytes at a time.

    Examples
    --------
    >>> whole = b"".join(payload_chunks(1, 0, 3 * BLOCK))
    >>> part = b"".join(payload_chunks(1, BLOCK - 5, 10, chunk=4))
    >>> part == whole[BLOCK - 5:BLOCK + 5], len(whole)
    (True, 3145728)
    """
    data = memoryview(_block(seed))
    chunk = min(chunk, BLOCK)
    end = offset + length
    while offset < end:
        n = min(chunk, end - offset)
        at = offset % BLOCK
        yield data[at:at + n]
        offset += n


def payload_digest(seed: int, offset: int, length: int) -> str:
    """The BLAKE2b digest (hex) a receiver of those bytes must report.

    Examples
    --------
    >>> payload_digest(1, 0, 10) == hashlib.blake2b(bytes(next(payload_chunks(1, 0, 10)))).hexdigest()
    True
    """
    digest = hashlib.blake2b()
    for piece in payload_chunks(seed, offset, length):
        digest.update(piece)
    return digest.hexdigest()


class Dealer:
    """The root's chunks of a dealt multicast, handed to its trees as the receivers take them.

    Each tree may have its ``window`` of chunks on their way (sent on it, not yet held by
    every receiver); a tree whose receivers confirm slowly gets fewer chunks, so no tree sets
    the time by a share fixed in advance.  Once every chunk is dealt, a tree with nothing on
    its way takes again one chunk still on its way on another, if it would bring it much
    sooner: the chunk's tree is expected to have it confirmed more than :data:`LATE` times
    later than this tree takes for one chunk, or it is overdue (on its way :data:`LATE`
    times as long as its tree's chunks take).  A tree's time is the smoothed time from a
    chunk's sending to its last confirmation, with its window on the way; for one chunk on
    its own, that time over its window.  (With the whole time, a tree held back to a fifth
    of its share kept two seconds of chunks the others could have brought: regions-3 from
    n1a, 11.1 s where 8.9 sufficed.)  Among those chunks it takes the one expected last, and
    no chunk travels more than twice: the end game, in which a receiver keeps the first copy.

    Parameters
    ----------
    size, chunk : int
        Payload bytes, and bytes per chunk.
    window : dict
        Tree -> chunks it may have on their way (at least 1).
    receivers : int
        Hosts that must hold a chunk before it is done (numbered from 0).
    stall : float
        Seconds a receiver may confirm nothing while it lacks a chunk sent that long ago;
        then it is taken for dead (its chunks are done without it), and when every receiver
        left is, :meth:`take` gives up.

    Examples
    --------
    >>> d = Dealer(size=40, chunk=16, window={0: 2, 1: 2}, receivers=1, stall=1)
    >>> d.take(0), d.take(0), d.take(1)   # tree 0 fills its window, tree 1 takes the rest
    (0, 1, 2)
    >>> d.confirm(0, 2)                   # receiver 0 holds chunk 2 at once: 0 and 1 are late
    >>> d.take(1)                         # the end game: the chunk tree 0 would bring last
    1
    >>> for c in (0, 1):
    ...     d.confirm(0, c)
    >>> d.take(0) is None, d.done
    (True, True)
    """

    def __init__(self, size: int, chunk: int, window: dict[int, int], receivers: int,
                 stall: float) -> None:
        self.size, self.chunk = size, chunk
        self.window = {int(k): max(1, int(w)) for k, w in window.items()}
        self.receivers, self.stall = receivers, stall
        self.count = -(-size // chunk)
        self.held = np.zeros((self.count, receivers), dtype=bool)
        self.finished = np.zeros(self.count, dtype=bool)   # held by every live receiver
        self.live = np.ones(receivers, dtype=bool)
        self.seen = np.zeros(receivers)                    # each one's last confirmation
        self.dealt = 0
        self.sent_on: list[set[int]] = [set() for _ in range(self.count)]
        self.sent_at = np.zeros(self.count)              # when each chunk was first sent
        self.first_on = np.full(self.count, -1)          # the tree it was first sent on
        self.pace: dict[int, float] = {}                 # tree -> s a chunk takes (smoothed)
        self.on_way: dict[int, list[int]] = {}
        self.left = self.count
        self.cond = threading.Condition()

    @property
    def done(self) -> bool:
        """Whether every receiver holds every chunk."""
        return self.left == 0

    def take(self, tree: int) -> int | None:
        """The next chunk for ``tree`` once it has room; None when every chunk is done (or
        nothing was confirmed for ``stall`` seconds)."""
        with self.cond:
            if self.dealt == 0:   # the stall counts from the first chunk
                self.seen[:] = time.monotonic()
            while True:
                now = time.monotonic()
                if self.left == 0:
                    return None
                gone = self.live & (now - self.seen > self.stall)
                if gone.any():   # silent: gone if it lacks a chunk sent a stall ago
                    old = (self.first_on >= 0) & (now - self.sent_at > self.stall)
                    gone &= ~self.held[old].all(axis=0)
                if gone.any():
                    if gone.sum() == self.live.sum():   # no receiver confirms any more
                        return None
                    self.live &= ~gone   # dead or stopped
                    self.finished = self.held[:, self.live].all(axis=1)
                    self.left = self.count - int(self.finished.sum())
                    continue
                mine = self.on_way.setdefault(tree, [])
                mine[:] = [c for c in mine if not self.finished[c]]
                if len(mine) < self.window.get(tree, 1):
                    c = self._next(tree, mine)
                    if c is not None:
                        mine.append(c)
                        if not self.sent_on[c]:
                            self.sent_at[c], self.first_on[c] = time.monotonic(), tree
                        self.sent_on[c].add(tree)
                        return c
                self.cond.wait(0.2)

    def _next(self, tree: int, mine: list[int]) -> int | None:
        if self.dealt < self.count:
            self.dealt += 1
            return self.dealt - 1
        if mine:   # the end game is for trees with nothing on their way
            return None
        now = time.monotonic()
        usual = float(np.median(list(self.pace.values()))) if self.pace else 0.0
        mine_pace = self.pace.get(tree, usual) / self.window.get(tree, 1)   # one chunk
        best, key = None, None
        for c in np.flatnonzero(~self.finished).tolist():
            if len(self.sent_on[c]) > 1 or tree in self.sent_on[c]:   # twice at most
                continue
            pace = self.pace.get(int(self.first_on[c]), usual)
            waited = now - self.sent_at[c]
            if pace - waited > LATE * mine_pace or waited > LATE * pace:
                if key is None or waited - pace < key:
                    best, key = c, waited - pace
        return best

    def confirm(self, receiver: int, c: int) -> None:
        """Receiver number ``receiver`` holds chunk ``c``."""
        with self.cond:
            if not (0 <= c < self.count and 0 <= receiver < self.receivers):
                return
            self.held[c, receiver] = True
            now = self.seen[receiver] = time.monotonic()
            if not self.finished[c] and self.held[c, self.live].all():
                self.finished[c] = True
                self.left -= 1
                tree, took = int(self.first_on[c]), now - self.sent_at[c]
                if tree >= 0:
                    self.pace[tree] = took if tree not in self.pace else (
                        0.8 * self.pace[tree] + 0.2 * took)
                self.cond.notify_all()

    def frame(self, c: int, chunks: Callable[[int, int], Iterator[memoryview]]) -> bytes:
        """Chunk ``c`` as it travels: its header, then its bytes (from ``chunks(offset,
        length)``)."""
        offset = c * self.chunk
        length = min(self.chunk, self.size - offset)
        return FRAME.pack(offset, length) + b"".join(chunks(offset, length))


class Assembly:
    """A receiver's payload of a dealt multicast, put together from every stream's frames.

    Parameters
    ----------
    size, chunk : int
    buffer : bytearray or memoryview
        Where the payload goes (a real file's staging buffer, or memory).

    Examples
    --------
    >>> told = []
    >>> a = Assembly(20, 16, bytearray(20))
    >>> frames = FRAME.pack(16, 4) + b"wxyz" + FRAME.pack(0, 16) + bytes(range(16))
    >>> parser = a.parser(told.append)
    >>> parser(frames[:7]), parser(frames[7:])   # a frame's header cut in two
    (0, 20)
    >>> told, a.complete, bytes(a.buffer[16:])
    ([1, 0], True, b'wxyz')
    """

    def __init__(self, size: int, chunk: int, buffer: Any) -> None:
        self.size, self.chunk, self.buffer = size, chunk, buffer
        self.held = bytearray(-(-size // chunk))
        self.count = 0
        self.lock = threading.Lock()
        self.first: float | None = None
        self.last: float | None = None

    @property
    def complete(self) -> bool:
        """Whether every chunk is held."""
        return self.count == len(self.held)

    def parser(self, confirm: Callable[[int], None]) -> Callable[[bytes | memoryview], int]:
        """A reader of one stream's bytes: fed them as they come, it puts each whole frame in
        place (``confirm(index)`` for a chunk not held before) and returns the payload bytes
        completed."""
        pending = bytearray()

        def feed(data: bytes | memoryview) -> int:
            pending.extend(data)
            got = 0
            while len(pending) >= FRAME.size:
                offset, length = FRAME.unpack_from(pending)
                if len(pending) < FRAME.size + length:
                    break
                if self.put(offset, pending[FRAME.size:FRAME.size + length]):
                    confirm(offset // self.chunk)
                del pending[:FRAME.size + length]
                got += length
            return got
        return feed

    def put(self, offset: int, data: bytes | bytearray | memoryview) -> bool:
        """Put one chunk in place; False for a copy of a chunk already held (dropped)."""
        c = offset // self.chunk
        if (offset % self.chunk or not 0 <= c < len(self.held)
                or len(data) != min(self.chunk, self.size - offset)):
            raise OSError(f"a frame of {len(data)} bytes at {offset} is no chunk of the payload")
        with self.lock:
            now = time.time()
            self.first = self.first or now
            if self.held[c]:
                return False
            self.buffer[offset:offset + len(data)] = data
            self.held[c] = 1
            self.count += 1
            self.last = now
        return True


class _Child(threading.Thread):
    """One child's connection, fed from a bounded queue by a thread of its own.

    Each child drains at its own pace, so a sender with several children
    does not hand them their chunks in turn, each waiting for the one
    before (a paced child would hold the others back by a chunk's time).
    """

    def __init__(self, host: str, sock: socket.socket, stall: float) -> None:
        super().__init__(daemon=True)
        self.host, self.sock, self.stall = host, sock, stall
        self.queue: queue.Queue[bytes | memoryview | None] = queue.Queue(maxsize=QUEUE_CHUNKS)
        self.sent = 0
        self.error = ""
        sock.settimeout(stall)
        self.start()

    def run(self) -> None:
        while True:
            data = self.queue.get()
            if data is None:
                break
            try:
                self.sock.sendall(data)
                self.sent += len(data)
            except socket.timeout:
                self.error = f"took no data for {self.stall:g} s (stopped or stuck)"
                break
            except OSError as exc:
                self.error = self.error or f"connection broke: {exc.strerror or exc}"
                break
        try:
            self.sock.shutdown(socket.SHUT_WR)   # the child sees the end of its input
        except OSError:
            pass
        self.sock.close()

    def put(self, data: bytes | memoryview | None) -> bool:
        """Queue ``data`` (None: the end); False when the child is gone or stopped.

        A full queue waits as long as the child takes data; a child that
        took none for ``stall`` seconds is dropped (a slow child on a
        congested link is not).
        """
        sent, since = self.sent, time.monotonic()
        while not self.error and self.is_alive():
            try:
                self.queue.put(data, timeout=min(1.0, self.stall))
                return True
            except queue.Full:
                if self.sent != sent:
                    sent, since = self.sent, time.monotonic()
                elif time.monotonic() - since > self.stall:
                    self.error = f"took no data for {self.stall:g} s (stopped or stuck)"
                    try:
                        self.sock.shutdown(socket.SHUT_RDWR)   # ends a sendall blocked on it
                    except OSError:
                        pass
        return False


class _Children:
    """The connections a host sends one stream on, paced, each dropped when it breaks."""

    def __init__(self, sockets: dict[str, socket.socket], rate: float, pacing: str,
                 stall: float) -> None:
        self.rate, self.pacing, self.stall = rate, pacing, stall
        for sock in sockets.values():
            if rate > 0 and pacing == "kernel":
                sock.setsockopt(socket.SOL_SOCKET, SO_MAX_PACING_RATE,
                                int(min(rate, 2**32 - 1)))
        self.children = {host: _Child(host, sock, stall) for host, sock in sockets.items()}
        self.start: float | None = None
        self.count = 0

    @property
    def dropped(self) -> dict[str, str]:
        """The children the stream stopped reaching, and why."""
        return {h: c.error for h, c in self.children.items() if c.error}

    @property
    def live(self) -> bool:
        """Whether a child is still reached (or there never was one)."""
        return not self.children or any(not c.error for c in self.children.values())

    def send(self, data: bytes | memoryview) -> None:
        """Queue ``data`` (not changed afterwards) for every child still there; sleep to the
        rate if ``sleep`` pacing."""
        if self.start is None:
            self.start = time.monotonic()
        for child in self.children.values():
            child.put(data)
        self.count += len(data)
        if self.rate > 0 and self.pacing == "sleep":
            ahead = self.start + self.count / self.rate - time.monotonic()
            if ahead > 0:
                time.sleep(ahead)

    def close(self) -> None:
        """End every child's stream once its queue is sent (they see the end of their input)."""
        for child in self.children.values():
            child.put(None)
        for child in self.children.values():
            while child.is_alive() and not child.error:   # drains at the child's pace
                child.join(1.0)
            child.join(self.stall + 5)


class Multicaster:
    """One host's part in multicasts: a listening socket, and the streams of the current run.

    Parameters
    ----------
    address : str
        Where it listens and sends from.
    port : int
        Listening port (0: any).
    send : callable, optional
        Sends an event to the coordinator (set before the first ``prepare``).
    """

    def __init__(self, address: str, port: int, send: Send | None = None) -> None:
        self.address = address
        self.emit: Send = send if send is not None else (lambda event: None)
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind((address, port))
        self.listener.listen(128)
        self.port = self.listener.getsockname()[1]
        self.lock = threading.Lock()
        self.run_id: str | None = None
        self.plan: dict[str, Any] = {}
        self.allow: set[str] = set()
        self.incoming: dict[int, socket.socket] = {}
        self.outgoing: dict[int, _Children] = {}
        self.started: set[int] = set()
        self.open: list[socket.socket] = []
        self.swarm: SwarmNode | None = None
        self.source: Any = None                # the root's payload of real files
        self.staging: Staging | None = None    # where a receiver's real files arrive
        self.dealer: Dealer | None = None      # the root's chunks of a dealt multicast
        self.assembly: Assembly | None = None  # a receiver's payload of a dealt multicast
        self.ack_lock = threading.Lock()       # confirmations sent up to the parents
        self.ended = 0                         # streams that ended here (a dealt run)
        self.me = 0                            # this receiver's number in a dealt run
        self.whole_sent = False
        threading.Thread(target=self._accept, daemon=True).start()

    # ---------------------------------------------------------------- connections
    def _accept(self) -> None:
        while True:
            try:
                conn, (peer, _) = self.listener.accept()
            except OSError:
                return   # closed
            threading.Thread(target=self._greet, args=(conn, peer), daemon=True).start()

    def _greet(self, conn: socket.socket, peer: str) -> None:
        """Read a parent's header; keep the connection when it belongs to the run."""
        with self.lock:
            allowed = peer in self.allow
        if not allowed:
            conn.close()   # only the hosts of the run may send us a stream
            return
        try:
            conn.settimeout(HEADER_TIMEOUT)
            header = b""
            while not header.endswith(b"\n"):
                piece = conn.recv(1)
                if not piece or len(header) > HEADER_LIMIT:
                    raise OSError("no header")
                header += piece
            head = json.loads(header)
            conn.settimeout(None)
            if "peer" in head:   # a peer of a MOB or Robber multicast
                with self.lock:
                    node = self.swarm if str(head["run"]) == self.run_id else None
                if node is None or not node.accept(str(head["peer"]), peer, conn):
                    conn.close()
                return
            run_id, stream = str(head["run"]), int(head["stream"])
        except (OSError, ValueError, KeyError, TypeError):
            conn.close()
            return
        with self.lock:
            wanted = (run_id == self.run_id and stream in self.plan
                      and self.plan[stream]["parent"] is not None
                      and stream not in self.incoming)
            if wanted:
                self.incoming[stream] = conn
                self.open.append(conn)
                # a dealt run's confirmations go up this connection at once, not held by
                # Nagle until the parent acknowledges the last (which a parent waiting for
                # them delays)
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if not wanted:
            conn.close()
            return
        self._relay(run_id, stream, conn)

    # ---------------------------------------------------------------- commands
    def prepare(self, command: dict[str, Any]) -> dict[str, Any]:
        """Take a run's streams, or its swarm; the ``prepared`` event."""
        self.finish()
        streams = {int(s["stream"]): s for s in command.get("streams", [])}
        files = command.get("file")
        if files is not None and "source" in files:
            self.source = source_bytes(files["source"], files["manifest"])
        elif files is not None:
            self.staging = Staging(files["dest"], files["manifest"])
        if "swarm" in command:
            seed, size = int(command["seed"]), int(command["swarm"]["size"])
            held = None
            if self.source is not None:
                data: Any = self.source
            elif self.staging is not None:
                data, held = self.staging.buffer, self.staging.pieces_held()
            elif command["swarm"]["root"] == command["swarm"]["host"]:
                data = b"".join(payload_chunks(seed, 0, size))
            else:
                data = bytearray(size)
            self.swarm = SwarmNode({**command["swarm"], "run": command["run"], "seed": seed},
                                   self.address, data, lambda event: self.emit(event), held)
        stall = float(command.get("stall", 30.0))
        deal = command.get("deal")
        if deal is not None:
            size, chunk = int(deal["size"]), int(deal["chunk"])
            if all(s["parent"] is None for s in streams.values()):
                self.dealer = Dealer(size, chunk, {int(k): int(w) for k, w
                                                   in deal["windows"].items()},
                                     int(deal["receivers"]), stall)
            else:
                buffer = self.staging.buffer if self.staging is not None else bytearray(size)
                self.assembly = Assembly(size, chunk, buffer)
                self.me = int(deal["me"])
        with self.lock:
            self.run_id = str(command["run"])
            self.seed = int(command["seed"])
            self.pacing = str(command.get("pacing", "kernel"))
            self.stall = stall
            self.allow = {str(a) for a in command.get("allow", [])}
            self.plan = streams
        return {"event": "prepared", "run": self.run_id}

    def connect(self) -> dict[str, Any]:
        """Connect to every child of every stream, or to the swarm's chosen peers; the
        ``connected`` event, or an error."""
        if self.swarm is not None:
            self.swarm.connect()
        for k, s in self.plan.items():
            sockets = {}
            for host, address, port in s["children"]:
                try:
                    sock = socket.create_connection((address, int(port)),
                                                    timeout=CONNECT_TIMEOUT,
                                                    source_address=(self.address, 0))
                except OSError as exc:
                    raise OSError(f"stream {k}: cannot connect to {host} ({address}:{port}): "
                                  f"{exc.strerror or exc}") from None
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                sock.sendall(json.dumps({"run": self.run_id, "stream": k}).encode() + b"\n")
                sockets[str(host)] = sock
                self.open.append(sock)
            self.outgoing[k] = _Children(sockets, float(s.get("rate", 0)), self.pacing,
                                         self.stall)
            if self.dealer is not None or self.assembly is not None:
                for sock in sockets.values():   # the children's confirmations, sent up
                    threading.Thread(target=self._confirmations, args=(k, sock),
                                     daemon=True).start()
        return {"event": "connected", "run": self.run_id}

    def go(self) -> None:
        """At the root: send every stream, each from a thread of its own; in a swarm, start
        stealing."""
        if self.swarm is not None:
            self.swarm.start()
        for k, s in self.plan.items():
            if s["parent"] is None and k not in self.started:
                self.started.add(k)
                threading.Thread(target=self._send_root, args=(self.run_id, k, s),
                                 daemon=True).start()

    def finish(self) -> None:
        """Close every connection of the current run and forget it."""
        with self.lock:
            swarm, self.swarm = self.swarm, None
        if swarm is not None:
            swarm.close()
        if self.staging is not None:   # not verified: kept for a resume
            self.staging.close()
        self.source, self.staging = None, None
        self.dealer, self.assembly = None, None
        self.ended, self.whole_sent = 0, False
        with self.lock:
            self.run_id, self.plan, self.allow = None, {}, set()
            sockets, self.open = self.open, []
            self.incoming, self.outgoing, self.started = {}, {}, set()
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def close(self) -> None:
        """Stop listening and close everything."""
        self.finish()
        self.listener.close()

    # ---------------------------------------------------------------- data
    def _send_root(self, run_id: str, k: int, s: dict[str, Any]) -> None:
        children = self.outgoing.get(k)
        start = time.time()
        count, error = 0, ""
        dealer = self.dealer
        try:
            if children is None:
                raise OSError("not connected")
            if dealer is not None:
                while children.live:
                    c = dealer.take(k)
                    if c is None:
                        break
                    frame = dealer.frame(c, self._chunks)
                    children.send(frame)
                    count += len(frame) - FRAME.size
                if not dealer.done and children.live:
                    error = (f"the receivers confirmed no chunk for {dealer.stall:g} s: "
                             f"{dealer.left} of {dealer.count} chunks not everywhere")
            else:
                for piece in self._chunks(int(s["offset"]), int(s["length"])):
                    children.send(piece)
                    count += len(piece)
                    if not children.live:
                        break
        except OSError as exc:
            error = str(exc)
        finally:
            if children is not None:
                children.close()
        self.emit({"event": "sent", "run": run_id, "stream": k, "bytes": count,
                   "start": start, "end": time.time(), "error": error,
                   "dropped": children.dropped if children is not None else {}})

    def _chunks(self, offset: int, length: int) -> Iterator[memoryview]:
        """The root's bytes of one stream: real files', or the synthetic payload's."""
        if self.source is None:
            yield from payload_chunks(self.seed, offset, length)
            return
        view = memoryview(self.source)
        for at in range(offset, offset + length, CHUNK):
            yield view[at:min(at + CHUNK, offset + length)]

    def verify(self) -> dict[str, Any]:
        """Put a receiver's real files in place, each verified; the ``verified`` event."""
        if self.staging is None:
            return {"event": "verified", "run": self.run_id, "ok": False, "files": [],
                    "error": "no files were staged here"}
        with self.lock:
            swarm, self.swarm = self.swarm, None
        if swarm is not None:   # it serves no more pieces from the staging file
            swarm.close()
        staging, self.staging = self.staging, None
        return {"event": "verified", "run": self.run_id, **staging.finish()}

    def _relay(self, run_id: str, k: int, conn: socket.socket) -> None:
        """Receive one stream, hash it and forward each chunk to the children as it comes."""
        with self.lock:
            offset = int(self.plan[k]["offset"]) if k in self.plan else 0
            staging = self.staging
            assembly = self.assembly
        me = self.me
        parse = (assembly.parser(lambda c: self._up(k, ACK.pack(me, c)))
                 if assembly is not None else None)
        digest = hashlib.blake2b()
        buffer = bytearray(CHUNK)
        view = memoryview(buffer)
        first = last = None
        count, first_bytes, error = 0, 0, ""
        children = None
        try:
            while True:
                n = conn.recv_into(buffer)
                if n == 0:
                    break
                last = time.time()
                if first is None:
                    first, first_bytes = last, n
                    children = self.outgoing.get(k)
                data = bytes(view[:n])
                if children is not None:   # forwarded first: the frames are read after
                    children.send(data)
                if parse is not None:
                    count += parse(data)
                    continue
                digest.update(data)
                if staging is not None:
                    if offset + count + n > len(staging.buffer):
                        raise OSError("the stream is longer than the files")
                    staging.buffer[offset + count:offset + count + n] = data
                count += n
        except OSError as exc:
            error = (f"connection from the parent broke: {exc.strerror or exc}"
                     if exc.errno is not None or parse is None else str(exc))
        except ValueError:   # the run finished under it: its staging file is closed
            error = "stopped by finish"
        finally:
            children = children or self.outgoing.get(k)
            if children is not None:
                children.close()
        self.emit({"event": "received", "run": run_id, "stream": k, "bytes": count,
                   "first_bytes": first_bytes,
                   "digest": digest.hexdigest() if parse is None else "", "first": first,
                   "last": last, "error": error,
                   "dropped": children.dropped if children is not None else {}})
        if assembly is not None:
            with self.ack_lock:
                self.ended += 1
                ended = self.ended == len(self.plan)
            if ended:   # every stream ended here: the whole payload's report, if not sent
                self._whole(run_id, assembly)

    def _up(self, k: int, data: bytes) -> None:
        """Send confirmations up stream ``k`` to this host's parent (on the stream's own
        connection, which every tree has however the network filters; the root counts
        them); report the whole payload once every chunk is here."""
        with self.ack_lock:
            conn, run_id = self.incoming.get(k), self.run_id
            if conn is not None:
                try:
                    conn.sendall(data)
                except OSError:
                    pass   # the parent is gone: the stream ends and says so
        assembly = self.assembly
        if assembly is not None and assembly.complete and run_id is not None:
            self._whole(run_id, assembly)

    def _whole(self, run_id: str, assembly: Assembly) -> None:
        """The receiver's report on a dealt multicast's whole payload (:data:`WHOLE`), once."""
        with self.ack_lock:
            if self.whole_sent:
                return
            self.whole_sent = True
        held = sum(assembly.held)
        self.emit({"event": "received", "run": run_id, "stream": WHOLE,
                   "bytes": assembly.size if assembly.complete else held * assembly.chunk,
                   "digest": hashlib.blake2b(assembly.buffer).hexdigest()
                   if assembly.complete else "", "first": assembly.first, "last": assembly.last,
                   "error": "" if assembly.complete else
                   f"{held} of {len(assembly.held)} chunks arrived", "dropped": {}})

    def _confirmations(self, k: int, sock: socket.socket) -> None:
        """Read a child's confirmations of stream ``k`` until it closes the connection: at the
        root, count them; elsewhere, send them up (:meth:`_up`)."""
        dealer, pending = self.dealer, b""
        while True:
            try:
                data = sock.recv(4096)
            except socket.timeout:   # the socket's timeout is the sender's stall
                continue
            except OSError:
                return
            if not data:
                return
            pending += data
            whole = len(pending) - len(pending) % ACK.size
            if dealer is not None:
                for r, c in ACK.iter_unpack(pending[:whole]):
                    dealer.confirm(r, c)
            elif whole:
                self._up(k, pending[:whole])
            pending = pending[whole:]


def add_arguments(parser: argparse._ActionsContainer) -> None:
    """The options of ``python -m measure.agent --role multicast`` (none beyond the common ones).

    Examples
    --------
    >>> parser = argparse.ArgumentParser()
    >>> add_arguments(parser)
    >>> vars(parser.parse_args([]))
    {}
    """


def run(args: argparse.Namespace) -> int:
    """The ``multicast`` role of :func:`measure.agent.main`: serve multicasts; the exit status.

    Examples
    --------
    >>> import contextlib, io
    >>> args = argparse.Namespace(address="203.0.113.77", port=0, peer_id=0)
    >>> out = io.StringIO()
    >>> with contextlib.redirect_stdout(out):
    ...     code = run(args)
    >>> code, json.loads(out.getvalue())["message"]
    (1, 'address 203.0.113.77 is not on this host')
    """
    why = check_address(args.address, args.port)
    if why:
        event_sender(sys.stdout)({"event": "error", "message": why, **host_facts()})
        return 1
    agent = Multicaster(args.address, args.port)

    def handle(command: dict[str, Any], reply: Send) -> bool:
        agent.emit = reply   # the streams' threads report through the protocol's sender
        kind = command.get("cmd")
        if kind == "prepare":
            reply(agent.prepare(command))
        elif kind == "connect":
            if str(command.get("run")) != agent.run_id:
                raise RuntimeError(f"run {command.get('run')!r} is not prepared")
            reply(agent.connect())
        elif kind == "go":
            agent.go()
        elif kind == "verify":
            reply(agent.verify())
        elif kind == "finish":
            agent.finish()
        else:
            return False
        return True

    try:
        serve(hello_event("multicast", args.address, agent.port, args.peer_id,
                          pacings=list(PACINGS)), handle)
    finally:
        agent.close()
    return 0
