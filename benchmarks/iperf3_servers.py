"""What it costs a test that only the run's clients may use its iperf3 server.

On loopback (127.0.0.1), with the real iperf3 binary, the wall time of one
iperf3 test (``--duration`` seconds, 1 by default) in four configurations,
side by side in one run:

1. one server (``iperf3 -s``) for all the tests, no credentials: the plain
   way a user runs iperf3;
2. one server for all the tests, with credentials;
3. a server per test (``iperf3 -s -1``, started before each test, the client
   started once it listens), no credentials;
4. a server per test with credentials: what an iperf3 mesh does
   (:mod:`measure.mesh`).

A test's time is its wall time as the caller sees it.  For 3 and 4 that is
the server's start, the wait until it listens and the client's run: the
toolkit's own :meth:`measure.prober.Prober.serve` (on a port drawn at random
from :data:`measure.mesh.PORTS`, as the mesh draws it) then
:meth:`~measure.prober.Prober.probe`, what a probe agent does for the mesh's
``serve`` and ``probe`` commands.  For 1 and 2 it is the client's run alone
(:meth:`~measure.prober.Prober.probe`); their servers start once, before the
tests, and that start is shown apart.  The credentials are a run's
(:func:`measure.probetools.iperf3_credentials`: a random user and password,
a 2048-bit RSA key pair made with ``openssl``), handed to a prober as the
mesh hands them to its agents (:meth:`~measure.prober.Prober.authenticate`):
its servers check them, its clients present them (the password in
``IPERF3_PASSWORD``).  Before the tests, a client without credentials is
checked to be refused by the server with them.

The tests run in rounds, one test of each configuration a round in an order
rotated from round to round, after one untimed warm-up round.  Prints, as
Markdown, the median, min and max per configuration and the median's ratio
to configuration 1, then the time to make the credentials once; this is the
table of ``docs/probes.md`` ("Who may use the servers").  Needs iperf3 3.5
or later built with OpenSSL (``iperf3 --version`` lists "authentication")
and ``openssl``; every server and temporary file is removed at the end, on
Ctrl-C or an error too.  Run::

    .venv/bin/python benchmarks/iperf3_servers.py            # ~40 s (8 tests each)
    .venv/bin/python benchmarks/iperf3_servers.py --quick    # 2 tests each, ~15 s
"""

from __future__ import annotations

import argparse
import errno
import random
import shutil
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import psutil

from bench_support import command_line, machine_line
from measure.mesh import PORTS
from measure.prober import LISTEN_TIMEOUT, Prober, _listening, iperf3_authenticates, tool_versions
from measure.probetools import iperf3_credentials, iperf3_server
from tomography.model.errors import ProbeError
from tomography.model.interrupts import stop_as_interrupt

# `_listening` and `Prober._keys` are what Prober.serve uses for its one-off servers: the
# long-lived servers of configurations 1 and 2 check the same files, awaited the same way

ADDRESS = "127.0.0.1"
"""Every server listens on it and every client sends from it: loopback only."""
SERVE_ATTEMPTS = 3
"""Ports tried for a server (another process may take a free port before iperf3 binds it)."""


@dataclass
class Setup:
    """One configuration and the wall times of its tests.

    Attributes
    ----------
    name : str
        The row's label in the table.
    per_test : bool
        A server per test (``-1``), or one server for all the tests.
    credentials : bool
        The server checks the run's credentials and the client presents them.
    times : list of float
        Each timed test's wall time, in seconds.
    rates : list of float
        Each timed test's throughput (receiver side), in bit/s.
    starts : list of float
        Each timed test's server start until it listened, in seconds (a
        server per test only).
    """

    name: str
    per_test: bool
    credentials: bool
    times: list[float] = field(default_factory=list)
    rates: list[float] = field(default_factory=list)
    starts: list[float] = field(default_factory=list)


SETUPS = (
    ("one server for all the tests, no credentials", False, False),
    ("one server for all the tests, credentials", False, True),
    ("a server per test (`-1`), no credentials", True, False),
    ("a server per test (`-1`), credentials (what a mesh does)", True, True),
)


