"""The rank order of a hierarchy's hosts and their ranks per host (slots), checked."""

from __future__ import annotations

from typing import Mapping

from tomography.model.errors import TomographyError, expect
from tomography.model.hierarchy import Cluster, Hierarchy

__all__ = ["Slots", "rank_order", "check_hierarchy", "slot_counts"]

Slots = int | Mapping[str, int]
"""MPI ranks per host: one count for every host, or a count per host by name."""


def check_hierarchy(hierarchy: Hierarchy) -> dict[str, Cluster]:
    """Clusters by id, after checking that each level nests in the one above."""
    expect(hierarchy, Hierarchy)
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
    check_hierarchy(hierarchy)
    keys: dict[str, list[str]] = {h: [] for h in hierarchy.hosts}
    for level in reversed(hierarchy.levels):
        for c in level:
            for h in c.hosts:
                keys[h].append(min(c.hosts))
    return sorted(keys, key=lambda h: (keys[h], h))


def slot_counts(hierarchy: Hierarchy, slots: Slots) -> dict[str, int]:
    """Ranks per host by name, for every host of the hierarchy; positive integers only."""
    expect(hierarchy, Hierarchy)
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
