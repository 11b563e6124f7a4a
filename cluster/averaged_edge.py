"""Averaged-edge hierarchical clustering (docs/method.md, thesis section 5.10).

Partition the graph with Louvain, collapse every cluster to one node with
averaged edge weights, and repeat on the collapsed graph until at most two
clusters remain or nothing merges.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from scipy import sparse

from cluster.adjacency import SharedGraph, as_adjacency, weight_unit_of
from cluster.louvain import Level, louvain
from cluster.modularity import modularity
from cluster.reassign import reassign_hosts
from cluster.refine import refine_levels, separated_cuts
from tomography.model.errors import ParameterError
from tomography.model.hierarchy import Hierarchy
from tomography.model.hostnames import row_names
from tomography.model.options import OPTIONS, check_options
from tomography.model.seeding import Seed, random_state, spawn_seeds

__all__ = ["collapse", "linked", "with_self_loops", "averaged_edge_hierarchy", "LINKAGES"]

LINKAGES = OPTIONS["linkage"].choices
Linkage = Literal["thesis", "mean", "sum"]
#: The linkage of every function here unless told: the mean over host pairs.
#: The thesis's Eq 5.4/5.5 (``"thesis"``) finds the same hierarchy levels on
#: 120 planted and 7 simulated networks, but its trees go wrong where
#: clusters of very different sizes meet (N2: a star from the largest
#: cluster where the router links are); benchmarks/RESULTS.md, defaults.
DEFAULT_LINKAGE: Linkage = "mean"
Start = Literal["refined", "best", "finest"]


def collapse(graph, labels, sizes=None, *, linkage: Linkage = DEFAULT_LINKAGE
             ) -> tuple[sparse.csr_array, np.ndarray]:
    """Collapse each cluster of a graph to one node with averaged weights.

    Parameters
    ----------
    graph : sparse array or ndarray
        Symmetric weights of the current graph; the diagonal holds the
        self-loops of nodes that are themselves collapsed clusters.
    labels : array of int
        Cluster ``0 .. k-1`` of each node.
    sizes : array of int, optional
        Hosts in each node (all 1 by default, for a graph of hosts).
    linkage : {"thesis", "mean", "sum"}, default DEFAULT_LINKAGE ("mean")
        ``"thesis"`` is Eq 5.4 and 5.5 exactly as written: between clusters
        ``V1`` and ``V2``, the sum of the current weights between their
        nodes divided by ``conn_h = min(|V1|, |V2|) / max(|V1|, |V2|)``, with
        ``|V|`` counting hosts.  ``"mean"`` is the plain mean over host pairs:
        the sum of host-pair weights divided by ``|V1| * |V2|``.  ``"sum"``
        is the plain sum, how the thesis combines probe bandwidths (5.7.1)
        where BitTorrent counts are averaged.

    Returns
    -------
    collapsed : scipy.sparse.csr_array
        k x k weights between clusters; the diagonal is each cluster's
        internal weight (see Notes).
    sizes : ndarray of int
        Hosts in each cluster.

    Notes
    -----
    The diagonal is each cluster's internal weight: the linkage of the
    cluster with itself, each internal pair counted once, the nodes' own
    diagonal included.  For ``"thesis"`` ``conn_h(V, V) = 1``, so it is the
    sum of the internal weights; for ``"mean"`` that host-pair sum divided by
    ``|V|**2``.  It is what the next collapse adds up; what Louvain sees as a
    cluster's self-loop is set by :func:`with_self_loops`.

    Examples
    --------
    Hosts a, b (cluster 0) and c (cluster 1); w(a,b)=10, w(a,c)=2, w(b,c)=4:

    >>> w = np.array([[0, 10, 2], [10, 0, 4], [2, 4, 0]], dtype=float)
    >>> W, s = collapse(w, [0, 0, 1], linkage="thesis")
    >>> W.toarray().tolist(), s.tolist()     # (2 + 4) / (1/2) = 12
    ([[10.0, 12.0], [12.0, 0.0]], [2, 1])
    >>> collapse(w, [0, 0, 1])[0].toarray().tolist()   # the mean: 6 / 2, 10 / 4
    [[2.5, 3.0], [3.0, 0.0]]
    """
    if linkage not in LINKAGES:
        raise ParameterError(f"unknown linkage {linkage!r}; choose one of {', '.join(LINKAGES)}")
    A, _ = as_adjacency(graph)
    n = A.shape[0]
    labels = np.asarray(labels)
    if labels.shape != (n,):
        raise ParameterError(f"labels has shape {labels.shape}; expected ({n},)")
    sizes = np.ones(n, dtype=np.int64) if sizes is None else np.asarray(sizes, dtype=np.int64)
    k = int(labels.max()) + 1
    P = sparse.csr_array((np.ones(n), (np.arange(n), labels)), shape=(n, k))
    if linkage == "mean":
        # back from per-pair means to host-pair sums
        D = sparse.diags_array(sizes.astype(float))
        A = (D @ A @ D).tocsr()
    own = A.diagonal()
    off = (A - sparse.diags_array(own)).tocsr()
    raw = (P.T @ off @ P).tocsr()
    internal = raw.diagonal() / 2.0 + P.T @ own
    between = (raw - sparse.diags_array(raw.diagonal())).tocoo()
    new_sizes = np.asarray(P.T @ sizes, dtype=np.int64)
    return linked(between, internal, new_sizes, linkage=linkage), new_sizes


def linked(between, internal: np.ndarray, sizes: np.ndarray, *,
           linkage: Linkage = DEFAULT_LINKAGE) -> sparse.csr_array:
    """The collapsed graph from the sums of host-pair weights (the linkage step of :func:`collapse`).

    Parameters
    ----------
    between : sparse array
        ``k x k``, zero diagonal: the sum of the weights between the hosts of
        two clusters, per ordered pair of clusters (symmetric).
    internal : array of float
        Per cluster, the sum of the weights inside it (each pair once).
    sizes : array of int
        Hosts per cluster.
    linkage : {"thesis", "mean", "sum"}

    Returns
    -------
    scipy.sparse.csr_array

    Examples
    --------
    >>> between = sparse.csr_array(np.array([[0, 6.0], [6.0, 0]]))
    >>> linked(between, np.array([10.0, 0.0]), np.array([2, 1]),
    ...        linkage="thesis").toarray().tolist()
    [[10.0, 12.0], [12.0, 0.0]]
    """
    between = sparse.coo_array(between)
    k = len(sizes)
    si, sj = sizes[between.row].astype(float), sizes[between.col].astype(float)
    if linkage == "thesis":
        data = between.data * np.maximum(si, sj) / np.minimum(si, sj)
    elif linkage == "sum":  # probe bandwidths add up (the thesis, 5.7.1)
        data = between.data
    else:
        data = between.data / (si * sj)
        internal = internal / np.asarray(sizes, dtype=float) ** 2
    out = sparse.coo_array((data, (between.row, between.col)), shape=(k, k)).tocsr()
    out = (out + sparse.diags_array(internal)).tocsr()
    out.eliminate_zeros()
    return out


def with_self_loops(collapsed, share: float) -> sparse.csr_array:
    """The collapsed graph Louvain partitions: each cluster tied to itself.

    A cluster of the collapsed graph gets a self-loop of ``share`` times its
    strongest tie to another cluster.  This is the explicit form of the
    thesis's remedy for Louvain never leaving a node alone (App. B: a
    duplicate of every node joined to it by a heavy edge).  With no loop a
    cluster weakly tied to all others is always merged somewhere; with its
    whole internal weight as the loop (Louvain's own aggregation) the
    collapsed graph keeps the modularity of the host graph and nothing merges
    beyond Louvain's optimum, so the "post-optimal" levels of the thesis
    (5.10) never appear, because between bandwidth clusters the internal
    weight is tens of times any external one.

    Parameters
    ----------
    collapsed : sparse array or ndarray
        The output of :func:`collapse` (its diagonal is ignored).
    share : float
        The loop as a share of the strongest external tie.

    Returns
    -------
    scipy.sparse.csr_array

    Examples
    --------
    >>> w = np.array([[40, 4, 1], [4, 30, 2], [1, 2, 50]], dtype=float)
    >>> with_self_loops(w, 0.5).diagonal().tolist()
    [2.0, 2.0, 1.0]
    """
    if share < 0:
        raise ParameterError(f"the self-loop share must be >= 0, got {share}")
    A, _ = as_adjacency(collapsed)
    off = (A - sparse.diags_array(A.diagonal())).tocsr()
    off.eliminate_zeros()
    strongest = off.max(axis=1).toarray().ravel() if off.nnz else np.zeros(A.shape[0])
    return (off + sparse.diags_array(share * strongest)).tocsr()


@random_state
def averaged_edge_hierarchy(graph, hosts: list[str] | None = None, *,
                            weight: str | None = "weight", linkage: Linkage = DEFAULT_LINKAGE, start: Start = "refined",
                            loops: float = 0.5, engine: str = "igraph",
                            resolution: float = 1.0, restarts: int = 1,
                            shuffles: int = 10, z: float = 5.0, reassign: bool = True,
                            seed: Seed = 0, n_jobs: int | None = None) -> Hierarchy:
    """Build the hierarchy of bandwidth clusters by repeated partition and collapse.

    Parameters
    ----------
    graph : sparse array, ndarray, DataFrame, networkx.Graph or EdgeWeights
        Host-level weights ``w_n``.
    hosts : list of str, optional
        Name of each row; the graph's node names or ``h00, h01, ...`` by default.
    weight : str or None, default "weight"
        For a networkx graph: the edge attribute holding the weight, as in
        networkx (None: every edge 1); edges without it but with another
        number are refused, naming it.
    linkage : {"mean", "thesis", "sum"}, default DEFAULT_LINKAGE ("mean")
        How collapsed clusters are weighted (see :func:`collapse`);
        ``"thesis"`` is Eq 5.4/5.5 as written.
    start : {"refined", "best", "finest"}, default "refined"
        Where the levels start.  ``"best"`` is the thesis: Louvain's partition
        of highest modularity, then partition-and-collapse upwards.  It is
        Louvain's coarsest level, so a finer real level is skipped (9 leaf
        groups in 3 super-groups come out as the 3 super-groups).
        ``"finest"`` starts from Louvain's first level (local moves only) and
        takes the first level at every step; it shows every level of a clean
        planted hierarchy, but on BitTorrent data it cuts homogeneous clusters
        into fragments (the peer graph is sparse and random).  ``"refined"``
        starts from the best partition, adds the finer levels that pass the
        permutation test of :func:`cluster.refine.significant_split`, then
        the cuts of a few hosts that test cannot judge where the data set the
        level they make apart (:func:`cluster.refine.separated_cuts`), and
        merges upwards as ``"best"`` does.
    loops : float, default 0.5
        Self-loop of each collapsed cluster, as a share of its strongest tie
        to another cluster (see :func:`with_self_loops`).  0 is the thesis
        without its duplicate nodes: a cluster weakly tied to all others can
        never stay alone.  ``benchmarks/RESULTS.md`` compares the choices.
    engine, resolution, restarts
        Passed to :func:`cluster.louvain.louvain` at every step.
    shuffles, z
        The permutation test of the ``"refined"`` start.
    reassign : bool, default True
        With the ``"refined"`` start, move each host to the cluster it has
        the highest mean weight to, among those of its parent, on the levels
        below the merged ones (:func:`cluster.reassign.reassign_hosts`): the
        few hosts Louvain misplaces on noisy data.
    seed : int, Generator or None, default 0
        Randomness; the integer is recorded in ``params``.
    n_jobs : int or None
        Processes for the permutation tests of a level's clusters
        (:func:`cluster.refine.refine_levels`); the result does not depend on it.

    Returns
    -------
    Hierarchy
        Level 1 is the finest partition; ``params["origins"]`` says how each
        level was found: ``"refined"`` (a significant split of the level
        above), ``"cut"`` (one cluster of the level above cut in two where the
        data set the level apart), ``"louvain"`` (Louvain on the hosts) or
        ``"merged"`` (a partition of the collapsed level below).  The last level has at most two
        clusters, or is the level after which nothing merged any more.  A
        step that merges everything into one cluster is not kept as a level:
        the whole network is the implicit top of every Hasse diagram.
        Its hosts are sorted by name (``h.labels(k)`` in that order;
        ``h.labels(k, hosts)`` in another); the rows' order is kept in
        ``h.rows`` when it differs.

    Examples
    --------
    >>> from tomography.model.synthetic import planted_hierarchy
    >>> from tomography.model.weights import mean_weights
    >>> m = planted_hierarchy((3, 3), 16, iterations=3, seed=1)
    >>> h = averaged_edge_hierarchy(mean_weights(m), m.host_names, seed=1)
    >>> [len(level) for level in h.levels]      # leaves, sites, then two sites merged
    [9, 3, 2]
    """
    shared = graph if isinstance(graph, SharedGraph) else SharedGraph(graph, weight=weight)
    A, nodes = shared.matrix, shared.hosts
    names = row_names(A.shape[0], hosts, nodes)
    check_options(linkage=linkage, start=start)
    rng, recorded = seed
    options = {"engine": engine, "resolution": resolution, "restarts": restarts}
    partitions, internals, weights, qualities, origins = [], [], [], [], []

    def record(host_labels: np.ndarray, collapsed: sparse.csr_array, quality: float,
               origin: str) -> None:
        partitions.append(host_labels)
        origins.append(origin)
        diagonal = collapsed.diagonal()
        internals.append(diagonal)
        weights.append(collapsed - sparse.diags_array(diagonal))
        qualities.append(quality)

    current, sizes = A, np.ones(A.shape[0], dtype=np.int64)
    host_labels = np.arange(A.shape[0])
    step_level: Level = "finest" if start == "finest" else "best"
    if start == "refined":
        base = louvain(shared, level="best", seed=spawn_seeds(rng, 1)[0], **options)
        finer = refine_levels(shared, base.labels, shuffles=shuffles, z=z, engine=engine,
                              resolution=resolution, seed=spawn_seeds(rng, 1)[0],
                              n_jobs=n_jobs)
        found = ["refined"] * len(finer)
        finer += separated_cuts(shared, finer[-1] if finer else base.labels)
        found += ["cut"] * (len(finer) - len(found))
        host_labels, quality = base.labels, base.modularity
        if reassign:
            host_labels, *finer = reassign_hosts(shared, [base.labels, *finer])
            quality = modularity(shared, host_labels, resolution=resolution)
        for labels, origin in zip(finer[::-1], found[::-1]):
            record(labels, collapse(shared, labels, linkage=linkage)[0],
                   modularity(shared, labels, resolution=resolution), origin)
        current, sizes = collapse(shared, host_labels, linkage=linkage)
        record(host_labels, current, quality, "louvain")
    while not partitions or current.shape[0] > 2:
        if partitions and not sparse.triu(current, k=1).count_nonzero():
            break  # the clusters exchanged nothing with each other: nothing to merge by
        graph_in = (shared if current is A else current) if not partitions \
            else with_self_loops(current, loops)
        step = louvain(graph_in, level=step_level, seed=spawn_seeds(rng, 1)[0], **options)
        k = step.n_clusters
        if partitions and (k == current.shape[0] or k == 1):
            break  # nothing merged, or everything: the whole network is the implicit top
        host_labels = step.labels[host_labels]
        current, sizes = collapse(current, step.labels, sizes, linkage=linkage)
        record(host_labels, current, step.modularity, "merged" if len(partitions) else "louvain")
    params = {"method": "averaged-edge", "linkage": linkage, "start": start, "loops": loops,
              "engine": engine, "resolution": resolution, "restarts": restarts,
              "shuffles": shuffles, "z": z, "reassign": reassign, "seed": recorded, "origins": origins,
              **weight_unit_of(graph)}
    out = Hierarchy.from_partitions(names, partitions, internal=internals, weights=weights,
                                    params=params, modularity=qualities)
    out.rows = tuple(names) if names != sorted(names) else ()
    return out
