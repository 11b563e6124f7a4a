"""Checks of a dataset's files that name the file, line and field at fault.

The helpers of the readers (:mod:`tomography.model.dataset.tables`,
:mod:`tomography.model.dataset.meta`): a path must be a regular file, a CSV file
needs its header and UTF-8 text, every value of a column must parse (an
integer, a number, a known host), and a machine-written file must end with
a line end (else a write was cut short: :func:`at_line_end` refuses it,
:func:`drop_cut_line` repairs it for ``--resume``).  Each raises
:class:`~tomography.model.errors.DatasetError` on the first fault.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import BinaryIO, Iterable

import numpy as np
import pandas as pd

from tomography.model import files
from tomography.model.dataset.schema import FILE_LIMITS
from tomography.model.errors import DatasetError

__all__ = ["regular_file", "open_regular", "file_limit", "cut_short", "at_line_end",
           "drop_cut_line", "read_csv", "fail_at", "integers", "floats", "known_hosts",
           "CONTROL", "FREE_TEXT_COLUMNS"]

DEFAULT_LIMIT = 2**30
"""The largest file of another name read as a table (bytes)."""

CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
"""A control character: none may be in a host name, a label, a number."""
_CONTROL_IN_TEXT = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
FREE_TEXT_COLUMNS = frozenset({"error"})
"""Columns of free text (a probe's error message): tabs and line ends allowed there."""

def file_limit(path: Path) -> int:
    """The largest size read of a dataset file
    (:data:`~tomography.model.dataset.schema.FILE_LIMITS`).

    Examples
    --------
    >>> file_limit(Path("run/hosts.csv")) // 2**20, file_limit(Path("x.csv")) // 2**30
    (64, 1)
    """
    return FILE_LIMITS.get(Path(path).name, DEFAULT_LIMIT)


def regular_file(path: Path, limit: int | None = None) -> None:
    """Refuse a missing path, a directory, a device, a pipe or a socket, and a file larger
    than ``limit`` bytes (by default :func:`file_limit`), before anything opens it
    (:func:`tomography.model.files.regular_file`).

    Examples
    --------
    >>> regular_file(Path("/dev/zero"))
    Traceback (most recent call last):
    ...
    tomography.model.errors.DatasetError: /dev/zero: is not a regular file (a character device), expected a file
    """
    files.regular_file(path, file_limit(path) if limit is None else limit)


def open_regular(path: Path, limit: int | None = None) -> BinaryIO:
    """``path`` opened to read bytes, once :func:`regular_file` accepts it
    (:func:`tomography.model.files.open_regular`, the limit by default :func:`file_limit`).

    Examples
    --------
    >>> import tempfile
    >>> f = Path(tempfile.mkdtemp()) / "hosts.csv"
    >>> _ = f.write_text("host,address" + chr(10))
    >>> with open_regular(f) as fh:
    ...     fh.read()
    b'host,address\\n'
    """
    return files.open_regular(path, file_limit(path) if limit is None else limit)


def cut_short(path: Path) -> bool:
    """Whether a file's last line has no line end (looks at the last byte only)."""
    with open_regular(path) as fh:
        if fh.seek(0, os.SEEK_END) == 0:
            return False
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) != b"\n"


def at_line_end(path: Path) -> None:
    """Refuse a machine-written file whose last line has no line end: it was cut short."""
    if cut_short(path):
        with open_regular(path) as fh:
            lines = sum(1 for _ in fh)
        raise DatasetError("the last line has no line end: the file was cut short (a write "
                           "interrupted?); remove that line or re-measure", path=path,
                           line=lines)


def drop_cut_line(path: Path) -> None:
    """Remove a last line that has no line end (a write interrupted), keeping the rest."""
    if cut_short(path):
        with path.open("rb+") as fh:
            fh.truncate(fh.read().rfind(b"\n") + 1)


_FIELDS = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")


