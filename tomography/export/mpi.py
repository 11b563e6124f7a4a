"""The hierarchy for topology-aware MPI collectives (docs/method.md, MPICH-G2 style).

MPICH-G2 (thesis 6.1) gives every bandwidth cluster of every level its own
communicator, led by the cluster's first rank, and runs a broadcast top
level first, the broadcasts of one level in parallel.  This module writes
what an MPI program needs to do the same over a :class:`Hierarchy`:

* a rank order that keeps the clusters of every level contiguous, as an
  Open MPI or MPICH hostfile (:func:`hostfile`) or an Open MPI rankfile
  (:func:`rankfile`);
* per level, the colour of every rank for ``MPI_Comm_split`` and the leader
  of every cluster, and the *leaders* communicators through which the
  leaders of the clusters of a level talk;
* the broadcast schedule (:func:`tomography.planning.broadcast_schedule`)
  in ranks.

Rank order
    Hosts are ordered by their top-level cluster, then by their cluster on
    the level below, ..., then by name; the clusters of a level are ordered
    by their first host (by name), so the first rank of every cluster is its
    first host, the leader :func:`~tomography.planning.broadcast_schedule`
    chooses.  With ``slots`` ranks per host, each host takes that many
    consecutive ranks (what ``mpirun --hostfile`` does by default, filling
    each host's slots before the next host).

JSON format ``tomography-mpi/1`` (:func:`mpi_hierarchy`), here for hosts
a to e in level-1 clusters {a, b}, {c}, {d, e} and level-2 clusters {a, b},
{c, d, e}, broadcast root d, one slot per host::

    {
      "format": "tomography-mpi/1",
      "size": 5,                              # ranks in MPI_COMM_WORLD
      "hosts": ["a", "b", "c", "d", "e"],     # rank order, clusters contiguous
      "slots": [1, 1, 1, 1, 1],               # ranks per host, in the order of "hosts"
      "ranks": {"a": 0, "b": 1, "c": 2, "d": 3, "e": 4},   # host -> its first rank
      "rank_hosts": ["a", "b", "c", "d", "e"],             # rank -> host
      "root": {"host": "d", "rank": 3},       # the broadcast root
      "levels": [                             # level 1 (finest) first
        {"level": 1,
         "colours": [0, 0, 1, 2, 2],          # per rank: its level-1 cluster
         "clusters": [{"id": "L1C0", "colour": 0, "hosts": ["a", "b"],
                       "ranks": [0, 1], "leader": 0},
                      {"id": "L1C1", "colour": 1, "hosts": ["c"], "ranks": [2, 2], "leader": 2},
                      {"id": "L1C2", "colour": 2, "hosts": ["d", "e"], "ranks": [3, 4],
                       "leader": 3}],
         "leaders": [0, null, 1, 1, null],    # per rank: its colour in the leaders
                                              #   communicators of level 1, or null
         "leaders_roots": [0, 3]},            # per leaders colour: the rank that sends
        {"level": 2,
         "colours": [0, 0, 1, 1, 1],
         "clusters": [{"id": "L2C0", ..., "leader": 0}, {"id": "L2C1", ..., "leader": 3}],
         "leaders": [0, null, null, 0, null],
         "leaders_roots": [3]}
      ],
      "schedule": [                           # broadcast steps, in order
        {"step": 1, "level": 2, "communicator": "leaders",
         "sends": [{"from": "d", "from_rank": 3, "to": ["a"], "to_ranks": [0]}]},
        {"step": 2, "level": 1, "communicator": "leaders",
         "sends": [{"from": "d", "from_rank": 3, "to": ["c"], "to_ranks": [2]}]},
        {"step": 3, "level": 1, "communicator": "cluster",
         "sends": [{"from": "a", "from_rank": 0, "to": ["b"], "to_ranks": [1]},
                   {"from": "d", "from_rank": 3, "to": ["e"], "to_ranks": [4]}]}
      ],
      "params": {"root_host": "d", "slots": 1, "hierarchy": {...}}
    }

* ``levels[k-1]["colours"]`` is the ``color`` of ``MPI_Comm_split`` for the
  communicator of each level-``k`` cluster; clusters are numbered in rank
  order.  A cluster's ``hosts`` are listed in rank order, its ``ranks`` are
  ``[first, last]``, inclusive.
* A cluster's leader is its lowest rank, except in the clusters holding the
  root host, which the root leads (as in the schedule).
* ``levels[k-1]["leaders"]``: the leaders of the level-``k`` clusters that
  lie in one level-``k+1`` cluster form one communicator, coloured by that
  level-``k+1`` cluster; on the top level all leaders form one (colour 0).
  ``null`` stands for ``MPI_UNDEFINED``: the rank leads no level-``k``
  cluster.  Its root (``leaders_roots``) is the leader of the level-``k+1``
  cluster, on the top level the root.
* The schedule runs in these communicators: a ``"leaders"`` step of level
  ``k`` is a broadcast in the leaders communicators of level ``k``, the last
  step (``"cluster"``, level 1) a broadcast in each level-1 cluster's
  communicator, which with several slots per host reaches every rank.  The
  sends of a step run in parallel; they are listed by sender rank.  Steps
  without a send are left out (a top level of one cluster, a hierarchy
  whose clusters hold one rank each).

``docs/mpi.md`` shows an mpi4py program that splits the communicators from
this file and broadcasts along the schedule.
"""

