"""The one guard before a file named from outside is read: what it is, how large, opened safely.

Every reader of outside input (a dataset's files, a hosts file, a topology,
a Gauge file, an iperf3 report, an MPI hierarchy file) opens its file with
:func:`open_regular`, which refuses, naming the file, before a byte is read:

* a missing path, a directory, a device (``/dev/zero``), a socket;
* a named pipe (FIFO), unless the reader takes pipes (``pipes=True``: a
  topology given as ``<(...)`` of the shell; it then reads in bounded
  chunks, :func:`tomography.model.safe_load.read_stream`);
* a regular file larger than the reader's ``limit``.

The file is opened without blocking and checked again through the open
descriptor, so that a pipe put in its place between the check and the open
cannot stall the reader.  The module needs the standard library alone (the
launchers' hosts files are read before pandas is imported).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

from tomography.model.errors import DatasetError

__all__ = ["regular_file", "open_regular"]

_KINDS = ((stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISDIR, "a directory"))


def _size(n: int) -> str:
    return (f"{n // 2**30} GiB" if n >= 2**30 and n % 2**30 == 0 else
            f"{n // 2**20} MiB" if n >= 2**20 else f"{n} bytes")


def _refuse(path: Path, st: os.stat_result, limit: int, pipes: bool, kind: str) -> None:
    if stat.S_ISFIFO(st.st_mode) and pipes:
        return
    if not stat.S_ISREG(st.st_mode):
        what = next((text for test, text in _KINDS if test(st.st_mode)), "of another kind")
        raise DatasetError("is a directory, expected a file" if stat.S_ISDIR(st.st_mode)
                           else f"is not a regular file ({what}), expected a file", path=path)
    if st.st_size > limit:
        raise DatasetError(f"{st.st_size} bytes, more than the {_size(limit)} any real {kind} "
                           "has: not read", path=path)


def regular_file(path: str | os.PathLike[str], limit: int, *, pipes: bool = False,
                 kind: str = "dataset's file") -> os.stat_result:
    """Refuse a missing path, a directory, a device, a socket, a pipe (unless ``pipes``) and
    a file larger than ``limit`` bytes, before anything opens it; its ``stat`` otherwise.

    A symbolic link is followed: a link to a regular file is that file.

    Examples
    --------
    >>> regular_file("/dev/zero", 2**20)
    Traceback (most recent call last):
    ...
    tomography.model.errors.DatasetError: /dev/zero: is not a regular file (a character device), expected a file
    """
    path = Path(path)
    try:
        st = path.stat()
    except FileNotFoundError:
        raise DatasetError("missing file", path=path) from None
    except OSError as exc:
        raise DatasetError(f"cannot read ({exc.strerror or exc})", path=path) from None
    _refuse(path, st, limit, pipes, kind)
    return st


def open_regular(path: str | os.PathLike[str], limit: int, *, pipes: bool = False,
                 kind: str = "dataset's file") -> BinaryIO:
    """``path`` opened to read bytes, once :func:`regular_file` accepts it.

    Opened without blocking (a pipe nobody writes to does not wait for a
    writer) and checked again through the open file.

    Examples
    --------
    >>> import tempfile
    >>> f = Path(tempfile.mkdtemp()) / "hosts.csv"
    >>> _ = f.write_text("host,address" + chr(10))
    >>> with open_regular(f, 2**20) as fh:
    ...     fh.read()
    b'host,address\\n'
    """
    path = Path(path)
    regular_file(path, limit, pipes=pipes, kind=kind)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
                     | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise DatasetError(f"cannot read ({exc.strerror or exc})", path=path) from None
    try:
        _refuse(path, os.fstat(fd), limit, pipes, kind)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")
