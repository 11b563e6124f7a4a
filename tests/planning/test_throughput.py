"""Resources of a set of trees and the throughput they get together.

den Burger et al. 2005, section 3.
"""

from __future__ import annotations

import numpy as np
import pytest

from tomography.model.errors import TomographyError
from tomography.planning import (Network, Tree, arborescences, four_host_example, fpfr_trees,
                                 gridlab8, lp_example, predict, resources)
from tests.planning.brute import random_network, single_tree_rates


def test_resources_lp_example_is_the_lp_of_002_fig3() -> None:
    net = lp_example()
    trees, _ = fpfr_trees(net, "x")
    res = resources(net, trees)
    table = {name: (row.tolist(), cap) for name, row, cap in
             zip(res.names, res.usage.toarray(), res.capacity.tolist())}
    assert table == {
        "out x": ([1, 2, 1], 10), "out y": ([1, 0, 0], 10), "out z": ([0, 0, 1], 10),
        "in y": ([1, 1, 1], 10), "in z": ([1, 1, 1], 10),
        "x -> y": ([1, 1, 0], 10), "x -> z": ([0, 1, 1], 8),
        "y -> z": ([1, 0, 0], 4), "z -> y": ([0, 0, 1], 4)}


def test_resources_from_parent_rows_equal_from_trees() -> None:
    net = gridlab8()
    trees, _ = fpfr_trees(net, "n0")
    by_tree = resources(net, trees)
    by_rows = resources(net, np.array([t.parent for t in trees]))
    assert by_tree.names == by_rows.names
    assert (by_tree.usage != by_rows.usage).nnz == 0
    assert by_tree.capacity.tolist() == by_rows.capacity.tolist()


def test_resources_of_one_tree_of_gridlab() -> None:
    net = gridlab8()
    i = net.index
    tree = Tree.from_edges(8, i("n0"), [(i("n0"), i("fs0")), (i("fs0"), i("cluster3")),
                                        (i("fs0"), i("helix")), (i("fs0"), i("eltoro")),
                                        (i("fs0"), i("ia64")), (i("helix"), i("mike4")),
                                        (i("fs0"), i("pegasos"))])
    res = resources(net, [tree])
    usage = dict(zip(res.names, res.usage.toarray()[:, 0].tolist()))
    assert usage["out n0"] == 1 and usage["out fs0"] == 5 and usage["out helix"] == 1
    assert "out mike4" not in usage and "in n0" not in usage
    assert sum(1 for name in usage if name.startswith("in ")) == 7
    assert sum(1 for name in usage if "->" in name) == 7
    assert dict(zip(res.names, res.capacity.tolist()))["helix -> mike4"] == 4.76


def test_resources_of_the_wrong_size() -> None:
    with pytest.raises(TomographyError, match="trees over 2 nodes for a network of 3"):
        resources(lp_example(), np.array([[-1, 0]]))


def test_fpfr_trees_share_the_root_lp_example() -> None:
    """Four flows on the root's 10, 2.5 per tree, 7.5 instead of 12 (den Burger et al. 2005, 3b)."""
    net = lp_example()
    trees, reserved = fpfr_trees(net, "x")
    shared = predict(net, trees, coordinated=False)
    assert shared.rates.tolist() == [2.5, 2.5, 2.5]
    assert shared.throughput == 7.5
    assert reserved.sum() == 12.0


def test_fpfr_trees_share_the_root_four_hosts() -> None:
    """Six flows on the root's 10, 10/6 per tree, about 6.7 instead of 20 (den Burger 2009)."""
    net = four_host_example()
    trees, reserved = fpfr_trees(net, "A")
    shared = predict(net, trees, coordinated=False)
    np.testing.assert_allclose(shared.rates, [10 / 6] * 4)
    assert shared.throughput == pytest.approx(20 / 3)
    assert round(shared.throughput, 1) == 6.7
    assert reserved.sum() == 20.0


def test_coordinated_rates_are_checked() -> None:
    net = lp_example()
    trees, reserved = fpfr_trees(net, "x")
    assert predict(net, trees, [4, 1, 4], coordinated=True).throughput == 9.0
    assert predict(net, trees, np.array([4.0, 1.0, 4.0]), coordinated=True).rates.tolist() == \
        [4.0, 1.0, 4.0]
    with pytest.raises(TomographyError, match="the rates need 18 of out x, which has 10"):
        predict(net, trees, reserved, coordinated=True)
    with pytest.raises(TomographyError, match="the rates need 4.5 of y -> z, which has 4"):
        predict(net, trees, [4.5, 0, 0], coordinated=True)
    with pytest.raises(TomographyError, match="2 rates for 3 trees"):
        predict(net, trees, [1, 1], coordinated=True)
    with pytest.raises(TomographyError, match="finite and non-negative"):
        predict(net, trees, [1, -1, 1], coordinated=True)
    with pytest.raises(TomographyError, match="finite and non-negative"):
        predict(net, trees, [1, np.nan, 1], coordinated=True)
    with pytest.raises(TomographyError, match="coordinated trees need their rates"):
        predict(net, trees, coordinated=True)
    with pytest.raises(TomographyError, match="give rates only with coordinated=True"):
        predict(net, trees, [1, 1, 1], coordinated=False)


