"""Baseline: Ward's hierarchical clustering on the bandwidth metric (thesis App. B)."""

from __future__ import annotations

from typing import Literal

import numpy as np

from cluster.adjacency import as_adjacency
from cluster.modularity import canonical_labels
from tomography.model.errors import ParameterError

__all__ = ["ward"]


def ward(graph, n_clusters: int, *, distance: Literal["inverse", "weight"] = "inverse"
         ) -> tuple[np.ndarray, np.ndarray]:
    """Ward's method (SciPy) on a distance made from the weights.

    Parameters
    ----------
    graph : sparse array, ndarray or networkx.Graph
        Symmetric non-negative weights ``w``.
    n_clusters : int
        Where to cut the dendrogram.
    distance : {"inverse", "weight"}, default "inverse"
        ``"inverse"``: distance ``1 / w`` (more blocks, closer); pairs that
        exchanged nothing get twice the largest finite distance.
        ``"weight"``: the weights "as is" as distances, as the thesis also tried.

    Returns
    -------
    labels : ndarray of int
        Cluster of each node, numbered in order of first node.
    linkage_matrix : ndarray
        SciPy's linkage matrix, for a dendrogram.

    Notes
    -----
    The distances are passed to SciPy in condensed form; Ward's update
    formula assumes Euclidean distances, which ``1/w`` is not, one reason
    the method does poorly here (App. B).

    Examples
    --------
    The 6-node example of App. B: modularity finds {0,1,2}, {3,4,5}.

    >>> w = np.full((6, 6), 5.0)
    >>> w[:3, :3] = w[3:, 3:] = 100.0
    >>> np.fill_diagonal(w, 0)
    >>> ward(w, 2)[0].tolist()
    [0, 0, 0, 1, 1, 1]
    >>> labels, Z = ward(w, 2, distance="weight")   # "as is": nearest = fewest blocks
    >>> Z[:3, :2].astype(int).tolist()              # first merges pair across the groups
    [[0, 3], [1, 4], [2, 5]]
    """
    if distance not in ("inverse", "weight"):
        raise ParameterError(f"distance must be 'inverse' or 'weight', got {distance!r}")
    A, _ = as_adjacency(graph)
    n = A.shape[0]
    if not 1 <= n_clusters <= n:
        raise ParameterError(f"n_clusters must be between 1 and {n}, got {n_clusters}")
    if n == 1:
        return np.zeros(1, dtype=np.int64), np.empty((0, 4))
    w = A.toarray()
    np.fill_diagonal(w, 0.0)
    if distance == "inverse":
        with np.errstate(divide="ignore"):
            d = np.where(w > 0, 1.0 / w, np.inf)
        finite = d[np.isfinite(d) & (d > 0)]
        d[~np.isfinite(d)] = 2.0 * finite.max() if finite.size else 1.0
    else:
        d = w.copy()
    np.fill_diagonal(d, 0.0)
    # on use: SciPy's hierarchy and spatial modules take ~0.3 s to import
    from scipy.cluster.hierarchy import fcluster, linkage
    from scipy.spatial.distance import squareform

    Z = linkage(squareform(d, checks=False), method="ward")
    return canonical_labels(fcluster(Z, t=n_clusters, criterion="maxclust")), Z
