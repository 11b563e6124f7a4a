"""The multicast dataset: its files, read as the measurement datasets are, checked at the door.

A multicast dataset (``tomography-multicast/1``, docs/formats.md) is five
files: ``meta.json`` (how it was made), ``hosts.csv``, ``multicasts.csv`` (one
row per multicast), ``receivers.csv`` (one per receiver and multicast) and
``streams.csv`` (one per receiver, multicast and stream).  Every reader
(``info``, ``report``, ``multicast --resume``, :func:`read_multicasts`)
goes through :func:`read_tables`, which refuses in one line naming the
file, the line and the field, before anything is shown or written:

* a file missing, not a regular file (a FIFO, a link to ``/dev/zero``),
  larger than the measurement datasets' limits, not UTF-8, cut inside its
  last line, with a column missing or a row longer than its header
  (:mod:`tomography.model.dataset.validation`);
* ``meta.json`` values of the wrong type or range
  (:func:`tomography.model.dataset.meta_schema.check_multicast_meta`), a root or
  method it does not list;
* a value that no multicast gives: a negative or infinite throughput,
  ``complete`` other than true or false, a method the dataset did not run,
  a multicast listed twice, a run id that is not its method and repeat, a
  payload or a root other than the dataset's, a receiver not in
  ``hosts.csv``, a host list that differs between ``meta.json`` and
  ``hosts.csv``.

Rows of ``receivers.csv`` and ``streams.csv`` whose multicast never reached
``multicasts.csv`` (a run stopped while writing them) are left out; ``--resume``
removes them (:func:`tomography.model.dataset.validation.drop_cut_line` first cuts a
line a stopped write left half-written).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tomography.model.dataset.meta import load_json
from tomography.model.dataset.meta_schema import check_multicast_meta
from tomography.model.dataset.schema import MAX_FILE_BYTES
from tomography.model.dataset.validation import (at_line_end, fail_at, floats, integers,
                                                 known_hosts, read_csv, regular_file)
from tomography.model.errors import DatasetError

__all__ = ["FORMAT", "FILES", "MULTICAST_COLUMNS", "RECEIVER_COLUMNS", "STREAM_COLUMNS",
           "read_meta", "read_tables", "is_multicast_dataset", "MAX_STREAMS_PER_PLAN"]

FORMAT = "tomography-multicast/1"
"""The ``format`` of a multicast dataset's ``meta.json``."""

MULTICAST_COLUMNS = ("run", "method", "repeat", "root", "bytes", "streams", "pacing",
                     "predicted_Bps", "achieved_Bps", "completion_s", "complete",
                     "receivers_complete", "started", "note")
RECEIVER_COLUMNS = ("run", "method", "repeat", "receiver", "bytes", "expected_bytes",
                    "digest_ok", "first_s", "last_s", "throughput_Bps", "complete", "parents",
                    "error")
STREAM_COLUMNS = ("run", "method", "repeat", "stream", "receiver", "parent", "bytes",
                  "expected_bytes", "digest_ok", "first_s", "last_s", "rate_Bps", "target_Bps",
                  "error")
TABLES = {"multicasts.csv": MULTICAST_COLUMNS, "receivers.csv": RECEIVER_COLUMNS,
          "streams.csv": STREAM_COLUMNS}
FILES = ("meta.json", "hosts.csv", *TABLES)
"""Every file of a multicast dataset."""

MAX_STREAMS_PER_PLAN = 2**16
"""The most streams (trees) one plan may split a payload into."""
MAX_REPEATS = 2**16
"""The most repeats of one method in a dataset."""

_TRUE = {"true": True, "1": True, "false": False, "0": False}


def read_meta(path: Path) -> dict[str, Any]:
    """A multicast dataset's ``meta.json``, checked (:func:`check_multicast_meta`); a clear
    error for anything else (a measurement's meta.json, a file that is not a file).

    Examples
    --------
    >>> read_meta(Path("/nonexistent/meta.json"))
    Traceback (most recent call last):
    ...
    tomography.model.errors.DatasetError: /nonexistent: no meta.json: not a multicast dataset
    """
    return check_multicast_meta(_formatted(path), path)


def _formatted(path: Path) -> dict[str, Any]:
    """``meta.json`` read within bounds, refused unless its format is :data:`FORMAT`."""
    if not path.exists():
        raise DatasetError("no meta.json: not a multicast dataset", path=path.parent)
    meta = load_json(path)   # the dataset's own strict loader: bounded, clear errors
    if not isinstance(meta, dict):
        raise DatasetError("not a JSON object", path=path)
    if meta.get("format") != FORMAT:
        what = ("a measurement dataset" if meta.get("method") else f"format {meta.get('format')!r}")
        raise DatasetError(f"not a multicast dataset ({what}; expected format {FORMAT!r})",
                           path=path, field="format")
    return meta


def is_multicast_dataset(path: str | Path) -> bool:
    """Whether ``path`` holds a multicast dataset (its meta.json's format says so; the rest of
    it is checked by the readers, which say what is wrong).

    Examples
    --------
    >>> is_multicast_dataset("/nonexistent")
    False
    """
    try:
        _formatted(Path(path) / "meta.json")
    except (DatasetError, OSError):
        return False
    return True


def _booleans(frame: pd.DataFrame, column: str, path: Path) -> np.ndarray:
    text = frame[column].str.strip().str.lower()
    fail_at(~text.isin(_TRUE).to_numpy(dtype=bool), frame, path, column, "not true or false")
    return text.map(_TRUE).to_numpy(dtype=bool)