def free_port(taken: set[int]) -> int:
    """A port of :data:`measure.mesh.PORTS`, drawn at random, that nothing holds on loopback.

    Parameters
    ----------
    taken : set of int
        Ports to leave alone besides those in use (this run's long-lived servers).

    Returns
    -------
    int

    Examples
    --------
    >>> port = free_port(set())
    >>> PORTS[0] <= port < PORTS[1]
    True
    """
    draw = random.SystemRandom()
    for _ in range(1000):
        port = draw.randrange(*PORTS)
        if port in taken:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind((ADDRESS, port))
            except OSError as exc:
                if exc.errno == errno.EADDRINUSE:
                    continue
                raise
        return port
    raise RuntimeError(f"no free port on {ADDRESS} in {PORTS[0]}-{PORTS[1] - 1}")


def start_server(prober: Prober, port: int) -> tuple[subprocess.Popen, float]:
    """A long-lived iperf3 server (no ``-1``) on ``port``, with the prober's credentials if any.

    Parameters
    ----------
    prober : Prober
        Its key files (after :meth:`~measure.prober.Prober.authenticate`) are
        the server's; without them the server takes any client.
    port : int

    Returns
    -------
    subprocess.Popen, float
        The server, and the seconds until it listened.

    Raises
    ------
    RuntimeError
        When the server exits or does not listen within
        :data:`measure.prober.LISTEN_TIMEOUT`.
    """
    argv = iperf3_server(ADDRESS, port, private_key=prober._keys("private.pem"),
                         authorized_users=prober._keys("users.csv"))
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    while time.perf_counter() - start < LISTEN_TIMEOUT:
        if proc.poll() is not None:
            raise RuntimeError(f"{' '.join(argv)} exited: "
                               f"{proc.stderr.read().strip()[-200:] if proc.stderr else ''}")
        if _listening(proc.pid, port):
            return proc, time.perf_counter() - start
        time.sleep(0.02)
    stop(proc)
    raise RuntimeError(f"{' '.join(argv)} not listening after {LISTEN_TIMEOUT:g} s")


def stop(proc: subprocess.Popen) -> None:
    """Kill a process this script started (if it still runs) and reap it.

    Parameters
    ----------
    proc : subprocess.Popen
    """
    if proc.poll() is None:
        proc.kill()
    proc.wait()


def one_test(setup: Setup, prober: Prober, port: int | None, duration: int,
             taken: set[int], number: int) -> tuple[float, float, dict[str, Any]]:
    """Run one test of ``setup``; its wall time as the caller sees it, and iperf3's result.

    Parameters
    ----------
    setup : Setup
    prober : Prober
        The plain prober or the one with credentials, as ``setup`` says.
    port : int or None
        The long-lived server's port; None for a server per test.
    duration : int
        Seconds of the test.
    taken : set of int
        Ports a fresh server must not take.
    number : int
        The test's id (the prober's ``probe`` command needs one).

    Returns
    -------
    float, float, dict
        Seconds of the whole test (server start and the wait until it
        listens included for a server per test), seconds of that start and
        wait alone (0 for a long-lived server), and
        :func:`tomography.model.dataset.iperf3.parse_iperf3`'s result.

    Raises
    ------
    RuntimeError
        When the server could not start or the test failed.
    """
    start = time.perf_counter()
    if port is None:
        for _ in range(SERVE_ATTEMPTS):
            port = free_port(taken)
            event = prober.serve("iperf3", port)
            if event["event"] == "serving":
                break
        else:
            raise RuntimeError(f"{setup.name}: {event.get('message')}")
    listening = time.perf_counter() - start
    result = prober.probe({"id": number, "tool": "iperf3", "dst": ADDRESS, "port": port,
                           "duration": duration})["result"]
    wall = time.perf_counter() - start
    if result.get("error"):
        raise RuntimeError(f"{setup.name}: the test failed: {result['error']}")
    return wall, (listening if setup.per_test else 0.0), result


def openssl_version() -> str:
    """``openssl version``'s first two words, or ``"openssl"`` when it says nothing.

    Returns
    -------
    str
    """
    program = shutil.which("openssl")
    try:
        text = subprocess.run([program or "openssl", "version"], check=False,
                              capture_output=True, text=True, timeout=10).stdout.split()
    except (OSError, subprocess.TimeoutExpired):
        text = []
    return " ".join(text[:2]) or "openssl"


