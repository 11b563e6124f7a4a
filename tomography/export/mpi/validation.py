"""Check a ``tomography-mpi/1`` document, or read and check its file.

The rules are those of the format, described in the docstring of
:mod:`tomography.export.mpi`; an error names the first field at fault.
The file is read as every outside document is: a regular file of at most
:data:`tomography.model.safe_load.MAX_BYTES` (a FIFO, a device or a link to
``/dev/zero`` refused unopened), UTF-8 JSON nested at most
:data:`tomography.model.safe_load.MAX_DEPTH` deep; its counts are bounded
(:data:`MAX_SLOTS` ranks a host, :data:`MAX_RANKS` in all) before any list
of ranks is built.
"""

from __future__ import annotations

import os
from itertools import accumulate
from pathlib import Path
from typing import Any

from tomography.model.dataset.schema import MAX_HOSTS
from tomography.model.errors import DatasetError, TomographyError
from tomography.export.mpi.communicators import FORMAT

MAX_SLOTS = 2**16
"""The most ranks one host may run (slots): more than the cores of any machine."""
MAX_RANKS = 2**24
"""The most ranks a hierarchy file may describe: beyond the largest MPI jobs run."""

__all__ = ["check_mpi_hierarchy", "read_mpi_hierarchy"]


def _fail(where: str, message: str) -> TomographyError:
    return TomographyError(f"field {where!r}: {message}")


def _ints(value: Any, where: str, length: int, *, low: int = 0, high: int | None = None,
          nullable: bool = False) -> list[int | None]:
    if not isinstance(value, list) or len(value) != length:
        raise _fail(where, f"must be a list of {length} integers")
    for i, x in enumerate(value):
        if x is None and nullable:
            continue
        if isinstance(x, bool) or not isinstance(x, int) or x < low or (high is not None
                                                                        and x > high):
            bound = f" in {low}..{high}" if high is not None else f" >= {low}"
            raise _fail(f"{where}[{i}]", f"must be an integer{bound}"
                        f"{' or null' if nullable else ''}, got {x!r}")
    return value


def _get(data: dict, key: str, kind: type | tuple[type, ...], where: str = "") -> Any:
    name = f"{where}.{key}" if where else key
    if key not in data:
        raise _fail(name, "missing")
    value = data[key]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is int:
        kinds = kind if isinstance(kind, tuple) else (kind,)
        raise _fail(name, f"must be {' or '.join(k.__name__ for k in kinds)}, "
                          f"got {type(value).__name__}")
    return value