from __future__ import annotations

import json
import os
from itertools import accumulate
from pathlib import Path
from typing import Any, Literal, Mapping

from tomography.errors import TomographyError
from tomography.hierarchy import Cluster, Hierarchy

__all__ = ["FORMAT", "rank_order", "mpi_hierarchy", "write_mpi_hierarchy",
           "read_mpi_hierarchy", "check_mpi_hierarchy", "hostfile", "rankfile"]

FORMAT = "tomography-mpi/1"
"""The ``format`` string of the files this module reads and writes."""

Slots = int | Mapping[str, int]


def _check_hierarchy(hierarchy: Hierarchy) -> dict[str, Cluster]:
    """Clusters by id, after checking that each level nests in the one above."""
    if not isinstance(hierarchy, Hierarchy):
        raise TomographyError(f"expected a Hierarchy, got {type(hierarchy).__name__}")
    by_id: dict[str, Cluster] = {}
    for level in hierarchy.levels:
        for c in level:
            if c.id in by_id:
                raise TomographyError(f"cluster id {c.id!r} appears twice in the hierarchy")
            if not c.hosts:
                raise TomographyError(f"cluster {c.id!r} has no hosts")
            by_id[c.id] = c
    for number in range(1, hierarchy.depth):
        above = {h: c for c in hierarchy.levels[number] for h in c.hosts}
        inside: dict[str, set[str]] = {c.id: set() for c in hierarchy.levels[number]}
        for c in hierarchy.levels[number - 1]:
            parents = {above[h].id for h in c.hosts}
            if len(parents) > 1:
                raise TomographyError(f"cluster {c.id!r} of level {number} is split between "
                                      f"clusters {', '.join(sorted(parents))} of level "
                                      f"{number + 1}")
            inside[parents.pop()].add(c.id)
        for c in hierarchy.levels[number]:
            if set(c.children) != inside[c.id]:
                raise TomographyError(f"cluster {c.id!r} of level {number + 1} lists children "
                                      f"{sorted(c.children)}, but holds the clusters "
                                      f"{sorted(inside[c.id])} of level {number}")
    return by_id


