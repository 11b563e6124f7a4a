"""Model figures of a simulated or emulated network, from its topology: :func:`from_topology`."""

from __future__ import annotations

from typing import Iterable, Mapping

import numpy as np

from tomography.export.bandwidth.clusters import indices, known_clusters, pair_medians
from tomography.export.bandwidth.model import BandwidthModel, Source
from tomography.model.topology import Topology
from tomography.planning.network import SharedLink

__all__ = ["from_topology"]


def from_topology(topology: Topology, clusters: Mapping[str, Iterable[str]], *,
                  host_pairs: bool = False) -> BandwidthModel:
    """Model values of a simulated or emulated network, from its topology file.

    Parameters
    ----------
    topology : Topology
    clusters : mapping of str to iterable of str
        Cluster name to hosts of the topology (see
        :func:`~tomography.export.bandwidth.clusters_from`); hosts left out are
        not part of the model.
    host_pairs : bool, default False
        Also fill the host-to-host bandwidth and delay matrices.

    Returns
    -------
    BandwidthModel
        Every figure labelled ``"topology-model"``:

        * host out / in: the NIC's up / down capacity;
        * cluster out (in): the smaller of the sum of its hosts' NIC up
          (down) capacities and the total capacity of the router links by
          which traffic to (from) the model's other hosts leaves (enters)
          the cluster's routers (the routers of its hosts and those on the
          routes between them).  That is the thesis's local capacity of a
          cluster (den Burger et al. 2005, section 3.2): the NICs, or the shared access link,
          whichever is less.  When some other host sits on one of the
          cluster's routers, or there is no other host, only the NICs bound it;
        * pair bandwidth A -> B: the bottleneck of a route from a host of A
          to a host of B (the sender's NIC up, the router links in the
          direction A -> B, the receiver's NIC down), the median over host
          pairs: what one flow gets alone on an idle network; 0 (a dead link) between
          routers the topology lists as unreachable.  Concurrent flows share links (see
          :mod:`tomography.model.ground_truth` for the share during a broadcast);
        * delay A -> B: median over host pairs of the one-way latency (both
          host links and the route);
        * shared links: every router link that the routes of two or more
          cluster pairs cross and that could bind them (its capacity below
          the sum of their pair bandwidths, and not already the local
          capacity of their one source or destination cluster).

    Raises
    ------
    TomographyError
        When a cluster names a host the topology does not have.

    Examples
    --------
    >>> from tomography.model.topology import read_topology
    >>> topo = read_topology("two-sites-demo")
    >>> sites = {g.name: g.host_names for g in topo.clusters}
    >>> m = from_topology(topo, sites)
    >>> (m.cluster_out / 1e6).tolist()                    # the 40 Mbit/s uplinks
    [40.0, 40.0, 40.0, 40.0]
    >>> (m.cluster_bandwidth[0] / 1e6).tolist()           # w1 to w1, w2, e1, e2
    [100.0, 40.0, 10.0, 10.0]
    >>> round(float(m.cluster_delay[0, 2]) * 1e3, 3)       # ms from w1 to e1
    5.3
    >>> [(x.name, x.capacity / 1e6, len(x.pairs)) for x in m.shared_links]  # the WAN, each way
    [('east -> west', 10.0, 4), ('west -> east', 10.0, 4)]
    """
    pool = known_clusters(clusters, topology.host_index, f"topology {topology.name!r}")
    hosts = sorted(h for members in pool.values() for h in members)
    info = [topology.host_index[h] for h in hosts]
    routers = {r: i for i, r in enumerate(topology.routers)}
    bottleneck, latency = _router_matrices(topology)
    where = np.array([routers[h.router] for h in info])
    up = np.array([h.nic_up for h in info])
    down = np.array([h.nic_down for h in info])
    lat = np.array([h.latency for h in info])
    host_bw = np.minimum(np.minimum.outer(up, down), bottleneck[np.ix_(where, where)])
    host_delay = np.add.outer(lat, lat) + latency[np.ix_(where, where)]
    np.fill_diagonal(host_bw, np.nan)
    np.fill_diagonal(host_delay, np.nan)
    groups = indices(hosts, pool)
    outside = [np.setdiff1d(where, where[g]) for g in groups]
    cluster_out = np.array([min(up[g].sum(), _access(topology, where[g], other, out=True))
                            for g, other in zip(groups, outside)])
    cluster_in = np.array([min(down[g].sum(), _access(topology, where[g], other, out=False))
                           for g, other in zip(groups, outside)])
    name = topology.name
    sources = {
        "host_capacity": Source("topology-model", f"NIC capacities of topology {name!r} "
                                "(out = NIC up, in = NIC down)"),
        "cluster_capacity": Source("topology-model", f"topology {name!r}: the smaller of the "
                                   "sum of the hosts' NICs and the capacity of the router links "
                                   "by which traffic leaves (enters) the cluster's routers"),
        "cluster_bandwidth": Source("topology-model", f"topology {name!r}: bottleneck capacity "
                                    "(NICs and router links) of the route, median over host "
                                    "pairs; one flow alone on an idle network"),
        "cluster_delay": Source("topology-model", f"topology {name!r}: one-way latency of the "
                                "route (host links and router links), median over host pairs"),
    }
    if host_pairs:
        sources["host_bandwidth"] = Source("topology-model", f"topology {name!r}: bottleneck "
                                           "capacity of the route; one flow alone on an idle "
                                           "network")
        sources["host_delay"] = Source("topology-model", f"topology {name!r}: one-way latency "
                                       "of the route (host links and router links)")
    sources["shared_links"] = Source("topology-model", f"topology {name!r}: router links the "
                                     "routes of several cluster pairs cross, at their capacity")
    bandwidth = pair_medians(host_bw, groups)
    return BandwidthModel(
        pool, host_out=up, host_in=down, cluster_out=cluster_out, cluster_in=cluster_in,
        cluster_bandwidth=bandwidth, sources=sources,
        host_bandwidth=host_bw if host_pairs else None,
        cluster_delay=pair_medians(host_delay, groups),
        host_delay=host_delay if host_pairs else None,
        shared_links=_shared(topology, list(pool), [where[g] for g in groups], bandwidth,
                             cluster_out, cluster_in))


