"""One host's part in a MOB or Robber multicast: pieces stolen from peers, shared in the cluster.

The multicast agent (:mod:`measure.multicaster`) holds a :class:`SwarmNode`
while a MOB or Robber multicast runs (the plan: :mod:`tomography.planning.swarms`).
The node opens connections to the peers the plan gives it, accepts those
of the peers that chose it, and runs the thesis's phase 3 (den Burger
2009, ch. 4.3) over them, all decisions in one thread:

* it tells every peer what it *desires* (from a host of its own cluster
  every piece it lacks; from a host of another cluster only the pieces of
  its *work*, initially its share of Eq 4.7) and is answered with a
  *bitfield* of what the peer has of it;
* it *requests* pieces the peer has and it desires, at random; a request
  is always honoured with the *piece*; a requested piece leaves the node's
  work.  The requests in flight to a peer are what it delivers in
  :data:`QUEUE_SECONDS` at its measured rate (1 to :data:`MOST_OUTSTANDING`;
  :data:`OUTSTANDING` before its first piece), so a slow peer is not handed
  pieces a fast one would bring sooner (the thesis's fixed number of
  outstanding requests, sized as BitTorrent clients size their queues);
* once every piece is had or requested, a piece that has waited on one peer
  longer than another would take to bring it (at least
  :data:`ENDGAME_WAIT`) is asked of that other peer too, once: BitTorrent's
  *end game*, which the thesis's protocol lacks (without it the last pieces
  wait on the slowest link; the second copy to arrive is dropped, and
  counted in the bytes received);
* on each new piece it sends *have* to every local peer, and to a foreign
  peer only when the piece is in that peer's desire, so each piece crosses
  into a cluster once;
* Robber only: a node whose work is all requested while pieces are still
  missing is *unemployed*: it sends *steal* to a random local peer of its
  *labor force*, which hands over the first half of its remaining work
  (*work*); an empty answer takes that peer out of the labor force, a
  non-empty one makes both tell their foreign peers their new desire and
  the thief tell its local peers *found-work* (they take it back into
  their labor force).

A peer the network refuses or does not answer (a firewall between the two) is
left out, and the pieces come from the others.  A node with every piece
keeps serving its peers until ``finish``.  A peer
whose connection breaks takes its pending requests with it: they go back
to the node's work (foreign; its foreign peers are told its new desire,
its mates that it has work) or its wants (local).  A cluster mate that
dies takes its work with it: each surviving mate connected to it adds the
dead mate's share, less what it or a mate it knows has, to its own work;
once such a node has no work and no one to steal from, it takes what no
mate it knows has, so Robber's stolen work is not lost either (some
pieces may then enter the cluster twice).  A peer that breaks the
protocol (a bit set of the wrong length, a request for a piece this node
does not have) is dropped.

Wire format between peers: after the greeting line (``{"run", "peer"}``),
messages of a 9-byte header (type, piece index, payload length; network
order) and the payload: a piece's bytes, or a bit set of the pieces
(numpy ``packbits``) for *bitfield*, *desire* and *work*.
"""

from __future__ import annotations

import errno
import hashlib
import json
import math
import queue
import random
import socket
import struct
import threading
import time
from typing import Any, Callable

import numpy as np

__all__ = ["OUTSTANDING", "MOST_OUTSTANDING", "QUEUE_SECONDS", "SwarmNode"]

OUTSTANDING = 4         # requests in flight to a peer before its rate is known
MOST_OUTSTANDING = 16
QUEUE_SECONDS = 1.0     # a peer's requests in flight: what it delivers in this time
RATE_WEIGHT = 0.3       # of the newest piece in a peer's rate (exponential average)
ENDGAME_WAIT = 1.0      # s a piece waits on one peer before the end game asks another
TICK = 0.25             # s between the decision thread's looks at late pieces
CONNECT_TIMEOUT = 10.0
REFUSED = (errno.EHOSTUNREACH, errno.ENETUNREACH)
"""A connection's errors that say the network refuses the pair (a firewall between); one
not answered within :data:`CONNECT_TIMEOUT` (a firewall that drops it) is left out too."""
HEADER = struct.Struct("!BII")
HAVE, BITFIELD, DESIRE, REQUEST, PIECE, STEAL, WORK, FOUND_WORK = range(8)
SETS = (BITFIELD, DESIRE, WORK)


