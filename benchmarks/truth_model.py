"""A topology-only ground truth tried on the random-network family: expected rates per connection.

``benchmarks/calibration.py`` checks this definition against the simulator's
own ``w_15`` (its first table).  Between two groups of hosts (the clusters
of a topology file), a connection of a broadcast gets

* at most its share of the slower NIC (:func:`tomography.model.ground_truth.nic_share`);
* at most ``capacity / connections`` on every router link of its route,
  the connections across a link counted by Eq 5.2 from the hosts on its two
  sides (on a mesh of routers, the sides of the cut that carries as many host
  pairs as the link's routes do);
* and, over a long round trip, less: a broadcast's connections are choked
  and unchoked every few seconds and start again from a small window each
  time (slow start after idle), so a connection with a round-trip time
  ``rtt`` moves its blocks as if at ``rate / (1 + rtt / rtt_scale)``.  A
  LAN's sub-millisecond round trips cost nothing; a WAN's tens of
  milliseconds cost more than its capacity does.

:func:`group_rates` gives that expected rate per group pair;
:func:`truth_partitions` cuts it like a dendrogram (every threshold on the
rates is a partition of the groups) and keeps the partitions whose groups
the rates set apart: their separation (:func:`cluster.separation.separation`
on the expected rates) reaches ``min_gap``.

It agrees with the simulated data on too few partitions to ship
(benchmarks/RESULTS.md): block counts are shares of a file, not rates, so a
link upstream of a slower one hardly shows (what enters through the slow link
spreads behind it faster than it arrives).  The family is judged on the
long-run data instead (:class:`calibration.LongRun`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tomography.model.errors import ParameterError
from tomography.model.topology import Topology

__all__ = ["group_rates", "truth_partitions", "RatePartition", "RTT_SCALE", "TRUTH_GAP"]

RTT_SCALE = 0.008
"""Round-trip time (s) that halves a connection's rate in a broadcast (``inf``: the
thesis's model, round trips cost nothing)."""

TRUTH_GAP = 1.5
"""Separation of the expected rates a partition needs to be a ground truth."""


def _equivalent_sides(pairs: float, total: int) -> tuple[float, float]:
    """The sides ``a + b = total`` of the cut with ``a * b = pairs`` host pairs across."""
    root = np.sqrt(max(total * total - 4.0 * pairs, 0.0))
    return (total - root) / 2.0, (total + root) / 2.0


def group_rates(topology: Topology, host_connections: int | None = None, *,
                rtt_scale: float = RTT_SCALE) -> tuple[list[str], np.ndarray]:
    """The expected rate per connection between every two host groups of a topology (bit/s).

    Parameters
    ----------
    topology : Topology
    host_connections : int, optional
        Connections sharing a host's NIC (:data:`tomography.model.ground_truth.HOST_CONNECTIONS`
        by default).
    rtt_scale : float, default RTT_SCALE
        The round-trip time (s) that halves a connection's rate (``inf``: none does).

    Returns
    -------
    names : list of str
        The groups (``HostGroup.name``), in the topology's order.
    rates : ndarray
        Square, symmetric; the diagonal is the rate inside a group.

    Examples
    --------
    >>> from tomography.model.topology import read_topology
    >>> names, r = group_rates(read_topology("N1"), rtt_scale=float("inf"))
    >>> len(names), round(float(r.max() / r.min()), 1)   # 125 Mbit/s NIC share over 1.17
    (8, 106.7)
    """
    from tomography.model.ground_truth import HOST_CONNECTIONS, connections, nic_share

    if not rtt_scale > 0:
        raise ParameterError(f"rtt_scale must be > 0 seconds, got {rtt_scale}")
    groups = list(topology.clusters)
    names = [g.name for g in groups]
    share = nic_share(topology, HOST_CONNECTIONS if host_connections is None
                      else host_connections)
    total = sum(g.count for g in groups)
    routes = {}
    carried: dict[frozenset[str], float] = {}
    for i, a in enumerate(groups):
        for j in range(i + 1, len(groups)):
            b = groups[j]
            route = topology.route(a.router, b.router)
            routes[i, j] = route
            for u, v in route:
                key = frozenset((u, v))
                carried[key] = carried.get(key, 0.0) + a.count * b.count
    per_link = {}
    for key, pairs in carried.items():
        u, v = tuple(key)
        conn = connections(*_equivalent_sides(pairs, total))
        per_link[key] = (min(topology.link_capacity(u, v), topology.link_capacity(v, u))
                         / conn if conn else np.inf)
    k = len(groups)
    base = np.full((k, k), share)
    rtt = np.zeros((k, k))
    for i, a in enumerate(groups):
        rtt[i, i] = 4.0 * a.latency
        for j in range(i + 1, k):
            b = groups[j]
            route = routes[i, j]
            bottleneck = min((per_link[frozenset(e)] for e in route), default=np.inf)
            base[i, j] = base[j, i] = min(share, bottleneck)
            rtt[i, j] = rtt[j, i] = 2.0 * (a.latency + b.latency + sum(
                topology.graph.edges[u, v]["latency"] for u, v in route))
    return names, base / (1.0 + rtt / rtt_scale)


