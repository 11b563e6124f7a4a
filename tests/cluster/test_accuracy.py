"""NMI (arithmetic) and the overlapping NMI of Lancichinetti, Fortunato and Kertesz."""

from __future__ import annotations

import math

import pytest

from cluster.accuracy import (convergence, hierarchy_nmi, nmi, overlapping_nmi,
                              partition_to_cover)
from tomography.model.hierarchy import Hierarchy
from tomography.model.synthetic import planted_hierarchy


def h(p: float) -> float:
    return -p * math.log2(p) if p > 0 else 0.0


def test_nmi_known_values() -> None:
    assert nmi([0, 0, 1, 1], [1, 1, 0, 0]) == pytest.approx(1.0)
    assert nmi([0, 0, 1, 1], [0, 1, 0, 1]) == pytest.approx(0.0, abs=1e-12)
    # by hand: H(X) = 1, H(Y) = h(3/4) + h(1/4), I = .5 log2(4/3) + .25 log2(2/3) + .25
    hy = h(0.75) + h(0.25)
    mi = 0.5 * math.log2(4 / 3) + 0.25 * math.log2(2 / 3) + 0.25
    assert nmi([0, 0, 1, 1], [0, 0, 0, 1]) == pytest.approx(mi / ((1 + hy) / 2))


def test_overlapping_nmi_by_hand() -> None:
    X = [{0, 1, 2}, {3, 4, 5}]
    Y = [{0, 1, 2, 3}, {4, 5}]
    n = 6
    hy = h(4 / 6) + h(2 / 6)
    # X1 against Y1: P11 = 3/6, P10 = 0, P01 = 1/6, P00 = 2/6 (admissible);
    # X1 against Y2 fails the constraint h(P11) + h(P00) > h(P01) + h(P10).
    joint = h(3 / 6) + h(1 / 6) + h(2 / 6)
    hx_given_y = (joint - hy) / 1.0          # same for X2 by symmetry, H(X_k) = 1
    hy_given_x = (joint - 1.0) / hy          # Y1 | X1 and Y2 | X2
    expected = 1 - 0.5 * (hx_given_y + hy_given_x)
    assert overlapping_nmi(X, Y, n) == pytest.approx(expected)
    assert overlapping_nmi(X, Y, n) == pytest.approx(0.4796, abs=1e-4)
    assert overlapping_nmi(Y, X, n) == pytest.approx(expected)  # symmetric


def test_overlapping_nmi_published_properties() -> None:
    # identical covers, overlapping ones included, score 1 (LFK 2009)
    cover = [{0, 1, 2, 3}, {3, 4, 5}, {5, 6, 7}]
    assert overlapping_nmi(cover, list(reversed(cover))) == pytest.approx(1.0)
    # the trivial cover against a split carries no information: 0, as in the
    # reference implementation of McDaid et al. (onmi) and in cdlib
    assert overlapping_nmi([set(range(8))], [set(range(4)), set(range(4, 8))]) == 0.0
    assert overlapping_nmi([set(range(8))], [set(range(8))]) == 1.0
    # a partition against its refinement scores below 1 and above 0
    coarse = partition_to_cover([0] * 4 + [1] * 4)
    fine = partition_to_cover([0, 0, 1, 1, 2, 2, 3, 3])
    assert 0 < overlapping_nmi(coarse, fine) < 1


def test_overlapping_nmi_rejects_empty() -> None:
    with pytest.raises(ValueError):
        overlapping_nmi([], [{0}])


def test_convergence_table() -> None:
    m = planted_hierarchy((3, 3), 12, iterations=4, seed=2)
    table = convergence(m, m.labels, seed=0)
    assert table["n"].tolist() == [1, 2, 3, 4]
    assert {"nmi", "overlapping_nmi", "level_1_nmi", "levels"} <= set(table.columns)
    # flat Louvain (best level) finds the 3 sites, not the 9 leaf clusters
    assert table["clusters"].iloc[-1] == 3
    assert table["nmi"].iloc[-1] == pytest.approx(nmi(
        [lab for lab in m.hosts["label"]], [lab.split("/")[0] for lab in m.hosts["label"]]))
    assert table["level_1_nmi"].iloc[-1] == pytest.approx(1.0)
    assert table["level_2_nmi"].iloc[-1] == pytest.approx(1.0)


def test_hierarchy_nmi_best_depth_survives_an_extra_level() -> None:
    # truth: 2 sites of 2 clusters of 2 hosts; the hierarchy adds a level of
    # single hosts below the clusters, so the fixed mapping is one off
    hosts = list("abcdefgh")
    truth = {h: f"{'xy'[i // 4]}/{'xy'[i // 4]}{i // 2}" for i, h in enumerate(hosts)}
    h = Hierarchy.from_partitions(hosts, [list(range(8)), [0, 0, 1, 1, 2, 2, 3, 3],
                                          [0, 0, 0, 0, 1, 1, 1, 1]])
    table = hierarchy_nmi(h, truth)
    assert table["truth_depth"].tolist() == [2, 1, 1]
    assert table["nmi"].tolist()[1] < 1                  # clusters scored against the sites
    assert table["best_depth"].tolist() == [2, 2, 1]
    assert table["best_nmi"].tolist()[1:] == [1.0, 1.0]
    # a level that fits two depths equally well is given the finer one
    one_per_site = {h: f"{'xy'[i // 4]}/{'xy'[i // 4]}0" for i, h in enumerate(hosts)}
    sites = Hierarchy.from_partitions(hosts, [[0, 0, 0, 0, 1, 1, 1, 1]])
    assert hierarchy_nmi(sites, one_per_site)["best_depth"].tolist() == [2]


def test_python_api_mistakes_get_a_clear_error(tmp_path) -> None:
    from cluster.averaged_edge import averaged_edge_hierarchy
    from cluster.louvain import louvain
    from cluster.spanning_tree import hierarchy_tree
    from measure.simulator import simulate
    from tomography.model.dataset import read_measurement
    from tomography.model.errors import TomographyError
    from tomography.model.weights import mean_weights
    from visualize import plot_hasse, plot_tree

    m = read_measurement(simulate("tree-5", tmp_path / "d", iterations=2, file_size="1MiB"))
    W = mean_weights(m)
    h = averaged_edge_hierarchy(W, m.host_names, seed=0)
    for call, says in ((lambda: mean_weights(m, 1.0), "a whole number"),
                       (lambda: nmi({"a": 1}, {"a": 1}), "sequences of labels"),
                       (lambda: hierarchy_nmi(h, {}), "has no label"),
                       (lambda: hierarchy_nmi(h, list(m.labels.values())), "truth= takes a mapping"),
                       (lambda: louvain(m.hosts), "no source column.*square adjacency"),
                       (lambda: louvain([[0.0]]), "one host"),
                       (lambda: hierarchy_tree(W, h, "2"), "a whole number"),
                       (lambda: read_measurement(tmp_path / "d" / "hosts.csv"), "is a file"),
                       (lambda: plot_tree(h), "expected a ClusterTree, got Hierarchy"),
                       (lambda: plot_hasse(hierarchy_tree(W, h)), "expected a Hierarchy")):
        with pytest.raises((ValueError, TomographyError), match=says):
            call()