def read_csv(path: Path, required: Iterable[str]) -> pd.DataFrame:
    """A CSV file as text columns, refused unless UTF-8 with the ``required`` columns.

    Also refused, naming the line and the field: a row with more fields than
    the header (extras would be dropped or shift the row), a column named
    twice in the header, and a control character (NUL, escape ...) in a value
    (tabs and line ends are allowed in the free text of :data:`FREE_TEXT_COLUMNS`).
    The file must be a regular one, within :func:`file_limit`.

    Examples
    --------
    >>> import tempfile
    >>> f = Path(tempfile.mkdtemp()) / "hosts.csv"
    >>> _ = f.write_text("host,address" + chr(10) + "a,10.0.0.1,x" + chr(10))
    >>> read_csv(f, ["host"])
    Traceback (most recent call last):
    ...
    tomography.model.errors.DatasetError: ...hosts.csv, line 2, field 'field 3': 3 fields, but the header names 2 columns (a value with a comma not quoted?)
    """
    with open_regular(path) as fh:
        try:
            table = pd.read_csv(fh, header=None, dtype=str, keep_default_na=False,
                                skipinitialspace=True, encoding="utf-8-sig")
        except pd.errors.EmptyDataError:
            raise DatasetError("empty file: expected a header line", path=path,
                               line=1) from None
        except pd.errors.ParserError as exc:
            found = _FIELDS.search(str(exc))
            if found:
                header, line, saw = map(int, found.groups())
                raise DatasetError(f"{saw} fields, but the header names {header} columns (a "
                                   "value with a comma not quoted?)", path=path, line=line,
                                   field=f"field {header + 1}") from None
            raise DatasetError(f"malformed CSV: {exc}", path=path) from None
        except UnicodeDecodeError as exc:
            raise DatasetError(f"not UTF-8 text (byte {exc.start}): binary or another "
                               "encoding", path=path) from None
    names = [str(c) for c in table.iloc[0]]
    for number, name in enumerate(names, start=1):
        if CONTROL.search(name):
            raise DatasetError(f"control character in a column name: {name!r}", path=path,
                               line=1, field=f"field {number}")
        if names.index(name) != number - 1:
            raise DatasetError("column named twice in the header", path=path, line=1,
                               field=name)
    frame = table.iloc[1:].reset_index(drop=True)
    frame.columns = names
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise DatasetError(f"missing column(s) {', '.join(missing)} in the header",
                           path=path, line=1, field=missing[0])
    for column in frame.columns:
        pattern = _CONTROL_IN_TEXT if column in FREE_TEXT_COLUMNS else CONTROL
        bad = frame[column].str.contains(pattern, regex=True).to_numpy(dtype=bool)
        fail_at(bad, frame, path, column, "control character in the value")
    return frame


def fail_at(mask: np.ndarray, frame: pd.DataFrame, path: Path, column: str, what: str) -> None:
    """Raise for the first row where ``mask`` is true (line = row + 2), the value shown cut
    to 40 characters."""
    bad = np.flatnonzero(mask)
    if bad.size:
        row = int(bad[0])
        value = repr(frame[column].iloc[row])
        shown = value if len(value) <= 40 else value[:40] + "..."
        raise DatasetError(f"{what}: {shown}", path=path, line=row + 2, field=column)


def integers(frame: pd.DataFrame, column: str, path: Path, *, minimum: int | None = 0,
             maximum: int | None = None) -> np.ndarray:
    """A column's values as integers (from ``minimum`` to ``maximum`` unless None), refused
    otherwise."""
    text = frame[column].str.strip()
    valid = text.str.fullmatch(r"[+-]?\d+").to_numpy(dtype=bool)
    fail_at(~valid, frame, path, column, "not an integer")
    digits = text.str.lstrip("+-").str.lstrip("0").str.len().to_numpy()
    fail_at(digits > 18, frame, path, column, "too large (more than 18 digits)")
    values = text.astype(np.int64).to_numpy()
    if minimum is not None:
        fail_at(values < minimum, frame, path, column, f"must be >= {minimum}")
    if maximum is not None:
        fail_at(values > maximum, frame, path, column,
                f"more than {maximum}, beyond any real dataset")
    return values


def floats(frame: pd.DataFrame, column: str, path: Path, *, allow_empty: bool) -> np.ndarray:
    """A column's values as finite numbers >= 0 (NaN where empty, if allowed)."""
    text = frame[column].str.strip()
    empty = (text == "").to_numpy(dtype=bool)
    if not allow_empty:
        fail_at(empty, frame, path, column, "missing value")
    values = pd.to_numeric(text.where(~empty, "nan"), errors="coerce").to_numpy(dtype=float)
    bad = np.isnan(values) & ~empty
    fail_at(bad, frame, path, column, "not a number")
    fail_at(np.isinf(values) | (values < 0), frame, path, column, "must be finite and >= 0")
    return values


def known_hosts(frame: pd.DataFrame, column: str, path: Path, known: set[str]) -> None:
    """Refuse the first value of a column that is not a host of ``known``."""
    unknown = ~frame[column].isin(known).to_numpy(dtype=bool)
    fail_at(unknown, frame, path, column, "unknown host (not in hosts.csv)")
