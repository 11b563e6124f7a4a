"""Running ``ip`` and ``tc``: the tools checked first, commands batched per namespace.

A failure is a :class:`~measure.testbed.TestbedError` naming the command that
failed (inside a batch, the line) and the tool's message.  Each command dies
with the process that started it: an ``up`` killed midway (even by SIGKILL)
leaves no ``ip`` batch behind that would go on making namespaces after
``down`` has removed them.
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import signal
import subprocess
from itertools import groupby
from typing import Callable, Iterable

from measure.testbed.names import TestbedError

__all__ = ["require", "run", "batches"]

PR_SET_PDEATHSIG = 1  # prctl(2): the signal a process gets when its parent ends


def require(tools: Iterable[str]) -> None:
    """Refuse unless this process is root with ``tools`` on PATH.

    Raises
    ------
    TestbedError
        Naming the missing tools and the package that has them, or the uid.

    Examples
    --------
    >>> require(["nosuch-tool"])
    Traceback (most recent call last):
    ...
    measure.testbed.TestbedError: the testbed needs nosuch-tool (iproute2), not found on PATH; \
install it, e.g. `apt-get install iproute2`
    """
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        raise TestbedError(f"the testbed needs {' and '.join(missing)} (iproute2), not found "
                           "on PATH; install it, e.g. `apt-get install iproute2`")
    if os.geteuid() != 0:
        raise TestbedError("the testbed needs root (it creates network namespaces and tc "
                           f"qdiscs) and this process runs as uid {os.geteuid()}; run it as "
                           "root, e.g. with sudo")


def run(argv: list[str], lines: list[str] | None = None) -> None:
    """Run a command, or a batch of ``lines`` on its standard input.

    Raises
    ------
    TestbedError
        Naming the command (for a batch, the line that failed) and its error.

    Examples
    --------
    >>> run(["false"])
    Traceback (most recent call last):
    ...
    measure.testbed.TestbedError: `false` failed: exit status 1
    """
    done = subprocess.run(argv, input=None if lines is None else "\n".join(lines) + "\n",
                          capture_output=True, text=True,
                          preexec_fn=_die_with(os.getpid()))
    if done.returncode == 0:
        return
    failed = argv
    at = re.search(r"Command failed -:(\d+)", done.stderr)
    if lines is not None and at and int(at.group(1)) <= len(lines):
        failed = [*argv[:-2], lines[int(at.group(1)) - 1]]
    detail = done.stderr.strip().replace("\n", "; ") or f"exit status {done.returncode}"
    raise TestbedError(f"`{' '.join(failed)}` failed: {detail}")


def _die_with(parent: int) -> Callable[[], None]:
    """What a child runs before its command: be killed when ``parent`` ends, however it ends."""
    prctl = ctypes.CDLL(None, use_errno=True).prctl  # Linux's; found before the fork

    def arrange() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # it ended before the request was in place
            os._exit(1)
    return arrange


def _batch_key(argv: list[str]) -> tuple[str, ...]:
    if argv[:3] == ["ip", "netns", "exec"]:
        return ()
    return tuple(argv[:3]) if argv[1] == "-n" else (argv[0],)


def batches(commands: list[list[str]]) -> list[tuple[list[str], list[str] | None]]:
    """Runs of consecutive ``ip``/``tc`` commands for one namespace as one ``-batch``.

    Returns
    -------
    list of (argv, lines)
        ``lines`` is None for a command run alone (``ip netns exec``).

    Examples
    --------
    >>> batches([["ip", "netns", "add", "a"], ["ip", "netns", "add", "b"],
    ...          ["ip", "-n", "a", "link", "set", "lo", "up"],
    ...          ["ip", "netns", "exec", "a", "true"]])  # doctest: +NORMALIZE_WHITESPACE
    [(['ip', '-batch', '-'], ['netns add a', 'netns add b']),
     (['ip', '-n', 'a', '-batch', '-'], ['link set lo up']),
     (['ip', 'netns', 'exec', 'a', 'true'], None)]
    """
    out: list[tuple[list[str], list[str] | None]] = []
    for key, group in groupby(commands, key=_batch_key):
        group = list(group)
        if not key:
            out += [(argv, None) for argv in group]
        else:
            out.append(([*key, "-batch", "-"], [" ".join(a[len(key):]) for a in group]))
    return out
