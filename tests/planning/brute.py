"""Brute-force references for the planner tests: small random networks and tree arithmetic.

Everything here works on parent rows (``[i, v]`` = parent of ``v`` in tree
``i``, -1 at the root), as :func:`tomography.planning.arborescences` returns
them, and is written independently of the planners' own code.
"""

from __future__ import annotations

import numpy as np

from tomography.planning import Network


def random_network(rng: np.random.Generator, n: int, *, dead: float = 0.25,
                   root: int = 0) -> Network:
    """``n`` nodes, random capacities and links, some dead, every node reachable from ``root``.

    A random chain from the root through every node is kept live, so a
    spanning tree always exists; the other links are dead with probability
    ``dead``.  Values have two decimals, as in the thesis' tables.
    """
    bandwidth = rng.uniform(0.5, 10.0, (n, n)).round(2)
    bandwidth[rng.random((n, n)) < dead] = 0.0
    chain = [root] + [int(v) for v in rng.permutation([v for v in range(n) if v != root])]
    for u, v in zip(chain, chain[1:]):
        if bandwidth[u, v] == 0:
            bandwidth[u, v] = round(float(rng.uniform(0.5, 10.0)), 2)
    return Network.from_arrays(bandwidth, out_capacity=rng.uniform(1, 20, n).round(2),
                               in_capacity=rng.uniform(1, 20, n).round(2), unit="")


def depths(parents: np.ndarray) -> np.ndarray:
    """Depth of every node in every tree (0 at the root)."""
    parents = np.atleast_2d(parents)
    rows = np.arange(len(parents))[:, None]
    depth = np.zeros(parents.shape, dtype=int)
    current = parents.copy()
    for _ in range(parents.shape[1]):
        step = current >= 0
        if not step.any():
            break
        depth += step
        current = np.where(step, parents[rows, np.maximum(current, 0)], -1)
    return depth


def single_tree_rates(network: Network, parents: np.ndarray) -> np.ndarray:
    """Throughput of each tree alone: the min of its links, receivers' incoming
    capacity and each forwarder's outgoing capacity over its number of children."""
    parents = np.atleast_2d(parents)
    rate = np.full(len(parents), np.inf)
    for v in range(network.size):
        has_parent = parents[:, v] >= 0
        link = network.bandwidth[np.maximum(parents[:, v], 0), v]
        rate = np.where(has_parent, np.minimum(rate, np.minimum(link, network.in_capacity[v])),
                        rate)
        children = (parents == v).sum(axis=1)
        rate = np.where(children > 0,
                        np.minimum(rate, network.out_capacity[v] / np.maximum(children, 1)), rate)
    return rate


def bottleneck_links(network: Network, parents: np.ndarray) -> np.ndarray:
    """The smallest achievable bandwidth on each tree's links (capacities ignored)."""
    parents = np.atleast_2d(parents)
    child = np.arange(network.size)
    links = np.where(parents >= 0, network.bandwidth[np.maximum(parents, 0), child], np.inf)
    return links.min(axis=1)


def count_arborescences(network: Network, root: int) -> int:
    """Spanning arborescences rooted at ``root`` over live links, by the matrix-tree theorem.

    Tutte: the determinant of the in-degree Laplacian ``D_in - A`` with the
    root's row and column removed.
    """
    adjacency = network.live.astype(float)
    laplacian = np.diag(adjacency.sum(axis=0)) - adjacency
    keep = [v for v in range(network.size) if v != root]
    return int(round(np.linalg.det(laplacian[np.ix_(keep, keep)])))
