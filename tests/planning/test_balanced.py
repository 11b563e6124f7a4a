"""Balanced multicasting, the exact optimum and the planners side by side.

den Burger et al. 2005, section 3.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import linprog

from tomography.model.errors import TomographyError
from tomography.planning import (METHODS, MethodUnavailable, Network, Plan, SharedLink, Tree,
                                 arborescences, balanced_multicast, compare, exact_optimum,
                                 four_host_example, fpfr_trees, gridlab8, lp_example, plan,
                                 predict, resources)
from tomography.planning import packing
from tests.planning.brute import random_network, single_tree_rates

SINGLE = ("flat", "semi-flat", "max-bottleneck")

# Every method's predicted throughput from every gridlab-8 root, MB/s (None: no flat tree).
GRIDLAB = {
    "fs0": (0.45, 0.45, 0.51, 1.06, 1.18, 1.18),
    "n0": (None, 0.45, 0.51, 0.803846, 1.18, 1.18),
    "cluster3": (None, 0.45, 0.51, 0.908333, 1.18, 1.18),
    "helix": (0.52, 0.52, 0.93, 1.18, 1.18, 1.18),
    "eltoro": (0.95 / 7, 0.95 / 7, 0.475, 0.844444, 0.95, 0.95),
    "ia64": (None, 0.45, 0.51, 0.934615, 1.18, 1.18),
    "mike4": (0.57, 0.57, 0.93, 1.18, 1.18, 1.18),
    "pegasos": (None, 0.45, 0.51, 0.912222, 1.18, 1.18),
}

# The LP over FPFR's trees alone, as den Burger et al. 2005: short of the optimum from two roots.
GRIDLAB_FPFR_ONLY = {"n0": 0.95, "pegasos": 1.1425}


def edge_names(net: Network, p: Plan) -> list[list[tuple[str, str]]]:
    return [t.edge_names(net.nodes) for t in p.trees]


def assert_sound(net: Network, p: Plan) -> None:
    """Spanning trees from the root over live links, positive rates that fit every resource."""
    r = net.index(p.root)
    assert len(p.trees) == len(p.rates) > 0
    assert (p.rates > 0).all() and np.isfinite(p.rates).all()
    assert p.throughput == pytest.approx(p.rates.sum(), rel=1e-12)
    assert p.seconds >= 0
    for tree in p.trees:
        assert isinstance(tree, Tree)
        assert tree.root == r and tree.size == net.size and tree.parent[r] == -1
        assert sorted(v for _, v in tree.edges) == [v for v in range(net.size) if v != r]
        for u, v in tree.edges:
            assert net.bandwidth[u, v] > 0, f"{p.method} uses the dead link " \
                                            f"{net.nodes[u]} -> {net.nodes[v]}"
    if p.method in (*SINGLE, "fpfr"):             # uncoordinated: the fair shares
        shares = predict(net, p.trees, coordinated=False)
        np.testing.assert_allclose(p.rates, shares.rates, rtol=1e-12)
    res = resources(net, p.trees)
    load = res.usage @ p.rates
    assert (load <= res.capacity * (1 + 1e-9) + 1e-12).all(), \
        f"{p.method} overloads {res.names[int(np.argmax(load - res.capacity))]}"


# -- the worked examples ----------------------------------------------------------------------

def test_lp_example_balanced_is_9_with_4_1_4() -> None:
    net = lp_example()
    p = balanced_multicast(net, "x")
    assert p.method == "balanced" and p.root == "x"
    assert p.throughput == pytest.approx(9.0, abs=1e-9)
    np.testing.assert_allclose(p.rates, [4.0, 1.0, 4.0], atol=1e-9)        # a, b, c
    assert edge_names(net, p) == [[("x", "y"), ("y", "z")], [("x", "y"), ("x", "z")],
                                  [("x", "z"), ("z", "y")]]
    assert_sound(net, p)


def test_lp_example_fpfr_promises_12_gets_7_5() -> None:
    net = lp_example()
    assert fpfr_trees(net, "x")[1].sum() == 12.0
    p = plan(net, "x", "fpfr")
    assert p.throughput == 7.5 and p.rates.tolist() == [2.5, 2.5, 2.5]
    assert_sound(net, p)


def test_lp_example_exact_is_9() -> None:
    net = lp_example()
    p = exact_optimum(net, "x")
    assert p.throughput == pytest.approx(9.0, abs=1e-9)
    assert_sound(net, p)


def test_lp_example_every_method() -> None:
    net = lp_example()
    got = [plan(net, "x", m).throughput for m in METHODS]
    assert got == pytest.approx([5.0, 5.0, 5.0, 7.5, 9.0, 9.0, 5.0], abs=1e-9)


def test_lp_example_optimum_solves_the_lp_of_002_fig3() -> None:
    """maximize a+b+c s.t. a+2b+c<=10, a<=10, c<=10, a+c<=10, b+c<=10, a+b<=10, b+c<=8,
    a<=4, c<=4 (as printed in den Burger et al. 2005, Fig 3): the optimum is a=4, b=1, c=4."""
    a_ub = [[1, 2, 1], [1, 0, 0], [0, 0, 1], [1, 0, 1], [0, 1, 1], [1, 1, 0], [0, 1, 1],
            [1, 0, 0], [0, 0, 1]]
    b_ub = [10, 10, 10, 10, 10, 10, 8, 4, 4]
    printed = linprog([-1, -1, -1], A_ub=a_ub, b_ub=b_ub, method="highs")
    np.testing.assert_allclose(printed.x, [4, 1, 4], atol=1e-9)
    p = balanced_multicast(lp_example(), "x")
    np.testing.assert_allclose(p.rates, printed.x, atol=1e-9)
    assert (np.array(a_ub) @ p.rates <= np.array(b_ub) + 1e-9).all()


def test_four_host_example() -> None:
    """den Burger 2009, Fig 3.5: FPFR promises 20, gets 6.7; balanced keeps two trees for 10."""
    net = four_host_example()
    assert fpfr_trees(net, "A")[1].sum() == 20.0
    fpfr = plan(net, "A", "fpfr")
    assert fpfr.throughput == pytest.approx(20 / 3) and len(fpfr.trees) == 4
    assert round(fpfr.throughput, 1) == 6.7
    balanced = balanced_multicast(net, "A")
    assert balanced.throughput == pytest.approx(10.0, abs=1e-9)
    assert len(balanced.trees) == 2
    np.testing.assert_allclose(balanced.rates, [5.0, 5.0], atol=1e-9)
    assert all(t.out_degree[0] == 1 for t in balanced.trees)     # one flow each out of A
    assert exact_optimum(net, "A").throughput == pytest.approx(10.0, abs=1e-9)
    for p in (fpfr, balanced):
        assert_sound(net, p)


# -- gridlab-8, every root ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def gridlab_plans() -> dict[str, dict[str, Plan | MethodUnavailable]]:
    net = gridlab8()
    plans: dict[str, dict[str, Plan | MethodUnavailable]] = {}
    for root in net.nodes:
        plans[root] = {}
        for method in METHODS:
            try:
                plans[root][method] = plan(net, root, method, max_nodes=8)
            except MethodUnavailable as exc:
                plans[root][method] = exc
    return plans


@pytest.mark.slow  # the gridlab_plans fixture takes over 2 s
@pytest.mark.parametrize("root", list(GRIDLAB))
def test_gridlab_throughputs(gridlab_plans, root: str) -> None:
    for method, expected in zip(METHODS, GRIDLAB[root]):
        got = gridlab_plans[root][method]
        if expected is None:
            assert isinstance(got, MethodUnavailable) and method == "flat"
            assert f"no flat tree from {root!r}: dead links to" in str(got)
        else:
            assert isinstance(got, Plan), got
            assert got.throughput == pytest.approx(expected, abs=1e-6), method


@pytest.mark.slow  # the gridlab_plans fixture takes over 2 s
@pytest.mark.parametrize("root", list(GRIDLAB))
def test_gridlab_balanced_beats_the_other_methods(gridlab_plans, root: str) -> None:
    plans = gridlab_plans[root]
    balanced, exact = plans["balanced"].throughput, plans["exact"].throughput
    for method in (*SINGLE, "fpfr"):
        if isinstance(plans[method], Plan):
            assert balanced >= plans[method].throughput - 1e-9, method
    assert exact >= balanced - 1e-9


@pytest.mark.slow  # the gridlab_plans fixture takes over 2 s
@pytest.mark.parametrize("root", list(GRIDLAB))
def test_gridlab_plans_are_sound(gridlab_plans, root: str) -> None:
    net = gridlab8()
    for method, p in gridlab_plans[root].items():
        if isinstance(p, Plan):
            assert p.method == method and p.root == root
            assert_sound(net, p)
            if method in SINGLE:
                assert len(p.trees) == 1


def test_gridlab_balanced_over_fpfr_trees_alone() -> None:
    """``priced=False`` is the paper's balanced multicasting: the LP over FPFR's trees."""
    net = gridlab8()
    for root in net.nodes:
        got = balanced_multicast(net, root, priced=False)
        assert_sound(net, got)
        assert got.throughput == pytest.approx(GRIDLAB_FPFR_ONLY.get(root, GRIDLAB[root][4]),
                                               abs=1e-6), root


@pytest.mark.slow  # the gridlab_plans fixture takes over 2 s
@pytest.mark.parametrize("root", list(GRIDLAB))
def test_gridlab_exact_reaches_the_local_capacity_bound(gridlab_plans, root: str) -> None:
    """No multicast beats the root's outgoing capacity or a receiver's incoming one; on
    gridlab-8 the exact optimum reaches that bound from every root (eltoro: its 0.95 out,
    elsewhere eltoro's 1.18 in)."""
    net = gridlab8()
    r = net.index(root)
    bound = min(net.out_capacity[r], np.delete(net.in_capacity, r).min())
    assert gridlab_plans[root]["exact"].throughput == pytest.approx(bound, abs=1e-9)
    assert gridlab_plans[root]["balanced"].throughput <= bound + 1e-9


def test_gridlab_exact_refused_by_default() -> None:
    with pytest.raises(MethodUnavailable, match="pass max_nodes=8"):
        exact_optimum(gridlab8(), "fs0")
    with pytest.raises(MethodUnavailable, match="refused above max_nodes=7"):
        plan(gridlab8(), "fs0", "exact")


def test_compare_gridlab_n0() -> None:
    table = compare(gridlab8(), "n0", max_nodes=8)
    assert table.method.tolist() == list(METHODS)
    assert table.columns.tolist() == ["method", "throughput", "trees", "seconds", "note"]
    flat = table.iloc[0]
    assert math.isnan(flat.throughput) and flat.trees == 0 and math.isnan(flat.seconds)
    assert flat.note == ("no flat tree from 'n0': dead links to cluster3, ia64, mike4, "
                         "pegasos; use the semi-flat tree")
    np.testing.assert_allclose(table.throughput[1:6], GRIDLAB["n0"][1:], atol=1e-6)
    assert 0 < table.throughput[6] <= table.throughput[4]  # binomial <= balanced
    assert (table.note[1:] == "").all() and (table.trees[1:] > 0).all()


def test_compare_marks_exact_unavailable() -> None:
    table = compare(gridlab8(), "fs0", methods=["balanced", "exact"])
    assert table.throughput[0] == pytest.approx(1.18)
    assert math.isnan(table.throughput[1]) and "max_nodes=7" in table.note[1]


# -- errors ------------------------------------------------------------------------------------

@pytest.mark.parametrize("method", METHODS)
def test_unknown_root(method: str) -> None:
    with pytest.raises(TomographyError, match=r"unknown node 'w'; the nodes are x, y, z"):
        plan(lp_example(), "w", method)


def test_unknown_method() -> None:
    with pytest.raises(TomographyError, match="unknown method 'best'; choose one of flat, "):
        plan(lp_example(), "x", "best")


@pytest.mark.parametrize("method", METHODS[1:])
def test_unreachable_node(method: str) -> None:
    net = Network.from_arrays([[0, 5, 0], [5, 0, 0], [5, 5, 0]], capacity=10, unit="")
    with pytest.raises(TomographyError) as caught:
        plan(net, "h0", method)
    assert not isinstance(caught.value, MethodUnavailable)
    assert str(caught.value) == "no spanning tree from 'h0' over live links: it cannot reach h2"


def test_unreachable_node_flat_and_compare() -> None:
    net = Network.from_arrays([[0, 5, 0], [5, 0, 0], [5, 5, 0]], capacity=10, unit="")
    with pytest.raises(MethodUnavailable):
        plan(net, "h0", "flat")
    with pytest.raises(TomographyError, match="cannot reach h2"):
        compare(net, "h0")


# -- properties on small random networks -------------------------------------------------------

def test_random_networks_exact_balanced_fpfr() -> None:
    """exact = balanced >= the LP over FPFR's trees >= fpfr, exact >= every single tree."""
    for seed in range(20):
        rng = np.random.default_rng(500 + seed)
        net = random_network(rng, int(rng.integers(3, 7)))
        plans = {}
        for method in METHODS:
            try:
                plans[method] = plan(net, "h0", method)
            except MethodUnavailable:
                assert method == "flat"
        for p in plans.values():
            assert_sound(net, p)
        exact, balanced = plans["exact"].throughput, plans["balanced"].throughput
        fpfr_only = balanced_multicast(net, "h0", priced=False).throughput
        assert balanced == pytest.approx(exact, abs=1e-9), seed
        assert balanced >= fpfr_only - 1e-9, seed
        assert fpfr_only >= plans["fpfr"].throughput - 1e-9, seed
        for method in SINGLE:
            if method in plans:
                assert exact >= plans[method].throughput - 1e-9, (seed, method)
        candidates, _ = fpfr_trees(net, "h0")
        alone = single_tree_rates(net, np.array([t.parent for t in candidates]))
        assert fpfr_only >= alone.max() - 1e-9, seed
        # the exact optimum is the LP over every spanning tree, without column generation
        every = arborescences(net, "h0")
        res = resources(net, every)
        full = linprog(-np.ones(len(every)), A_ub=res.usage.toarray(), b_ub=res.capacity,
                       method="highs")
        assert exact == pytest.approx(-full.fun, abs=1e-9), seed


def test_random_networks_with_shared_links_balanced_is_the_optimum() -> None:
    """The pricing counts a shared link once per tree edge over one of its pairs, as the LP
    does: balanced still finds the optimum over every spanning tree."""
    for seed in range(20):
        rng = np.random.default_rng(900 + seed)
        base = random_network(rng, int(rng.integers(4, 7)))
        n = base.size
        pairs = [(base.nodes[a], base.nodes[b]) for a in range(n) for b in range(n)
                 if a != b and base.bandwidth[a, b] > 0 and rng.random() < 0.4]
        links = tuple(SharedLink(f"link {k}", float(rng.uniform(1, 8)), pairs[k::2])
                      for k in range(2) if pairs[k::2])
        net = Network(base.nodes, base.out_capacity, base.in_capacity, base.bandwidth,
                      unit="", shared=links)
        balanced, exact = balanced_multicast(net, "h0"), exact_optimum(net, "h0")
        assert_sound(net, balanced)
        assert balanced.throughput == pytest.approx(exact.throughput, abs=1e-9), seed


def test_balanced_never_loses_to_a_single_tree() -> None:
    """The LP's optimum over every tree is at least any one tree's rate: balanced >= every
    single-tree method, on twenty random networks."""
    for seed in range(20):
        rng = np.random.default_rng(500 + seed)
        net = random_network(rng, int(rng.integers(3, 7)))
        balanced = balanced_multicast(net, "h0").throughput
        best_single = max(plan(net, "h0", m).throughput for m in SINGLE[1:])
        assert balanced >= best_single - 1e-9, seed


def test_fpfr_trees_alone_can_lose_to_a_single_tree() -> None:
    """The LP over FPFR's trees alone only reweights them, and FPFR ignores local capacities.

    Here FPFR's depth-first search forwards through h1 first (outgoing capacity
    1.91), so every candidate pays for it, while the maximum bottleneck tree
    h0 -> h1, h0 -> h3 -> h2 leaves h1 a leaf: 3.93 against 1.91.  The priced
    trees reach the exact optimum, 5.79, which beats both.
    """
    net = Network.from_arrays([[0, 8.28, 1.86, 7.69], [0, 0, 0, 5.82],
                               [9.78, 1.78, 0, 2.38], [6.88, 0, 3.93, 0]],
                              out_capacity=[12.62, 1.91, 17.98, 18.9],
                              in_capacity=[11.13, 12.54, 12.22, 7.5], unit="")
    assert plan(net, "h0", "max-bottleneck").throughput == pytest.approx(3.93)
    assert balanced_multicast(net, "h0", priced=False).throughput == pytest.approx(1.91)
    assert balanced_multicast(net, "h0").throughput == pytest.approx(5.79)
    assert exact_optimum(net, "h0").throughput == pytest.approx(5.79)


def test_column_generation_matches_the_full_lp(monkeypatch) -> None:
    """With tiny batches the exact optimum needs many rounds of pricing; same answer."""
    net = gridlab8()
    sub = Network(net.nodes[:6], net.out_capacity[:6], net.in_capacity[:6],
                  net.bandwidth[:6, :6], unit=net.unit)
    every = arborescences(sub, "n0")
    res = resources(sub, every)
    full = linprog(-np.ones(len(every)), A_ub=res.usage, b_ub=res.capacity, method="highs")
    monkeypatch.setattr(packing, "_BATCH", 3)
    p = exact_optimum(sub, "n0")
    assert p.throughput == pytest.approx(-full.fun, abs=1e-9)
    assert_sound(sub, p)


def test_shaped_rates_are_checked() -> None:
    """The plans' rates go through predict(coordinated=True), which rejects overloads."""
    net = lp_example()
    p = balanced_multicast(net, "x")
    again = predict(net, p.trees, p.rates, coordinated=True)
    assert again.throughput == pytest.approx(p.throughput)
    with pytest.raises(TomographyError, match="the rates need"):
        predict(net, p.trees, p.rates * 1.01, coordinated=True)


def test_the_plan_fills_only_the_bottleneck() -> None:
    """h1 can take in 6.23 from h0 and 0.75 from h2: 6.98 is the throughput, and those two
    links are the bottlenecks.  Sending 6.23 over h0 -> h1 -> h2 fills h1's way out (6.32)
    to 98.6 %; the plan mixes in h0 -> h1, h0 -> h2 until h0's way out (15.07) is as full,
    61.8 %.  Of the plans of the highest throughput, balanced and exact take one that fills
    nothing but the bottlenecks beyond what it must: a figure measured a little high then
    costs little."""
    net = Network.from_arrays([[0, 6.23, 7.89], [7.3, 0, 8.67], [9.22, 0.75, 0]],
                              out_capacity=[15.07, 6.32, 15.87],
                              in_capacity=[19.77, 19.74, 17.77], unit="")
    full = predict(net, [Tree(0, (-1, 0, 1)), Tree(0, (-1, 2, 0))], [6.23, 0.75],
                   coordinated=True)
    res = resources(net, [Tree(0, (-1, 0, 1))])
    assert full.throughput == pytest.approx(6.98)
    assert (res.usage @ [6.23] / res.capacity)[res.names.index("out h1")] == pytest.approx(
        0.986, abs=1e-3)
    for p in (balanced_multicast(net, "h0"), exact_optimum(net, "h0")):
        assert p.throughput == pytest.approx(6.98)
        res = resources(net, p.trees)
        share = dict(zip(res.names, res.usage @ p.rates / res.capacity))
        assert share.pop("h0 -> h1") == pytest.approx(1.0)
        assert share.pop("h2 -> h1") == pytest.approx(1.0)
        assert max(share.values()) == pytest.approx(0.6176, abs=1e-3), (p.method, share)
