"""The peers and shares of MOB and Robber (Eq 4.6, 4.7): every piece has one owner per cluster."""

from __future__ import annotations

import pytest

from tomography.model.errors import ParameterError
from tomography.planning.swarms import foreign_candidate, mob_share, swarm_plan


@pytest.mark.parametrize("size,pieces", [(1, 1), (3, 8), (7, 7), (16, 1000)])
def test_the_shares_of_a_cluster_cover_every_piece_once(size: int, pieces: int) -> None:
    owned = [i for r in range(size) for i in mob_share(r, size, pieces)]
    assert owned == list(range(pieces))


def test_foreign_candidates_spread_over_a_smaller_cluster() -> None:
    assert [foreign_candidate(r, ["c0", "c1"]) for r in range(5)] == ["c0", "c1", "c0", "c1",
                                                                       "c0"]


def _labels(sizes: list[int]) -> dict[str, str]:
    return {f"{chr(97 + c)}{i}": chr(65 + c) for c, n in enumerate(sizes) for i in range(n)}


def test_every_host_reaches_its_cluster_and_every_other_clusters_candidate() -> None:
    plan = swarm_plan(_labels([4, 3, 6, 1]), "a0", 2**24, seed=5)
    for host, targets in plan.connect.items():
        here = plan.cluster_of[host]
        mates = [t for t in targets if plan.cluster_of[t] == here]
        assert len(mates) == min(5, len(plan.clusters[here]) - 1) == len(set(mates))
        rank = plan.clusters[here].index(host)
        for t in targets:
            there = plan.clusters[plan.cluster_of[t]]
            if t not in mates:   # Eq 4.6: the host of the same rank, modulo the cluster's size
                assert t == there[rank % len(there)]
        assert len(targets) - len(mates) == 3   # T - 1 = 3 <= 5 foreign peers


def test_with_many_clusters_every_host_still_reaches_the_roots_cluster() -> None:
    plan = swarm_plan(_labels([2] * 12), "a0", 2**24, foreign_peers=2, seed=0)
    for host, targets in plan.connect.items():
        foreign = {plan.cluster_of[t] for t in targets} - {plan.cluster_of[host]}
        assert "A" in foreign or plan.cluster_of[host] == "A"
        assert len(foreign) in (2, 3)


def test_the_root_steals_nothing_and_a_plan_is_drawn_from_its_seed() -> None:
    labels = _labels([3, 3])
    plan = swarm_plan(labels, "b1", 2**22, method="robber", seed=9)
    assert list(plan.share("b1")) == [] and len(plan.share("b0")) == 16 // 3
    assert plan.connect == swarm_plan(labels, "b1", 2**22, method="robber", seed=9).connect
    assert plan.to_meta()["seed"] == 9 and plan.pieces == 16


@pytest.mark.parametrize("kwargs,message", [
    ({"method": "scatter"}, "unknown swarm method"),
    ({"root": "zz"}, "is not among the clustered hosts"),
    ({"size": 2**18 * 3}, "cannot be shared among the 4 hosts"),
    ({"piece": 0}, "must be >= 1"),
])
def test_impossible_swarms_are_refused(kwargs: dict, message: str) -> None:
    args = {"root": "a0", "size": 2**22, **kwargs}
    with pytest.raises(ParameterError, match=message):
        swarm_plan(_labels([4, 2]), args.pop("root"), args.pop("size"), **args)
