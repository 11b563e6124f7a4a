"""Each file of a dataset read on its own and checked: hosts, iterations, transfers, probes, trace.

Every reader raises :class:`~tomography.model.errors.DatasetError` naming the
file, line and field of the first fault; hosts are checked against the
hosts of ``hosts.csv`` (``known``).  The checks across files are
:func:`tomography.model.dataset.read_measurement`'s.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from tomography.model.dataset.schema import (HOSTS_COLUMNS, ITERATIONS_COLUMNS, MAX_BLOCKS,
                                             MAX_FILE_BYTES, PROBE_NUMBERS, PROBE_PROTOCOLS,
                                             PROBES_COLUMNS, TRACE_COLUMNS, TRANSFERS_COLUMNS)
from tomography.model.dataset.validation import (at_line_end, fail_at, floats, integers,
                                                 known_hosts, read_csv, regular_file)
from tomography.model.errors import DatasetError

__all__ = ["read_hosts_table", "read_trace", "read_hosts", "read_iterations", "read_transfers",
           "read_probes"]

_TRUE = {"true", "1", "yes"}
_FALSE = {"false", "0", "no"}


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
    >>> from tomography.model.dataset import MeasurementWriter
    >>> d = tempfile.mkdtemp()
    >>> w = MeasurementWriter(d, {"method": "bittorrent"}, [("a", "", ""), ("b", "", "")])
    >>> w.add_trace(0, [(0.5, "a", "b", 3, 1)])
    >>> read_trace(d)[["time_s", "sender", "piece"]].values.tolist()
    [[0.5, 'a', 3]]
    """
    file = Path(path) / "trace.csv"
    if not file.exists():
        raise DatasetError("this dataset has no trace (measure with --trace)", path=file)
    frame = read_csv(file, TRACE_COLUMNS)
    at_line_end(file)   # machine-written: a last line without its end was cut short
    for column in ("iteration", "piece", "block"):
        frame[column] = integers(frame, column, file)
    frame["time_s"] = floats(frame, "time_s", file, allow_empty=False)
    return frame


def read_hosts_table(path: str | os.PathLike[str], *,
                     several_addresses: bool = False) -> pd.DataFrame:
    """Read a hosts file (``host,address[,label]``, as ``hosts.csv``), validated.

    Parameters
    ----------
    path : path
        The file.
    several_addresses : bool
        Allow several rows per host, one per address (a host's name, its
        IPv4 and IPv6 addresses), as the imports read them; an address
        given to two different hosts is refused.  By default each host has
        one row (``hosts.csv``'s rule).

    Raises
    ------
    DatasetError
        An empty host name, a host given twice (an address given to two
        hosts, or one host with two labels, with ``several_addresses``),
        no hosts; named with the file.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "hosts.csv"
    >>> _ = f.write_text("host,address" + chr(10) + "b,10.0.0.2" + chr(10) + "a,10.0.0.1" + chr(10))
    >>> read_hosts_table(f)["host"].tolist()
    ['a', 'b']
    >>> _ = f.write_text(chr(10).join(["host,address", "a,10.0.0.1", "b,10.0.0.2",
    ...                                "a,ps-a.example.net", ""]))
    >>> read_hosts_table(f, several_addresses=True)[["host", "address"]].values.tolist()
    [['a', '10.0.0.1'], ['a', 'ps-a.example.net'], ['b', '10.0.0.2']]
    """
    if not several_addresses:
        return read_hosts(Path(path))
    path = Path(path)
    return hosts_of_addresses(read_csv(path, ("host", "address")), path)


