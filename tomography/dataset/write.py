"""Write a :class:`~tomography.dataset.Measurement` held in memory as a dataset directory."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from tomography.dataset.measurement import Measurement
from tomography.dataset.meta import new_meta
from tomography.dataset.schema import BROADCAST_METHODS
from tomography.dataset.writer import refuse_existing

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
        When ``path`` holds a dataset and ``overwrite`` is false.

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
    root = Path(path)
    refuse_existing(root, overwrite=overwrite, resumable=False)
    root.mkdir(parents=True, exist_ok=True)
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
