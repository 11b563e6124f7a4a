"""Peers on remote machines over SSH: the coordinator runs here, each peer over ``ssh``.

Each peer (an agent of :mod:`measure.agent`: a BitTorrent peer or a probe
agent) is ``ssh [options] -- TARGET '<remote command> <agent arguments>'``;
the SSH channel's standard input and output carry the agent protocol, so the
coordinator drives remote peers exactly as local ones
(:class:`measure.transport.ProcessTransport`).  When the coordinator goes
away, ssh closes the channel, the remote peer's standard input ends and the
peer exits; ``ServerAliveInterval`` ends a session whose host died.

The hosts file (:func:`read_ssh_hosts`) is a CSV with ``host,ssh,address``
and optional ``label`` and ``command`` columns: the run's name of the host,
the ssh target (``user@node12``, an alias of ``~/.ssh/config`` or
``ssh://user@node12:2222``), the address to measure on, the ground-truth
label, and a remote command for this host alone.
"""

from __future__ import annotations

import contextlib
import getpass
import os
import shlex
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import pandas as pd

from measure.transport import AGENT_MODULE, ProcessTransport
from tomography.model.hosts_checks import (MAX_HOSTS, check_address, check_command, check_label,
                                           check_ssh_target, is_local_target, new_host,
                                           read_host_rows, unique_endpoints)

__all__ = ["SshOptions", "read_ssh_hosts", "ssh_command", "ssh_transport", "loopback_sshd"]

REQUIRED = ("host", "ssh", "address")


@dataclass
class SshOptions:
    """How to reach the hosts and what to run there.

    Attributes
    ----------
    remote_command : str
        The command that runs an agent on a host; the agent's arguments are
        appended.  Default ``python3 -m measure.agent``.
    port : int, optional
        ssh's ``-p``.
    identity : str, optional
        ssh's ``-i``.
    config : str, optional
        ssh's ``-F`` (an ssh configuration file of the run).
    options : list of str
        More ``-o`` options (``StrictHostKeyChecking=accept-new``, ...).
    connections : int
        Peers starting at once: handshakes in flight (sshd's ``MaxStartups``
        refuses beyond 10 by default).
    """

    remote_command: str = f"python3 -m {AGENT_MODULE}"
    port: int | None = None
    identity: str | None = None
    config: str | None = None
    options: list[str] = field(default_factory=list)
    connections: int = 10


def read_ssh_hosts(path: str | Path, *, max_hosts: int = MAX_HOSTS) -> pd.DataFrame:
    """Read an SSH hosts file: ``host,ssh,address[,label][,command]``, every field checked.

    The file is read within bounds (:func:`tomography.model.hosts_checks.read_host_rows`:
    UTF-8, at most ``max_hosts`` rows); each host name, ssh target, address,
    label and command is checked (:mod:`tomography.model.hosts_checks`): an ssh
    target never begins with ``-``, an address is an IPv4 address a peer can
    be reached on (loopback only when the target is this machine's loopback),
    and no two hosts share an address.

    Raises
    ------
    DatasetError
        Naming the file, line and field of a missing column, an empty or
        malformed field, a duplicate host or address, too many hosts.

    Examples
    --------
    >>> import tempfile, os
    >>> f = os.path.join(tempfile.mkdtemp(), "hosts.csv")
    >>> _ = open(f, "w").write("host,ssh,address,label\\nn1,alice@n1,10.0.0.1,a\\n")
    >>> read_ssh_hosts(f)[["host", "ssh", "address", "label", "command"]].values.tolist()
    [['n1', 'alice@n1', '10.0.0.1', 'a', '']]
    >>> _ = open(f, "w").write("host,ssh,address\\nn1,-oProxyCommand=x,10.0.0.1\\n")
    >>> read_ssh_hosts(f)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tomography.model.errors.DatasetError: ...hosts.csv, line 2, field 'ssh': an ssh target cannot begin with '-' ...
    """
    rows = []
    seen: dict[str, int] = {}
    table = read_host_rows(path, REQUIRED, ("label", "command"), max_hosts=max_hosts)
    for line, row in table:
        host = new_host(row["host"], seen, path=path, line=line)
        target = check_ssh_target(row["ssh"], path=path, line=line)
        address = check_address(row["address"], loopback=is_local_target(target), path=path,
                                line=line)
        rows.append({"host": host, "ssh": target, "address": address,
                     "label": check_label(row["label"], path=path, line=line),
                     "command": check_command(row["command"], path=path, line=line)})
    unique_endpoints(((line, r["address"], -1) for (line, _), r in zip(table, rows)),
                     path=path)
    return pd.DataFrame(rows, columns=["host", "ssh", "address", "label", "command"])


