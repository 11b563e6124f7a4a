"""Weighted modularity (Eq 5.1) over sparse matrices."""

from __future__ import annotations

import numpy as np
from scipy import sparse

from cluster.adjacency import as_adjacency
from tomography.model.errors import EmptyGraphError, ParameterError

__all__ = ["modularity", "canonical_labels"]


def modularity(graph, labels: np.ndarray, *, resolution: float = 1.0) -> float:
    """Newman's weighted modularity ``Q = sum_c (L_c / m - resolution * (d_c / 2m)^2)``.

    Self-loops follow the convention of networkx, igraph and python-louvain:
    a loop of weight ``w`` adds ``w`` to ``m`` and to ``L_c``, and ``2w`` to
    its node's degree.

    Parameters
    ----------
    graph : sparse array, ndarray or networkx.Graph
        Symmetric non-negative weights.
    labels : array of int
        Community of each node.
    resolution : float, default 1.0

    Returns
    -------
    float

    Examples
    --------
    >>> import networkx as nx
    >>> g = nx.barbell_graph(3, 0)
    >>> A = nx.to_scipy_sparse_array(g, nodelist=sorted(g))
    >>> labels = np.array([0, 0, 0, 1, 1, 1])
    >>> round(modularity(A, labels), 6) == round(nx.community.modularity(g, [{0, 1, 2}, {3, 4, 5}]), 6)
    True
    """
    A, _ = as_adjacency(graph)
    labels = np.asarray(labels)
    if labels.shape != (A.shape[0],):
        raise ParameterError(f"labels has shape {labels.shape}; expected ({A.shape[0]},)")
    diag = A.diagonal()
    degree = np.asarray(A.sum(axis=1)).ravel() + diag
    m = (degree.sum()) / 2.0
    if m == 0:
        raise EmptyGraphError("modularity is undefined on a graph with no edge weight")
    _, codes = np.unique(labels, return_inverse=True)
    k = int(codes.max()) + 1
    P = sparse.csr_array((np.ones(len(codes)), (np.arange(len(codes)), codes)), shape=(len(codes), k))
    inner = (P.T @ A @ P).diagonal()  # 2 * (edges inside) + loops inside
    loops = P.T @ diag
    internal = (inner + loops) / 2.0
    d = P.T @ degree
    return float(np.sum(internal / m - resolution * (d / (2.0 * m)) ** 2))


def canonical_labels(labels) -> np.ndarray:
    """Renumber communities 0, 1, ... in order of their first node.

    Examples
    --------
    >>> canonical_labels([5, 5, 2, 9, 2]).tolist()
    [0, 0, 1, 2, 1]
    """
    labels = np.asarray(labels)
    _, first, codes = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first)] = np.arange(len(first))
    return rank[codes.ravel()]
