"""The broadcast schedule of hierarchical collectives over a Hierarchy (MPICH-G2 style)."""

from __future__ import annotations

from tomography.model.errors import TomographyError
from tomography.model.hierarchy import Cluster, Hierarchy

__all__ = ["broadcast_schedule"]


def broadcast_schedule(hierarchy: Hierarchy, root_host: str) -> list[list[tuple[str, list[str]]]]:
    """Who sends to whom, level by level, in an MPICH-G2-style broadcast.

    There is one communicator per cluster per level, led by the cluster's
    first host (hosts are sorted: the first rank when ranks keep clusters
    contiguous), except that every cluster holding ``root_host`` is led by
    it.  The broadcast runs top level first:

    1. if the top level has several clusters, the root sends to the leaders
       of the others;
    2. then, from the top level down to level 2, the leader of each cluster
       sends to the leaders of its child clusters, all clusters in parallel;
    3. last, the leader of each level-1 cluster sends to its other hosts.

    Every host but the root receives exactly once.

    Parameters
    ----------
    hierarchy : Hierarchy
    root_host : str

    Returns
    -------
    list of steps
        Each step, in order, is a list of ``(sender, receivers)`` that run
        in parallel, receivers sorted; senders without receivers, and steps
        without senders, are left out.

    Examples
    --------
    >>> h = Hierarchy.from_partitions(["a", "b", "c", "d", "e"], [[0, 0, 1, 2, 2], [0, 0, 1, 1, 1]])
    >>> for step in broadcast_schedule(h, "d"):
    ...     print(step)
    [('d', ['a'])]
    [('d', ['c'])]
    [('a', ['b']), ('d', ['e'])]
    """
    if root_host not in hierarchy.hosts:
        raise TomographyError(f"unknown root host {root_host!r}; the hierarchy has "
                              f"{len(hierarchy.hosts)} hosts")

    def leader(cluster: Cluster) -> str:
        return root_host if root_host in cluster.hosts else cluster.hosts[0]

    by_id = {c.id: c for level in hierarchy.levels for c in level}
    top = hierarchy.levels[-1]
    steps = [[(root_host, sorted(leader(c) for c in top if root_host not in c.hosts))]]
    for level in reversed(hierarchy.levels[1:]):
        steps.append([(leader(c), sorted({leader(by_id[k]) for k in c.children} - {leader(c)}))
                      for c in level])
    steps.append([(leader(c), [h for h in c.hosts if h != leader(c)])
                  for c in hierarchy.levels[0]])
    sends = [[(sender, receivers) for sender, receivers in step if receivers] for step in steps]
    return [step for step in sends if step]
