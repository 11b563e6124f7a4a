"""Peers on the nodes of an MPI job: rank 0 coordinates, every other rank runs one peer.

``mpiexec -n N+1 tomography measure bittorrent --mpi -o DIR`` (or ``srun``,
or any launcher of MPI jobs) starts N+1 copies of the command.  Rank 0 is
the coordinator of :mod:`measure.coordinator` and writes the dataset; each
other rank is an *agent* (:func:`serve_agent`) that starts the peer
(``python -m measure.agent``, :mod:`measure.agent`, in the run's role) as
its child process and relays the agent protocol between the child's pipes
and MPI messages.  The coordinator reaches the
agents through :class:`MpiTransport`, one channel per rank, so every
launcher shares one protocol and one coordinator.

Why an agent and a child rather than the peer in the rank itself: a peer
that dies (or hangs and is killed) is started again by its agent for the
next iteration, exactly as with local processes, without touching the MPI
job; and a peer never outlives its rank, because it exits when its
standard input (held by the agent) closes.  An agent that hears nothing
from rank 0 for ``ORPHANED`` seconds (rank 0 pings every ``HEARTBEAT``)
ends its peer and exits.

MPI is touched by one thread per process (:class:`_Pump`), with
non-blocking sends and probes and a short sleep when idle: a blocking
receive would spin a core in most MPI libraries and starve the swarm.

Addresses: each rank reports its host name and its IPv4 addresses;
:func:`choose_address` picks the one to measure on (``--network CIDR`` or an
interface name; by default the address the host name resolves to, else the
first non-loopback address).  Several ranks may share a node: they get
distinct ports (or, on the loopback network, distinct loopback addresses),
and unique host names ``node-1``, ``node-2``, ...
"""

from __future__ import annotations

import ipaddress
import os
import queue
import signal
import socket
import threading
import time
from typing import Any, Callable

import pandas as pd

from measure.transport import ProcessChannel, agent_command
from tomography.model.errors import TomographyError

__all__ = ["world", "local_addresses", "choose_address", "rank_table", "gather_hosts",
           "MpiTransport", "MpiChannel", "serve_agent"]

TAG = 7              # every message of the transport
HEARTBEAT = 5.0      # s between rank 0's pings to the agents
ORPHANED = 60.0      # s of silence from rank 0 after which an agent gives up
TERM_GRACE = 10.0    # s an agent told to end (SIGTERM) waits for rank 0's exit: mpiexec ends
                     # the whole job when one rank exits, so leaving first would kill rank 0
                     # before it has finished its own clean-up
IDLE_SLEEP = (0.0005, 0.01)  # s: the pump's sleep within WARM of its last message, and after
WARM = 0.25                 # s: a conversation (clock readings, add/added) stays quick


def world() -> Any:
    """``MPI.COMM_WORLD``, or a clear error when mpi4py or an MPI library is missing."""
    try:
        from mpi4py import MPI
    except ImportError as exc:
        raise TomographyError(f"--mpi needs mpi4py and an MPI library ({exc}); the set-up "
                              "installs both (pip install mpi4py mpich)") from None
    return MPI.COMM_WORLD


def local_addresses() -> dict[str, list[str]]:
    """This node's IPv4 addresses by interface (interfaces that are up).

    Examples
    --------
    >>> "127.0.0.1" in local_addresses().get("lo", [])
    True
    """
    import psutil

    stats = psutil.net_if_stats()
    return {name: [a.address for a in addrs if a.family == socket.AF_INET]
            for name, addrs in psutil.net_if_addrs().items()
            if stats.get(name) is None or stats[name].isup}


