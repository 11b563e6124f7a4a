"""Multicast trees and the tree builders the planners compare (den Burger et al. 2005, 2.3, 3.1).

A multicast tree is a spanning arborescence: the root sends, every other
node receives from its parent and forwards to its children, all pipelined.
The builders never use a dead link (achievable bandwidth 0):

- :func:`flat_tree`: the root sends to every node itself;
- :func:`semi_flat_tree`: a spanning tree of minimum height over live
  links, the one with the highest throughput (den Burger 2009, section 3.2.3);
- :func:`max_bottleneck_tree`: Prim's variant that maximizes the smallest
  achievable bandwidth on the tree;
- :func:`fpfr_trees`: the trees of Fast Parallel File Replication, each
  reserving its bottleneck bandwidth on its links;
- :func:`arborescences`: every spanning tree, for the exact optimum.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np
from scipy import sparse

from tomography.model.errors import TomographyError
from tomography.planning.network import Network

__all__ = ["Tree", "MethodUnavailable", "flat_tree", "semi_flat_tree", "max_bottleneck_tree",
           "fpfr_trees", "arborescences"]


class MethodUnavailable(TomographyError):
    """A planning method cannot be used on this network.

    The flat tree over a dead link, or the exact optimum of a network too
    large to enumerate; the other methods may still work.
    """


@dataclass(frozen=True)
class Tree:
    """A spanning arborescence over node indices.

    Parameters
    ----------
    root : int
        Index of the sending node.
    parent : tuple of int
        Parent of each node; -1 at the root.

    Raises
    ------
    TomographyError
        If ``parent`` is not a tree rooted at ``root`` that spans every node.

    Examples
    --------
    >>> t = Tree.from_edges(4, 0, [(0, 1), (1, 2), (0, 3)])
    >>> t.parent, t.edges, t.depth, t.out_degree.tolist()
    ((-1, 0, 1, 0), [(0, 1), (0, 3), (1, 2)], 2, [2, 1, 0, 0])
    >>> Tree(0, (-1, 2, 1))
    Traceback (most recent call last):
    ...
    tomography.model.errors.TomographyError: nodes 1, 2 do not reach the root 0: the parents form a cycle
    """

    root: int
    parent: tuple[int, ...]

    def __post_init__(self) -> None:
        parent = tuple(int(p) for p in self.parent)
        n = len(parent)
        if not 0 <= self.root < n or parent[self.root] != -1:
            raise TomographyError(f"the root {self.root} must be a node with parent -1")
        for v, p in enumerate(parent):
            if v != self.root and not (0 <= p < n and p != v):
                raise TomographyError(f"node {v} has parent {p}, not another node of 0..{n - 1}")
        object.__setattr__(self, "parent", parent)
        stray = [v for v, d in enumerate(self._levels()) if d < 0]
        if stray:
            raise TomographyError(f"nodes {', '.join(map(str, stray))} do not reach the root "
                                  f"{self.root}: the parents form a cycle")

    @classmethod
    def from_edges(cls, size: int, root: int, edges: Iterable[tuple[int, int]]) -> "Tree":
        """A tree from its ``(parent, child)`` edges over ``size`` nodes.

        Examples
        --------
        >>> Tree.from_edges(3, 2, [(2, 0), (2, 1)]).parent
        (2, 2, -1)
        """
        parent = [-1] * size
        for p, v in edges:
            if parent[v] != -1:
                raise TomographyError(f"node {v} has two parents, {parent[v]} and {p}")
            parent[v] = p
        return cls(root, tuple(parent))

    @property
    def size(self) -> int:
        """Number of nodes."""
        return len(self.parent)

    @property
    def edges(self) -> list[tuple[int, int]]:
        """``(parent, child)`` pairs, top of the tree first, then by child."""
        levels = self._levels()
        return [(self.parent[v], v) for v in sorted(range(self.size), key=lambda v: (levels[v], v))
                if v != self.root]

    @property
    def depth(self) -> int:
        """Height: the number of links on the longest path from the root."""
        return max(self._levels())

    @property
    def out_degree(self) -> np.ndarray:
        """Number of children of each node."""
        parents = [p for p in self.parent if p >= 0]
        return np.bincount(np.asarray(parents, dtype=int), minlength=self.size)

    def edge_names(self, nodes: Sequence[str]) -> list[tuple[str, str]]:
        """:attr:`edges` with node names.

        Examples
        --------
        >>> Tree(0, (-1, 0, 1)).edge_names(["x", "y", "z"])
        [('x', 'y'), ('y', 'z')]
        """
        return [(nodes[p], nodes[v]) for p, v in self.edges]

    def _levels(self) -> list[int]:
        """Distance of each node from the root; -1 for a node on a cycle."""
        levels = [-1] * self.size
        levels[self.root] = 0
        for start in range(self.size):
            path, v = [], start
            while levels[v] < 0 and v not in path:
                path.append(v)
                v = self.parent[v]
            if levels[v] >= 0:
                for step, u in enumerate(reversed(path), start=1):
                    levels[u] = levels[v] + step
        return levels


def flat_tree(network: Network, root: str) -> Tree:
    """The root sends to every other node directly.

    Raises
    ------
    MethodUnavailable
        If a link from the root is dead; den Burger 2009, section 3.2.3 uses
        :func:`semi_flat_tree` instead.

    Examples
    --------
    >>> from tomography.planning.network import gridlab8, lp_example
    >>> flat_tree(lp_example(), "y").edges
    [(1, 0), (1, 2)]
    >>> flat_tree(gridlab8(), "n0")
    Traceback (most recent call last):
    ...
    tomography.planning.trees.MethodUnavailable: no flat tree from 'n0': dead links to cluster3, ia64, mike4, pegasos; use the semi-flat tree
    """
    r = _root_index(network, root)
    dead = [network.nodes[v] for v in range(network.size) if v != r and not network.live[r, v]]
    if dead:
        raise MethodUnavailable(f"no flat tree from {root!r}: dead links to {', '.join(dead)}; "
                                "use the semi-flat tree")
    return Tree(r, tuple(-1 if v == r else r for v in range(network.size)))


def semi_flat_tree(network: Network, root: str) -> Tree:
    """The spanning tree of minimum height over live links with the highest throughput.

    The minimum height ``H`` is that of a breadth-first search from the
    root; every tree of height ``H`` over live links is a semi-flat tree
    (den Burger 2009, section 3.2.3), including those that hang a node below a node of
    its own breadth-first layer.  Among them the best (000: "if multiple
    semi-flat trees existed, we used the one with the highest throughput")
    is found exactly: the largest throughput ``t`` such that some tree of
    height ``H`` has every link at least ``t``, every receiver an incoming
    capacity of at least ``t`` and no node more than ``out_capacity / t``
    children, by bisection over the values ``t`` can take, each tested with
    a small integer program (a parent and a depth for every node).
    Single-tree throughput is that of
    :func:`tomography.planning.throughput.predict`.

    Examples
    --------
    ``n0`` reaches only fs0, helix and eltoro, so the height is 2.  A tree
    whose first layer is exactly those three uses the slow ``n0 -> helix``
    link (0.37); the best tree reaches helix from fs0 instead (0.45, the
    ``fs0 -> helix`` link, its bottleneck):

    >>> from tomography.planning.network import gridlab8
    >>> from tomography.planning.throughput import predict
    >>> net = gridlab8()
    >>> t = semi_flat_tree(net, "n0")
    >>> t.depth, t.parent[net.index("helix")] == net.index("n0")
    (2, False)
    >>> predict(net, [t], coordinated=False).throughput
    0.45
    """
    r = _root_index(network, root)
    distance = np.full(network.size, -1)
    for level, layer in enumerate(_layers(network, r)):
        distance[layer] = level
    n = network.size
    receivers = np.arange(n) != r
    values = [network.bandwidth[network.live], network.in_capacity[receivers],
              (network.out_capacity[:, None] / np.arange(1, n)).ravel(), [0.0]]
    candidates = np.unique(np.concatenate(values))
    lo, hi = 0, len(candidates) - 1        # candidates[lo] = 0 is always feasible
    best = _bounded_tree(network, r, distance, candidates[lo])
    while lo < hi:
        mid = (lo + hi + 1) // 2
        found = _bounded_tree(network, r, distance, candidates[mid])
        if found is None:
            hi = mid - 1
        else:
            lo, best = mid, found
    assert best is not None
    return Tree(r, tuple(best))


def max_bottleneck_tree(network: Network, root: str) -> Tree:
    """The tree whose smallest achievable bandwidth is largest (Prim's variant).

    Grows the tree from the root, each time adding the node reached by the
    live link of highest bandwidth from the tree (ties: the lowest node
    index, then the node added first).  Local capacities are not looked at.

    Examples
    --------
    >>> from tomography.planning.network import lp_example
    >>> net = lp_example()
    >>> max_bottleneck_tree(net, "x").edge_names(net.nodes)   # den Burger 2009, 3.2b: throughput 8
    [('x', 'y'), ('x', 'z')]
    """
    r = _root_index(network, root)
    n = network.size
    inside = np.zeros(n, dtype=bool)
    inside[r] = True
    best = network.bandwidth[r].copy()
    parent = [-1 if v == r else r for v in range(n)]
    for _ in range(n - 1):
        reach = np.where(inside, -1.0, best)
        v = int(np.argmax(reach))
        if reach[v] <= 0:
            raise _unreachable(network, root, inside)
        inside[v] = True
        better = ~inside & (network.bandwidth[v] > best)
        best[better] = network.bandwidth[v, better]
        for u in np.flatnonzero(better):
            parent[u] = v
    return Tree(r, tuple(parent))


def fpfr_trees(network: Network, root: str) -> tuple[list[Tree], np.ndarray]:
    """The trees of Fast Parallel File Replication, with the rate each reserves.

    Repeatedly: a depth-first search from the root (neighbours in node
    order) over the links with bandwidth left; if it spans every node, its
    bottleneck (the least bandwidth left on its links) is reserved on all
    its links.  Stops when no spanning tree remains.  Local capacities are
    ignored, which is FPFR's flaw: the sum of the rates is what FPFR
    expects, not what it gets (:func:`tomography.planning.throughput.predict`).

    Returns
    -------
    trees : list of Tree
    rates : array of float
        The reserved bottleneck of each tree.

    Examples
    --------
    >>> from tomography.planning.network import lp_example
    >>> net = lp_example()
    >>> trees, rates = fpfr_trees(net, "x")
    >>> [t.edge_names(net.nodes) for t in trees]
    [[('x', 'y'), ('y', 'z')], [('x', 'y'), ('x', 'z')], [('x', 'z'), ('z', 'y')]]
    >>> rates.tolist()
    [4.0, 6.0, 2.0]
    """
    r = _root_index(network, root)
    left = network.bandwidth.copy()
    tolerance = 1e-12 * max(float(left.max()), 1e-300)
    trees: list[Tree] = []
    rates: list[float] = []
    while True:
        parent, reached = _depth_first(left > tolerance, r)
        if not reached.all():
            break
        tree = Tree(r, tuple(parent))
        p, v = np.array(tree.edges).T
        rate = float(left[p, v].min())
        left[p, v] -= rate
        trees.append(tree)
        rates.append(rate)
    if not trees:
        raise _unreachable(network, root, reached)
    return trees, np.array(rates)


def arborescences(network: Network, root: str, *, max_nodes: int = 7) -> np.ndarray:
    """Every spanning tree rooted at ``root`` over live links, as parent rows.

    With ``n`` nodes and no dead link there are ``n ** (n - 2)`` of them
    (Cayley; 262,144 for 8 nodes), so networks above ``max_nodes`` are
    refused.  Enumerates every choice of a live parent per node, in chunks,
    and keeps the choices without a cycle.

    Returns
    -------
    array of int, shape (trees, n)
        ``[i, v]`` is the parent of node ``v`` in tree ``i``; -1 at the root.

    Raises
    ------
    MethodUnavailable
        Above ``max_nodes`` nodes.

    Examples
    --------
    >>> from tomography.planning.network import lp_example
    >>> arborescences(lp_example(), "x").tolist()
    [[-1, 0, 0], [-1, 2, 0], [-1, 0, 1]]
    """
    r = _root_index(network, root)
    n = network.size
    if n > max_nodes:
        raise MethodUnavailable(f"enumerating every spanning tree of {n} nodes (up to "
                                f"{n ** (n - 2):,} trees) is refused above max_nodes={max_nodes}; "
                                f"pass max_nodes={n} (--max-nodes {n}) to allow it")
    _layers(network, r)                      # every node must be reachable
    others = [v for v in range(n) if v != r]
    choices = [np.flatnonzero(network.live[:, v]) for v in others]
    total = math.prod(len(c) for c in choices)
    jumps = max(1, math.ceil(math.log2(n)))
    found = []
    for start in range(0, total, 1 << 18):
        codes = np.arange(start, min(total, start + (1 << 18)))
        parents = np.full((len(codes), n), r)
        for v, options in zip(others, choices):
            codes, digit = np.divmod(codes, len(options))
            parents[:, v] = options[digit]
        ancestor = parents
        for _ in range(jumps):
            ancestor = np.take_along_axis(ancestor, ancestor, axis=1)
        found.append(parents[(ancestor == r).all(axis=1)])
    trees = np.concatenate(found)
    trees[:, r] = -1
    return trees


def _root_index(network: Network, root: str) -> int:
    if network.size < 2:
        raise TomographyError("a multicast needs at least two nodes")
    return network.index(root)


def _unreachable(network: Network, root: str, reached: np.ndarray) -> TomographyError:
    missing = [network.nodes[v] for v in np.flatnonzero(~reached)]
    return TomographyError(f"no spanning tree from {root!r} over live links: it cannot reach "
                           f"{', '.join(missing)}")


def _layers(network: Network, r: int) -> list[np.ndarray]:
    """Breadth-first layers from node ``r`` over live links; all nodes must be reached."""
    reached = np.zeros(network.size, dtype=bool)
    reached[r] = True
    layers = [np.array([r])]
    while True:
        nxt = network.live[layers[-1]].any(axis=0) & ~reached
        if not nxt.any():
            break
        reached |= nxt
        layers.append(np.flatnonzero(nxt))
    if not reached.all():
        raise _unreachable(network, network.nodes[r], reached)
    return layers


def _bounded_tree(network: Network, r: int, distance: np.ndarray,
                  rate: float) -> list[int] | None:
    """Parents of a tree of height ``distance.max()`` and throughput ``rate``, or None.

    An integer program over ``x[u, v, d]``, 1 when ``u`` is the parent of
    ``v`` and ``v`` is at depth ``d``: every receiver has one parent at one
    depth, no lower than its distance from ``r``; a node at depth ``d - 1``
    has at most ``out_capacity / rate`` children at depth ``d`` and a node
    not at depth ``d - 1`` none.  Only links of at least ``rate`` are
    offered, so any solution is a tree of that height and throughput.
    """
    n, height = network.size, int(distance.max())
    receivers = np.arange(n) != r
    if (network.in_capacity[receivers] < rate).any():
        return None
    if rate > 0:
        slots = np.minimum(np.floor(network.out_capacity / rate + 1e-9), n - 1)
    else:
        slots = np.full(n, n - 1.0)
    links = network.live & (network.bandwidth >= rate)
    links[:, r] = False
    columns = [(u, v, d) for u, v in zip(*np.nonzero(links)) if slots[u] > 0
               for d in range(max(int(distance[v]), int(distance[u]) + 1), height + 1)
               if (u == r) == (d == 1)]
    if not columns:
        return None
    u, v, d = (np.array(c) for c in zip(*columns))
    k = np.arange(len(columns))
    # one parent per receiver: sum over (u, d) of x[u, v, d] == 1
    one = sparse.csr_array((np.ones(len(k)), (v, k)), shape=(n, len(k)))[[
        w for w in range(n) if w != r]]
    # children of w at depth e <= slots[w] * (w at depth e - 1), for e = 1..height
    below = d < height                             # v may have children at depth d + 1
    rows = np.concatenate([u * (height + 1) + d, v[below] * (height + 1) + d[below] + 1])
    cols = np.concatenate([k, k[below]])
    coef = np.concatenate([np.ones(len(k)), -slots[v[below]]])
    room = np.zeros(n * (height + 1))
    room[r * (height + 1) + 1] = slots[r]         # the root is at depth 0
    share = sparse.csr_array((coef, (rows, cols)), shape=(n * (height + 1), len(k)))
    from scipy.optimize import Bounds, LinearConstraint, milp   # 0.25 s to import

    constraints = [LinearConstraint(one, 1, 1), LinearConstraint(share, -np.inf, room)]
    solution = milp(np.zeros(len(k)), constraints=constraints, integrality=np.ones(len(k)),
                    bounds=Bounds(0, 1))
    if solution.status == 2:                       # infeasible: no such tree
        return None
    if solution.status != 0 or solution.x is None:
        raise RuntimeError(f"the semi-flat tree's integer program failed: {solution.message}")
    parent = [-1] * n
    for j in np.flatnonzero(solution.x > 0.5):
        parent[v[j]] = int(u[j])
    return parent


def _depth_first(usable: np.ndarray, r: int) -> tuple[list[int], np.ndarray]:
    """Depth-first tree from ``r`` over ``usable`` links, visiting neighbours in node order."""
    parent = [-1] * len(usable)
    reached = np.zeros(len(usable), dtype=bool)
    reached[r] = True
    stack = [(r, iter(np.flatnonzero(usable[r]).tolist()))]
    while stack:
        u, neighbours = stack[-1]
        v = next((w for w in neighbours if not reached[w]), None)
        if v is None:
            stack.pop()
            continue
        reached[v] = True
        parent[v] = u
        stack.append((v, iter(np.flatnonzero(usable[v]).tolist())))
    return parent, reached
