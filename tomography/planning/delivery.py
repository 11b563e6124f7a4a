"""What a multicast executor runs: streams of bytes over trees of hosts, each at its rate.

A planner's :class:`~tomography.planning.balanced.Plan` is over the nodes of
a :class:`~tomography.planning.network.Network` (hosts, or clusters taken as
one host each).  A :class:`Delivery` is the same multicast over the hosts of
a run: the payload of ``size`` bytes is cut into one :class:`Stream` per
tree, in proportion to the trees' planned rates, and each stream flows from
the root down its tree of hosts, every interior host forwarding as data
arrives.  A cluster-level plan is expanded (:func:`delivery_of_plan`): the
tree links clusters through one *leader* host each (the root in its own
cluster, else the cluster's first host by name), and inside a cluster the
leader passes the stream down a pipelined chain of its members, the order
that gives every member the full rate of a local network.

Two topology-oblivious and topology-aware chains complete the methods
(:func:`chain_delivery`, :func:`cluster_order`): the hosts in the order of
their names (how Kascade broadcasts on Grid'5000), or cluster after cluster,
each next cluster the one the last reaches best.

Rates are in bytes per second; a rate of 0 means "as fast as TCP goes"
(no pacing).

Examples
--------
>>> from tomography.planning import lp_example, plan
>>> net = lp_example()
>>> d = delivery_of_plan(plan(net, "x", "balanced"), net, size=9_000, unit_bytes=1.0)
>>> [(s.offset, s.length, s.rate) for s in d.streams]
[(0, 4000, 4.0), (4000, 1000, 1.0), (5000, 4000, 4.0)]
>>> d.streams[0].edges()
[('x', 'y'), ('y', 'z')]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from tomography.model.errors import ParameterError, TomographyError
from tomography.planning.balanced import Plan
from tomography.planning.network import Network
from tomography.planning.trees import Tree
from tomography.model.units import listed

__all__ = ["Stream", "Delivery", "SHAPED_METHODS", "UNPACED_TREES", "CHAIN_SEARCH", "unpaced_note",
           "split_payload", "parallel_hosts",
           "delivery_of_plan",
           "chain_delivery", "cluster_order", "chain_prediction"]

CHAIN_SEARCH = 100_000
"""Steps :func:`cluster_order` takes at most looking for a chain without a dead link."""

SHAPED_METHODS = ("balanced", "exact")
"""The planners whose trees' rates are shaped by the senders (den Burger et al. 2005) when
they send over several trees; the others send each tree as fast as TCP goes, as the papers
ran them."""

UNPACED_TREES = ("fpfr",)
"""The planners that send several trees as fast as TCP goes, the payload's chunks dealt to the
trees as their receivers confirm them (:class:`measure.multicaster.Dealer`), as FPFR
multicasts "in fixed-size chunks using all trees found": their prediction is the sum of the
trees' fair shares of TCP, and a tree that gets less than its share carries less."""


def unpaced_note(method: str, trees: int) -> str:
    """What the prediction of a plan of several unpaced trees assumes, for a table's notes;
    "" for any other plan.

    Examples
    --------
    >>> unpaced_note("fpfr", 3).split(";")[0]
    'fpfr: 3 trees sent unpaced, the chunks dealt to them as their receivers confirm them'
    >>> unpaced_note("balanced", 3), unpaced_note("fpfr", 1)
    ('', '')
    """
    if method not in UNPACED_TREES or trees < 2:
        return ""
    return (f"{method}: {trees} trees sent unpaced, the chunks dealt to them as their "
            "receivers confirm them; its prediction is the sum of the trees' fair shares of "
            "TCP, and a tree that gets less carries less")


