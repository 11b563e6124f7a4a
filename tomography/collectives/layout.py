"""Which ranks talk to which in a hierarchical collective: levels, leaders and stages.

Pure Python, no MPI: every rank computes the same :class:`Layout` from the
same hierarchy and the hosts of all ranks, and from it, for any root, the
*stages* of a collective (MPICH-G2's per-level communicators, Dichev 2014
section 6.1).

Levels
    Level 0 holds every rank alone.  If some host runs several ranks, the
    next level groups the ranks of each host (they share memory, the
    fastest link there is).  Then come the hierarchy's levels, finest
    first, and last one level that holds every rank.  A level that merges
    nothing of the level below is left out.
Leaders
    For a root ``r``, the leader of a cluster is ``r`` if the cluster holds
    it, else the cluster's lowest rank.  A rank that leads a cluster leads
    every cluster below it that holds it.
Stages
    Stage ``j`` (1 to the number of levels above level 0) joins, inside
    each cluster of level ``j``, the leaders of its clusters on level
    ``j - 1``; the cluster's own leader is the stage's root.  A broadcast
    runs the stages top down (the root to the leaders of the other top
    clusters first, over the slowest links, then level by level), a
    reduction bottom up; the groups of one stage work in parallel.

Examples
--------
Five ranks on hosts a to e, clusters {a, b}, {c}, {d, e} and above them
{a, b} and {c, d, e}:

>>> layout = Layout.build(["a", "b", "c", "d", "e"],
...                       {"a": [0, 0], "b": [0, 0], "c": [1, 1], "d": [2, 1], "e": [2, 1]})
>>> layout.clusters
[[0, 0, 1, 2, 2], [0, 0, 1, 1, 1], [0, 0, 0, 0, 0]]
>>> for stage in layout.stages(root=3):
...     print(stage.level, stage.groups)
3 [[0, 3]]
2 [[0], [2, 3]]
1 [[0, 1], [2], [3, 4]]
>>> [stage.root_of(3) for stage in layout.stages(root=3)]
[3, 3, 3]
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cached_property
from typing import Mapping, Sequence

from tomography.model.errors import TomographyError

__all__ = ["Layout", "Stage"]


@dataclass(frozen=True)
class Stage:
    """One stage of a hierarchical collective for one root.

    Attributes
    ----------
    level : int
        The level whose clusters hold the stage's groups (1 = the first
        level above the ranks themselves).
    groups : list of list of int
        The ranks of each group (the leaders of level ``level - 1`` inside
        one cluster of level ``level``), ascending; groups of one rank are
        listed but need no communication.
    roots : list of int
        The root of each group: the leader of its cluster.
    colour : list of int or None
        Per rank, the index of its group in ``groups`` (the ``color`` of
        ``MPI_Comm_split``), or None for a rank in no group of this stage.
    """

    level: int
    groups: list[list[int]]
    roots: list[int]
    colour: list[int | None]

    def group_of(self, rank: int) -> list[int] | None:
        """The ranks of ``rank``'s group, or None if it takes no part."""
        c = self.colour[rank]
        return None if c is None else self.groups[c]

    def root_of(self, rank: int) -> int | None:
        """The root of ``rank``'s group, or None if it takes no part."""
        c = self.colour[rank]
        return None if c is None else self.roots[c]


