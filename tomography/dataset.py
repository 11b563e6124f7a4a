"""The measurement dataset, format version 1: read, validate, write.

A dataset is a directory (see ``docs/formats.md``)::

    meta.json        {"format": "tomography-measurement/1", "method": ..., ...}
    hosts.csv        host,address,label
    transfers.csv    iteration,receiver,sender,blocks
    iterations.csv   iteration,root,bytes,duration_s,complete
    probes.csv       src,dst,tool,bits_per_second,streams,concurrent,duration_s
                     (probe meshes add start,bytes,retransmits,rtt_ms,repeat,error,
                     alpha_s,beta_s_per_byte)

``transfers.csv`` and ``iterations.csv`` are required for broadcast methods
(``bittorrent``, ``simulated``, ``synthetic``); ``probes.csv`` for probe methods
(``iperf3``, ``netpipe``).  Readers accept extra columns and extra keys in
``meta.json``; a new format version is a new ``format`` string.

Iterations are appended one at a time by :class:`MeasurementWriter`, so that a
run that stops keeps every iteration it finished.
"""

from __future__ import annotations

import csv
import json
import math
import os
import platform
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence

import numpy as np
import pandas as pd

from tomography.errors import DatasetError

__all__ = [
    "FORMAT",
    "read_hosts_table",
    "refuse_existing",
    "read_trace",
    "BLOCK_SIZE",
    "BROADCAST_METHODS",
    "PROBE_METHODS",
    "PROBES_EXTRA",
    "Measurement",
    "MeasurementWriter",
    "read_measurement",
    "write_measurement",
    "software_versions",
    "csv_writer",
]


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


FORMAT = "tomography-measurement/1"
"""The ``format`` string of ``meta.json`` this module reads and writes."""

BLOCK_SIZE = 16384
"""Bytes in one BitTorrent block (16 KiB), the unit of ``transfers.csv``."""

BROADCAST_METHODS = frozenset({"bittorrent", "simulated", "synthetic"})
PROBE_METHODS = frozenset({"iperf3", "netpipe"})

HOSTS_COLUMNS = ("host", "address", "label")
TRANSFERS_COLUMNS = ("iteration", "receiver", "sender", "blocks")
ITERATIONS_COLUMNS = ("iteration", "root", "bytes", "duration_s", "complete")
PROBES_COLUMNS = ("src", "dst", "tool", "bits_per_second", "streams", "concurrent", "duration_s")
# what the probe meshes write (measure.mesh): the format's columns, then these
PROBES_EXTRA = ("start", "bytes", "retransmits", "rtt_ms", "repeat", "error", "alpha_s",
                "beta_s_per_byte")
PROBE_NUMBERS = ("start", "bytes", "retransmits", "rtt_ms", "alpha_s", "beta_s_per_byte")
TRACE_COLUMNS = ("iteration", "time_s", "sender", "receiver", "piece", "block")

_TRUE = {"true", "1", "yes"}
_FALSE = {"false", "0", "no"}


