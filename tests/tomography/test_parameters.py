"""One name per idea across the API: ``iterations=`` (the first N iterations), ``seed=0``."""

from __future__ import annotations

import inspect

import pytest

import cluster
import visualize
from cluster.confidence import IterationSampler
from tomography import mean_weights, weight_graph
from tomography.model.errors import ParameterError
from tomography.model.synthetic import planted_partition


@pytest.fixture(scope="module")
def measurement():
    return planted_partition(8, 2, iterations=3, seed=0)


def test_n_is_a_deprecated_alias_of_iterations(measurement) -> None:
    with pytest.warns(DeprecationWarning, match=r"mean_weights\(n=...\) is deprecated.*iterations"):
        old = mean_weights(measurement, n=2)
    assert abs(old - mean_weights(measurement, iterations=2)).max() == 0
    with pytest.warns(DeprecationWarning):
        assert weight_graph(measurement, n=1).number_of_edges() > 0
    with pytest.warns(DeprecationWarning):
        assert IterationSampler.from_measurement(measurement, n=2).n_iterations == 2
    with pytest.warns(DeprecationWarning):
        assert len(measurement.edges(n=1)) > 0
    with pytest.raises(ParameterError, match="both n= and iterations="):
        mean_weights(measurement, n=1, iterations=2)


def test_seeds_default_to_zero_so_results_repeat(measurement) -> None:
    functions = [cluster.louvain, cluster.averaged_edge_hierarchy, cluster.cluster_tree,
                 cluster.convergence, planted_partition, visualize.plot_layout]
    for function in functions:
        default = inspect.signature(function).parameters["seed"].default
        assert default == 0, f"{function.__name__}: seed defaults to {default!r}"
    W = mean_weights(measurement)
    assert (cluster.louvain(W).labels == cluster.louvain(W).labels).all()
