"""Flat clustering: Louvain modularity maximization (docs/method.md).

Two engines share one interface and, on clearly clustered graphs, one answer:

``"louvain"``
    python-louvain (``community_louvain``), the reference implementation the
    thesis used; pure Python.
``"igraph"``
    igraph's C implementation of the same method (``community_multilevel``);
    one to two orders of magnitude faster.

Each restart runs the engine with its own seed; the partition of highest
modularity (computed by :func:`cluster.modularity.modularity` for both
engines alike) is kept.
"""

from __future__ import annotations

import random
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Hashable, Iterator, Literal, Sequence

import numpy as np
from scipy import sparse

from cluster.adjacency import SharedGraph, as_adjacency, igraph_graph, upper_edges
from cluster.modularity import canonical_labels, modularity
from tomography.model.display import some, span
from tomography.model.errors import EmptyGraphError, ParameterError
from tomography.model.options import OPTIONS, check_options
from tomography.model.seeding import Seed, random_state, spawn_seeds
from tomography.model.units import counted

if TYPE_CHECKING:
    import igraph
    import pandas as pd

__all__ = ["FlatClustering", "louvain", "multilevel", "leiden", "ENGINES"]

ENGINES = OPTIONS["engine"].choices
Level = Literal["best", "finest"]


@dataclass(frozen=True)
class FlatClustering:
    """The result of :func:`louvain`.

    Attributes
    ----------
    labels : ndarray of int
        Cluster of each node, numbered 0, 1, ... in order of first node.
    modularity : float
        Modularity of ``labels`` on the input graph (Eq 5.1).
    engine, level, resolution, seed
        The options that produced it; ``seed`` is the integer recorded for
        repetition (None when a Generator was passed).
    nodes : list or None
        The node of each label, for an input that names its nodes (networkx,
        a DataFrame, EdgeWeights).

    Examples
    --------
    >>> w = np.array([[0, 9, 1, 0], [9, 0, 0, 1], [1, 0, 0, 9], [0, 1, 9, 0]], dtype=float)
    >>> louvain(w, seed=0).membership(["a", "b", "c", "d"])
    {'a': 0, 'b': 0, 'c': 1, 'd': 1}
    """

    labels: np.ndarray
    modularity: float
    engine: str
    level: str
    resolution: float
    seed: int | None
    restarts: int
    nodes: list[Hashable] | None = field(default=None, compare=False)

    @property
    def n_clusters(self) -> int:
        """Number of clusters."""
        return int(self.labels.max()) + 1 if self.labels.size else 0

    def __repr__(self) -> str:
        """One line whatever the size.

        Examples
        --------
        >>> w = np.array([[0, 9, 1, 0], [9, 0, 0, 1], [1, 0, 0, 9], [0, 1, 9, 0]], dtype=float)
        >>> louvain(w, seed=0)
        FlatClustering(4 hosts in 2 clusters of 2, modularity 0.40, engine igraph, seed 0)
        """
        sizes = span(np.bincount(self.labels).tolist()) if self.labels.size else "0"
        return (f"FlatClustering({counted(len(self.labels), 'host')} in "
                f"{counted(self.n_clusters, 'cluster')} of {sizes}, modularity "
                f"{self.modularity:.2f}, engine {self.engine}, seed {self.seed})")

    def _repr_html_(self) -> str:
        from tomography.model.display import html_view

        frame = self.to_frame() if self.nodes is not None else None
        return html_view(repr(self), [("resolution", self.resolution), ("level", self.level)],
                         None if frame is None else frame.groupby("cluster").agg(
                             hosts=("host", "size"),
                             members=("host", lambda h: some(list(h), 6))).reset_index())

    def to_frame(self, hosts: Sequence[Hashable] | None = None) -> "pd.DataFrame":
        """One row per host: ``host, cluster`` (the input's nodes, or ``hosts``).

        Examples
        --------
        >>> w = np.array([[0, 9, 1, 0], [9, 0, 0, 1], [1, 0, 0, 9], [0, 1, 9, 0]], dtype=float)
        >>> louvain(w, seed=0).to_frame(["a", "b", "c", "d"])["cluster"].tolist()
        [0, 0, 1, 1]
        """
        import pandas as pd

        member = self.membership(hosts)
        return pd.DataFrame({"host": list(member), "cluster": list(member.values())})

    def clusters(self) -> list[np.ndarray]:
        """Node indices of each cluster, in cluster order."""
        return [np.flatnonzero(self.labels == c) for c in range(self.n_clusters)]

    def membership(self, hosts: Sequence[Hashable] | None = None) -> dict[Hashable, int]:
        """The cluster of each host by name: ``hosts`` (the rows' names) or the input's nodes."""
        names = list(hosts) if hosts is not None else self.nodes
        if names is None:
            raise ParameterError("the input did not name its rows: give membership(hosts), e.g. "
                                 "m.host_names for mean_weights(m)")
        if len(names) != len(self.labels):
            raise ParameterError(f"{len(names)} names for {len(self.labels)} rows")
        return {h: int(c) for h, c in zip(names, self.labels)}


