"""Write a :class:`~tomography.dataset.Measurement` held in memory as a dataset directory."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np

from tomography.dataset.measurement import Measurement
from tomography.dataset.meta import new_meta
from tomography.dataset.schema import BROADCAST_METHODS
from tomography.dataset.incremental import DATA_FILES, refuse_existing
from tomography.errors import DatasetError

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
        When ``path`` holds a dataset and ``overwrite`` is false, or when the
        measurement is not one :func:`read_measurement` would accept (a
        transfer or root naming a host ``hosts`` lacks, fewer than two
        hosts, ...): it is checked by reading it back before it replaces
        anything, and nothing is written.

    Examples
    --------
    >>> import tempfile
    >>> from tomography.dataset import read_measurement
    >>> from tomography.synthetic import planted_partition
    >>> m = planted_partition(8, 2, iterations=1, seed=0)
    >>> d = tempfile.mkdtemp()
    >>> write_measurement(m, d, overwrite=True)
    >>> read_measurement(d).transfers.equals(m.transfers)
    True
    """
    from tomography.dataset.read import read_measurement

    root = Path(path)
    refuse_existing(root, overwrite=overwrite, resumable=False)
    root.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{root.name}.", dir=root.parent))
    try:
        _write_files(measurement, staging)
        try:
            read_measurement(staging)
        except DatasetError as exc:
            where = root / Path(exc.path).name if exc.path else root
            raise DatasetError(f"not written: {exc.reason}", path=where, line=exc.line,
                               field=exc.field) from None
        root.mkdir(exist_ok=True)
        for name in DATA_FILES:                     # an older dataset's files go too
            (root / name).unlink(missing_ok=True)
        for file in staging.iterdir():
            file.replace(root / file.name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _write_files(measurement: Measurement, root: Path) -> None:
    meta = new_meta(measurement.meta)
    (root / "meta.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    measurement.hosts.to_csv(root / "hosts.csv", index=False)
    if meta["method"] in BROADCAST_METHODS or len(measurement.iterations):
        measurement.transfers.to_csv(root / "transfers.csv", index=False)
        iterations = measurement.iterations.copy()
        iterations["complete"] = np.where(iterations["complete"].astype(bool), "true", "false")
        iterations.to_csv(root / "iterations.csv", index=False)
    if measurement.probes is not None:
        measurement.probes.to_csv(root / "probes.csv", index=False)