class _Link:
    """One peer's connection: a reader thread feeding the node, a writer thread draining a queue."""

    def __init__(self, node: "SwarmNode", host: str, sock: socket.socket, local: bool) -> None:
        self.node, self.host, self.sock, self.local = node, host, sock, local
        self.outgoing: queue.Queue[tuple[int, int, Any] | None] = queue.Queue()
        self.possess = np.zeros(node.pieces, dtype=bool)   # what the peer has, as far as we know
        self.desire = np.zeros(node.pieces, dtype=bool)    # what it wants from us
        self.outstanding = 0
        self.requested: dict[int, float] = {}   # piece -> when requested
        self.last_piece: float | None = None
        self.rate: float | None = None          # bytes/s it delivers, once measured
        self.closed = False
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.settimeout(None)
        threading.Thread(target=self._write, daemon=True).start()
        threading.Thread(target=self._read, daemon=True).start()

    def send(self, kind: int, index: int = 0, payload: Any = b"") -> None:
        if not self.closed:
            self.outgoing.put((kind, index, payload))

    def _write(self) -> None:
        node = self.node
        try:
            while True:
                item = self.outgoing.get()
                if item is None:
                    break
                kind, index, payload = item
                if kind == PIECE:
                    payload = node.piece_view(index)
                self.sock.sendall(HEADER.pack(kind, index, len(payload)))
                if len(payload):
                    self.sock.sendall(payload)
                del item, payload   # no view of the node's data outlives its sending
        except (OSError, ValueError):   # broken, or the payload's mapping closed under it
            pass
        self.close()

    def _recv_exactly(self, view: memoryview) -> None:
        while len(view):
            n = self.sock.recv_into(view)
            if n == 0:
                raise ConnectionError("closed")
            view = view[n:]

    def _read(self) -> None:
        node = self.node
        header = bytearray(HEADER.size)
        try:
            while True:
                self._recv_exactly(memoryview(header))
                kind, index, length = HEADER.unpack(header)
                if kind == PIECE:
                    if index not in self.requested or length != node.length(index):
                        raise ConnectionError(f"piece {index} was not requested")
                    self._recv_exactly(node.piece_view(index))
                    node.post(("piece", self, index))
                    continue
                if length > node.pieces // 8 + 1:
                    raise ConnectionError(f"message of {length} bytes")
                payload = bytearray(length)
                self._recv_exactly(memoryview(payload))
                node.post(("message", self, kind, index, bytes(payload)))
        except (OSError, ConnectionError, ValueError):
            pass
        node.post(("closed", self))

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.outgoing.put(None)
            try:
                self.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self.sock.close()