def check_mpi_hierarchy(data: Any) -> dict[str, Any]:
    """Check a ``tomography-mpi/1`` document for shape and consistency.

    Besides the types, every level's clusters must be contiguous rank
    ranges numbered in rank order, nest in the level above and agree with
    the colours; the leaders and their communicators must follow the rules
    of the format (the docstring of :mod:`tomography.export.mpi`); the
    schedule must reach every rank but the root exactly once, each sender
    holding the data when it sends.

    Parameters
    ----------
    data : object
        A parsed JSON document.

    Returns
    -------
    dict
        ``data`` itself.

    Raises
    ------
    TomographyError
        Naming the first field at fault (``levels[1].leaders[4]``).

    Examples
    --------
    >>> from tomography.export.mpi import mpi_hierarchy
    >>> from tomography.model.hierarchy import Hierarchy
    >>> h = Hierarchy.from_partitions(["a", "b", "c"], [[0, 0, 1]])
    >>> doc = mpi_hierarchy(h)
    >>> doc["levels"][0]["colours"][2] = 0
    >>> check_mpi_hierarchy(doc)
    Traceback (most recent call last):
    ...
    tomography.model.errors.TomographyError: field 'levels[0].colours[2]': rank 2 has colour 0, \
but cluster 'L1C1' (colour 1) holds ranks 2..2
    """
    if not isinstance(data, dict):
        raise TomographyError("a tomography-mpi document is a JSON object")
    if data.get("format") != FORMAT:
        raise _fail("format", f"unsupported {data.get('format')!r}; this reader understands "
                              f"{FORMAT!r}")
    hosts = _get(data, "hosts", list)
    if not hosts or any(not isinstance(h, str) or not h for h in hosts):
        raise _fail("hosts", "must be a non-empty list of host names")
    if len(set(hosts)) != len(hosts):
        twice = next(h for h in hosts if hosts.count(h) > 1)
        raise _fail("hosts", f"host {twice!r} is listed twice")
    if len(hosts) > MAX_HOSTS:
        raise _fail("hosts", f"{len(hosts)} hosts, more than the {MAX_HOSTS} of any network")
    slots = _ints(_get(data, "slots", list), "slots", len(hosts), low=1, high=MAX_SLOTS)
    if sum(slots) > MAX_RANKS:
        raise _fail("slots", f"{sum(slots)} ranks in all, more than the {MAX_RANKS} of any "
                             "MPI job")
    size = _get(data, "size", int)
    if size != sum(slots):
        raise _fail("size", f"is {size}, but the slots add up to {sum(slots)}")
    first = dict(zip(hosts, accumulate([0, *slots[:-1]])))
    ranks = _get(data, "ranks", dict)
    if ranks != first:
        bad = next((h for h in hosts if ranks.get(h) != first[h]), None)
        if bad is None:
            bad = next(h for h in ranks if h not in first)
            raise _fail(f"ranks.{bad}", "is not a host of field 'hosts'")
        raise _fail(f"ranks.{bad}", f"must be {first[bad]} (hosts in rank order, "
                                    f"each taking its slots), got {ranks.get(bad)!r}")
    rank_hosts = [h for h, n in zip(hosts, slots) for _ in range(n)]
    if _get(data, "rank_hosts", list) != rank_hosts:
        bad = next(i for i, h in enumerate(data["rank_hosts"] + [None] * size)
                   if i >= len(rank_hosts) or h != rank_hosts[i])
        raise _fail(f"rank_hosts[{bad}]" if bad < size else "rank_hosts",
                    f"disagrees with fields 'hosts' and 'slots' (length {size})")
    root = _get(data, "root", dict)
    root_host = _get(root, "host", str, "root")
    if root_host not in first:
        raise _fail("root.host", f"unknown host {root_host!r}")
    if _get(root, "rank", int, "root") != first[root_host]:
        raise _fail("root.rank", f"must be {first[root_host]}, the first rank of {root_host!r}")
    root_rank = first[root_host]
    levels = _get(data, "levels", list)
    if not levels:
        raise _fail("levels", "must list at least one level")
    spans: list[list[tuple[int, int]]] = []
    leaders_of: list[list[int]] = []
    for k, level in enumerate(levels):
        where = f"levels[{k}]"
        if not isinstance(level, dict):
            raise _fail(where, "must be an object")
        if _get(level, "level", int, where) != k + 1:
            raise _fail(f"{where}.level", f"must be {k + 1} (levels are listed finest first)")
        clusters = _get(level, "clusters", list, where)
        colours = _ints(level.get("colours"), f"{where}.colours", size, low=0,
                        high=max(len(clusters) - 1, 0))
        ranges, leaders = [], []
        start = 0
        for c, cluster in enumerate(clusters):
            cw = f"{where}.clusters[{c}]"
            if not isinstance(cluster, dict):
                raise _fail(cw, "must be an object")
            _get(cluster, "id", str, cw)
            if _get(cluster, "colour", int, cw) != c:
                raise _fail(f"{cw}.colour", f"must be {c} (clusters numbered in rank order)")
            low, high = _ints(cluster.get("ranks"), f"{cw}.ranks", 2, low=0, high=size - 1)
            if low != start or high < low:
                raise _fail(f"{cw}.ranks", f"must start at rank {start} (clusters contiguous, "
                                           f"in rank order), got {[low, high]}")
            members = list(dict.fromkeys(rank_hosts[low:high + 1]))
            if _get(cluster, "hosts", list, cw) != members or (
                    high + 1 < size and rank_hosts[high + 1] == rank_hosts[high]):
                raise _fail(f"{cw}.hosts", f"must be the hosts of ranks {low}..{high}, each "
                                           "with all its ranks")
            lead = _get(cluster, "leader", int, cw)
            if not low <= lead <= high:
                raise _fail(f"{cw}.leader", f"rank {lead} is not in the cluster "
                                            f"(ranks {low}..{high})")
            expected = root_rank if low <= root_rank <= high else low
            if lead != expected:
                raise _fail(f"{cw}.leader", f"must be {expected} (the root's rank in the root's "
                                            f"clusters, else the lowest), got {lead}")
            for r in range(low, high + 1):
                if colours[r] != c:
                    raise _fail(f"{where}.colours[{r}]", f"rank {r} has colour {colours[r]}, "
                                f"but cluster {cluster['id']!r} (colour {c}) holds ranks "
                                f"{low}..{high}")
            ranges.append((low, high))
            leaders.append(lead)
            start = high + 1
        if start != size:
            raise _fail(f"{where}.clusters", f"cover ranks 0..{start - 1} of 0..{size - 1}")
        if k and any(not any(lo <= a and b <= hi for lo, hi in ranges) for a, b in spans[-1]):
            raise _fail(f"{where}.clusters", f"do not contain the clusters of level {k}")
        spans.append(ranges)
        leaders_of.append(leaders)
    depth = len(levels)
    for k, level in enumerate(levels):
        where = f"levels[{k}]"
        above = spans[k + 1] if k + 1 < depth else [(0, size - 1)]
        groups = _ints(level.get("leaders"), f"{where}.leaders", size, nullable=True)
        leading = set(leaders_of[k])
        for r in range(size):
            lead = r in leading
            expected = next(g for g, (lo, hi) in enumerate(above) if lo <= r <= hi) if lead \
                else None
            if groups[r] != expected:
                raise _fail(f"{where}.leaders[{r}]", f"must be {expected!r}: rank {r} "
                            f"{'leads' if lead else 'leads no'} cluster of level {k + 1}")
        roots = leaders_of[k + 1] if k + 1 < depth else [root_rank]
        if level.get("leaders_roots") != roots:
            raise _fail(f"{where}.leaders_roots", f"must be {roots} (the leaders of the "
                                                  "clusters one level up)")
    _check_schedule(data, size, rank_hosts, root_rank, depth)
    if not isinstance(data.get("params", {}), dict):
        raise _fail("params", "must be an object")
    return data


