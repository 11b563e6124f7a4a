"""``figures.csv``: the tests that give a planner its absolute figures, one row per flow.

``tomography measure figures`` (:mod:`measure.figures`) measures, after the
broadcasts have found the clusters, what a multicast planner needs: the
hosts' capacity, each cluster pair's bandwidth, and the links several pairs
share.  It writes a probe dataset in the broadcast dataset's ``figures/``
directory (every iperf3 run in ``probes.csv``, the clusters and the tree of
groups above them in ``meta.json`` under ``"figures"``) and this file, one
row per flow, saying which test each flow belonged to and what it measured:

``kind``
    ``host`` (two hosts of one cluster: the hosts' capacity), ``pair`` (one
    host of a cluster to one of another, alone: the pair's bandwidth),
    ``out`` or ``in`` (flows side by side leaving or entering ``node``, a
    cluster or a group of clusters: its local capacity, and whether its
    pairs share a link).
``test``, ``round``
    The test (its flows ran at once) and the round (tests that ran at once).
``bits_per_second``, ``bytes``
    What the flow's receiver got: its rate over its own time, its bytes.
``window_s``
    The test's time from its first flow's start to its last flow's end,
    less what starting and ending a flow takes: flows side by side do not
    start at the same instant, so their rates do not add up to what the
    link carried; their bytes over this window do.

Written row by row, flushed, to ``figures.csv.part``, renamed ``figures.csv``
once every test ran: a stopped run keeps what it measured there (and in
``probes.csv``), and no planner takes half the figures for all of them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from tomography.model.dataset.incremental import csv_writer
from tomography.model.dataset.lock import file_opener
from tomography.model.dataset.meta import read_meta
from tomography.model.dataset.validation import at_line_end, fail_at, read_csv
from tomography.model.errors import DatasetError

__all__ = ["FIGURE_COLUMNS", "FIGURE_KINDS", "FiguresWriter", "read_figures", "FIGURES_DIR"]

FIGURES_DIR = "figures"
"""The directory of a broadcast dataset that holds its figures."""

FIGURE_COLUMNS = ("round", "test", "kind", "node", "src", "dst", "src_cluster", "dst_cluster",
                  "bits_per_second", "bytes", "window_s", "error")
"""The columns of ``figures.csv``."""

FIGURE_KINDS = ("host", "pair", "out", "in")


def read_figures(path: str | Path) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The flows of a figures run and what they were run for.

    Parameters
    ----------
    path : path
        A broadcast dataset (its ``figures/``) or the figures directory itself.

    Returns
    -------
    frame : pandas.DataFrame
        The rows of ``figures.csv``, rates as numbers (NaN for a failed flow).
    spec : dict
        ``clusters`` (name -> hosts), ``groups`` (group -> its clusters),
        ``level`` (the hierarchy level measured), ``duration_s`` (one test),
        and, where the broadcasts' trace stood for a node's tests, ``trace``
        (``out`` and ``in``: node -> bit/s, its busiest ``window_s`` in the
        broadcasts).

    Raises
    ------
    DatasetError
        No figures, or a file no figures run writes, naming file, line and field.
    """
    path = Path(path)
    # the figures directory itself, else a dataset's (named where they would be, if absent)
    directory = (path if path.name == FIGURES_DIR or (path / "figures.csv").exists()
                 else path / FIGURES_DIR)
    file = directory / "figures.csv"
    if not file.exists():
        raise DatasetError("no figures measured (run tomography measure figures --dataset, "
                           "or tomography multicast --dataset, which measures them)", path=file)
    at_line_end(file)   # machine-written: a row cut short would read as a failed flow
    frame = read_csv(file, FIGURE_COLUMNS)
    text = frame["bits_per_second"].str.strip().str.lower()
    values = pd.to_numeric(text.where(~text.isin(("", "nan")), "nan"), errors="coerce")
    fail_at((values.isna() & ~text.isin(("", "nan"))).to_numpy(dtype=bool), frame, file,
            "bits_per_second", "not a number")
    fail_at((values < 0).to_numpy(dtype=bool) | np.isinf(values.to_numpy(dtype=float)), frame,
            file, "bits_per_second", "not a rate (finite, >= 0)")
    frame["bits_per_second"] = values.astype(float)
    for column in ("bytes", "window_s"):
        text = frame[column].str.strip()
        numbers = pd.to_numeric(text.where(text != "", "nan"), errors="coerce")
        fail_at((numbers.isna() & ~text.isin(("", "nan"))).to_numpy(dtype=bool)
                | (numbers < 0).to_numpy(dtype=bool), frame, file, column, "not a number >= 0")
        frame[column] = numbers.astype(float)
    fail_at(~frame["kind"].isin(FIGURE_KINDS).to_numpy(dtype=bool), frame, file, "kind",
            f"not one of {', '.join(FIGURE_KINDS)}")
    for column in ("round", "test"):
        numbers = pd.to_numeric(frame[column], errors="coerce")
        fail_at(numbers.isna().to_numpy(dtype=bool), frame, file, column, "not a whole number")
        frame[column] = numbers.astype(int)
    meta = read_meta(directory / "meta.json")
    spec = meta.get("figures") if isinstance(meta, dict) else None
    if not isinstance(spec, dict) or not isinstance(spec.get("clusters"), dict):
        raise DatasetError("meta.json has no figures.clusters: not written by a figures run",
                           path=directory / "meta.json", field="figures")
    _check_trace(spec.get("trace"), directory / "meta.json")
    return frame, spec


