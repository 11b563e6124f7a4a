"""Where ``measure`` runs its peers: the launcher options and the set-up of each launcher.

One peer per host, started by one of ``--testbed`` (an emulated network,
raised for the run unless already up), ``--hosts`` or ``--local`` (processes
on this machine), ``--mpi`` (the ranks of an MPI job) or ``--ssh`` (ssh from
this machine).  :func:`open_launcher` turns the options into the hosts, the
transport that starts their agents and what ``meta.json`` records of it.
"""

from __future__ import annotations

import argparse
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tomography.cli.common import positive_int, say
from tomography.model.errors import DatasetError, TomographyError

if TYPE_CHECKING:
    import pandas as pd

    from measure.testbed import Testbed
    from measure.transport import Transport

__all__ = ["DEFAULT_TESTBED", "add_testbed_scale", "add_launcher_options", "mpi_world",
           "open_launcher"]

DEFAULT_TESTBED = "tb"
"""The testbed name when ``--name`` is not given."""


def add_testbed_scale(p: argparse.ArgumentParser) -> None:
    """``--bandwidth-scale``, ``--hosts-per-cluster`` and ``--name`` of a testbed."""
    p.add_argument("--bandwidth-scale", type=float, default=1.0, metavar="F",
                   help="multiply every capacity by F, so the emulation fits the CPU "
                        "(default 1; recorded)")
    p.add_argument("--hosts-per-cluster", type=positive_int, default=None, metavar="K",
                   help="keep at most K hosts of each cluster (recorded)")
    p.add_argument("--name", default=None,
                   help="testbed name; its namespaces are tomo-NAME-* (default tb; status "
                        "without it lists every testbed)")


def add_launcher_options(p: argparse.ArgumentParser) -> None:
    """Where the peers run, and the preflight: shared by every ``measure`` method."""
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--testbed", metavar="TOPOLOGY",
                       help="run inside the emulated network of a topology (needs root); "
                            "raised for the run unless already up")
    where.add_argument("--hosts", type=Path, metavar="FILE",
                       help="hosts.csv-style file: a local peer on each address")
    where.add_argument("--local", type=positive_int, metavar="N",
                       help="N local peers on loopback addresses 127.0.0.2...")
    where.add_argument("--mpi", action="store_true",
                       help="run under mpiexec/srun: rank 0 coordinates and writes the "
                            "dataset, every other rank runs one peer on its node")
    where.add_argument("--ssh", type=Path, metavar="FILE",
                       help="CSV host,ssh,address[,label][,command]: a peer on each host, "
                            "started with ssh from this machine")
    p.add_argument("-o", "--output", type=Path,
                   help="dataset directory (required unless --check)")
    p.add_argument("--check", action="store_true",
                   help="only run the preflight: print a table of the hosts (reachable, "
                        "versions, address, port, clock offset) and exit (2 if one failed)")
    p.add_argument("--skip-failed", action="store_true",
                   help="leave out the hosts that fail the preflight (recorded in meta.json) "
                        "instead of refusing to start")
    p.add_argument("--port", type=_port, default=0,
                   help="the peers' listening port (default 0: any free port)")
    p.add_argument("--changes", type=Path, metavar="FILE",
                   help="with --testbed: a schedule of network changes (YAML: links "
                        "reshaped at given times, or at random every T seconds) applied "
                        "while the command runs; the changes applied go to the dataset's "
                        "network_changes.csv (docs/multicast.md, 'A network that changes')")
    g = p.add_argument_group("MPI (--mpi)")
    g.add_argument("--network", metavar="CIDR|IFACE",
                   help="the network to measure on multi-homed nodes, e.g. 10.1.0.0/16 or "
                        "ib0 (default: the address of the node's host name, else its first "
                        "non-loopback address)")
    g = p.add_argument_group("SSH (--ssh)")
    g.add_argument("--remote-python", metavar="PATH", default="python3",
                   help="the Python on the hosts that has the toolkit (default python3)")
    g.add_argument("--remote-command", metavar="CMD",
                   help="the command that runs a peer on a host, the peer's arguments "
                        "appended (default: REMOTE_PYTHON -m measure.agent); a command "
                        "column in the hosts file overrides it per host")
    g.add_argument("--ssh-port", type=_ssh_port, help="ssh -p")
    g.add_argument("--ssh-identity", metavar="FILE", help="ssh -i")
    g.add_argument("--ssh-config", metavar="FILE", help="ssh -F")
    g.add_argument("--ssh-option", action="append", default=[], metavar="OPT",
                   help="an ssh -o option, repeatable (e.g. StrictHostKeyChecking=accept-new)")
    g.add_argument("--ssh-connections", type=_connections, default=10, metavar="K",
                   help="SSH handshakes at once (default 10, sshd's MaxStartups)")
    add_testbed_scale(p)


