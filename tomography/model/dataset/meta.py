"""``meta.json``: read and checked, or filled in for a new dataset with the software versions."""

from __future__ import annotations

import platform
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Mapping

from tomography.model import safe_load
from tomography.model.dataset.meta_schema import check_meta
from tomography.model.dataset.schema import (BLOCK_SIZE, BROADCAST_METHODS, FILE_LIMITS, FORMAT,
                                             MAX_DEPTH, PROBE_METHODS)
from tomography.model.errors import DatasetError

__all__ = ["META_LIMIT", "read_meta", "load_json", "new_meta", "software_versions",
           "refuse_other_params", "refuse_other_run"]

META_LIMIT = FILE_LIMITS["meta.json"]
"""The largest ``meta.json`` read (bytes): it holds a few parameters, not data."""

def load_json(path: Path, limit: int = META_LIMIT) -> Any:
    """A dataset's JSON file parsed strictly (:func:`tomography.model.safe_load.load_json` with
    ``strict=True``: no key twice, no NaN, no endless numbers; nested at most
    :data:`~tomography.model.dataset.schema.MAX_DEPTH`), a regular file of at most ``limit`` bytes,
    refused in one line naming the file when it cannot be.

    Examples
    --------
    >>> import tempfile
    >>> f = Path(tempfile.mkdtemp()) / "meta.json"
    >>> _ = f.write_text('{"format": "tomography-measurement/1", "method": "sim')
    >>> load_json(f)
    Traceback (most recent call last):
    ...
    tomography.model.safe_load.DocumentError: .../meta.json, line 1: not valid JSON: Unterminated string starting at (column 50) (the file ends early: cut short?)
    """
    return safe_load.load_json(path, max_bytes=limit, max_depth=MAX_DEPTH, kind="meta.json",
                               strict=True, pipes=False)


def read_meta(path: Path) -> dict[str, Any]:
    """A dataset's ``meta.json``, checked: format, method, then every key the toolkit reads
    (:func:`tomography.model.dataset.meta_schema.check_meta`); parsed by :func:`load_json`."""
    meta = load_json(path)
    if not isinstance(meta, dict):
        raise DatasetError("must hold a JSON object", path=path)
    fmt = meta.get("format")
    if fmt != FORMAT:
        raise DatasetError(f"unsupported format version {_short(fmt)}; this reader "
                           f"understands {FORMAT!r}", path=path, field="format")
    method = meta.get("method")
    if not isinstance(method, str) or method not in BROADCAST_METHODS | PROBE_METHODS:
        allowed = ", ".join(sorted(BROADCAST_METHODS | PROBE_METHODS))
        raise DatasetError(f"unknown method {_short(method)}; expected one of {allowed}",
                           path=path, field="method")
    return check_meta(meta, path)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def new_meta(meta: Mapping[str, Any]) -> dict[str, Any]:
    """``meta`` with the keys a new dataset's ``meta.json`` needs filled in."""
    out = {"format": FORMAT, "block_size": BLOCK_SIZE, "params": {}, "topology": None,
           "created": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    out.update(meta)
    out["format"] = FORMAT
    out.setdefault("software", software_versions())
    return out


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


def refuse_other_run(meta: Mapping[str, Any], path: Path, *, hosts: Iterable[str],
                     recorded_hosts: Iterable[str], params: dict[str, Any] | None = None
                     ) -> None:
    """Refuse to resume a dataset made among other hosts or with other settings: the one check
    every runner makes before ``--resume`` (broadcasts, probe meshes, multicasts).

    Examples
    --------
    >>> refuse_other_run({"params": {"seed": 0}}, Path("d/meta.json"), hosts=["a", "b"],
    ...                  recorded_hosts=["b", "a"], params={"seed": 0})
    >>> refuse_other_run({}, Path("d/meta.json"), hosts=["a", "c"], recorded_hosts=["a", "b"])
    Traceback (most recent call last):
    ...
    tomography.model.errors.DatasetError: d/meta.json, field 'hosts': cannot resume: the dataset was made with other hosts (b in it, c in this run)
    """
    theirs, ours = set(recorded_hosts), set(hosts)
    if theirs != ours:
        only = [f"{', '.join(sorted(x)[:3])}{' ...' if len(x) > 3 else ''} {where}"
                for x, where in ((theirs - ours, "in it"), (ours - theirs, "in this run")) if x]
        raise DatasetError("cannot resume: the dataset was made with other hosts ("
                           + ", ".join(only) + ")", path=path, field="hosts")
    if params is not None:
        refuse_other_params(meta, params, path)


def refuse_other_params(meta: Mapping[str, Any], wanted: dict[str, Any], path: Path) -> None:
    """Refuse to resume a dataset whose run settings (``meta["params"]``) differ from ``wanted``.

    The error names the first setting that differs, nested ones dotted
    (``tcp.loss``), with the recorded value and the one asked for.

    Examples
    --------
    >>> refuse_other_params({"params": {"seed": 0, "tcp": {"loss": 0.0}}},
    ...                     {"seed": 0, "tcp": {"loss": 0.0}}, Path("d/meta.json"))
    >>> refuse_other_params({"params": {"seed": 0, "tcp": {"loss": 0.0}}},
    ...                     {"seed": 0, "tcp": {"loss": 0.01}}, Path("d/meta.json"))
    Traceback (most recent call last):
    ...
    tomography.model.errors.DatasetError: d/meta.json, field 'tcp.loss': cannot resume: the dataset was made with another tcp.loss (0.0; this command: 0.01)
    """
    def differences(recorded: Any, asked: dict[str, Any], prefix: str) -> list:
        found = []
        for key, value in asked.items():
            theirs = recorded.get(key) if isinstance(recorded, dict) else None
            if isinstance(value, dict) and isinstance(theirs, dict):
                found += differences(theirs, value, f"{prefix}{key}.")
            elif theirs != value:
                found.append((f"{prefix}{key}", theirs, value))
        return found

    differ = differences(meta.get("params", {}), wanted, "")
    if differ:
        what, theirs, ours = differ[0]
        raise DatasetError(f"cannot resume: the dataset was made with another {what} "
                           f"({theirs!r}; this command: {ours!r})", path=path, field=what)
