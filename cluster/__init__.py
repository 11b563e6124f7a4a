"""Phase 2, inference: Louvain clustering, the averaged-edge hierarchy, the
cluster tree, confidence by resampling, baselines and accuracy.  Works on
weight matrices; never imports :mod:`measure`.

The heavier names load from their modules on first use, so ``import cluster``
stays cheap.  ``louvain``, ``modularity`` and ``ward`` are also the names of
their modules: they are bound here at import (light modules: NumPy and SciPy
only), or importing the module later would leave the module under the name.
"""

from cluster.louvain import FlatClustering, louvain
from cluster.modularity import modularity
from cluster.ward import ward
from tomography.model.lazy import lazy_attributes

_NAMES = {
    "averaged_edge_hierarchy": "averaged_edge", "collapse": "averaged_edge",
    "cluster_tree": "spanning_tree", "hierarchy_tree": "spanning_tree",
    "maximum_spanning_tree": "spanning_tree",
    "nmi": "accuracy", "overlapping_nmi": "accuracy", "hierarchy_nmi": "accuracy",
    "convergence": "accuracy",
    "with_support": "confidence", "tree_confidence": "confidence",
    "hierarchy_confidence": "confidence", "flat_confidence": "confidence",
}

__all__ = sorted([*_NAMES, "louvain", "FlatClustering", "modularity", "ward"])
__getattr__, __dir__ = lazy_attributes(__name__, _NAMES, globals())
