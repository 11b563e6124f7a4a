"""Write a :class:`~tomography.model.dataset.Measurement` held in memory as a dataset directory."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np

from tomography.model.dataset.measurement import Measurement
from tomography.model.dataset.meta import new_meta
from tomography.model.dataset.schema import BROADCAST_METHODS
from tomography.model.dataset.incremental import DATA_FILES, refuse_existing
from tomography.model.dataset.lock import DatasetLock, file_opener, write_atomic
from tomography.model.errors import DatasetError

__all__ = ["write_measurement"]


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
        When another process writes ``path`` (naming it), when a file
        cannot be written (a full disk: nothing of the new dataset is left),
        when ``path`` holds a dataset and ``overwrite`` is false, or when the
        measurement is not one :func:`read_measurement` would accept (a
        transfer or root naming a host ``hosts`` lacks, fewer than two
        hosts, ...): it is checked by reading it back before it replaces
        anything, and nothing is written.

    Examples
    --------
    >>> import tempfile
    >>> from tomography.model.dataset import read_measurement
    >>> from tomography.model.synthetic import planted_partition
    >>> m = planted_partition(8, 2, iterations=1, seed=0)
    >>> d = tempfile.mkdtemp()
    >>> write_measurement(m, d, overwrite=True)
    >>> read_measurement(d).transfers.equals(m.transfers)
    True
    """
    from tomography.model.dataset.read import read_measurement

    root = Path(path)
    with DatasetLock(root):               # one writer; taken before anything is removed
        refuse_existing(root, overwrite=overwrite, resumable=False)
        staging = Path(tempfile.mkdtemp(prefix=".staging.", dir=root))
        try:
            _write_files(measurement, staging)
            try:
                read_measurement(staging)
            except DatasetError as exc:
                where = root / Path(exc.path).name if exc.path else root
                raise DatasetError(f"not written: {exc.reason}", path=where, line=exc.line,
                                   field=exc.field) from None
            # meta.json goes first and comes back last: between, the place holds no dataset
            current = root / "meta.json"
            try:
                current.unlink(missing_ok=True)
                for name in DATA_FILES:                 # an older dataset's files go too
                    current = root / name
                    current.unlink(missing_ok=True)
                files = sorted(staging.iterdir(), key=lambda f: f.name == "meta.json")
                for file in files:
                    current = root / file.name
                    file.replace(current)
            except OSError as exc:
                raise DatasetError(f"cannot write ({exc.strerror or exc})",
                                   path=current) from None
        finally:
            shutil.rmtree(staging, ignore_errors=True)


def _write_files(measurement: Measurement, root: Path) -> None:
    """The dataset's files in ``root``, each fsynced; a failed write names the file."""
    meta = new_meta(measurement.meta)
    frames = [("hosts.csv", measurement.hosts)]
    if meta["method"] in BROADCAST_METHODS or len(measurement.iterations):
        iterations = measurement.iterations.copy()
        iterations["complete"] = np.where(iterations["complete"].astype(bool), "true", "false")
        frames += [("transfers.csv", measurement.transfers), ("iterations.csv", iterations)]
    if measurement.probes is not None:
        frames.append(("probes.csv", measurement.probes))
    for name, frame in frames:
        try:
            with open(root / name, "w", newline="", encoding="utf-8",
                      opener=file_opener) as fh:
                frame.to_csv(fh, index=False)
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as exc:
            raise DatasetError(f"cannot write ({exc.strerror or exc})",
                               path=root.parent / name) from None
    try:
        write_atomic(root / "meta.json", json.dumps(meta, indent=2) + "\n")
    except DatasetError as exc:
        raise DatasetError(exc.reason, path=root.parent / "meta.json") from None