def choose_address(network: str | None = None, *,
                   interfaces: dict[str, list[str]] | None = None,
                   hostname: str | None = None) -> tuple[str, str]:
    """The address to measure on and how it was chosen.

    Parameters
    ----------
    network : str, optional
        A network in CIDR notation (``10.1.0.0/16``): this node's address in
        it; or an interface name (``ib0``): its first IPv4 address.  None:
        the address the host name resolves to when it is this node's and
        not loopback, else the first non-loopback address, else 127.0.0.1.
    interfaces : dict, optional
        Interface -> addresses (default :func:`local_addresses`).
    hostname : str, optional
        Default ``socket.gethostname()``.

    Raises
    ------
    TomographyError
        The network or interface is not on this node (its addresses listed).

    Examples
    --------
    >>> nics = {"lo": ["127.0.0.1"], "eth0": ["10.0.0.5"], "ib0": ["192.168.7.5"]}
    >>> choose_address("192.168.0.0/16", interfaces=nics)
    ('192.168.7.5', 'in 192.168.0.0/16')
    >>> choose_address("eth0", interfaces=nics)
    ('10.0.0.5', 'interface eth0')
    >>> choose_address(None, interfaces=nics, hostname="no-such-host.invalid")
    ('10.0.0.5', 'first non-loopback address (eth0)')
    >>> choose_address("172.16.0.0/12", interfaces=nics)
    Traceback (most recent call last):
    ...
    tomography.model.errors.TomographyError: no address in 172.16.0.0/12 on this node (its addresses: lo 127.0.0.1, eth0 10.0.0.5, ib0 192.168.7.5)
    """
    nics = local_addresses() if interfaces is None else interfaces
    listing = ", ".join(f"{name} {a}" for name, addrs in nics.items() for a in addrs)
    if network:
        if network in nics:
            if not nics[network]:
                raise TomographyError(f"interface {network} has no IPv4 address")
            return nics[network][0], f"interface {network}"
        try:
            net = ipaddress.ip_network(network, strict=False)
        except ValueError:
            raise TomographyError(f"--network {network!r} is neither a network (CIDR, "
                                  f"e.g. 10.1.0.0/16) nor an interface of this node "
                                  f"({', '.join(nics)})") from None
        for addrs in nics.values():
            for a in addrs:
                if ipaddress.ip_address(a) in net:
                    return a, f"in {network}"
        raise TomographyError(f"no address in {network} on this node (its addresses: "
                              f"{listing})")
    local = {a: name for name, addrs in nics.items() for a in addrs}
    try:
        resolved = socket.gethostbyname(hostname or socket.gethostname())
    except OSError:
        resolved = ""
    if resolved in local and not resolved.startswith("127."):
        return resolved, f"the host name's address ({local[resolved]})"
    for name, addrs in nics.items():
        for a in addrs:
            if not a.startswith("127."):
                return a, f"first non-loopback address ({name})"
    return "127.0.0.1", "loopback: the node has no other address"


def rank_table(reports: list[dict[str, Any]], port: int = 0) -> tuple[pd.DataFrame, list[str]]:
    """The run's hosts from the agents' reports, and warnings about them.

    One host per agent rank, named after its node; ranks that share a node
    are named ``node-1``, ``node-2``, ... and get the loopback addresses
    127.0.0.2, 127.0.0.3, ... when the chosen network is loopback, or the
    node's address with distinct ports otherwise.

    Parameters
    ----------
    reports : list of dict
        Each agent's ``rank``, ``hostname``, chosen ``address`` and network
        namespace (``netns``; ranks in different namespaces of one node, as
        in containers or the emulated testbed, have network stacks of their
        own).
    port : int
        The listening port (0: any free one, distinct per peer).

    Examples
    --------
    >>> reports = [{"rank": 1, "hostname": "n1.grid", "address": "10.0.0.1"},
    ...            {"rank": 2, "hostname": "n2.grid", "address": "10.0.0.2"},
    ...            {"rank": 3, "hostname": "n2.grid", "address": "10.0.0.2"}]
    >>> table, warnings = rank_table(reports)
    >>> table[["host", "address", "port", "rank"]].values.tolist()
    [['n1', '10.0.0.1', 0, 1], ['n2-1', '10.0.0.2', 0, 2], ['n2-2', '10.0.0.2', 0, 3]]
    >>> print(warnings[0])
    2 peers share node n2.grid (ranks 2, 3): their pairs measure the node's memory, not the network
    """
    by_node: dict[str, list[dict[str, Any]]] = {}
    for r in sorted(reports, key=lambda r: r["rank"]):
        by_node.setdefault(r["hostname"], []).append(r)
    rows, warnings = [], []
    for node, ranks in by_node.items():
        short = node.split(".")[0]
        stacks: dict[Any, list[int]] = {}  # ranks in one network namespace share a stack
        for r in ranks:
            stacks.setdefault(r.get("netns", 0), []).append(r["rank"])
        for shared in stacks.values():
            if len(shared) > 1:
                warnings.append(f"{len(shared)} peers share node {node} (ranks "
                                f"{', '.join(map(str, shared))}): their pairs measure the "
                                "node's memory, not the network")
        loopback = ranks[0]["address"].startswith("127.")
        for k, r in enumerate(ranks, start=1):
            name = short if len(ranks) == 1 else f"{short}-{k}"
            address = f"127.0.0.{k + 1}" if loopback and len(ranks) > 1 else r["address"]
            rows.append({"host": name, "address": address, "label": "", "port": port,
                         "rank": r["rank"], "hostname": node})
    return pd.DataFrame(rows), warnings