@random_state
def louvain(graph, *, weight: str | None = "weight", engine: str = "igraph", resolution: float = 1.0, seed: Seed = 0,
            restarts: int = 1, level: Level = "best", self_loop: float = 0.0) -> FlatClustering:
    """Partition a weighted graph by Louvain modularity maximization.

    Parameters
    ----------
    graph : sparse array, ndarray, networkx.Graph or SharedGraph
        Symmetric non-negative weights, e.g. ``w_n`` from
        :func:`tomography.model.weights.mean_weights`; a
        :class:`cluster.adjacency.SharedGraph` is converted for igraph only once.
    weight : str or None, default "weight"
        For a networkx graph: the edge attribute holding the weight, as in
        networkx (None: every edge 1); edges without it but with another
        number are refused, naming it.
    engine : {"igraph", "louvain"}, default "igraph"
        The implementation (see the module docstring).
    resolution : float, default 1.0
        Modularity resolution; above 1 favours smaller clusters.
    seed : int, Generator or None, default 0
        Randomness of the node order; the integer is recorded in the result.
    restarts : int, default 1
        Independent runs; the one of highest modularity is kept.
    level : {"best", "finest"}, default "best"
        ``"best"`` is the usual Louvain answer, the dendrogram level of highest
        modularity (its coarsest level).  ``"finest"`` is the first level, the
        result of local moves only, before any aggregation.
    self_loop : float, default 0.0
        Weight added to every node's self-loop before partitioning.  This is
        the thesis's remedy (App. B) for Louvain never returning single-node
        clusters: a duplicate of every node joined to it by an edge of this
        weight is the same as a self-loop of this weight.  0 leaves the graph
        as it is.

    Returns
    -------
    FlatClustering

    Raises
    ------
    EmptyGraphError
        When no edge has positive weight (nothing was exchanged).
    ValueError
        For an invalid graph or option.

    Notes
    -----
    Isolated nodes (no edge to any other node) end up alone in their own
    cluster with both engines.

    Examples
    --------
    Two triangles of weight 100 joined by edges of weight 5 (App. B):

    >>> import numpy as np
    >>> w = np.full((6, 6), 5.0)
    >>> w[:3, :3] = w[3:, 3:] = 100.0
    >>> np.fill_diagonal(w, 0)
    >>> louvain(w, seed=0).labels.tolist()
    [0, 0, 0, 1, 1, 1]
    >>> louvain(w, engine="louvain", seed=0).labels.tolist()
    [0, 0, 0, 1, 1, 1]
    """
    check_options(engine=engine, restarts=restarts, resolution=resolution, flat_level=level)
    if self_loop < 0:
        raise ParameterError(f"self_loop must be >= 0, got {self_loop}")
    A, nodes = as_adjacency(graph, weight=weight)
    if A.shape[0] == 1:
        raise EmptyGraphError("the graph has one host: clustering needs at least two")
    if A.count_nonzero() == 0:
        # the nodes may be hosts, or clusters of a level below that exchanged nothing with
        # one another: say only what holds for both
        raise EmptyGraphError(f"the graph has no edge with positive weight: none of its "
                              f"{A.shape[0]} nodes (hosts, or clusters of hosts) is joined to "
                              "another, so there is nothing to cluster")
    if self_loop:
        A = (A + sparse.diags_array(np.full(A.shape[0], float(self_loop)))).tocsr()
    rng, recorded = seed
    run = _run_igraph if engine == "igraph" else _run_python_louvain
    if engine == "igraph" and isinstance(graph, SharedGraph) and not self_loop:
        shared = graph.igraph()   # converted once for every call on this graph

        def run(A: sparse.csr_array, resolution: float, seed: int, level: Level) -> np.ndarray:
            return multilevel(shared, resolution=resolution, seed=seed, level=level)
    best_labels, best_q = None, -np.inf
    for run_seed in spawn_seeds(rng, restarts):
        labels = canonical_labels(run(A, resolution, run_seed, level))
        q = modularity(SharedGraph.checked(A), labels, resolution=resolution)
        if q > best_q + 1e-12:
            best_labels, best_q = labels, q
    return FlatClustering(labels=best_labels, modularity=best_q, engine=engine, level=level,
                          resolution=resolution, seed=recorded, restarts=restarts, nodes=nodes)