def mpi_world(args: argparse.Namespace) -> tuple[Any, int | None]:
    """Under ``--mpi``: the world communicator, and the exit status if this rank is an agent.

    Every rank but 0 reports its host, runs its agent until rank 0 is done
    (:func:`measure.mpi.serve_agent`) and returns its status; rank 0 gets
    ``(comm, None)`` and coordinates.  Without ``--mpi``: ``(None, None)``.
    """
    if not args.mpi:
        return None, None
    from measure import mpi

    comm = mpi.world()
    if comm.Get_rank() != 0:
        mpi.gather_hosts(comm, args.network)
        return comm, mpi.serve_agent(comm)
    return comm, None


def open_launcher(args: argparse.Namespace, held: ExitStack, comm: Any = None
                  ) -> tuple[pd.DataFrame, Transport, dict[str, Any]]:
    """The hosts, the transport that starts their agents, and its record for ``meta.json``.

    Parameters
    ----------
    args : Namespace
        The options of :func:`add_launcher_options`.
    held : ExitStack
        Gets what undoes the set-up, run in reverse when it closes: the
        transport closed, a testbed raised for the run taken down, then its claim
        released.
    comm : MPI communicator, optional
        ``MPI.COMM_WORLD`` for ``--mpi`` (this is rank 0).

    Returns
    -------
    hosts : DataFrame
    transport : Transport
    meta : dict
        What ``meta.json`` records of the launcher.
    """
    from measure.coordinator import local_hosts
    from measure.transport import ProcessTransport, local
    from tomography.model.hosts_checks import file_budget

    schedule = _schedule(args)          # refused before a testbed is raised
    if args.testbed:
        bed = _testbed_for(args, held)
        hosts = bed.host_table()
        transport = ProcessTransport(bed.command, name="testbed")
        meta = {"topology": bed.topology.name, "testbed": bed.to_meta()}
        if not bed.latency_applied:
            say(f"note: {bed.latency_note}")
        if schedule is not None:
            meta["testbed"]["changes"] = schedule.to_meta()
            _reshape(bed, schedule, args.output, held)
    elif args.mpi:
        hosts, transport, meta = _mpi_setup(args, comm)
    elif args.ssh:
        hosts, transport, meta = _ssh_setup(args)
    else:
        hosts = local_hosts(args.local) if args.local else _read_hosts_file(args.hosts)
        transport, meta = ProcessTransport(local), {}
    held.callback(transport.close)
    if not args.mpi:  # one process here per host: room for its pipes, or a refusal now
        file_budget(len(hosts))
    return hosts, transport, meta


def _schedule(args: argparse.Namespace) -> Any:
    """The ``--changes`` schedule, checked; None without one."""
    if getattr(args, "changes", None) is None:
        return None
    if not args.testbed:
        raise TomographyError("--changes reshapes a testbed's links: it needs --testbed")
    from measure.testbed import TestbedError, read_schedule
    from tomography.model.topology import read_topology

    schedule = read_schedule(args.changes)
    try:
        next(schedule.events(read_topology(args.testbed)), None)   # a link it lacks: now
    except TestbedError as exc:
        raise TestbedError(f"{args.changes}: {exc}") from None
    return schedule


