"""Cluster-aware swarms: the peers and shares of MOB and Robber (den Burger 2009, ch. 4.3).

MOB and Robber are receiver-initiated multicasts, like BitTorrent, in which
the hosts of one cluster (a *mob*) cooperate: each host steals a share of
the pieces from hosts in other clusters (its *foreign peers*) and every
piece it gets is exchanged inside the cluster with its *local peers*, so
each piece enters each cluster once.  They need only which hosts form a
cluster, no bandwidth figure.  :func:`swarm_plan` draws, for one
multicast, what the thesis's phases 1 and 2 decide:

1. each host connects to ``local_peers`` (5) random hosts of its own
   cluster and accepts the connections of others;
2. for every other cluster ``C_y`` a host ``x`` of rank ``r`` in ``C_x``
   may take as foreign peer the host of rank ``r mod |C_y|`` in ``C_y``
   (Eq 4.6), and it connects to ``min(foreign_peers, T - 1)`` of these at
   random.  Whenever that random pick misses the root's cluster, the
   candidate there is added, so every cluster reaches one that holds
   every piece (the thesis's section 4.4.3 remedy for many clusters);
3. the pieces ``floor(r P / |C|) <= i < floor((r + 1) P / |C|)`` are the
   host's share (Eq 4.7), stolen from foreign peers; everything else comes
   from local peers.  Robber starts from the same shares and lets a host
   that has requested all of its share steal half of a local peer's
   remaining share.

The agents run the plan (:mod:`measure.robber`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from tomography.model.errors import ParameterError
from tomography.model.seeding import Seeded, random_state
from tomography.model.units import listed

__all__ = ["SWARM_METHODS", "PIECE", "PEERS", "SwarmPlan", "mob_share", "foreign_candidate",
           "swarm_plan"]

SWARM_METHODS = ("mob", "robber")
"""The cluster-aware receiver-initiated methods."""

PIECE = 1 << 18
"""Bytes of a piece (the last one may be shorter)."""

PEERS = 5
"""Local and foreign peers each host connects to (the thesis's F = 5, after BitTorrent)."""


def mob_share(rank: int, size: int, pieces: int) -> range:
    """The pieces a host of ``rank`` in a cluster of ``size`` steals from other clusters (Eq 4.7).

    Examples
    --------
    >>> [list(mob_share(r, 3, 8)) for r in range(3)]
    [[0, 1], [2, 3, 4], [5, 6, 7]]
    """
    return range(rank * pieces // size, (rank + 1) * pieces // size)


def foreign_candidate(rank: int, members: Sequence[str]) -> str:
    """The host of another cluster (``members`` in rank order) a host of ``rank`` may take (Eq 4.6).

    Examples
    --------
    >>> foreign_candidate(3, ["a", "b"])
    'b'
    """
    return members[rank % len(members)]


@dataclass(frozen=True)
class SwarmPlan:
    """One MOB or Robber multicast as the agents run it.

    Attributes
    ----------
    method : {"mob", "robber"}
    root : str
    size : int
        Payload bytes.
    piece : int
        Bytes of a piece.
    clusters : dict
        Cluster name -> its hosts in rank order.
    connect : dict
        Host -> the hosts it opens connections to (local first, then foreign);
        a host's peers are these and those that connect to it.
    seed : int or None
        The seed the peers were drawn with.
    local_peers, foreign_peers : int
        How many of each a host connects to.
    """

    method: str
    root: str
    size: int
    piece: int
    clusters: dict[str, list[str]]
    connect: dict[str, list[str]]
    seed: int | None
    local_peers: int = PEERS
    foreign_peers: int = PEERS
    cluster_of: dict[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "cluster_of", {h: c for c, members in self.clusters.items()
                                                for h in members})

    @property
    def hosts(self) -> list[str]:
        """Every host, sorted."""
        return sorted(self.cluster_of)

    @property
    def pieces(self) -> int:
        """Number of pieces."""
        return -(-self.size // self.piece)

    @property
    def predicted(self) -> float:
        """No prediction: a receiver-initiated method adapts to what the network gives."""
        return float("nan")

    def share(self, host: str) -> range:
        """The pieces ``host`` starts out stealing from other clusters (empty at the root)."""
        if host == self.root:
            return range(0)
        members = self.clusters[self.cluster_of[host]]
        return mob_share(members.index(host), len(members), self.pieces)

    def peers(self, host: str) -> list[str]:
        """Every host ``host`` exchanges pieces with, sorted."""
        return sorted(set(self.connect[host])
                      | {h for h, targets in self.connect.items() if host in targets})

    def foreign_bytes(self, receiver: str, sources: Mapping[str, int]) -> int:
        """Of the bytes ``receiver`` got from each host (``sources``), those from other clusters.

        Examples
        --------
        >>> p = swarm_plan({"a": "x", "b": "x", "c": "y"}, "a", 2**20, seed=0)
        >>> p.foreign_bytes("c", {"a": 10, "b": 5})
        15
        """
        here = self.cluster_of[receiver]
        return sum(n for h, n in sources.items() if self.cluster_of.get(h) != here)

    def to_meta(self) -> dict[str, Any]:
        """What ``meta.json`` records of the plan (``plans[METHOD]``)."""
        return {"method": self.method, "predicted_Bps": None, "piece": self.piece,
                "clusters": self.clusters, "connect": self.connect, "seed": self.seed,
                "local_peers": self.local_peers, "foreign_peers": self.foreign_peers,
                "notes": [f"{len(self.clusters)} clusters; no prediction (receiver-initiated)"]}


@random_state
def swarm_plan(cluster_of: Mapping[str, str], root: str, size: int, *, method: str = "mob",
               piece: int = PIECE, local_peers: int = PEERS, foreign_peers: int = PEERS,
               seed: Seeded = None) -> SwarmPlan:  # type: ignore[assignment]
    """Draw the peers of a MOB or Robber multicast over clusters of hosts.

    Parameters
    ----------
    cluster_of : mapping
        Host -> its cluster (a hierarchy level's clusters, a topology's, or a file's).
    root : str
        The host that has the payload.
    size : int
        Payload bytes.
    method : {"mob", "robber"}
    piece : int
        Bytes of a piece.
    local_peers, foreign_peers : int
        Connections each host opens inside its cluster and to other clusters.
    seed : int, numpy Generator or None
        Draws the peers.

    Returns
    -------
    SwarmPlan
        Each cluster's hosts in rank order (sorted by name), and the hosts
        each host connects to.

    Raises
    ------
    ParameterError
        An unknown method, a root that is not a host, fewer than two hosts,
        a payload of fewer pieces than the largest cluster has hosts.

    Examples
    --------
    >>> labels = {f"a{i}": "A" for i in range(3)} | {f"b{i}": "B" for i in range(2)}
    >>> p = swarm_plan(labels, "a0", 2**21, method="robber", piece=2**18, seed=1)
    >>> p.pieces, list(p.share("b1")), p.peers("b1")
    (8, [4, 5, 6, 7], ['a1', 'b0'])
    """
    if method not in SWARM_METHODS:
        raise ParameterError(f"unknown swarm method {method!r}; choose {' or '.join(SWARM_METHODS)}")
    hosts = sorted(cluster_of)
    if root not in cluster_of:
        raise ParameterError(f"the root {root!r} is not among the clustered hosts "
                             f"({listed(hosts, 8)})")
    if len(hosts) < 2:
        raise ParameterError("a multicast needs at least two hosts")
    if piece < 1 or size < 1 or local_peers < 1 or foreign_peers < 1:
        raise ParameterError("size, piece, local_peers and foreign_peers must be >= 1, got "
                             f"{size}, {piece}, {local_peers}, {foreign_peers}")
    clusters: dict[str, list[str]] = {}
    for h in hosts:
        clusters.setdefault(str(cluster_of[h]), []).append(h)
    biggest = max(len(m) for m in clusters.values())
    pieces = -(-size // piece)
    if pieces < biggest:
        raise ParameterError(f"{pieces} piece(s) of {piece} bytes cannot be shared among the "
                             f"{biggest} hosts of the largest cluster: give a larger payload or "
                             "a smaller piece")
    rng = seed.rng
    home = str(cluster_of[root])
    connect: dict[str, list[str]] = {}
    for name, members in clusters.items():
        others = [c for c in clusters if c != name]
        for rank, h in enumerate(members):
            mates = [m for m in members if m != h]
            local = [mates[i] for i in rng.permutation(len(mates))[:local_peers]]
            picked = [others[i] for i in rng.permutation(len(others))[:foreign_peers]]
            if others and home != name and home not in picked:
                picked.append(home)
            connect[h] = local + [foreign_candidate(rank, clusters[c]) for c in picked]
    return SwarmPlan(method, root, int(size), int(piece), clusters, connect, seed.recorded,
                     local_peers, foreign_peers)