@dataclass(frozen=True)
class Stream:
    """One tree's share of the payload.

    Attributes
    ----------
    index : int
        The stream's number in its delivery.
    offset, length : int
        The bytes of the payload it carries.
    rate : float
        Bytes/s every sender of the stream paces each child's connection to;
        0 for no pacing.
    parent : dict
        Host -> the host it receives the stream from (every host but the root).
    """

    index: int
    offset: int
    length: int
    rate: float
    parent: Mapping[str, str]

    def children(self, host: str) -> list[str]:
        """The hosts ``host`` forwards the stream to, by name.

        Examples
        --------
        >>> Stream(0, 0, 10, 0.0, {"b": "a", "c": "a"}).children("a")
        ['b', 'c']
        """
        return sorted(h for h, p in self.parent.items() if p == host)

    def edges(self) -> list[tuple[str, str]]:
        """``(sender, receiver)`` pairs, breadth first from the root, children by name.

        Examples
        --------
        >>> Stream(0, 0, 10, 0.0, {"c": "b", "b": "a"}).edges()
        [('a', 'b'), ('b', 'c')]
        """
        senders = set(self.parent.values()) - set(self.parent)
        out: list[tuple[str, str]] = []
        level = sorted(senders)
        while level:
            nxt = []
            for host in level:
                for child in self.children(host):
                    out.append((host, child))
                    nxt.append(child)
            level = nxt
        return out


@dataclass(frozen=True)
class Delivery:
    """A multicast of ``size`` bytes from ``root`` to every other host, as streams over trees.

    Attributes
    ----------
    method : str
    root : str
    hosts : list of str
        Every host of the multicast, the root included.
    size : int
        Payload bytes.
    streams : list of Stream
    predicted : float
        Throughput the plan predicts, bytes/s (NaN when there is no prediction).
    notes : list of str
        How the plan was turned into streams (leaders, expansions).
    basis : str
        What the prediction rests on: ``"measured"`` figures, the
        ``"topology"``'s model values, or a ``"lower bound"`` (rates the
        broadcasts reached); ``""`` without a prediction.
    """

    method: str
    root: str
    hosts: list[str]
    size: int
    streams: list[Stream]
    predicted: float = float("nan")
    notes: list[str] = field(default_factory=list)
    basis: str = ""

    def __post_init__(self) -> None:
        if self.root not in self.hosts:
            raise TomographyError(f"the root {self.root!r} is not a host of the multicast")
        if sum(s.length for s in self.streams) != self.size:
            raise TomographyError(f"the streams carry {sum(s.length for s in self.streams)} "
                                  f"bytes, not the payload's {self.size}")
        receivers = set(self.hosts) - {self.root}
        for s in self.streams:
            if set(s.parent) != receivers:
                missing = sorted(receivers - set(s.parent))
                extra = sorted(set(s.parent) - receivers)
                raise TomographyError(
                    f"stream {s.index} of {self.method} does not reach every host once"
                    + (f": misses {listed(missing)}" if missing else "")
                    + (f": names hosts not in the run: {listed(extra)}" if extra else ""))
            unknown = sorted(set(s.parent.values()) - set(self.hosts))
            if unknown:
                raise TomographyError(f"stream {s.index} of {self.method} sends from hosts not "
                                      f"in the run: {listed(unknown)}")
            Tree.from_edges(len(self.hosts), self.hosts.index(self.root),
                            [(self.hosts.index(p), self.hosts.index(h))
                             for h, p in s.parent.items()])   # a tree, or a clear error

    def to_meta(self) -> dict:
        """What ``meta.json`` records of it: rates, byte ranges, edges.

        Examples
        --------
        >>> d = chain_delivery(["a", "b", "c"], "b", 100)
        >>> d.to_meta()["streams"]
        [{'rate': 0.0, 'offset': 0, 'length': 100, 'edges': [['b', 'c'], ['c', 'a']]}]
        """
        return {"method": self.method, "root": self.root, "size": self.size,
                "predicted_Bps": None if self.predicted != self.predicted else self.predicted,
                "basis": self.basis, "notes": list(self.notes),
                "streams": [{"rate": s.rate, "offset": s.offset, "length": s.length,
                             "edges": [list(e) for e in s.edges()]} for s in self.streams]}