def check_tools() -> str:
    """iperf3's version; stop with a message when iperf3 or its authentication is missing.

    Returns
    -------
    str
        ``"3.12"``.

    Raises
    ------
    SystemExit
        When iperf3 is not installed, or cannot check credentials.
    """
    version = tool_versions()["iperf3"]
    if version is None:
        raise SystemExit("benchmarks/iperf3_servers.py needs iperf3 (apt-get install iperf3)")
    if not iperf3_authenticates():
        raise SystemExit(f"iperf3 {version} cannot check credentials: `iperf3 --version` does "
                         "not list \"authentication\" (it needs iperf3 3.5 or later built with "
                         "OpenSSL)")
    if shutil.which("openssl") is None:
        raise SystemExit("benchmarks/iperf3_servers.py needs openssl to make the credentials "
                         "(apt-get install openssl)")
    return version


def measure(tests: int, duration: int, warmup: int) -> dict[str, Any]:
    """Run every configuration's tests, interleaved; the times and the one-off costs.

    Parameters
    ----------
    tests : int
        Timed tests of each configuration.
    duration : int
        Seconds of each test.
    warmup : int
        Untimed rounds before (one test of each configuration a round).

    Returns
    -------
    dict
        ``setups`` (the :class:`Setup` objects, their times filled in),
        ``credentials_s`` (making the credentials), ``handing_s`` (writing
        them for the prober), ``server_start_s`` (the long-lived servers'
        start, by configuration name) and ``refused`` (what a client without
        credentials got from a server with them).
    """
    setups = [Setup(*row) for row in SETUPS]
    plain = authed = None
    servers: dict[str, tuple[subprocess.Popen, int]] = {}
    out: dict[str, Any] = {"setups": setups, "server_start_s": {}}
    try:
        start = time.perf_counter()
        credentials = iperf3_credentials()
        out["credentials_s"] = time.perf_counter() - start
        plain, authed = Prober(ADDRESS), Prober(ADDRESS)
        start = time.perf_counter()
        answer = authed.authenticate(credentials.user, credentials.password,
                                     credentials.private_key, credentials.public_key)
        out["handing_s"] = time.perf_counter() - start
        if answer["event"] != "auth":
            raise RuntimeError(f"the prober refused the credentials: {answer}")
        for setup in setups:
            if not setup.per_test:
                port = free_port({p for _, p in servers.values()})
                proc, started = start_server(authed if setup.credentials else plain, port)
                servers[setup.name] = proc, port
                out["server_start_s"][setup.name] = started
        taken = {p for _, p in servers.values()}

        locked = next(s for s in setups if s.credentials and not s.per_test)
        refused = plain.probe({"id": 0, "tool": "iperf3", "dst": ADDRESS,
                               "port": servers[locked.name][1], "duration": duration})["result"]
        if "authorization" not in refused.get("error", ""):
            raise RuntimeError("a client without credentials was not refused by the server "
                               f"with them: {refused}")
        out["refused"] = refused["error"]

        number = 0
        for round_ in range(-warmup, tests):
            shift = round_ % len(setups)
            for setup in setups[shift:] + setups[:shift]:
                number += 1
                prober = authed if setup.credentials else plain
                port = None if setup.per_test else servers[setup.name][1]
                wall, listening, result = one_test(setup, prober, port, duration, taken, number)
                if port is not None and servers[setup.name][0].poll() is not None:
                    raise RuntimeError(f"{setup.name}: the server exited")
                if round_ >= 0:
                    setup.times.append(wall)
                    setup.starts.append(listening)
                    setup.rates.append(float(result["bits_per_second"]))
            if round_ >= 0:
                print(f"<!-- round {round_ + 1}/{tests}: "
                      + ", ".join(f"{s.times[-1] * 1e3:.0f}" for s in setups)
                      + " ms -->", file=sys.stderr, flush=True)
    finally:
        for proc, _ in servers.values():
            stop(proc)
        for prober in (plain, authed):
            if prober is not None:
                prober.close()     # its servers and clients; its directory and key files
        for child in psutil.Process().children(recursive=True):   # a client cut short
            try:
                child.kill()
                child.wait(5)
            except psutil.Error:
                pass
    return out


