"""Balanced multicasting (den Burger et al. 2005), its exact optimum, the planners side by side.

Balanced multicasting solves a linear program for the rates of a set of
trees: maximize the sum of the rates such that no resource (outgoing or
incoming capacity of a node, achievable bandwidth of a link, a shared link)
carries more than it has (:func:`tomography.planning.throughput.resources`).
The root then shapes each tree to its rate.  The trees are FPFR's, as in the
paper, and then every tree the LP's prices say would raise the sum (column
generation, priced by :func:`tomography.planning.arborescence.cheapest_arborescence`),
so that the sum is the LP's optimum over every spanning tree.  The exact
optimum solves the same LP over every spanning tree, enumerated: the check,
on small networks, that the pricing finds it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from tomography.model.errors import TomographyError
from tomography.planning.arborescence import cheapest_arborescence
from tomography.planning.methods import METHODS
from tomography.planning.network import Network
from tomography.planning.throughput import predict, resources
from tomography.planning.trees import (MethodUnavailable, Tree, arborescences, flat_tree,
                                       fpfr_trees, max_bottleneck_tree, semi_flat_tree)

__all__ = ["Plan", "METHODS", "balanced_multicast", "exact_optimum", "plan", "compare"]

BINOMIAL_MESSAGE = 1 << 20  # bytes: the message the binomial tree is mapped for


@dataclass(frozen=True, eq=False)
class Plan:
    """The trees a method multicasts over, and the throughput it is predicted to get.

    Attributes
    ----------
    method : str
        One of :data:`METHODS`.
    root : str
    trees : list of Tree
    rates : array of float
        Rate of each tree: shaped at the root for "balanced" and "exact",
        the fair share of :func:`tomography.planning.throughput.predict`
        for the others.
    throughput : float
        The sum of the rates, in the network's unit.
    seconds : float
        Time taken to plan, prediction included.
    """

    method: str
    root: str
    trees: list[Tree]
    rates: np.ndarray
    throughput: float
    seconds: float


def balanced_multicast(network: Network, root: str, *, priced: bool = True) -> Plan:
    """Balanced multicast trees: FPFR's trees and the priced ones, at the LP's rates.

    Parameters
    ----------
    network : Network
    root : str
    priced : bool, default True
        Add, after FPFR's trees, each tree that the LP's prices show would
        raise the throughput, until none would: the plan then reaches the
        LP's optimum over every spanning tree, in polynomial time.  False
        solves the LP over FPFR's trees alone, as den Burger et al. 2005
        did; it falls short of the optimum where FPFR's depth-first trees
        load a node with little capacity (19.5 % from gridlab-8's ``n0``).

    Notes
    -----
    A tree's price is the sum, over its edges ``u -> v``, of the prices
    (the LP's dual values) of the outgoing capacity of ``u``, the incoming
    capacity of ``v``, the link ``u -> v`` and the shared links it crosses.
    A tree priced below 1 would raise the sum of the rates; the cheapest
    tree is a minimum spanning arborescence over the edges' prices.  Trees
    whose rate is zero are left out (den Burger et al. 2005, section 3.1,
    step 4).

    Examples
    --------
    >>> from tomography.planning.network import gridlab8, lp_example
    >>> net = lp_example()
    >>> p = balanced_multicast(net, "x")
    >>> p.throughput, p.rates.round(9).tolist()       # den Burger et al. 2005, Fig 2c and 3
    (9.0, [4.0, 1.0, 4.0])
    >>> [t.edge_names(net.nodes) for t in p.trees][1]
    [('x', 'y'), ('x', 'z')]
    >>> grid = gridlab8()
    >>> round(balanced_multicast(grid, "n0").throughput, 4)
    1.18
    >>> round(balanced_multicast(grid, "n0", priced=False).throughput, 4)
    0.95
    """
    start = time.perf_counter()
    trees, _ = fpfr_trees(network, root)
    parents = np.array([t.parent for t in trees])
    if priced:
        parents = _priced_trees(network, network.index(root), parents)
    return _shaped_plan("balanced", network, root,
                        [Tree(network.index(root), tuple(row)) for row in parents],
                        _optimal_rates(network, parents), start)


def exact_optimum(network: Network, root: str, *, max_nodes: int = 7) -> Plan:
    """The highest throughput any set of trees can get: the LP over every spanning tree.

    Parameters
    ----------
    network : Network
    root : str
    max_nodes : int, default 7
        Larger networks are refused (:class:`MethodUnavailable`): there are
        up to ``n ** (n - 2)`` trees.  Eight nodes take well under a
        second; nine would need gigabytes.

    Examples
    --------
    >>> from tomography.planning.network import lp_example
    >>> exact_optimum(lp_example(), "x").throughput
    9.0
    """
    start = time.perf_counter()
    parents = arborescences(network, root, max_nodes=max_nodes)
    rates = _optimal_rates(network, parents)
    keep = np.flatnonzero(rates > 0)
    trees = [Tree(network.index(root), tuple(parents[i])) for i in keep]
    return _shaped_plan("exact", network, root, trees, rates[keep], start)


def plan(network: Network, root: str, method: str, *, max_nodes: int = 7) -> Plan:
    """Plan a multicast from ``root`` with one of :data:`METHODS`.

    "flat", "semi-flat", "max-bottleneck" and "binomial" (the binomial
    broadcast tree mapped minimum-first by Hockney's model of the
    network, :mod:`~tomography.planning.hockney`, for a 1 MiB message) give
    one tree, "fpfr" its
    trees at their fair shares (uncoordinated), "balanced" and "exact" the
    shaped trees of :func:`balanced_multicast` and :func:`exact_optimum`
    (``max_nodes`` applies to "exact").

    Raises
    ------
    MethodUnavailable
        For "flat" over a dead link and "exact" above ``max_nodes``.

    Examples
    --------
    >>> from tomography.planning.network import lp_example
    >>> net = lp_example()
    >>> [plan(net, "x", m).throughput for m in METHODS]
    [5.0, 5.0, 5.0, 7.5, 9.0, 9.0, 5.0]
    """
    if method not in METHODS:
        raise TomographyError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")
    if method == "balanced":
        return balanced_multicast(network, root)
    if method == "exact":
        return exact_optimum(network, root, max_nodes=max_nodes)
    start = time.perf_counter()
    if method == "fpfr":
        trees, _ = fpfr_trees(network, root)
    elif method == "binomial":
        from tomography.planning.hockney import HockneyModel, binomial_tree

        trees = [binomial_tree(HockneyModel.from_network(network), root, BINOMIAL_MESSAGE)[0]]
    else:
        trees = [_SINGLE[method](network, root)]
    shares = predict(network, trees, coordinated=False)
    return Plan(method, root, trees, shares.rates, shares.throughput,
                time.perf_counter() - start)


def compare(network: Network, root: str, *, methods: Sequence[str] = METHODS,
            max_nodes: int = 7) -> pd.DataFrame:
    """Every method's plan from ``root``, one row each.

    A method that cannot plan here (:class:`MethodUnavailable`) gets a NaN
    throughput and the reason in ``note``.

    Returns
    -------
    pandas.DataFrame
        Columns ``method``, ``throughput``, ``trees`` (how many), ``seconds``, ``note``.

    Examples
    --------
    >>> from tomography.planning.network import gridlab8
    >>> table = compare(gridlab8(), "n0", methods=["flat", "semi-flat", "balanced"])
    >>> print(table[["method", "throughput", "trees"]].round(3).to_string(index=False))
       method  throughput  trees
         flat         NaN      0
    semi-flat        0.45      1
     balanced        1.18      3
    >>> table.note[0]
    "no flat tree from 'n0': dead links to cluster3, ia64, mike4, pegasos; use the semi-flat tree"
    """
    rows = []
    for method in methods:
        try:
            result = plan(network, root, method, max_nodes=max_nodes)
        except MethodUnavailable as exc:
            rows.append({"method": method, "throughput": np.nan, "trees": 0,
                         "seconds": np.nan, "note": str(exc)})
            continue
        rows.append({"method": method, "throughput": result.throughput,
                     "trees": len(result.trees), "seconds": result.seconds, "note": ""})
    return pd.DataFrame(rows, columns=["method", "throughput", "trees", "seconds", "note"])


_SINGLE: dict[str, Callable[[Network, str], Tree]] = {
    "flat": flat_tree, "semi-flat": semi_flat_tree, "max-bottleneck": max_bottleneck_tree}


def _optimal_rates(network: Network, trees: Sequence[Tree] | np.ndarray) -> np.ndarray:
    """The LP: rates of ``trees`` of the largest sum that fit every resource.

    Solved by column generation, so that the exact optimum over tens of
    thousands of trees stays fast: the LP over a batch of trees, then every
    tree priced with the duals of the resources; the trees that would raise
    the sum join, until none would.  That is the optimum over all the trees.
    """
    res = resources(network, trees)
    usage = res.usage.tocsc()
    chosen = np.arange(min(usage.shape[1], _BATCH))
    while True:
        rates, prices = _solve(usage[:, chosen], res.capacity)
        price = usage.T @ prices
        better = np.setdiff1d(np.flatnonzero(price < 1 - _TOLERANCE), chosen)
        if not len(better):
            break
        chosen = np.concatenate([chosen, better[np.argsort(price[better], kind="stable")[:_BATCH]]])
    full = np.zeros(usage.shape[1])
    full[chosen] = rates
    return np.where(full > 1e-12 * max(float(res.capacity.max()), 1e-300), full, 0.0)


def _priced_trees(network: Network, r: int, parents: np.ndarray) -> np.ndarray:
    """``parents`` and, one at a time, the cheapest tree at the LP's prices while it
    costs less than 1: it would raise the sum of the rates.  None does at the optimum
    over every tree."""
    n = network.size
    for _ in range(_ROUNDS * n):
        res = resources(network, parents)
        _, prices = _solve(res.usage.tocsc(), res.capacity)
        price = np.zeros(2 * n + n * n + len(network.shared))
        price[res.position] = prices
        edge = price[:n, None] + price[None, n:2 * n] + price[2 * n:2 * n + n * n].reshape(n, n)
        for s, link in enumerate(network.shared):
            for a, b in link.pairs:
                edge[network.index(a), network.index(b)] += price[2 * n + n * n + s]
        edge[~network.live] = np.inf
        tree = cheapest_arborescence(edge, r)
        children = np.flatnonzero(tree >= 0)
        if edge[tree[children], children].sum() >= 1 - _TOLERANCE or \
                (parents == tree).all(axis=1).any():
            return parents
        parents = np.vstack([parents, tree])
    raise RuntimeError(f"balanced multicasting: the pricing added {_ROUNDS * n} trees "
                       f"without reaching the optimum")


def _solve(usage, capacity: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The largest sum of rates with ``usage @ rates <= capacity``: the rates, and each
    resource's price (its dual value, >= 0)."""
    from scipy.optimize import linprog   # 0.25 s to import: only when planning

    solution = linprog(-np.ones(usage.shape[1]), A_ub=usage, b_ub=capacity, bounds=(0, None),
                       method="highs")
    if solution.status != 0:
        raise RuntimeError(f"the balanced multicasting LP failed: {solution.message}")
    return solution.x, -solution.ineqlin.marginals


_BATCH = 200
_TOLERANCE = 1e-9   # a tree priced below 1 - this raises the sum of the rates
_ROUNDS = 20       # times the nodes: the pricing's rounds, a guard against numerical loops


def _shaped_plan(method: str, network: Network, root: str, trees: Sequence[Tree],
                 rates: np.ndarray, start: float) -> Plan:
    """A plan of the trees with positive rate, checked to fit the network."""
    keep = np.flatnonzero(rates > 0)
    kept = [trees[i] for i in keep]
    shaped = predict(network, kept, rates[keep], coordinated=True)
    return Plan(method, root, kept, shaped.rates, shaped.throughput,
                time.perf_counter() - start)
