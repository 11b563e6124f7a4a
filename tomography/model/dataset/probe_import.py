"""What every import of probe results shares: the figures' checks, the tests' identity, the writer.

:mod:`~tomography.model.dataset.pscheduler` (perfSONAR's archives) and
:mod:`~tomography.model.dataset.iperf3` (iperf3's own reports) read their documents into rows of ``probes.csv``; the
rows then pass here: duplicates (the client's and the server's report of one
test, one run read twice) are dropped, the hosts' names are checked before
they name a file, and :func:`write_probe_import` writes the probe dataset, all
or nothing, with an :class:`ImportSummary` of what it kept and skipped.  The
limits of a test's figures (:data:`MAX_STREAMS`, :data:`MAX_TEST_SECONDS`,
:data:`MAX_RETRANSMITS`) are the same for every format.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from tomography.model.dataset import MeasurementWriter
from tomography.model.dataset.lock import DIR_MODE, LOCK_NAME, file_opener
from tomography.model.errors import DatasetError
from tomography.model.units import counted, listed

__all__ = ["ImportSummary", "write_probe_import", "stream_count", "alias_conflicts",
           "MAX_STREAMS", "MAX_TEST_SECONDS", "MAX_RETRANSMITS"]

NOT_THROUGHPUT = "that {are} not {a}throughput result{s}"
ONE_HOST = "test{s} between two addresses of one host (the hosts file) skipped"
SAME_RUN_SECONDS = 60.0
"""Two copies of one test start within this many seconds of each other (the client's
and the server's clocks, an archive's rounding)."""
MAX_STREAMS = 128
"""The most parallel streams a test can have (iperf3's own limit, ``-P``)."""

MAX_TEST_SECONDS = 2 * 86_400.0
"""The longest test a report may give (s): iperf3 runs a test a day at most (``-t``), and the
server's side ends a little after the client's."""

MAX_RETRANSMITS = 2**40
"""The most retransmitted segments a report may give (far beyond a day at 100 Tbit/s)."""


class _Refused(ValueError):
    """A report's field that no iperf3 test gives (its message names the field)."""


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:40] + "..."


def _part(parent: dict[str, Any], key: str, where: str, kind: type = dict) -> Any:
    """``parent[key]`` when it is a ``kind`` (None when absent), refused otherwise."""
    value = parent.get(key)
    if value is None or isinstance(value, kind):
        return value
    raise _Refused(f"{where}{key} is {_short(value)}, not a JSON "
                   f"{'object' if kind is dict else 'list'}")


def _figure(part: dict[str, Any], key: str, where: str, *, high: float, whole: bool = False,
            positive: bool = False, default: float | None = None) -> float:
    """A report's number ``part[key]``: finite, from 0 (above 0 if ``positive``) to ``high``,
    whole if asked; refused naming ``where + key`` otherwise."""
    value = part.get(key, default)
    name = where + key
    if value is None:
        raise _Refused(f"no {name}")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _Refused(f"{name} is {_short(value)}, not a number")
    number = float(value)
    low = "above 0" if positive else "from 0"
    if not (math.isfinite(number) and (number > 0 if positive else number >= 0)
            and number <= high and (number.is_integer() or not whole)):
        raise _Refused(f"{name} {_short(value)} is no figure of a test "
                       f"({'a whole number ' if whole else ''}{low} to {high:.4g})")
    return number


def stream_count(value: Any) -> int | None:
    """A stream count as a report gives it: a whole number from 1 to :data:`MAX_STREAMS`
    (``4``, ``4.0``, ``"4"``), else None.

    Examples
    --------
    >>> stream_count(4), stream_count("2"), stream_count(1e308), stream_count("abc")
    (4, 2, None, None)
    """
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    if not (1 <= number <= MAX_STREAMS) or not number.is_integer():
        return None
    return int(number)