def _check_schedule(data: dict, size: int, rank_hosts: list[str], root: int,
                    depth: int) -> None:
    has = {root}
    for i, step in enumerate(_get(data, "schedule", list)):
        where = f"schedule[{i}]"
        if not isinstance(step, dict):
            raise _fail(where, "must be an object")
        level = _get(step, "level", int, where)
        if not 1 <= level <= depth:
            raise _fail(f"{where}.level", f"must be in 1..{depth}, got {level}")
        if step.get("communicator") not in ("leaders", "cluster"):
            raise _fail(f"{where}.communicator", "must be 'leaders' or 'cluster'")
        received = set()
        for j, send in enumerate(_get(step, "sends", list, where)):
            sw = f"{where}.sends[{j}]"
            if not isinstance(send, dict):
                raise _fail(sw, "must be an object")
            source = _get(send, "from_rank", int, sw)
            targets = _ints(send.get("to_ranks"), f"{sw}.to_ranks",
                            len(send.get("to_ranks") or []), low=0, high=size - 1)
            if not 0 <= source < size or source not in has:
                raise _fail(f"{sw}.from_rank", f"rank {source} does not hold the data yet")
            for r in targets:
                if r in has or r in received:
                    raise _fail(f"{sw}.to_ranks", f"rank {r} receives twice")
                received.add(r)
            if send.get("from") != rank_hosts[source] or send.get("to") != [
                    rank_hosts[r] for r in targets]:
                raise _fail(sw, "host names disagree with the ranks")
        has |= received
    if len(has) != size:
        missing = min(set(range(size)) - has)
        raise _fail("schedule", f"rank {missing} never receives")


def read_mpi_hierarchy(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and check a file written by :func:`~tomography.export.mpi.write_mpi_hierarchy`.

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    dict
        The document (see the docstring of :mod:`tomography.export.mpi`).

    Raises
    ------
    TomographyError
        Naming the file and the field at fault (see :func:`check_mpi_hierarchy`).
    """
    from tomography.model.files import open_regular
    from tomography.model.safe_load import MAX_BYTES, load_json, read_bounded

    try:
        with open_regular(Path(path), MAX_BYTES, kind="MPI hierarchy file") as fh:
            data, _ = read_bounded(fh, what=str(path), kind="MPI hierarchy file")
        data.decode("utf-8")
        data = load_json(data, what=str(path), kind="MPI hierarchy file")
    except UnicodeDecodeError as exc:
        raise TomographyError(f"{path}: not UTF-8 text (byte {exc.start}): not a "
                              "tomography-mpi/1 file") from None
    except DatasetError as exc:     # a FIFO, a device, too large, too deep, not JSON
        raise TomographyError(str(exc)) from None
    try:
        return check_mpi_hierarchy(data)
    except TomographyError as exc:
        raise TomographyError(f"{path}: {exc}") from None