def split_payload(size: int, rates: Sequence[float]) -> list[tuple[int, int]]:
    """``(offset, length)`` of each tree's share of ``size`` bytes, in proportion to ``rates``.

    Whole bytes; the last share takes what rounding leaves.  A tree whose
    rate is 0 gets nothing; all rates 0 (or one tree) gives everything to
    the first.

    Examples
    --------
    >>> split_payload(10, [4.0, 1.0, 4.0])
    [(0, 4), (4, 1), (5, 5)]
    >>> split_payload(10, [2.0])
    [(0, 10)]
    """
    if size < 1:
        raise ParameterError(f"a multicast needs at least 1 byte, got {size}")
    weights = np.asarray(rates, dtype=float)
    if weights.size == 0 or (weights < 0).any() or not np.isfinite(weights).all():
        raise ParameterError(f"rates must be finite and >= 0, got {list(rates)}")
    if weights.sum() <= 0:
        weights = np.eye(1, weights.size).ravel()
    ends = np.floor(np.cumsum(weights) / weights.sum() * size).astype(np.int64)
    ends[-1] = size
    starts = np.concatenate([[0], ends[:-1]])
    return [(int(a), int(b - a)) for a, b in zip(starts, ends)]


def _members(network: Network, cluster_of: Mapping[str, str] | None, hosts: Sequence[str]
             ) -> dict[str, list[str]]:
    """The hosts of each node of ``network`` (a node is its own host without ``cluster_of``)."""
    members: dict[str, list[str]] = {node: [] for node in network.nodes}
    for host in sorted(hosts):
        node = cluster_of[host] if cluster_of is not None else host
        if node not in members:
            raise TomographyError(f"host {host!r} is in {node!r}, which the plan's network "
                                  f"does not have ({listed(network.nodes)})")
        members[node].append(host)
    empty = [node for node, hs in members.items() if not hs]
    if empty:
        raise TomographyError(f"the plan's network has nodes with no host in the run: "
                              f"{listed(empty)}")
    return members


def parallel_hosts(plan: Plan, network: Network, members: Mapping[str, Sequence[str]],
                   host_capacity: Mapping[str, float]) -> list[int]:
    """How many hosts of each cluster each tree needs side by side: its rate over their capacity.

    Den Burger's clusters (2009, section 2.5.2) reach the wide area through
    each host's own interface: a tree faster than one host's capacity
    needs several hosts side by side in every cluster it crosses.  For tree
    ``k`` this is the ceiling of its rate over the smallest capacity of the
    hosts of the clusters it links; 1 when a capacity is unknown.
    :func:`delivery_of_plan` gives a tree no more hosts than its clusters
    have, and says so.

    Parameters
    ----------
    plan : Plan
    network : Network
        The clusters, in the unit of ``host_capacity``.
    members : mapping
        Cluster -> its hosts.
    host_capacity : mapping
        Host -> the smaller of its capacities in and out, in the network's unit.

    Returns
    -------
    list of int
        One count per tree of ``plan``.

    Examples
    --------
    >>> from tomography.planning import Network, plan
    >>> net = Network(["A", "B"], [48, 48], [48, 48], [[0, 48], [48, 0]])
    >>> members = {"A": [f"a{i}" for i in range(8)], "B": [f"b{i}" for i in range(8)]}
    >>> parallel_hosts(plan(net, "A", "balanced"), net, members,
    ...                dict.fromkeys(members["A"] + members["B"], 8.0))
    [6]
    """
    counts = []
    for tree, rate in zip(plan.trees, plan.rates):
        crossed = {network.nodes[x] for edge in tree.edges for x in edge}
        capacity = min((host_capacity.get(h, float("nan")) for c in crossed for h in members[c]),
                       default=float("nan"))
        if not capacity > 0 or not np.isfinite(capacity):
            counts.append(1)
            continue
        counts.append(int(max(1, np.ceil(float(rate) / capacity - 1e-9))))
    return counts