@dataclass
class Measurement:
    """A measurement dataset held in memory.

    Attributes
    ----------
    meta : dict
        The content of ``meta.json``.
    hosts : pandas.DataFrame
        Columns ``host``, ``address``, ``label``, one row per host, sorted by
        host name.  ``label`` is ``""`` where unknown.
    transfers : pandas.DataFrame
        Columns ``iteration``, ``receiver``, ``sender`` and ``blocks``: the
        16 KiB blocks ``receiver`` got directly from ``sender``.
    iterations : pandas.DataFrame
        Columns ``iteration``, ``root``, ``bytes``, ``duration_s`` (NaN when
        unknown) and ``complete``, sorted by iteration.
    probes : pandas.DataFrame or None
        The pairwise probe runs, when the dataset has any.

    Examples
    --------
    >>> from tomography.synthetic import planted_partition
    >>> m = planted_partition(12, 3, iterations=2, seed=1)
    >>> m.n_hosts, m.iteration_ids
    (12, [0, 1])
    >>> m.host_names[:3]
    ['h000', 'h001', 'h002']
    """

    meta: dict[str, Any]
    hosts: pd.DataFrame
    transfers: pd.DataFrame = field(default_factory=lambda: _empty(TRANSFERS_COLUMNS))
    iterations: pd.DataFrame = field(default_factory=lambda: _empty(ITERATIONS_COLUMNS))
    probes: pd.DataFrame | None = None

    @property
    def host_names(self) -> list[str]:
        """Host names in sorted order: the row and column order of every matrix."""
        return list(self.hosts["host"])

    @property
    def n_hosts(self) -> int:
        """Number of hosts."""
        return len(self.hosts)

    @property
    def iteration_ids(self) -> list[int]:
        """Iteration numbers in increasing order."""
        return [int(i) for i in self.iterations["iteration"]]

    @property
    def labels(self) -> dict[str, str]:
        """Ground-truth label per host, for the hosts that have one."""
        return {h: lab for h, lab in zip(self.hosts["host"], self.hosts["label"]) if lab}

    def edges(self, n: int | None = None, *, per_iteration: bool = False) -> pd.DataFrame:
        """The edges of ``w_n``: ``src, dst, w_n, iterations`` (see :func:`tomography.interop.edges_frame`).

        Examples
        --------
        >>> from tomography.synthetic import planted_partition
        >>> planted_partition(6, 2, iterations=2, seed=0).edges().columns.tolist()
        ['src', 'dst', 'w_n', 'iterations']
        """
        from tomography.interop import edges_frame

        return edges_frame(self, n, per_iteration=per_iteration)

    def weight_matrix(self, n: int | None = None):
        """``w_n`` (Eq 4.2) as a SciPy sparse matrix, and its host order.

        Examples
        --------
        >>> from tomography.synthetic import planted_partition
        >>> W, hosts = planted_partition(6, 2, iterations=2, seed=0).weight_matrix()
        >>> W.shape, hosts[0]
        ((6, 6), 'h000')
        """
        from tomography.weights import mean_weights

        return mean_weights(self, n), self.host_names


def _empty(columns: Iterable[str]) -> pd.DataFrame:
    return pd.DataFrame({c: [] for c in columns})


def software_versions() -> dict[str, str]:
    """Versions of Python and of the libraries that shape results.

    Returns
    -------
    dict
        Package name to version string, for ``meta.json`` and result files.

    Examples
    --------
    >>> sorted(software_versions())[:3]
    ['bandwidth-tomography', 'igraph', 'libtorrent']
    """
    from importlib import metadata

    versions = {"python": platform.python_version()}
    for name in ("bandwidth-tomography", "numpy", "scipy", "networkx", "python-louvain",
                 "igraph", "scikit-learn", "pandas", "libtorrent"):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


# --------------------------------------------------------------------------- reading