def _check_trace(trace: Any, file: Path) -> None:
    """Refuse a ``figures.trace`` that is not ``{"out": {node: bit/s}, "in": {...}}``."""
    if trace is None:
        return
    if not isinstance(trace, dict):
        raise DatasetError("not an object", path=file, field="figures.trace")
    for way in ("out", "in"):
        figures = trace.get(way)
        if not isinstance(figures, dict):
            raise DatasetError("not an object of node -> bit/s", path=file,
                               field=f"figures.trace.{way}")
        for node, value in figures.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or not np.isfinite(value) or value <= 0:
                raise DatasetError(f"not a rate (a number > 0): {value!r}", path=file,
                                   field=f"figures.trace.{way}.{node}")


class FiguresWriter:
    """Write ``figures.csv``, one flow at a time (each row flushed), whole at :meth:`close`.

    Examples
    --------
    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> w = FiguresWriter(d)
    >>> w.add({"round": 0, "test": 0, "kind": "pair", "node": "a", "src": "a1", "dst": "b1",
    ...        "src_cluster": "a", "dst_cluster": "b", "bits_per_second": 1e7, "bytes": 2500000,
    ...        "window_s": 2.0, "error": ""})
    >>> w.close()
    >>> (d / "figures.csv").read_text().splitlines()[1]
    '0,0,pair,a,a1,b1,a,b,10000000.0,2500000,2.0,'
    """

    def __init__(self, directory: str | Path) -> None:
        self.done = Path(directory) / "figures.csv"
        self.path = Path(directory) / "figures.csv.part"   # figures.csv once whole
        with open(self.path, "w", newline="", encoding="utf-8", opener=file_opener) as fh:
            csv_writer(fh).writerow(FIGURE_COLUMNS)

    def add(self, row: Mapping[str, Any]) -> None:
        """Append one flow (the columns of :data:`FIGURE_COLUMNS`)."""
        with open(self.path, "a", newline="", encoding="utf-8", opener=file_opener) as fh:
            csv_writer(fh).writerow(["" if row[c] is None else row[c] for c in FIGURE_COLUMNS])

    def close(self) -> None:
        """The run is whole: ``figures.csv.part`` becomes ``figures.csv``, which the
        planners read (a stopped run leaves its flows in the ``.part`` file)."""
        os.replace(self.path, self.done)
        self.path = self.done
