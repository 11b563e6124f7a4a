"""Exporters: the topology in the formats its consumers read."""

from tomography.export.dot import cluster_tree_to_dot, hierarchy_to_dot

__all__ = ["hierarchy_to_dot", "cluster_tree_to_dot"]
