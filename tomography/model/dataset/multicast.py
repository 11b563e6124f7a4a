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

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from tomography.model.dataset.incremental import DATA_FILES, csv_writer, refuse_existing
from tomography.model.dataset.lock import DatasetLock, file_opener, write_atomic
from tomography.model.dataset.meta import load_json, refuse_other_run, software_versions
from tomography.model.dataset.meta_schema import check_multicast_meta
from tomography.model.dataset.schema import MAX_FILE_BYTES
from tomography.model.dataset.schema import HOSTS_COLUMNS
from tomography.model.dataset.validation import (at_line_end, cut_short, drop_cut_line, fail_at,
                                                 floats, integers, known_hosts, open_regular,
                                                 read_csv, regular_file)
from tomography.model.errors import DatasetError

__all__ = ["FORMAT", "FILES", "MULTICAST_COLUMNS", "RECEIVER_COLUMNS", "STREAM_COLUMNS",
           "read_meta", "read_tables", "read_multicasts", "is_multicast_dataset",
           "prepare_output", "MulticastWriter", "MAX_STREAMS_PER_PLAN", "summary_table",
           "read_summary"]

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


def read_multicasts(path: str | Path) -> tuple[dict[str, Any], pd.DataFrame, pd.DataFrame]:
    """A multicast dataset: its meta, its multicasts and its receivers, as DataFrames.

    Every file is checked first (:func:`read_tables`).

    Raises
    ------
    DatasetError
        When ``path`` holds no multicast dataset, or a file of it is not one a multicast
        run writes, naming the file, line and field.

    Examples
    --------
    >>> read_multicasts("/nonexistent")
    Traceback (most recent call last):
    ...
    tomography.model.errors.DatasetError: /nonexistent: no meta.json: not a multicast dataset
    """
    meta, runs, receivers, _ = read_tables(path)
    return meta, runs, receivers


def prepare_output(out: Path, params: dict[str, Any], plans: dict[str, Any],
                   hosts: Sequence[str] | None, *, resume: bool, overwrite: bool) -> set[str]:
    """Check that a multicast dataset may be written at ``out``; the multicasts it has.

    A new dataset needs a free place (or ``overwrite``: its writer then
    replaces the files of the dataset there); a resumed one every file, each
    as a run writes it (:func:`read_tables`; a last line a stopped write cut
    short is removed), and the same settings, methods, plans and hosts.
    ``hosts`` None skips the hosts (not known yet: the command checks early,
    before raising a testbed).

    Returns
    -------
    set of str
        The ``run`` ids of the multicasts on disk (empty for a new dataset).

    Raises
    ------
    DatasetError
        Naming what differs, or what is in the way.
    """
    meta = out / "meta.json"
    if resume and meta.exists():
        old = read_meta(meta)
        missing = [name for name in FILES if not (out / name).exists()]
        if missing:
            raise DatasetError(f"cannot resume: {', '.join(missing)} missing (a multicast "
                               "dataset has " + ", ".join(FILES) + "): restore it, or start "
                               "afresh with --force", path=out)
        refuse_other_run(old, meta, hosts=old["hosts"] if hosts is None else hosts,
                         recorded_hosts=old["hosts"], params=params)
        stored = json.loads(json.dumps(plans))   # as meta.json holds them
        for method, plan in stored.items():
            if old.get("plans", {}).get(method) != plan:
                raise DatasetError(f"cannot resume: the plan of {method} differs from the "
                                   "dataset's (another Gauge file or dataset, --level or "
                                   "--parallel?)", path=meta, field=f"plans.{method}")
        return _done(out)
    if out.exists() and not out.is_dir():
        raise DatasetError("is a file, not a directory for a dataset", path=out)
    if meta.exists() and not overwrite:
        if not is_multicast_dataset(out):
            raise DatasetError("holds another dataset (a measurement?): choose another -o, or "
                               "replace it with --force", path=out)
        refuse_existing(out, overwrite=False)
    return set()


def _done(path: Path) -> set[str]:
    """The multicasts already in a dataset (``run`` ids), every file checked; the detail rows
    of others (a run stopped while writing them) and a line cut short are dropped."""
    for name in TABLES:
        _repair(path / name)
    _, runs, _, _ = read_tables(path)
    done = set(runs["run"])
    for name, columns in (("receivers.csv", RECEIVER_COLUMNS), ("streams.csv", STREAM_COLUMNS)):
        rows = read_csv(path / name, columns)
        if not rows["run"].isin(done).all():
            write_atomic(path / name, rows[rows["run"].isin(done)].to_csv(
                index=False, lineterminator="\n"))
    return done


