"""The agent on each host: one process in one role, driven by a coordinator through JSON lines.

An agent is a process (``python -m measure.agent --role ROLE --address IP``)
that a coordinator (:mod:`measure.coordinator`, :mod:`measure.mesh`) drives
through its standard input and output, one JSON object per line.  Pipes
carry the protocol, so the same agent runs as a local process, inside a
testbed namespace (``ip netns exec``), over SSH or beside an MPI rank
(:mod:`measure.transport`); only the measured traffic crosses the network.

The role says what the agent measures with; each role is a module that
this one imports only once the role is known, so a probe agent never
imports libtorrent:

==============  ==========================  =====================================
role            module                      what it runs
==============  ==========================  =====================================
``bittorrent``  :mod:`measure.peer`         an instrumented libtorrent peer
``probe``       :mod:`measure.prober`       iperf3 and NetPIPE servers and tests
``multicast``   :mod:`measure.multicaster`  the streams of a planned multicast
==============  ==========================  =====================================

A role module has ``add_arguments(parser)``, which adds its own options,
and ``run(args) -> int``, which serves the protocol (with :func:`serve`)
and returns the exit status; a new role is one such module and one entry
of :data:`ROLES`.

Every role speaks this protocol (coordinator -> agent commands, agent ->
coordinator events) and adds its own commands to it:

=====================================  ==========================================
``{"event": "hello", ...}``            sent once the agent is ready
                                       (:func:`hello_event`): ``role``,
                                       ``address``, ``port``, ``peer_id`` (its
                                       number in the run, ``--peer-id``), the
                                       host's facts (:func:`host_facts`:
                                       ``hostname``, ``cpus``, ``pid``, the
                                       ``toolkit`` and ``python`` versions)
                                       and the role's own (the ``libtorrent``
                                       version and ``settings`` of a peer; the
                                       ``tools`` and the ``missing`` ones of a
                                       probe agent).
``{"event": "error", ...}``            instead of ``hello`` when the agent
                                       cannot start (its address is not on the
                                       host, its port is taken): ``message``
                                       and the host's facts; it then exits 1.
``{"cmd": "clock"}``                   answer ``{"event": "clock", "t": s}`` with
                                       the host's wall clock (the coordinator
                                       estimates each host's clock offset).
``{"cmd": "quit"}``                    stop and exit.
=====================================  ==========================================

A command that fails, or that the role does not know, is answered with
``{"event": "error", "message": ...}`` and the agent goes on.  An agent
exits when its standard input closes, so a coordinator, an SSH session or
an MPI rank that goes away takes its agent with it.

The module also holds what every role needs of its host: its facts
(:func:`host_facts`), whether it can listen on its address
(:func:`check_address`), and work directories that the next agent cleans
up when a killed one could not (:func:`work_directory`, :func:`remove_stale`).
"""

from __future__ import annotations

import argparse
import errno
import importlib
import json
import os
import platform
import queue
import shutil
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Protocol, TextIO

from tomography.model import VERSION as TOOLKIT_VERSION

__all__ = ["ROLES", "Role", "Send", "WORK_BASE", "host_facts", "check_address", "work_directory",
           "remove_stale", "hello_event", "event_sender", "read_commands", "serve", "main"]

ROLES: dict[str, str] = {"bittorrent": "measure.peer", "probe": "measure.prober",
                         "multicast": "measure.multicaster"}
"""Each role and the module that runs it (imported only when an agent takes the role)."""

WORK_BASE = Path("/dev/shm") if Path("/dev/shm").is_dir() else Path(tempfile.gettempdir())
"""Where a peer keeps its work directory (and file): memory (``/dev/shm``) where there is one."""

COMMAND_ERRORS = (KeyError, TypeError, ValueError, RuntimeError, OSError)
"""What a failing command may raise: reported as an ``error`` event, the agent goes on."""

Send = Callable[[dict[str, Any]], None]
"""Sends one event to the coordinator."""


class Role(Protocol):
    """What a role's module provides to :func:`main`."""

    def add_arguments(self, parser: argparse._ActionsContainer) -> None:
        """Add the role's options to the agent's command line (an argument group)."""

    def run(self, args: argparse.Namespace) -> int:
        """Serve the protocol as this role until ``quit``; the exit status."""


def host_facts() -> dict[str, Any]:
    """What an agent says of its host in ``hello``: name, CPUs, pid, versions.

    The role adds its own facts (a peer its libtorrent version, a probe
    agent its tools).

    Returns
    -------
    dict
        ``hostname``, ``cpus``, ``pid``, ``toolkit`` and ``python``.

    Examples
    --------
    >>> sorted(host_facts())
    ['cpus', 'hostname', 'pid', 'python', 'toolkit']
    """
    return {"hostname": socket.gethostname(), "cpus": os.cpu_count() or 1, "pid": os.getpid(),
            "toolkit": TOOLKIT_VERSION, "python": platform.python_version()}


