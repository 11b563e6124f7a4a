"""The cheapest spanning arborescence (Chu-Liu/Edmonds) against enumeration of every tree."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tomography.model.errors import TomographyError
from tomography.planning import cheapest_arborescence


def cheapest_by_enumeration(cost: np.ndarray, root: int) -> float:
    """The least total cost over every choice of a parent per node that reaches the root."""
    n = len(cost)
    others = [v for v in range(n) if v != root]
    best = np.inf
    for choice in itertools.product(range(n), repeat=n - 1):
        parent = dict(zip(others, choice))
        if any(p == v or not np.isfinite(cost[p, v]) for v, p in parent.items()):
            continue
        reaches = True
        for v in others:
            for _ in range(n):
                if v == root:
                    break
                v = parent[v]
            reaches &= v == root
        if reaches:
            best = min(best, sum(cost[p, v] for v, p in parent.items()))
    return best


def test_the_cheapest_tree_on_random_graphs() -> None:
    rng = np.random.default_rng(7)
    for trial in range(300):
        n = int(rng.integers(2, 6))
        cost = rng.integers(0, 10, (n, n)).astype(float)
        cost[rng.random((n, n)) < 0.3] = np.inf
        root = int(rng.integers(n))
        best = cheapest_by_enumeration(cost, root)
        if not np.isfinite(best):
            with pytest.raises(TomographyError, match=f"no spanning tree from node {root}"):
                cheapest_arborescence(cost, root)
            continue
        parent = cheapest_arborescence(cost, root)
        assert parent[root] == -1
        children = [v for v in range(n) if v != root]
        assert np.isfinite(cost[parent[children], children]).all()
        assert cost[parent[children], children].sum() == pytest.approx(best), trial
        for v in children:                      # a tree: every node reaches the root
            for _ in range(n):
                v = parent[v] if v != root else v
            assert v == root


def test_nested_cycles_are_expanded() -> None:
    """Cheap edges 1 -> 2 -> 3 -> 1 form a cycle, and the contracted cycle forms another with
    4; the root's cheapest way in is through 4."""
    inf = np.inf
    cost = np.full((5, 5), inf)
    cost[1, 2] = cost[2, 3] = cost[3, 1] = 1
    cost[3, 4] = 1
    cost[4, 1] = 2
    cost[0, 4] = 5
    cost[0, 2] = 9
    parent = cheapest_arborescence(cost, 0)
    assert parent.tolist() == [-1, 4, 1, 2, 0]
    assert cheapest_by_enumeration(cost, 0) == 5 + 2 + 1 + 1


def test_errors_name_what_is_wrong() -> None:
    with pytest.raises(TomographyError, match="square with the root 3 among its 2 nodes"):
        cheapest_arborescence(np.zeros((2, 2)), 3)
    with pytest.raises(TomographyError, match="NaN"):
        cheapest_arborescence([[0, np.nan], [1, 0]], 0)
    with pytest.raises(TomographyError, match="nothing reaches node 2"):
        cheapest_arborescence([[0, 1, np.inf], [1, 0, np.inf], [1, 1, 0]], 0)