def test_one_tree_gets_its_bottleneck() -> None:
    """Max-min sharing of one tree is the bottleneck formula, on random trees."""
    for seed in range(20):
        rng = np.random.default_rng(300 + seed)
        net = random_network(rng, int(rng.integers(3, 7)))
        every = arborescences(net, "h0")
        for row in every[rng.choice(len(every), size=min(5, len(every)), replace=False)]:
            tree = Tree(0, tuple(row))
            alone = predict(net, [tree], coordinated=False)
            expected = single_tree_rates(net, row[None, :])[0]
            assert alone.throughput == pytest.approx(expected, rel=1e-12), seed
            assert alone.rates.tolist() == [alone.throughput]


def test_bottleneck_formula_by_hand() -> None:
    net = Network.from_arrays([[0, 9, 9, 9], [9, 0, 2.5, 9], [9, 9, 0, 9], [9, 9, 9, 0]],
                              out_capacity=[6, 4, 9, 9], in_capacity=[9, 9, 9, 3], unit="")
    # root 0 with children 1 and 3 (6/2 = 3), node 1 forwards to 2 over a 2.5 link
    tree = Tree.from_edges(4, 0, [(0, 1), (0, 3), (1, 2)])
    assert predict(net, [tree], coordinated=False).throughput == 2.5
    # flat: 6/3 = 2 at the root
    assert predict(net, [Tree(0, (-1, 0, 0, 0))], coordinated=False).throughput == 2.0
    # chain 0 -> 3 -> 2 -> 1: in capacity of 3 is 3
    chain = Tree.from_edges(4, 0, [(0, 3), (3, 2), (2, 1)])
    assert predict(net, [chain], coordinated=False).throughput == 3.0


def assert_max_min_fair(net: Network, trees: list[Tree]) -> None:
    """Every tree has a bottleneck: a full resource where no other tree gets more."""
    shared = predict(net, trees, coordinated=False)
    res = resources(net, trees)
    usage = res.usage.toarray()
    load = usage @ shared.rates
    assert (load <= res.capacity * (1 + 1e-9) + 1e-12).all()
    full = load >= res.capacity * (1 - 1e-9) - 1e-12
    for j in range(len(trees)):
        mine = full & (usage[:, j] > 0)
        assert mine.any(), f"tree {j} could go faster"
        assert any(shared.rates[j] >= shared.rates[usage[i] > 0].max() * (1 - 1e-9)
                   for i in np.flatnonzero(mine)), f"tree {j} is not max-min fair"
    assert shared.throughput == pytest.approx(shared.rates.sum())


@pytest.mark.parametrize("root", gridlab8().nodes)
def test_max_min_sharing_of_fpfr_trees_gridlab(root: str) -> None:
    net = gridlab8()
    assert_max_min_fair(net, fpfr_trees(net, root)[0])


def test_max_min_sharing_random() -> None:
    for seed in range(15):
        rng = np.random.default_rng(400 + seed)
        net = random_network(rng, int(rng.integers(3, 7)))
        every = arborescences(net, "h0")
        pick = rng.choice(len(every), size=min(4, len(every)), replace=False)
        assert_max_min_fair(net, [Tree(0, tuple(every[i])) for i in pick])
        assert_max_min_fair(net, fpfr_trees(net, "h0")[0])


def test_max_min_by_hand() -> None:
    """Two trees on the root's 9: one with two flows there, one with one.

    Both grow together to 3 (3 flows x 3 = 9): the root is full and both stop.
    A third tree crossing a 1-link stops at 1 first; the other two then share 8.
    """
    net = Network.from_arrays([[0, 9, 9], [9, 0, 1], [9, 9, 0]], capacity=[9, 9, 9], unit="")
    flat, chain = Tree(0, (-1, 0, 0)), Tree(0, (-1, 0, 1))
    assert predict(net, [flat, Tree(0, (-1, 2, 0))], coordinated=False).rates.tolist() == \
        [3.0, 3.0]
    rates = predict(net, [flat, Tree(0, (-1, 2, 0)), chain], coordinated=False).rates
    np.testing.assert_allclose(rates, [8 / 3, 8 / 3, 1.0])
