"""Validation of the graphs the clustering functions take, and their igraph form."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, Hashable

import numpy as np
from scipy import sparse

from tomography.model.errors import GraphError
from tomography.model.matrices import checked_matrix

if TYPE_CHECKING:
    import igraph
    import networkx as nx

__all__ = ["as_adjacency", "SharedGraph", "weight_unit_of", "igraph_graph",
           "upper_edges"]


def as_adjacency(graph: sparse.sparray | sparse.spmatrix | np.ndarray | "nx.Graph" | Any, *,
                 weight: str | None = "weight"
                 ) -> tuple[sparse.csr_array, list[Hashable] | None]:
    """Check a weighted graph and return it as a symmetric CSR array.

    Parameters
    ----------
    graph : sparse array or matrix, ndarray, pandas.DataFrame, networkx.Graph, EdgeWeights, Measurement or path
        Square, symmetric, finite and non-negative weights.  The diagonal
        holds self-loops.  A dataset (or its directory) gives its ``w_n`` (a
        probe dataset its bandwidths) in its host order.  A networkx graph is
        read in sorted node order with its ``weight`` attribute; a square
        DataFrame whose index and columns name the same hosts in its row
        order; any other DataFrame as an edge list
        (:func:`tomography.model.interop.from_pandas`: ``m.edges()``,
        ``networkx.to_pandas_edgelist(g)``); an
        :class:`tomography.model.interop.EdgeWeights` (or anything with ``matrix``
        and ``hosts``) in its own host order.
    weight : str or None, default "weight"
        The edge attribute of a networkx graph that holds the weight, as in
        networkx (or an edge list's weight column); None reads every edge as 1.  A graph whose edges lack it
        but carry another number is refused
        (:func:`tomography.model.interop.check_weight_attribute`).

    Returns
    -------
    adjacency : scipy.sparse.csr_array
        float64, explicit zeros removed.
    nodes : list or None
        The node of each row for a dataset, networkx, DataFrame or EdgeWeights
        input, else None.

    Raises
    ------
    GraphError
        Naming what is wrong: shape, asymmetry, negative or non-finite weights.

    Examples
    --------
    >>> A, nodes = as_adjacency(np.array([[0, 1], [1, 0]]))
    >>> A.shape, nodes
    ((2, 2), None)
    >>> as_adjacency(np.array([[0, 1], [2, 0]]))
    Traceback (most recent call last):
    ...
    tomography.model.errors.GraphError: the weight matrix is not symmetric: w[0, 1] = 1.0 but w[1, 0] = 2.0
    """
    if isinstance(graph, SharedGraph):
        return graph.matrix, graph.hosts
    nodes = None
    networkx = sys.modules.get("networkx")   # a networkx graph means networkx is loaded
    pandas = sys.modules.get("pandas")
    if hasattr(graph, "transfers") and hasattr(graph, "host_names"):   # a Measurement: its w_n
        from tomography.model.weights import mean_weights

        return checked_matrix(mean_weights(graph), graph.host_names), graph.host_names
    edges = (pandas is not None and isinstance(graph, pandas.DataFrame)
             and (graph.shape[0] != graph.shape[1] or list(graph.index) != list(graph.columns)))
    if edges or isinstance(graph, (str, os.PathLike)):   # an edge list, a dataset's directory
        from tomography.model.interop import as_weights

        graph = as_weights(graph, weight=weight)
    elif pandas is not None and isinstance(graph, pandas.DataFrame):
        nodes = list(graph.index)
        graph = graph.to_numpy(dtype=float)
    if hasattr(graph, "matrix") and hasattr(graph, "hosts"):
        nodes = list(graph.hosts)
        matrix = sparse.csr_array(graph.matrix)
    elif networkx is not None and isinstance(graph, networkx.Graph):
        from tomography.model.interop import check_weight_attribute

        if graph.is_directed():
            raise GraphError("expected an undirected graph; symmetrize it first (w = C + C^T)")
        check_weight_attribute(graph, weight)
        nodes = sorted(graph.nodes)
        matrix = networkx.to_scipy_sparse_array(graph, nodelist=nodes, weight=weight,
                                                format="csr")
    elif sparse.issparse(graph):
        matrix = sparse.csr_array(graph)
    else:
        array = np.asarray(graph)
        if array.ndim != 2:
            raise GraphError(f"expected a square weight matrix, got an array of shape {array.shape}")
        matrix = sparse.csr_array(array)
    return checked_matrix(matrix, nodes), nodes


def weight_unit_of(graph: Any) -> dict[str, str]:
    """``{"weight_unit": unit}`` for a graph that states its unit (``from_pandas(..., unit=)``).

    Examples
    --------
    >>> from tomography.model.interop import from_pandas
    >>> import pandas as pd
    >>> df = pd.DataFrame({"source": ["a"], "target": ["b"], "weight": [9.0]})
    >>> weight_unit_of(from_pandas(df, unit="Mbit/s")), weight_unit_of(np.eye(2))
    ({'weight_unit': 'Mbit/s'}, {})
    >>> df.attrs["unit"] = "Mbit/s"
    >>> weight_unit_of(df)
    {'weight_unit': 'Mbit/s'}
    """
    pandas = sys.modules.get("pandas")
    if pandas is not None and isinstance(graph, pandas.DataFrame):
        from tomography.model.interop import edge_unit

        unit = edge_unit(graph)
    else:
        unit = getattr(graph, "unit", None)
    return {"weight_unit": unit} if isinstance(unit, str) and unit != "weight" else {}


class SharedGraph:
    """A weight matrix checked once, with its igraph graph built once, for many analyses.

    Every clustering function takes it where it takes a matrix; none of them
    checks it again, and the igraph engine reuses :meth:`igraph` instead of
    converting the matrix on every call.  On a 4096-host graph of 1.3 million
    edges the check costs about 0.1 s and the conversion 0.5 s.

    Parameters
    ----------
    graph : sparse array, ndarray, networkx.Graph or EdgeWeights
        As :func:`as_adjacency` takes it.
    hosts : list of str, optional
        The node of each row (default: the input's own nodes, if any).
    weight : str or None, default "weight"
        A networkx graph's weight attribute (:func:`as_adjacency`).

    Examples
    --------
    >>> g = SharedGraph(np.array([[0, 2.0], [2.0, 0]]), ["a", "b"])
    >>> as_adjacency(g)[1], g.igraph() is g.igraph()
    (['a', 'b'], True)
    """

    def __init__(self, graph: Any, hosts: list[Hashable] | None = None, *,
                 weight: str | None = "weight") -> None:
        self.matrix, nodes = as_adjacency(graph, weight=weight)
        self.hosts = list(hosts) if hosts is not None else nodes
        self._igraph = None

    @classmethod
    def checked(cls, matrix: sparse.csr_array, hosts: list[Hashable] | None = None
                ) -> "SharedGraph":
        """Wrap a matrix :func:`as_adjacency` has already returned, without checking it again.

        Examples
        --------
        >>> A, _ = as_adjacency(np.array([[0, 2.0], [2.0, 0]]))
        >>> SharedGraph.checked(A).matrix is A
        True
        """
        out = cls.__new__(cls)
        out.matrix, out.hosts, out._igraph = matrix, hosts, None
        return out

    @property
    def shape(self) -> tuple[int, int]:
        """The matrix's shape."""
        return self.matrix.shape

    def igraph(self):
        """The weighted igraph graph of the matrix (built on first use)."""
        if self._igraph is None:
            self._igraph = igraph_graph(self.matrix)
        return self._igraph


def upper_edges(A: sparse.csr_array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows, columns and weights of the upper triangle (diagonal included), in CSR order.

    Examples
    --------
    >>> rows, cols, data = upper_edges(sparse.csr_array(np.array([[0, 2.0], [2.0, 0]])))
    >>> rows.tolist(), cols.tolist(), data.tolist()
    ([0], [1], [2.0])
    """
    coo = sparse.triu(A, format="coo")
    return coo.row, coo.col, coo.data


def igraph_graph(A: sparse.csr_array) -> "igraph.Graph":
    """The weighted igraph graph of a symmetric matrix, built once to be reused.

    The upper triangle (diagonal included, as self-loops) becomes the edge
    list, in CSR order; the weights are the edge attribute ``weight``.  Vertex
    ``i`` is row ``i``, so :meth:`igraph.Graph.induced_subgraph` of sorted
    indices keeps their order.

    Examples
    --------
    >>> g = igraph_graph(sparse.csr_array(np.array([[0, 2.0], [2.0, 0]])))
    >>> g.vcount(), g.es["weight"]
    (2, [2.0])
    """
    import igraph

    rows, cols, data = upper_edges(A)
    # two flat lists zipped convert several times faster than a 2-column array's tolist()
    g = igraph.Graph(n=A.shape[0], edges=list(zip(rows.tolist(), cols.tolist())))
    g.es["weight"] = data.tolist()
    return g