def _times(frame: pd.DataFrame, column: str, path: Path) -> np.ndarray:
    """Seconds from the multicast's start (earlier is negative: the hosts' clocks), or empty."""
    text = frame[column].str.strip()
    empty = (text == "").to_numpy(dtype=bool)
    values = pd.to_numeric(text.where(~empty, "nan"), errors="coerce").to_numpy(dtype=float)
    fail_at(~empty & ~np.isfinite(values), frame, path, column, "not a finite number")
    return values


def _hosts(path: Path, meta: dict[str, Any]) -> set[str]:
    """``hosts.csv``'s hosts, which must be those of ``meta.json``."""
    from tomography.model.dataset.tables import read_hosts

    hosts = set(read_hosts(path / "hosts.csv")["host"])
    listed = set(meta["hosts"])
    if hosts != listed:
        odd = sorted(hosts ^ listed)
        raise DatasetError(f"hosts.csv and meta.json name other hosts ({len(odd)} in one but "
                           f"not the other, first {odd[0][:40]!r})", path=path / "hosts.csv")
    return hosts


def _runs(path: Path, meta: dict[str, Any], hosts: set[str]) -> pd.DataFrame:
    target = path / "multicasts.csv"
    frame = read_csv(target, MULTICAST_COLUMNS)
    at_line_end(target)
    params, methods = meta["params"], meta["methods"]
    fail_at(~frame["method"].isin(methods).to_numpy(dtype=bool), frame, target, "method",
            f"not a method of this dataset (meta.json's methods: {', '.join(methods)})")
    out = frame.copy()
    out["repeat"] = integers(frame, "repeat", target, minimum=0, maximum=MAX_REPEATS)
    own = (frame["method"] + "-" + out["repeat"].astype(str)).to_numpy()
    fail_at(frame["run"].to_numpy() != own, frame, target, "run",
            "not its row's METHOD-REPEAT")
    fail_at(frame["run"].duplicated().to_numpy(), frame, target, "run",
            "a multicast listed twice")
    fail_at((frame["root"] != params["root"]).to_numpy(), frame, target, "root",
            f"not the dataset's root (meta.json: {params['root']})")
    out["bytes"] = integers(frame, "bytes", target, minimum=1, maximum=MAX_FILE_BYTES)
    fail_at(out["bytes"].to_numpy() != params["bytes"], frame, target, "bytes",
            f"not the dataset's payload (meta.json: {params['bytes']} bytes)")
    out["streams"] = integers(frame, "streams", target, minimum=0,
                              maximum=MAX_STREAMS_PER_PLAN)
    for column in ("predicted_Bps", "achieved_Bps", "completion_s"):
        out[column] = floats(frame, column, target, allow_empty=True)
    out["complete"] = _booleans(frame, "complete", target)
    out["receivers_complete"] = integers(frame, "receivers_complete", target, minimum=0,
                                         maximum=len(hosts) - 1)
    fail_at(out["complete"].to_numpy() & np.isnan(out["achieved_Bps"].to_numpy()), frame,
            target, "achieved_Bps", "missing value (a complete multicast has its throughput)")
    return out


def _details(path: Path, name: str, runs: set[str], hosts: set[str]) -> pd.DataFrame:
    """``receivers.csv`` or ``streams.csv``: the rows of the listed multicasts, checked."""
    target = path / name
    frame = read_csv(target, TABLES[name])
    at_line_end(target)
    frame = frame[frame["run"].isin(runs).to_numpy(dtype=bool)].reset_index(drop=True)
    out = frame.copy()
    known_hosts(frame, "receiver", target, hosts)
    if "parent" in frame:
        known_hosts(frame, "parent", target, hosts)
    out["repeat"] = integers(frame, "repeat", target, minimum=0, maximum=MAX_REPEATS)
    for column in ("bytes", "expected_bytes"):
        out[column] = integers(frame, column, target, minimum=0, maximum=MAX_FILE_BYTES)
    out["digest_ok"] = _booleans(frame, "digest_ok", target)
    for column in ("first_s", "last_s"):
        out[column] = _times(frame, column, target)
    for column in ("throughput_Bps", "rate_Bps", "target_Bps"):
        if column in frame:
            out[column] = floats(frame, column, target, allow_empty=True)
    if "complete" in frame:
        out["complete"] = _booleans(frame, "complete", target)
    if "stream" in frame:
        out["stream"] = integers(frame, "stream", target, minimum=0,
                                 maximum=MAX_STREAMS_PER_PLAN)
    return out


def read_tables(path: str | Path, *, streams: bool = False
                ) -> tuple[dict[str, Any], pd.DataFrame, pd.DataFrame, pd.DataFrame | None]:
    """Every file of a multicast dataset, checked; its meta and tables.

    Parameters
    ----------
    path : path
        The dataset directory.
    streams : bool, default False
        Also return ``streams.csv`` (it is checked either way).

    Returns
    -------
    meta : dict
    runs, receivers : DataFrame
        ``multicasts.csv`` and ``receivers.csv``, numbers as numbers.
    streams : DataFrame or None

    Raises
    ------
    DatasetError
        Naming the file, the line and the field of the first fault.
    """
    path = Path(path)
    meta = read_meta(path / "meta.json")
    for name in FILES[1:]:     # no pipe, device or huge file is opened, none is missing
        regular_file(path / name)
    hosts = _hosts(path, meta)
    runs = _runs(path, meta, hosts)
    listed = set(runs["run"])
    receivers = _details(path, "receivers.csv", listed, hosts)
    detail = _details(path, "streams.csv", listed, hosts)
    return meta, runs, receivers, detail if streams else None
