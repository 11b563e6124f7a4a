"""``concurrency.csv``: the concurrency test's verdicts, beside a probe dataset's ``probes.csv``.

One row per two clusters (``tomography measure iperf3 --concurrency``): the
pair of hosts tested in each, pair A's rate alone and beside pair B, the
drop, the threshold it had to pass and the verdict.  The file is written
row by row as each verdict is reached (:class:`ConcurrencyWriter`) and read
through the bounded, checked reader every dataset file goes through
(:func:`read_concurrency`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from tomography.model.dataset.incremental import csv_writer
from tomography.model.dataset.lock import file_opener
from tomography.model.dataset.validation import fail_at, read_csv
from tomography.model.errors import DatasetError

__all__ = ["CONCURRENCY_COLUMNS", "ConcurrencyWriter", "read_concurrency"]

CONCURRENCY_COLUMNS = ("cluster_a", "cluster_b", "a_src", "a_dst", "b_src", "b_dst",
                       "a_alone_bps", "a_alone_sd", "a_together_bps", "b_together_bps",
                       "drop", "threshold", "shared", "repeats")
"""The columns of ``concurrency.csv``."""

_NUMBERS = ("a_alone_bps", "a_alone_sd", "a_together_bps", "b_together_bps", "drop",
            "threshold")
_REQUIRED = ("cluster_a", "cluster_b", "drop", "threshold", "shared")


def read_concurrency(path: str | Path) -> pd.DataFrame:
    """The verdicts of a concurrency run: one row per two clusters, numbers as numbers.

    Parameters
    ----------
    path : path
        The dataset directory, or its ``concurrency.csv``.

    Raises
    ------
    DatasetError
        No such file, or a file no concurrency run writes (as every dataset
        file: a pipe, a device, an oversize or binary file, a missing
        column, a number that is none, a verdict that is not true or false),
        naming the file, line and field.

    Examples
    --------
    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> _ = (d / "concurrency.csv").write_text(
    ...     "cluster_a,cluster_b,drop,threshold,shared" + chr(10) + "c1,c2,0.5,0.1,True" + chr(10))
    >>> read_concurrency(d)[["cluster_a", "cluster_b", "drop", "shared"]].values.tolist()
    [['c1', 'c2', 0.5, True]]
    """
    path = Path(path)
    file = path / "concurrency.csv" if path.is_dir() else path
    if not file.exists():
        raise DatasetError("no concurrency results (run tomography measure iperf3 "
                           "--concurrency)", path=file)
    frame = read_csv(file, _REQUIRED)
    for column in _NUMBERS:
        if column not in frame.columns:
            continue
        text = frame[column].str.strip().str.lower()
        values = pd.to_numeric(text.where(~text.isin(("", "nan")), "nan"), errors="coerce")
        fail_at((values.isna() & ~text.isin(("", "nan"))).to_numpy(dtype=bool), frame, file,
                column, "not a number")
        fail_at(np.isinf(values.to_numpy(dtype=float)), frame, file, column, "not finite")
        frame[column] = values.astype(float)
    verdict = frame["shared"].str.strip().str.lower()
    fail_at(~verdict.isin(("true", "false", "1", "0")).to_numpy(dtype=bool), frame, file,
            "shared", "not true or false")
    frame["shared"] = verdict.isin(("true", "1"))
    return frame


class ConcurrencyWriter:
    """Write ``concurrency.csv`` in a dataset directory, one verdict at a time (each row
    flushed, so that a run that is stopped keeps the verdicts it reached).

    Examples
    --------
    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> w = ConcurrencyWriter(d)
    >>> w.add({**dict.fromkeys(CONCURRENCY_COLUMNS, 0.0), "cluster_a": "c1", "cluster_b": "c2",
    ...        "shared": False})
    >>> read_concurrency(d)["shared"].tolist()
    [False]
    """

    def __init__(self, directory: str | Path) -> None:
        self.path = Path(directory) / "concurrency.csv"
        with open(self.path, "w", newline="", encoding="utf-8", opener=file_opener) as fh:
            csv_writer(fh).writerow(CONCURRENCY_COLUMNS)

    def add(self, row: Mapping[str, Any]) -> None:
        """Append one verdict (the columns of :data:`CONCURRENCY_COLUMNS`)."""
        with open(self.path, "a", newline="", encoding="utf-8", opener=file_opener) as fh:
            csv_writer(fh).writerow([row[c] for c in CONCURRENCY_COLUMNS])
