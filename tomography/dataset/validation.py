"""Checks of a dataset's files that name the file, line and field at fault.

The helpers of the readers (:mod:`tomography.dataset.tables`,
:mod:`tomography.dataset.meta`): a path must be a regular file, a CSV file
needs its header and UTF-8 text, every value of a column must parse (an
integer, a number, a known host), and a machine-written file must end with
a line end (else a write was cut short: :func:`at_line_end` refuses it,
:func:`drop_cut_line` repairs it for ``--resume``).  Each raises
:class:`~tomography.errors.DatasetError` on the first fault.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

import numpy as np
import pandas as pd

from tomography.errors import DatasetError

__all__ = ["regular_file", "cut_short", "at_line_end", "drop_cut_line", "read_csv", "fail_at",
           "integers", "floats", "known_hosts"]


def regular_file(path: Path) -> None:
    """Refuse a missing path, a directory, a device or a pipe, before reading it."""
    if not path.exists():
        raise DatasetError("missing file", path=path)
    if not path.is_file():
        kind = "a directory" if path.is_dir() else "not a regular file (a device or a pipe?)"
        raise DatasetError(f"is {kind}, expected a file", path=path)


def cut_short(path: Path) -> bool:
    """Whether a file's last line has no line end (looks at the last byte only)."""
    with path.open("rb") as fh:
        if fh.seek(0, os.SEEK_END) == 0:
            return False
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) != b"\n"


def at_line_end(path: Path) -> None:
    """Refuse a machine-written file whose last line has no line end: it was cut short."""
    if cut_short(path):
        with path.open("rb") as fh:
            lines = sum(1 for _ in fh)
        raise DatasetError("the last line has no line end: the file was cut short (a write "
                           "interrupted?); remove that line or re-measure", path=path,
                           line=lines)


def drop_cut_line(path: Path) -> None:
    """Remove a last line that has no line end (a write interrupted), keeping the rest."""
    if cut_short(path):
        with path.open("rb+") as fh:
            fh.truncate(fh.read().rfind(b"\n") + 1)


def read_csv(path: Path, required: Iterable[str]) -> pd.DataFrame:
    """A CSV file as text columns, refused unless UTF-8 with the ``required`` columns."""
    regular_file(path)
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False, skipinitialspace=True,
                            encoding="utf-8-sig")
    except pd.errors.EmptyDataError:
        raise DatasetError("empty file: expected a header line", path=path, line=1) from None
    except pd.errors.ParserError as exc:
        raise DatasetError(f"malformed CSV: {exc}", path=path) from None
    except UnicodeDecodeError as exc:
        raise DatasetError(f"not UTF-8 text (byte {exc.start}): binary or another encoding",
                           path=path) from None
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise DatasetError(f"missing column(s) {', '.join(missing)} in the header",
                           path=path, line=1, field=missing[0])
    return frame


def fail_at(mask: np.ndarray, frame: pd.DataFrame, path: Path, column: str, what: str) -> None:
    """Raise for the first row where ``mask`` is true (line = row + 2)."""
    bad = np.flatnonzero(mask)
    if bad.size:
        row = int(bad[0])
        value = frame[column].iloc[row]
        raise DatasetError(f"{what}: {value!r}", path=path, line=row + 2, field=column)


def integers(frame: pd.DataFrame, column: str, path: Path, *, minimum: int | None = 0) -> np.ndarray:
    """A column's values as integers (at least ``minimum`` unless None), refused otherwise."""
    text = frame[column].str.strip()
    valid = text.str.fullmatch(r"[+-]?\d+").to_numpy(dtype=bool)
    fail_at(~valid, frame, path, column, "not an integer")
    digits = text.str.lstrip("+-").str.lstrip("0").str.len().to_numpy()
    fail_at(digits > 18, frame, path, column, "too large (more than 18 digits)")
    values = text.astype(np.int64).to_numpy()
    if minimum is not None:
        fail_at(values < minimum, frame, path, column, f"must be >= {minimum}")
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
