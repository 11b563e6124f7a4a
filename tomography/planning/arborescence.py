"""The cheapest spanning tree from a root: Chu-Liu/Edmonds over a dense cost matrix.

Balanced multicasting prices trees with it (:func:`tomography.planning.balanced_multicast`):
with the LP's price on every resource, a tree costs the sum of its edges'
prices, and the cheapest tree is the one to add if any tree would raise the
throughput.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from tomography.model.errors import TomographyError

__all__ = ["cheapest_arborescence"]


def cheapest_arborescence(cost: ArrayLike, root: int) -> np.ndarray:
    """The spanning arborescence from ``root`` of least total cost (Chu-Liu/Edmonds).

    Parameters
    ----------
    cost : array of float, shape (n, n)
        ``cost[u, v]`` is the cost of the edge ``u -> v``; ``inf`` where there
        is no edge.  The diagonal and the edges into ``root`` are ignored.
    root : int

    Returns
    -------
    array of int, shape (n,)
        The parent of every node, -1 at the root.

    Raises
    ------
    TomographyError
        If some node cannot be reached from ``root`` over finite edges.

    Notes
    -----
    Every node but the root takes its cheapest incoming edge.  If these
    edges form no cycle they are the answer; otherwise the cycle becomes
    one node, whose incoming edges cost what they cost less the edge of the
    cycle they would replace, and the smaller problem is solved the same
    way (Edmonds 1967).  At most ``n`` contractions of ``O(n^2)`` each.

    Examples
    --------
    The cheap edges ``1 -> 2`` and ``2 -> 1`` form a cycle; entering it at 2
    from the root costs 4 - 1 more than its own edge into 2, at 1 costs 5 - 1:

    >>> inf = float("inf")
    >>> cheapest_arborescence([[inf, 5, 4], [inf, inf, 1], [inf, 1, inf]], 0).tolist()
    [-1, 2, 0]
    """
    matrix = np.array(cost, dtype=float)
    n = len(matrix)
    if matrix.shape != (n, n) or not 0 <= root < n:
        raise TomographyError(f"cost must be square with the root {root} among its "
                              f"{n} nodes, got shape {matrix.shape}")
    if np.isnan(matrix).any():
        raise TomographyError("cost has NaN entries")
    return _edmonds(matrix, root, np.arange(n))


def _edmonds(cost: np.ndarray, root: int, names: np.ndarray) -> np.ndarray:
    """Parents of the cheapest arborescence; ``names`` are the nodes' original indices,
    for the error message."""
    n = len(cost)
    cost = cost.copy()
    np.fill_diagonal(cost, np.inf)
    cost[:, root] = np.inf
    parent = cost.argmin(axis=0)
    parent[root] = -1
    entering = cost[parent, np.arange(n)]
    entering[root] = 0.0
    stranded = np.flatnonzero(np.isinf(entering))
    if len(stranded):
        raise TomographyError(f"no spanning tree from node {names[root]}: nothing reaches "
                              f"node {', '.join(str(names[v]) for v in stranded)}")
    cycle = _cycle(parent, root)
    if cycle is None:
        return parent
    inside = np.zeros(n, dtype=bool)
    inside[cycle] = True
    outside = np.flatnonzero(~inside)
    here = len(outside)                       # the contracted cycle's index
    smaller = np.full((here + 1, here + 1), np.inf)
    smaller[:here, :here] = cost[np.ix_(outside, outside)]
    into = cost[np.ix_(outside, cycle)] - entering[cycle]
    enters = into.argmin(axis=1)              # where each outside node would enter the cycle
    smaller[:here, here] = into[np.arange(here), enters]
    out_of = cost[np.ix_(cycle, outside)]
    leaves = out_of.argmin(axis=0)            # which cycle node best feeds each outside node
    smaller[here, :here] = out_of[leaves, np.arange(here)]
    new_root = int(np.searchsorted(outside, root))
    merged = np.concatenate([names[outside], [names[cycle[0]]]])
    tree = _edmonds(smaller, new_root, merged)
    for j, v in enumerate(outside):
        if v != root:
            p = tree[j]
            parent[v] = outside[p] if p != here else cycle[leaves[j]]
    u = tree[here]
    parent[cycle[enters[u]]] = outside[u]
    return parent


def _cycle(parent: np.ndarray, root: int) -> np.ndarray | None:
    """The nodes of one cycle of ``parent`` (in their order along it), or None."""
    state = np.zeros(len(parent), dtype=np.int8)   # 0 new, 1 on the current walk, 2 done
    state[root] = 2
    for start in range(len(parent)):
        walk = []
        v = start
        while state[v] == 0:
            state[v] = 1
            walk.append(v)
            v = parent[v]
        if state[v] == 1:
            return np.array(walk[walk.index(v):])
        state[walk] = 2
    return None