def _shared(topology: Topology, names: list[str], where: list[np.ndarray],
            bandwidth: np.ndarray, cluster_out: np.ndarray, cluster_in: np.ndarray
            ) -> list[SharedLink]:
    """The router links that several cluster pairs cross and that could bind them."""
    routers = topology.routers
    crossing: dict[tuple[str, str], set[tuple[int, int]]] = {}
    for a, mine in enumerate(where):
        for b, theirs in enumerate(where):
            if a == b:
                continue
            for x in {routers[i] for i in mine}:
                for y in {routers[i] for i in theirs}:
                    for link in (topology.route(x, y) if x != y and topology.reaches(x, y)
                                 else []):
                        crossing.setdefault(link, set()).add((a, b))
    out: dict[frozenset, SharedLink] = {}
    for (u, v), pairs in sorted(crossing.items()):
        capacity = float(topology.link_capacity(u, v))
        if len(pairs) < 2 or capacity >= sum(bandwidth[a, b] for a, b in pairs):
            continue
        sources, targets = {a for a, _ in pairs}, {b for _, b in pairs}
        if (len(sources) == 1 and cluster_out[min(sources)] <= capacity) or \
                (len(targets) == 1 and cluster_in[min(targets)] <= capacity):
            continue   # the cluster's own local capacity says it already
        key = frozenset(pairs)
        if key not in out or capacity < out[key].capacity:
            out[key] = SharedLink(f"{u} -> {v}", capacity,
                                  tuple((names[a], names[b]) for a, b in sorted(pairs)))
    return list(out.values())


def _router_matrices(topology: Topology) -> tuple[np.ndarray, np.ndarray]:
    """Bottleneck capacity and latency of the route between every two routers."""
    r = len(topology.routers)
    bottleneck = np.full((r, r), np.inf)
    latency = np.zeros((r, r))
    edges = topology.graph.edges
    for i, a in enumerate(topology.routers):
        for j, b in enumerate(topology.routers):
            if i != j:
                path = topology.route(a, b)
                bottleneck[i, j] = min(topology.link_capacity(u, v) for u, v in path) \
                    if topology.reaches(a, b) else 0.0
                latency[i, j] = sum(edges[u, v]["latency"] for u, v in path)
    return bottleneck, latency


def _access(topology: Topology, mine: np.ndarray, others: np.ndarray, *, out: bool) -> float:
    """Total capacity of the links by which routes leave (or enter) a cluster's routers.

    ``mine`` and ``others`` are router indices; infinite when some route to
    (from) another host needs no such link, or there is no other host.  Each
    link counts with the capacity of the direction the routes cross it in.
    """
    names = topology.routers
    own = {names[i] for i in mine}
    region = set(own)
    for a in own:
        for b in own:
            region.update(x for link in topology.route(a, b) for x in link)
    links: set[tuple[str, str]] = set()     # (from, to): the direction crossed
    for a in own:
        for b in {names[i] for i in others}:
            if not topology.reaches(a, b):
                continue
            path = topology.route(a, b) if out else topology.route(b, a)[::-1]
            crossing = [(u, v) for u, v in path if (u in region) != (v in region)]
            if not crossing:
                return float("inf")
            links.add(crossing[0])
    if not links:
        return float("inf")
    return float(sum(topology.link_capacity(u, v) for u, v in sorted(links)))
