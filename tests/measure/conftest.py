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
    """A real sshd on a free loopback port, throwaway keys (:func:`measure.ssh.loopback_sshd`)."""
    from measure.ssh import loopback_sshd

    try:
        server = loopback_sshd(tmp_path_factory.mktemp("sshd"))
        info = server.__enter__()
    except OSError as exc:
        pytest.fail(f"{exc}: run scripts/setup.sh (it installs openssh-server)")
    try:
        yield info
    finally:
        server.__exit__(None, None, None)


def peer_pids(addresses: set[str]) -> dict[int, str]:
    """Pids of running peer processes started for these addresses."""
    import subprocess

    out = subprocess.run(["ps", "-ww", "-eo", "pid=,args="], capture_output=True,
                         text=True).stdout
    found = {}
    for line in out.splitlines():
        pid, _, args = line.strip().partition(" ")
        if "measure.agent" in args:
            for address in addresses:
                if f"--address {address} " in args + " ":
                    found[int(pid)] = address
    return found


def wait_for_iterations(out, count: int = 1, timeout: float = 60.0) -> None:
    """Wait until ``out/iterations.csv`` lists ``count`` iterations, or ``timeout`` passes."""
    import time

    listed = out / "iterations.csv"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if listed.exists() and len(listed.read_text().splitlines()) > count:
            return
        time.sleep(0.1)
