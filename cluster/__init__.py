"""Phase 2, inference: Louvain clustering, the averaged-edge hierarchy, the
cluster tree, confidence by resampling, baselines and accuracy.  Works on
weight matrices; never imports :mod:`measure`.

Names load from their modules on first use, so ``import cluster`` is cheap.
"""

from tomography.lazy import lazy_attributes

_NAMES = {
    "louvain": "louvain", "FlatClustering": "louvain", "modularity": "modularity",
    "averaged_edge_hierarchy": "averaged_edge", "collapse": "averaged_edge",
    "cluster_tree": "spanning_tree", "maximum_spanning_tree": "spanning_tree", "ward": "ward",
    "nmi": "accuracy", "overlapping_nmi": "accuracy", "hierarchy_nmi": "accuracy",
    "convergence": "accuracy",
}

__all__ = sorted(_NAMES)
__getattr__, __dir__ = lazy_attributes(__name__, _NAMES, globals())
