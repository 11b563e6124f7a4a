"""Ground-truth labels: hierarchical paths such as ``bordeaux/bordeplage``.

A host's label names its clusters top level first, joined by ``/``.  The
truth at depth ``d`` groups hosts by the first ``d`` parts of their label
(shorter labels stay whole), so depth 1 is the coarsest truth and the full
depth the finest.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tomography.model.dataset.validation import read_csv
from tomography.model.errors import DatasetError, ParameterError

__all__ = ["truth_depth", "labels_at_depth", "read_truth_file", "as_truth", "TRUTH_FORMS"]

TRUTH_FORMS = ("a mapping or pandas Series host -> label path, a Measurement (its labels), "
               "'labels' (the labels of the dataset at hand) or a CSV file with columns "
               "host,label")
"""What ``truth=`` takes, everywhere it is taken."""


def truth_depth(paths: dict[str, str]) -> int:
    """Deepest level of a set of label paths.

    Examples
    --------
    >>> truth_depth({"a": "x/y", "b": "z"})
    2
    """
    return max((len(p.split("/")) for p in paths.values()), default=0)


def labels_at_depth(paths: dict[str, str], depth: int, hosts: list[str]) -> list[str]:
    """The label of each of ``hosts`` cut to its first ``depth`` parts.

    Examples
    --------
    >>> labels_at_depth({"a": "s1/c1", "b": "s1/c2", "c": "s2"}, 1, ["a", "b", "c"])
    ['s1', 's1', 's2']
    """
    missing = [h for h in hosts if h not in paths]
    if missing:
        raise DatasetError(f"host {missing[0]!r} has no ground-truth label "
                           f"({len(missing)} hosts are unlabelled)", field="label")
    return ["/".join(paths[h].split("/")[:depth]) for h in hosts]


def read_truth_file(path: str | os.PathLike[str]) -> dict[str, str]:
    """Read a ground truth from a CSV file with columns ``host,label``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "truth.csv"
    >>> _ = f.write_text("host,label\\na,s1/c1\\nb,s2/c1\\n")
    >>> read_truth_file(f)
    {'a': 's1/c1', 'b': 's2/c1'}
    """
    path = Path(path)
    if not path.exists():
        raise DatasetError("missing file", path=path)
    frame = read_csv(path, ("host", "label"))   # a regular UTF-8 file within the limits
    empty = frame.index[frame["label"].str.strip() == ""]
    if len(empty):
        raise DatasetError("empty label", path=path, line=int(empty[0]) + 2, field="label")
    dup = frame.index[frame["host"].duplicated()]
    if len(dup):
        raise DatasetError(f"duplicate host {frame['host'][dup[0]]!r}", path=path,
                           line=int(dup[0]) + 2, field="host")
    return dict(zip(frame["host"].str.strip(), frame["label"].str.strip()))


def as_truth(truth: Any, dataset: Any = None) -> dict[str, str] | None:
    """What ``truth=`` means everywhere: the ground truth as host -> label path, or None.

    Parameters
    ----------
    truth : mapping, pandas.Series, Measurement, "labels", path or None
        A mapping (or Series) host -> label path; a dataset or its directory
        (its labels); ``"labels"``: the labels of ``dataset``; any other
        string or path: a CSV file with columns ``host,label``
        (:func:`read_truth_file`).
    dataset : Measurement, optional
        The dataset at hand, whose labels ``"labels"`` names.

    Raises
    ------
    ParameterError
        For another type, or ``"labels"`` without a dataset, saying what to pass.
    DatasetError
        For a truth file that is missing or malformed.

    Examples
    --------
    >>> as_truth({"a": "s1/c1"}), as_truth(None)
    ({'a': 's1/c1'}, None)
    >>> import pandas as pd
    >>> as_truth(pd.Series({"a": "s1"}))
    {'a': 's1'}
    >>> as_truth("labels")
    Traceback (most recent call last):
    ...
    tomography.model.errors.ParameterError: truth='labels' means the labels of the dataset at hand, and there is none here: pass the dataset (truth=m) or a mapping host -> label
    >>> as_truth(["s1", "s2"])
    Traceback (most recent call last):
    ...
    tomography.model.errors.ParameterError: truth= takes a mapping or pandas Series host -> label path, a Measurement (its labels), 'labels' (the labels of the dataset at hand) or a CSV file with columns host,label; got list
    """
    if truth is None:
        return None
    if hasattr(truth, "labels") and hasattr(truth, "host_names"):   # a Measurement
        return {str(h): str(v) for h, v in truth.labels.items()}
    if isinstance(truth, str) and truth == "labels":
        if dataset is None:
            raise ParameterError("truth='labels' means the labels of the dataset at hand, and "
                                 "there is none here: pass the dataset (truth=m) or a mapping "
                                 "host -> label")
        return as_truth(dataset)
    if isinstance(truth, (str, os.PathLike)):
        if Path(truth).is_dir():   # a dataset's directory: its labels
            from tomography.model.dataset import read_measurement

            return as_truth(read_measurement(truth))
        return read_truth_file(truth)
    if isinstance(truth, Mapping) or (hasattr(truth, "to_dict") and hasattr(truth, "index")
                                      and getattr(truth, "ndim", 0) == 1):
        return {str(h): str(v) for h, v in dict(truth).items()}
    raise ParameterError(f"truth= takes {TRUTH_FORMS}; got {type(truth).__name__}")