def _reshape(bed: Testbed, schedule: Any, output: Path | None, held: ExitStack) -> None:
    """Apply ``schedule`` to ``bed`` from now until ``held`` closes (before the testbed goes
    down); say so if ``tc`` stopped it early."""
    from measure.testbed import Reshaper

    reshaper = Reshaper(bed, schedule, record=output)

    def stop() -> None:
        error = reshaper.stop()
        if error is not None:
            say(f"warning: the network changes stopped early: {error}")
        say(f"note: {len(reshaper.applied)} network change(s) applied")

    reshaper.start()
    held.callback(stop)


def _testbed_for(args: argparse.Namespace, held: ExitStack) -> Testbed:
    """The testbed to measure on: the one already up under ``--name``, or a new one.

    Its claim is held in ``held`` (refused when another run holds it): two
    measurements in one testbed would disturb each other.  A testbed raised
    here is taken down when ``held`` closes, before the claim is released.
    """
    from measure import testbed
    from tomography.model.topology import read_topology

    topo = read_topology(args.testbed)
    name = args.name or DEFAULT_TESTBED
    held.enter_context(testbed.claim(name))
    if testbed.status(name).get("up"):
        bed = testbed.load(name)
        if bed.topology.name != topo.name:
            raise TomographyError(f"testbed {name!r} runs {bed.topology.name}, not "
                                  f"{topo.name}; use another --name or take it down")
        return bed
    bed = testbed.up(topo, name=name, bandwidth=args.bandwidth_scale,
                     hosts_per_cluster=args.hosts_per_cluster)
    held.callback(testbed.down, name)
    return bed


def _ssh_setup(args: argparse.Namespace) -> tuple[pd.DataFrame, Transport, dict[str, Any]]:
    """The hosts of the ``--ssh`` file, the ssh transport and the targets it records."""
    from measure.ssh import SshOptions, read_ssh_hosts, ssh_transport
    from measure.transport import AGENT_MODULE

    _check_ssh_options(args)
    hosts = read_ssh_hosts(args.ssh)
    options = SshOptions(remote_command=args.remote_command
                         or f"{args.remote_python} -m {AGENT_MODULE}",
                         port=args.ssh_port, identity=args.ssh_identity, config=args.ssh_config,
                         options=list(args.ssh_option), connections=args.ssh_connections)
    meta = {"ssh": {"targets": dict(zip(hosts["host"], hosts["ssh"])),
                    "remote_command": options.remote_command}}
    return hosts, ssh_transport(hosts, options), meta


def _mpi_setup(args: argparse.Namespace, comm: Any
               ) -> tuple[pd.DataFrame, Transport, dict[str, Any]]:
    """Rank 0's hosts, transport and records for an MPI run; agents are released on error."""
    from mpi4py import MPI

    from measure import mpi
    from measure.preflight import PreflightError

    reports = mpi.gather_hosts(comm, args.network)
    try:
        if comm.Get_size() < 3:
            raise TomographyError(f"--mpi needs at least 3 ranks, got {comm.Get_size()}: rank "
                                  "0 coordinates and every other rank runs a peer (mpiexec -n "
                                  "N+1 for N peers)")
        bad = [r for r in reports if "error" in r]
        if bad and not args.skip_failed:
            raise PreflightError("\n".join(f"rank {r['rank']} on {r['hostname']}: {r['error']}"
                                           for r in bad))
        hosts, warnings = mpi.rank_table([r for r in reports if "error" not in r], args.port)
        for warning in warnings:
            say(f"warning: {warning}")
        transport = mpi.MpiTransport(comm, dict(zip(hosts["host"], hosts["rank"])))
    except BaseException:
        mpi.MpiTransport.release(comm)
        raise
    how = {r["hostname"]: r["how"] for r in reports if "how" in r}
    meta = {"mpi": {"library": MPI.Get_library_version().splitlines()[0].strip(),
                    "ranks": dict(zip(hosts["host"], map(int, hosts["rank"]))),
                    "network": args.network or "default", "address_chosen_by": how,
                    "failed_ranks": {int(r["rank"]): r["error"] for r in bad}}}
    return hosts, transport, meta