def rank_order(hierarchy: Hierarchy) -> list[str]:
    """The hosts in rank order: the clusters of every level contiguous.

    Hosts are sorted by their top-level cluster, then by their cluster on
    each level below, then by name; clusters are keyed by their first host,
    so every cluster begins with its first host by name.

    Parameters
    ----------
    hierarchy : Hierarchy

    Returns
    -------
    list of str

    Examples
    --------
    >>> h = Hierarchy.from_partitions(["a", "b", "c", "d", "e"],
    ...                               [[0, 0, 1, 2, 2], [0, 0, 1, 1, 1]])
    >>> rank_order(h)
    ['a', 'b', 'c', 'd', 'e']
    >>> h = Hierarchy.from_partitions(["a", "b", "c", "d", "e"],
    ...                               [[0, 1, 0, 2, 1], [0, 1, 0, 0, 1]])
    >>> rank_order(h)
    ['a', 'c', 'd', 'b', 'e']
    """
    _check_hierarchy(hierarchy)
    keys: dict[str, list[str]] = {h: [] for h in hierarchy.hosts}
    for level in reversed(hierarchy.levels):
        for c in level:
            for h in c.hosts:
                keys[h].append(min(c.hosts))
    return sorted(keys, key=lambda h: (keys[h], h))


def _slots(hierarchy: Hierarchy, slots: Slots) -> dict[str, int]:
    if not isinstance(hierarchy, Hierarchy):
        raise TomographyError(f"expected a Hierarchy, got {type(hierarchy).__name__}")
    hosts = hierarchy.hosts
    if isinstance(slots, Mapping):
        extra = sorted(set(slots) - set(hosts))
        if extra:
            raise TomographyError(f"slots names host {extra[0]!r}, which the hierarchy does "
                                  f"not have ({len(hosts)} hosts)")
        lacking = [h for h in hosts if h not in slots]
        if lacking:
            raise TomographyError(f"slots gives no count for host {lacking[0]!r} of the "
                                  "hierarchy")
        counts = dict(slots)
    else:
        counts = {h: slots for h in hosts}
    for h, n in counts.items():
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise TomographyError(f"slots of host {h!r} must be a positive integer, got {n!r}")
    return counts