def _text(value: Any) -> str | None:
    """A non-empty string (a participant may be ``{"host": ...}``), else None."""
    if isinstance(value, dict):
        value = value.get("host")
    return value.strip() if isinstance(value, str) and value.strip() else None


def _aliases(row: dict[str, Any], *pairs: tuple[Any, Any]) -> None:
    """Record that the document names one endpoint by both names of each pair (an address
    and its host name, the spec's source and the lead participant): a hosts file that maps
    the two to different hosts has swapped something (:func:`alias_conflicts`)."""
    names = [(a, b) for a, b in ((_text(x), _text(y)) for x, y in pairs)
             if a is not None and b is not None and a != b]
    if names:
        row["_names"] = row.get("_names", []) + names


def alias_conflicts(frame: pd.DataFrame, name: dict[str, str]) -> list[str]:
    """Where a hosts file contradicts the documents: two names the documents give one
    endpoint (``_names`` of the rows) that the hosts file (``name``: address or host ->
    host) gives to two different hosts.

    Examples
    --------
    >>> rows = pd.DataFrame({"_names": [[("10.0.0.1", "ps-a.example.net")]]})
    >>> alias_conflicts(rows, {"10.0.0.1": "n2", "ps-a.example.net": "n1"})
    ["the hosts file gives 10.0.0.1 to n2 but ps-a.example.net to n1, which the documents name as one endpoint (1 test): two hosts' addresses swapped?"]
    """
    if "_names" not in frame:
        return []
    found: Counter = Counter()
    for names in frame["_names"]:
        for a, b in names if isinstance(names, list) else []:
            if a in name and b in name and name[a] != name[b]:
                found[(a, b)] += 1
    return [f"the hosts file gives {a} to {name[a]} but {b} to {name[b]}, which the documents "
            f"name as one endpoint ({counted(n, 'test')}): two hosts' addresses swapped?"
            for (a, b), n in sorted(found.items())]