def _read_hosts_file(path: Path) -> pd.DataFrame:
    """The hosts of a ``--hosts`` file, every field checked before any peer starts.

    Host names, IPv4 addresses (loopback allowed: the peers run here),
    labels and ports (0 to 65535, empty: 0) are checked row by row
    (:mod:`tomography.model.hosts_checks`) and named by file, line and field;
    two hosts on one address need a port column with distinct ports (or 0).
    """
    from tomography.model.dataset import read_hosts_table
    from tomography.model.hosts_checks import (check_address, check_label, check_port, new_host,
                                               read_host_rows, unique_endpoints)

    table = read_host_rows(path, ("host", "address"), ("label",))
    has_port = "port" in table[0][1]
    seen: dict[str, int] = {}
    checked: dict[str, tuple[str, int]] = {}
    endpoints = []
    for line, row in table:
        host = new_host(row["host"], seen, path=path, line=line)
        address = check_address(row["address"], path=path, line=line)
        check_label(row["label"], path=path, line=line)
        port = check_port(row["port"] or "0", path=path, line=line) if has_port else -1
        checked[host] = (address, port)
        endpoints.append((line, address, port))
    unique_endpoints(endpoints, path=path)
    hosts = read_hosts_table(path)
    hosts["address"] = [checked[h][0] for h in hosts["host"]]
    if has_port:
        hosts["port"] = [checked[h][1] for h in hosts["host"]]
    return hosts


def _port(text: str) -> int:
    """``--port``: 0 (any free port) to 65535."""
    from tomography.model.hosts_checks import check_port

    try:
        return check_port(text)
    except DatasetError:
        raise argparse.ArgumentTypeError(f"a port is 0 (any free one) to 65535, got "
                                         f"{text[:40]!r}") from None


def _ssh_port(text: str) -> int:
    """``--ssh-port``: 1 to 65535."""
    from tomography.model.hosts_checks import check_port

    try:
        return check_port(text, zero=False)
    except DatasetError:
        raise argparse.ArgumentTypeError(f"a port is 1 to 65535, got {text[:40]!r}") from None


def _connections(text: str) -> int:
    """``--ssh-connections``: 1 to the hosts a run takes at most."""
    from tomography.model.hosts_checks import MAX_HOSTS

    value = positive_int(text)
    if value > MAX_HOSTS:
        raise argparse.ArgumentTypeError(f"at most {MAX_HOSTS} (the hosts a run takes), got "
                                         f"{value}")
    return value


def _check_ssh_options(args: argparse.Namespace) -> None:
    """The ssh options of the command line, refused before any session starts."""
    from tomography.model.hosts_checks import check_command
    from tomography.model.errors import ParameterError

    for option, value in (("--ssh-identity", args.ssh_identity),
                          ("--ssh-config", args.ssh_config)):
        if value is not None and not Path(value).is_file():
            raise ParameterError(f"{option} {value[:80]!r}: no such file")
    for option, value in (("--remote-python", args.remote_python),
                          ("--remote-command", args.remote_command)):
        if value is not None:
            try:
                check_command(value, field=option)
            except DatasetError as exc:
                raise ParameterError(f"{option}: {exc.reason}") from None
    for value in args.ssh_option:
        if value.startswith("-") or any(c in value for c in "\n\r\0"):
            raise ParameterError(f"--ssh-option takes KEY=VALUE (as ssh -o), got "
                                 f"{value[:80]!r}")