def check_address(address: str, port: int = 0) -> str | None:
    """Why an agent could not listen on ``address:port`` here, or None when it can.

    Tells an address that is not on this host from a port in use, so that
    a preflight can say which.

    Examples
    --------
    >>> check_address("127.0.0.1") is None
    True
    >>> check_address("203.0.113.77")   # TEST-NET-3: on no host
    'address 203.0.113.77 is not on this host'
    >>> check_address("not-an-address")
    "'not-an-address' is not an IPv4 address"
    """
    try:
        socket.inet_aton(address)
    except OSError:
        return f"{address!r} is not an IPv4 address"
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((address, port))
        except OSError as exc:
            if exc.errno == errno.EADDRNOTAVAIL:
                return f"address {address} is not on this host"
            if exc.errno == errno.EADDRINUSE:
                return f"port {port} on {address} is in use"
            return f"cannot listen on {address}:{port}: {exc.strerror}"
    return None


def work_directory(kind: str, address: str, base: str | os.PathLike[str] | None = None) -> Path:
    """A fresh ``tomography-KIND-ADDRESS-PID-*`` directory; those of dead processes go first.

    An agent killed with SIGKILL cannot remove its directory (in
    ``/dev/shm``, a peer's partial file with it); the next agent of that
    kind on the machine removes every such directory whose process is gone
    (:func:`remove_stale`).

    Parameters
    ----------
    kind : str
        ``"peer"`` or ``"probe"``: whose directories these are.
    address : str
        The agent's address, part of the name.
    base : path, optional
        Where to make it (default the temporary directory).

    Returns
    -------
    Path

    Examples
    --------
    >>> import tempfile
    >>> base = tempfile.mkdtemp()
    >>> stale = Path(base, "tomography-peer-127.0.0.9-999999999-x")   # no such process
    >>> stale.mkdir()
    >>> fresh = work_directory("peer", "127.0.0.9", base)
    >>> stale.exists(), fresh.name.startswith(f"tomography-peer-127.0.0.9-{os.getpid()}-")
    (False, True)
    """
    where = Path(base) if base is not None else Path(tempfile.gettempdir())
    remove_stale(kind, where)
    return Path(tempfile.mkdtemp(prefix=f"tomography-{kind}-{address}-{os.getpid()}-",
                                 dir=where))


def remove_stale(kind: str, base: str | os.PathLike[str] | None = None) -> list[Path]:
    """Remove the ``tomography-KIND-*`` directories of processes that are gone.

    The coordinator calls it after its local peers ended (one it had to
    kill leaves its directory), every new agent before it starts.

    Parameters
    ----------
    kind : {"peer", "probe"}
    base : path, optional
        Where the directories are (default :data:`WORK_BASE`).

    Returns
    -------
    list of Path
        The directories removed.

    Examples
    --------
    >>> import tempfile
    >>> base = tempfile.mkdtemp()
    >>> Path(base, "tomography-probe-10.0.0.1-999999999-x").mkdir()
    >>> [p.name for p in remove_stale("probe", base)]
    ['tomography-probe-10.0.0.1-999999999-x']
    """
    where = Path(base) if base is not None else WORK_BASE
    removed = []
    for old in where.glob(f"tomography-{kind}-*"):
        parts = old.name.rsplit("-", 2)
        if len(parts) == 3 and parts[1].isdigit() and old.is_dir():
            try:
                os.kill(int(parts[1]), 0)
            except ProcessLookupError:
                shutil.rmtree(old, ignore_errors=True)
                removed.append(old)
            except (PermissionError, OverflowError):
                pass  # another user's process, or not a pid: not ours to judge
    return removed


def hello_event(role: str, address: str, port: int, index: int, **facts: Any) -> dict[str, Any]:
    """An agent's ``hello``: role, address, port, number, its host's facts and ``facts``.

    Examples
    --------
    >>> hello = hello_event("probe", "127.0.0.2", 5201, 3, tools={})
    >>> hello["event"], hello["role"], hello["peer_id"], "hostname" in hello, hello["tools"]
    ('hello', 'probe', 3, True, {})
    """
    return {"event": "hello", "role": role, "address": address, "port": port,
            "peer_id": index, **host_facts(), **facts}


def event_sender(events: TextIO) -> Send:
    """A function that writes one event as a JSON line and flushes; safe from several threads.

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> send = event_sender(out)
    >>> send({"event": "clock", "t": 1.5})
    >>> out.getvalue()
    '{"event":"clock","t":1.5}\\n'
    """
    lock = threading.Lock()

    def send(event: dict[str, Any]) -> None:
        line = json.dumps(event, separators=(",", ":")) + "\n"
        with lock:
            events.write(line)
            events.flush()

    return send


def read_commands(stream: TextIO, inbox: "queue.Queue[dict[str, Any] | None]") -> None:
    """Put each JSON line of ``stream`` into ``inbox``, then None when the stream ends.

    A line that is not JSON becomes ``{"cmd": "invalid", "message": ...}``,
    which :func:`serve` answers with an error.  An agent runs it in a thread
    of its own, so that it keeps working while no command comes.

    Examples
    --------
    >>> import io
    >>> inbox = queue.Queue()
    >>> read_commands(io.StringIO('{"cmd": "clock"}\\n\\nnot json\\n'), inbox)
    >>> inbox.get(), inbox.get()["cmd"], inbox.get()
    ({'cmd': 'clock'}, 'invalid', None)
    """
    for line in stream:
        line = line.strip()
        if line:
            try:
                inbox.put(json.loads(line))
            except json.JSONDecodeError as exc:
                inbox.put({"cmd": "invalid", "message": f"not JSON: {exc}"})
    inbox.put(None)  # the coordinator went away


