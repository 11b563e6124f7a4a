"""Eq 4.1 and 4.2 on hand-computed counts, in sorted host order."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy import sparse

from tomography.model.dataset import read_measurement
from tomography.model.errors import TomographyError
from tomography.model.interop import weight_graph
from tomography.model.weights import directed_counts, iteration_weights, mean_weights


def test_directed_counts(small_dataset: Path) -> None:
    m = read_measurement(small_dataset)
    C = directed_counts(m, [0]).toarray()
    # rows = receiver a, b, c; columns = sender
    assert C.tolist() == [[0, 2, 0], [10, 0, 0], [4, 6, 0]]
    assert directed_counts(m).sum() == 10 + 4 + 6 + 2 + 8 + 3 + 5


def test_eq_4_1_one_iteration(small_dataset: Path) -> None:
    w = iteration_weights(read_measurement(small_dataset), 0).toarray()
    # w(a,b) = a->b + b->a = 10 + 2; w(a,c) = 4; w(b,c) = 6
    assert w.tolist() == [[0, 12, 4], [12, 0, 6], [4, 6, 0]]


def test_eq_4_2_mean_over_iterations(small_dataset: Path) -> None:
    m = read_measurement(small_dataset)
    w2 = mean_weights(m).toarray()
    # iteration 1: w(a,b) = 5, w(a,c) = 8, w(b,c) = 3
    expected = np.array([[0, 12 + 5, 4 + 8], [12 + 5, 0, 6 + 3], [4 + 8, 6 + 3, 0]]) / 2
    np.testing.assert_allclose(w2, expected)
    np.testing.assert_allclose(mean_weights(m, 1).toarray(), iteration_weights(m, 0).toarray())
    assert sparse.issparse(mean_weights(m))


def test_graph_in_sorted_order(small_dataset: Path) -> None:
    g = weight_graph(read_measurement(small_dataset))
    assert list(g.nodes) == ["a", "b", "c"]
    assert g["a"]["b"]["weight"] == pytest.approx(8.5)
    assert g.nodes["c"]["label"] == "s2"


def test_bad_n(small_dataset: Path) -> None:
    m = read_measurement(small_dataset)
    with pytest.raises(TomographyError, match="between 1 and 2"):
        mean_weights(m, 3)
    with pytest.raises(TomographyError, match="no iteration 9"):
        directed_counts(m, [9])
