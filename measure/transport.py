"""How the coordinator reaches its agents: channels carrying the agent protocol.

The coordinator (:mod:`measure.coordinator`) speaks one protocol, the JSON
objects of :mod:`measure.agent`, to every agent (a BitTorrent peer or a
probe agent; "peer" below stands for either).  A *transport* opens one
*channel* per host and delivers the peer's events to a shared inbox as
``(channel, event)`` pairs; a channel that ends delivers
``{"event": "exit", "code": ...}`` last.

* :class:`ProcessTransport`: the peer is a process (``python -m
  measure.agent``) whose standard input and output carry the protocol,
  started by a *launcher* that turns the agent's command line into the one
  that runs it on the host: unchanged for local processes (:func:`local`),
  ``ip netns exec`` for a testbed namespace, ``ssh -- TARGET`` for a remote
  machine (:mod:`measure.ssh`).
* :class:`measure.mpi.MpiTransport`: the peer runs beside an MPI rank, and
  MPI messages carry the protocol.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from typing import Any, Callable, Protocol

__all__ = ["Launcher", "Channel", "Transport", "Inbox", "AGENT_MODULE", "agent_command",
           "local", "ProcessChannel", "ProcessTransport"]

Launcher = Callable[[str, list[str]], list[str]]
AGENT_MODULE = "measure.agent"
STDERR_LINES = 20  # the tail of a peer's standard error kept to explain its death


class Channel(Protocol):
    """One peer as the coordinator sees it."""

    host: str

    def send(self, command: dict[str, Any]) -> bool:
        """Send one protocol command; False when the peer is gone."""

    def alive(self) -> bool:
        """Whether the peer is still running."""

    def exit_code(self) -> int | None:
        """The peer's exit status once it ended, else None."""

    def stderr_tail(self) -> list[str]:
        """The last lines the peer wrote to its standard error."""

    def kill(self) -> None:
        """End the peer now (it hung, or the run is over)."""

    def close(self, timeout: float = 5.0) -> None:
        """Ask the peer to quit, and kill it if it does not within ``timeout``."""


Inbox = "queue.Queue[tuple[Channel, dict[str, Any]]]"


class Transport(Protocol):
    """Opens the channels of a run."""

    name: str             # recorded in meta.json as the launcher
    max_starting: int | None  # peers starting at once (None: all)

    def open(self, host: str, agent_args: list[str], inbox: Any) -> Channel:
        """Start an agent on ``host`` with these ``python -m measure.agent`` arguments."""

    def close(self) -> None:
        """End the transport once every channel is closed."""


def agent_command(agent_args: list[str], python: str = sys.executable) -> list[str]:
    """The command line of an agent with these arguments.

    Examples
    --------
    >>> agent_command(["--role", "bittorrent", "--address", "127.0.0.2"], python="python3")
    ['python3', '-m', 'measure.agent', '--role', 'bittorrent', '--address', '127.0.0.2']
    """
    return [python, "-m", AGENT_MODULE, *agent_args]


def local(host: str, argv: list[str]) -> list[str]:
    """The launcher of local processes: run the agent's command as it is.

    Examples
    --------
    >>> local("h0", ["python", "-m", "measure.agent"])
    ['python', '-m', 'measure.agent']
    """
    return list(argv)


class ProcessChannel:
    """A peer process whose standard input and output carry the protocol.

    Two threads read its output and its standard error; its events go to
    ``inbox``.  The process gets a session of its own, so the coordinator's
    Ctrl-C is the coordinator's to handle.

    Examples
    --------
    >>> inbox = queue.Queue()
    >>> ch = ProcessChannel("h0", [sys.executable, "-c", "print('{\\"event\\": \\"hello\\"}')"], inbox)
    >>> inbox.get(timeout=30)[1], inbox.get(timeout=30)[1]
    ({'event': 'hello'}, {'event': 'exit', 'code': 0, 'stderr': []})
    """

    def __init__(self, host: str, argv: list[str], inbox: Any) -> None:
        self.host = host
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, bufsize=1,
                                     start_new_session=True)
        self._stderr: list[str] = []
        self._stderr_done = threading.Event()
        threading.Thread(target=self._read_stderr, daemon=True).start()
        threading.Thread(target=self._read, args=(inbox,), daemon=True).start()

    def _read(self, inbox: Any) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                inbox.put((self, json.loads(line)))
            except json.JSONDecodeError:
                inbox.put((self, {"event": "error", "message": f"not JSON: {line[:200]!r}"}))
        code = self.proc.wait()
        self._stderr_done.wait(2.0)  # the reason for an exit is often its last stderr line
        inbox.put((self, {"event": "exit", "code": code, "stderr": self._stderr[-3:]}))

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self._stderr = (self._stderr + [line.rstrip()])[-STDERR_LINES:]
        self._stderr_done.set()

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

    def exit_code(self) -> int | None:
        return self.proc.poll()

    def stderr_tail(self) -> list[str]:
        return list(self._stderr)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()

    def close(self, timeout: float = 5.0) -> None:
        self.send({"cmd": "quit"})
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
        if self.proc.stdin is not None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass


class ProcessTransport:
    """Peers as processes, each started by ``launch(host, argv)``.

    Parameters
    ----------
    launch : callable
        ``launch(host, argv) -> argv``: the command that runs the peer
        command ``argv`` on ``host``.
    name : str, default "local"
        The launcher's name in ``meta.json``.
    max_starting : int, optional
        Peers starting at once (an SSH connection limit); None: all.
    python : str
        The interpreter of the peer command handed to ``launch``.

    Examples
    --------
    >>> t = ProcessTransport(local)
    >>> t.name, t.max_starting
    ('local', None)
    """

    def __init__(self, launch: Launcher = local, *, name: str = "local",
                 max_starting: int | None = None, python: str = sys.executable) -> None:
        self.launch, self.name, self.max_starting, self.python = launch, name, max_starting, python

    def open(self, host: str, agent_args: list[str], inbox: Any) -> ProcessChannel:
        return ProcessChannel(host, self.launch(host, agent_command(agent_args, self.python)),
                              inbox)

    def close(self) -> None:
        return None