def read_measurement(path: str | os.PathLike[str]) -> Measurement:
    """Read and validate a measurement dataset directory.

    Parameters
    ----------
    path : str or path-like
        The dataset directory.

    Returns
    -------
    Measurement

    Raises
    ------
    DatasetError
        When a file is missing or malformed, or the files disagree.  The
        message names the file, the line and the field.

    Examples
    --------
    >>> import tempfile
    >>> from tomography.synthetic import planted_partition
    >>> d = tempfile.mkdtemp()
    >>> write_measurement(planted_partition(8, 2, iterations=2, seed=0), d, overwrite=True)
    >>> read_measurement(d).n_hosts
    8
    """
    root = Path(path)
    if not root.is_dir():
        raise DatasetError("no such dataset directory", path=root)
    meta = _read_meta(root / "meta.json")
    hosts = _read_hosts(root / "hosts.csv")
    if len(hosts) < 2:
        raise DatasetError(f"{len(hosts)} host(s) listed: a measurement needs at least two "
                           "(one to send, one to receive)", path=root / "hosts.csv")
    known = set(hosts["host"])
    method = meta["method"]
    needs_broadcast = method in BROADCAST_METHODS
    transfers_path, iterations_path = root / "transfers.csv", root / "iterations.csv"
    if needs_broadcast or transfers_path.exists() or iterations_path.exists():
        iterations = _read_iterations(iterations_path, known)
        transfers = _read_transfers(transfers_path, known)
        for written in (iterations_path, transfers_path):   # both machine-written
            _at_line_end(written)
        _check_iterations_agree(transfers, iterations, transfers_path, iterations_path)
        if needs_broadcast:
            _check_blocks_fit(transfers, iterations, meta["block_size"], len(hosts),
                              transfers_path)
    else:
        iterations, transfers = _empty(ITERATIONS_COLUMNS), _empty(TRANSFERS_COLUMNS)
    probes_path = root / "probes.csv"
    probes = None
    if probes_path.exists() or method in PROBE_METHODS:
        probes = _read_probes(probes_path, known)
    return Measurement(meta=meta, hosts=hosts, transfers=transfers, iterations=iterations,
                       probes=probes)


META_LIMIT = 16 * 2**20
"""The largest ``meta.json`` read (bytes): it holds a few parameters, not data."""


def _regular_file(path: Path) -> None:
    """Refuse a missing path, a directory, a device or a pipe, before reading it."""
    if not path.exists():
        raise DatasetError("missing file", path=path)
    if not path.is_file():
        kind = "a directory" if path.is_dir() else "not a regular file (a device or a pipe?)"
        raise DatasetError(f"is {kind}, expected a file", path=path)


def _cut_short(path: Path) -> bool:
    """Whether a file's last line has no line end (looks at the last byte only)."""
    with path.open("rb") as fh:
        if fh.seek(0, os.SEEK_END) == 0:
            return False
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) != b"\n"


def _at_line_end(path: Path) -> None:
    """Refuse a machine-written file whose last line has no line end: it was cut short."""
    if _cut_short(path):
        with path.open("rb") as fh:
            lines = sum(1 for _ in fh)
        raise DatasetError("the last line has no line end: the file was cut short (a write "
                           "interrupted?); remove that line or re-measure", path=path,
                           line=lines)


def _drop_cut_line(path: Path) -> None:
    """Remove a last line that has no line end (a write interrupted), keeping the rest."""
    if _cut_short(path):
        with path.open("rb+") as fh:
            fh.truncate(fh.read().rfind(b"\n") + 1)


def _read_meta(path: Path) -> dict[str, Any]:
    _regular_file(path)
    with path.open("rb") as fh:
        raw = fh.read(META_LIMIT + 1)
    if len(raw) > META_LIMIT:
        raise DatasetError(f"larger than {META_LIMIT // 2**20} MiB: not a meta.json", path=path)
    try:
        meta = json.loads(raw.decode("utf-8-sig"))   # a byte-order mark is accepted
    except UnicodeDecodeError as exc:
        raise DatasetError(f"not UTF-8 text (byte {exc.start})", path=path) from None
    except json.JSONDecodeError as exc:
        raise DatasetError(f"not valid JSON: {exc.msg}", path=path, line=exc.lineno) from None
    if not isinstance(meta, dict):
        raise DatasetError("must hold a JSON object", path=path)
    fmt = meta.get("format")
    if fmt != FORMAT:
        raise DatasetError(f"unsupported format version {fmt!r}; this reader understands {FORMAT!r}",
                           path=path, field="format")
    method = meta.get("method")
    if method not in BROADCAST_METHODS | PROBE_METHODS:
        allowed = ", ".join(sorted(BROADCAST_METHODS | PROBE_METHODS))
        raise DatasetError(f"unknown method {method!r}; expected one of {allowed}",
                           path=path, field="method")
    block = meta.setdefault("block_size", BLOCK_SIZE)
    if not isinstance(block, int) or isinstance(block, bool) or block <= 0:
        raise DatasetError(f"must be a positive integer, got {block!r}", path=path,
                           field="block_size")
    if not isinstance(meta.setdefault("params", {}), dict):
        raise DatasetError("must be a JSON object", path=path, field="params")
    return meta


