"""Balanced multicasting (den Burger et al. 2005), its exact optimum, the planners side by side.

Balanced multicasting sends over several trees, each shaped at the root to the
rate a linear program gives it (:mod:`tomography.planning.packing`): the
largest sum of rates that no resource can refuse.  Its trees are FPFR's, as in
the paper, and every other spanning tree the program's prices say would raise
the sum, so that it reaches the optimum over every tree.  The exact optimum
solves the same program over every spanning tree, enumerated: the check, on
small networks, that the pricing finds it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from tomography.model.errors import TomographyError
from tomography.planning.methods import METHODS
from tomography.planning.network import Network
from tomography.planning.packing import tree_rates
from tomography.planning.throughput import predict
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
    tree is a minimum spanning arborescence over the edges' prices.  Of the
    rates with the highest sum, the plan takes those that leave every
    resource but the bottlenecks as little full as they can be
    (:mod:`~tomography.planning.packing`): a figure measured a little high
    then costs little.  Trees whose rate is zero are left out (den Burger
    et al. 2005, section 3.1, step 4).

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
    parents, rates = tree_rates(network, root, np.array([t.parent for t in trees]),
                                priced=priced)
    return _shaped_plan("balanced", network, root, parents, rates, start)


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
    parents, rates = tree_rates(network, root, arborescences(network, root, max_nodes=max_nodes),
                                priced=False)
    return _shaped_plan("exact", network, root, parents, rates, start)


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
        Columns ``method``, ``throughput``, ``trees`` (how many), ``seconds`` (each
        method's planning time; SciPy's optimizers, which several planners use, are
        imported before the first, so that their import, about 0.2 s once per process,
        is no method's time), ``note``.

    Examples
    --------
    >>> from tomography.planning.network import gridlab8
    >>> table = compare(gridlab8(), "n0", methods=["flat", "semi-flat", "balanced"])
    >>> print(table[["method", "throughput", "trees"]].round(3).to_string(index=False))
       method  throughput  trees
         flat         NaN      0
    semi-flat        0.45      1
     balanced        1.18      4
    >>> table.note[0]
    "no flat tree from 'n0': dead links to cluster3, ia64, mike4, pegasos; use the semi-flat tree"
    """
    import scipy.optimize  # noqa: F401  (imported once here, not inside the first timing)

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


def _shaped_plan(method: str, network: Network, root: str, parents: np.ndarray,
                 rates: np.ndarray, start: float) -> Plan:
    """A plan of the trees (parent rows) with positive rate, checked to fit the network."""
    keep = np.flatnonzero(rates > 0)
    kept = [Tree(network.index(root), tuple(int(p) for p in parents[i])) for i in keep]
    shaped = predict(network, kept, rates[keep], coordinated=True)
    return Plan(method, root, kept, shaped.rates, shaped.throughput,
                time.perf_counter() - start)
