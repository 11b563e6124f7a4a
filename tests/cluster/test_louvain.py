"""Flat clustering: both engines, planted partitions, edge cases, the App. B example."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from cluster.averaged_edge import collapse, with_self_loops
from cluster.louvain import louvain
from cluster.modularity import modularity
from cluster.ward import ward
from tomography.model.errors import EmptyGraphError
from tomography.model.synthetic import planted_partition
from tomography.model.weights import mean_weights

ENGINES = ("igraph", "louvain")


def app_b_graph() -> np.ndarray:
    """Thesis App. B: {0,1,2} and {3,4,5} with inner weight 100, outer weight 5."""
    w = np.full((6, 6), 5.0)
    w[:3, :3] = w[3:, 3:] = 100.0
    np.fill_diagonal(w, 0)
    return w


@pytest.mark.parametrize("engine", ENGINES)
def test_app_b_modularity_finds_the_two_groups(engine: str) -> None:
    assert louvain(app_b_graph(), engine=engine, seed=0).labels.tolist() == [0, 0, 0, 1, 1, 1]


def test_app_b_ward() -> None:
    # On 1/w in condensed form, Ward gets it right ...
    assert ward(app_b_graph(), 2)[0].tolist() == [0, 0, 0, 1, 1, 1]
    # ... on w "as is", fewer blocks means nearer: Ward pairs hosts across the groups first.
    labels, Z = ward(app_b_graph(), 3, distance="weight")
    assert Z[:3, :2].astype(int).tolist() == [[0, 3], [1, 4], [2, 5]]
    assert labels.tolist() == [0, 1, 2, 0, 1, 2]


@pytest.mark.slow  # over 2 s
def test_planted_512_hosts_8_groups_both_engines() -> None:
    m = planted_partition(512, 8, iterations=5, seed=5)
    W = mean_weights(m)
    truth = np.repeat(np.arange(8), 64)
    results = {e: louvain(W, engine=e, seed=1).labels for e in ENGINES}
    for labels in results.values():
        assert labels.tolist() == truth.tolist()
    assert results["igraph"].tolist() == results["louvain"].tolist()


def test_engines_agree_on_collapsed_graph_with_loops() -> None:
    m = planted_partition(96, 6, iterations=2, seed=2)
    W = mean_weights(m)
    fine = louvain(W, level="finest", seed=0).labels
    C = with_self_loops(collapse(W, fine)[0], 0.5)
    a = louvain(C, engine="igraph", seed=3)
    b = louvain(C, engine="louvain", seed=3)
    assert a.labels.tolist() == b.labels.tolist()
    assert a.modularity == pytest.approx(b.modularity)


def test_isolated_host_is_alone() -> None:
    w = app_b_graph()
    w = np.pad(w, ((0, 1), (0, 1)))
    for engine in ENGINES:
        labels = louvain(w, engine=engine, seed=0).labels
        assert labels[-1] not in labels[:-1]
        assert labels[:-1].tolist() == [0, 0, 0, 1, 1, 1]


@pytest.mark.parametrize("engine", ENGINES)
def test_all_zero_graph_raises_a_clear_error(engine: str) -> None:
    with pytest.raises(EmptyGraphError, match="no edge with positive weight"):
        louvain(np.zeros((4, 4)), engine=engine)


def test_invalid_inputs() -> None:
    with pytest.raises(ValueError, match="not symmetric"):
        louvain(np.array([[0, 1.0], [2.0, 0]]))
    with pytest.raises(ValueError, match="negative"):
        louvain(np.array([[0, -1.0], [-1.0, 0]]))
    with pytest.raises(ValueError, match="unknown engine"):
        louvain(app_b_graph(), engine="magic")


def test_heavy_self_loop_keeps_every_host_alone() -> None:
    # App. B: Louvain never returns single-node clusters on small inputs ...
    w = np.array([[0, 8, 1], [8, 0, 2], [1, 2, 0]], dtype=float)
    assert louvain(w, seed=0).n_clusters < 3
    # ... unless every node carries a heavy self-loop (the duplicate-node remedy).
    for engine in ENGINES:
        assert louvain(w, engine=engine, self_loop=100.0, seed=0).n_clusters == 3


def test_seed_repeats_and_restarts_keep_the_best() -> None:
    g = nx.les_miserables_graph()
    A = nx.to_scipy_sparse_array(g, nodelist=sorted(g), weight="weight")
    for engine in ENGINES:
        assert (louvain(A, engine=engine, seed=7).labels.tolist()
                == louvain(A, engine=engine, seed=7).labels.tolist())
        best = louvain(A, engine=engine, seed=7, restarts=6)
        singles = [louvain(A, engine=engine, seed=s).modularity for s in range(6)]
        assert best.modularity >= min(singles) - 1e-12
        assert best.modularity == pytest.approx(modularity(A, best.labels))
        assert best.seed == 7 and best.restarts == 6


def test_modularity_matches_networkx_with_self_loops() -> None:
    rng = np.random.default_rng(0)
    w = rng.random((12, 12))
    w = np.triu(w, 0)
    w = w + np.triu(w, 1).T
    labels = rng.integers(0, 3, size=12)
    g = nx.from_numpy_array(w)
    comms = [set(np.flatnonzero(labels == c)) for c in range(3)]
    assert modularity(w, labels) == pytest.approx(nx.community.modularity(g, comms))
    assert modularity(w, labels, resolution=0.5) == pytest.approx(
        nx.community.modularity(g, comms, resolution=0.5))


def test_networkx_input_keeps_node_names() -> None:
    g = nx.Graph()
    g.add_weighted_edges_from([("b", "a", 10), ("c", "d", 10), ("a", "c", 1)])
    result = louvain(g, seed=0)
    assert result.nodes == ["a", "b", "c", "d"]
    assert result.labels.tolist() == [0, 0, 1, 1]


def test_membership_names_the_hosts() -> None:
    import pandas as pd

    w = np.array([[0, 9, 1, 0], [9, 0, 0, 1], [1, 0, 0, 9], [0, 1, 9, 0]], dtype=float)
    named = louvain(pd.DataFrame(w, index=list("wxyz"), columns=list("wxyz")), seed=0)
    assert named.membership() == {"w": 0, "x": 0, "y": 1, "z": 1}
    assert louvain(w, seed=0).membership(list("abcd")) == {"a": 0, "b": 0, "c": 1, "d": 1}
    with pytest.raises(ValueError, match="did not name its rows"):
        louvain(w, seed=0).membership()
