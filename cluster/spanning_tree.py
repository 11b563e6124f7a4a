"""Topology as a tree: clusters, collapsed, joined by a maximum spanning tree.

:func:`hierarchy_tree` joins the clusters of one level of a hierarchy (they
keep the hierarchy's ids, so a cluster can be followed from the Hasse
diagram to the tree and the exports); :func:`cluster_tree` joins the flat
clusters of one Louvain run, named ``C0, C1, ...`` as ``tomography cluster``
numbers them.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from scipy import sparse
from scipy.sparse.csgraph import minimum_spanning_tree

from cluster.adjacency import as_adjacency, weight_unit_of
from cluster.averaged_edge import DEFAULT_LINKAGE, Linkage, collapse
from cluster.louvain import Level, louvain
from tomography.model.errors import ParameterError, TomographyError
from tomography.model.hierarchy import Cluster, ClusterTree, Hierarchy, TreeEdge
from tomography.model.hostnames import row_names
from tomography.model.seeding import Seed

__all__ = ["maximum_spanning_tree", "cluster_tree", "hierarchy_tree", "tree_level",
           "MST_METHODS"]

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
        raise ParameterError(f"unknown method {method!r}; choose one of {', '.join(MST_METHODS)}")
    A, _ = as_adjacency(graph)
    upper = sparse.triu(A, k=1, format="coo")
    rows, cols, data = upper.row, upper.col, upper.data
    if method == "scipy":
        # Kruskal depends only on the order of weights: flip it, keep weights positive.
        flipped = sparse.coo_array((data.max(initial=0) + 1.0 - data, (rows, cols)), shape=A.shape)
        tree = minimum_spanning_tree(flipped).tocoo()
        chosen = {(min(i, j), max(i, j)) for i, j in zip(tree.row.tolist(), tree.col.tolist())}
    elif method == "igraph":
        import igraph   # the optional engines load on use

        g = igraph.Graph(n=A.shape[0], edges=np.column_stack([rows, cols]).tolist())
        ids = g.spanning_tree(weights=(-data).tolist(), return_tree=False)
        chosen = {(int(rows[e]), int(cols[e])) for e in ids}
    else:
        import networkx as nx

        g = nx.Graph()
        g.add_nodes_from(range(A.shape[0]))
        g.add_weighted_edges_from(zip(rows.tolist(), cols.tolist(), data.tolist()))
        chosen = {(min(i, j), max(i, j)) for i, j in nx.maximum_spanning_edges(g, data=False)}
    edges = [(i, j, float(A[i, j])) for i, j in chosen]
    return sorted(edges, key=lambda e: (-e[2], e[0], e[1]))


def cluster_tree(graph, hosts: list[str] | None = None, *, weight: str | None = "weight",
                 linkage: Linkage = DEFAULT_LINKAGE,
                 level: Level = "best", engine: str = "igraph", resolution: float = 1.0,
                 restarts: int = 1, self_loop: float = 0.0, seed: Seed = 0,
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
    weight : str or None, default "weight"
        For a networkx graph: the edge attribute holding the weight, as in
        networkx (None: every edge 1); edges without it but with another
        number are refused, naming it.
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
    [('C0', 'C1', 8.0), ('C1', 'C2', 2.0)]
    """
    A, nodes = as_adjacency(graph, weight=weight)
    names = row_names(A.shape[0], hosts, nodes)
    flat = louvain(A, engine=engine, resolution=resolution, restarts=restarts, level=level,
                   self_loop=self_loop, seed=seed)
    members = [tuple(sorted(names[i] for i in idx)) for idx in flat.clusters()]
    clusters = [Cluster(id=f"C{c}", level=1, hosts=members[c]) for c in range(flat.n_clusters)]
    params = {"method": "maximum-spanning-tree", "mst": method, "linkage": linkage,
              "level": level, "engine": engine, "resolution": resolution, "restarts": restarts,
              "self_loop": self_loop, "seed": flat.seed, "modularity": flat.modularity,
              **weight_unit_of(graph)}
    return _joined(A, flat.labels, clusters, linkage=linkage, method=method, params=params)


def tree_level(hierarchy: Hierarchy) -> int:
    """The level a tree joins by default: Louvain's best partition of the hosts.

    That is the flat clustering of the method (the thesis draws its trees
    over it); the levels below it are refinements, those above merges.

    Examples
    --------
    >>> h = Hierarchy.from_partitions(list("abcd"), [[0, 1, 2, 3], [0, 0, 1, 1]],
    ...                               params={"origins": ["refined", "louvain"]})
    >>> tree_level(h)
    2
    """
    origins = hierarchy.params.get("origins", [])
    return origins.index("louvain") + 1 if "louvain" in origins else 1