@dataclass(frozen=True)
class Layout:
    """Every rank's cluster on every level, rank 0 first.

    Attributes
    ----------
    hosts : list of str
        The host of each rank.
    clusters : list of list of int
        ``clusters[k][rank]``: the cluster of ``rank`` on level ``k + 1``
        (level 0, every rank alone, is implicit); the last level holds all
        ranks.  Clusters are numbered by their lowest rank.
    names : list of str
        What each level is: ``"host"`` (the ranks of one host), the
        hierarchy's level (``"level 2"``), or ``"all"``.
    """

    hosts: list[str]
    clusters: list[list[int]]
    names: list[str]

    @classmethod
    def build(cls, rank_hosts: Sequence[str],
              host_levels: Mapping[str, Sequence[int]]) -> "Layout":
        """The layout of ranks on hosts, from each host's cluster per level.

        Parameters
        ----------
        rank_hosts : sequence of str
            The host of each rank.
        host_levels : mapping of str to sequence of int
            Per host, its cluster label on each level of the hierarchy,
            finest first; the levels must nest.

        Raises
        ------
        TomographyError
            A rank's host that ``host_levels`` does not have, or levels that
            do not nest.
        """
        hosts = list(rank_hosts)
        if not hosts:
            raise TomographyError("a layout needs at least one rank")
        unknown = sorted({h for h in hosts if h not in host_levels})
        if unknown:
            raise TomographyError(f"hosts {', '.join(unknown)} are not in the hierarchy")
        depth = {len(host_levels[h]) for h in hosts}
        if len(depth) != 1:
            raise TomographyError("every host needs a label on every level")
        keys = [list(hosts)] + [[(k, host_levels[h][k]) for h in hosts]
                                for k in range(depth.pop())] + [[0] * len(hosts)]
        names = ["host"] + [f"level {k}" for k in range(1, len(keys) - 1)] + ["all"]
        clusters: list[list[int]] = []
        kept: list[str] = []
        previous = list(range(len(hosts)))
        for key, name in zip(keys, names):
            first: dict = {}
            labels = [first.setdefault(x, r) for r, x in enumerate(key)]
            numbering = {r: i for i, r in enumerate(sorted(set(labels)))}
            level = [numbering[x] for x in labels]
            parent: dict[int, int] = {}
            for below, above in zip(previous, level):
                if parent.setdefault(below, above) != above:
                    raise TomographyError(f"{name} of the hierarchy splits a cluster of the "
                                          "level below: its levels do not nest")
            if len(set(level)) == len(set(previous)):
                previous = level
                continue  # merges nothing
            clusters.append(level)
            kept.append(name)
            previous = level
        if not clusters:  # one rank
            clusters, kept = [[0]], ["all"]
        return cls(hosts, clusters, kept)

    @property
    def size(self) -> int:
        """Number of ranks."""
        return len(self.hosts)

    @cached_property
    def digest(self) -> str:
        """A short hash of the layout: ranks that compare it agree on every stage."""
        text = json.dumps([self.hosts, self.clusters], separators=(",", ":"))
        return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()

    def stages(self, root: int, *, relay: bool = False) -> list[Stage]:
        """The stages for ``root``, top level first.

        Parameters
        ----------
        root : int
        relay : bool, default False
            False: the root leads every cluster that holds it, so a
            reduction ends there (the order of the stages is the order of
            the data).  True, for a broadcast: a cluster that holds the root
            is represented one level up by the leader of another of its
            clusters, which gets the data first; so the data leave the
            root's cluster through another link than the one the root's own
            copies use (on a tree of routers, every link then carries the
            data once each way).  A rank's sends then wait for its one
            receive, whichever stage that is in.

        Returns
        -------
        list of Stage

        Examples
        --------
        Four ranks in clusters {0, 1} and {2, 3}: relayed, rank 1 takes the
        data from rank 0 and sends them to the other cluster.

        >>> layout = Layout.build(["a", "b", "c", "d"], {"a": [0], "b": [0], "c": [1], "d": [1]})
        >>> [(s.groups, s.roots) for s in layout.stages(0)]
        [([[0, 2]], [0]), ([[0, 1], [2, 3]], [0, 2])]
        >>> [(s.groups, s.roots) for s in layout.stages(0, relay=True)]
        [([[1, 2]], [1]), ([[0, 1], [2, 3]], [0, 2])]
        """
        if not 0 <= root < self.size:
            raise TomographyError(f"root {root} is not a rank of this layout (0..{self.size - 1})")
        rep = list(range(self.size))     # the representative of each cluster one level down
        below = list(range(self.size))   # each rank's cluster one level down
        out = []
        for k, level in enumerate(self.clusters):
            children: dict[int, set[int]] = {}
            for r, c in enumerate(level):
                children.setdefault(c, set()).add(below[r])
            order = sorted(children)
            groups, roots, now = [], [], {}
            for c in order:
                members = sorted(rep[d] for d in children[c])
                if level[root] == c:
                    mine = below[root]
                    lead = rep[mine]
                    others = [rep[d] for d in children[c] if d != mine]
                    now[c] = min(others) if relay and others else lead
                else:
                    lead = now[c] = min(members)
                groups.append(members)
                roots.append(lead)
            colour: list[int | None] = [None] * self.size
            for i, members in enumerate(groups):
                for r in members:
                    colour[r] = i
            out.append(Stage(level=k + 1, groups=groups, roots=roots, colour=colour))
            rep = [0] * (max(level) + 1)
            for c, r in now.items():
                rep[c] = r
            below = list(level)
        return out[::-1]

    def holdings(self, root: int) -> list[dict[int, list[int]]]:
        """What each member of each stage holds in a hierarchical gather to ``root``.

        ``holdings(root)[i][member]`` lists the ranks whose blocks ``member``
        brings to stage ``i`` (in the order of :meth:`stages`, top first): its
        own block on the lowest stage; above, the blocks of the group it led
        one stage below, its members' blocks one after the other, members in
        rank order (the order of ``MPI_Gatherv``).

        Examples
        --------
        >>> layout = Layout.build(["a", "b", "c"], {"a": [0], "b": [1], "c": [0]})
        >>> [stage.groups for stage in layout.stages(root=1)]
        [[[0, 1]], [[0, 2], [1]]]
        >>> layout.holdings(root=1)
        [{0: [0, 2], 1: [1]}, {0: [0], 2: [2], 1: [1]}]
        """
        stages = self.stages(root)
        held = {r: [r] for r in range(self.size)}
        out: list[dict[int, list[int]]] = [{} for _ in stages]
        for i in reversed(range(len(stages))):
            out[i] = {m: held[m] for g in stages[i].groups for m in g}
            for group, lead in zip(stages[i].groups, stages[i].roots):
                held[lead] = [r for member in group for r in held[member]]
        return out

    def order(self, root: int) -> list[int]:
        """The ranks in the order a hierarchical gather to ``root`` collects their blocks.

        Examples
        --------
        >>> layout = Layout.build(["a", "b", "c"], {"a": [0], "b": [1], "c": [0]})
        >>> layout.order(root=1)
        [0, 2, 1]
        """
        top = self.stages(root)[0]
        held = self.holdings(root)[0]
        return [r for member in top.groups[top.colour[root]] for r in held[member]]
