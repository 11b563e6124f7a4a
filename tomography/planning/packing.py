"""The linear program of balanced multicasting: the rates of a set of trees.

Maximize the sum of the trees' rates such that no resource (a node's
capacity out or in, a link, a shared link) carries more than it has
(:func:`tomography.planning.throughput.resources`; den Burger et al. 2005,
section 3.1).  Solved by column generation: the LP over some trees, then the
trees its prices say would raise the sum join, until none would.  The trees
come from a given set (:func:`tree_rates` with ``priced=False``: FPFR's, or
every spanning tree enumerated), or from every spanning tree, priced with
:func:`tomography.planning.arborescence.cheapest_arborescence`
(``priced=True``).

Many sets of rates reach the highest sum, and a vertex of the LP fills
every resource it can.  The figures a plan rests on are measured to a few
per cent, so a resource planned full may be a little short, and the trees
through it then end late.  A second LP therefore keeps the sum and fills only
what it must: the resources whose price is positive (the bottlenecks that
set the sum) may stay full; the largest share of every other resource that
the plan uses is made as small as it can be.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from scipy import sparse

from tomography.planning.arborescence import cheapest_arborescence
from tomography.planning.network import Network
from tomography.planning.throughput import Resources, edge_prices, resources

__all__ = ["tree_rates"]

_BATCH = 200
"""Trees of a given set that join the LP at once."""

_TOLERANCE = 1e-9
"""A tree whose price is below ``(1 - this)`` times the bar raises the objective."""

_ROUNDS = 20
"""Times the nodes: priced trees added per LP at most, a guard against rounding that
would price a tree just below the bar again and again."""

Solver = Callable[[Resources], tuple[np.ndarray, np.ndarray, float]]


def tree_rates(network: Network, root: str, trees: np.ndarray, *,
               priced: bool) -> tuple[np.ndarray, np.ndarray]:
    """Rates of the highest sum for ``trees`` (and the priced ones), filling only what they must.

    Parameters
    ----------
    network : Network
    root : str
    trees : array of int, shape (trees, n)
        Parent rows (-1 at the root), as from
        :func:`tomography.planning.trees.arborescences`.
    priced : bool
        True: start from ``trees`` and add every spanning tree that would
        raise the sum, priced by a cheapest arborescence: the optimum over
        every tree.  False: the optimum over ``trees`` alone.

    Returns
    -------
    parents : array of int, shape (k, n)
        The trees the LPs saw: some of ``trees`` (all of them with
        ``priced``), then the priced ones.
    rates : array of float, shape (k,)
        The rate of each; 0 for the trees left out.

    Examples
    --------
    den Burger et al. 2005, Fig 3: the three FPFR trees at 4, 1 and 4.

    >>> from tomography.planning.network import lp_example
    >>> from tomography.planning.trees import fpfr_trees
    >>> net = lp_example()
    >>> trees = np.array([t.parent for t in fpfr_trees(net, "x")[0]])
    >>> parents, rates = tree_rates(net, "x", trees, priced=False)
    >>> rates.round(9).tolist()
    [4.0, 1.0, 4.0]
    """
    r = network.index(root)
    given = np.asarray(trees, dtype=int).reshape(-1, network.size)
    grow = _Priced(network, r) if priced else _Given(network, given)
    parents, most, res, prices = _columns(grow, _most(), given if priced else grow.first())
    binding = res.position[prices > _TOLERANCE * max(float(prices.max(initial=0.0)), 1e-300)]
    parents, rates, res, _ = _columns(grow, _spread(float(most.sum()), binding), parents)
    scale = max(float(res.capacity.max()), 1e-300)
    return parents, np.where(rates > 1e-12 * scale, rates, 0.0)


def _columns(grow: "_Given | _Priced", solve: Solver, parents: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray, Resources, np.ndarray]:
    """The LP of ``solve`` over ``parents``, and again with the trees ``grow`` finds
    cheaper than its bar, until there are none."""
    while True:
        res = resources(grow.network, parents)
        rates, prices, bar = solve(res)
        full = np.zeros(_positions(grow.network))
        full[res.position] = prices
        more = grow.cheaper(full, bar, parents)
        if more is None:
            return parents, rates, res, prices
        parents = more


class _Given:
    """Trees from a given set: the cheapest of them join, a batch at a time."""

    def __init__(self, network: Network, trees: np.ndarray) -> None:
        self.network, self.trees = network, trees
        self.usage = resources(network, trees)
        self.taken = np.arange(min(len(trees), _BATCH))

    def first(self) -> np.ndarray:
        return self.trees[self.taken]

    def cheaper(self, full: np.ndarray, bar: float, parents: np.ndarray) -> np.ndarray | None:
        price = self.usage.usage.T @ full[self.usage.position]
        better = np.setdiff1d(np.flatnonzero(price < bar * (1 - _TOLERANCE)), self.taken)
        if not len(better):
            return None
        self.taken = np.concatenate(
            [self.taken, better[np.argsort(price[better], kind="stable")[:_BATCH]]])
        return self.trees[self.taken]


class _Priced:
    """Any spanning tree: the cheapest arborescence at the prices joins, one at a time."""

    def __init__(self, network: Network, r: int) -> None:
        self.network, self.r, self.left = network, r, _ROUNDS * network.size

    def cheaper(self, full: np.ndarray, bar: float, parents: np.ndarray) -> np.ndarray | None:
        edge = edge_prices(self.network, full)
        tree = cheapest_arborescence(edge, self.r)
        kids = np.flatnonzero(tree >= 0)
        if (self.left <= 0 or edge[tree[kids], kids].sum() >= bar * (1 - _TOLERANCE)
                or (parents == tree).all(axis=1).any()):
            return None
        self.left -= 1
        return np.vstack([parents, tree])


def _most() -> Solver:
    """The LP of balanced multicasting: the largest sum of rates.  A tree raises it when its
    price is below 1."""
    def solve(res: Resources) -> tuple[np.ndarray, np.ndarray, float]:
        solution = _linprog(-np.ones(res.usage.shape[1]), A_ub=res.usage, b_ub=res.capacity)
        return solution.x, -solution.ineqlin.marginals, 1.0
    return solve


def _spread(total: float, binding: np.ndarray) -> Solver:
    """The sum ``total`` at the least largest share of any resource but the ``binding``
    ones (positions, as :attr:`Resources.position`), which may stay full.  A tree helps
    when its price is below the price of the sum."""
    def solve(res: Resources) -> tuple[np.ndarray, np.ndarray, float]:
        free = ~np.isin(res.position, binding)
        usage = sparse.hstack([res.usage, sparse.csr_array(-(res.capacity * free)[:, None])])
        objective = np.zeros(usage.shape[1])
        objective[-1] = 1.0
        whole = np.ones((1, usage.shape[1]))
        whole[0, -1] = 0.0
        solution = _linprog(objective, A_ub=usage.tocsc(), b_ub=res.capacity * ~free,
                            A_eq=whole, b_eq=[total])
        return solution.x[:-1], -solution.ineqlin.marginals, float(solution.eqlin.marginals[0])
    return solve


def _linprog(objective: np.ndarray, **constraints):
    from scipy.optimize import linprog   # 0.25 s to import: only when planning

    solution = linprog(objective, bounds=(0, None), method="highs", **constraints)
    if solution.status != 0:
        raise RuntimeError(f"the balanced multicasting LP failed: {solution.message}")
    return solution


def _positions(network: Network) -> int:
    """How many resources a network has (:attr:`Resources.position` runs below it)."""
    n = network.size
    return 2 * n + n * n + len(network.shared)
