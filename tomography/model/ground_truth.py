"""The ground-truth model of a topology (docs/method.md, thesis 5.7).

For a link that splits the hosts of a tree into sides ``A`` and ``B``:

* Eq 5.2, active connections across it during a broadcast:
  ``conn(A, B) = min(|A|, |B|) / max(|A|, |B|) * (|A| + |B|) / 2``;
* Eq 5.3, bandwidth per connection: ``capacity / conn``.

A link with one capacity per direction enters the model at its slower
direction (:attr:`~tomography.model.topology.Link.capacity`).  The thesis's model
has one capacity per link; a broadcast rotates its root, so data crosses a
link both ways, and ``w_n`` is the mean of both directions' counts: the
slower way is what holds the counts across the link down.  That is an
assumption of this toolkit, not of the thesis.

Inside a cluster (switched Ethernet) bandwidth is not shared.  A ground truth
is a threshold on bandwidth per connection: hosts joined by links above it
share a cluster.  Every threshold between two neighbouring values gives a
partition; :func:`threshold_partitions` lists them all, and those separated
from their neighbours by a clear gap are the acceptable ground truths (a
result matching any of them is correct).

**The host's share.**  The thesis's model leaves a host's NIC unshared, but
a broadcasting host splits its NIC among its connections: libtorrent keeps
8 peers unchoked (its optimistic unchoke among them), so a connection gets
at most ``nic / 8`` at its ends (:func:`nic_share`).  A link that gives more
per connection than that share is not what limits a transfer across it, so
by bandwidth the block counts cannot tell the hosts on its two sides apart
(what contrast remains comes from latency or queues).  A
partition that separates such hosts is not **observable by bandwidth**:
listed, marked, never acceptable (:func:`observable_labels` merges its
clusters across those links).  Round trips can still set them apart, and on
the random-network family they often do: which truth levels a dataset's
broadcasts show is judged on its data (:attr:`tomography.pipeline.Analysis.observability`),
not by this model.  The evidence for the share (the simulator, the thesis's
N2, a testbed run) is in ``docs/ground-truth.md``; ``host_connections=1``
gives the thesis's model.
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import numpy as np
import pandas as pd

from tomography.model.errors import ParameterError
from tomography.model.topology import Topology, TopologyError

__all__ = ["connections", "link_table", "threshold_partitions", "TruthPartition",
           "physical_splits", "tree_is_consistent", "nic_share", "connections_per_host",
           "observable_labels", "HOST_CONNECTIONS", "describe_connections"]

HOST_CONNECTIONS = 8
"""Connections sharing a host's NIC in a broadcast: libtorrent's ``unchoke_slots_limit``.