def report(out: dict[str, Any], args: argparse.Namespace, seconds: float,
           version: str) -> None:
    """Print the results as Markdown.

    Parameters
    ----------
    out : dict
        What :func:`measure` returned.
    args : argparse.Namespace
        The script's options.
    seconds : float
        The whole run's wall time.
    version : str
        iperf3's version.
    """
    setups: list[Setup] = out["setups"]
    median = {s.name: statistics.median(s.times) for s in setups}
    base = median[setups[0].name]
    print("### iperf3 servers: one for all the tests or one per test, with and without "
          "credentials\n")
    print(f"Command: `{command_line()}`  ")
    print(machine_line(("psutil",), extra=[f"iperf3 {version}", openssl_version()])
          + f" {seconds:.0f} s.\n")
    print(f"Loopback ({ADDRESS}), tests of {args.duration} s, {args.tests} timed tests of each "
          f"configuration in {args.tests} rounds (order rotated, after {args.warmup} untimed "
          "round); wall time per test as the caller sees it (a server per test: its start, "
          "the wait until it listens and the client's run):\n")
    print("| server | per test (median) | min | max | / one server, no credentials | "
          "of which server start until it listens (median) | Gbit/s (median) |")
    print("|---|---|---|---|---|---|---|")
    for s in setups:
        listened = (f"{statistics.median(s.starts) * 1e3:.0f} ms" if s.per_test else
                    f"once, {out['server_start_s'][s.name] * 1e3:.0f} ms, not in the test")
        print(f"| {s.name} | {median[s.name] * 1e3:.0f} ms | {min(s.times) * 1e3:.0f} ms | "
              f"{max(s.times) * 1e3:.0f} ms | {median[s.name] / base:.3f} | {listened} | "
              f"{statistics.median(s.rates) / 1e9:.1f} |")
    one, one_auth, per, per_auth = (median[s.name] * 1e3 for s in setups)
    print(f"\nCredentials, once per run: {out['credentials_s'] * 1e3:.0f} ms to make them "
          f"(user, password and 2048-bit RSA key pair with openssl: "
          f"`iperf3_credentials`), {out['handing_s'] * 1e3:.1f} ms to write them for the "
          "servers and clients (`Prober.authenticate`).  ")
    print(f"A client without credentials against the server with them: "
          f"\"{out['refused']}\".\n")
    print(f"Per test, the credentials cost {one_auth - one:+.0f} ms with one server and "
          f"{per_auth - per:+.0f} ms with a server per test; a server per test costs "
          f"{per - one:+.0f} ms without credentials and {per_auth - one_auth:+.0f} ms with "
          f"them; both together {per_auth - one:+.0f} ms "
          f"({(per_auth - one) / (args.duration * 1e3) * 100:.1f} % of a {args.duration} s "
          "test).")


def main(argv: list[str] | None = None) -> int:
    """Parse the options, measure, print; the exit status.

    Parameters
    ----------
    argv : list of str, optional
        The options (``sys.argv[1:]`` by default).

    Returns
    -------
    int
        0, or 130 when interrupted.
    """
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tests", type=int, default=8,
                        help="timed tests of each configuration (8)")
    parser.add_argument("--quick", action="store_true", help="2 tests each: a smoke run")
    parser.add_argument("--duration", type=int, default=1, help="seconds of a test (1)")
    parser.add_argument("--warmup", type=int, default=1,
                        help="untimed rounds before the timed ones (1)")
    args = parser.parse_args(argv)
    if args.quick:
        args.tests = 2
    if args.tests < 1 or args.duration < 1 or args.warmup < 0:
        parser.error("--tests and --duration must be at least 1, --warmup at least 0")
    version = check_tools()
    stop_as_interrupt()
    started = time.perf_counter()
    try:
        out = measure(args.tests, args.duration, args.warmup)
    except KeyboardInterrupt:
        print("interrupted: every server stopped, every file removed", file=sys.stderr)
        return 130
    except (RuntimeError, ProbeError) as exc:
        raise SystemExit(f"benchmarks/iperf3_servers.py: {exc}") from None
    report(out, args, time.perf_counter() - started, version)
    return 0


if __name__ == "__main__":
    sys.exit(main())