def gather_hosts(comm: Any, network: str | None) -> list[dict[str, Any]] | None:
    """Every agent's host name and chosen address, at rank 0 (None on the other ranks).

    A collective: every rank calls it once, before :class:`MpiTransport` or
    :func:`serve_agent`.  An agent whose network is missing reports the
    reason instead of an address.
    """
    report: dict[str, Any] = {"rank": comm.Get_rank(), "hostname": socket.gethostname(),
                              "cpus": os.cpu_count() or 1, "netns": _network_namespace()}
    if comm.Get_rank() != 0:
        try:
            report["address"], report["how"] = choose_address(network)
        except TomographyError as exc:
            report["error"] = str(exc)
    gathered = comm.gather(report, root=0)
    return None if gathered is None else gathered[1:]


def _network_namespace() -> int:
    """The inode of this process's network namespace (0 where Linux's /proc has none)."""
    try:
        return os.stat("/proc/self/ns/net").st_ino
    except OSError:
        return 0


class _Pump:
    """The one thread that talks MPI: non-blocking sends, probes, a short sleep when idle."""

    def __init__(self, comm: Any, on_message: Callable[[int, Any], None]) -> None:
        self.comm, self.on_message = comm, on_message
        self.outbox: queue.Queue[tuple[int, Any]] = queue.Queue()
        self.sending: list[Any] = []
        self.running = True
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def send(self, dest: int, message: Any) -> None:
        self.outbox.put((dest, message))

    def _run(self) -> None:
        from mpi4py import MPI

        status = MPI.Status()
        last = time.monotonic()
        while self.running or not self.outbox.empty():
            busy = False
            while True:
                try:
                    dest, message = self.outbox.get_nowait()
                except queue.Empty:
                    break
                self.sending.append(self.comm.isend(message, dest=dest, tag=TAG))
                busy = True
            self.sending = [r for r in self.sending if not r.Test()]
            while self.running and self.comm.Iprobe(source=MPI.ANY_SOURCE, tag=TAG,
                                                    status=status):
                source = status.Get_source()
                self.on_message(source, self.comm.recv(source=source, tag=TAG))
                busy = True
            now = time.monotonic()
            if busy:
                last = now
            else:
                time.sleep(IDLE_SLEEP[0] if now - last < WARM else IDLE_SLEEP[1])

    def stop(self, timeout: float = 5.0) -> None:
        """Send what is queued, wait up to ``timeout`` for it to leave, and end the thread."""
        self.running = False
        self.thread.join(timeout)
        deadline = time.monotonic() + timeout
        while self.sending and time.monotonic() < deadline:
            self.sending = [r for r in self.sending if not r.Test()]
            time.sleep(0.01)


class MpiChannel:
    """The peer of one agent rank, as the coordinator sees it."""

    def __init__(self, host: str, rank: int, generation: int, pump: _Pump) -> None:
        self.host, self.rank, self.generation, self.pump = host, rank, generation, pump
        self.code: int | None = None
        self.stderr: list[str] = []
        self.killed = False

    def send(self, command: dict[str, Any]) -> bool:
        if not self.alive():
            return False
        self.pump.send(self.rank, {"op": "send", "gen": self.generation, "cmd": command})
        return True

    def alive(self) -> bool:
        return self.code is None and not self.killed

    def exit_code(self) -> int | None:
        return self.code

    def stderr_tail(self) -> list[str]:
        return list(self.stderr)

    def kill(self) -> None:
        self.killed = True
        self.pump.send(self.rank, {"op": "kill", "gen": self.generation})

    def close(self, timeout: float = 5.0) -> None:
        if self.alive():
            self.pump.send(self.rank, {"op": "close", "gen": self.generation})
            deadline = time.monotonic() + timeout
            while self.code is None and time.monotonic() < deadline:
                time.sleep(0.01)
        self.killed = True


