"""Strict parsing of quantities written with their units.

Bandwidth: ``bit/s``, ``kbit/s``, ``Mbit/s``, ``Gbit/s`` (powers of 10 bits),
``B/s``, ``kB/s``, ``MB/s``, ``GB/s`` (powers of 10 bytes) and ``KiB/s``,
``MiB/s``, ``GiB/s`` (powers of 2 bytes).  Time: ``s``, ``ms``, ``us``, ``ns``.
Size: ``B``, ``kB``, ``MB``, ``GB`` (powers of 10) and ``KiB``, ``MiB``,
``GiB`` (powers of 2).  A bare number is refused: the unit must be written.
"""

from __future__ import annotations

import re
from typing import Sequence

from tomography.model.errors import ParameterError

__all__ = ["parse_bandwidth", "bandwidth_unit", "parse_time", "parse_size", "format_bandwidth",
           "format_time", "format_size", "format_weight", "weight_caption", "WEIGHT_UNITS",
           "counted", "listed"]

_NUMBER = r"(?P<value>\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)\s*(?P<unit>[A-Za-z/µ]+)"

_BANDWIDTH = {
    "bit/s": 1.0, "kbit/s": 1e3, "Kbit/s": 1e3, "Mbit/s": 1e6, "Gbit/s": 1e9, "Tbit/s": 1e12,
    "B/s": 8.0, "kB/s": 8e3, "KB/s": 8e3, "MB/s": 8e6, "GB/s": 8e9,
    "KiB/s": 8.0 * 2**10, "MiB/s": 8.0 * 2**20, "GiB/s": 8.0 * 2**30,
}
_TIME = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
_SIZE = {"B": 1, "kB": 10**3, "KB": 10**3, "MB": 10**6, "GB": 10**9,
         "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}


def _parse(text: object, table: dict[str, float], kind: str) -> float:
    if isinstance(text, bool) or not isinstance(text, str) or re.fullmatch(r"\s*[\d.]+\s*", text):
        raise ParameterError(f"a {kind} needs its unit written out, e.g. "
                             f"{_EXAMPLE[kind]!r}; got {text!r}")
    if text.strip().startswith("-"):
        raise ParameterError(f"a {kind} cannot be negative: {text!r}")
    match = re.fullmatch(_NUMBER, text.strip())
    if not match or match["unit"] not in table:
        units = ", ".join(table)
        raise ParameterError(f"not a {kind}: {text!r} (expected a number and one of {units})")
    factor = table[match["unit"]]
    value = float(match["value"])
    # divide by the reciprocal for sub-unit factors: 100 / 1e4 is exact, 100 * 1e-4 is not
    return value / round(1 / factor) if factor < 1 else value * factor


_EXAMPLE = {"bandwidth": "1Gbit/s", "time": "100us", "size": "64MiB"}


def parse_bandwidth(text: object) -> float:
    """Bits per second from text such as ``"100Mbit/s"``.

    Examples
    --------
    >>> parse_bandwidth("1Gbit/s"), parse_bandwidth("100 MiB/s")
    (1000000000.0, 838860800.0)
    """
    value = _parse(text, _BANDWIDTH, "bandwidth")
    if value <= 0:
        raise ParameterError(f"a bandwidth must be positive, got {text!r}")
    return value


def bandwidth_unit(unit: str) -> float:
    """Bits per second in one ``unit`` (``"MiB/s"``, ``"Mbit/s"``, ...).

    Examples
    --------
    >>> bandwidth_unit("MiB/s")
    8388608.0
    >>> bandwidth_unit("bogus")
    Traceback (most recent call last):
    ...
    tomography.model.errors.ParameterError: unknown bandwidth unit 'bogus'; choose one of bit/s, kbit/s, Kbit/s, Mbit/s, Gbit/s, Tbit/s, B/s, kB/s, KB/s, MB/s, GB/s, KiB/s, MiB/s, GiB/s
    """
    if unit not in _BANDWIDTH:
        raise ParameterError(f"unknown bandwidth unit {unit!r}; choose one of "
                             f"{', '.join(_BANDWIDTH)}")
    return _BANDWIDTH[unit]


def parse_time(text: object) -> float:
    """Seconds from text such as ``"20ms"``.

    Examples
    --------
    >>> parse_time("20ms"), parse_time("2s")
    (0.02, 2.0)
    """
    return _parse(text, _TIME, "time")


def parse_size(text: object) -> int:
    """Bytes from text such as ``"64MiB"``.

    Examples
    --------
    >>> parse_size("64MiB"), parse_size("10MB")
    (67108864, 10000000)
    """
    value = _parse(text, _SIZE, "size")
    if value != int(value) or value <= 0:
        raise ParameterError(f"a size must be a positive whole number of bytes, got {text!r}")
    return int(value)


def _format(value: float, scales: tuple[tuple[str, float], ...], unit: str) -> str:
    """``value`` in the first of ``scales`` it reaches, else in ``unit``."""
    for name, factor in scales:
        if abs(value) >= factor:
            return f"{value / factor:.4g}{name}"
    return f"{value:.4g}{unit}"


def format_bandwidth(bps: float) -> str:
    """A readable bandwidth in bit/s multiples.

    Examples
    --------
    >>> format_bandwidth(2.5e9), format_bandwidth(1.5e6)
    ('2.5Gbit/s', '1.5Mbit/s')
    """
    return _format(bps, (("Gbit/s", 1e9), ("Mbit/s", 1e6), ("kbit/s", 1e3)), "bit/s")


def format_time(seconds: float) -> str:
    """A readable duration.

    Examples
    --------
    >>> format_time(0.0001), format_time(0.02), format_time(3)
    ('100us', '20ms', '3s')
    """
    return _format(seconds, (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)), "s")


