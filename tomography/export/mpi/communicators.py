"""The ``tomography-mpi/1`` document: communicators, leaders and the broadcast schedule in ranks.

:func:`mpi_hierarchy` builds it and :func:`write_mpi_hierarchy` writes it;
the format is described in the docstring of :mod:`tomography.export.mpi`.
"""

from __future__ import annotations

import json
import os
from itertools import accumulate
from pathlib import Path
from typing import Any

from tomography.model.errors import TomographyError
from tomography.export.mpi.ranks import Slots, check_hierarchy, rank_order, slot_counts
from tomography.model.hierarchy import Cluster, Hierarchy
from tomography.model.units import listed

__all__ = ["FORMAT", "mpi_hierarchy", "write_mpi_hierarchy"]

FORMAT = "tomography-mpi/1"
"""The ``format`` string of the files :mod:`tomography.export.mpi` reads and writes."""


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
        Format ``tomography-mpi/1``, described in the docstring of
        :mod:`tomography.export.mpi`.

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

    by_id = check_hierarchy(hierarchy)
    counts = slot_counts(hierarchy, slots)
    hosts = rank_order(hierarchy)
    if root_host is None:
        root_host = hosts[0]
    elif root_host not in counts:
        raise TomographyError(f"unknown root host {root_host!r}; the hierarchy has "
                              f"{len(hosts)} hosts ({listed(hosts)})")
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
    >>> from tomography.export.mpi import read_mpi_hierarchy
    >>> h = Hierarchy.from_partitions(["a", "b", "c"], [[0, 0, 1]])
    >>> path = tempfile.mkdtemp() + "/topo.mpi.json"
    >>> write_mpi_hierarchy(h, path, root_host="c")
    >>> read_mpi_hierarchy(path)["levels"][0]["leaders"]
    [0, None, 0]
    """
    document = mpi_hierarchy(hierarchy, root_host=root_host, slots=slots)
    Path(path).write_text(json.dumps(document, indent=indent) + "\n", encoding="utf-8")
