"""Eq 5.2 and 5.3 on hand-computed cases, and the threshold partitions."""

from __future__ import annotations

import pytest

from tests.tomography.test_topology import BASE, variant
from tomography.ground_truth import connections, link_table, threshold_partitions
from tomography.topology import TopologyError, parse_topology, read_topology


def test_eq_5_2_by_hand() -> None:
    assert connections(64, 448) == pytest.approx(64 / 448 * 512 / 2)
    assert connections(10, 10) == 10.0
    assert connections(0, 5) == 0.0


def test_eq_5_3_link_table_by_hand() -> None:
    t = parse_topology(variant())
    table = link_table(t).set_index("link")
    # A-B: 2 hosts | 3 hosts -> conn = 2/3 * 5/2 = 5/3; 1Gbit/s / (5/3) = 600 Mbit/s
    assert table.loc["A-B", "connections"] == pytest.approx(5 / 3)
    assert table.loc["A-B", "bw_per_connection_bps"] == pytest.approx(6e8)
    # B-C: the same split, 100Mbit/s -> 60 Mbit/s: the lowest, listed first
    assert link_table(t)["link"].iloc[0] == "B-C"
    assert table.loc["B-C", "bw_per_connection_bps"] == pytest.approx(6e7)


def test_threshold_partitions() -> None:
    parts = threshold_partitions(parse_topology(variant()))
    assert [len(p.clusters) for p in parts] == [1, 2]
    split = parts[1]
    assert split.clusters == (("a",), ("c",)) and split.acceptable
    assert split.low == pytest.approx(6e7) and split.high == pytest.approx(1e9)  # up to the NIC
    assert split.labels(parse_topology(variant()))["c-02"] == "c"


def test_n1_and_n2_match_the_thesis_thresholds() -> None:
    n1 = [p for p in threshold_partitions(read_topology("N1")) if p.acceptable]
    assert (("R1", "R2"), ("R3", "R4"), ("R5", "R6"), ("R7", "R8")) in [p.clusters for p in n1]
    n2 = {len(p.clusters): p for p in threshold_partitions(read_topology("N2"))}
    # thesis 5.11.4: thresholds at R3-R4, R2-R3 or R5-R6; its result is the 7-cluster cut
    assert n2[7].clusters[:2] == (("R1", "R2"), ("R3", "R4")) and n2[7].acceptable
    assert n2[6].acceptable and n2[8].clusters[0] == ("R1", "R2")


def test_cycles_are_refused() -> None:
    links = BASE["links"] + [{"between": ["A", "C"], "capacity": "1Gbit/s", "latency": "1ms"}]
    with pytest.raises(TopologyError, match="needs a tree"):
        link_table(parse_topology(variant(links=links)))
