"""What ``meta.json`` may hold: every key the toolkit reads, its type and range.

:func:`check_meta` checks a parsed ``meta.json`` once, when it is read, so
that no command meets a value of the wrong type later (a ``block_size`` of
31 digits, a ``testbed`` given as a string, a ``peer_list`` of ``"abc"``).
The error names the key path: ``testbed.scale.bandwidth``.  Keys the
toolkit does not read are kept as they are; only their strings are checked
(no control characters) and their depth, as every value's.

=======================  ===========================================================
key                      read by
=======================  ===========================================================
``format``, ``method``   every reader
``block_size``           the readers, ``info``, ``plot``, ``report``, exports
``params``               ``--resume`` (compared), ``report``, ``evaluate``
                         (``upload_slots``, ``peer_list``, ``tit_for_tat``, ``seed``)
``topology``             ``evaluate``, ``export --bandwidth topology``, ``--resume``
``topology_model``       ``evaluate`` (the simulator's topology), ``report``
``testbed``              ``export`` (``scale.bandwidth``, ``scale.hosts_per_cluster``,
                         ``latency_applied``), ``report``
``created``, ``launcher``, ``source``, ``measured_with``   ``info``, ``report``
``seed``                 ``report`` (datasets written before ``params.seed``)
``resumes``              ``measure --resume`` (appended to)
``skipped_hosts``        ``report``
``software``             ``report``
=======================  ===========================================================
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Callable

from tomography.model.dataset.schema import (BLOCK_SIZE, MAX_BLOCK_SIZE, MAX_DEPTH, MAX_FILE_BYTES,
                                             MAX_HOSTS)
from tomography.model.errors import DatasetError

__all__ = ["check_meta", "check_multicast_meta", "MAX_TEXT", "MAX_ITEMS"]

MAX_TEXT = 4096
"""The longest string of a key the toolkit reads (a name, a path, a date)."""
MAX_ITEMS = 2**16
"""The most items of a list or keys of an object the toolkit reads (routers, resumes ...)."""
MAX_SLOTS = 2**16
"""The largest ``upload_slots`` and ``peer_list``: connections of one peer."""

Check = Callable[[Any, str], None]


class _Bad(Exception):
    """A value that does not fit: ``where`` is its key path."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(message)
        self.where, self.message = where, message


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=True, default=str)
    return text if len(text) <= 40 else text[:37] + "..."


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "true or false",
            type(None): "null"}.get(type(value), "a number")


def _fail(where: str, expected: str, value: Any) -> _Bad:
    got = _shown(value) if not isinstance(value, (dict, list)) else _kind(value)
    return _Bad(where, f"expected {expected}, got {got}")


def integer(low: int, high: int, *, null: bool = True) -> Check:
    """An integer from ``low`` to ``high`` (or null)."""
    def check(value: Any, where: str) -> None:
        if value is None and null:
            return
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise _fail(where, f"an integer from {low} to {high}", value)
    return check


def number(low: float, high: float, *, null: bool = True) -> Check:
    """A finite number, ``low < value <= high`` (or null)."""
    def check(value: Any, where: str) -> None:
        if value is None and null:
            return
        if (isinstance(value, bool) or not isinstance(value, (int, float))
                or not math.isfinite(value) or not low < value <= high):
            raise _fail(where, f"a number above {low:g} and at most {high:g}", value)
    return check


def boolean(value: Any, where: str) -> None:
    """true, false or null."""
    if value is not None and not isinstance(value, bool):
        raise _fail(where, "true or false", value)


def text(value: Any, where: str) -> None:
    """A string of at most :data:`MAX_TEXT` characters (or null)."""
    if value is None:
        return
    if not isinstance(value, str):
        raise _fail(where, "a string", value)
    if len(value) > MAX_TEXT:
        raise _Bad(where, f"a string of {len(value)} characters, more than {MAX_TEXT}")


def anything(value: Any, where: str) -> None:
    """Any JSON value (its strings are checked by :func:`_strings`)."""