def serve(hello: dict[str, Any], handle: Callable[[dict[str, Any], Send], bool],
          commands: TextIO | None = None, events: TextIO | None = None, *,
          idle: Callable[[Send], None] | None = None) -> None:
    """Say ``hello``, then run the protocol until ``quit`` or the end of ``commands``.

    Answers ``clock`` itself and hands every other command to the role.

    Parameters
    ----------
    hello : dict
        The ``hello`` event (:func:`hello_event`).
    handle : callable
        ``handle(command, send) -> bool``: carries out one of the role's
        commands, sending its events with ``send``; False when the role has
        no such command.  An exception of :data:`COMMAND_ERRORS` is
        reported as an ``error`` event.
    commands, events : text streams, optional
        Default standard input and output.
    idle : callable, optional
        ``idle(send)``, called over and over while no command waits (a
        peer polls libtorrent there, for at most a few tens of
        milliseconds); without it the agent sleeps until a command comes.

    Examples
    --------
    >>> import io
    >>> def handle(command, send):
    ...     if command["cmd"] != "ping":
    ...         return False
    ...     send({"event": "pong", "n": int(command["n"])})
    ...     return True
    >>> out = io.StringIO()
    >>> serve({"event": "hello"}, handle, io.StringIO(
    ...     '{"cmd": "clock"}\\n{"cmd": "ping", "n": 2}\\n{"cmd": "ping", "n": "two"}\\n'
    ...     '{"cmd": "pong"}\\n{"cmd": "quit"}\\n{"cmd": "clock"}\\n'), out)
    >>> for line in out.getvalue().splitlines():
    ...     event = json.loads(line)
    ...     print(*(event[k] for k in ("event", "n", "message") if k in event))
    hello
    clock
    pong 2
    error ping: invalid literal for int() with base 10: 'two'
    error unknown command {'cmd': 'pong'}
    """
    send = event_sender(events if events is not None else sys.stdout)
    send(hello)
    inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
    threading.Thread(target=read_commands, args=(commands if commands is not None else sys.stdin,
                                                 inbox), daemon=True).start()
    while True:
        if idle is not None:
            idle(send)
            try:
                command = inbox.get_nowait()
            except queue.Empty:
                continue
        else:
            command = inbox.get()
        if command is None or command.get("cmd") == "quit":
            return
        kind = command.get("cmd")
        try:
            if kind == "clock":
                send({"event": "clock", "t": time.time()})
            elif kind == "invalid":
                send({"event": "error", "message": str(command.get("message"))})
            elif not handle(command, send):
                send({"event": "error", "message": f"unknown command {command!r}"})
        except COMMAND_ERRORS as exc:
            send({"event": "error", "message": f"{kind}: {exc}"})


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m measure.agent``: run one agent in its role.

    The common options (``--role``, ``--address``, ``--port``,
    ``--peer-id``) come first in the help; the role's module, imported once
    ``--role`` is read, adds its own (``--role probe --help`` lists them).

    Parameters
    ----------
    argv : list of str, optional
        The arguments (default the command line's).

    Returns
    -------
    int
        The exit status: 0 after ``quit`` or the end of input, 1 when the
        agent could not start (its ``error`` event says why).

    Examples
    --------
    >>> main(["--role", "probe", "--address", "203.0.113.77"])  # doctest: +ELLIPSIS
    {"event":"error","message":"address 203.0.113.77 is not on this host",...}
    1
    """
    first = argparse.ArgumentParser(add_help=False)
    first.add_argument("--role", choices=sorted(ROLES))
    known, _ = first.parse_known_args(argv)
    parser = argparse.ArgumentParser(
        prog="python -m measure.agent",
        description="A measurement agent driven through stdin/stdout, one JSON object a "
                    "line (see measure.agent).",
        epilog="roles: " + ", ".join(f"{r} ({m})" for r, m in ROLES.items())
               + "; --role R --help lists the options of role R")
    parser.add_argument("--role", required=True, choices=sorted(ROLES),
                        help="what the agent measures with")
    parser.add_argument("--address", required=True, help="this host's IPv4 address in the run")
    parser.add_argument("--port", type=int, default=0, help="listening port (0: any)")
    parser.add_argument("--peer-id", type=int, default=0,
                        help="this agent's number in the run")
    role: Role | None = None
    if known.role is not None:
        role = importlib.import_module(ROLES[known.role])  # type: ignore[assignment]
        role.add_arguments(parser.add_argument_group(f"role {known.role}"))
    args = parser.parse_args(argv)
    assert role is not None  # --role is required: parse_args exits without it
    return role.run(args)


if __name__ == "__main__":
    sys.exit(main())
