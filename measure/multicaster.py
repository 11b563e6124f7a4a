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
import sys
import threading
import time
from functools import lru_cache
from typing import Any, Iterator

import numpy as np

from measure.agent import Send, check_address, event_sender, hello_event, host_facts, serve
from measure.fileset import Staging, source_bytes
from measure.robber import SwarmNode

__all__ = ["PACINGS", "BLOCK", "CHUNK", "payload_chunks", "payload_digest", "Multicaster",
           "add_arguments", "run"]

PACINGS = ("kernel", "sleep")
"""How a sender paces a stream: the kernel's TCP pacing, or a sleeping sender."""

BLOCK = 1 << 20       # bytes of the pseudo-random block the payload repeats
CHUNK = 1 << 16       # bytes read, hashed and forwarded at a time
QUEUE_CHUNKS = 64     # chunks waiting for one child (4 MiB): a child falls this far behind
SO_MAX_PACING_RATE = getattr(socket, "SO_MAX_PACING_RATE", 47)   # Linux
HEADER_LIMIT = 1024   # bytes of a connection's header line
HEADER_TIMEOUT = 5.0  # s for a connecting parent to send its header
CONNECT_TIMEOUT = 10.0


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
        with self.lock:
            self.run_id = str(command["run"])
            self.seed = int(command["seed"])
            self.pacing = str(command.get("pacing", "kernel"))
            self.stall = float(command.get("stall", 30.0))
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
        try:
            if children is None:
                raise OSError("not connected")
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
                digest.update(view[:n])
                if staging is not None:
                    if offset + count + n > len(staging.buffer):
                        raise OSError("the stream is longer than the files")
                    staging.buffer[offset + count:offset + count + n] = view[:n]
                count += n
                if children is not None:
                    children.send(bytes(view[:n]))
        except OSError as exc:
            error = f"connection from the parent broke: {exc.strerror or exc}"
        except ValueError:   # the run finished under it: its staging file is closed
            error = "stopped by finish"
        finally:
            children = children or self.outgoing.get(k)
            if children is not None:
                children.close()
        self.emit({"event": "received", "run": run_id, "stream": k, "bytes": count,
                   "first_bytes": first_bytes, "digest": digest.hexdigest(), "first": first,
                   "last": last, "error": error,
                   "dropped": children.dropped if children is not None else {}})


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
