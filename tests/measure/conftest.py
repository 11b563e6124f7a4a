"""Shared by the measure tests: the reason root-only tests skip."""

from __future__ import annotations

import os
import shutil

import pytest

from ..conftest import mpiexec  # noqa: F401  (the measure tests use it from here)


def root_reason() -> str | None:
    """Why the root tests cannot run here, or None."""
    missing = [tool for tool in ("ip", "tc") if shutil.which(tool) is None]
    if missing:
        return f"needs {' and '.join(missing)} from iproute2 (apt-get install iproute2)"
    if os.geteuid() != 0:
        return "needs root: network namespaces and tc (run the tests as root)"
    return None


@pytest.fixture(scope="module")
def as_root() -> None:
    reason = root_reason()
    if reason:
        pytest.skip(reason)


@pytest.fixture(scope="module")
def sshd(tmp_path_factory):
    """A real sshd on a free loopback port with throwaway keys; the machine's SSH is untouched.

    Yields a dict with ``port``, ``identity``, ``user``, ``dir`` and ``options`` (the ssh
    options that trust the throwaway host key without writing known_hosts).
    """
    import getpass
    import socket
    import subprocess
    import time

    sshd_bin = shutil.which("sshd") or "/usr/sbin/sshd"
    if not os.path.exists(sshd_bin) or shutil.which("ssh") is None or \
            shutil.which("ssh-keygen") is None:
        pytest.fail("sshd, ssh or ssh-keygen is missing: run scripts/setup.sh "
                    "(it installs openssh-server and openssh-client)")
    d = tmp_path_factory.mktemp("sshd")
    for key in ("hostkey", "userkey"):
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
        f"StrictModes no\nPidFile {d}/sshd.pid\nMaxStartups 100\n")
    if os.geteuid() == 0:
        os.makedirs("/run/sshd", exist_ok=True)  # sshd's privilege separation directory
    proc = subprocess.Popen([sshd_bin, "-D", "-e", "-f", str(d / "sshd_config")],
                            stderr=open(d / "sshd.log", "w"))
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            time.sleep(0.05)
    else:
        proc.kill()
        pytest.fail(f"sshd did not start: {(d / 'sshd.log').read_text()[-500:]}")
    try:
        yield {"port": port, "identity": str(d / "userkey"), "user": getpass.getuser(),
               "dir": d, "options": ["StrictHostKeyChecking=no",
                                     "UserKnownHostsFile=/dev/null", "LogLevel=ERROR"]}
    finally:
        proc.terminate()
        proc.wait(10)


def peer_pids(addresses: set[str]) -> dict[int, str]:
    """Pids of running peer processes started for these addresses."""
    import subprocess

    out = subprocess.run(["ps", "-ww", "-eo", "pid=,args="], capture_output=True,
                         text=True).stdout
    found = {}
    for line in out.splitlines():
        pid, _, args = line.strip().partition(" ")
        if "measure.peer" in args:
            for address in addresses:
                if f"--address {address} " in args + " ":
                    found[int(pid)] = address
    return found