def _same_test(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two rows that share a key are one test: same protocol, outcome, start (within
    :data:`SAME_RUN_SECONDS`), ends and ``_sig`` where both know them."""
    if a["protocol"] != b["protocol"] or bool(a.get("error")) != bool(b.get("error")) or \
            a.get("_sig") != b.get("_sig"):
        return False
    starts = [a.get("start"), b.get("start")]
    if None not in starts and not all(isinstance(t, float) and t != t for t in starts) and \
            abs(float(starts[0]) - float(starts[1])) > SAME_RUN_SECONDS:  # type: ignore[arg-type]
        return False
    ends = [a.get("_ends"), b.get("_ends")]
    return None in ends or ends[0] <= ends[1] or ends[1] <= ends[0]  # type: ignore[operator]


def _drop_duplicates(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """The rows without the second copies of one test (same key, :func:`_same_test`), the
    preferred copy kept (lowest ``_rank``, then the first read), and how many were dropped.

    A kept row without ``rtt_ms`` takes its copy's (iperf3's server sends in a ``-R`` test).
    """
    order = sorted(range(len(rows)), key=lambda i: (rows[i].get("_rank", 0),
                                                    "_drop" in rows[i], i))
    seen: dict[Any, list[int]] = {}
    kept: list[int] = []
    duplicates = 0
    for i in order:
        row = rows[i]
        twin = next((j for key in row.get("_keys", ()) for j in seen.get(key, ())
                     if _same_test(row, rows[j])), None)
        if twin is not None:
            duplicates += 1
            if rows[twin].get("rtt_ms") is None and row.get("rtt_ms") is not None:
                rows[twin]["rtt_ms"] = row["rtt_ms"]
            continue
        kept.append(i)
        for key in row.get("_keys", ()):
            seen.setdefault(key, []).append(i)
    return [rows[i] for i in sorted(kept)], duplicates


def _probe_frame(rows: list[dict[str, Any]], paths: list[Path], skipped: Counter[str],
                 because: str = NOT_THROUGHPUT) -> pd.DataFrame:
    """The imported rows as a frame: duplicates and skipped tests counted in ``attrs``."""
    rows, duplicates = _drop_duplicates(rows)
    dropped = Counter(row["_drop"] for row in rows if "_drop" in row)
    rows = [row for row in rows if "_drop" not in row]
    if not rows:
        notes = ([_skips(skipped, because)] if skipped else []) + \
            ([f"skipped {counted(duplicates, 'duplicate')}"] if duplicates else []) + \
            [_dropped(why, n) for why, n in sorted(dropped.items())]
        raise DatasetError("no throughput result in " + ", ".join(map(str, paths))
                           + (f" ({'; '.join(notes)})" if notes else ""))
    frame = pd.DataFrame(rows)
    n_listed = int(frame["_listed"].eq(True).sum()) if "_listed" in frame else 0
    frame = frame.drop(columns=[c for c in ("_keys", "_ends", "_drop", "_listed", "_rank",
                                            "_sig") if c in frame])
    frame["repeat"] = frame.groupby(["src", "dst", "protocol"]).cumcount()  # n-th run of a pair
    frame.attrs.update(skipped=dict(skipped), skipped_because=because, duplicates=duplicates,
                       dropped=dict(dropped), listed=n_listed)
    return frame


def _dropped(why: str, n: int) -> str:
    """``3 loopback tests (...) skipped``: a count and its phrase, singular or plural."""
    return f"{n} " + why.format(s="" if n == 1 else "s", v="s" if n == 1 else "")


def _skips(skipped: Counter[str] | dict[str, int], what: str = NOT_THROUGHPUT) -> str:
    total = sum(skipped.values())
    kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(skipped.items(),
                                                          key=lambda kv: (-kv[1], kv[0])))
    one = total == 1
    because = what.format(are="is" if one else "are", a="a " if one else "", s="" if one else "s")
    return f"skipped {counted(total, 'document')} {because} ({kinds})"


LISTED = "{n} without their task: direction as the participants list it (a reverse test " \
    "would be the wrong way round)"


@dataclass
class ImportSummary:
    """What an import wrote: rows, UDP rows kept apart, failed tests, what it skipped.

    ``skipped`` counts the documents that are not throughput results (by
    test type), ``duplicates`` the second copies of one test (the same run
    read twice), ``dropped`` the tests skipped for a reason (loopback, an
    unknown end) and ``listed`` the runs whose direction is the order of
    their participants (no task to say whether they were reversed).
    """

    path: Path
    rows: int = 0
    udp: int = 0
    failed: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    skipped_because: str = NOT_THROUGHPUT
    duplicates: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    listed: int = 0
    conflicts: list[str] = field(default_factory=list)

    def describe(self, what: str = "run") -> str:
        """One line for the user.

        Examples
        --------
        >>> ImportSummary(Path("site"), 12, udp=2, skipped={"latency": 2, "unrecognised": 1}
        ...               ).describe()
        'imported 12 runs into site (2 UDP runs kept apart from the TCP weights); skipped 3 documents that are not throughput results (2 latency, 1 unrecognised)'
        >>> ImportSummary(Path("site"), 1, skipped={"rtt": 1}, duplicates=1,
        ...               dropped={ONE_HOST: 2}).describe()
        'imported 1 run into site; skipped 1 document that is not a throughput result (1 rtt); 1 duplicate skipped (the same test read twice); 2 tests between two addresses of one host (the hosts file) skipped'
        """
        text = f"imported {counted(self.rows, what)} into {self.path}"
        notes = ([f"{counted(self.udp, 'UDP ' + what)} kept apart from the TCP weights"]
                 if self.udp else []) + ([f"{self.failed} failed"] if self.failed else [])
        text += f" ({'; '.join(notes)})" if notes else ""
        text += f"; {_skips(self.skipped, self.skipped_because)}" if self.skipped else ""
        text += (f"; {counted(self.duplicates, 'duplicate')} skipped (the same test read "
                 "twice)") if self.duplicates else ""
        return text + "".join(f"; {_dropped(why, n)}" for why, n in sorted(self.dropped.items()))

    @property
    def warnings(self) -> list[str]:
        """What the user should check: runs whose direction is only the participants' order,
        and a hosts file that gives two names of one endpoint to two hosts.

        Examples
        --------
        >>> ImportSummary(Path("site"), 3, listed=2).warnings
        ['2 runs without their task: direction as the participants list it (a reverse test would be the wrong way round)']
        """
        return ([LISTED.format(n=counted(self.listed, "run"))] if self.listed else []) \
            + list(self.conflicts)


def write_probe_import(frame: pd.DataFrame, output: str | os.PathLike[str], source: str, *,
                       hosts: pd.DataFrame | None = None, overwrite: bool = False,
                       params: dict[str, Any] | None = None,
                       raw: list[str] | None = None) -> ImportSummary:
    """Write imported probe rows as a probe dataset (method ``iperf3``), naming the addresses.

    Parameters
    ----------
    frame : DataFrame
        Rows of ``probes.csv`` with addresses (or host names) in ``src`` and ``dst``.
    output : path
        The dataset directory.
    source : str
        ``meta.json``'s ``source``: ``pscheduler``, ``iperf3-json``.
    hosts : DataFrame, optional
        ``host,address[,label]``; by default each address is a host.
    params : dict, optional
        More keys for ``meta.json``'s ``params``.
    raw : list of str, optional
        The tools' own documents, one per row, written to ``raw/`` as the
        probe meshes do (``SRC--DST--REPEAT.json``).

    Returns
    -------
    ImportSummary

    Raises
    ------
    DatasetError
        An address the hosts file does not name.

    Examples
    --------
    >>> import tempfile
    >>> rows = pd.DataFrame({"src": ["10.0.0.1"], "dst": ["10.0.0.2"], "tool": ["iperf3"],
    ...                      "protocol": ["tcp"], "bits_per_second": [9.4e8], "streams": [1],
    ...                      "concurrent": [1], "repeat": [0], "error": [""]})
    >>> write_probe_import(rows, tempfile.mkdtemp() + "/d", "pscheduler").rows
    1
    """
    skipped = dict(frame.attrs.get("skipped", {}))
    because = frame.attrs.get("skipped_because", NOT_THROUGHPUT)
    dropped = Counter(frame.attrs.get("dropped", {}))
    duplicates, as_listed = frame.attrs.get("duplicates", 0), frame.attrs.get("listed", 0)
    addresses = sorted(set(frame["src"]) | set(frame["dst"]))
    conflicts: list[str] = []
    if hosts is None:
        table = pd.DataFrame({"host": addresses, "address": addresses, "label": ""})
    else:
        table = hosts.copy()
        if "label" not in table:
            table["label"] = ""
        name = {**dict(zip(table["address"], table["host"])),  # several addresses a host
                **dict(zip(table["host"], table["host"]))}
        unknown = [a for a in addresses if a not in name]
        if unknown:
            where = frame.loc[(frame["src"] == unknown[0]) | (frame["dst"] == unknown[0]),
                              "_where"].iloc[0] if "_where" in frame else "the results"
            raise DatasetError(f"{where} names {unknown[0]!r}, which the hosts file has "
                               f"neither as host nor as address ({len(unknown)} unknown: "
                               f"{listed(unknown)})")
        conflicts = alias_conflicts(frame, name)
        frame = frame.assign(src=frame["src"].map(name), dst=frame["dst"].map(name))
        one_host = (frame["src"] == frame["dst"]).to_numpy(dtype=bool)
        if one_host.any():  # two addresses of one host: a loopback test
            dropped[ONE_HOST] += int(one_host.sum())
            if raw is not None:
                raw = [r for r, drop in zip(raw, one_host) if not drop]
            frame = frame[~one_host]
            if frame.empty:
                raise DatasetError(f"every test is between two addresses of one host "
                                   f"({len(one_host)} tests): nothing to import")
        # hosts.csv: one row a host, with its first address
        table = table.drop_duplicates("host", keep="first")
        table = table[table["host"].isin(set(frame["src"]) | set(frame["dst"]))]
    _check_names(frame)     # they name the files of raw/: nothing outside the dataset
    frame = frame.assign(repeat=frame.groupby(["src", "dst", "protocol"]).cumcount())
    tools = sorted(set(frame["tool"]))
    out = Path(output)
    made = next((p for p in (out, *out.parents) if p.parent.exists() or p == p.parent), out)
    existed = made.exists()
    writer = MeasurementWriter(output, {"method": "iperf3", "source": source,
                                        "params": {"tools": tools, "runs": len(frame),
                                                   **(params or {})}},
                               table[["host", "address", "label"]], overwrite=overwrite,
                               probes=True)
    try:
        if raw is not None:
            (writer.path / "raw").mkdir(mode=DIR_MODE, exist_ok=True)
        for i, row in enumerate(frame.drop(columns=["_where", "_names"], errors="ignore")
                                .to_dict("records")):
            writer.add_probe({k: _cell(k, v) for k, v in row.items()})
            if raw is not None:
                name = (f"{row['src']}--{row['dst']}--{row['repeat']}"
                        f"{'' if row['protocol'] == 'tcp' else '--' + row['protocol']}.json")
                with open(writer.path / "raw" / name, "w", encoding="utf-8",
                          opener=file_opener) as fh:   # 0644 at most, whatever the umask
                    fh.write(raw[i])
    except BaseException:   # all or nothing: a refused or interrupted import leaves no dataset
        writer.close()
        _remove_import(out, made if not existed else None)
        raise
    writer.close()
    failed = int((frame["error"].astype(str).str.strip() != "").sum()) if "error" in frame else 0
    return ImportSummary(Path(output), len(frame), udp=int((frame["protocol"] == "udp").sum()),
                         failed=failed, skipped=skipped, skipped_because=because,
                         duplicates=duplicates, dropped=dict(dropped), listed=as_listed,
                         conflicts=conflicts)


def _check_names(frame: pd.DataFrame) -> None:
    """Refuse a sender or receiver name that is no safe file name part (``..``, ``/``, a
    control character, HTML, hundreds of characters), naming the document that gives it."""
    from tomography.model.hosts_checks import check_host_name

    for column, role in (("src", "sender"), ("dst", "receiver")):
        for i in frame.drop_duplicates(column).index:
            where = frame.at[i, "_where"] if "_where" in frame else None
            try:
                check_host_name(str(frame.at[i, column]), path=where, field=role)
            except DatasetError as exc:
                raise DatasetError(f"{exc.reason}; an address that is no file name (IPv6 "
                                   "with a zone) takes a name from --hosts", path=exc.path,
                                   field=exc.field) from None


def _remove_import(out: Path, made: Path | None) -> None:
    """What a failed import wrote at ``out``: the directories it made (``made``), else the
    dataset's files in a directory that was there before."""
    import shutil

    from tomography.model.dataset.incremental import DATA_FILES

    if made is not None:
        shutil.rmtree(made, ignore_errors=True)
        return
    for name in (*DATA_FILES, "meta.json", "hosts.csv", LOCK_NAME):
        (out / name).unlink(missing_ok=True)
    shutil.rmtree(out / "raw", ignore_errors=True)


_WHOLE = ("streams", "concurrent", "repeat", "bytes", "retransmits")
"""Columns of counts: written as whole numbers (``159``, not ``159.0``)."""


def _cell(column: str, value: Any) -> Any:
    """A value as ``probes.csv`` has it: empty for a missing number, counts whole."""
    if isinstance(value, float):
        if value != value:
            return None
        if column in _WHOLE and value.is_integer():
            return int(value)
    return value