class MpiTransport:
    """The coordinator's side of an MPI job: one :class:`MpiChannel` per agent rank.

    Parameters
    ----------
    comm : mpi4py communicator
        ``MPI.COMM_WORLD``; this process is its rank 0.
    ranks : dict
        Host name -> the agent rank that runs its peer.
    """

    name = "mpi"
    max_starting = None

    def __init__(self, comm: Any, ranks: dict[str, int]) -> None:
        self.comm, self.ranks = comm, dict(ranks)
        self.channels: dict[int, MpiChannel] = {}
        self.inboxes: dict[int, Any] = {}
        self.generation = 0
        self.closed = False
        self.pump = _Pump(comm, self._deliver)
        self._stop_ping = threading.Event()
        threading.Thread(target=self._ping, daemon=True).start()

    def _ping(self) -> None:
        while not self._stop_ping.wait(HEARTBEAT):
            for rank in self.ranks.values():
                self.pump.send(rank, {"op": "ping"})

    def _deliver(self, source: int, message: dict[str, Any]) -> None:
        channel = self.channels.get(source)
        if channel is None or message.get("gen") != channel.generation:
            return  # an agent's hello, or the last words of a replaced peer
        event = message["event"]
        if event.get("event") == "exit":
            channel.code = int(event.get("code", -1))
            channel.stderr = list(event.get("stderr", []))
        self.inboxes[source].put((channel, event))

    def open(self, host: str, agent_args: list[str], inbox: Any) -> MpiChannel:
        rank = self.ranks[host]
        self.generation += 1
        channel = MpiChannel(host, rank, self.generation, self.pump)
        self.channels[rank], self.inboxes[rank] = channel, inbox
        self.pump.send(rank, {"op": "start", "gen": self.generation, "host": host,
                              "args": agent_args})
        return channel

    def close(self) -> None:
        """Tell every agent to end its peer and exit, then stop talking MPI (once)."""
        if self.closed:
            return
        self.closed = True
        self._stop_ping.set()
        for rank in sorted(set(self.ranks.values())):
            self.pump.send(rank, {"op": "exit"})
        self.pump.stop()

    @staticmethod
    def release(comm: Any) -> None:
        """Tell every agent rank of ``comm`` to exit (a run that ends before it starts)."""
        MpiTransport(comm, {str(r): r for r in range(1, comm.Get_size())}).close()


def serve_agent(comm: Any) -> int:
    """Run one agent rank until rank 0 says ``exit``: start, relay and end its peer.

    Returns the exit status: 0 when told to exit, 3 when rank 0 fell silent
    for ``ORPHANED`` seconds, 143 on SIGTERM (the peer is ended first in
    every case; on SIGTERM the agent then waits up to ``TERM_GRACE`` seconds
    for rank 0's exit, so that rank 0 can finish before mpiexec ends the job).
    """
    inbox: queue.Queue[tuple[Any, dict[str, Any]]] = queue.Queue()  # rank 0's and the peer's
    pump = _Pump(comm, lambda source, message: inbox.put((source, message)))
    child: ProcessChannel | None = None
    generation = 0
    heard = time.monotonic()
    ended = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda *_: ended.set())
    status = 0
    try:
        while not ended.is_set():
            if time.monotonic() - heard > ORPHANED:
                status = 3
                break
            try:
                sender, message = inbox.get(timeout=0.5)
            except queue.Empty:
                continue
            if not isinstance(sender, int):  # an event of a peer
                if sender is child:
                    pump.send(0, {"gen": generation, "event": message})
                continue
            if sender != 0:
                continue
            heard = time.monotonic()
            op = message.get("op")
            if op == "exit":
                break
            if op == "start":
                if child is not None:
                    child.kill()
                generation = message["gen"]
                child = ProcessChannel(message["host"], agent_command(message["args"]), inbox)
            elif child is not None and message.get("gen") == generation:
                if op == "send":
                    child.send(message["cmd"])
                elif op == "kill":
                    child.kill()
                elif op == "close":
                    child.close()
        else:
            status = 143
            if child is not None:
                child.close(timeout=2.0)
                child = None
            deadline = time.monotonic() + TERM_GRACE
            while time.monotonic() < deadline:   # until rank 0, also ending, says exit
                try:
                    sender, message = inbox.get(timeout=0.5)
                except queue.Empty:
                    continue
                if sender == 0 and message.get("op") == "exit":
                    break
    finally:
        if child is not None:
            child.close(timeout=2.0)
        signal.signal(signal.SIGTERM, previous)
        pump.stop()
    return status
