"""The chains: cluster after cluster, over live links wherever an order allows."""

from __future__ import annotations

import numpy as np
import pytest

from tomography.planning import Network, gridlab8
from tomography.planning.delivery import chain_prediction, cluster_order


@pytest.mark.parametrize("root", gridlab8().nodes)
def test_a_chain_of_gridlab_crosses_no_dead_link(root: str) -> None:
    net = gridlab8()
    assert (net.bandwidth[~np.eye(net.size, dtype=bool)] == 0).sum() >= 8   # its dead pairs
    order = cluster_order(net, root)
    assert order[0] == root and sorted(order) == sorted(net.nodes)
    hops = [net.bandwidth[net.index(a), net.index(b)] for a, b in zip(order, order[1:])]
    assert min(hops) > 0, list(zip(order, order[1:], hops))
    assert chain_prediction(net, order, {x: x for x in order}) > 0


def test_a_dead_link_is_crossed_only_where_every_order_crosses_one() -> None:
    # b is reached only from a
    net = Network(["a", "b", "c"], [9, 9, 9], [9, 9, 9], [[0, 4, 5], [1, 0, 2], [5, 0, 0]])
    assert cluster_order(net, "a") == ["a", "b", "c"]         # c first would strand b
    assert cluster_order(net, "c") == ["c", "a", "b"]          # live: c -> a -> b
    stuck = Network(["a", "b", "c"], [9, 9, 9], [9, 9, 9], [[0, 0, 5], [0, 0, 0], [5, 0, 0]])
    assert cluster_order(stuck, "a") == ["a", "c", "b"]       # b dead from both: greedy


def test_a_chain_over_a_dead_link_is_left_out_saying_which() -> None:
    from tomography.export.bandwidth import from_topology
    from tomography.model.topology import read_topology
    from tomography.planning.deliveries import deliveries

    topo = read_topology("gridlab-8")
    hosts = sorted(h.name for h in topo.hosts)
    model = from_topology(topo, {h: [h] for h in hosts})
    why: dict[str, str] = {}
    got = deliveries(["chain-hosts", "chain-clusters"], hosts, "cluster3-00", 2**20, model,
                     left_out=why)
    # in name order, n0 sends to pegasos, which its firewall refuses
    assert why == {"chain-hosts": "its chain crosses the dead link n0-00 -> pegasos-00; "
                                  "chain-clusters goes round dead links"}
    assert [d.method for d in got] == ["chain-clusters"] and got[0].predicted > 0
