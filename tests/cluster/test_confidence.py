"""Confidence by resampling iterations, the whole-hierarchy stop rule, and interop."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import normalized_mutual_info_score

from cluster.accuracy import nmi
from cluster.adjacency import SharedGraph
from cluster.averaged_edge import averaged_edge_hierarchy
from cluster.confidence import (IterationSampler, flat_confidence, hierarchy_confidence,
                                resample_plan, supported_levels)
from cluster.parallel import effective_jobs, fork_map
from cluster.stability import StableHierarchy, StablePartition
from tests.cluster.helpers import joined
from tomography.model.dataset import Measurement
from tomography.model.hierarchy import Hierarchy
from tomography.model.interop import from_networkx, from_pandas
from tomography.model.synthetic import planted_hierarchy
from tomography.model.weights import mean_weights


def _analysed(m: Measurement, seed: int = 0) -> Hierarchy:
    sampler = IterationSampler.from_measurement(m)
    h = averaged_edge_hierarchy(sampler.graph, m.host_names, seed=0)
    return hierarchy_confidence(h, sampler, seed=seed)


@pytest.mark.slow  # over 2 s
def test_nmi_is_scikit_learns() -> None:
    rng = np.random.default_rng(0)
    for _ in range(200):
        a, b = rng.integers(0, 5, 40), rng.integers(0, 3, 40)
        assert nmi(a, b) == pytest.approx(
            normalized_mutual_info_score(a, b, average_method="arithmetic"), abs=1e-12)


@pytest.mark.slow  # over 2 s
def test_confidence_is_deterministic_under_a_seed() -> None:
    m = planted_hierarchy((2, 3), 16, iterations=6, seed=5, noise=1.0)
    first, again, other = _analysed(m, 1), _analysed(m, 1), _analysed(m, 2)
    assert first.to_json() == again.to_json()
    assert first.params["confidence"]["seed"] == 1
    assert other.params["confidence"]["seed"] == 2


@pytest.mark.slow  # over 2 s
def test_workers_give_the_same_confidence() -> None:
    m = planted_hierarchy((2, 3), 16, iterations=6, seed=5, noise=1.0)
    sampler = IterationSampler.from_measurement(m)
    h = averaged_edge_hierarchy(sampler.graph, m.host_names, seed=0)
    alone = hierarchy_confidence(h, sampler, seed=3, n_jobs=1)
    forked = hierarchy_confidence(h, sampler, seed=3, n_jobs=2)
    assert forked.confidence == alone.confidence
    assert ([c.confidence for level in forked.levels for c in level]
            == [c.confidence for level in alone.levels for c in level])
    labels = h.labels(1)
    assert (flat_confidence(labels, sampler, seed=1, n_jobs=2)[1]
            == flat_confidence(labels, sampler, seed=1, n_jobs=1)[1])
    with pytest.raises(ValueError, match="n_jobs must not be 0"):
        hierarchy_confidence(h, sampler, seed=3, n_jobs=0)


def test_a_failing_worker_raises_here() -> None:
    def work(x: int) -> int:
        if x == 2:
            raise RuntimeError(f"task {x} failed")
        return x

    with pytest.raises(RuntimeError, match="task 2 failed"):
        fork_map(work, [1, 2, 3], jobs=2)


def test_sampler_mean_is_w_n() -> None:
    m = planted_hierarchy((2, 2), 8, iterations=4, seed=1)
    sampler = IterationSampler.from_measurement(m)
    assert abs(sampler.graph.matrix - mean_weights(m)).max() < 1e-9
    half = sampler.matrix(np.array([1, 1, 0, 0]))
    assert abs(half - mean_weights(m, 2)).max() < 1e-9


def test_resample_plans() -> None:
    method, plan = resample_plan(3, 4, seed=0)
    assert method == "split-halves" and len(plan) == 4
    assert all((plan[i] + plan[i + 1] == 1).all() for i in (0, 2))
    method, plan = resample_plan(12, 5, seed=0)
    assert method == "bootstrap" and all(p.sum() == 12 for p in plan)
    with pytest.raises(Exception, match="one iteration"):
        resample_plan(1)


@pytest.mark.slow  # over 2 s
@pytest.mark.parametrize("per", [16, [8, 16, 24, 48]])
def test_flat_dataset_gives_one_level(per: int | list[int]) -> None:
    groups = 8 if per == 16 else 4
    m = planted_hierarchy((groups,), per, iterations=5, seed=3)
    h = _analysed(m)
    keep = supported_levels(h)
    assert keep == [1]
    # the groups (planted with noise 1: a contrast of about 1.3 between hosts) are the
    # level the data show best, whether or not they clear the support threshold
    assert len(h.level(1)) == groups and h.confidence[0] > 0.6
    assert all(c.confidence > (0.9 if per == 16 else 0.5) for c in h.level(1))
    # groups of unequal sizes pair up the same way every time (an artifact of the
    # metric, not a level): the data do not set the pairs apart
    for k in range(2, h.depth + 1):
        assert h.confidence[k - 1] < 0.2


@pytest.mark.slow  # over 2 s
def test_two_levels_supported_and_a_noise_level_flagged() -> None:
    m = planted_hierarchy((4, 3), 16, iterations=10, seed=2)
    h = _analysed(m)
    sizes = [len(level) for level in h.levels]
    assert sizes[:2] == [12, 4]
    assert h.supported(1) and h.supported(2)
    # four equal sites merged into two pairs: a tie, not a level of the network
    assert h.depth == 3 and sizes[2] == 2 and not h.supported(3)
    shown = h.select(supported_levels(h))
    assert [len(level) for level in shown.levels] == [12, 4]
    assert shown.params["dropped_levels"][0]["clusters"] == 2


@pytest.mark.slow  # over 2 s
def test_stop_rule_waits_for_an_upper_level() -> None:
    """Level 1 (six leaf groups) is clear from the start; level 2 (two sites) only late."""
    flat = planted_hierarchy((6,), 12, iterations=1, seed=7)              # no sites yet
    late = planted_hierarchy((2, 3), 12, iterations=7, seed=8, ratio=12.0)
    m = joined(flat, late)
    whole, flat_only = StableHierarchy(k=2), StablePartition(k=2)
    stops = [whole.update(m, n) for n in range(1, 9)]
    flat_stops = [flat_only.update(m, n) for n in range(1, 9)]
    assert flat_stops.index(True) + 1 <= 3          # the flat partition settles early
    first = stops.index(True) + 1                   # the hierarchy rule waits for level 2:
    assert first >= 4 and whole.levels[first - 1] == 2    # it stops with the sites supported
    assert whole.levels[-1] == 2


def test_interop_round_trips() -> None:
    m = planted_hierarchy((2, 2), 10, iterations=3, seed=4)
    edges = m.edges()
    W, hosts = m.weight_matrix()
    assert edges["weight"].sum() == pytest.approx(W.sum() / 2)
    per = m.edges(per_iteration=True)
    assert per["weight"].sum() == pytest.approx(m.transfers["blocks"].sum())
    # the same partition from the DataFrame, from networkx and from the matrix
    w = from_pandas(edges)
    assert w.hosts == hosts and abs(w.matrix - W).max() < 1e-9
    assert w.unit == "blocks per iteration"
    g = nx.from_pandas_edgelist(edges, edge_attr=True)
    assert abs(from_networkx(g).matrix - W).max() < 1e-9
    h = averaged_edge_hierarchy(w, seed=0)
    back = Hierarchy.from_networkx(h.to_networkx())
    for k in range(1, h.depth + 1):
        assert nmi(h.labels(k), back.labels(k)) == 1.0
    frame = h.to_frame()
    assert len(frame) == h.depth * len(hosts)
    # repeated rounds resample like iterations
    rounds = from_pandas(per)
    assert abs(rounds.matrix - W).max() < 1e-9
    assert rounds.iteration_weights().n_iterations == 3


def test_from_pandas_names_the_bad_row() -> None:
    frame = pd.DataFrame({"src": ["a", "b"], "dst": ["b", "b"], "weight": [1.0, 2.0]})
    with pytest.raises(Exception, match="row 1: a pair of the same host 'b'"):
        from_pandas(frame)
    frame = pd.DataFrame({"src": ["a"], "dst": ["b"], "weight": [-1.0]})
    with pytest.raises(Exception, match="row 0: weight"):
        from_pandas(frame)


def test_shared_graph_gives_the_same_hierarchy() -> None:
    m = planted_hierarchy((3, 3), 12, iterations=4, seed=2)
    W = mean_weights(m)
    plain = averaged_edge_hierarchy(W, m.host_names, seed=0)
    shared = averaged_edge_hierarchy(SharedGraph(W, m.host_names), m.host_names, seed=0)
    assert plain.to_json() == shared.to_json()


def test_work_inside_a_worker_stays_in_its_process() -> None:
    def inner(x: int) -> tuple[int, int]:
        # a nested map runs in the worker itself: no process of its own
        return x, effective_jobs(-1, 4)

    def outer(x: int) -> list[tuple[int, int]]:
        return fork_map(inner, [x, x + 1], jobs=2)[0]

    results, _ = fork_map(outer, [0, 10, 20], jobs=2)
    assert results == [[(0, 1), (1, 1)], [(10, 1), (11, 1)], [(20, 1), (21, 1)]]


def test_from_pandas_warns_when_it_sums_repeated_rows() -> None:
    df = pd.DataFrame({"src": ["a", "a", "b"], "dst": ["b", "b", "c"], "weight": [1.0, 2.0, 3.0],
                       "r": [0, 1, 0]})
    with pytest.warns(UserWarning, match="1 row.s. repeat a pair"):
        assert from_pandas(df).matrix.toarray()[0, 1] == 3.0
    assert from_pandas(df, round="r").matrix.toarray()[0, 1] == 1.5       # averaged, no warning