def format_size(nbytes: int) -> str:
    """A readable size in binary multiples.

    Examples
    --------
    >>> format_size(64 * 2**20)
    '64MiB'
    """
    return _format(nbytes, (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)), "B")


def listed(names: Sequence[object], most: int = 5) -> str:
    """The first ``most`` names, comma-separated, with ``...`` when there are more.

    Examples
    --------
    >>> listed(["a", "b"]), listed(range(8), 3)
    ('a, b', '0, 1, 2, ...')
    """
    names = list(names)
    return ", ".join(map(str, names[:most])) + (", ..." if len(names) > most else "")


def counted(n: int, noun: str) -> str:
    """``n`` and the noun, plural unless ``n`` is 1 (nouns that take an s).

    Examples
    --------
    >>> counted(1, "cluster"), counted(3, "level"), counted(0, "iteration")
    ('1 cluster', '3 levels', '0 iterations')
    """
    return f"{n} {noun}{'' if n == 1 else 's'}"


def format_weight(value: float) -> str:
    """An edge weight as every output prints it: three significant digits, no exponent.

    Examples
    --------
    >>> format_weight(3741.2), format_weight(2.5), format_weight(8.0), format_weight(0.01234)
    ('3740', '2.5', '8', '0.0123')
    """
    return f"{float(f'{value:.3g}'):.12g}"


WEIGHT_UNITS = {"broadcast": "blocks per iteration", "probe": "Mbit/s"}
"""What ``w_n`` counts: mean 16 KiB blocks per iteration, or a probe's measured bandwidth."""


def weight_caption(linkage: str | None, unit: str = WEIGHT_UNITS["broadcast"]) -> str:
    """What an edge weight between two clusters is, with its unit.

    Parameters
    ----------
    linkage : {"mean", "sum", "thesis"} or None
        How the clusters were collapsed (:func:`cluster.averaged_edge.collapse`);
        None for an edge between two hosts.
    unit : str
        The unit of ``w_n``: one of :data:`WEIGHT_UNITS`.

    Examples
    --------
    >>> weight_caption("mean")
    'edge weight: mean w_n over the host pairs of the two clusters, in blocks per iteration'
    >>> weight_caption(None, WEIGHT_UNITS["probe"])
    'edge weight: the measured bandwidth between the two hosts, in Mbit/s'
    >>> weight_caption("sum", WEIGHT_UNITS["probe"])
    'edge weight: the measured bandwidth summed over the host pairs of the two clusters, in Mbit/s'
    """
    w = "the measured bandwidth" if unit == WEIGHT_UNITS["probe"] else "w_n"
    what = {None: f"{w} between the two hosts",
            "mean": f"mean {w} over the host pairs of the two clusters",
            "sum": f"{w} summed over the host pairs of the two clusters",
            "thesis": f"averaged {w} between the two clusters (Eq 5.4)"}[linkage]
    return f"edge weight: {what}, in {unit}"