def _read_csv(path: Path, required: Iterable[str]) -> pd.DataFrame:
    _regular_file(path)
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


def _fail_at(mask: np.ndarray, frame: pd.DataFrame, path: Path, column: str, what: str) -> None:
    """Raise for the first row where ``mask`` is true (line = row + 2)."""
    bad = np.flatnonzero(mask)
    if bad.size:
        row = int(bad[0])
        value = frame[column].iloc[row]
        raise DatasetError(f"{what}: {value!r}", path=path, line=row + 2, field=column)


def _integers(frame: pd.DataFrame, column: str, path: Path, *, minimum: int | None = 0) -> np.ndarray:
    text = frame[column].str.strip()
    valid = text.str.fullmatch(r"[+-]?\d+").to_numpy(dtype=bool)
    _fail_at(~valid, frame, path, column, "not an integer")
    digits = text.str.lstrip("+-").str.lstrip("0").str.len().to_numpy()
    _fail_at(digits > 18, frame, path, column, "too large (more than 18 digits)")
    values = text.astype(np.int64).to_numpy()
    if minimum is not None:
        _fail_at(values < minimum, frame, path, column, f"must be >= {minimum}")
    return values


def _floats(frame: pd.DataFrame, column: str, path: Path, *, allow_empty: bool) -> np.ndarray:
    text = frame[column].str.strip()
    empty = (text == "").to_numpy(dtype=bool)
    if not allow_empty:
        _fail_at(empty, frame, path, column, "missing value")
    values = pd.to_numeric(text.where(~empty, "nan"), errors="coerce").to_numpy(dtype=float)
    bad = np.isnan(values) & ~empty
    _fail_at(bad, frame, path, column, "not a number")
    _fail_at(np.isinf(values) | (values < 0), frame, path, column, "must be finite and >= 0")
    return values


def _known_hosts(frame: pd.DataFrame, column: str, path: Path, known: set[str]) -> None:
    unknown = ~frame[column].isin(known).to_numpy(dtype=bool)
    _fail_at(unknown, frame, path, column, "unknown host (not in hosts.csv)")