def ssh_command(target: str, agent_args: list[str], options: SshOptions,
                remote_command: str | None = None) -> list[str]:
    """The local command that runs an agent on ``target`` over SSH.

    Examples
    --------
    >>> ssh_command("alice@n1", ["--role", "probe", "--address", "10.0.0.1"],
    ...             SshOptions(port=2222))  # doctest: +NORMALIZE_WHITESPACE
    ['ssh', '-T', '-o', 'BatchMode=yes', '-o', 'ConnectTimeout=10',
     '-o', 'ServerAliveInterval=15', '-o', 'ServerAliveCountMax=4', '-p', '2222',
     '--', 'alice@n1', 'python3 -m measure.agent --role probe --address 10.0.0.1']
    """
    argv = ["ssh", "-T", "-o", "BatchMode=yes", "-o", "ConnectTimeout=10",
            "-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=4"]
    if options.config:
        argv += ["-F", options.config]
    if options.port:
        argv += ["-p", str(options.port)]
    if options.identity:
        argv += ["-i", options.identity]
    for option in options.options:
        argv += ["-o", option]
    command = remote_command or options.remote_command
    # "--" first: whatever the target, ssh reads it as the destination, never an option
    return argv + ["--", target, f"{command} {shlex.join(agent_args)}"]


def ssh_transport(hosts: pd.DataFrame, options: SshOptions = SshOptions()) -> ProcessTransport:
    """The transport that runs each host's peer over SSH (``hosts`` from :func:`read_ssh_hosts`).

    Examples
    --------
    >>> hosts = pd.DataFrame({"host": ["n1"], "ssh": ["alice@n1"], "address": ["10.0.0.1"],
    ...                       "command": [""]})
    >>> t = ssh_transport(hosts)
    >>> t.name, t.max_starting, t.launch("n1", ["python", "-m", "measure.agent", "-x"])[-1]
    ('ssh', 10, 'python3 -m measure.agent -x')
    """
    target = dict(zip(hosts["host"], hosts["ssh"]))
    command = dict(zip(hosts["host"], hosts["command"])) if "command" in hosts else {}

    def launch(host: str, argv: list[str]) -> list[str]:
        agent_args = argv[argv.index(AGENT_MODULE) + 1:]
        return ssh_command(target[host], agent_args, options, command.get(host) or None)

    return ProcessTransport(launch, name="ssh", max_starting=options.connections)


@contextlib.contextmanager
def loopback_sshd(directory: str | Path) -> Iterator[dict[str, Any]]:
    """A throwaway sshd on a free port of 127.0.0.1, for trying the SSH launcher on one machine.

    Makes a host key, a user key and its ``authorized_keys`` in
    ``directory``, starts ``sshd -D`` with a configuration of its own (keys
    only, loopback only) and stops it on exit.  The machine's own SSH
    configuration is not touched.

    Yields
    ------
    dict
        ``port``, ``identity`` (the user key), ``user``, ``dir``, ``config``
        (the sshd configuration, also usable with ``sshd -i``) and ``options``
        (ssh ``-o`` options that trust the throwaway host key without
        writing ``known_hosts``).

    Raises
    ------
    OSError
        sshd or ssh-keygen is missing, or sshd did not start.
    """
    sshd = shutil.which("sshd") or "/usr/sbin/sshd"
    if not os.path.exists(sshd) or shutil.which("ssh-keygen") is None:
        raise OSError("sshd or ssh-keygen is missing (apt-get install openssh-server)")
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    for key in ("hostkey", "userkey"):
        if not (d / key).exists():
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / key)],
                           check=True)
    (d / "authorized_keys").write_text((d / "userkey.pub").read_text())
    os.chmod(d / "authorized_keys", 0o600)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    (d / "sshd_config").write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/hostkey\n"
        f"AuthorizedKeysFile {d}/authorized_keys\nPasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\nUsePAM no\n"
        f"StrictModes no\nPidFile {d}/sshd.pid\nMaxStartups 200\nMaxSessions 200\n")
    if os.geteuid() == 0:
        os.makedirs("/run/sshd", exist_ok=True)  # sshd's privilege separation directory
    with open(d / "sshd.log", "w") as log:
        proc = subprocess.Popen([sshd, "-D", "-e", "-f", str(d / "sshd_config")], stderr=log)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise OSError("sshd did not start: "
                                  + (d / "sshd.log").read_text()[-500:]) from None
                time.sleep(0.05)
        yield {"port": port, "identity": str(d / "userkey"), "user": getpass.getuser(),
               "dir": d, "config": str(d / "sshd_config"),
               "options": ["StrictHostKeyChecking=no", "UserKnownHostsFile=/dev/null",
                           "LogLevel=ERROR"]}
    finally:
        proc.terminate()
        proc.wait(10)