def hosts_of_addresses(frame: pd.DataFrame, path: Path) -> pd.DataFrame:
    """The hosts table of an import's hosts file read as text (``host,address[,label]``, a row
    per address): an address given to two hosts, or a host given two labels, refused naming
    ``path``; each host's label on all its rows; sorted by host.

    Examples
    --------
    >>> rows = pd.DataFrame({"host": ["b", "a", "a"], "address": ["2", "1", "x"]})
    >>> hosts_of_addresses(rows, Path("hosts.csv"))[["host", "address"]].values.tolist()
    [['a', '1'], ['a', 'x'], ['b', '2']]
    """
    frame = frame.copy()
    if "label" not in frame.columns:
        frame["label"] = ""
    frame["host"], frame["address"] = frame["host"].str.strip(), frame["address"].str.strip()
    fail_at((frame["host"] == "").to_numpy(dtype=bool), frame, path, "host", "empty host name")
    if frame.empty:
        raise DatasetError("no hosts", path=path)
    given = frame[frame["address"] != ""]
    owners = given.groupby("address", sort=False)["host"].unique()
    for address, hosts in owners.items():
        if len(hosts) > 1:
            raise DatasetError(f"address {address!r} is given to two hosts, {hosts[0]!r} and "
                               f"{hosts[1]!r}", path=path)
    labels = frame[frame["label"].str.strip() != ""].groupby("host", sort=False)["label"].unique()
    for host, names in labels.items():
        if len(names) > 1:
            raise DatasetError(f"host {host!r} has two labels, {names[0]!r} and {names[1]!r}",
                               path=path)
    frame["label"] = frame.groupby("host", sort=False)["label"].transform(
        lambda names: next((n for n in names if n.strip()), ""))  # the label on any of its rows
    frame = frame.drop_duplicates(["host", "address"])
    extra = [c for c in frame.columns if c not in HOSTS_COLUMNS]
    frame = frame[list(HOSTS_COLUMNS) + extra]
    return frame.sort_values("host", kind="stable").reset_index(drop=True)


def read_hosts(path: Path) -> pd.DataFrame:
    """``hosts.csv``: unique, non-empty host names, sorted; ``label`` ``""`` when missing."""
    frame = read_csv(path, ("host", "address"))
    if "label" not in frame.columns:
        frame["label"] = ""
    frame["host"] = frame["host"].str.strip()
    fail_at((frame["host"] == "").to_numpy(dtype=bool), frame, path, "host", "empty host name")
    dup = frame["host"].duplicated().to_numpy(dtype=bool)
    fail_at(dup, frame, path, "host", "duplicate host")
    if frame.empty:
        raise DatasetError("no hosts", path=path)
    extra = [c for c in frame.columns if c not in HOSTS_COLUMNS]
    frame = frame[list(HOSTS_COLUMNS) + extra]
    return frame.sort_values("host", kind="stable").reset_index(drop=True)


def read_iterations(path: Path, known: set[str]) -> pd.DataFrame:
    """``iterations.csv``, sorted by iteration; extra columns become numbers when they all are."""
    frame = read_csv(path, ITERATIONS_COLUMNS)
    ids = integers(frame, "iteration", path)
    fail_at(pd.Series(ids).duplicated().to_numpy(), frame, path, "iteration", "duplicate iteration")
    known_hosts(frame, "root", path, known)
    nbytes = integers(frame, "bytes", path, maximum=MAX_FILE_BYTES)
    duration = floats(frame, "duration_s", path, allow_empty=True)
    flag = frame["complete"].str.strip().str.lower()
    ok = flag.isin(_TRUE | _FALSE).to_numpy(dtype=bool)
    fail_at(~ok, frame, path, "complete", "expected true or false")
    out = frame.copy()
    out["iteration"], out["bytes"], out["duration_s"] = ids, nbytes, duration
    out["complete"] = flag.isin(_TRUE).to_numpy(dtype=bool)
    for column in frame.columns.difference(list(ITERATIONS_COLUMNS)):
        text = frame[column].str.strip()   # extra columns: numbers when they all are
        numbers = pd.to_numeric(text.where(text != "", "nan"), errors="coerce")
        if (text != "").any() and numbers.notna().sum() == (text != "").sum():
            out[column] = numbers
    return out.sort_values("iteration", kind="stable").reset_index(drop=True)


