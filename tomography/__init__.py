"""Bandwidth tomography of grid and cluster networks.

The core: the measurement dataset (:mod:`tomography.dataset`), edge weights
(:mod:`tomography.weights`), the hierarchy and tree results
(:mod:`tomography.hierarchy`), ground truth (:mod:`tomography.truth`),
exporters (:mod:`tomography.export`) and the ``tomography`` command line.

Examples
--------
>>> import tomography
>>> from cluster import averaged_edge_hierarchy
>>> m = tomography.planted_hierarchy((2, 2), 12, seed=0)
>>> h = averaged_edge_hierarchy(tomography.mean_weights(m), m.host_names, seed=0)
>>> [len(level) for level in h.levels]
[4, 2]
"""

from tomography.dataset import Measurement, MeasurementWriter, read_measurement, write_measurement
from tomography.errors import DatasetError, EmptyGraphError, TomographyError
from tomography.hierarchy import Cluster, ClusterTree, Hierarchy, TreeEdge
from tomography.synthetic import planted_hierarchy, planted_partition
from tomography.weights import (directed_counts, iteration_weights, mean_weights,
                                to_networkx, weight_graph)

__version__ = "0.1.0"

__all__ = [
    "Measurement", "MeasurementWriter", "read_measurement", "write_measurement",
    "TomographyError", "DatasetError", "EmptyGraphError",
    "Hierarchy", "Cluster", "ClusterTree", "TreeEdge",
    "planted_partition", "planted_hierarchy",
    "directed_counts", "iteration_weights", "mean_weights", "weight_graph", "to_networkx",
]
