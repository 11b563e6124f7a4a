"""``meta.json``: read and checked, or filled in for a new dataset with the software versions."""

from __future__ import annotations

import json
import math
import platform
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from tomography.dataset.meta_schema import check_meta
from tomography.dataset.schema import (BLOCK_SIZE, BROADCAST_METHODS, FILE_LIMITS, FORMAT,
                                       MAX_DEPTH, PROBE_METHODS)
from tomography.dataset.validation import open_regular
from tomography.errors import DatasetError

__all__ = ["META_LIMIT", "read_meta", "load_json", "new_meta", "software_versions",
           "refuse_other_params", "json_depth"]

META_LIMIT = FILE_LIMITS["meta.json"]
"""The largest ``meta.json`` read (bytes): it holds a few parameters, not data."""

MAX_DIGITS = 40
"""The most digits of a number in ``meta.json`` (a 128-bit seed has 39)."""

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')


def json_depth(text: str) -> int:
    """How deep the arrays and objects of a JSON text nest, without parsing it.

    Brackets inside strings do not count (a string left open makes the count approximate:
    the text is not JSON anyway).

    Examples
    --------
    >>> json_depth('{"a": [1, {"b": "[[["}]}'), json_depth("[" * 100000)
    (3, 100000)
    """
    plain = _STRING.sub('""', text)
    data = np.frombuffer(plain.encode("utf-8", "replace"), dtype=np.uint8)
    if not data.size:
        return 0
    step = (np.isin(data, (ord("["), ord("{"))).astype(np.int64)
            - np.isin(data, (ord("]"), ord("}"))))
    return int(max(np.cumsum(step).max(), 0))


def load_json(path: Path, limit: int = META_LIMIT) -> Any:
    """A JSON file parsed, refused in one line naming the file when it cannot be.

    Refused before parsing: a file that is not a regular one (a pipe, a
    device), larger than ``limit`` bytes, not UTF-8, or nested more than
    :data:`~tomography.dataset.schema.MAX_DEPTH` deep; while parsing, a key
    given twice, ``NaN`` and ``Infinity``, numbers of more than
    :data:`MAX_DIGITS` digits.  JSON that ends early is said to be cut short.

    Parameters
    ----------
    path : path
        The file (``meta.json``).
    limit : int
        The largest size read, in bytes.

    Returns
    -------
    The parsed value (an object for a ``meta.json``).

    Raises
    ------
    DatasetError
        Naming the file (and the line, for JSON that does not parse).

    Examples
    --------
    >>> import tempfile
    >>> f = Path(tempfile.mkdtemp()) / "meta.json"
    >>> _ = f.write_text('{"format": "tomography-measurement/1", "method": "sim')
    >>> load_json(f)
    Traceback (most recent call last):
    ...
    tomography.errors.DatasetError: .../meta.json, line 1: not valid JSON: Unterminated string starting at (the file ends early: cut short?)
    """
    path = Path(path)
    with open_regular(path, limit) as fh:
        raw = fh.read(limit + 1)
    if len(raw) > limit:
        raise DatasetError(f"larger than {limit // 2**20} MiB: not a meta.json", path=path)
    try:
        text = raw.decode("utf-8-sig")   # a byte-order mark is accepted
    except UnicodeDecodeError as exc:
        raise DatasetError(f"not UTF-8 text (byte {exc.start})", path=path) from None
    depth = json_depth(text)
    if depth > MAX_DEPTH:
        raise DatasetError(f"arrays and objects nested {depth} deep, more than {MAX_DEPTH}: "
                           "not a meta.json", path=path)
    try:
        return json.loads(text, object_pairs_hook=_no_twice(path),
                          parse_constant=_no_constant(path), parse_int=_int(path),
                          parse_float=_float(path))
    except json.JSONDecodeError as exc:
        cut = exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string")
        raise DatasetError(f"not valid JSON: {exc.msg}"
                           + (" (the file ends early: cut short?)" if cut else ""),
                           path=path, line=exc.lineno) from None
    except RecursionError:   # not reached below MAX_DEPTH; kept as a last guard
        raise DatasetError("nested too deep: not a meta.json", path=path) from None


def read_meta(path: Path) -> dict[str, Any]:
    """A dataset's ``meta.json``, checked: format, method, then every key the toolkit reads
    (:func:`tomography.dataset.meta_schema.check_meta`); parsed by :func:`load_json`."""
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


def _no_twice(path: Path):
    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in items:
            if key in out:
                raise DatasetError("key given twice in one object (which one counts?)",
                                   path=path, field=_short(key).strip("'"))
            out[key] = value
        return out
    return pairs


def _no_constant(path: Path):
    def refuse(name: str) -> None:
        raise DatasetError(f"{name} is not a JSON number", path=path)
    return refuse


def _int(path: Path):
    def parse(digits: str) -> int:
        if len(digits.lstrip("-")) > MAX_DIGITS:
            raise DatasetError(f"a number of {len(digits.lstrip('-'))} digits, more than "
                               f"{MAX_DIGITS}", path=path)
        return int(digits)
    return parse


def _float(path: Path):
    def parse(digits: str) -> float:
        value = float(digits[:4 * MAX_DIGITS]) if len(digits) <= 4 * MAX_DIGITS else math.inf
        if not math.isfinite(value):
            raise DatasetError(f"the number {digits[:20]}... is beyond any value read",
                               path=path)
        return value
    return parse


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
