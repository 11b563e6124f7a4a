"""Ground-truth labels: hierarchical paths such as ``bordeaux/bordeplage``.

A host's label names its clusters top level first, joined by ``/``.  The
truth at depth ``d`` groups hosts by the first ``d`` parts of their label
(shorter labels stay whole), so depth 1 is the coarsest truth and the full
depth the finest.
"""

from __future__ import annotations

import os
from pathlib import Path

from tomography.model.dataset.validation import read_csv
from tomography.model.errors import DatasetError

__all__ = ["truth_depth", "labels_at_depth", "read_truth_file"]


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
