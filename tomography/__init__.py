"""Bandwidth tomography of grid and cluster networks.

The data model (:mod:`tomography.model`): the measurement dataset
(:mod:`tomography.model.dataset`), edge weights (:mod:`tomography.model.weights`),
the hierarchy and tree results (:mod:`tomography.model.hierarchy`), ground truth
(:mod:`tomography.model.ground_truth`); the exporters (:mod:`tomography.export`);
on top of the algorithms, the one analysis pipeline (:func:`analyze`,
:mod:`tomography.pipeline`) and the ``tomography`` command line.

Examples
--------
>>> import tomography
>>> m = tomography.planted_hierarchy((2, 2), 12, iterations=3, seed=0)
>>> a = tomography.analyze(m, truth="labels")
>>> [len(level) for level in a.hierarchy.levels], a.accuracy["nmi"].tolist()
([4, 2], [1.0, 1.0])
"""

from tomography.model import VERSION as __version__
from tomography.model.errors import DatasetError, EmptyGraphError, TomographyError
from tomography.model.lazy import lazy_attributes

# The data model needs pandas (~0.6 s to import): its names load on first use, so that
# `import tomography` (and `import cluster`, which imports tomography.model.errors) stays cheap.
_NAMES = {
    "Measurement": "model.dataset", "MeasurementWriter": "model.dataset",
    "read_measurement": "model.dataset", "write_measurement": "model.dataset",
    "Hierarchy": "model.hierarchy", "Cluster": "model.hierarchy", "ClusterTree": "model.hierarchy",
    "TreeEdge": "model.hierarchy",
    "planted_partition": "model.synthetic", "planted_hierarchy": "model.synthetic",
    "directed_counts": "model.weights", "iteration_weights": "model.weights",
    "mean_weights": "model.weights",
    "weight_graph": "model.interop", "to_networkx": "model.interop",
    "analyze": "pipeline", "Analysis": "pipeline",
}

__all__ = [
    "Measurement", "MeasurementWriter", "read_measurement", "write_measurement",
    "TomographyError", "DatasetError", "EmptyGraphError",
    "Hierarchy", "Cluster", "ClusterTree", "TreeEdge",
    "planted_partition", "planted_hierarchy",
    "directed_counts", "iteration_weights", "mean_weights", "weight_graph", "to_networkx",
    "analyze", "Analysis",
]

__getattr__, __dir__ = lazy_attributes(__name__, _NAMES, globals())
