"""Topology as a tree (SPEC section 6): flat clusters, collapse, maximum spanning tree."""

from __future__ import annotations

import igraph
import networkx as nx
import numpy as np
from scipy import sparse
from scipy.sparse.csgraph import minimum_spanning_tree

from cluster.adjacency import as_adjacency
from cluster.averaged_edge import DEFAULT_LINKAGE, Linkage, collapse
from cluster.louvain import Level, louvain
from tomography.hierarchy import Cluster, ClusterTree, TreeEdge
from tomography.seeding import Seed

__all__ = ["maximum_spanning_tree", "cluster_tree", "MST_METHODS"]

MST_METHODS = ("scipy", "igraph", "networkx")


def maximum_spanning_tree(graph, *, method: str = "scipy") -> list[tuple[int, int, float]]:
    """Edges of a maximum spanning tree (a forest if the graph is disconnected).

    Parameters
    ----------
    graph : sparse array, ndarray or networkx.Graph
        Symmetric non-negative weights; the diagonal is ignored and zero
        weight means no edge.
    method : {"scipy", "igraph", "networkx"}, default "scipy"
        All give a tree of the same total weight; with ties the edges may differ.

    Returns
    -------
    list of (i, j, weight)
        ``i < j``, heaviest first.

    Examples
    --------
    >>> w = np.array([[0, 5, 1], [5, 0, 3], [1, 3, 0]], dtype=float)
    >>> maximum_spanning_tree(w)
    [(0, 1, 5.0), (1, 2, 3.0)]
    """
    if method not in MST_METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {', '.join(MST_METHODS)}")
    A, _ = as_adjacency(graph)
    upper = sparse.triu(A, k=1, format="coo")
    rows, cols, data = upper.row, upper.col, upper.data
    if method == "scipy":
        # Kruskal depends only on the order of weights: flip it, keep weights positive.
        flipped = sparse.coo_array((data.max(initial=0) + 1.0 - data, (rows, cols)), shape=A.shape)
        tree = minimum_spanning_tree(flipped).tocoo()
        chosen = {(min(i, j), max(i, j)) for i, j in zip(tree.row.tolist(), tree.col.tolist())}
    elif method == "igraph":
        g = igraph.Graph(n=A.shape[0], edges=np.column_stack([rows, cols]).tolist())
        ids = g.spanning_tree(weights=(-data).tolist(), return_tree=False)
        chosen = {(int(rows[e]), int(cols[e])) for e in ids}
    else:
        g = nx.Graph()
        g.add_nodes_from(range(A.shape[0]))
        g.add_weighted_edges_from(zip(rows.tolist(), cols.tolist(), data.tolist()))
        chosen = {(min(i, j), max(i, j)) for i, j in nx.maximum_spanning_edges(g, data=False)}
    edges = [(i, j, float(A[i, j])) for i, j in chosen]
    return sorted(edges, key=lambda e: (-e[2], e[0], e[1]))


def cluster_tree(graph, hosts: list[str] | None = None, *, linkage: Linkage = DEFAULT_LINKAGE,
                 level: Level = "best", engine: str = "igraph", resolution: float = 1.0,
                 restarts: int = 1, self_loop: float = 0.0, seed: Seed = None,
                 method: str = "scipy") -> ClusterTree:
    """The topology as a tree of bandwidth clusters.

    Flat clustering (:func:`cluster.louvain.louvain`), then each cluster
    collapsed to a node with averaged weights (:func:`cluster.averaged_edge.collapse`),
    then the maximum spanning tree of the collapsed graph.

    Parameters
    ----------
    graph : sparse array, ndarray or networkx.Graph
        Host-level weights ``w_n``.
    hosts : list of str, optional
        Name of each row.
    linkage : {"mean", "thesis", "sum"}, default DEFAULT_LINKAGE ("mean")
        See :func:`cluster.averaged_edge.collapse`.
    level : {"best", "finest"}, default "best"
        Louvain level of the flat clustering (the thesis uses "best").
    engine, resolution, restarts, self_loop, seed
        Passed to :func:`cluster.louvain.louvain`; ``self_loop`` set to a
        large weight makes every host its own cluster, for networks of one
        host per router.
    method : {"scipy", "igraph", "networkx"}
        Spanning tree implementation.

    Returns
    -------
    ClusterTree

    Examples
    --------
    A chain of three hosts, each kept alone by a heavy self-loop:

    >>> w = np.array([[0, 8, 1], [8, 0, 2], [1, 2, 0]], dtype=float)
    >>> t = cluster_tree(w, ["a", "b", "c"], self_loop=1000, seed=0)
    >>> [(e.source, e.target, e.weight) for e in t.edges]
    [('L1C0', 'L1C1', 8.0), ('L1C1', 'L1C2', 2.0)]
    """
    A, nodes = as_adjacency(graph)
    names = [str(x) for x in (hosts if hosts is not None else nodes or
                              [f"h{i}" for i in range(A.shape[0])])]
    if len(names) != A.shape[0]:
        raise ValueError(f"{len(names)} host names for a {A.shape[0]}-host graph")
    flat = louvain(A, engine=engine, resolution=resolution, restarts=restarts, level=level,
                   self_loop=self_loop, seed=seed)
    collapsed, _ = collapse(A, flat.labels, linkage=linkage)
    members = [tuple(sorted(names[i] for i in idx)) for idx in flat.clusters()]
    loops = collapsed.diagonal()
    clusters = [Cluster(id=f"L1C{c}", level=1, hosts=members[c], internal=float(loops[c]))
                for c in range(flat.n_clusters)]
    edges = [TreeEdge(f"L1C{i}", f"L1C{j}", w)
             for i, j, w in maximum_spanning_tree(collapsed, method=method)]
    params = {"method": "maximum-spanning-tree", "mst": method, "linkage": linkage,
              "level": level, "engine": engine, "resolution": resolution, "restarts": restarts,
              "self_loop": self_loop, "seed": flat.seed, "modularity": flat.modularity}
    return ClusterTree(clusters=clusters, edges=edges, params=params)