libtorrent unchokes at most 8 peers at once, its optimistic unchoke among
them (it reserves ``max(1, slots / 5)`` of the 8 for optimistic unchokes).
"""


def connections(a: int, b: int) -> float:
    """Eq 5.2: active connections across a link with ``a`` hosts on one side, ``b`` on the other.

    Examples
    --------
    >>> connections(64, 448)    # 64/448 * 512/2
    36.57142857142857
    >>> connections(256, 256)
    256.0
    """
    if a <= 0 or b <= 0:
        return 0.0
    return min(a, b) / max(a, b) * (a + b) / 2.0


def _sides(topology: Topology) -> dict[tuple[str, str], tuple[int, int]]:
    if not topology.is_tree:
        raise TopologyError("the ground-truth model (Eq 5.2) needs a tree of routers; "
                            f"{topology.name!r} has cycles", path=topology.source)
    per_router = {r: 0 for r in topology.routers}
    for c in topology.clusters:
        per_router[c.router] += c.count
    total = sum(per_router.values())
    # hosts below each router of the tree hung from any router: one pass, not one per link
    root = next(iter(topology.graph.nodes))
    parent = dict(nx.bfs_predecessors(topology.graph, root))
    below = dict(per_router)
    for r in reversed(list(nx.bfs_tree(topology.graph, root))):
        if r in parent:
            below[parent[r]] += below[r]
    out = {}
    for link in topology.links:
        side_a = below[link.a] if parent.get(link.a) == link.b else total - below[link.b]
        out[(link.a, link.b)] = (side_a, total - side_a)
    return out


def link_table(topology: Topology) -> pd.DataFrame:
    """Per router link: hosts on each side, connections (Eq 5.2) and bandwidth per connection (Eq 5.3).

    The data of the thesis's Figs 5.16 and 5.18.

    Returns
    -------
    pandas.DataFrame
        Columns ``link`` (``a-b``), ``a``, ``b`` (the routers), ``capacity_bps``
        (the slower direction of a link with one capacity per direction),
        ``hosts_a``, ``hosts_b``,
        ``connections``, ``bw_per_connection_bps``, sorted by the last,
        lowest first.  Links with no host on one side have no connection
        (``inf`` bandwidth per connection).

    Examples
    --------
    >>> from tomography.model.topology import read_topology
    >>> t = link_table(read_topology("N1"))
    >>> row = t.iloc[0]                      # a 100Mbit/s bottleneck, 128 hosts against 384
    >>> row["link"], float(row["connections"]), round(float(row["bw_per_connection_bps"]) / 1e6, 3)
    ('R10-R13', 85.33333333333333, 1.172)
    """
    rows = []
    for (a, b), (na, nb) in _sides(topology).items():
        cap = topology.graph.edges[a, b]["capacity"]
        conn = connections(na, nb)
        rows.append({"link": f"{a}-{b}", "a": a, "b": b, "capacity_bps": cap,
                     "hosts_a": na, "hosts_b": nb,
                     "connections": conn,
                     "bw_per_connection_bps": cap / conn if conn else float("inf")})
    return (pd.DataFrame(rows).sort_values(["bw_per_connection_bps", "link"], kind="stable")
            .reset_index(drop=True))


@dataclass(frozen=True)
class TruthPartition:
    """One ground truth: the partition a threshold on bandwidth per connection gives.

    Attributes
    ----------
    low, high : float
        Every threshold in ``[low, high)`` (bit/s) gives this partition.
    clusters : tuple of tuple of str
        Cluster names of the topology (``HostGroup.name``) grouped together.
    gap : float
        ``high / low``: how clearly the threshold separates link classes.
    acceptable : bool
        Observable, and the gap is at least the ``min_gap`` asked for.
    observable : bool
        ``low`` is below a NIC's share per connection: the partition splits
        no link that gives a connection more than the hosts' NICs can.
    """

    low: float
    high: float
    clusters: tuple[tuple[str, ...], ...]
    gap: float
    acceptable: bool
    observable: bool = True

    def labels(self, topology: Topology) -> dict[str, str]:
        """Host to truth label (the cluster names of its group joined by ``+``)."""
        name = {c: "+".join(group) for group in self.clusters for c in group}
        return {h.name: name[h.cluster] for h in topology.hosts}


def nic_share(topology: Topology, host_connections: int = HOST_CONNECTIONS) -> float:
    """The most a connection gets at a host's NIC: the smallest NIC over its connections (bit/s).

    A host has at most one connection per other host.

    Examples
    --------
    >>> from tomography.model.topology import read_topology
    >>> nic_share(read_topology("N1")) / 1e6              # 1 Gbit/s over 8 connections
    125.0
    >>> nic_share(read_topology("N1"), host_connections=1)  # the thesis's unshared NIC
    1000000000.0
    """
    return (min(min(c.nic_up, c.nic_down) for c in topology.clusters)
            / connections_per_host(topology, host_connections))


def connections_per_host(topology: Topology,
                         host_connections: int = HOST_CONNECTIONS) -> int:
    """The connections that share a host's NIC: ``host_connections``, or fewer other hosts.

    Examples
    --------
    >>> from tomography.model.topology import read_topology
    >>> connections_per_host(read_topology("N1")), connections_per_host(read_topology("tree-5"))
    (8, 4)
    """
    if host_connections < 1:
        raise ParameterError(f"host_connections must be >= 1, got {host_connections}")
    return min(host_connections, max(len(topology.hosts) - 1, 1))


def describe_connections(topology: Topology, host_connections: int = HOST_CONNECTIONS) -> str:
    """``8 connections per host``, or why fewer: a network with fewer other hosts.

    Examples
    --------
    >>> from tomography.model.topology import read_topology
    >>> describe_connections(read_topology("tree-5"))
    '4 connections per host, 8 capped at the 4 other hosts'
    """
    from tomography.model.units import counted

    used = connections_per_host(topology, host_connections)
    return counted(used, "connection") + " per host" + (
        "" if used == host_connections else f", {host_connections} capped at the {used} "
                                            "other hosts")


def threshold_partitions(topology: Topology, *, min_gap: float = 1.5,
                         host_connections: int = HOST_CONNECTIONS) -> list[TruthPartition]:
    """Every partition a threshold on bandwidth per connection can give, coarsest first.

    A connection never runs faster than the hosts' NICs, so bandwidths per
    connection are capped at the smallest NIC capacity, which is also the
    bandwidth inside a cluster: the finest partition (every host group
    alone) holds for thresholds up to it.  Thresholds at or above a NIC's
    share per connection (:func:`nic_share`) give partitions bandwidth alone does not show.

    Parameters
    ----------
    topology : Topology
        A tree of routers.
    min_gap : float, default 1.5
        A partition is acceptable when the bandwidths at the two ends of its
        range of thresholds differ by at least this factor (and it has more
        than one cluster).  The thesis picks its thresholds by eye at such
        gaps (Figs 5.16, 5.18).
    host_connections : int, default 8
        Connections sharing a host's NIC (1: the thesis's unshared NIC).

    Returns
    -------
    list of TruthPartition

    Examples
    --------
    >>> from tomography.model.topology import read_topology
    >>> parts = threshold_partitions(read_topology("N1"))
    >>> [len(p.clusters) for p in parts if p.acceptable]   # the router pairs, or each router
    [4, 8]
    >>> parts = threshold_partitions(read_topology("N2"))   # R1-R2 and R3-R4 are too fast
    >>> [(len(p.clusters), p.observable) for p in parts][-3:]
    [(7, True), (8, False), (9, False)]
    >>> [len(p.clusters) for p in parts if p.acceptable]
    [6, 7]
    """
    if not min_gap >= 1:
        raise ParameterError(f"min_gap is a ratio of bandwidths, at least 1; got {min_gap}")
    table = link_table(topology)
    nic = min(min(c.nic_up, c.nic_down) for c in topology.clusters)
    share = nic_share(topology, host_connections)
    capped = [((a, b), min(bw, nic)) for a, b, bw in
              zip(table["a"], table["b"], table["bw_per_connection_bps"])]
    values = sorted({bw for _, bw in capped if bw < nic})
    lows = [0.0] + values
    highs = values + [nic]
    out: list[TruthPartition] = []
    for low, high in zip(lows, highs):
        g = nx.Graph()
        g.add_nodes_from(topology.routers)
        for ends, bw in capped:
            if bw > low:
                g.add_edge(*ends)
        groups = []
        for comp in nx.connected_components(g):
            names = tuple(c.name for c in topology.clusters if c.router in comp)
            if names:
                groups.append(names)
        key = tuple(sorted(groups))
        if out and out[-1].clusters == key:  # the same partition over a wider range
            low = out.pop().low
        observable = low < share
        gap = high / low if low > 0 else float("inf")
        out.append(TruthPartition(low=low, high=high, clusters=key, gap=gap,
                                  acceptable=bool(observable and len(key) > 1
                                                  and np.isfinite(gap) and gap >= min_gap),
                                  observable=observable))
    return sorted(out, key=lambda p: len(p.clusters))


def observable_labels(topology: Topology, labels: dict[str, str], *,
                      host_connections: int = HOST_CONNECTIONS) -> dict[str, str]:
    """The finest coarsening of a truth that bandwidth alone can reveal, by this model.

    Hosts behind routers joined by a link that gives a connection at least
    a NIC's share (Eq 5.3 against :func:`nic_share`) cannot be told apart
    by bandwidth; labels that such hosts carry are merged (joined by
    ``+``, sorted).  Unchanged when the truth is observable by bandwidth.
    Round trips can still set them apart: on a dataset,
    :func:`cluster.separation.separated_coarsening` judges on the data.

    Parameters
    ----------
    topology : Topology
        A tree of routers holding every host of ``labels``.
    labels : dict of host to label
    host_connections : int, default 8

    Returns
    -------
    dict of host to label

    Examples
    --------
    >>> from tomography.model.topology import read_topology
    >>> n2 = read_topology("N2")
    >>> each = {h.name: h.router for h in n2.hosts}          # every router alone: 9 clusters
    >>> len(set(observable_labels(n2, each).values()))       # R1+R2 and R3+R4 merged
    7
    >>> thesis = {h.name: h.label for h in n2.hosts}        # 7 clusters: R1R2, R3R4, R5 ..
    >>> observable_labels(n2, thesis) == thesis
    True
    >>> seen = observable_labels(n2, thesis, host_connections=9)   # the simulator's 8 + 1
    >>> len(set(seen.values())), seen["R1-00"]
    (6, 'R1-R4/R1R2+R1-R4/R3R4')
    """
    router = {h.name: h.router for h in topology.hosts}
    unknown = [h for h in labels if h not in router]
    if unknown:
        raise TopologyError(f"host {unknown[0]!r} is not in topology {topology.name!r}",
                            path=topology.source)
    share = nic_share(topology, host_connections)
    table = link_table(topology)
    g = nx.Graph()
    g.add_nodes_from(topology.routers)
    g.add_edges_from((a, b) for a, b, bw in zip(table["a"], table["b"],
                                                table["bw_per_connection_bps"]) if bw >= share)
    merged = nx.Graph()                      # labels that share an indistinguishable group
    merged.add_nodes_from(set(labels.values()))
    for comp in nx.connected_components(g):
        inside = sorted({labels[h] for h in labels if router[h] in comp})
        merged.add_edges_from(zip(inside, inside[1:]))
    name = {lab: "+".join(sorted(comp)) for comp in nx.connected_components(merged)
            for lab in comp}
    return {h: name[lab] for h, lab in labels.items()}


def physical_splits(topology: Topology) -> set[frozenset[str]]:
    """The ways the router links of a tree split the hosts in two.

    Each split is given by the side that does not hold the first host (in
    sorted order), so that equal splits compare equal.

    Examples
    --------
    >>> from tomography.model.topology import read_topology
    >>> len(physical_splits(read_topology("tree-5")))
    4
    """
    if not topology.is_tree:
        raise TopologyError("physical splits need a tree of routers", path=topology.source)
    hosts_at: dict[str, list[str]] = {}
    for h in topology.hosts:
        hosts_at.setdefault(h.router, []).append(h.name)
    everyone = sorted(h.name for h in topology.hosts)
    splits = set()
    for link in topology.links:
        g = topology.graph.copy()
        g.remove_edge(link.a, link.b)
        side = {h for r in nx.node_connected_component(g, link.a) for h in hosts_at.get(r, [])}
        if 0 < len(side) < len(everyone):
            splits.add(frozenset(side if everyone[0] not in side else set(everyone) - side))
    return splits


def tree_is_consistent(tree, topology: Topology) -> bool:
    """Whether a tree of clusters agrees with the physical tree.

    True when the tree is connected and every one of its edges splits the
    hosts exactly as some router link does: each edge then maps to a
    physical path between the clusters it joins (docs/method.md).

    Parameters
    ----------
    tree : tomography.model.hierarchy.ClusterTree
    topology : Topology

    Examples
    --------
    >>> from tomography.model.hierarchy import Cluster, ClusterTree, TreeEdge
    >>> from tomography.model.topology import read_topology
    >>> topo = read_topology("tree-5")
    >>> nodes = [Cluster(f"C{i}", 1, (f"h{i}-00",)) for i in range(1, 6)]
    >>> right = [("C1", "C2"), ("C2", "C3"), ("C2", "C4"), ("C4", "C5")]
    >>> tree_is_consistent(ClusterTree(nodes, [TreeEdge(a, b, 1.0) for a, b in right]), topo)
    True
    >>> wrong = [("C1", "C2"), ("C2", "C3"), ("C3", "C4"), ("C4", "C5")]
    >>> tree_is_consistent(ClusterTree(nodes, [TreeEdge(a, b, 1.0) for a, b in wrong]), topo)
    False
    """
    if not tree.is_connected:
        return False
    physical = physical_splits(topology)
    hosts = {c.id: set(c.hosts) for c in tree.clusters}
    everyone = sorted(h for c in tree.clusters for h in c.hosts)
    g = nx.Graph()
    g.add_nodes_from(hosts)
    g.add_edges_from((e.source, e.target) for e in tree.edges)
    for e in tree.edges:
        g.remove_edge(e.source, e.target)
        side = {h for c in nx.node_connected_component(g, e.source) for h in hosts[c]}
        g.add_edge(e.source, e.target)
        key = frozenset(side if everyone[0] not in side else set(everyone) - side)
        if key not in physical:
            return False
    return True
