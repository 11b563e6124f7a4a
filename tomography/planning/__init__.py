"""Multicast planners that consume the topology (docs/method.md).

The planners' network model (:mod:`~tomography.planning.network`), the tree
builders (:mod:`~tomography.planning.trees`), the throughput a set of trees
gets (:mod:`~tomography.planning.throughput`), balanced multicasting and the
comparison of methods (:mod:`~tomography.planning.balanced`), the cheapest
spanning tree its pricing asks for (:mod:`~tomography.planning.arborescence`), model-based
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

from tomography.model.lazy import lazy_attributes

_NAMES = {
    **dict.fromkeys(["Network", "SharedLink", "lp_example", "four_host_example", "gridlab8"],
                    "network"),
    **dict.fromkeys(["Tree", "MethodUnavailable", "flat_tree", "semi_flat_tree",
                     "max_bottleneck_tree", "fpfr_trees", "arborescences"], "trees"),
    **dict.fromkeys(["Resources", "Prediction", "resources", "predict"], "throughput"),
    **dict.fromkeys(["Plan", "balanced_multicast", "exact_optimum", "plan", "compare"],
                    "balanced"),
    "cheapest_arborescence": "arborescence",
    "METHODS": "methods",
    "broadcast_schedule": "hierarchical",
    **dict.fromkeys(["HockneyModel", "binomial_tree", "broadcast_time"], "hockney"),
}
"""Each public name and the module that defines it: loaded on first use, so that the
command line, which needs only :data:`METHODS`, does not load NumPy, pandas and SciPy."""

__all__ = list(_NAMES)

__getattr__, __dir__ = lazy_attributes(__name__, _NAMES, globals())
