"""Every multicast method as a :class:`~tomography.planning.delivery.Delivery` over a run's hosts.

What ``tomography multicast`` runs: each planner's plan over a Gauge model
(clusters or hosts), expanded to the run's hosts; the topology-oblivious
chain of hosts in name order; and the chain of clusters, each next cluster
the one the last reaches best.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from tomography.model.errors import ParameterError, TomographyError
from tomography.export.gauge import gauge_to_network
from tomography.planning import MethodUnavailable, plan
from tomography.planning.delivery import (Delivery, chain_delivery, chain_prediction,
                                          cluster_order, delivery_of_plan, parallel_hosts)
from tomography.model.units import listed, parse_bandwidth

__all__ = ["deliveries", "CHAINS"]

CHAINS = ("chain-hosts", "chain-clusters")
"""The chains: of hosts in name order (topology-oblivious), of clusters (topology-aware)."""


def deliveries(methods: list[str], hosts: list[str], root: str, size: int, model: Any, *,
               level: str = "clusters", max_nodes: int = 7,
               parallel: int | str = "auto",
               left_out: dict[str, str] | None = None) -> list[Delivery]:
    """The :class:`~tomography.planning.delivery.Delivery` of each static method.

    Parameters
    ----------
    methods : list of str
        Planners, ``chain-hosts``, ``chain-clusters``.
    hosts : list of str
        The run's hosts.
    root : str
    size : int
        Payload bytes.
    model : BandwidthModel or None
        The plan source (a Gauge file's model); None for ``chain-hosts`` alone.
    level : {"clusters", "hosts"}
    max_nodes : int
        For ``exact``.
    parallel : int or "auto"
        Hosts per cluster that carry a tree side by side
        (:func:`~tomography.planning.delivery.parallel_hosts` for ``"auto"``).
    left_out : dict, optional
        Gets each planner that cannot plan here, and why.

    Returns
    -------
    list of Delivery
        A planner that cannot plan on this network (flat over a dead link,
        exact above ``max_nodes``), or a chain that would cross a dead link,
        is left out (and put in ``left_out``).
        Each prediction says what it rests on (``basis``: the model's).

    Raises
    ------
    TomographyError
        The plan's hosts are not the run's, the root is not one of them, a
        planner is asked for over one cluster, or no method can multicast.

    Examples
    --------
    >>> d, = deliveries(["chain-hosts"], ["h00", "h01", "h02"], "h01", 2**20, None)
    >>> d.method, d.streams[0].edges()
    ('chain-hosts', [('h01', 'h02'), ('h02', 'h00')])
    """
    out = []
    net = cluster_of = None
    if model is not None:
        planned = sorted(model.hosts)
        if planned != sorted(hosts):
            extra = sorted(set(planned) - set(hosts))
            missing = sorted(set(hosts) - set(planned))
            raise TomographyError(
                "the plan's hosts are not the run's: "
                + "; ".join(x for x in (f"not in the run: {listed(extra)}" if extra else "",
                                        f"not in the plan: {listed(missing)}" if missing else "")
                            if x))
        net = gauge_to_network(model, level, unit="MiB/s")
        cluster_of = dict(model.cluster_of) if level == "clusters" else {h: h for h in hosts}
        planners = [m for m in methods if m not in CHAINS]
        if net.size < 2 and planners:
            raise TomographyError(f"the plan has one {level[:-1]}: there is nothing to plan "
                                  f"{'between clusters' if level == 'clusters' else ''} for "
                                  f"{', '.join(planners)}; run chain-hosts or bittorrent")
    if root not in hosts:
        raise ParameterError(f"the root {root!r} is not a host of the run ({listed(hosts, 8)})")
    unit_bytes = parse_bandwidth("1MiB/s") / 8
    node = cluster_of[root] if cluster_of is not None else root
    for method in methods:
        if method in CHAINS:
            if method == "chain-hosts":
                order = _rotated(sorted(hosts), root)
            else:
                order = [h for c in cluster_order(net, node)
                         for h in sorted((x for x in hosts if cluster_of[x] == c),
                                         key=lambda x: (x != root, x))]
            dead = _dead_hop(net, order, cluster_of) if net is not None else None
            if dead is not None:   # it would fail at its first block there
                if left_out is not None:
                    left_out[method] = (f"its chain crosses the dead link {dead[0]} -> {dead[1]}"
                                        + ("; chain-clusters goes round dead links"
                                           if method == "chain-hosts" else
                                           ": every order of the clusters crosses one"))
                continue
            predicted = (chain_prediction(net, order, cluster_of) * unit_bytes
                         if net is not None else float("nan"))
            out.append(chain_delivery(order, root, size, method=method, predicted=predicted))
        else:
            try:
                p = plan(net, node, method, max_nodes=max_nodes)
            except (MethodUnavailable, TomographyError) as exc:   # a dead link, too many nodes
                if left_out is not None:
                    left_out[method] = str(exc)
                continue
            counts = parallel
            if parallel == "auto":
                counts = (parallel_hosts(p, net, _members_of(cluster_of), _host_capacity(model))
                          if level == "clusters" else 1)
            out.append(delivery_of_plan(p, net, size=size, unit_bytes=unit_bytes,
                                        cluster_of=cluster_of, root_host=root, hosts=hosts,
                                        parallel=counts))
    if model is not None:   # what every prediction rests on
        out = [replace(d, basis=model.basis) if d.predicted == d.predicted else d for d in out]
    if not out and methods:
        raise TomographyError(f"no method can multicast from {root!r} over this plan ("
                              + "; ".join(f"{m}: {why}" for m, why in (left_out or {}).items())
                              + ")")
    return out


def _members_of(cluster_of: dict[str, str]) -> dict[str, list[str]]:
    members: dict[str, list[str]] = {}
    for host, cluster in sorted(cluster_of.items()):
        members.setdefault(cluster, []).append(host)
    return members


def _host_capacity(model: Any) -> dict[str, float]:
    """Each host's smaller capacity (in or out) in MiB/s, the unit the plans are made in."""
    unit = parse_bandwidth("1MiB/s")
    return {h: min(float(o), float(i)) / unit
            for h, o, i in zip(model.hosts, model.host_out, model.host_in)}


def _dead_hop(net: Any, order: list[str], cluster_of: dict[str, str]) -> tuple[str, str] | None:
    """The first hop of a chain through ``order`` over a dead link of ``net`` (bandwidth 0),
    as (sender, receiver) hosts; None when every hop is live."""
    for a, b in zip(order, order[1:]):
        x, y = cluster_of[a], cluster_of[b]
        if x != y and net.bandwidth[net.index(x), net.index(y)] == 0:
            return a, b
    return None


def _rotated(order: list[str], root: str) -> list[str]:
    at = order.index(root)
    return order[at:] + order[:at]
