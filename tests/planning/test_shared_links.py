"""Links that several cluster pairs cross: every planner's prediction stays within them."""

from __future__ import annotations

import numpy as np
import pytest

from tomography.export.bandwidth import from_topology
from tomography.export.gauge import gauge_to_network, read_gauge, write_gauge
from tomography.model.errors import TomographyError
from tomography.model.topology import read_topology
from tomography.planning import METHODS, Network, plan, predict
from tomography.planning.delivery import chain_prediction
from tomography.planning.network import SharedLink
from tomography.planning.trees import Tree


@pytest.fixture(scope="module")
def two_sites():
    topo = read_topology("two-sites-demo")
    return from_topology(topo, {g.name: g.host_names for g in topo.clusters})


@pytest.mark.parametrize("method", METHODS)
def test_no_planner_predicts_more_than_the_link_every_tree_crosses(two_sites, method):
    net = gauge_to_network(two_sites, unit="Mbit/s")
    p = plan(net, "w1", method)
    # every tree reaches e1 and e2 through the one 10 Mbit/s WAN link
    assert p.throughput <= 10 * (1 + 1e-9)
    assert p.throughput > 0


def test_without_the_shared_link_the_model_over_predicts(two_sites):
    net = gauge_to_network(two_sites, unit="Mbit/s")
    alone = Network(net.nodes, net.out_capacity, net.in_capacity, net.bandwidth, unit="Mbit/s")
    assert plan(alone, "w1", "balanced").throughput > 2 * plan(net, "w1", "balanced").throughput


def test_two_trees_across_one_link_share_it():
    net = Network(["w", "e1", "e2"], [100, 100, 100], [100, 100, 100],
                  [[0, 10, 10], [10, 0, 50], [10, 50, 0]], unit="Mbit/s",
                  shared=(SharedLink("w -> e", 10, [("w", "e1"), ("w", "e2")]),))
    trees = [Tree(0, (-1, 0, 1)), Tree(0, (-1, 2, 0))]
    fair = predict(net, trees, coordinated=False)
    assert fair.throughput == pytest.approx(10.0)
    np.testing.assert_allclose(fair.rates, [5.0, 5.0])
    with pytest.raises(TomographyError, match="shared w -> e"):
        predict(net, trees, [8.0, 8.0], coordinated=True)


def test_a_chain_shares_a_link_its_hops_cross_twice():
    net = Network(["w1", "w2", "e1"], [40, 40, 40], [40, 40, 40],
                  [[0, 40, 10], [40, 0, 10], [10, 10, 0]], unit="Mbit/s",
                  shared=(SharedLink("w -> e", 10, [("w1", "e1"), ("w2", "e1")]),
                          SharedLink("e -> w", 10, [("e1", "w1"), ("e1", "w2")])))
    where = {"a": "w1", "b": "e1", "c": "w2", "d": "e1"}
    # a -> b and c -> d both cross west -> east: 5 each
    assert chain_prediction(net, ["a", "b", "c", "d"], where) == pytest.approx(5.0)


def test_shared_links_survive_a_gauge_file(two_sites, tmp_path):
    write_gauge(two_sites, tmp_path / "g.xml")
    again = read_gauge(tmp_path / "g.xml")
    assert [(x.name, x.capacity, set(x.pairs)) for x in again.shared_links] == \
        [(x.name, pytest.approx(x.capacity), set(x.pairs)) for x in two_sites.shared_links]
    assert again.sources["shared_links"].kind == "topology-model"
    assert "<sharedLinks" in (tmp_path / "g.xml").read_text()


def test_host_level_networks_carry_the_links_over_every_host_pair(two_sites):
    model = from_topology(read_topology("two-sites-demo"),
                          {c: hs for c, hs in two_sites.clusters.items()}, host_pairs=True)
    net = gauge_to_network(model, "hosts", unit="Mbit/s")
    link = next(x for x in net.shared if x.name == "west -> east")
    assert len(link.pairs) == 10 * 10


def test_a_shared_link_naming_an_unknown_cluster_is_refused(two_sites):
    from dataclasses import replace

    with pytest.raises(TomographyError, match="names an unknown cluster"):
        replace(two_sites, shared_links=[SharedLink("x", 1e6, [("w1", "nowhere")])])