def listing(item: Check = anything, *, most: int = MAX_ITEMS) -> Check:
    """A list of at most ``most`` items, each checked by ``item`` (or null)."""
    def check(value: Any, where: str) -> None:
        if value is None:
            return
        if not isinstance(value, list):
            raise _fail(where, "a list", value)
        if len(value) > most:
            raise _Bad(where, f"{len(value)} items, more than {most}")
        for i, v in enumerate(value):
            item(v, f"{where}[{i}]")
    return check


def mapping(keys: dict[str, Check] | None = None, *, values: Check = anything,
            null: bool = True) -> Check:
    """An object whose ``keys`` are checked by their own check, the others by ``values``."""
    keys = keys or {}

    def check(value: Any, where: str) -> None:
        if value is None and null:
            return
        if not isinstance(value, dict):
            raise _fail(where, "an object", value)
        for key, v in value.items():
            (keys.get(key) or values)(v, f"{where}.{key}" if where else key)
    return check


def _model_hosts(value: Any, where: str) -> None:
    """A topology model of at most :data:`MAX_HOSTS` hosts (the full check is the topology
    reader's, when ``evaluate`` uses it)."""
    mapping({"name": text, "description": text, "source": text,
             "routers": listing(), "links": listing(most=MAX_ITEMS * 4),
             "clusters": listing(mapping({"hosts": integer(1, MAX_HOSTS), "name": text,
                                          "label": text, "host_prefix": text}, null=False))
             })(value, where)
    if isinstance(value, dict) and isinstance(value.get("clusters"), list):
        total = sum(c.get("hosts") or 0 for c in value["clusters"])
        if total > MAX_HOSTS:
            raise _Bad(f"{where}.clusters", f"{total} hosts in all, more than the {MAX_HOSTS} "
                                            "of any measured network")


_PARAMS = mapping({"seed": integer(0, 2**128), "upload_slots": integer(1, MAX_SLOTS),
                   "peer_list": integer(1, MAX_SLOTS), "tit_for_tat": boolean,
                   "file_size": integer(0, MAX_FILE_BYTES)}, null=False)

_TESTBED = mapping({"name": text, "topology": text, "latency_note": text, "address_plan": text,
                    "created": text, "latency_applied": boolean,
                    "scale": mapping({"bandwidth": number(0.0, 1e6),
                                      "hosts_per_cluster": integer(1, MAX_HOSTS)}),
                    "subnets": mapping(values=text)})

SCHEMA: dict[str, Check] = {
    "block_size": integer(1, MAX_BLOCK_SIZE, null=False),
    "params": _PARAMS,
    "topology": text,
    "topology_model": _model_hosts,
    "testbed": _TESTBED,
    "created": text, "launcher": text, "source": text, "measured_with": text,
    "seed": integer(0, 2**128),
    "resumes": listing(),
    "skipped_hosts": mapping(values=anything),
    "software": mapping(values=text),
}
"""The check of each top-level key the toolkit reads; other keys are free."""

_CONTROL = {chr(c) for c in range(32) if chr(c) not in "\t\n\r"} | {chr(127)} | {
    chr(c) for c in range(0x80, 0xa0)}


def _strings(value: Any, where: str, depth: int = 0) -> None:
    """No control character in any string or key, tab and line ends allowed (a note)."""
    if depth > MAX_DEPTH:
        raise _Bad(where, f"nested more than {MAX_DEPTH} deep")
    if isinstance(value, str):
        if not _CONTROL.isdisjoint(value):
            bad = next(ch for ch in value if ch in _CONTROL)
            raise _Bad(where, f"control character U+{ord(bad):04X} in {_shown(value)}")
    elif isinstance(value, dict):
        for key, v in value.items():
            path = f"{where}.{key}" if where else str(key)
            _strings(key, path, depth + 1)
            _strings(v, path, depth + 1)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _strings(v, f"{where}[{i}]", depth + 1)


