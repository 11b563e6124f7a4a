"""The probe agent: runs iperf3 and NetPIPE on its host for the mesh coordinator.

The ``probe`` role of the agent (:mod:`measure.agent`): started as
``python -m measure.agent --role probe --address IP --tools iperf3``
through the same transports as the BitTorrent peers (local, testbed, SSH,
MPI), it speaks the agents' JSON-lines protocol (``hello``, ``clock``,
``quit``, errors; see :mod:`measure.agent`) and takes these commands:

=====================================  ==========================================
``{"cmd": "auth", "user": u,           keep the run's iperf3 credentials
"password": p, "private_key": PEM,     (:class:`measure.probetools.Credentials`)
"public_key": PEM}``                   in the agent's private directory (0600):
                                       from now on its iperf3 servers refuse
                                       clients without them and its clients
                                       present them; answer ``{"event": "auth"}``.
``{"cmd": "serve", "tool": T,          start T's server on this host's address
"port": P[, "upper", "samples"]}``     for one test (iperf3 ``-1``; NetPIPE's
                                       receiver serves one test anyway, then
                                       exits); answer ``{"event": "serving",
                                       "tool": T, "port": P}`` once it listens.
``{"cmd": "probe", "id": k, "tool":    run one test from this host to ``dst``
T, "dst": IP, "port": P, "duration":   (in a thread: several may run at once);
s, "parallel": n, "omit": s,           answer ``{"event": "probed", "id": k,
"upper": bytes, "samples": n}``        "start": t0, "end": t1, "raw": text}``
                                       (iperf3's JSON, NetPIPE's output file),
                                       with ``"error"`` when the tool failed;
                                       the coordinator reads the figures.
``{"cmd": "unserve", "tool": T}``      stop T's server.
=====================================  ==========================================

``hello`` adds ``tools`` (each tool's version or path, None when missing),
``missing`` (the tools the run needs that are not there) and
``iperf3_auth`` (whether this iperf3 can check credentials: 3.5 or later,
built with OpenSSL).  It needs no
libtorrent, numpy or pandas: neither this module nor :mod:`measure.agent`
imports them, so that tens of agents start at once on a small machine.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import threading
import time
from functools import lru_cache
from typing import Any, TextIO

from measure.agent import (Send, check_address, event_sender, hello_event, host_facts, serve,
                           work_directory)
from measure.probetools import (Credentials, iperf3_client, iperf3_server, netpipe_receiver,
                                netpipe_transmitter)

__all__ = ["TOOLS", "tool_versions", "iperf3_authenticates", "iperf3_connect_timeout",
           "Prober", "serve_probes", "add_arguments", "run"]

TOOLS = {"iperf3": "iperf3", "netpipe": "NPtcp"}  # tool -> program
LISTEN_TIMEOUT = 5.0  # s for a server to listen
CONNECT_TIMEOUT = 5.0
"""Seconds an iperf3 client waits for its connection to be answered (three tries of its
SYN): a pair behind a firewall that drops it fails then, "Connection timed out"."""


def tool_versions() -> dict[str, str | None]:
    """Each tool's version (iperf3) or path (NPtcp prints none), None when missing.

    Examples
    --------
    >>> sorted(tool_versions())
    ['iperf3', 'netpipe']
    """
    out: dict[str, str | None] = {}
    for tool, program in TOOLS.items():
        path = shutil.which(program)
        if path is None or tool != "iperf3":
            out[tool] = path
            continue
        try:
            text = subprocess.run([path, "--version"], capture_output=True, text=True,
                                  timeout=5).stdout
            out[tool] = text.split()[1] if text.startswith("iperf") else path
        except (OSError, subprocess.TimeoutExpired, IndexError):
            out[tool] = path
    return out


def _iperf3_prints(flag: str) -> str:
    """What this host's iperf3 prints for ``flag`` (``--version``, ``--help``); "" without
    iperf3."""
    path = shutil.which(TOOLS["iperf3"])
    if path is None:
        return ""
    try:
        return subprocess.run([path, flag], capture_output=True, text=True, timeout=5).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""


def iperf3_authenticates() -> bool:
    """Whether this host's iperf3 can check a client's credentials (``--username``).

    iperf3 3.5 and later built with OpenSSL list "authentication" among the
    optional features of ``iperf3 --version``.

    Examples
    --------
    >>> isinstance(iperf3_authenticates(), bool)
    True
    """
    return "authentication" in _iperf3_prints("--version")


@lru_cache(maxsize=1)
def iperf3_connect_timeout() -> bool:
    """Whether this host's iperf3 takes ``--connect-timeout`` (3.6 and later).

    Examples
    --------
    >>> isinstance(iperf3_connect_timeout(), bool)
    True
    """
    return "--connect-timeout" in _iperf3_prints("--help")


def _listening(pid: int, port: int) -> bool:
    import psutil

    try:
        return any(c.status == psutil.CONN_LISTEN and c.laddr.port == port
                   for c in psutil.Process(pid).net_connections(kind="tcp"))
    except psutil.Error:
        return False


class Prober:
    """The servers and tests of one host.

    Parameters
    ----------
    address : str
        The host's address: servers listen on it, clients send from it.
    """

    def __init__(self, address: str) -> None:
        self.address = address
        self.servers: dict[str, subprocess.Popen] = {}
        self.running: set[subprocess.Popen] = set()
        self.lock = threading.Lock()
        self.workdir = work_directory("probe", address)
        self.password: str | None = None
        self.user: str | None = None

    def authenticate(self, user: str, password: str, private_key: str,
                     public_key: str) -> dict[str, Any]:
        """Keep the run's iperf3 credentials; the ``auth`` event.

        The key files and the authorized users are written to the agent's
        private directory, readable by its user only; the password stays in
        memory and reaches the clients in their environment.
        """
        if not user or "," in user or "\n" in user or not password:
            return {"event": "error", "message": "auth: a user without commas and a password "
                    "are needed"}
        files = {"private.pem": private_key, "public.pem": public_key,
                 "users.csv": Credentials(user, password, private_key, public_key)
                 .authorized_users()}
        for name, text in files.items():
            path = self.workdir / name
            path.unlink(missing_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
        self.user, self.password = user, password
        return {"event": "auth"}

    def _keys(self, name: str) -> str | None:
        return str(self.workdir / name) if self.password is not None else None

    def serve(self, tool: str, port: int, **netpipe: int) -> dict[str, Any]:
        """Start ``tool``'s server on ``port``; the ``serving`` event, or an ``error``.

        ``netpipe`` holds NetPIPE's ``upper`` and ``samples``, which its
        receiver must share with the transmitter.
        """
        old = self.servers.pop(tool, None)
        if old is not None and old.poll() is None:
            old.kill()
            old.wait()
        argv = (iperf3_server(self.address, port, one_off=True,
                              private_key=self._keys("private.pem"),
                              authorized_users=self._keys("users.csv"))
                if tool == "iperf3" else netpipe_receiver(port, **netpipe))
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        self.servers[tool] = proc
        deadline = time.monotonic() + LISTEN_TIMEOUT
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                return {"event": "error", "message": f"{argv[0]} server exited: "
                        f"{proc.stderr.read().strip()[-200:] if proc.stderr else ''}"}
            if _listening(proc.pid, port):
                return {"event": "serving", "tool": tool, "port": port}
            time.sleep(0.02)
        return {"event": "error", "message": f"{argv[0]} server not listening on port {port} "
                f"after {LISTEN_TIMEOUT:g} s"}

    def unserve(self, tool: str) -> None:
        proc = self.servers.pop(tool, None)
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()

    def probe(self, command: dict[str, Any]) -> dict[str, Any]:
        """Run one test (blocking); the ``probed`` event."""
        tool, dst, port = command["tool"], command["dst"], int(command["port"])
        if tool == "iperf3":
            duration = float(command.get("duration", 10))
            omit = float(command.get("omit", 0))
            argv = iperf3_client(self.address, dst, port, duration=duration,
                                 parallel=int(command.get("parallel", 1)), omit=omit,
                                 user=self.user, public_key=self._keys("public.pem"),
                                 reverse=bool(command.get("reverse", False)),
                                 connect_timeout=CONNECT_TIMEOUT if iperf3_connect_timeout()
                                 else None)
            timeout = duration + omit + 20
            output = None
        else:
            output = self.workdir / f"np-{command['id']}.out"
            argv = netpipe_transmitter(dst, port, str(output), upper=int(command["upper"]),
                                       samples=int(command["samples"]))
            timeout = float(command.get("timeout", 180))
        env = None
        if tool == "iperf3" and self.password is not None:
            env = {**os.environ, "IPERF3_PASSWORD": self.password}
        start = time.time()
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env)
        with self.lock:
            self.running.add(proc)
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            proc.kill()
            stdout, stderr = proc.communicate()
            timed_out = True
        finally:
            with self.lock:
                self.running.discard(proc)
        end = time.time()
        event: dict[str, Any] = {"event": "probed", "id": command["id"], "start": start,
                                 "end": end}
        if timed_out:
            event["error"] = f"timeout after {timeout:g} s"
            event["raw"] = stdout
        elif tool == "iperf3":
            event["raw"] = stdout
        else:
            text = output.read_text() if output is not None and output.exists() else ""
            if output is not None:
                output.unlink(missing_ok=True)
            if proc.returncode != 0 or not text.strip():
                event["error"] = (f"NPtcp exited with status {proc.returncode}: "
                                  f"{(stderr or stdout).strip()[-200:]}")
            event["raw"] = text
        return event

    def close(self) -> None:
        """Stop every server and test; remove the work directory."""
        for tool in list(self.servers):
            self.unserve(tool)
        with self.lock:
            for proc in list(self.running):
                proc.kill()
        shutil.rmtree(self.workdir, ignore_errors=True)


def serve_probes(prober: Prober, hello: dict[str, Any], commands: TextIO | None = None,
                 events: TextIO | None = None) -> None:
    """Run the probe protocol on a pair of text streams until ``quit`` or end of input.

    Each ``probe`` runs in a thread of its own, so that several tests run at
    once and the agent still answers (``clock``, ``serve``) meanwhile.

    Examples
    --------
    >>> import io, json
    >>> prober = Prober("127.0.0.1")
    >>> out = io.StringIO()
    >>> serve_probes(prober, {"event": "hello"},
    ...              io.StringIO('{"cmd": "unserve", "tool": "iperf3"}\\n{"cmd": "ping"}\\n'), out)
    >>> prober.close()
    >>> [json.loads(line)["event"] for line in out.getvalue().splitlines()]
    ['hello', 'error']
    """
    def run_probe(command: dict[str, Any], send: Send) -> None:
        try:
            send(prober.probe(command))
        except (KeyError, TypeError, ValueError, OSError) as exc:
            send({"event": "probed", "id": command.get("id"), "start": time.time(),
                  "end": time.time(), "result": {"error": f"probe: {exc}"}})

    def handle(command: dict[str, Any], send: Send) -> bool:
        kind = command.get("cmd")
        if kind == "auth":
            send(prober.authenticate(str(command["user"]), str(command["password"]),
                                     str(command["private_key"]), str(command["public_key"])))
        elif kind == "serve":
            send(prober.serve(command["tool"], int(command["port"]),
                              **{k: int(command[k]) for k in ("upper", "samples")
                                 if k in command}))
        elif kind == "unserve":
            prober.unserve(command["tool"])
        elif kind == "probe":
            threading.Thread(target=run_probe, args=(command, send), daemon=True).start()
        else:
            return False
        return True

    serve(hello, handle, commands, events)


def add_arguments(parser: argparse._ActionsContainer) -> None:
    """The options of ``python -m measure.agent --role probe``.

    Examples
    --------
    >>> parser = argparse.ArgumentParser()
    >>> add_arguments(parser)
    >>> parser.parse_args(["--tools", "iperf3,netpipe"]).tools
    'iperf3,netpipe'
    """
    parser.add_argument("--tools", default="",
                        help="the tools the run needs, comma-separated (iperf3, netpipe)")


def run(args: argparse.Namespace) -> int:
    """The ``probe`` role of :func:`measure.agent.main`: serve as a probe agent; the exit status.

    Examples
    --------
    >>> import contextlib, io, json
    >>> args = argparse.Namespace(address="203.0.113.77", port=0, peer_id=0, tools="iperf3")
    >>> out = io.StringIO()
    >>> with contextlib.redirect_stdout(out):
    ...     code = run(args)
    >>> code, json.loads(out.getvalue())["message"]
    (1, 'address 203.0.113.77 is not on this host')
    """
    tools = [t for t in args.tools.split(",") if t]
    versions = tool_versions()
    facts = {"tools": versions, "missing": [t for t in tools if versions.get(t) is None],
             "iperf3_auth": "iperf3" in tools and iperf3_authenticates()}
    why = check_address(args.address, args.port)
    if why:
        event_sender(sys.stdout)({"event": "error", "message": why, **host_facts(), **facts})
        return 1
    prober = Prober(args.address)
    try:
        serve_probes(prober, hello_event("probe", args.address, args.port, args.peer_id, **facts))
    finally:
        prober.close()
    return 0
