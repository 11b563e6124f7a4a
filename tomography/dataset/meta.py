"""``meta.json``: read and checked, or filled in for a new dataset with the software versions."""

from __future__ import annotations

import json
import platform
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping

from tomography.dataset.schema import BLOCK_SIZE, BROADCAST_METHODS, FORMAT, PROBE_METHODS
from tomography.dataset.validation import regular_file
from tomography.errors import DatasetError

__all__ = ["META_LIMIT", "read_meta", "new_meta", "software_versions", "refuse_other_params"]

META_LIMIT = 16 * 2**20
"""The largest ``meta.json`` read (bytes): it holds a few parameters, not data."""


def read_meta(path: Path) -> dict[str, Any]:
    """A dataset's ``meta.json``, checked: format, method, ``block_size`` and ``params``."""
    regular_file(path)
    with path.open("rb") as fh:
        raw = fh.read(META_LIMIT + 1)
    if len(raw) > META_LIMIT:
        raise DatasetError(f"larger than {META_LIMIT // 2**20} MiB: not a meta.json", path=path)
    try:
        meta = json.loads(raw.decode("utf-8-sig"))   # a byte-order mark is accepted
    except UnicodeDecodeError as exc:
        raise DatasetError(f"not UTF-8 text (byte {exc.start})", path=path) from None
    except json.JSONDecodeError as exc:
        raise DatasetError(f"not valid JSON: {exc.msg}", path=path, line=exc.lineno) from None
    if not isinstance(meta, dict):
        raise DatasetError("must hold a JSON object", path=path)
    fmt = meta.get("format")
    if fmt != FORMAT:
        raise DatasetError(f"unsupported format version {fmt!r}; this reader understands {FORMAT!r}",
                           path=path, field="format")
    method = meta.get("method")
    if method not in BROADCAST_METHODS | PROBE_METHODS:
        allowed = ", ".join(sorted(BROADCAST_METHODS | PROBE_METHODS))
        raise DatasetError(f"unknown method {method!r}; expected one of {allowed}",
                           path=path, field="method")
    block = meta.setdefault("block_size", BLOCK_SIZE)
    if not isinstance(block, int) or isinstance(block, bool) or block <= 0:
        raise DatasetError(f"must be a positive integer, got {block!r}", path=path,
                           field="block_size")
    if not isinstance(meta.setdefault("params", {}), dict):
        raise DatasetError("must be a JSON object", path=path, field="params")
    return meta


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
    tomography.errors.DatasetError: d/meta.json, field 'tcp.loss': cannot resume: the dataset was made with another tcp.loss (0.0; this command: 0.01)
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
