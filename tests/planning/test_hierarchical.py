"""The MPICH-G2 broadcast schedule over a hierarchy (docs/method.md)."""

from __future__ import annotations

import numpy as np
import pytest

from tomography.model.errors import TomographyError
from tomography.model.hierarchy import Hierarchy
from tomography.planning import broadcast_schedule

Schedule = list[list[tuple[str, list[str]]]]


def assert_valid(hierarchy: Hierarchy, root: str, schedule: Schedule) -> None:
    """Every host but the root receives exactly once, from a sender that already had the data."""
    have = {root}
    received: list[str] = []
    for number, step in enumerate(schedule):
        assert step, f"step {number} is empty"
        before = set(have)                    # a step's sends run in parallel
        senders = [sender for sender, _ in step]
        assert len(set(senders)) == len(senders), f"a host sends twice in step {number}"
        for sender, receivers in step:
            assert sender in before, f"{sender} sends in step {number} before it has the data"
            assert receivers and receivers == sorted(receivers)
            for host in receivers:
                assert host not in before, f"{host} receives again in step {number}"
            received.extend(receivers)
            have.update(receivers)
    assert sorted(received) == sorted(h for h in hierarchy.hosts if h != root)
    assert len(received) == len(set(received))


def test_docstring_example() -> None:
    h = Hierarchy.from_partitions(["a", "b", "c", "d", "e"], [[0, 0, 1, 2, 2], [0, 0, 1, 1, 1]])
    assert broadcast_schedule(h, "d") == [[("d", ["a"])], [("d", ["c"])],
                                          [("a", ["b"]), ("d", ["e"])]]
    assert broadcast_schedule(h, "a") == [[("a", ["c"])], [("c", ["d"])],
                                          [("a", ["b"]), ("d", ["e"])]]


def test_one_cluster_is_a_flat_broadcast() -> None:
    h = Hierarchy.from_partitions(["c", "a", "b"], [[0, 0, 0]])
    assert broadcast_schedule(h, "b") == [[("b", ["a", "c"])]]


def test_single_host_clusters() -> None:
    h = Hierarchy.from_partitions(["a", "b", "c"], [[0, 1, 2]])
    assert broadcast_schedule(h, "c") == [[("c", ["a", "b"])]]


def test_three_levels() -> None:
    """Top: {a..d} and {e..h}; level 2: pairs; level 1: single hosts and pairs."""
    hosts = list("abcdefgh")
    h = Hierarchy.from_partitions(hosts, [[0, 1, 2, 2, 3, 3, 4, 5],
                                          [0, 0, 1, 1, 2, 2, 3, 3],
                                          [0, 0, 0, 0, 1, 1, 1, 1]])
    schedule = broadcast_schedule(h, "g")
    assert schedule == [
        [("g", ["a"])],                                   # top level: the other leader
        [("a", ["c"]), ("g", ["e"])],                     # level 3 clusters to level 2 leaders
        [("a", ["b"]), ("g", ["h"])],                     # level 2 clusters to level 1 leaders
        [("c", ["d"]), ("e", ["f"])],                     # inside level 1 clusters
    ]
    assert_valid(h, "g", schedule)


def random_hierarchy(rng: np.random.Generator) -> Hierarchy:
    """Random nested partitions of up to 20 hosts, 1 to 4 levels, finest first."""
    n = int(rng.integers(2, 21))
    hosts = [f"h{i:02d}" for i in rng.permutation(n)]
    labels = rng.integers(0, max(1, n // 2), n)
    partitions = [labels]
    for _ in range(int(rng.integers(0, 4))):
        merge = rng.integers(0, max(1, len(np.unique(partitions[-1])) // 2), labels.max() + 1)
        partitions.append(merge[partitions[-1]])
    return Hierarchy.from_partitions(hosts, partitions)


def test_random_hierarchies_every_root() -> None:
    for seed in range(40):
        h = random_hierarchy(np.random.default_rng(seed))
        for root in h.hosts:
            assert_valid(h, root, broadcast_schedule(h, root))


def test_random_hierarchies_step_count() -> None:
    """One step for the top level (if it has several clusters), one per level below it,
    one inside the level-1 clusters; steps with nothing to send are left out."""
    for seed in range(20):
        h = random_hierarchy(np.random.default_rng(100 + seed))
        root = h.hosts[0]
        assert len(broadcast_schedule(h, root)) <= h.depth + 1


def test_unknown_root() -> None:
    h = Hierarchy.from_partitions(["a", "b"], [[0, 1]])
    with pytest.raises(TomographyError, match="unknown root host 'z'; the hierarchy has 2 hosts"):
        broadcast_schedule(h, "z")