@dataclass(frozen=True)
class RatePartition:
    """One partition of the host groups by a threshold on the expected rates.

    Attributes
    ----------
    clusters : tuple of tuple of str
        Group names joined together.
    separation : float
        How clearly the expected rates set them apart
        (:func:`cluster.separation.separation` on host-level expected rates).
    truth : bool
        ``separation`` reaches the gap asked for (and there are two clusters or more).
    """

    clusters: tuple[tuple[str, ...], ...]
    separation: float
    truth: bool

    def labels(self, topology: Topology) -> dict[str, str]:
        """Host to label (the group names of its cluster joined by ``+``)."""
        name = {c: "+".join(group) for group in self.clusters for c in group}
        return {h.name: name[h.cluster] for h in topology.hosts}


def truth_partitions(topology: Topology, host_connections: int | None = None, *,
                     min_gap: float = TRUTH_GAP, rtt_scale: float = RTT_SCALE
                     ) -> list[RatePartition]:
    """Every partition a threshold on the expected rates gives, coarsest first, with its separation.

    Parameters
    ----------
    topology : Topology
        Trees and meshes of routers alike (routes as the simulator takes them).
    host_connections : int, optional
    min_gap : float, default TRUTH_GAP
        Separation a partition needs to be a truth.
    rtt_scale : float, default RTT_SCALE

    Returns
    -------
    list of RatePartition
        From two clusters to every group alone.

    Examples
    --------
    >>> from tomography.model.topology import read_topology
    >>> parts = truth_partitions(read_topology("N1"))
    >>> [(len(p.clusters), p.truth) for p in parts]
    [(2, False), (4, True), (8, True)]
    """
    from cluster.separation import separation

    if not min_gap >= 1:
        raise ParameterError(f"min_gap is a ratio of rates, at least 1; got {min_gap}")
    names, rates = group_rates(topology, host_connections, rtt_scale=rtt_scale)
    k = len(names)
    index = {name: i for i, name in enumerate(names)}
    host_group = np.array([index[h.cluster] for h in topology.hosts])
    host_rates = rates[np.ix_(host_group, host_group)]
    np.fill_diagonal(host_rates, 0.0)
    out: list[RatePartition] = []
    seen = set()
    for threshold in sorted(set(rates[np.triu_indices(k, 1)].tolist())) + [np.inf]:
        parent = list(range(k))

        def find(x: int) -> int:
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        for i in range(k):
            for j in range(i + 1, k):
                if rates[i, j] > threshold:
                    parent[find(i)] = find(j)
        roots = [find(i) for i in range(k)]
        _, group_labels = np.unique(roots, return_inverse=True)
        if group_labels.max() < 1:
            continue
        key = tuple(sorted(tuple(names[i] for i in range(k) if group_labels[i] == g)
                           for g in range(group_labels.max() + 1)))
        if key in seen:
            continue
        seen.add(key)
        sep = separation(host_rates, group_labels[host_group])
        out.append(RatePartition(key, float(sep), bool(sep >= min_gap)))
    return sorted(out, key=lambda p: len(p.clusters))