def hierarchy_tree(graph, hierarchy: Hierarchy, level: int | None = None, *,
                   hosts: list[str] | None = None, weight: str | None = "weight", linkage: Linkage = DEFAULT_LINKAGE,
                   method: str = "scipy") -> ClusterTree:
    """The topology as a tree of the clusters of one level of a hierarchy.

    The clusters keep their ids (``L2C0``), hosts and confidence, so the tree
    names them as the Hasse diagram does.

    Parameters
    ----------
    graph : sparse array, ndarray or networkx.Graph
        Host-level weights ``w_n``, the graph the hierarchy was built on.
    hierarchy : Hierarchy
        From :func:`cluster.averaged_edge.averaged_edge_hierarchy`.
    level : int, optional
        The level whose clusters the tree joins; 0 joins the hosts themselves
        (networks of one host per router).  Default :func:`tree_level`.
    hosts : list of str, optional
        Name of each row of ``graph``; the graph's node names (networkx,
        DataFrame), else the rows the hierarchy was made from
        (:attr:`Hierarchy.rows`), else its hosts in sorted order.
    weight : str or None, default "weight"
        For a networkx graph: the edge attribute holding the weight, as in
        networkx (None: every edge 1); edges without it but with another
        number are refused, naming it.
    linkage : {"mean", "thesis", "sum"}, default DEFAULT_LINKAGE ("mean")
        See :func:`cluster.averaged_edge.collapse`.
    method : {"scipy", "igraph", "networkx"}
        Spanning tree implementation.

    Returns
    -------
    ClusterTree

    Examples
    --------
    >>> w = np.array([[0, 9, 1, 1], [9, 0, 1, 2], [1, 1, 0, 9], [1, 2, 9, 0]], dtype=float)
    >>> h = Hierarchy.from_partitions(list("abcd"), [[0, 0, 1, 1]])
    >>> t = hierarchy_tree(w, h)
    >>> [c.id for c in t.clusters], [(e.source, e.target, e.weight) for e in t.edges]
    (['L1C0', 'L1C1'], [('L1C0', 'L1C1', 1.25)])
    >>> [(e.source, e.target) for e in hierarchy_tree(w, h, 0).edges]
    [('a', 'b'), ('c', 'd'), ('b', 'd')]
    """
    A, nodes = as_adjacency(graph, weight=weight)
    names = row_names(A.shape[0], hosts, nodes or list(hierarchy.rows or hierarchy.hosts))
    if sorted(names) != hierarchy.hosts:
        raise TomographyError("the graph's hosts are not the hierarchy's")
    chosen = tree_level(hierarchy) if level is None else level
    if isinstance(chosen, bool) or not isinstance(chosen, (int, np.integer)):
        raise TomographyError(f"level is a level number, a whole number; got {chosen!r}")
    if not 0 <= chosen <= hierarchy.depth:
        raise TomographyError(f"no level {chosen}; the hierarchy has levels 1 to "
                              f"{hierarchy.depth} (0: the hosts)")
    if chosen == 0:
        labels = np.arange(len(names))
        clusters = [Cluster(id=h, level=0, hosts=(h,)) for h in names]
    else:
        labels = hierarchy.labels(chosen, names)
        clusters = [replace(c, parent=None, children=(), weights={})
                    for c in hierarchy.level(chosen)]
    unit = weight_unit_of(graph)
    if not unit and "weight_unit" in hierarchy.params:     # the unit the hierarchy recorded
        unit = {"weight_unit": hierarchy.params["weight_unit"]}
    params = {"method": "maximum-spanning-tree", "mst": method, "linkage": linkage,
              "hierarchy_level": chosen, "hierarchy": hierarchy.params, **unit}
    return _joined(A, labels, clusters, linkage=linkage, method=method, params=params)


def _joined(A: sparse.csr_array, labels: np.ndarray, clusters: list[Cluster], *,
            linkage: Linkage, method: str, params: dict) -> ClusterTree:
    """The maximum spanning tree of ``A`` collapsed by ``labels`` (cluster ``i`` = label ``i``)."""
    collapsed, _ = collapse(A, labels, linkage=linkage)
    loops = collapsed.diagonal()
    nodes = [replace(c, internal=float(loops[i])) for i, c in enumerate(clusters)]
    edges = [TreeEdge(nodes[i].id, nodes[j].id, w)
             for i, j, w in maximum_spanning_tree(collapsed, method=method)]
    return ClusterTree(clusters=nodes, edges=edges, params=params)
