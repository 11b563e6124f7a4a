"""The names of a weight matrix's rows: given, the graph's own, or ``h00, h01, ...``."""

from __future__ import annotations

from typing import Hashable, Iterable

from tomography.model.errors import ParameterError

__all__ = ["row_names", "repeated"]


def repeated(names: Iterable[Hashable]) -> Hashable:
    """The first name that comes twice, or None.

    Examples
    --------
    >>> repeated(["a", "b", "a"]), repeated(["a"])
    ('a', None)
    """
    seen: set = set()
    for name in names:
        if name in seen:
            return name
        seen.add(name)
    return None


def row_names(n: int, hosts: list[Hashable] | None = None,
              nodes: list[Hashable] | None = None) -> list[str]:
    """The name of each of ``n`` rows: ``hosts``, else the graph's ``nodes``, else ``h00, h01, ...``.

    The default names are zero-padded, so that sorted, as a hierarchy sorts
    its hosts, they keep the rows' order.

    Examples
    --------
    >>> row_names(11)[:3], row_names(11)[-1], sorted(row_names(11)) == row_names(11)
    (['h00', 'h01', 'h02'], 'h10', True)
    >>> row_names(2, ["b", "a"], nodes=["a", "b"])
    Traceback (most recent call last):
    ...
    tomography.model.errors.ParameterError: hosts= names the rows of a graph that names them already (networkx nodes, DataFrame index): leave hosts out, or give the graph's own names in its row order
    >>> row_names(2, ["a", "a"])
    Traceback (most recent call last):
    ...
    tomography.model.errors.ParameterError: host names must be distinct: 'a' names two rows
    """
    if hosts is not None:
        names = [str(x) for x in hosts]
        if nodes is not None and names != [str(x) for x in nodes]:
            raise ParameterError("hosts= names the rows of a graph that names them already "
                                 "(networkx nodes, DataFrame index): leave hosts out, or give "
                                 "the graph's own names in its row order")
    elif nodes is not None:
        names = [str(x) for x in nodes]
    else:
        width = len(str(max(n - 1, 0)))
        names = [f"h{i:0{width}d}" for i in range(n)]
    if len(names) != n:
        raise ParameterError(f"{len(names)} host names for a {n}-host graph")
    if len(set(names)) != len(names):
        raise ParameterError(f"host names must be distinct: {repeated(names)!r} names two rows")
    return names