def read_transfers(path: Path, known: set[str]) -> pd.DataFrame:
    """``transfers.csv``: one row per (iteration, receiver, sender), between known hosts."""
    fast = _read_transfers_fast(path, known)
    if fast is not None:
        return fast
    frame = read_csv(path, TRANSFERS_COLUMNS)
    ids = integers(frame, "iteration", path)
    known_hosts(frame, "receiver", path, known)
    known_hosts(frame, "sender", path, known)
    same = (frame["receiver"] == frame["sender"]).to_numpy(dtype=bool)
    fail_at(same, frame, path, "sender", "a host cannot receive from itself")
    blocks = integers(frame, "blocks", path, maximum=MAX_BLOCKS)
    out = frame.copy()
    out["iteration"], out["blocks"] = ids, blocks
    dup = out.duplicated(["iteration", "receiver", "sender"]).to_numpy(dtype=bool)
    fail_at(dup, frame, path, "sender", "duplicate (iteration, receiver, sender) row")
    return out


def _read_transfers_fast(path: Path, known: set[str]) -> pd.DataFrame | None:
    """``transfers.csv`` parsed by pandas' C parser and checked with whole-column
    operations; None whenever anything is unusual, so that the string-by-string
    reader of :func:`read_transfers` finds the fault and names its line and field.
    """
    regular_file(path)   # before opening: a pipe or a device would block or never end
    try:
        with path.open(encoding="utf-8", newline="") as fh:
            header = [c.strip() for c in fh.readline(4096).rstrip("\r\n").split(",")]
        if header != list(TRANSFERS_COLUMNS):
            return None
        with warnings.catch_warnings():   # a row longer than the header: the slow reader
            warnings.simplefilter("error", pd.errors.ParserWarning)
            frame = pd.read_csv(path, keep_default_na=False, skipinitialspace=True,
                                dtype={"receiver": str, "sender": str}, engine="c",
                                index_col=False)
    except (OSError, UnicodeDecodeError, ValueError, pd.errors.ParserError,
            pd.errors.EmptyDataError, pd.errors.ParserWarning):
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
            or (iteration < 0).any() or (frame["blocks"].to_numpy() < 0).any()
            or (frame["blocks"].to_numpy() > MAX_BLOCKS).any()):
        return None
    if iteration.max() >= 2**62 // len(hosts) ** 2:
        return None
    key = (iteration * len(hosts) + receiver) * len(hosts) + sender
    if pd.Series(key).duplicated().any():
        return None
    return frame


def read_probes(path: Path, known: set[str]) -> pd.DataFrame:
    """``probes.csv``: a rate for every probe run but those that failed with an error.

    ``protocol`` is ``tcp`` or ``udp``; a file without the column (or an
    empty value) is TCP, as every probe mesh measures.
    """
    frame = read_csv(path, PROBES_COLUMNS)
    known_hosts(frame, "src", path, known)
    known_hosts(frame, "dst", path, known)
    out = frame.copy()
    failed = (frame["error"].str.strip() != "").to_numpy(dtype=bool) \
        if "error" in frame.columns else np.zeros(len(frame), dtype=bool)
    rate = floats(frame, "bits_per_second", path, allow_empty=True)
    fail_at(np.isnan(rate) & ~failed, frame, path, "bits_per_second",
            "missing value (a probe without a rate needs an error)")
    out["bits_per_second"] = rate
    out["streams"] = integers(frame, "streams", path, minimum=1)
    out["duration_s"] = floats(frame, "duration_s", path, allow_empty=True)
    for column in PROBE_NUMBERS:
        if column in frame.columns:
            out[column] = floats(frame, column, path, allow_empty=True)
    if "repeat" in frame.columns:
        out["repeat"] = integers(frame, "repeat", path, minimum=0)
    protocol = frame["protocol"].str.strip().str.lower().replace("", "tcp") \
        if "protocol" in frame.columns else pd.Series("tcp", index=frame.index)
    fail_at(~protocol.isin(PROBE_PROTOCOLS).to_numpy(dtype=bool), frame, path, "protocol",
            f"not a protocol ({' or '.join(PROBE_PROTOCOLS)})")
    out["protocol"] = protocol
    return out