def multilevel(g: "igraph.Graph", *, resolution: float = 1.0, seed: int = 0,
               level: Level = "best", weights: str | list[float] = "weight") -> np.ndarray:
    """igraph's Louvain (``community_multilevel``) on a graph from :func:`igraph_graph`.

    Parameters
    ----------
    g : igraph.Graph
    resolution : float, default 1.0
    seed : int, default 0
        Seeds igraph's random number generator for this run only.
    level : {"best", "finest"}, default "best"
    weights : str or list of float, default "weight"
        The edge attribute, or one weight per edge (a shuffled copy).

    Returns
    -------
    ndarray of int
        igraph's membership (not canonical).

    Examples
    --------
    >>> w = np.full((6, 6), 5.0)
    >>> w[:3, :3] = w[3:, 3:] = 100.0
    >>> np.fill_diagonal(w, 0)
    >>> multilevel(igraph_graph(sparse.csr_array(w))).tolist()
    [0, 0, 0, 1, 1, 1]
    """
    with _seeded(seed):
        if level == "finest":
            levels = g.community_multilevel(weights=weights, return_levels=True,
                                            resolution=resolution)
            # igraph returns no level when no move improves modularity
            membership = levels[0].membership if levels else range(g.vcount())
        else:
            membership = g.community_multilevel(weights=weights,
                                                resolution=resolution).membership
    return np.asarray(membership)


@contextmanager
def _seeded(seed: int) -> Iterator[None]:
    """igraph's random number generator seeded for one run, then given back."""
    import igraph

    igraph.set_random_number_generator(random.Random(seed))
    try:
        yield
    finally:
        igraph.set_random_number_generator(random)


def leiden(g: "igraph.Graph", *, resolution: float = 1.0, seed: int = 0,
           weights: str | list[float] = "weight", iterations: int = 2) -> np.ndarray:
    """igraph's Leiden (modularity) on a graph from :func:`igraph_graph`.

    The same modularity as :func:`multilevel`, optimised with Leiden's
    refinement; on graphs with little structure (weight-shuffled copies,
    resampled halves of noisy data) it is several times faster than
    Louvain, whose local moves crawl there, and reaches at least its
    modularity.  ``iterations`` is Leiden's number of passes (default 2).

    Examples
    --------
    >>> w = np.full((6, 6), 5.0)
    >>> w[:3, :3] = w[3:, 3:] = 100.0
    >>> np.fill_diagonal(w, 0)
    >>> leiden(igraph_graph(sparse.csr_array(w))).tolist()
    [0, 0, 0, 1, 1, 1]
    """
    with _seeded(seed):
        membership = g.community_leiden(objective_function="modularity", weights=weights,
                                        resolution=resolution, n_iterations=iterations).membership
    return np.asarray(membership)


def _run_igraph(A: sparse.csr_array, resolution: float, seed: int, level: Level) -> np.ndarray:
    return multilevel(igraph_graph(A), resolution=resolution, seed=seed, level=level)


def _run_python_louvain(A: sparse.csr_array, resolution: float, seed: int,
                        level: Level) -> np.ndarray:
    import networkx as nx
    from community import community_louvain

    rows, cols, data = upper_edges(A)
    g = nx.Graph()
    g.add_nodes_from(range(A.shape[0]))
    g.add_weighted_edges_from(zip(rows.tolist(), cols.tolist(), data.tolist()))
    dendrogram = community_louvain.generate_dendrogram(g, weight="weight", resolution=resolution,
                                                       random_state=seed)
    depth = 0 if level == "finest" else len(dendrogram) - 1
    partition = community_louvain.partition_at_level(dendrogram, depth)
    return np.array([partition[i] for i in range(A.shape[0])])