class SwarmNode:
    """One host in one MOB or Robber multicast (the ``swarm`` of a ``prepare`` command).

    Parameters
    ----------
    plan : dict
        ``run``, ``method`` (mob or robber), ``host``, ``root``, ``size``,
        ``piece``, ``seed``, ``share`` (``[first, stop)``), ``peers``
        (``[host, address, port, local, connect]`` each).
    address : str
        The address it connects from.
    data : writable buffer
        ``size`` bytes: the payload at the root, where the pieces go elsewhere
        (memory, or a mapped staging file).
    held : numpy bool array, optional
        Pieces ``data`` holds already (a resumed receiver's).
    emit : callable
        Sends an event to the coordinator.
    """

    def __init__(self, plan: dict[str, Any], address: str, data: Any,
                 emit: Callable[[dict[str, Any]], None], held: np.ndarray | None = None
                 ) -> None:
        self.run_id, self.host = str(plan["run"]), str(plan["host"])
        self.robber = plan["method"] == "robber"
        self.size, self.piece = int(plan["size"]), int(plan["piece"])
        self.pieces = -(-self.size // self.piece)
        self.address, self.emit = address, emit
        self.peers = {str(h): (str(a), int(p), bool(local), bool(connect))
                      for h, a, p, local, connect, *_ in plan["peers"]}
        self.shares = {str(h): (int(share[0]), int(share[1]))
                       for h, _, _, _, _, *share in plan["peers"] if share}
        self.bereaved = False   # a cluster mate died during the multicast
        self.rng = random.Random(f"{plan['seed']}/{self.host}")
        self.data = data
        self.have = np.zeros(self.pieces, dtype=bool)
        self.pending = np.zeros(self.pieces, dtype=bool)       # requested, not arrived
        self.asked = np.zeros(self.pieces, dtype=np.int8)      # requests in flight for each
        self.asked_at = np.zeros(self.pieces)                  # when first requested
        self.work = np.zeros(self.pieces, dtype=bool)
        self.root = self.host == plan["root"]
        if self.root:
            self.have[:] = True
        else:
            first, stop = plan["share"]
            self.work[first:stop] = True
            if held is not None:
                self.have |= held
                self.work &= ~held
        self.links: dict[str, _Link] = {}
        self.labor: set[str] = set()
        self.received: dict[str, int] = {}   # bytes of pieces from each peer
        self.stealing: str | None = None
        self.events: queue.Queue[tuple[Any, ...] | None] = queue.Queue()
        self.started = False
        self.first: float | None = None
        self.last: float | None = None
        self.done = bool(self.have.all())
        self.loop = threading.Thread(target=self._loop, daemon=True)
        self.loop.start()

    # ------------------------------------------------------------- pieces
    def length(self, index: int) -> int:
        """Bytes of piece ``index``."""
        return min(self.piece, self.size - index * self.piece)

    def piece_view(self, index: int) -> memoryview:
        """Piece ``index`` in the node's copy of the payload."""
        at = index * self.piece
        return memoryview(self.data)[at:at + self.length(index)]

    # ------------------------------------------------------------- connections
    def connect(self) -> None:
        """Open a connection to every peer the plan has this host choose; leave out a peer
        the network refuses (:data:`REFUSED`) or does not answer, as a swarm leaves out a
        peer it cannot reach: the pieces come from the others."""
        for host, (address, port, local, chosen) in self.peers.items():
            if not chosen:
                continue
            try:
                sock = socket.create_connection((address, port), timeout=CONNECT_TIMEOUT,
                                                source_address=(self.address, 0))
                sock.sendall(json.dumps({"run": self.run_id, "peer": self.host}).encode()
                             + b"\n")
            except OSError as exc:
                if exc.errno in REFUSED or isinstance(exc, TimeoutError):
                    continue
                raise OSError(f"cannot connect to peer {host} ({address}:{port}): "
                              f"{exc.strerror or exc}") from None
            self.post(("open", _Link(self, host, sock, local)))

    def accept(self, host: str, address: str, sock: socket.socket) -> bool:
        """Take a peer's incoming connection; False when ``host`` is not a peer from ``address``."""
        known = self.peers.get(host)
        if known is None or known[0] != address:
            return False
        self.post(("open", _Link(self, host, sock, known[2])))
        return True

    def start(self) -> None:
        """Phase 3: tell every peer what this host desires, and steal from then on (a
        receiver that holds every piece already reports at once)."""
        self.post(("start",))

    def post(self, event: tuple[Any, ...]) -> None:
        self.events.put(event)

    def close(self) -> None:
        """End the multicast: every connection closed, the loop stopped.

        A receiver still missing pieces reports what it got."""
        self.events.put(None)
        self.loop.join(5)
        if self.started and not self.done:
            self._report(f"stopped with {int(self.have.sum())} of {self.pieces} pieces")
        for link in list(self.links.values()):
            link.close()

    # ------------------------------------------------------------- the one thread deciding
    def _loop(self) -> None:
        while True:
            try:
                event: tuple[Any, ...] | None = self.events.get(timeout=TICK)
            except queue.Empty:
                event = ("tick",)
            if event is None:
                return
            try:
                self._handle(event)
            except Exception as exc:   # a broken node reports and stops, not hangs the run
                self.done = True
                self.emit({"event": "received", "run": self.run_id, "stream": 0, "bytes": 0,
                           "first_bytes": 0, "digest": "", "first": self.first,
                           "last": self.last, "error": f"the swarm node failed: {exc!r}",
                           "dropped": {}, "sources": dict(self.received)})
                for link in list(self.links.values()):
                    link.close()
                return

    def _handle(self, event: tuple[Any, ...]) -> None:
        """One event of the decision thread."""
        kind, *rest = event
        if kind == "open":
            self._open(rest[0])
        elif kind == "start":
            self.started = True
            for link in self.links.values():
                self._greet(link)
            if self.done and not self.root:
                self._report()
        elif kind == "piece":
            self._piece(rest[0], rest[1])
        elif kind == "message":
            self._message(*rest)
        elif kind == "closed":
            self._closed(rest[0])
        elif kind == "tick":
            self._endgame()

    def _open(self, link: _Link) -> None:
        old = self.links.get(link.host)
        if old is not None:   # the peer reconnected: the old connection is gone
            self._closed(old)
        self.links[link.host] = link
        if self.started:
            self._greet(link)

    def _bits(self, mask: np.ndarray) -> bytes:
        return np.packbits(mask).tobytes()

    def _unbits(self, payload: bytes) -> np.ndarray:
        return np.unpackbits(np.frombuffer(payload, dtype=np.uint8),
                             count=self.pieces).astype(bool)

    def _desire(self, link: _Link) -> np.ndarray:
        return ~self.have if link.local else self.work

    def _greet(self, link: _Link) -> None:
        link.send(DESIRE, 0, self._bits(self._desire(link)))
        if self.robber and link.local and self.work.any():
            link.send(FOUND_WORK)

    def _fill(self, link: _Link) -> None:
        """Request what ``link`` has and this host desires, as many as its rate keeps busy."""
        room = self._room(link)
        if room <= 0:
            return
        wanted = np.flatnonzero(self._desire(link) & link.possess & ~self.pending)
        if not len(wanted):
            return
        for index in self.rng.sample(list(wanted), min(room, len(wanted))):
            self.pending[index] = True
            self.work[index] = False
            self.asked_at[index] = time.monotonic()
            self._request(link, int(index))
        self._steal()

    def _room(self, link: _Link) -> int:
        """Requests ``link`` can take now: what its measured rate delivers in QUEUE_SECONDS."""
        limit = OUTSTANDING if link.rate is None else min(MOST_OUTSTANDING, max(1, math.ceil(
            link.rate * QUEUE_SECONDS / self.piece)))
        return 0 if link.closed or self.done else limit - link.outstanding

    def _request(self, link: _Link, index: int) -> None:
        self.asked[index] += 1
        link.outstanding += 1
        link.requested[index] = time.monotonic()
        link.send(REQUEST, index)

    def _endgame(self) -> None:
        """Once every piece is had or requested, ask a second peer for a piece that has waited
        longer on the first than the second would take to bring it (BitTorrent's end game,
        which the thesis's protocol lacks: without it the last pieces wait on the slowest
        peer).  At most two requests per piece; the copy that comes second is dropped."""
        if self.done or not self.started or not (self.have | self.pending).all():
            return
        now = time.monotonic()
        waiting = self.pending & (self.asked == 1)
        for link in list(self.links.values()):
            room = self._room(link)
            if room <= 0:
                continue
            wait = max(ENDGAME_WAIT, self.piece / link.rate if link.rate else 0.0)
            late = np.flatnonzero(waiting & link.possess & (now - self.asked_at > wait))
            for index in late[np.argsort(self.asked_at[late])]:
                if room <= 0:
                    break
                if int(index) not in link.requested:
                    self._request(link, int(index))
                    waiting[index] = False
                    room -= 1

    def _fill_all(self) -> None:
        for link in list(self.links.values()):
            self._fill(link)

    def _piece(self, link: _Link, index: int) -> None:
        now = time.time()
        self.received[link.host] = self.received.get(link.host, 0) + self.length(index)
        link.outstanding -= 1
        self.asked[index] -= 1
        asked = link.requested.pop(index, None)
        clock = time.monotonic()
        if asked is not None:   # the time this piece took on the link, queued behind others
            took = clock - max(asked, link.last_piece or asked)
            if took > 0:
                sample = self.length(index) / took
                link.rate = sample if link.rate is None else (
                    RATE_WEIGHT * sample + (1 - RATE_WEIGHT) * link.rate)
        link.last_piece = clock
        if self.have[index]:   # the end game's second copy
            self._fill(link)
            return
        self.first = self.first if self.first is not None else now
        self.last = now
        self.pending[index] = False
        self.have[index] = True
        for other in self.links.values():
            if other.local or other.desire[index]:
                other.send(HAVE, index)
        if self.have.all():
            self.done = True   # the digest of the whole is taken beside the serving
            threading.Thread(target=self._report, daemon=True).start()
            return
        self._fill(link)
        self._steal()
        self._endgame()

    def _message(self, link: _Link, kind: int, index: int, payload: bytes) -> None:
        if kind in SETS and len(payload) != -(-self.pieces // 8):
            self._closed(link)   # not this multicast's protocol: the peer is dropped
            return
        if kind == REQUEST and not (0 <= index < self.pieces and self.have[index]):
            self._closed(link)   # a request is always honoured: one that cannot be is wrong
            return
        if kind == HAVE and 0 <= index < self.pieces:
            link.possess[index] = True
            self._fill(link)
        elif kind == BITFIELD:
            link.possess |= self._unbits(payload)
            self._fill(link)
        elif kind == DESIRE:
            link.desire = self._unbits(payload)
            link.send(BITFIELD, 0, self._bits(self.have & link.desire))
        elif kind == REQUEST:
            link.send(PIECE, index)
        elif kind == STEAL:
            self._robbed(link)
        elif kind == WORK:
            self._stolen(link, self._unbits(payload))
        elif kind == FOUND_WORK:
            self.labor.add(link.host)
            self._steal()

    def _closed(self, link: _Link) -> None:
        link.close()
        if self.links.get(link.host) is not link:
            return   # an old connection, replaced: the current one stays as it is
        del self.links[link.host]
        self.labor.discard(link.host)
        if self.stealing == link.host:
            self.stealing = None
        back = np.zeros(self.pieces, dtype=bool)
        for index in link.requested:
            self.asked[index] -= 1
            if self.asked[index] == 0 and not self.have[index]:   # no other request for it
                self.pending[index] = False
                back[index] = not link.local   # from abroad: back to this host's work
        link.requested.clear()
        if link.local and self.started and not self.done:
            # a cluster mate died with its work: its share, less what this host or a mate
            # it knows has or fetches, becomes this host's work too (some pieces may then
            # enter the cluster twice; none is lost)
            self.bereaved = True
            first, stop = self.shares.get(link.host, (0, 0))
            back[first:stop] |= ~(self.have | self.pending | self._mates_hold())[first:stop]
        self._take(back)
        self._fill_all()

    def _mates_hold(self) -> np.ndarray:
        """The pieces a cluster mate this host is connected to is known to have."""
        held = np.zeros(self.pieces, dtype=bool)
        for other in self.links.values():
            if other.local:
                held |= other.possess
        return held

    def _take(self, pieces: np.ndarray) -> None:
        """Add ``pieces`` to this host's work; tell its foreign peers, and its mates that it
        has work again (Robber's labor force)."""
        new = pieces & ~(self.have | self.pending | self.work)
        if not new.any():
            return
        idle = not self.work.any()
        self.work |= new
        self._foreign_desire()
        if idle and self.robber:
            for other in self.links.values():
                if other.local:
                    other.send(FOUND_WORK)

    # ------------------------------------------------------------- Robber's stealing
    def _foreign_desire(self) -> None:
        for link in self.links.values():
            if not link.local:
                link.send(DESIRE, 0, self._bits(self.work))

    def _steal(self) -> None:
        """An unemployed Robber node asks a random local peer of its labor force for work.

        After a cluster mate died, a node with no one left to steal from takes what no mate
        it knows has as its work: the dead mate's stolen work is not lost."""
        if (not self.started or self.done or self.stealing is not None
                or self.work.any() or (self.have | self.pending).all()):
            return
        force = sorted(h for h in self.labor if h in self.links)
        if self.robber and force:
            self.stealing = self.rng.choice(force)
            self.links[self.stealing].send(STEAL)
        elif self.bereaved:
            self._take(~self._mates_hold())
            if self.work.any():
                self._fill_all()

    def _robbed(self, link: _Link) -> None:
        """Hand the first half of the remaining work to a thief."""
        mine = np.flatnonzero(self.work)
        given = np.zeros(self.pieces, dtype=bool)
        given[mine[:-(-len(mine) // 2)]] = True
        self.work &= ~given
        link.send(WORK, 0, self._bits(given))
        if given.any():
            self._foreign_desire()

    def _stolen(self, link: _Link, given: np.ndarray) -> None:
        self.stealing = None
        given &= ~(self.have | self.pending)
        if not given.any():
            self.labor.discard(link.host)
            self._steal()
            return
        self._take(given)   # new desire abroad, found-work to the mates
        self._fill_all()

    # ------------------------------------------------------------- the end
    def _report(self, error: str = "") -> None:
        """The ``received`` event: the bytes this host got, their digest, from whom, when."""
        got = int(sum(self.length(int(i)) for i in np.flatnonzero(self.have)))
        self.emit({"event": "received", "run": self.run_id, "stream": 0, "bytes": got,
                   "first_bytes": 0, "digest": hashlib.blake2b(self.data).hexdigest()
                   if self.done else "", "first": self.first, "last": self.last,
                   "error": error, "dropped": {}, "sources": dict(self.received)})
