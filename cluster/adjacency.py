"""Validation of the graphs the clustering functions take."""

from __future__ import annotations

from typing import Hashable

import networkx as nx
import numpy as np
from scipy import sparse

__all__ = ["as_adjacency"]


def as_adjacency(graph: sparse.sparray | sparse.spmatrix | np.ndarray | nx.Graph
                 ) -> tuple[sparse.csr_array, list[Hashable] | None]:
    """Check a weighted graph and return it as a symmetric CSR array.

    Parameters
    ----------
    graph : sparse array or matrix, ndarray, or networkx.Graph
        Square, symmetric, finite and non-negative weights.  The diagonal
        holds self-loops.  A networkx graph is read in sorted node order with
        its ``weight`` attribute (1 where missing).

    Returns
    -------
    adjacency : scipy.sparse.csr_array
        float64, explicit zeros removed.
    nodes : list or None
        The node of each row for a networkx input, else None.

    Raises
    ------
    ValueError
        Naming what is wrong: shape, asymmetry, negative or non-finite weights.

    Examples
    --------
    >>> A, nodes = as_adjacency(np.array([[0, 1], [1, 0]]))
    >>> A.shape, nodes
    ((2, 2), None)
    >>> as_adjacency(np.array([[0, 1], [2, 0]]))
    Traceback (most recent call last):
    ...
    ValueError: the weight matrix is not symmetric: w[0, 1] = 1.0 but w[1, 0] = 2.0
    """
    nodes = None
    if isinstance(graph, nx.Graph):
        if graph.is_directed():
            raise ValueError("expected an undirected graph; symmetrize it first (w = C + C^T)")
        nodes = sorted(graph.nodes)
        matrix = nx.to_scipy_sparse_array(graph, nodelist=nodes, weight="weight", format="csr")
    elif sparse.issparse(graph):
        matrix = sparse.csr_array(graph)
    else:
        array = np.asarray(graph)
        if array.ndim != 2:
            raise ValueError(f"expected a square weight matrix, got an array of shape {array.shape}")
        matrix = sparse.csr_array(array)
    matrix = matrix.astype(np.float64)
    if matrix.shape[0] != matrix.shape[1]:
        raise ValueError(f"expected a square weight matrix, got shape {matrix.shape}")
    if matrix.shape[0] == 0:
        raise ValueError("the graph has no nodes")
    if not np.all(np.isfinite(matrix.data)):
        raise ValueError("the weight matrix has NaN or infinite weights")
    if np.any(matrix.data < 0):
        raise ValueError("the weight matrix has negative weights; block counts are >= 0")
    diff = (matrix - matrix.T).tocoo()
    big = np.abs(diff.data) > 1e-9 * max(1.0, float(np.abs(matrix.data).max(initial=0)))
    if np.any(big):
        i, j = int(diff.row[big][0]), int(diff.col[big][0])
        raise ValueError(f"the weight matrix is not symmetric: w[{i}, {j}] = {matrix[i, j]} "
                         f"but w[{j}, {i}] = {matrix[j, i]}")
    matrix.eliminate_zeros()
    return matrix, nodes
