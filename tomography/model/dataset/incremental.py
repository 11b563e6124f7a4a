"""Write a dataset while it is measured: :class:`MeasurementWriter`, one iteration at a time.

A run that stops keeps every iteration it finished: each is flushed to disk
as it ends, and :meth:`MeasurementWriter.reopen` (``--resume``) removes what
a stopped run left half-written before it appends more.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import signal
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence

import pandas as pd

from tomography.model.dataset.lock import DatasetLock, file_opener, write_atomic
from tomography.model.dataset.meta import new_meta, read_meta
from tomography.model.dataset.schema import (HOSTS_COLUMNS, ITERATIONS_COLUMNS, PROBE_METHODS,
                                             PROBES_COLUMNS, PROBES_EXTRA, TRACE_COLUMNS,
                                             TRANSFERS_COLUMNS)
from tomography.model.dataset.tables import read_hosts, read_iterations, read_probes
from tomography.model.dataset.validation import drop_cut_line
from tomography.model.errors import DatasetError

__all__ = ["MeasurementWriter", "refuse_existing", "csv_writer"]


def csv_writer(fh: Any) -> Any:
    """A CSV writer with Unix line ends (the csv module's default is CRLF).

    Examples
    --------
    >>> import io
    >>> fh = io.StringIO()
    >>> _ = csv_writer(fh).writerow(["a", 1])
    >>> fh.getvalue()
    'a,1\\n'
    """
    return csv.writer(fh, lineterminator="\n")


DATA_FILES = ("transfers.csv", "iterations.csv", "probes.csv", "trace.csv")
"""The files of a dataset besides meta.json and hosts.csv (docs/formats.md): a new
dataset written over an old one removes the old ones."""


def refuse_existing(path: str | os.PathLike[str], *, overwrite: bool = False,
                    resumable: bool = True) -> None:
    """Refuse to write a dataset where one exists, unless ``overwrite``.

    The error says how to go on: continue the dataset (``--resume``, when
    the writer can) or replace it (``--force``).

    Examples
    --------
    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> _ = (Path(d) / "meta.json").write_text("{}")
    >>> refuse_existing(d, overwrite=True)
    >>> refuse_existing(d)
    Traceback (most recent call last):
    ...
    tomography.model.errors.DatasetError: ...: a dataset exists here already: continue it with --resume (resume=True) or replace it with --force (overwrite=True)
    """
    if (Path(path) / "meta.json").exists() and not overwrite:
        how = "continue it with --resume (resume=True) or " if resumable else ""
        raise DatasetError(f"a dataset exists here already: {how}replace it with --force "
                           "(overwrite=True)", path=Path(path))


@contextmanager
def _whole() -> Iterator[None]:
    """SIGINT and SIGTERM held back while the block runs, then handled as they would have been
    (Ctrl-C's KeyboardInterrupt raised after it): an iteration written to two files is never
    cut between them.  Outside the main thread the block runs as it is (Python handles
    signals in the main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []
    wanted = (signal.SIGINT, signal.SIGTERM)
    handlers = {s: signal.signal(s, lambda signum, _frame: pending.append(signum))
                for s in wanted}
    try:
        yield
    finally:
        for s, handler in handlers.items():
            signal.signal(s, handler)
        for s in dict.fromkeys(pending):      # each once, in the order they came
            handler = handlers[s]
            if callable(handler):
                handler(s, None)
            elif handler == signal.SIG_DFL:
                os.kill(os.getpid(), s)


class MeasurementWriter:
    """Write a dataset directory one iteration at a time.

    The writer holds the dataset's one-writer lock
    (:class:`tomography.model.dataset.lock.DatasetLock`) from the moment it opens,
    before anything is written or removed, until :meth:`close` (or until it
    is garbage-collected, or the process ends): another process's writer is
    refused, naming this one.  ``hosts.csv``, the data files' headers and,
    last, ``meta.json`` (atomically) are written when the writer opens, all
    or none; each
    call to :meth:`add_iteration` appends the iteration's transfers and then
    its line of ``iterations.csv``, flushed to disk, so that a run that is
    stopped keeps every finished iteration.

    Parameters
    ----------
    path : str or path-like
        The dataset directory; created if missing.
    meta : mapping
        Keys of ``meta.json``; at least ``method``.  ``format``,
        ``block_size``, ``created`` and ``software`` are filled in.
    hosts : pandas.DataFrame or iterable of (host, address, label)
        The hosts of the run.
    overwrite : bool, default False
        Replace an existing dataset in ``path``.
    iteration_columns : sequence of str, optional
        Extra columns of ``iterations.csv`` after the format's own (readers
        keep them), filled from ``extra`` in :meth:`add_iteration`.

    Examples
    --------
    >>> import tempfile
    >>> from tomography.model.dataset import read_measurement
    >>> d = tempfile.mkdtemp()
    >>> w = MeasurementWriter(d, {"method": "synthetic"}, [("a", "10.0.0.1", ""), ("b", "10.0.0.2", "")])
    >>> w.add_iteration(0, root="a", transfers=[("b", "a", 4)], nbytes=65536, duration_s=0.5)
    >>> read_measurement(d).transfers["blocks"].tolist()
    [4]
    """

    def __init__(self, path: str | os.PathLike[str], meta: Mapping[str, Any],
                 hosts: pd.DataFrame | Iterable[tuple[str, str, str]], *,
                 overwrite: bool = False, iteration_columns: Sequence[str] = (),
                 probes: bool = False) -> None:
        self.path = Path(path)
        self._lock = DatasetLock(self.path).acquire()   # before anything is written or removed
        try:
            refuse_existing(self.path, overwrite=overwrite)
            frame = hosts if isinstance(hosts, pd.DataFrame) else pd.DataFrame(
                list(hosts), columns=list(HOSTS_COLUMNS))
            if "label" not in frame.columns:
                frame = frame.assign(label="")
            self.meta = new_meta(meta)
            self.hosts = set(frame["host"])
            if len(self.hosts) != len(frame):
                raise DatasetError("duplicate host names", field="host")
            self.extra_columns = tuple(iteration_columns)
            self.probe_columns = PROBES_COLUMNS + PROBES_EXTRA
            files = ((("probes.csv", self.probe_columns),) if probes else
                     (("transfers.csv", TRANSFERS_COLUMNS),
                      ("iterations.csv", ITERATIONS_COLUMNS + self.extra_columns)))
            self._start(frame.sort_values("host").to_csv(index=False), files)
        except BaseException:
            self._lock.release()
            raise

    def _start(self, hosts_csv: str, files: Sequence[tuple[str, Sequence[str]]]) -> None:
        """Write the new dataset's files, ``meta.json`` last: all of them, or none.

        A full disk (or any failed write) removes what was written, the old
        dataset's ``meta.json`` included (``--force`` was replacing it), and
        raises naming the file: the place holds no half dataset that
        ``--resume`` could not continue.
        """
        written = ["hosts.csv", *(name for name, _ in files), "meta.json"]
        current = "hosts.csv"
        try:
            for name in DATA_FILES:
                current = name
                (self.path / name).unlink(missing_ok=True)
            current = "hosts.csv"
            write_atomic(self.path / "hosts.csv", hosts_csv)
            for name, columns in files:
                current = name
                with open(self.path / name, "w", newline="", encoding="utf-8",
                          opener=file_opener) as fh:
                    csv_writer(fh).writerow(columns)
                    fh.flush()
                    os.fsync(fh.fileno())
            current = "meta.json"
            write_atomic(self.path / "meta.json", json.dumps(self.meta, indent=2) + "\n")
        except (OSError, DatasetError) as exc:
            for name in written:
                try:
                    (self.path / name).unlink(missing_ok=True)
                except OSError:
                    pass
            why = (exc.reason if isinstance(exc, DatasetError)     # says "cannot write" itself
                   else f"cannot write ({exc.strerror or exc})")
            raise DatasetError(f"{why}; nothing of the new dataset is left "
                               "here: make room and run the command again",
                               path=self.path / current) from None

    def close(self) -> None:
        """Let the dataset's lock go (the writer adds nothing more); also on garbage collection.

        Examples
        --------
        >>> import tempfile
        >>> d = tempfile.mkdtemp()
        >>> with MeasurementWriter(d, {"method": "synthetic"}, [("a", "", ""), ("b", "", "")]):
        ...     pass
        """
        self._lock.release()

    def __enter__(self) -> "MeasurementWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @classmethod
    def reopen(cls, path: str | os.PathLike[str]) -> "MeasurementWriter":
        """Open an existing dataset to append more iterations (``--resume``).

        Rows of ``transfers.csv`` and ``trace.csv`` whose iteration never
        reached ``iterations.csv`` (a run stopped while writing them) are
        removed, so that the dataset is valid again.

        Examples
        --------
        >>> import tempfile
        >>> from tomography.model.dataset import read_measurement
        >>> d = tempfile.mkdtemp()
        >>> w = MeasurementWriter(d, {"method": "simulated"}, [("a", "", ""), ("b", "", "")])
        >>> w.add_iteration(0, root="a", transfers=[("b", "a", 4)], nbytes=65536)
        >>> with open(d + "/transfers.csv", "a") as f:   # a run killed mid-iteration
        ...     _ = f.write("1,a,b,2" + chr(10))
        >>> MeasurementWriter.reopen(d).add_iteration(1, root="b", transfers=[("a", "b", 4)],
        ...                                           nbytes=65536)
        >>> read_measurement(d).transfers["blocks"].tolist()
        [4, 4]
        """
        root = Path(path)
        lock = DatasetLock(root).acquire()      # before the cut rows are removed
        try:
            return cls._reopen(root, lock)
        except BaseException:
            lock.release()
            raise

    @classmethod
    def _reopen(cls, root: Path, lock: DatasetLock) -> "MeasurementWriter":
        from tomography.model.dataset.read import check_files

        check_files(root)       # no pipe, device or huge file is opened to drop stray rows
        meta = read_meta(root / "meta.json")
        hosts = read_hosts(root / "hosts.csv")
        writer = cls.__new__(cls)
        writer._lock = lock
        writer.path, writer.meta, writer.hosts = root, meta, set(hosts["host"])
        writer.extra_columns = ()
        writer.probe_columns = PROBES_COLUMNS + PROBES_EXTRA
        if meta["method"] in PROBE_METHODS:  # probe rows are whole lines, flushed one by one
            read_probes(root / "probes.csv", writer.hosts)
            with (root / "probes.csv").open(encoding="utf-8-sig", newline="") as fh:
                header = next(csv.reader(fh), [])
            # a dataset written before a column was added keeps its header: rows follow it
            writer.probe_columns = tuple(c.strip() for c in header)
            return writer
        for name in ("iterations.csv", "transfers.csv", "trace.csv"):
            if (root / name).is_file():
                drop_cut_line(root / name)
        iterations = read_iterations(root / "iterations.csv", set(hosts["host"]))
        listed = set(iterations["iteration"])
        for name in ("transfers.csv", "trace.csv"):
            if (root / name).exists():
                _keep_iterations(root / name, listed)
        writer.extra_columns = tuple(iterations.columns[len(ITERATIONS_COLUMNS):])
        return writer

    @contextmanager
    def _appending(self, name: str) -> Iterator[Any]:
        """``name`` opened to append, flushed to disk on exit; a failed write names the file.

        A full disk or a lost mount stops the run with the file and what to
        do: what was written before this iteration stays readable, and
        ``--resume`` removes the cut rows and continues.
        """
        path = self.path / name
        size = None
        try:
            with open(path, "a", newline="", encoding="utf-8", opener=file_opener) as fh:
                size = fh.tell()
                yield fh
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as exc:
            if size is not None:      # no cut line: the file as it was (truncating needs no room)
                _truncate(path, size)
            raise DatasetError(f"cannot write ({exc.strerror or exc}); the iterations written "
                               "before are kept: make room, then continue with --resume",
                               path=path) from None

    def update_meta(self, **keys: Any) -> None:
        """Set keys of ``meta.json`` (a resumed run records its new hosts), atomically.

        Examples
        --------
        >>> import tempfile
        >>> from tomography.model.dataset import read_measurement
        >>> d = tempfile.mkdtemp()
        >>> w = MeasurementWriter(d, {"method": "synthetic"}, [("a", "", ""), ("b", "", "")])
        >>> w.update_meta(note="resumed")
        >>> read_measurement(d).meta["note"]
        'resumed'
        """
        self.meta = {**self.meta, **keys}
        write_atomic(self.path / "meta.json", json.dumps(self.meta, indent=2) + "\n")

    def add_probe(self, row: Mapping[str, Any]) -> None:
        """Append one probe test to ``probes.csv`` (a writer opened with ``probes=True``).

        ``row`` has the columns of ``PROBES_COLUMNS`` and ``PROBES_EXTRA``
        (missing ones are left empty); the line is flushed at once.

        Examples
        --------
        >>> import tempfile
        >>> from tomography.model.dataset import read_measurement
        >>> d = tempfile.mkdtemp()
        >>> w = MeasurementWriter(d, {"method": "iperf3"}, [("a", "", ""), ("b", "", "")],
        ...                       probes=True)
        >>> w.add_probe({"src": "a", "dst": "b", "tool": "iperf3", "bits_per_second": 9.4e8,
        ...              "streams": 1, "concurrent": 1, "duration_s": 10.0, "repeat": 0})
        >>> read_measurement(d).probes[["src", "dst", "bits_per_second"]].values.tolist()
        [['a', 'b', 940000000.0]]
        """
        for column in ("src", "dst"):
            if row[column] not in self.hosts:
                raise DatasetError(f"unknown host {row[column]!r}", field=column)
        with self._appending("probes.csv") as fh:
            csv_writer(fh).writerow(["" if row.get(c) is None else row.get(c)
                                     for c in self.probe_columns])

    def add_iteration(self, iteration: int, *, root: str,
                      transfers: Iterable[tuple[str, str, int]] | pd.DataFrame,
                      nbytes: int, duration_s: float | None = None,
                      complete: bool = True, extra: Mapping[str, Any] | None = None) -> None:
        """Append one finished iteration.

        Parameters
        ----------
        iteration : int
            The iteration number.
        root : str
            The host that seeded the file.
        transfers : iterable of (receiver, sender, blocks) or DataFrame
            Blocks each receiver got from each sender; zero counts may be left out.
        nbytes : int
            The file size in bytes.
        duration_s : float, optional
            Wall time of the broadcast.
        complete : bool, default True
            False when the time limit passed before every peer had the file.
        extra : mapping, optional
            Values of the writer's ``iteration_columns`` (missing ones are left empty).
        """
        if root not in self.hosts:
            raise DatasetError(f"unknown root host {root!r}", field="root")
        rows = (transfers[["receiver", "sender", "blocks"]].itertuples(index=False, name=None)
                if isinstance(transfers, pd.DataFrame) else transfers)
        duration = "" if duration_s is None or math.isnan(duration_s) else f"{duration_s:.6f}"
        with _whole():     # Ctrl-C and SIGTERM wait until the iteration is on disk, or not at all
            before = _size(self.path / "transfers.csv")
            with self._appending("transfers.csv") as fh:
                out = csv_writer(fh)
                for receiver, sender, blocks in rows:
                    if int(blocks):
                        out.writerow((iteration, receiver, sender, int(blocks)))
            try:
                with self._appending("iterations.csv") as fh:
                    extra = extra or {}
                    csv_writer(fh).writerow((iteration, root, int(nbytes), duration,
                                             "true" if complete else "false",
                                             *(extra.get(c, "") for c in self.extra_columns)))
            except DatasetError:          # the iteration is not listed: its transfers go too
                if before is not None:
                    _truncate(self.path / "transfers.csv", before)
                raise

    def add_trace(self, iteration: int, rows: Iterable[tuple[float, str, str, int, int]]) -> None:
        """Append the per-block trace of an iteration to ``trace.csv``.

        Call it before :meth:`add_iteration` of the same iteration, so that
        a run stopped in between leaves no trace of an unlisted iteration.

        Parameters
        ----------
        iteration : int
        rows : iterable of (time_s, sender, receiver, piece, block)
            One row per 16 KiB block received, ``time_s`` from the broadcast's start.

        Examples
        --------
        >>> import tempfile
        >>> d = tempfile.mkdtemp()
        >>> w = MeasurementWriter(d, {"method": "bittorrent"}, [("a", "", ""), ("b", "", "")])
        >>> w.add_trace(0, [(0.01, "a", "b", 0, 0)])
        >>> open(d + "/trace.csv").read().splitlines()
        ['iteration,time_s,sender,receiver,piece,block', '0,0.01,a,b,0,0']
        """
        new = not (self.path / "trace.csv").exists()
        with self._appending("trace.csv") as fh:
            out = csv_writer(fh)
            if new:
                out.writerow(TRACE_COLUMNS)
            for time_s, sender, receiver, piece, block in rows:
                out.writerow((iteration, time_s, sender, receiver, piece, block))


def _size(path: Path) -> int | None:
    try:
        return path.stat().st_size
    except OSError:
        return None


def _truncate(path: Path, size: int) -> None:
    """Cut ``path`` back to ``size`` bytes, if it can be (a failed append's part line)."""
    try:
        os.truncate(path, size)
    except OSError:
        pass


def _keep_iterations(path: Path, listed: set[int]) -> None:
    """Rewrite a CSV whose first column is the iteration, keeping only ``listed`` ones."""
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    kept = rows[:1] + [r for r in rows[1:] if r and r[0].strip().isdigit()
                       and int(r[0]) in listed]
    if len(kept) != len(rows):              # whole or not at all: a full disk cuts nothing
        text = io.StringIO()
        csv_writer(text).writerows(kept)
        write_atomic(path, text.getvalue())
