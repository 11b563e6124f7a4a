"""Who is using a testbed: a claim, held while a process raises, measures on or removes it.

Two measurements in one testbed would share its links, and each one's peers
would disturb the other's counts without a word.  So whoever runs peers in a
testbed holds its *claim* for as long as they run: an exclusive ``flock`` on
``/run/tomography/testbed-NAME.lock``.  A claim another process holds is
refused, naming that process (from ``/proc/locks``).  The kernel drops the
lock when its holder ends, even by SIGKILL, so a crash never leaves a testbed
claimed.

Claims are re-entrant within a process: ``measure --testbed`` claims the
testbed, then raises it (:func:`measure.testbed.up` claims it too) and takes
it down under the same claim.  The lock file is removed when the outermost
claim is released; a process that opened it just before finds, once it has
the lock, that the file it locked is no longer the one on disk, and tries
again.
"""

from __future__ import annotations

import fcntl
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from measure.testbed import names
from measure.testbed.names import TestbedError

__all__ = ["claim", "acquire", "release", "holder", "describe", "lock_path"]

_held: dict[str, list[int]] = {}  # name -> [descriptor of its lock file, depth]


def lock_path(name: str) -> Path:
    """The lock file of testbed ``name``.

    Examples
    --------
    >>> lock_path("demo").name
    'testbed-demo.lock'
    """
    names.prefix(name)
    return names.STATE_DIR / f"testbed-{name}.lock"


def _inode(path: Path) -> int | None:
    try:
        return path.stat().st_ino
    except FileNotFoundError:
        return None


def acquire(name: str) -> bool:
    """Take testbed ``name``'s claim for this process, without waiting.

    Returns
    -------
    bool
        True when this process holds the claim now (it may have held it
        already: one more :func:`release` is then needed), False when
        another process holds it.

    Raises
    ------
    TestbedError
        When the lock file cannot be made (no permission on ``/run``).

    Examples
    --------
    >>> import tempfile
    >>> saved, names.STATE_DIR = names.STATE_DIR, Path(tempfile.mkdtemp())  # a scratch place
    >>> acquire("demo"), acquire("demo")  # the second within the same process
    (True, True)
    >>> release("demo"); lock_path("demo").exists()
    True
    >>> release("demo"); lock_path("demo").exists()
    False
    >>> names.STATE_DIR = saved
    """
    if name in _held:
        _held[name][1] += 1
        return True
    path = lock_path(name)
    while True:
        try:
            names.state_dir()   # 0700, whatever the umask
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            raise TestbedError(f"cannot make the testbed's lock file {path}: {exc}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        if os.fstat(fd).st_ino == _inode(path):
            _held[name] = [fd, 1]
            return True
        os.close(fd)  # removed (or replaced) by its last holder meanwhile: lock the new one


def release(name: str) -> None:
    """Give back a claim taken with :func:`acquire`; the outermost one removes the lock file."""
    entry = _held[name]
    entry[1] -= 1
    if entry[1] == 0:
        del _held[name]
        lock_path(name).unlink(missing_ok=True)
        os.close(entry[0])


@contextmanager
def claim(name: str) -> Iterator[None]:
    """Hold testbed ``name`` for this process while the ``with`` block runs.

    Raises
    ------
    TestbedError
        When another process holds it, naming that process.

    Examples
    --------
    >>> import tempfile
    >>> saved, names.STATE_DIR = names.STATE_DIR, Path(tempfile.mkdtemp())  # a scratch place
    >>> with claim("demo"):
    ...     holder("demo")["pid"] == os.getpid(), holder("demo")["command"] is not None
    (True, True)
    >>> holder("demo") is None
    True
    >>> names.STATE_DIR = saved
    """
    if not acquire(name):
        raise TestbedError(f"testbed {name!r} is in use by {describe(holder(name))}: wait "
                           "until it ends, or use another --name (two runs in one testbed "
                           "would disturb each other's measurements)")
    try:
        yield
    finally:
        release(name)


def holder(name: str) -> dict[str, Any] | None:
    """The process holding testbed ``name``'s claim, or None when nobody does.

    Returns
    -------
    dict or None
        ``pid`` (None when the lock is held by a process this one cannot see,
        e.g. in another PID namespace) and ``command``, its command line.

    Examples
    --------
    >>> holder("nosuch") is None
    True
    """
    try:
        st = lock_path(name).stat()
    except FileNotFoundError:
        return None
    key = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    try:
        with open("/proc/locks", encoding="ascii") as table:
            entries = [line.split() for line in table]
    except OSError:
        entries = []
    for fields in entries:
        if len(fields) > 5 and fields[1] == "FLOCK" and fields[5] == key:  # "->": a waiter
            pid = int(fields[4]) if int(fields[4]) > 0 else None
            return {"pid": pid, "command": _command(pid)}
    return None


def _command(pid: int | None) -> str | None:
    """The command line of ``pid`` as typed: ``tomography measure ...`` rather than
    ``/path/to/python /path/to/tomography measure ...``."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes() if pid else b""
    except OSError:
        return None
    argv = raw.decode(errors="replace").split("\0")[:-1]
    if len(argv) > 1 and Path(argv[0]).name.startswith("python") \
            and not argv[1].startswith("-"):
        argv = argv[1:]                 # a script run by the interpreter: the script
    return " ".join([Path(argv[0]).name, *argv[1:]]) if argv else None


def describe(who: dict[str, Any] | None) -> str:
    """A holder as a person reads it.

    Examples
    --------
    >>> describe({"pid": 4242, "command": "tomography measure bittorrent -o run"})
    'process 4242 (tomography measure bittorrent -o run)'
    >>> describe(None)
    'another process'
    """
    if not who or not who.get("pid"):
        return "another process"
    command = " ".join((who.get("command") or "?").split())  # one line, whatever argv held
    return f"process {who['pid']} ({command if len(command) <= 120 else command[:117] + '...'})"