def read_trace(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read the per-block trace of a dataset (``trace.csv``, written with ``--trace``).

    Returns
    -------
    pandas.DataFrame
        Columns ``iteration``, ``time_s`` (seconds from the broadcast's
        start), ``sender``, ``receiver``, ``piece``, ``block``.

    Raises
    ------
    DatasetError
        When the dataset has no trace or the file is malformed.

    Examples
    --------
    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> w = MeasurementWriter(d, {"method": "bittorrent"}, [("a", "", ""), ("b", "", "")])
    >>> w.add_trace(0, [(0.5, "a", "b", 3, 1)])
    >>> read_trace(d)[["time_s", "sender", "piece"]].values.tolist()
    [[0.5, 'a', 3]]
    """
    file = Path(path) / "trace.csv"
    if not file.exists():
        raise DatasetError("this dataset has no trace (measure with --trace)", path=file)
    frame = _read_csv(file, TRACE_COLUMNS)
    for column in ("iteration", "piece", "block"):
        frame[column] = _integers(frame, column, file)
    frame["time_s"] = _floats(frame, "time_s", file, allow_empty=False)
    return frame


def read_hosts_table(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read a hosts file (``host,address[,label]``, as ``hosts.csv``), validated.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "hosts.csv"
    >>> _ = f.write_text("host,address" + chr(10) + "b,10.0.0.2" + chr(10) + "a,10.0.0.1" + chr(10))
    >>> read_hosts_table(f)["host"].tolist()
    ['a', 'b']
    """
    return _read_hosts(Path(path))


def _read_hosts(path: Path) -> pd.DataFrame:
    frame = _read_csv(path, ("host", "address"))
    if "label" not in frame.columns:
        frame["label"] = ""
    frame["host"] = frame["host"].str.strip()
    _fail_at((frame["host"] == "").to_numpy(dtype=bool), frame, path, "host", "empty host name")
    dup = frame["host"].duplicated().to_numpy(dtype=bool)
    _fail_at(dup, frame, path, "host", "duplicate host")
    if frame.empty:
        raise DatasetError("no hosts", path=path)
    extra = [c for c in frame.columns if c not in HOSTS_COLUMNS]
    frame = frame[list(HOSTS_COLUMNS) + extra]
    return frame.sort_values("host", kind="stable").reset_index(drop=True)


def _read_iterations(path: Path, known: set[str]) -> pd.DataFrame:
    frame = _read_csv(path, ITERATIONS_COLUMNS)
    ids = _integers(frame, "iteration", path)
    _fail_at(pd.Series(ids).duplicated().to_numpy(), frame, path, "iteration", "duplicate iteration")
    _known_hosts(frame, "root", path, known)
    nbytes = _integers(frame, "bytes", path)
    duration = _floats(frame, "duration_s", path, allow_empty=True)
    flag = frame["complete"].str.strip().str.lower()
    ok = flag.isin(_TRUE | _FALSE).to_numpy(dtype=bool)
    _fail_at(~ok, frame, path, "complete", "expected true or false")
    out = frame.copy()
    out["iteration"], out["bytes"], out["duration_s"] = ids, nbytes, duration
    out["complete"] = flag.isin(_TRUE).to_numpy(dtype=bool)
    for column in frame.columns.difference(list(ITERATIONS_COLUMNS)):
        text = frame[column].str.strip()   # extra columns: numbers when they all are
        numbers = pd.to_numeric(text.where(text != "", "nan"), errors="coerce")
        if (text != "").any() and numbers.notna().sum() == (text != "").sum():
            out[column] = numbers
    return out.sort_values("iteration", kind="stable").reset_index(drop=True)


def _read_transfers(path: Path, known: set[str]) -> pd.DataFrame:
    fast = _read_transfers_fast(path, known)
    if fast is not None:
        return fast
    frame = _read_csv(path, TRANSFERS_COLUMNS)
    ids = _integers(frame, "iteration", path)
    _known_hosts(frame, "receiver", path, known)
    _known_hosts(frame, "sender", path, known)
    same = (frame["receiver"] == frame["sender"]).to_numpy(dtype=bool)
    _fail_at(same, frame, path, "sender", "a host cannot receive from itself")
    blocks = _integers(frame, "blocks", path)
    out = frame.copy()
    out["iteration"], out["blocks"] = ids, blocks
    dup = out.duplicated(["iteration", "receiver", "sender"]).to_numpy(dtype=bool)
    _fail_at(dup, frame, path, "sender", "duplicate (iteration, receiver, sender) row")
    return out


def _read_transfers_fast(path: Path, known: set[str]) -> pd.DataFrame | None:
    """``transfers.csv`` parsed by pandas' C parser and checked with whole-column
    operations; None whenever anything is unusual, so that the string-by-string
    reader of :func:`_read_transfers` finds the fault and names its line and field.
    """
    try:
        with path.open(encoding="utf-8", newline="") as fh:
            header = [c.strip() for c in fh.readline().rstrip("\r\n").split(",")]
        if header != list(TRANSFERS_COLUMNS):
            return None
        frame = pd.read_csv(path, keep_default_na=False, skipinitialspace=True,
                            dtype={"receiver": str, "sender": str}, engine="c")
    except (OSError, UnicodeDecodeError, ValueError, pd.errors.ParserError,
            pd.errors.EmptyDataError):
        return None
    if list(frame.columns) != list(TRANSFERS_COLUMNS) or frame.empty:
        return None
    if not all(frame[c].dtype == np.int64 for c in ("iteration", "blocks")):
        return None
    hosts = pd.Index(sorted(known))
    receiver = hosts.get_indexer(frame["receiver"])
    sender = hosts.get_indexer(frame["sender"])
    iteration = frame["iteration"].to_numpy()
    if ((receiver < 0).any() or (sender < 0).any() or (receiver == sender).any()
            or (iteration < 0).any() or (frame["blocks"].to_numpy() < 0).any()):
        return None
    if iteration.max() >= 2**62 // len(hosts) ** 2:
        return None
    key = (iteration * len(hosts) + receiver) * len(hosts) + sender
    if pd.Series(key).duplicated().any():
        return None
    return frame


def _check_iterations_agree(transfers: pd.DataFrame, iterations: pd.DataFrame,
                            transfers_path: Path, iterations_path: Path) -> None:
    listed = set(iterations["iteration"].tolist())
    stray = ~transfers["iteration"].isin(listed).to_numpy(dtype=bool)
    _fail_at(stray, transfers.astype({"iteration": str}), transfers_path, "iteration",
             "iteration not listed in iterations.csv")
    present = set(transfers["iteration"].tolist())
    # iterations.csv is sorted on read; report the line the row had in the file.  An
    # incomplete iteration may have no rows: its root died before sending a block.
    for it, complete in zip(iterations["iteration"], iterations["complete"]):
        if it not in present and complete:
            raise DatasetError(f"iteration {it} has no rows in transfers.csv",
                               path=iterations_path, field="iteration",
                               line=_line_of(iterations_path, "iteration", it))


def _check_blocks_fit(transfers: pd.DataFrame, iterations: pd.DataFrame, block_size: int,
                      n_hosts: int, path: Path) -> None:
    """A host cannot receive more blocks in a broadcast than all the others sending it the
    whole file (counts include redundant blocks: end-game duplicates, pieces fetched again)."""
    if transfers.empty:
        return
    size = dict(zip(iterations["iteration"], iterations["bytes"]))
    blocks = -(-transfers["iteration"].map(size).to_numpy(dtype=np.int64) // block_size)
    most = blocks * max(n_hosts - 1, 1)
    got = transfers.groupby(["iteration", "receiver"])["blocks"].transform("sum").to_numpy()
    over = got > most
    if over.any():
        row = int(np.flatnonzero(over)[0])
        it, host = transfers["iteration"].iloc[row], transfers["receiver"].iloc[row]
        raise DatasetError(f"{host!r} received {int(got[row])} blocks in iteration {it}: more "
                           f"than all {n_hosts - 1} other hosts sending it the whole "
                           f"{int(blocks[row])}-block file (bytes in iterations.csv over "
                           "block_size)", path=path, line=row + 2, field="blocks")


def _line_of(path: Path, column: str, value: int) -> int | None:
    with path.open(newline="", encoding="utf-8") as fh:
        for number, row in enumerate(csv.DictReader(fh), start=2):
            if (row.get(column) or "").strip() == str(value):
                return number
    return None


def _read_probes(path: Path, known: set[str]) -> pd.DataFrame:
    frame = _read_csv(path, PROBES_COLUMNS)
    _known_hosts(frame, "src", path, known)
    _known_hosts(frame, "dst", path, known)
    out = frame.copy()
    failed = (frame["error"].str.strip() != "").to_numpy(dtype=bool) \
        if "error" in frame.columns else np.zeros(len(frame), dtype=bool)
    rate = _floats(frame, "bits_per_second", path, allow_empty=True)
    _fail_at(np.isnan(rate) & ~failed, frame, path, "bits_per_second",
             "missing value (a probe without a rate needs an error)")
    out["bits_per_second"] = rate
    out["streams"] = _integers(frame, "streams", path, minimum=1)
    out["duration_s"] = _floats(frame, "duration_s", path, allow_empty=True)
    for column in PROBE_NUMBERS:
        if column in frame.columns:
            out[column] = _floats(frame, column, path, allow_empty=True)
    if "repeat" in frame.columns:
        out["repeat"] = _integers(frame, "repeat", path, minimum=0)
    return out


# --------------------------------------------------------------------------- writing


def _new_meta(meta: Mapping[str, Any]) -> dict[str, Any]:
    out = {"format": FORMAT, "block_size": BLOCK_SIZE, "params": {}, "topology": None,
           "created": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    out.update(meta)
    out["format"] = FORMAT
    out.setdefault("software", software_versions())
    return out


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
    tomography.errors.DatasetError: ...: a dataset exists here already: continue it with --resume (resume=True) or replace it with --force (overwrite=True)
    """
    if (Path(path) / "meta.json").exists() and not overwrite:
        how = "continue it with --resume (resume=True) or " if resumable else ""
        raise DatasetError(f"a dataset exists here already: {how}replace it with --force "
                           "(overwrite=True)", path=Path(path))


class MeasurementWriter:
    """Write a dataset directory one iteration at a time.

    ``meta.json`` and ``hosts.csv`` are written when the writer opens; each
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
        refuse_existing(self.path, overwrite=overwrite)
        self.path.mkdir(parents=True, exist_ok=True)
        frame = hosts if isinstance(hosts, pd.DataFrame) else pd.DataFrame(
            list(hosts), columns=list(HOSTS_COLUMNS))
        if "label" not in frame.columns:
            frame = frame.assign(label="")
        self.meta = _new_meta(meta)
        self.hosts = set(frame["host"])
        if len(self.hosts) != len(frame):
            raise DatasetError("duplicate host names", field="host")
        (self.path / "meta.json").write_text(json.dumps(self.meta, indent=2) + "\n",
                                             encoding="utf-8")
        frame.sort_values("host").to_csv(self.path / "hosts.csv", index=False)
        self.extra_columns = tuple(iteration_columns)
        files = ((("probes.csv", PROBES_COLUMNS + PROBES_EXTRA),) if probes else
                 (("transfers.csv", TRANSFERS_COLUMNS),
                  ("iterations.csv", ITERATIONS_COLUMNS + self.extra_columns)))
        for name in ("transfers.csv", "iterations.csv", "probes.csv", "trace.csv"):
            (self.path / name).unlink(missing_ok=True)
        for name, columns in files:
            with (self.path / name).open("w", newline="", encoding="utf-8") as fh:
                csv_writer(fh).writerow(columns)

    @classmethod
    def reopen(cls, path: str | os.PathLike[str]) -> "MeasurementWriter":
        """Open an existing dataset to append more iterations (``--resume``).

        Rows of ``transfers.csv`` and ``trace.csv`` whose iteration never
        reached ``iterations.csv`` (a run stopped while writing them) are
        removed, so that the dataset is valid again.

        Examples
        --------
        >>> import tempfile
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
        meta = _read_meta(root / "meta.json")
        hosts = _read_hosts(root / "hosts.csv")
        writer = cls.__new__(cls)
        writer.path, writer.meta, writer.hosts = root, meta, set(hosts["host"])
        writer.extra_columns = ()
        if meta["method"] in PROBE_METHODS:  # probe rows are whole lines, flushed one by one
            _read_probes(root / "probes.csv", writer.hosts)
            return writer
        for name in ("iterations.csv", "transfers.csv", "trace.csv"):
            if (root / name).is_file():
                _drop_cut_line(root / name)
        iterations = _read_iterations(root / "iterations.csv", set(hosts["host"]))
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
        try:
            with path.open("a", newline="", encoding="utf-8") as fh:
                yield fh
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as exc:
            raise DatasetError(f"cannot write ({exc.strerror or exc}); the iterations written "
                               "before are kept: make room, then continue with --resume",
                               path=path) from None

    def update_meta(self, **keys: Any) -> None:
        """Set keys of ``meta.json`` (a resumed run records its new hosts), atomically.

        Examples
        --------
        >>> import tempfile
        >>> d = tempfile.mkdtemp()
        >>> w = MeasurementWriter(d, {"method": "synthetic"}, [("a", "", ""), ("b", "", "")])
        >>> w.update_meta(note="resumed")
        >>> read_measurement(d).meta["note"]
        'resumed'
        """
        self.meta = {**self.meta, **keys}
        fresh = self.path / "meta.json.tmp"
        fresh.write_text(json.dumps(self.meta, indent=2) + "\n", encoding="utf-8")
        os.replace(fresh, self.path / "meta.json")

    def add_probe(self, row: Mapping[str, Any]) -> None:
        """Append one probe test to ``probes.csv`` (a writer opened with ``probes=True``).

        ``row`` has the columns of ``PROBES_COLUMNS`` and ``PROBES_EXTRA``
        (missing ones are left empty); the line is flushed at once.

        Examples
        --------
        >>> import tempfile
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
                                     for c in PROBES_COLUMNS + PROBES_EXTRA])

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
        with self._appending("transfers.csv") as fh:
            out = csv_writer(fh)
            for receiver, sender, blocks in rows:
                if int(blocks):
                    out.writerow((iteration, receiver, sender, int(blocks)))
        duration = "" if duration_s is None or math.isnan(duration_s) else f"{duration_s:.6f}"
        with self._appending("iterations.csv") as fh:
            extra = extra or {}
            csv_writer(fh).writerow((iteration, root, int(nbytes), duration,
                                     "true" if complete else "false",
                                     *(extra.get(c, "") for c in self.extra_columns)))

    def add_trace(self, iteration: int, rows: Iterable[tuple[float, str, str, int, int]]) -> None:
        """Append the per-block trace of an iteration to ``trace.csv``.

        Call it before :meth:`add_iteration` of the same iteration, so that
        a run stopped in between leaves no trace of an unlisted iteration.

        Parameters
        ----------
        iteration : int
        rows : iterable of (time_s, sender, receiver, piece, block)
            One row per 16 KiB block sent, ``time_s`` from the broadcast's start.

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


def _keep_iterations(path: Path, listed: set[int]) -> None:
    """Rewrite a CSV whose first column is the iteration, keeping only ``listed`` ones."""
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    kept = rows[:1] + [r for r in rows[1:] if r and r[0].strip().isdigit()
                       and int(r[0]) in listed]
    if len(kept) != len(rows):
        with path.open("w", newline="", encoding="utf-8") as fh:
            csv_writer(fh).writerows(kept)


def write_measurement(measurement: Measurement, path: str | os.PathLike[str], *,
                      overwrite: bool = False) -> None:
    """Write a measurement to a dataset directory.

    Parameters
    ----------
    measurement : Measurement
    path : str or path-like
        The directory; created if missing.
    overwrite : bool, default False
        Replace an existing dataset.

    Raises
    ------
    DatasetError
        When ``path`` holds a dataset and ``overwrite`` is false.

    Examples
    --------
    >>> import tempfile
    >>> from tomography.synthetic import planted_partition
    >>> m = planted_partition(8, 2, iterations=1, seed=0)
    >>> d = tempfile.mkdtemp()
    >>> write_measurement(m, d, overwrite=True)
    >>> read_measurement(d).transfers.equals(m.transfers)
    True
    """
    root = Path(path)
    refuse_existing(root, overwrite=overwrite, resumable=False)
    root.mkdir(parents=True, exist_ok=True)
    meta = _new_meta(measurement.meta)
    (root / "meta.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    measurement.hosts.to_csv(root / "hosts.csv", index=False)
    if meta["method"] in BROADCAST_METHODS or len(measurement.iterations):
        measurement.transfers.to_csv(root / "transfers.csv", index=False)
        iterations = measurement.iterations.copy()
        iterations["complete"] = np.where(iterations["complete"].astype(bool), "true", "false")
        iterations.to_csv(root / "iterations.csv", index=False)
    if measurement.probes is not None:
        measurement.probes.to_csv(root / "probes.csv", index=False)
