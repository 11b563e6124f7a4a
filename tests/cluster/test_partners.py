"""Steady partners: the strongest partners of the hosts, half the iterations against the other."""

import numpy as np

from cluster.partners import steady_partners
from tomography.model.synthetic import planted_hierarchy, planted_partition
from tomography.model.weights import IterationWeights


def share(measurement) -> float:
    return steady_partners(IterationWeights.from_measurement(measurement))


def test_racks_of_two_keep_their_mates_and_a_flat_network_does_not() -> None:
    for seed in range(3):
        assert share(planted_hierarchy((10,), 2, iterations=6, seed=seed)) >= 0.8
        assert share(planted_partition(20, 1, iterations=6, seed=seed)) <= 0.25


def test_one_iteration_has_no_halves() -> None:
    assert np.isnan(share(planted_partition(8, 2, iterations=1, seed=0)))


def test_a_host_that_meets_no_one_in_a_half_is_not_steady() -> None:
    m = planted_hierarchy((4,), 2, iterations=2, seed=0)
    lonely = m.host_names[0]
    t = m.transfers
    m.transfers = t[~(((t["receiver"] == lonely) | (t["sender"] == lonely))
                      & (t["iteration"] == t["iteration"].max()))].reset_index(drop=True)
    full = share(planted_hierarchy((4,), 2, iterations=2, seed=0))
    assert share(m) <= full - 1 / 8 + 1e-9
