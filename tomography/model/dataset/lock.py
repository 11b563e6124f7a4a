"""One writer per dataset, and writes that leave no half file behind.

:class:`DatasetLock` is the lock every writer of a dataset directory holds
for its lifetime (measurements, simulations, ``synthetic``, imports,
multicasts): an ``fcntl.flock`` on the file ``.lock`` inside the directory,
taken before anything there is written or removed.  The kernel drops it when
the process ends, however it ends, so a killed run never leaves a stale lock;
a second writer is refused at once with the holder's process id, command and
start time, which the holder writes into the lock file.  (A file system that
offers no locks at all, ENOLCK, is written unguarded, as before.)  Readers take no lock
and ignore ``.lock`` (it is not a file of the format).  The lock is
re-entrant within a process: a command that holds it may open a
:class:`~tomography.model.dataset.MeasurementWriter` on the same directory.

:func:`write_atomic` writes a small file whole or not at all (a temporary
file in the same directory, fsynced, renamed over the target), so that a full
disk never leaves a 0-byte ``meta.json``.

Files a writer creates get mode 0644 and directories 0755 at most (the
umask can narrow them, never widen them): a dataset is never group- or
world-writable, whatever the umask.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import shutil
import socket
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tomography.model.errors import DatasetError

__all__ = ["LOCK_NAME", "FILE_MODE", "DIR_MODE", "DatasetLock", "lock_holder", "write_atomic",
           "file_opener", "make_dirs"]

LOCK_NAME = ".lock"
"""The lock file inside a dataset directory (not a file of the format: readers skip it)."""

FILE_MODE = 0o644
"""The widest mode of a file a writer creates: never group- or world-writable."""

DIR_MODE = 0o755
"""The widest mode of a directory a writer creates."""

_HELD: dict[tuple[int, int], "_Hold"] = {}
"""The locks this process holds, by the directory's (device, inode): re-entrancy."""


class _Hold:
    """One lock held by this process: its file descriptor and how many hold it."""

    def __init__(self, fd: int, lock_path: Path) -> None:
        self.fd, self.lock_path, self.count = fd, lock_path, 1


def file_opener(path: str, flags: int) -> int:
    """An ``opener`` for :func:`open` creating files with :data:`FILE_MODE` (not 0666).

    Examples
    --------
    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> old = os.umask(0)
    >>> with open(d + "/f.csv", "w", opener=file_opener) as fh:
    ...     _ = fh.write("a\\n")
    >>> _ = os.umask(old)
    >>> oct(os.stat(d + "/f.csv").st_mode & 0o777)
    '0o644'
    """
    return os.open(path, flags | os.O_CLOEXEC, FILE_MODE)


def make_dirs(path: str | os.PathLike[str]) -> list[Path]:
    """Create ``path`` and its missing parents with :data:`DIR_MODE`; those created, top first.

    Raises
    ------
    DatasetError
        When a directory cannot be created (permission, full disk, a file in the way),
        naming it.

    Examples
    --------
    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> [p.name for p in make_dirs(d + "/a/b")]
    ['a', 'b']
    >>> make_dirs(d + "/a/b")
    []
    """
    path = Path(path)
    missing = []
    probe = path
    while not probe.exists() and probe != probe.parent:
        if probe.is_symlink():     # a dangling link: creating through it is not ours to do
            break
        missing.append(probe)
        probe = probe.parent
    created = []
    for directory in reversed(missing):
        try:
            os.mkdir(directory, DIR_MODE)
        except FileExistsError:
            continue
        except OSError as exc:
            raise DatasetError(f"cannot create the directory ({exc.strerror or exc})",
                               path=directory) from None
        created.append(directory)
    if not path.is_dir():
        raise DatasetError("is not a directory: a dataset is a directory", path=path)
    return created


def write_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all: a temporary file, fsynced, renamed.

    A full disk or a lost mount leaves ``path`` as it was (and no temporary
    file) and raises :class:`~tomography.model.errors.DatasetError` naming ``path``.

    Examples
    --------
    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> write_atomic(d + "/meta.json", '{"a": 1}\\n')
    >>> open(d + "/meta.json").read()
    '{"a": 1}\\n'
    """
    target = Path(path)
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        try:
            with open(temporary, "w", encoding="utf-8", opener=file_opener) as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(temporary, target)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise DatasetError(f"cannot write ({exc.strerror or exc})", path=target) from None


def lock_holder(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """What the lock file of the dataset ``path`` says of its writer, or None.

    The keys are ``pid``, ``command``, ``started`` and ``host``.  A lock file
    stays behind only when its writer was killed; it is no lock then (the
    kernel released it): :class:`DatasetLock` says whether one is held.

    Examples
    --------
    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> lock_holder(d) is None
    True
    >>> with DatasetLock(d, command="tomography simulate -o d"):
    ...     lock_holder(d)["command"]
    'tomography simulate -o d'
    """
    try:
        with open(Path(path) / LOCK_NAME, encoding="utf-8", errors="replace") as fh:
            text = fh.read(4096)
    except OSError:
        return None
    return _parse_holder(text)


def _parse_holder(text: str) -> dict[str, Any] | None:
    try:
        holder = json.loads(text)
    except ValueError:
        return None
    return holder if isinstance(holder, dict) else None


def _describe(holder: dict[str, Any] | None) -> str:
    if not holder:
        return "another process (it has not said which yet)"
    where = f" on {holder['host']}" if holder.get("host") and \
        holder.get("host") != socket.gethostname() else ""
    return (f"process {holder.get('pid', '?')}{where} ({holder.get('command', '?')}), "
            f"started {holder.get('started', '?')}")


def _this_command() -> str:
    """This process's command line, ``python -m tomography`` shown as ``tomography``."""
    argv = list(sys.argv) or ["?"]
    first = Path(argv[0])
    if first.name == "__main__.py" and first.parent.name == "tomography":
        argv[0] = "tomography"
    else:
        argv[0] = first.name or argv[0]
    return " ".join(argv)[:400]


