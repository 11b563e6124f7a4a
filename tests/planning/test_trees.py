"""Multicast trees and the tree builders.

den Burger et al. 2005, sections 2.3 and 3.1; den Burger 2009, section 3.2.3.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest

from tomography.model.errors import TomographyError
from tomography.planning import (MethodUnavailable, Network, Tree, arborescences, flat_tree,
                                 four_host_example, fpfr_trees, gridlab8, lp_example,
                                 max_bottleneck_tree, semi_flat_tree)
from tests.planning.brute import (bottleneck_links, count_arborescences, depths,
                                  random_network, single_tree_rates)

GRIDLAB_ROOTS = gridlab8().nodes


@lru_cache(maxsize=None)
def gridlab_arborescences(root: str) -> np.ndarray:
    return arborescences(gridlab8(), root, max_nodes=8)


def names(net: Network, tree: Tree) -> list[tuple[str, str]]:
    return tree.edge_names(net.nodes)


def assert_spanning_over_live(net: Network, tree: Tree, root: str) -> None:
    assert tree.size == net.size and tree.root == net.index(root)
    assert tree.parent[tree.root] == -1
    assert len(tree.edges) == net.size - 1
    assert sorted(v for _, v in tree.edges) == [v for v in range(net.size) if v != tree.root]
    for p, v in tree.edges:
        assert net.bandwidth[p, v] > 0, f"dead link {net.nodes[p]} -> {net.nodes[v]}"


# -- Tree --------------------------------------------------------------------------------------

def test_tree_properties() -> None:
    t = Tree.from_edges(5, 1, [(1, 0), (0, 2), (0, 3), (3, 4)])
    assert t.parent == (1, -1, 0, 0, 3)
    assert t.edges == [(1, 0), (0, 2), (0, 3), (3, 4)]
    assert t.depth == 3
    assert t.out_degree.tolist() == [2, 1, 0, 1, 0]
    assert t.edge_names("abcde") == [("b", "a"), ("a", "c"), ("a", "d"), ("d", "e")]
    assert Tree(0, (-1, 0, 0)) == Tree.from_edges(3, 0, [(0, 2), (0, 1)])


@pytest.mark.parametrize("root, parent, message", [
    (0, (-1, 2, 1), "nodes 1, 2 do not reach the root 0: the parents form a cycle"),
    (0, (1, -1, 0), "the root 0 must be a node with parent -1"),
    (3, (-1, 0), "the root 3 must be a node with parent -1"),
    (0, (-1, 1, 0), "node 1 has parent 1, not another node of 0..2"),
    (0, (-1, 5, 0), "node 1 has parent 5"),
    (0, (-1, -1, 0), "node 1 has parent -1"),
])
def test_tree_rejects_non_trees(root: int, parent: tuple[int, ...], message: str) -> None:
    with pytest.raises(TomographyError) as caught:
        Tree(root, parent)
    assert message in str(caught.value)


def test_tree_from_edges_two_parents() -> None:
    with pytest.raises(TomographyError, match="node 2 has two parents, 0 and 1"):
        Tree.from_edges(3, 0, [(0, 1), (0, 2), (1, 2)])


# -- flat and semi-flat ------------------------------------------------------------------------

def test_flat_tree() -> None:
    net = lp_example()
    assert names(net, flat_tree(net, "x")) == [("x", "y"), ("x", "z")]
    assert flat_tree(net, "z").parent == (2, 2, -1)


@pytest.mark.parametrize("root, dead", [("n0", "cluster3, ia64, mike4, pegasos"),
                                        ("cluster3", "n0"), ("ia64", "n0, pegasos"),
                                        ("pegasos", "n0, ia64")])
def test_flat_tree_over_dead_links_is_unavailable(root: str, dead: str) -> None:
    with pytest.raises(MethodUnavailable) as caught:
        flat_tree(gridlab8(), root)
    assert str(caught.value) == (f"no flat tree from {root!r}: dead links to {dead}; "
                                 "use the semi-flat tree")


@pytest.mark.parametrize("root", ["fs0", "helix", "eltoro", "mike4"])
def test_flat_tree_where_every_link_from_the_root_lives(root: str) -> None:
    net = gridlab8()
    tree = flat_tree(net, root)
    assert_spanning_over_live(net, tree, root)
    assert tree.depth == 1


# Minimum height from each root and the best throughput among the trees of that height,
# found by enumerating all spanning trees (den Burger 2009, 3.2.3: "spanning trees with minimum
# height
# that do not use dead links ... the one with the highest throughput").
SEMI_FLAT = {"fs0": (1, 0.45), "n0": (2, 0.45), "cluster3": (2, 0.45), "helix": (1, 0.52),
             "eltoro": (1, 0.95 / 7), "ia64": (2, 0.45), "mike4": (1, 0.57),
             "pegasos": (2, 0.45)}


@pytest.mark.parametrize("root", GRIDLAB_ROOTS)
def test_semi_flat_tree_is_the_best_tree_of_minimum_height(root: str) -> None:
    net = gridlab8()
    tree = semi_flat_tree(net, root)
    assert_spanning_over_live(net, tree, root)
    every = gridlab_arborescences(root)
    height = depths(every).max(axis=1)
    assert tree.depth == height.min() == SEMI_FLAT[root][0]
    best = single_tree_rates(net, every[height == height.min()]).max()
    rate = single_tree_rates(net, np.array([tree.parent]))[0]
    assert rate == pytest.approx(best, abs=1e-12)
    assert rate == pytest.approx(SEMI_FLAT[root][1], abs=1e-12)


def test_semi_flat_may_hang_a_node_below_its_own_layer() -> None:
    """n0 reaches helix directly (0.37) but the best height-2 tree goes through fs0 (0.45)."""
    net = gridlab8()
    tree = semi_flat_tree(net, "n0")
    assert tree.parent[net.index("helix")] != net.index("n0")
    assert single_tree_rates(net, np.array([tree.parent]))[0] == pytest.approx(0.45)


def test_semi_flat_on_random_networks() -> None:
    for seed in range(12):
        rng = np.random.default_rng(seed)
        net = random_network(rng, int(rng.integers(3, 7)), dead=0.4)
        tree = semi_flat_tree(net, "h0")
        assert_spanning_over_live(net, tree, "h0")
        every = arborescences(net, "h0")
        height = depths(every).max(axis=1)
        assert tree.depth == height.min()
        best = single_tree_rates(net, every[height == height.min()]).max()
        assert single_tree_rates(net, np.array([tree.parent]))[0] == pytest.approx(best), seed


def test_semi_flat_with_a_zero_capacity() -> None:
    """A receiver that can take nothing: every tree has throughput 0, one is still returned."""
    net = Network.from_arrays([[0, 3, 3], [3, 0, 3], [3, 3, 0]], out_capacity=5,
                              in_capacity=[5, 0, 5], unit="")
    tree = semi_flat_tree(net, "h0")
    assert tree.depth == 1 and single_tree_rates(net, np.array([tree.parent]))[0] == 0


# -- maximum bottleneck ------------------------------------------------------------------------

def test_max_bottleneck_lp_example() -> None:
    net = lp_example()
    tree = max_bottleneck_tree(net, "x")
    assert names(net, tree) == [("x", "y"), ("x", "z")]
    assert bottleneck_links(net, np.array([tree.parent]))[0] == 8.0      # den Burger 2009, Fig 3.2b


@pytest.mark.parametrize("root", GRIDLAB_ROOTS)
def test_max_bottleneck_tree_maximizes_the_smallest_link(root: str) -> None:
    net = gridlab8()
    tree = max_bottleneck_tree(net, root)
    assert_spanning_over_live(net, tree, root)
    best = bottleneck_links(net, gridlab_arborescences(root)).max()
    assert bottleneck_links(net, np.array([tree.parent]))[0] == best


def test_max_bottleneck_on_random_networks() -> None:
    for seed in range(12):
        rng = np.random.default_rng(100 + seed)
        net = random_network(rng, int(rng.integers(3, 7)), dead=0.4)
        tree = max_bottleneck_tree(net, "h0")
        assert_spanning_over_live(net, tree, "h0")
        best = bottleneck_links(net, arborescences(net, "h0")).max()
        assert bottleneck_links(net, np.array([tree.parent]))[0] == best, seed


# -- FPFR --------------------------------------------------------------------------------------

def test_fpfr_lp_example() -> None:
    """den Burger et al. 2005, Fig 2c: x->y->z at 4, the flat tree at 6, x->z->y at 2: 12 in all."""
    net = lp_example()
    trees, rates = fpfr_trees(net, "x")
    assert [names(net, t) for t in trees] == [[("x", "y"), ("y", "z")],
                                             [("x", "y"), ("x", "z")],
                                             [("x", "z"), ("z", "y")]]
    assert rates.tolist() == [4.0, 6.0, 2.0]
    assert rates.sum() == 12.0


def test_fpfr_four_host_example() -> None:
    """den Burger 2009, Fig 3.5b: four trees of 5 each (20 promised), six flows out of the root."""
    net = four_host_example()
    trees, rates = fpfr_trees(net, "A")
    assert rates.tolist() == [5.0, 5.0, 5.0, 5.0]
    assert [t.out_degree[0] for t in trees] == [1, 1, 2, 2]
    assert [names(net, t) for t in trees] == [
        [("A", "B"), ("B", "C"), ("C", "D")],
        [("A", "B"), ("B", "D"), ("D", "C")],
        [("A", "C"), ("A", "D"), ("C", "B")],
        [("A", "C"), ("A", "D"), ("D", "B")]]


def assert_fpfr_reservations(net: Network, root: str) -> None:
    trees, rates = fpfr_trees(net, root)
    assert len(trees) == len(rates) > 0 and (rates > 0).all()
    reserved = np.zeros_like(net.bandwidth)
    for tree, rate in zip(trees, rates):
        assert_spanning_over_live(net, tree, root)
        left = net.bandwidth - reserved
        links = [left[p, v] for p, v in tree.edges]
        assert rate == pytest.approx(min(links))        # each tree reserves its bottleneck
        for p, v in tree.edges:
            reserved[p, v] += rate
    assert (reserved <= net.bandwidth * (1 + 1e-9)).all()
    # when FPFR stops, the links with bandwidth left no longer span the nodes
    left = net.bandwidth - reserved > 1e-9 * net.bandwidth.max()
    reached = {net.index(root)}
    frontier = list(reached)
    while frontier:
        u = frontier.pop()
        for v in np.flatnonzero(left[u]):
            if int(v) not in reached:
                reached.add(int(v))
                frontier.append(int(v))
    assert len(reached) < net.size


@pytest.mark.parametrize("root", GRIDLAB_ROOTS)
def test_fpfr_gridlab(root: str) -> None:
    assert_fpfr_reservations(gridlab8(), root)


def test_fpfr_random_networks() -> None:
    for seed in range(12):
        rng = np.random.default_rng(200 + seed)
        assert_fpfr_reservations(random_network(rng, int(rng.integers(3, 8))), "h0")


# -- every spanning tree -----------------------------------------------------------------------

def test_arborescences_lp_example() -> None:
    assert arborescences(lp_example(), "x").tolist() == [[-1, 0, 0], [-1, 2, 0], [-1, 0, 1]]


def test_arborescences_complete_graph_is_cayley() -> None:
    net = Network.from_arrays(np.ones((5, 5)), capacity=1, unit="")
    every = arborescences(net, "h2")
    assert every.shape == (5 ** 3, 5)
    assert len({tuple(row) for row in every}) == 125
    for row in every:
        Tree(2, tuple(row))


@pytest.mark.parametrize("root", GRIDLAB_ROOTS)
def test_arborescences_gridlab_matrix_tree_theorem(root: str) -> None:
    net = gridlab8()
    every = gridlab_arborescences(root)
    assert len(every) == count_arborescences(net, net.index(root))
    codes = (every + 1) @ (net.size + 1) ** np.arange(net.size)     # one number per tree
    assert len(np.unique(codes)) == len(every)
    r = net.index(root)
    assert (every[:, r] == -1).all()
    child = np.arange(net.size)
    parent_ok = (every >= 0) | (child == r)
    assert parent_ok.all()
    used = every[:, child != r], np.broadcast_to(child[child != r], (len(every), net.size - 1))
    assert net.live[used].all()                     # no dead link in any tree
    assert depths(every).max() < net.size           # no cycles


def test_arborescences_refused_above_max_nodes() -> None:
    with pytest.raises(MethodUnavailable) as caught:
        arborescences(gridlab8(), "fs0")
    assert str(caught.value) == ("enumerating every spanning tree of 8 nodes (up to 262,144 "
                                 "trees) is refused above max_nodes=7; pass max_nodes=8 "
                                 "(--max-nodes 8) to allow it")


# -- errors common to the builders -------------------------------------------------------------

BUILDERS = [flat_tree, semi_flat_tree, max_bottleneck_tree, fpfr_trees, arborescences]


@pytest.mark.parametrize("build", BUILDERS)
def test_unknown_root(build) -> None:
    with pytest.raises(TomographyError, match=r"unknown node 'w'; the nodes are x, y, z"):
        build(lp_example(), "w")


def unreachable() -> Network:
    """Every link into c is dead."""
    return Network.from_arrays([[0, 5, 0, 5], [5, 0, 0, 5], [5, 5, 0, 5], [5, 5, 0, 0]],
                               capacity=10, nodes=["a", "b", "c", "d"], unit="")


@pytest.mark.parametrize("build", BUILDERS[1:])
def test_unreachable_node(build) -> None:
    with pytest.raises(TomographyError) as caught:
        build(unreachable(), "a")
    assert not isinstance(caught.value, MethodUnavailable)
    assert str(caught.value) == "no spanning tree from 'a' over live links: it cannot reach c"


def test_unreachable_node_flat() -> None:
    with pytest.raises(MethodUnavailable, match="dead links to c"):
        flat_tree(unreachable(), "a")


def test_one_node_is_no_multicast() -> None:
    net = Network.from_arrays([[0]], capacity=1, nodes=["solo"], unit="")
    for build in BUILDERS:
        with pytest.raises(TomographyError, match="at least two nodes"):
            build(net, "solo")
