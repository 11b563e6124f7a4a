"""Moving misplaced hosts to the cluster they exchanged most with."""

from __future__ import annotations

import numpy as np
import pytest

from cluster.accuracy import hierarchy_nmi
from cluster.averaged_edge import averaged_edge_hierarchy
from cluster.reassign import reassign_hosts
from tomography.model.synthetic import planted_hierarchy
from tomography.model.weights import mean_weights


def _blocks(sizes: list[int], inside: float = 5.0, outside: float = 1.0) -> np.ndarray:
    labels = np.repeat(np.arange(len(sizes)), sizes)
    w = np.where(labels[:, None] == labels[None, :], inside, outside)
    np.fill_diagonal(w, 0.0)
    return w


def test_misplaced_host_moves_within_its_parent_only() -> None:
    # groups 0-3 of 4 hosts; 0+1 and 2+3 are the parents; groups 0 and 2 close
    w = _blocks([4, 4, 4, 4])
    w[:4, 8:12] = w[8:12, :4] = 3.0
    top = np.repeat([0, 0, 1, 1], 4)
    leaf = np.repeat([0, 1, 2, 3], 4)
    leaf[0] = 1   # host 0 misplaced into its sibling group 1
    out_top, out_leaf = reassign_hosts(w, [top, leaf])
    assert out_top.tolist() == top.tolist()
    assert out_leaf.tolist() == np.repeat([0, 1, 2, 3], 4).tolist()


def test_levels_stay_nested_when_a_host_changes_parent() -> None:
    w = _blocks([4, 4, 4, 4])
    top = np.repeat([0, 0, 1, 1], 4)
    top[0] = 1                  # host 0 put in the wrong parent
    leaf = np.repeat([0, 1, 2, 3], 4)
    out_top, out_leaf = reassign_hosts(w, [top, leaf])
    assert out_top.tolist() == np.repeat([0, 0, 1, 1], 4).tolist()
    for c in np.unique(out_leaf):
        assert len(np.unique(out_top[out_leaf == c])) == 1
    assert out_leaf[0] == out_leaf[1]


def test_stuck_host_gets_a_cluster_of_its_own_parent() -> None:
    # host 0 moves to the other parent, which has a single leaf cluster;
    # at the leaf level it must leave its old cluster (now under another parent)
    w = _blocks([4, 4])
    top = np.repeat([0, 1], 4)
    top[0] = 1
    leaf = np.repeat([0, 1], 4)
    out_top, out_leaf = reassign_hosts(w, [top, leaf])
    for c in np.unique(out_leaf):
        assert len(np.unique(out_top[out_leaf == c])) == 1


def test_a_cluster_of_one_host_keeps_it() -> None:
    w = _blocks([4, 4])
    labels = np.array([0, 0, 0, 0, 1, 1, 1, 2])
    (out,) = reassign_hosts(w, [labels])
    assert out.tolist() == labels.tolist()


def test_wrong_number_of_labels_is_an_error() -> None:
    with pytest.raises(ValueError, match="3 labels for 8 hosts"):
        reassign_hosts(_blocks([4, 4]), [np.array([0, 1, 1])])


@pytest.mark.slow  # over 2 s
def test_heavy_noise_leaf_level_improves() -> None:
    # 3 x 3 x 64 at noise 1.0 and 3 iterations: Louvain leaves 6 hosts misplaced
    m = planted_hierarchy((3, 3), 64, iterations=3, noise=1.0, seed=0)
    W = mean_weights(m)
    before = averaged_edge_hierarchy(W, m.host_names, reassign=False, seed=0)
    after = averaged_edge_hierarchy(W, m.host_names, seed=0)
    assert after.params["reassign"] is True
    leaf = [hierarchy_nmi(h, m.labels)["nmi"][0] for h in (before, after)]
    assert leaf[0] < 0.97 and leaf[1] > 0.99