def mpi_hierarchy(hierarchy: Hierarchy, *, root_host: str | None = None,
                  slots: Slots = 1) -> dict[str, Any]:
    """Communicators, leaders, rank order and broadcast schedule, JSON-ready.

    Parameters
    ----------
    hierarchy : Hierarchy
    root_host : str, optional
        The broadcast root; the host of rank 0 (the first host by name) by
        default.  It leads every cluster it is in.
    slots : int or mapping of str to int, default 1
        MPI ranks per host, or per host by name (every host of the hierarchy,
        no other).  A host's ranks are consecutive.

    Returns
    -------
    dict
        Format ``tomography-mpi/1``, described in the module docstring.

    Raises
    ------
    TomographyError
        On an unknown root host, slots that do not match the hierarchy's
        hosts, or a hierarchy whose levels do not nest.

    Examples
    --------
    >>> h = Hierarchy.from_partitions(["a", "b", "c", "d", "e"],
    ...                               [[0, 0, 1, 2, 2], [0, 0, 1, 1, 1]])
    >>> m = mpi_hierarchy(h, root_host="d")
    >>> m["hosts"], m["root"]
    (['a', 'b', 'c', 'd', 'e'], {'host': 'd', 'rank': 3})
    >>> [(lv["colours"], lv["leaders"]) for lv in m["levels"]]
    [([0, 0, 1, 2, 2], [0, None, 1, 1, None]), ([0, 0, 1, 1, 1], [0, None, None, 0, None])]
    >>> [c["leader"] for c in m["levels"][1]["clusters"]]      # d leads its clusters
    [0, 3]
    >>> for step in m["schedule"]:
    ...     print(step["level"], step["communicator"],
    ...           [(s["from_rank"], s["to_ranks"]) for s in step["sends"]])
    2 leaders [(3, [0])]
    1 leaders [(3, [2])]
    1 cluster [(0, [1]), (3, [4])]

    Two ranks per host: the leaders send to every other rank of their cluster.

    >>> m = mpi_hierarchy(h, slots=2)
    >>> m["size"], m["ranks"]["c"], m["levels"][0]["colours"]
    (10, 4, [0, 0, 0, 0, 1, 1, 2, 2, 2, 2])
    >>> [(s["from_rank"], s["to_ranks"]) for s in m["schedule"][-1]["sends"]]
    [(0, [1, 2, 3]), (4, [5]), (6, [7, 8, 9])]
    """
    from tomography.planning import broadcast_schedule

    by_id = _check_hierarchy(hierarchy)
    counts = _slots(hierarchy, slots)
    hosts = rank_order(hierarchy)
    if root_host is None:
        root_host = hosts[0]
    elif root_host not in counts:
        raise TomographyError(f"unknown root host {root_host!r}; the hierarchy has "
                              f"{len(hosts)} hosts ({', '.join(hosts[:5])}"
                              f"{', ...' if len(hosts) > 5 else ''})")
    per_host = [counts[h] for h in hosts]
    first = dict(zip(hosts, accumulate([0, *per_host[:-1]])))
    size = sum(per_host)
    rank_hosts = [h for h in hosts for _ in range(counts[h])]
    root = first[root_host]

    def ranks_of(c: Cluster) -> list[int]:
        return [first[h] + i for h in c.hosts for i in range(counts[h])]

    # colour of each cluster per level: clusters numbered in rank order
    colour: dict[str, int] = {}
    ordered: list[list[Cluster]] = []
    for level in hierarchy.levels:
        clusters = sorted(level, key=lambda c: min(first[h] for h in c.hosts))
        colour.update({c.id: i for i, c in enumerate(clusters)})
        ordered.append(clusters)
    leader = {cid: (root if root_host in c.hosts else min(ranks_of(c)))
              for cid, c in by_id.items()}
    parent = {c.id: p.id for below, level in zip(hierarchy.levels, hierarchy.levels[1:])
              for p in level for c in below if c.hosts[0] in p.hosts}
    depth = hierarchy.depth
    levels = []
    for number, clusters in enumerate(ordered, start=1):
        colours = [0] * size
        leaders: list[int | None] = [None] * size
        for c in clusters:
            for r in ranks_of(c):
                colours[r] = colour[c.id]
            leaders[leader[c.id]] = colour[parent[c.id]] if number < depth else 0
        roots = ([leader[c.id] for c in ordered[number]] if number < depth else [root])
        levels.append({
            "level": number, "colours": colours,
            "clusters": [{"id": c.id, "colour": colour[c.id],
                          "hosts": sorted(c.hosts, key=first.__getitem__),
                          "ranks": [min(ranks_of(c)), max(ranks_of(c))],
                          "leader": leader[c.id]} for c in clusters],
            "leaders": leaders, "leaders_roots": roots})

    cluster_of = [{h: c.id for c in level for h in c.hosts} for level in hierarchy.levels]

    def step_level(sender: str, receiver: str) -> int:
        shared = next((k for k in range(depth) if cluster_of[k][sender] == cluster_of[k][receiver]),
                      depth)
        return shared  # 0: same level-1 cluster; k >= 1: leaders communicator of level k

    steps = []
    for step in broadcast_schedule(hierarchy, root_host):
        kinds = {step_level(sender, receiver) for sender, receivers in step
                 for receiver in receivers}
        if len(kinds) != 1:  # pragma: no cover - broadcast_schedule sends one level per step
            raise TomographyError("broadcast_schedule mixed levels in one step")
        kind = kinds.pop()
        if kind == 0:
            continue  # the cluster step is rebuilt below, rank by rank
        steps.append({"level": kind, "communicator": "leaders", "sends": [
            {"from": s, "from_rank": first[s], "to": list(rs), "to_ranks": [first[r] for r in rs]}
            for s, rs in sorted(step, key=lambda send: first[send[0]])]})
    sends = []
    for c in ordered[0]:
        source = leader[c.id]
        to_ranks = [r for r in ranks_of(c) if r != source]
        if to_ranks:
            sends.append({"from": rank_hosts[source], "from_rank": source,
                          "to": [rank_hosts[r] for r in to_ranks], "to_ranks": to_ranks})
    if sends:
        steps.append({"level": 1, "communicator": "cluster", "sends": sends})
    schedule = [{"step": i, **s} for i, s in enumerate(steps, start=1)]

    params = {"root_host": root_host, "slots": slots if isinstance(slots, int)
              else {h: counts[h] for h in hosts}, "hierarchy": hierarchy.params}
    return {"format": FORMAT, "size": size, "hosts": hosts, "slots": per_host,
            "ranks": first, "rank_hosts": rank_hosts,
            "root": {"host": root_host, "rank": root}, "levels": levels,
            "schedule": schedule, "params": params}


