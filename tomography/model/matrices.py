"""The checks every weight matrix passes, whatever it came from."""

from __future__ import annotations

from typing import Any, Hashable, Sequence

import numpy as np
from scipy import sparse

from tomography.model.errors import EmptyGraphError, GraphError
from tomography.model.hostnames import repeated

__all__ = ["checked_matrix"]


def checked_matrix(matrix: Any, nodes: Sequence[Hashable] | None = None) -> sparse.csr_array:
    """``matrix`` as a float64 CSR array, once it is a weight matrix: square, not empty,
    finite, non-negative and symmetric, its ``nodes`` (when given) distinct.

    Raises
    ------
    GraphError
        Naming what is wrong (:class:`~tomography.model.errors.EmptyGraphError` for no nodes).

    Examples
    --------
    >>> checked_matrix(np.array([[0, 2], [2, 0]])).toarray().tolist()
    [[0.0, 2.0], [2.0, 0.0]]
    >>> checked_matrix(np.array([[0, 1], [5, 0]]))
    Traceback (most recent call last):
    ...
    tomography.model.errors.GraphError: the weight matrix is not symmetric: w[0, 1] = 1.0 but w[1, 0] = 5.0
    """
    matrix = sparse.csr_array(matrix).astype(np.float64)
    if matrix.shape[0] != matrix.shape[1]:
        raise GraphError(f"expected a square weight matrix, got shape {matrix.shape}")
    if matrix.shape[0] == 0:
        raise EmptyGraphError("the graph has no nodes")
    if nodes is not None and len(set(nodes)) != len(nodes):
        raise GraphError(f"host names must be distinct: {repeated(nodes)!r} names two rows")
    if not np.all(np.isfinite(matrix.data)):
        raise GraphError("the weight matrix has NaN or infinite weights")
    if np.any(matrix.data < 0):
        raise GraphError("the weight matrix has negative weights; block counts are >= 0")
    diff = (matrix - matrix.T).tocoo()
    big = np.abs(diff.data) > 1e-9 * max(1.0, float(np.abs(matrix.data).max(initial=0)))
    if np.any(big):
        i, j = int(diff.row[big][0]), int(diff.col[big][0])
        a, b = (i, j) if nodes is None else (repr(nodes[i]), repr(nodes[j]))
        raise GraphError(f"the weight matrix is not symmetric: w[{a}, {b}] = {matrix[i, j]} "
                         f"but w[{b}, {a}] = {matrix[j, i]}")
    matrix.eliminate_zeros()
    return matrix