def delivery_of_plan(plan: Plan, network: Network, *, size: int, unit_bytes: float,
                     cluster_of: Mapping[str, str] | None = None, root_host: str | None = None,
                     hosts: Sequence[str] | None = None, pace: bool | None = None,
                     parallel: int | Sequence[int] = 1) -> Delivery:
    """The streams that carry out ``plan`` over the hosts of a run.

    Parameters
    ----------
    plan : Plan
        Over the nodes of ``network``.
    network : Network
    size : int
        Payload bytes, split over the plan's trees in proportion to their rates.
    unit_bytes : float
        Bytes/s of one unit of the network's rates (``parse_bandwidth("1" +
        network.unit) / 8``).
    cluster_of : mapping, optional
        Host -> node of ``network``, when the nodes are clusters; without it
        the nodes are the hosts.
    root_host : str, optional
        The sending host (default the plan's root, which must then be a host).
    hosts : sequence of str, optional
        The run's hosts (default the keys of ``cluster_of``, or the nodes).
    pace : bool, optional
        Pace each stream at its rate; default for the shaped methods
        (:data:`SHAPED_METHODS`) when they send over two trees or more (a
        lone tree is sent as fast as TCP goes: there is no other tree to
        protect, and a rate from lower-bound figures would only slow it).
    parallel : int or sequence of int, default 1
        Hosts of each cluster that carry a tree side by side (one count, or
        one per tree, e.g. :func:`parallel_hosts`): tree ``k`` becomes that
        many streams, each with its own share of the tree's bytes and rate,
        each reaching every cluster through a host of its own (the root's
        own cluster: the root, then its other hosts, the root passing them
        their streams), the trees taking the hosts in turn so that no host
        carries two trees while another carries none; at most the size of
        the smallest cluster the tree crosses (a note says so).

    Returns
    -------
    Delivery

    Examples
    --------
    >>> from tomography.planning import Network, plan
    >>> net = Network(["A", "B"], [10, 10], [10, 10], [[0, 5], [5, 0]])
    >>> where = {"a1": "A", "a2": "A", "b1": "B", "b2": "B"}
    >>> d = delivery_of_plan(plan(net, "A", "flat"), net, size=100, unit_bytes=2**20,
    ...                      cluster_of=where, root_host="a2")
    >>> d.streams[0].edges(), d.notes[0]
    ([('a2', 'a1'), ('a2', 'b1'), ('b1', 'b2')], 'leaders: A a2, B b1; a chain inside each cluster')
    >>> d = delivery_of_plan(plan(net, "A", "flat"), net, size=100, unit_bytes=2**20,
    ...                      cluster_of=where, root_host="a2", parallel=2)
    >>> [s.edges() for s in d.streams]
    [[('a2', 'a1'), ('a2', 'b1'), ('b1', 'b2')], [('a2', 'a1'), ('a1', 'b2'), ('b2', 'b1')]]
    >>> delivery_of_plan(plan(net, "A", "flat"), net, size=100, unit_bytes=2**20,
    ...                  cluster_of=where, root_host="a2", parallel=5).notes[1]
    'tree 0 needs 5 hosts side by side, its smallest cluster has 2: the streams use 2'
    """
    hosts = sorted(hosts if hosts is not None else
                   (cluster_of if cluster_of is not None else network.nodes))
    root_host = root_host if root_host is not None else plan.root
    if root_host not in hosts:
        raise TomographyError(f"the root {root_host!r} is not a host of the run "
                              f"({listed(hosts)})")
    members = _members(network, cluster_of, hosts)
    root_node = cluster_of[root_host] if cluster_of is not None else root_host
    if root_node != plan.root:
        raise TomographyError(f"the plan's root is {plan.root!r}, but host {root_host!r} is in "
                              f"{root_node!r}")
    counts = [int(parallel)] * len(plan.trees) if np.ndim(parallel) == 0 else list(parallel)
    if len(counts) != len(plan.trees) or min(counts, default=1) < 1:
        raise ParameterError(f"parallel must be >= 1, one count or one per tree; got {parallel}")
    notes = []
    for t, tree in enumerate(plan.trees):
        crossed = {network.nodes[x] for edge in tree.edges for x in edge}
        most = min((len(members[c]) for c in crossed), default=1)
        if counts[t] > most:
            notes.append(f"tree {t} needs {counts[t]} hosts side by side, its smallest cluster "
                         f"has {most}: the streams use {most}")
            counts[t] = most
    # each cluster's hosts in the order they lead: the root first in its own cluster
    ranked = {node: ([root_host] + [h for h in hs if h != root_host] if node == root_node
                     else list(hs)) for node, hs in members.items()}
    # pacing keeps trees from taking what another was promised; a lone tree has no other
    shaped = (plan.method in SHAPED_METHODS and len(plan.trees) > 1) if pace is None else pace
    rates, shares = [], []
    for rate, k in zip(plan.rates, counts):
        rates += [float(rate) / k] * k
    turn = 0   # the trees take the hosts in turn
    for tree, k in zip(plan.trees, counts):
        shares += [(tree, turn + j) for j in range(k)]
        turn += k
    streams = []
    for index, ((offset, length), (tree, j), rate) in enumerate(
            zip(split_payload(size, rates), shares, rates)):
        leader = {node: hs[j % len(hs)] for node, hs in ranked.items()}
        parent: dict[str, str] = {}
        if leader[root_node] != root_host:
            parent[leader[root_node]] = root_host
        for u, v in tree.edges:
            parent[leader[network.nodes[v]]] = leader[network.nodes[u]]
        for node, hs in ranked.items():
            rest = [h for h in hs if h != leader[node] and h not in parent and h != root_host]
            chain = [leader[node]] + rest
            parent.update(zip(chain[1:], chain[:-1]))
        streams.append(Stream(index, offset, length, rate * unit_bytes if shaped else 0.0,
                              parent))
    if cluster_of is not None and any(len(hs) > 1 or hs[0] != node
                                      for node, hs in members.items()):
        first = {node: hs[0] for node, hs in ranked.items()}
        notes.insert(0, "leaders: " + ", ".join(f"{node} {first[node]}" for node in members)
                     + "; a chain inside each cluster")
    if max(counts, default=1) > 1:
        notes.append("hosts side by side per cluster, tree by tree: "
                     + ", ".join(map(str, counts)))
    return Delivery(plan.method, root_host, hosts, size, streams,
                    float(plan.throughput) * unit_bytes, notes)


