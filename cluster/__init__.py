"""Phase 2, inference: Louvain clustering, the averaged-edge hierarchy, the
cluster tree, baselines and accuracy.  Works on weight matrices; never
imports :mod:`measure`."""

from cluster.accuracy import convergence, hierarchy_nmi, nmi, overlapping_nmi
from cluster.averaged_edge import averaged_edge_hierarchy, collapse
from cluster.louvain import FlatClustering, louvain
from cluster.modularity import modularity
from cluster.spanning_tree import cluster_tree, maximum_spanning_tree
from cluster.ward import ward

__all__ = [
    "louvain", "FlatClustering", "modularity", "averaged_edge_hierarchy", "collapse",
    "cluster_tree", "maximum_spanning_tree", "ward", "nmi", "overlapping_nmi",
    "hierarchy_nmi", "convergence",
]