def write_mpi_hierarchy(hierarchy: Hierarchy, path: str | os.PathLike[str], *,
                        root_host: str | None = None, slots: Slots = 1,
                        indent: int | None = 2) -> None:
    """Write :func:`mpi_hierarchy` as a JSON file.

    Parameters
    ----------
    hierarchy : Hierarchy
    path : str or path-like
    root_host, slots
        As for :func:`mpi_hierarchy`.
    indent : int or None, default 2

    Examples
    --------
    >>> import tempfile
    >>> h = Hierarchy.from_partitions(["a", "b", "c"], [[0, 0, 1]])
    >>> path = tempfile.mkdtemp() + "/topo.mpi.json"
    >>> write_mpi_hierarchy(h, path, root_host="c")
    >>> read_mpi_hierarchy(path)["levels"][0]["leaders"]
    [0, None, 0]
    """
    document = mpi_hierarchy(hierarchy, root_host=root_host, slots=slots)
    Path(path).write_text(json.dumps(document, indent=indent) + "\n", encoding="utf-8")


# --------------------------------------------------------------------------- reading


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
    of the module docstring; the schedule must reach every rank but the
    root exactly once, each sender holding the data when it sends.

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
    >>> h = Hierarchy.from_partitions(["a", "b", "c"], [[0, 0, 1]])
    >>> doc = mpi_hierarchy(h)
    >>> doc["levels"][0]["colours"][2] = 0
    >>> check_mpi_hierarchy(doc)
    Traceback (most recent call last):
    ...
    tomography.errors.TomographyError: field 'levels[0].colours[2]': rank 2 has colour 0, \
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
    slots = _ints(_get(data, "slots", list), "slots", len(hosts), low=1)
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
    """Read and check a file written by :func:`write_mpi_hierarchy`.

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    dict
        The document (see the module docstring).

    Raises
    ------
    TomographyError
        Naming the file and the field at fault (see :func:`check_mpi_hierarchy`).
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise TomographyError(f"{path}: cannot read: {exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TomographyError(f"{path}: not valid JSON: {exc}") from None
    try:
        return check_mpi_hierarchy(data)
    except TomographyError as exc:
        raise TomographyError(f"{path}: {exc}") from None


# --------------------------------------------------------------------------- host files


def _host_names(hosts: list[str], forbidden: str, what: str) -> None:
    for h in hosts:
        if not h or any(ch.isspace() or ch in forbidden for ch in h):
            raise TomographyError(f"host name {h!r} cannot be written in {what} (it is empty "
                                  f"or holds whitespace or one of {forbidden!r})")


def mpi_flavor(mpiexec: str | None = None) -> Literal["openmpi", "mpich"] | None:
    """The hostfile syntax of an ``mpiexec``, read from ``mpiexec --version``.

    Parameters
    ----------
    mpiexec : str, optional
        The launcher to ask; default the ``mpiexec`` on ``PATH``, else the
        one beside this Python (the set-up's mpich wheel).

    Returns
    -------
    "openmpi", "mpich" or None
        ``openmpi`` for Open MPI; ``mpich`` for MPICH, Intel MPI, MVAPICH
        (Hydra); None when no launcher is found or it says neither.

    Examples
    --------
    >>> mpi_flavor("/nonexistent/mpiexec") is None
    True
    """
    import shutil
    import subprocess
    import sys

    candidates = [mpiexec] if mpiexec else [shutil.which("mpiexec"),
                                            str(Path(sys.executable).parent / "mpiexec")]
    for launcher in filter(None, candidates):
        try:
            out = subprocess.run([launcher, "--version"], capture_output=True, text=True,
                                 timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            continue
        text = out.stdout + out.stderr
        if "Open MPI" in text or "OpenRTE" in text or "Open RTE" in text:
            return "openmpi"
        if any(word in text for word in ("HYDRA", "MPICH", "Intel(R) MPI", "MVAPICH")):
            return "mpich"
    return None


def hostfile(hierarchy: Hierarchy, *, slots: Slots = 1,
             flavor: Literal["openmpi", "mpich", "auto"] = "auto") -> str:
    """The hosts in rank order, as a hostfile (machinefile).

    Launched with it, ``mpirun``/``mpiexec`` fill each host's slots before
    the next host (Open MPI's default ``--map-by slot``; MPICH's Hydra
    ``-f``), so ranks follow :func:`rank_order` and the clusters of every
    level are contiguous.

    Parameters
    ----------
    hierarchy : Hierarchy
    slots : int or mapping of str to int, default 1
        Ranks per host (see :func:`mpi_hierarchy`).
    flavor : {"auto", "openmpi", "mpich"}, default "auto"
        ``host slots=N`` (Open MPI) or ``host:N`` (MPICH, Intel MPI and
        MVAPICH's Hydra); ``auto`` asks the installed ``mpiexec``
        (:func:`mpi_flavor`) and writes Open MPI's syntax when there is none.

    Returns
    -------
    str
        One line per host, newline-terminated.

    Raises
    ------
    TomographyError
        On an unknown flavor, slots not matching the hosts, or a host name
        the syntax cannot hold.

    Examples
    --------
    >>> h = Hierarchy.from_partitions(["a", "b", "c"], [[0, 1, 0]])
    >>> print(hostfile(h, slots=2, flavor="openmpi"), end="")
    a slots=2
    c slots=2
    b slots=2
    >>> print(hostfile(h, slots={"a": 1, "b": 4, "c": 2}, flavor="mpich"), end="")
    a:1
    c:2
    b:4
    """
    if flavor == "auto":
        flavor = mpi_flavor() or "openmpi"
    if flavor not in ("openmpi", "mpich"):
        raise TomographyError(f"unknown hostfile flavor {flavor!r}; choose 'auto', 'openmpi' "
                              "or 'mpich'")
    counts = _slots(hierarchy, slots)
    hosts = rank_order(hierarchy)
    if flavor == "openmpi":
        _host_names(hosts, "#=", "an Open MPI hostfile")
        return "".join(f"{h} slots={counts[h]}\n" for h in hosts)
    _host_names(hosts, "#:", "an MPICH hostfile")
    return "".join(f"{h}:{counts[h]}\n" for h in hosts)


def rankfile(hierarchy: Hierarchy, *, slots: Slots = 1) -> str:
    """An Open MPI rankfile placing the ranks in :func:`rank_order`.

    Each host's ranks are consecutive and bound to its logical slots 0, 1,
    ...  (``mpirun --rankfile FILE``; Open MPI 5 also spells it
    ``--map-by rankfile:file=FILE``).

    Parameters
    ----------
    hierarchy : Hierarchy
    slots : int or mapping of str to int, default 1
        Ranks per host (see :func:`mpi_hierarchy`).

    Returns
    -------
    str

    Examples
    --------
    >>> h = Hierarchy.from_partitions(["a", "b", "c"], [[0, 1, 0]])
    >>> print(rankfile(h, slots={"a": 2, "b": 1, "c": 1}), end="")
    rank 0=a slot=0
    rank 1=a slot=1
    rank 2=c slot=0
    rank 3=b slot=0
    """
    counts = _slots(hierarchy, slots)
    hosts = rank_order(hierarchy)
    _host_names(hosts, "#=", "an Open MPI rankfile")
    lines, rank = [], 0
    for h in hosts:
        for slot in range(counts[h]):
            lines.append(f"rank {rank}={h} slot={slot}\n")
            rank += 1
    return "".join(lines)