def cluster_order(network: Network, root: str) -> list[str]:
    """The clusters in the order of a greedy chain from ``root``: the strongest link next.

    From each cluster the chain goes on to the cluster it reaches with the
    highest achievable bandwidth among those not yet visited, so a chain in
    this order crosses every cluster boundary once, over strong links.  It
    goes back on a choice that leaves it stuck (every cluster still to visit
    behind a dead link), and crosses a dead link only where no order avoids
    one (or none was found in :data:`CHAIN_SEARCH` steps).

    Examples
    --------
    >>> from tomography.planning import Network
    >>> net = Network(["a", "b", "c"], [9, 9, 9], [9, 9, 9],
    ...               [[0, 1, 5], [1, 0, 2], [5, 2, 0]])
    >>> cluster_order(net, "a")
    ['a', 'c', 'b']

    ``c`` is reached best from ``a``, but then ``b`` only over a dead link:

    >>> net = Network(["a", "b", "c"], [9, 9, 9], [9, 9, 9],
    ...               [[0, 1, 5], [1, 0, 2], [5, 0, 0]])
    >>> cluster_order(net, "a")
    ['a', 'b', 'c']
    """
    bandwidth = np.where(np.isnan(network.bandwidth), -1.0, network.bandwidth)
    live = bandwidth != 0

    def ranked(at: int, left: set[int]) -> list[int]:
        return sorted(sorted(left), key=lambda v: -bandwidth[at, v])

    start = network.index(root)
    order, steps = [start], 0
    tried = [ranked(start, set(range(network.size)) - {start})]
    while len(order) < network.size and steps < CHAIN_SEARCH:
        steps += 1
        options = [v for v in tried[-1] if live[order[-1], v]]
        if not options:     # stuck: go back and take the next choice before
            tried.pop()
            if not tried:
                break
            order.pop()
            continue
        nxt = options[0]
        tried[-1].remove(nxt)
        order.append(nxt)
        tried.append(ranked(nxt, set(range(network.size)) - set(order)))
    if len(order) < network.size:   # no order without a dead link: the greedy one
        order = [start]
        left = set(range(network.size)) - {start}
        while left:
            order.append(ranked(order[-1], left)[0])
            left.discard(order[-1])
    return [network.nodes[i] for i in order]


