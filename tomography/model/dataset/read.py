"""Read a dataset directory: :func:`read_measurement`, with the checks across its files."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import numpy as np
import pandas as pd

from tomography.model.dataset.measurement import Measurement, empty_frame
from tomography.model.dataset.meta import read_meta
from tomography.model.dataset.schema import (BROADCAST_METHODS, FILE_LIMITS, ITERATIONS_COLUMNS,
                                             MAX_BLOCKS, MAX_HOSTS, MAX_TOTAL_BLOCKS, PROBE_METHODS,
                                             TRANSFERS_COLUMNS)
from tomography.model.dataset.tables import read_hosts, read_iterations, read_probes, read_transfers
from tomography.model.dataset.validation import at_line_end, fail_at, regular_file
from tomography.model.errors import DatasetError

__all__ = ["read_measurement", "check_files"]


def check_files(path: str | os.PathLike[str]) -> None:
    """Refuse a dataset file that is not a regular file or is larger than its limit.

    Every file of the format present in the directory (``meta.json``,
    ``hosts.csv``, ``transfers.csv``, ``iterations.csv``, ``probes.csv``,
    ``trace.csv``; :data:`~tomography.model.dataset.schema.FILE_LIMITS`) is looked
    at with ``stat`` before any is opened: a named pipe would block the reader
    forever, a link to ``/dev/zero`` would never end.  A link to a regular
    file is that file.  Missing files are left to the readers.

    Raises
    ------
    DatasetError
        Naming the file and what it is.

    Examples
    --------
    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> os.symlink("/dev/zero", os.path.join(d, "transfers.csv"))
    >>> check_files(d)
    Traceback (most recent call last):
    ...
    tomography.model.errors.DatasetError: .../transfers.csv: is not a regular file (a character device), expected a file
    """
    root = Path(path)
    for name, limit in FILE_LIMITS.items():
        file = root / name
        if os.path.lexists(file):
            regular_file(file, limit)


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
    >>> from tomography.model.dataset import write_measurement
    >>> from tomography.model.synthetic import planted_partition
    >>> d = tempfile.mkdtemp()
    >>> write_measurement(planted_partition(8, 2, iterations=2, seed=0), d, overwrite=True)
    >>> read_measurement(d).n_hosts
    8
    """
    root = Path(path)
    if root.is_file():
        parent = root.parent
        hint = (f"give the dataset directory ({parent})" if (parent / "meta.json").exists()
                else "give a dataset directory (a Gauge file is read by tomography plan)"
                if root.name.endswith((".gauge.xml", ".gauge")) else
                "give a dataset directory (one with meta.json and hosts.csv)")
        raise DatasetError(f"is a file; {hint}", path=root)
    if not root.is_dir():
        raise DatasetError("no such dataset directory", path=root)
    if not (root / "meta.json").exists() and not (root / "hosts.csv").exists():
        raise DatasetError("not a dataset directory: it has no meta.json and no hosts.csv "
                           "(a dataset is what measure, simulate or import write)", path=root)
    check_files(root)
    meta = read_meta(root / "meta.json")
    hosts = read_hosts(root / "hosts.csv")
    at_line_end(root / "hosts.csv")   # else a label cut short would be taken as the truth
    if len(hosts) < 2:
        raise DatasetError(f"{len(hosts)} host(s) listed: a measurement needs at least two "
                           "(one to send, one to receive)", path=root / "hosts.csv")
    if len(hosts) > MAX_HOSTS:
        raise DatasetError(f"{len(hosts)} hosts listed, more than the {MAX_HOSTS} of any "
                           "measured network", path=root / "hosts.csv", line=MAX_HOSTS + 2,
                           field="host")
    known = set(hosts["host"])
    method = meta["method"]
    needs_broadcast = method in BROADCAST_METHODS
    transfers_path, iterations_path = root / "transfers.csv", root / "iterations.csv"
    if needs_broadcast or transfers_path.exists() or iterations_path.exists():
        iterations = read_iterations(iterations_path, known)
        transfers = read_transfers(transfers_path, known)
        for written in (iterations_path, transfers_path):   # both machine-written
            at_line_end(written)
        _check_counts(transfers, transfers_path)
        _check_iterations_agree(transfers, iterations, transfers_path, iterations_path)
        if needs_broadcast:
            _check_blocks_fit(transfers, iterations, meta["block_size"], len(hosts),
                              transfers_path)
    else:
        iterations, transfers = empty_frame(ITERATIONS_COLUMNS), empty_frame(TRANSFERS_COLUMNS)
    probes_path = root / "probes.csv"
    probes = None
    if probes_path.exists() or method in PROBE_METHODS:
        probes = read_probes(probes_path, known)
        at_line_end(probes_path)
    return Measurement(meta=meta, hosts=hosts, transfers=transfers, iterations=iterations,
                       probes=probes)


def _check_counts(transfers: pd.DataFrame, path: Path) -> None:
    """No block count above :data:`MAX_BLOCKS`, and all of them adding up to at most
    :data:`MAX_TOTAL_BLOCKS`, so that no sum of them wraps around in 64 bits."""
    blocks = transfers["blocks"].to_numpy()
    fail_at(blocks > MAX_BLOCKS, transfers, path, "blocks",
            f"more than {MAX_BLOCKS} blocks, beyond any real broadcast")
    total = float(np.sum(blocks, dtype=np.float64))   # a float sum cannot wrap around
    if total > MAX_TOTAL_BLOCKS:
        raise DatasetError(f"the block counts add up to {total:.3g}, more than {MAX_TOTAL_BLOCKS} "
                           "(2**62): beyond any real dataset", path=path, field="blocks")


def _check_iterations_agree(transfers: pd.DataFrame, iterations: pd.DataFrame,
                            transfers_path: Path, iterations_path: Path) -> None:
    listed = set(iterations["iteration"].tolist())
    stray = ~transfers["iteration"].isin(listed).to_numpy(dtype=bool)
    if stray.any():   # the text of a million iteration numbers only to name the bad one
        fail_at(stray, transfers.astype({"iteration": str}), transfers_path, "iteration",
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
    # below 2**40 * 2**18: no product or sum wraps around (counts <= MAX_BLOCKS, hosts
    # <= MAX_HOSTS, at most one row per sender)
    most = np.minimum(blocks, MAX_BLOCKS) * max(n_hosts - 1, 1)
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
    with path.open(newline="", encoding="utf-8-sig") as fh:
        for number, row in enumerate(csv.DictReader(fh), start=2):
            if (row.get(column) or "").strip() == str(value):
                return number
    return None