class DatasetLock:
    """The one-writer lock of a dataset directory, held from :meth:`acquire` to :meth:`release`.

    Parameters
    ----------
    path : str or path-like
        The dataset directory; created (with its missing parents) if missing.
    command : str, optional
        What the lock file says the holder runs (default: this process's
        command line).
    cleanup : bool, default True
        On release, remove the directories the lock created when no dataset
        came of them (no ``meta.json``): a run that could not start leaves
        nothing behind.

    Raises
    ------
    DatasetError
        From :meth:`acquire`: another process writes the dataset (naming its
        pid, command and start time), or the directory or its lock file
        cannot be created (naming it).

    Examples
    --------
    >>> import tempfile
    >>> d = tempfile.mkdtemp() + "/run"
    >>> with DatasetLock(d) as lock:
    ...     (lock.path / ".lock").exists()
    True
    >>> import os; os.path.exists(d)      # nothing came of it: removed
    False
    """

    def __init__(self, path: str | os.PathLike[str], *, command: str | None = None,
                 cleanup: bool = True) -> None:
        self.path = Path(path)
        self.command = command
        self.cleanup = cleanup
        self.created: list[Path] = []
        self._key: tuple[int, int] | None = None

    @property
    def held(self) -> bool:
        """Whether this object holds the lock."""
        return self._key is not None

    def acquire(self) -> "DatasetLock":
        """Take the lock, or raise :class:`~tomography.model.errors.DatasetError` at once."""
        if self._key is not None:
            return self
        self.created = make_dirs(self.path)
        try:
            self._take()
        except BaseException:
            self._remove_created()
            raise
        return self

    def _take(self) -> None:
        st = os.stat(self.path)
        key = (st.st_dev, st.st_ino)
        if key in _HELD:                       # this process writes it already
            _HELD[key].count += 1
            self._key = key
            return
        lock_path = self.path / LOCK_NAME
        while True:
            try:
                fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW,
                             FILE_MODE)
            except OSError as exc:
                raise DatasetError(f"cannot write here ({exc.strerror or exc}): a writer "
                                   "needs its lock file", path=lock_path) from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                if exc.errno in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS):
                    break      # a file system without locks: written as before, unguarded
                if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    os.close(fd)
                    raise DatasetError(f"cannot lock ({exc.strerror or exc})",
                                       path=lock_path) from None
                holder = self._read_holder(fd)
                os.close(fd)
                raise DatasetError(f"another writer has this dataset: {_describe(holder)}; "
                                   "wait until it ends or stop it (one writer at a time)",
                                   path=self.path) from None
            try:                               # the file we locked is still the lock file?
                same = os.fstat(fd).st_ino == os.stat(lock_path, follow_symlinks=False).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)                       # its holder removed it as we opened it: again
        holder = {"pid": os.getpid(), "command": self.command or _this_command(),
                  "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                  "host": socket.gethostname()}
        try:                                   # best effort: a full disk still locks
            os.ftruncate(fd, 0)
            os.pwrite(fd, (json.dumps(holder) + "\n").encode(), 0)
        except OSError:
            pass
        _HELD[key] = _Hold(fd, lock_path)
        self._key = key

    @staticmethod
    def _read_holder(fd: int) -> dict[str, Any] | None:
        """The holder's record; it may be a moment late in writing it."""
        deadline = time.monotonic() + 1.0
        while True:
            try:
                holder = _parse_holder(os.pread(fd, 4096, 0).decode("utf-8", "replace"))
            except OSError:
                holder = None
            if holder is not None or time.monotonic() > deadline:
                return holder
            time.sleep(0.05)

    def release(self) -> None:
        """Let the lock go (the last holder in this process removes the lock file)."""
        key, self._key = self._key, None
        if key is None:
            return
        hold = _HELD[key]
        hold.count -= 1
        if hold.count:
            return
        del _HELD[key]
        try:
            os.unlink(hold.lock_path)          # still ours: nobody else holds it now
        except OSError:
            pass
        os.close(hold.fd)
        self._remove_created()

    def _remove_created(self) -> None:
        """The directories this lock created, when no dataset came of them."""
        if not (self.cleanup and self.created) or (self.path / "meta.json").exists():
            return
        shutil.rmtree(self.created[0], ignore_errors=True)
        self.created = []

    def __enter__(self) -> "DatasetLock":
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()

    def __del__(self) -> None:        # a writer dropped without close(): let the lock go
        try:
            self.release()
        except Exception:
            pass

