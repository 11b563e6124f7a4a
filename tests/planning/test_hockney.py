"""Binomial trees mapped minimum-first by Hockney's model, against the other trees."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tomography.model.errors import TomographyError
from tomography.planning import (HockneyModel, Tree, binomial_tree, broadcast_time,
                                 gridlab8, max_bottleneck_tree, semi_flat_tree)
from tomography.model.synthetic import planted_partition


def test_binomial_takes_log2_rounds_where_a_flat_tree_sends_n_minus_1_times() -> None:
    n = 8
    model = HockneyModel([f"h{i}" for i in range(n)], np.full((n, n), 1e-4),
                         np.full((n, n), 8e-9))
    tree, seconds = binomial_tree(model, "h0", 1e5)
    one = 1e-4 + 8e-9 * 1e5
    assert seconds == pytest.approx(3 * one)  # 1 -> 2 -> 4 -> 8 informed
    assert broadcast_time(model, tree, 1e5) == pytest.approx(3 * one)
    assert broadcast_time(model, Tree(0, (-1,) + (0,) * (n - 1)), 1e5) == pytest.approx(7 * one)


def test_minimum_first_uses_the_fast_pairs_first_and_beats_the_other_trees_on_gridlab() -> None:
    net = gridlab8()
    model = HockneyModel.from_network(net)
    message = 1 << 20
    tree, seconds = binomial_tree(model, "n0", message)
    assert broadcast_time(model, tree, message) <= seconds + 1e-12
    others = {"semi-flat": semi_flat_tree(net, "n0"),
              "max-bottleneck": max_bottleneck_tree(net, "n0")}
    for name, other in others.items():
        assert seconds <= broadcast_time(model, other, message) + 1e-12, name
    # the root's first send goes to the node it reaches fastest
    first = [v for v, p in enumerate(tree.parent) if p == tree.root]
    times = model.time(message)[tree.root]
    assert min(times[v] for v in first) == min(times[v] for v in range(net.size)
                                               if v != tree.root and np.isfinite(times[v]))


def test_the_model_from_a_netpipe_dataset() -> None:
    m = planted_partition(3, 1, iterations=1, seed=0)
    m.transfers, m.iterations = m.transfers.iloc[:0], m.iterations.iloc[:0]
    m.probes = pd.DataFrame({"src": ["h000", "h000", "h001"], "dst": ["h001", "h002", "h002"],
                             "bits_per_second": [8e8, 8e7, 8e8], "alpha_s": [1e-5, 2e-3, 1e-5],
                             "beta_s_per_byte": [1e-8, 1e-7, 1e-8]})
    model = HockneyModel.from_probes(m)
    assert model.alpha[1, 0] == 1e-5 and model.beta[2, 0] == 1e-7  # the other direction's
    tree, _ = binomial_tree(model, "h000", 1e6)
    assert tree.parent == (-1, 0, 1)
    # round 1 sends h000 -> h001 (fast); round 2 h001 -> h002 (fast) while h000 is idle
    with pytest.raises(TomographyError, match="no Hockney fits"):
        HockneyModel.from_probes(planted_partition(3, 1, iterations=1, seed=0))
    with pytest.raises(TomographyError, match="unknown node 'x'"):
        binomial_tree(model, "x", 1.0)
