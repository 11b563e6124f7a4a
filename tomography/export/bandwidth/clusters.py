"""Clusters (name to hosts): taken from a result, checked, and their figures from host pairs."""

from __future__ import annotations

from typing import Iterable, Mapping

import numpy as np

from tomography.model.errors import TomographyError
from tomography.model.hierarchy import ClusterTree, Hierarchy

__all__ = ["clusters_from", "figure_groups", "check_clusters", "known_clusters", "indices",
           "pair_medians"]


def check_clusters(clusters: Mapping[str, Iterable[str]]) -> dict[str, tuple[str, ...]]:
    """The clusters, hosts sorted; refused on an empty name or cluster, or a host in two."""
    if not isinstance(clusters, Mapping) or not clusters:
        raise TomographyError("clusters must be a non-empty mapping of cluster name to hosts")
    out: dict[str, tuple[str, ...]] = {}
    seen: dict[str, str] = {}
    for name, members in clusters.items():
        if not isinstance(name, str) or not name.strip():
            raise TomographyError(f"cluster names must be non-empty strings, got {name!r}")
        if isinstance(members, str):
            raise TomographyError(f"cluster {name!r}: give its hosts as a list, not a string")
        hosts = tuple(sorted(str(h) for h in members))
        if not hosts:
            raise TomographyError(f"cluster {name!r} has no hosts")
        for h in hosts:
            if h in seen:
                raise TomographyError(f"host {h!r} is in clusters {seen[h]!r} and {name!r}")
            seen[h] = name
        out[name] = hosts
    return out


def clusters_from(result: Hierarchy | ClusterTree | Mapping[str, str], *,
                  level: int = 1) -> dict[str, tuple[str, ...]]:
    """Clusters (name to hosts) from a hierarchy level, a cluster tree or host labels.

    Parameters
    ----------
    result : Hierarchy, ClusterTree or mapping of host to label
        A label mapping is, for instance, :attr:`tomography.model.dataset.Measurement.labels`.
    level : int, default 1
        The hierarchy level (1 is the finest); ignored otherwise.

    Examples
    --------
    >>> h = Hierarchy.from_partitions(["a", "b", "c"], [[0, 0, 1], [0, 0, 0]])
    >>> clusters_from(h)
    {'L1C0': ('a', 'b'), 'L1C1': ('c',)}
    >>> clusters_from({"b": "s1", "a": "s1", "c": "s2"})
    {'s1': ('a', 'b'), 's2': ('c',)}
    """
    if isinstance(result, Hierarchy):
        return {c.id: c.hosts for c in result.level(level)}
    if isinstance(result, ClusterTree):
        return {c.id: c.hosts for c in result.clusters}
    out: dict[str, list[str]] = {}
    for host, label in sorted(result.items()):
        out.setdefault(str(label), []).append(str(host))
    return {name: tuple(hosts) for name, hosts in sorted(out.items())}


def indices(hosts: list[str], clusters: dict[str, tuple[str, ...]]) -> list[np.ndarray]:
    """The positions in ``hosts`` of each cluster's hosts."""
    index = {h: i for i, h in enumerate(hosts)}
    return [np.array([index[h] for h in members]) for members in clusters.values()]


def known_clusters(clusters: Mapping[str, Iterable[str]], known: Iterable[str], what: str
                   ) -> dict[str, tuple[str, ...]]:
    """:func:`check_clusters`, and every host one of ``known`` (the hosts of ``what``)."""
    checked = check_clusters(clusters)
    known = set(known)
    for name, members in checked.items():
        unknown = [h for h in members if h not in known]
        if unknown:
            raise TomographyError(f"cluster {name!r}: unknown host {unknown[0]!r} "
                                  f"(not in the {what})")
    return checked


def pair_medians(matrix: np.ndarray, groups: list[np.ndarray]) -> np.ndarray:
    """Median over host pairs (distinct hosts, NaN ignored) between every two groups."""
    k = len(groups)
    out = np.full((k, k), np.nan)
    for a, rows in enumerate(groups):
        for b, cols in enumerate(groups):
            block = matrix[np.ix_(rows, cols)].copy()
            if a == b:
                np.fill_diagonal(block, np.nan)
            values = block[~np.isnan(block)]
            if values.size:
                out[a, b] = float(np.median(values))
    return out


def figure_groups(hierarchy: Hierarchy, level: int, *, hosts: bool = False
                  ) -> tuple[dict[str, tuple[str, ...]], dict[str, list[str]]]:
    """The clusters of ``level`` and the groups of them on the levels above.

    With ``hosts``, every host is a cluster of its own (named after it), and
    every level's clusters are groups: figures to plan between hosts.  A
    level the data does not support (its confidence below the threshold)
    gives no groups: the tests take a group's members to be alike and
    measure no pair inside it.

    Examples
    --------
    >>> from tomography.model.hierarchy import Hierarchy
    >>> h = Hierarchy.from_partitions(list("abcd"), [[0, 0, 1, 2], [0, 0, 1, 1]])
    >>> figure_groups(h, 1)
    ({'L1C0': ('a', 'b'), 'L1C1': ('c',), 'L1C2': ('d',)}, {'L2C1': ['L1C1', 'L1C2']})
    >>> figure_groups(h, 1, hosts=True)[1]
    {'L1C0': ['a', 'b'], 'L2C1': ['c', 'd']}
    >>> h.confidence, h.params["confidence"] = [0.95, 0.2], {"threshold": 0.9}
    >>> figure_groups(h, 1, hosts=True)[1]           # level 2 is not supported
    {'L1C0': ['a', 'b']}
    """
    level = min(level, hierarchy.depth)
    clusters = clusters_from(hierarchy, level=level)
    first = level + 1
    if hosts:
        clusters, first = {h: (h,) for h in sorted(hierarchy.hosts)}, 1
    groups: dict[str, list[str]] = {}
    for above in range(first, hierarchy.depth + 1):
        if hierarchy.supported(above) is False:
            continue
        for group in hierarchy.level(above):
            mine = set(group.hosts)
            members = [c for c, hosts in clusters.items() if set(hosts) <= mine]
            if 1 < len(members) < len(clusters) and \
                    sorted(members) not in [sorted(m) for m in groups.values()]:
                groups[group.id] = members
    return clusters, groups
