"""Multicast planners that consume the topology (docs/method.md).

The planners' network model (:mod:`~tomography.planning.network`), the tree
builders (:mod:`~tomography.planning.trees`), the throughput a set of trees
gets (:mod:`~tomography.planning.throughput`), balanced multicasting and the
comparison of methods (:mod:`~tomography.planning.balanced`), model-based
binomial trees under Hockney's latency-bandwidth model
(:mod:`~tomography.planning.hockney`), and the
MPICH-G2 broadcast schedule over a hierarchy
(:mod:`~tomography.planning.hierarchical`).

Examples
--------
>>> from tomography.planning import balanced_multicast, lp_example, plan
>>> net = lp_example()
>>> plan(net, "x", "fpfr").throughput, balanced_multicast(net, "x").throughput
(7.5, 9.0)
"""

from tomography.planning.balanced import (METHODS, Plan, balanced_multicast, compare,
                                          exact_optimum, plan)
from tomography.planning.hierarchical import broadcast_schedule
from tomography.planning.hockney import HockneyModel, binomial_tree, broadcast_time
from tomography.planning.network import Network, four_host_example, gridlab8, lp_example
from tomography.planning.throughput import Prediction, Resources, predict, resources
from tomography.planning.trees import (MethodUnavailable, Tree, arborescences, flat_tree,
                                       fpfr_trees, max_bottleneck_tree, semi_flat_tree)

__all__ = [
    "Network", "lp_example", "four_host_example", "gridlab8",
    "Tree", "MethodUnavailable", "flat_tree", "semi_flat_tree", "max_bottleneck_tree",
    "fpfr_trees", "arborescences",
    "Resources", "Prediction", "resources", "predict",
    "Plan", "METHODS", "balanced_multicast", "exact_optimum", "plan", "compare",
    "broadcast_schedule", "HockneyModel", "binomial_tree", "broadcast_time",
]
