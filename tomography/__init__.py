"""Bandwidth tomography of grid and cluster networks.

The data model: the measurement dataset (:mod:`tomography.dataset`), edge
weights (:mod:`tomography.weights`), the hierarchy and tree results
(:mod:`tomography.hierarchy`), ground truth (:mod:`tomography.ground_truth`),
exporters (:mod:`tomography.export`); on top of the algorithms, the one
analysis pipeline (:func:`analyze`, :mod:`tomography.pipeline`) and the
``tomography`` command line.

Examples
--------
>>> import tomography
>>> m = tomography.planted_hierarchy((2, 2), 12, iterations=3, seed=0)
>>> a = tomography.analyze(m, truth="labels")
>>> [len(level) for level in a.hierarchy.levels], a.accuracy["nmi"].tolist()
([4, 2], [1.0, 1.0])
"""

from tomography.errors import DatasetError, EmptyGraphError, TomographyError
from tomography.lazy import lazy_attributes

__version__ = "0.1.0"

# The data model needs pandas (~0.6 s to import): its names load on first use, so that
# `import tomography` (and `import cluster`, which imports tomography.errors) stays cheap.
_NAMES = {
    "Measurement": "dataset", "MeasurementWriter": "dataset", "read_measurement": "dataset",
    "write_measurement": "dataset",
    "Hierarchy": "hierarchy", "Cluster": "hierarchy", "ClusterTree": "hierarchy",
    "TreeEdge": "hierarchy",
    "planted_partition": "synthetic", "planted_hierarchy": "synthetic",
    "directed_counts": "weights", "iteration_weights": "weights", "mean_weights": "weights",
    "weight_graph": "interop", "to_networkx": "interop",
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