def _repair(target: Path) -> None:
    """Remove a last line a stopped write cut short, unless the file is no CSV text at all
    (binary, UTF-16: left as it is, for the reader to refuse)."""
    if not cut_short(target):
        return
    with open_regular(target) as fh:
        data = fh.read()
    try:
        data[:data.rfind(b"\n") + 1].decode("utf-8")
    except UnicodeDecodeError:
        return
    drop_cut_line(target)


class MulticastWriter:
    """Write a multicast dataset one multicast at a time, as
    :class:`~tomography.model.dataset.MeasurementWriter` writes iterations.

    The writer holds the dataset's one-writer lock from the moment it opens
    until :meth:`close`.  A new dataset is written whole before the first
    multicast: the three tables' headers, ``hosts.csv`` and, last,
    ``meta.json`` (with ``format``, ``created`` and ``software`` filled in);
    the files of a dataset it replaces go first, ``meta.json`` before the
    rest.  :meth:`add` appends a multicast's receivers and streams, then its
    row of ``multicasts.csv``, each file flushed: a multicast is on disk once
    that row is.

    Parameters
    ----------
    path : path
        The dataset directory (:func:`prepare_output` checked it may be written).
    meta : mapping
        Keys of ``meta.json``: ``params``, ``methods``, ``hosts``, ``plans`` ...
    hosts : DataFrame
        ``host, address, label`` of the run's hosts.

    Examples
    --------
    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> hosts = pd.DataFrame({"host": ["a", "b"], "address": ["", ""], "label": ["", ""]})
    >>> with MulticastWriter(d, {"params": {}}, hosts) as w:
    ...     sorted(p.name for p in d.iterdir() if not p.name.startswith("."))
    ['hosts.csv', 'meta.json', 'multicasts.csv', 'receivers.csv', 'streams.csv']
    """

    def __init__(self, path: str | Path, meta: Mapping[str, Any], hosts: pd.DataFrame) -> None:
        self.path = Path(path)
        self._lock = DatasetLock(self.path).acquire()
        self.files: dict[str, tuple[Any, Any, tuple[str, ...]]] = {}
        try:
            for name in ("meta.json", *DATA_FILES, *TABLES):   # a dataset replaced: meta first
                (self.path / name).unlink(missing_ok=True)
            self._open(fresh=True)
            self.meta = {"format": FORMAT, "method": "multicast",
                         "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                         **meta, "software": software_versions()}
            write_atomic(self.path / "hosts.csv", hosts[list(HOSTS_COLUMNS)].to_csv(
                index=False, lineterminator="\n"))
            write_atomic(self.path / "meta.json", json.dumps(self.meta, indent=2) + "\n")
        except BaseException:
            self.close()
            raise

    @classmethod
    def reopen(cls, path: str | Path) -> "MulticastWriter":
        """Open a dataset :func:`prepare_output` checked for ``--resume``, to append."""
        writer = cls.__new__(cls)
        writer.path = Path(path)
        writer._lock = DatasetLock(writer.path).acquire()
        writer.files = {}
        try:
            writer.meta = read_meta(writer.path / "meta.json")
            writer._open(fresh=False)
        except BaseException:
            writer.close()
            raise
        return writer

    def _open(self, *, fresh: bool) -> None:
        for name, columns in TABLES.items():
            target = self.path / name
            try:
                fh = open(target, "w" if fresh else "a", encoding="utf-8", newline="",
                          opener=file_opener)
                writer = csv_writer(fh)
                if fresh:
                    writer.writerow(columns)
                    fh.flush()
            except OSError as exc:
                raise DatasetError(f"cannot write ({exc.strerror or exc})", path=target) \
                    from None
            self.files[name] = (fh, writer, columns)

    def update_meta(self, **keys: Any) -> None:
        """Set keys of ``meta.json`` (a resumed run records its session), atomically."""
        self.meta = {**self.meta, **keys}
        write_atomic(self.path / "meta.json", json.dumps(self.meta, indent=2) + "\n")

    def add(self, row: Mapping[str, Any], receivers: Sequence[Mapping[str, Any]],
            streams: Sequence[Mapping[str, Any]]) -> None:
        """Append one multicast: its receivers' and streams' rows, then its row of
        ``multicasts.csv`` (the columns of :data:`MULTICAST_COLUMNS` and the others)."""
        for name, rows in (("receivers.csv", receivers), ("streams.csv", streams),
                           ("multicasts.csv", [row])):
            fh, writer, columns = self.files[name]
            try:
                for r in rows:
                    writer.writerow([_cell(r[c]) for c in columns])
                fh.flush()
            except OSError as exc:
                raise DatasetError(f"cannot write ({exc.strerror or exc}); the multicasts "
                                   "written before are kept: make room, then continue with "
                                   "--resume", path=Path(fh.name)) from None

    def close(self) -> None:
        """Close the tables and let the lock go."""
        for fh, _, _ in self.files.values():
            try:
                fh.close()
            except OSError:     # a full disk: the error of the write that failed is raised
                pass
        self.files = {}
        self._lock.release()

    def __enter__(self) -> "MulticastWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _cell(value: Any) -> Any:
    if isinstance(value, float):
        return "" if value != value else f"{value:.6g}" if abs(value) < 1e5 else f"{value:.0f}"
    return value


def summary_table(runs: pd.DataFrame, *, unit_bytes: float = 2**20,
                  basis: dict[str, str] | None = None) -> pd.DataFrame:
    """Per method: predicted, achieved median and spread, achieved/predicted, completion time.

    Parameters
    ----------
    runs : DataFrame
        ``multicasts.csv``.
    unit_bytes : float
        Bytes/s of the unit the throughputs are given in (default MiB/s).
    basis : dict, optional
        Method -> what its prediction rests on (``meta.json``'s plans).

    Returns
    -------
    DataFrame
        ``method, runs, complete, basis, predicted, achieved, low, high, ratio,
        completion_s``,
        best achieved first; ``low``/``high`` are the smallest and largest
        achieved of the complete multicasts.

    Examples
    --------
    >>> runs = pd.DataFrame({"method": ["a", "a", "b"], "predicted_Bps": [2**21] * 3,
    ...                      "achieved_Bps": [2**21, 2**20, 2**19], "completion_s": [1, 2, 4],
    ...                      "complete": [True, True, True]})
    >>> summary_table(runs)[["method", "achieved", "ratio"]].values.tolist()
    [['a', 1.5, 0.75], ['b', 0.5, 0.25]]
    """
    rows = []
    basis = basis or {}
    for method, g in runs.groupby("method", sort=False):
        ok = g[g["complete"].astype(bool)]
        achieved = ok["achieved_Bps"].astype(float) / unit_bytes
        predicted = float(g["predicted_Bps"].astype(float).median()) / unit_bytes
        median = float(achieved.median()) if len(ok) else float("nan")
        rows.append({"method": method, "runs": len(g), "complete": len(ok),
                     "basis": basis.get(method) or ("-" if predicted != predicted else ""),
                     "predicted": predicted, "achieved": median,
                     "low": float(achieved.min()) if len(ok) else float("nan"),
                     "high": float(achieved.max()) if len(ok) else float("nan"),
                     "ratio": median / predicted if predicted > 0 else float("nan"),
                     "completion_s": float(ok["completion_s"].astype(float).median())
                     if len(ok) else float("nan")})
    table = pd.DataFrame(rows, columns=["method", "runs", "complete", "basis", "predicted",
                                        "achieved", "low", "high", "ratio", "completion_s"])
    return table.sort_values("achieved", ascending=False, na_position="last",
                             kind="stable").reset_index(drop=True)


def read_summary(path: str | Path, *, unit_bytes: float = 2**20
                 ) -> tuple[dict[str, Any], pd.DataFrame]:
    """A multicast dataset's meta and its :func:`summary_table`, each prediction's basis taken
    from the plans in ``meta.json``.

    Examples
    --------
    >>> meta, table = read_summary("mc")   # doctest: +SKIP
    >>> table[["method", "basis", "predicted", "achieved", "ratio"]]   # doctest: +SKIP
    """
    meta, runs, _ = read_multicasts(path)
    return meta, summary_table(runs, unit_bytes=unit_bytes, basis={
        m: p.get("basis", "") for m, p in meta.get("plans", {}).items()})