def _run_hosts(value: Any, where: str) -> None:
    """The hosts of a multicast run: an object of 2 to :data:`MAX_HOSTS` host names."""
    mapping(values=anything, null=False)(value, where)
    if not 2 <= len(value) <= MAX_HOSTS:
        raise _Bad(where, f"{len(value)} hosts: a multicast has from 2 to {MAX_HOSTS}")


def _required(check: Check, *keys: str) -> Check:
    """``check``, and each of ``keys`` present (not null) in the object."""
    def both(value: Any, where: str) -> None:
        check(value, where)
        for key in keys:
            if value.get(key) is None:
                raise _Bad(f"{where}.{key}" if where else key, "missing")
    return both


_METHODS = listing(text, most=256)

MULTICAST_SCHEMA: dict[str, Check] = {
    "params": _required(mapping({"root": text, "bytes": integer(1, MAX_FILE_BYTES),
                                 "seed": integer(0, 2**128), "pacing": text,
                                 "stall": number(0.0, 1e6), "time_limit": number(0.0, 1e7),
                                 "repeats": integer(1, 2**16), "methods": _METHODS},
                                null=False), "root", "bytes"),
    "methods": _METHODS, "hosts": _run_hosts, "plans": mapping(values=anything),
    "created": text, "launcher": text, "resumes": listing(),
    "software": mapping(values=text), "bittorrent": mapping(values=anything),
}
"""The check of each top-level key of a multicast dataset's ``meta.json`` the toolkit reads."""


def check_multicast_meta(meta: dict[str, Any], path: str | Path) -> dict[str, Any]:
    """Check a multicast dataset's parsed ``meta.json`` (:data:`MULTICAST_SCHEMA`): its
    params, methods (distinct) and hosts (the root among them) are there and fit.

    Examples
    --------
    >>> meta = {"params": {"root": "a", "bytes": 1024}, "methods": ["chain"],
    ...         "hosts": {"a": {}, "b": {}}}
    >>> check_multicast_meta(meta, "mc/meta.json")["methods"]
    ['chain']
    >>> check_multicast_meta({**meta, "hosts": {}}, "mc/meta.json")
    Traceback (most recent call last):
    ...
    tomography.model.errors.DatasetError: mc/meta.json, field 'hosts': 0 hosts: a multicast has from 2 to 262144
    """
    try:
        _strings(meta, "")
        _required(mapping(MULTICAST_SCHEMA, null=False), "params", "methods", "hosts")(meta, "")
        if len(set(meta["methods"])) != len(meta["methods"]):
            raise _Bad("methods", "a method listed twice")
        if meta["params"]["root"] not in meta["hosts"]:
            raise _Bad("params.root", f"{_shown(meta['params']['root'])} is not one of hosts")
    except _Bad as bad:
        raise DatasetError(bad.message, path=path, field=bad.where or None) from None
    return meta


def check_meta(meta: dict[str, Any], path: str | Path) -> dict[str, Any]:
    """Check a parsed ``meta.json`` against :data:`SCHEMA`; fills in ``block_size`` and
    ``params`` when missing.

    Parameters
    ----------
    meta : dict
        The parsed file (its ``format`` and ``method`` already checked).
    path : path
        The file, for the message.

    Returns
    -------
    dict
        ``meta`` itself.

    Raises
    ------
    DatasetError
        Naming the file and the key path of the first value that does not fit.

    Examples
    --------
    >>> check_meta({"method": "simulated", "testbed": {"scale": {"bandwidth": 0.5}}},
    ...            "d/meta.json")["block_size"]
    16384
    >>> check_meta({"testbed": {"scale": {"bandwidth": "abc"}}}, "d/meta.json")
    Traceback (most recent call last):
    ...
    tomography.model.errors.DatasetError: d/meta.json, field 'testbed.scale.bandwidth': expected a number above 0 and at most 1e+06, got "abc"
    """
    meta.setdefault("block_size", BLOCK_SIZE)
    meta.setdefault("params", {})
    try:
        _strings(meta, "")
        mapping(SCHEMA, null=False)(meta, "")
    except _Bad as bad:
        raise DatasetError(bad.message, path=path, field=bad.where or None) from None
    return meta