def chain_delivery(order: Sequence[str], root: str, size: int, *, method: str = "chain-hosts",
                   predicted: float = float("nan")) -> Delivery:
    """A pipelined chain through ``order``, from ``root`` (the order rotated to start there).

    Examples
    --------
    >>> chain_delivery(["a", "b", "c", "d"], "c", 10).streams[0].edges()
    [('c', 'd'), ('d', 'a'), ('a', 'b')]
    """
    order = list(order)
    if root not in order:
        raise TomographyError(f"the root {root!r} is not a host of the run ({listed(order)})")
    at = order.index(root)
    chain = order[at:] + order[:at]
    return Delivery(method, root, sorted(order), size,
                    [Stream(0, 0, size, 0.0, dict(zip(chain[1:], chain[:-1])))], predicted)


def chain_prediction(network: Network, order: Sequence[str], cluster_of: Mapping[str, str]
                     ) -> float:
    """The throughput a pipelined chain through ``order`` gets in the planners' model.

    Every hop between two nodes of ``network`` (clusters, hosts) takes the
    link's achievable bandwidth and the two nodes' local capacities, each
    shared fairly among the hops that use it; hops inside a node are taken
    as free (a cluster's local network).  In the network's unit; NaN when
    the chain never leaves one node.  A link that several hops cross
    (:attr:`Network.shared`) is shared fairly among them too.

    Examples
    --------
    >>> from tomography.planning import Network
    >>> net = Network(["A", "B"], [10, 10], [10, 10], [[0, 6], [6, 0]])
    >>> where = {"a1": "A", "a2": "A", "b1": "B", "b2": "B"}
    >>> chain_prediction(net, ["a1", "a2", "b1", "b2"], where)   # one crossing
    6.0
    >>> chain_prediction(net, ["a1", "b1", "a2", "b2"], where)   # three, two A->B share a link
    3.0
    """
    hops = [(cluster_of[u], cluster_of[v]) for u, v in zip(order[:-1], order[1:])
            if cluster_of[u] != cluster_of[v]]
    if not hops:
        return float("nan")   # all inside one node: the model says nothing
    best = float("inf")
    for (a, b) in set(hops):
        share = network.bandwidth[network.index(a), network.index(b)] / hops.count((a, b))
        best = min(best, share)
    for node in {a for a, _ in hops}:
        best = min(best, network.out_capacity[network.index(node)]
                   / sum(1 for a, _ in hops if a == node))
    for node in {b for _, b in hops}:
        best = min(best, network.in_capacity[network.index(node)]
                   / sum(1 for _, b in hops if b == node))
    for link in network.shared:
        pairs = set(link.pairs)
        crossing = sum(1 for hop in hops if hop in pairs)
        if crossing:
            best = min(best, link.capacity / crossing)
    return float(best)
