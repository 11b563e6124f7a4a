"""Eq 5.2 and 5.3 on hand-computed cases, and the threshold partitions."""

from __future__ import annotations

import pytest
import yaml

from tests.tomography.test_topology import BASE, variant
from tomography.cli import main
from tomography.model.ground_truth import (connections, link_table, nic_share, observable_labels,
                                           threshold_partitions)
from tomography.model.topology import TopologyError, parse_topology, read_topology


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


def test_a_link_with_a_capacity_per_direction_enters_at_its_slower_one(capsys,
                                                                       tmp_path) -> None:
    links = [{"between": ["A", "B"], "capacity": {"A": "1Gbit/s", "B": "100Mbit/s"},
              "latency": "1ms"}, BASE["links"][1]]
    t = parse_topology(variant(links=links))
    table = link_table(t).set_index("link")
    assert table.loc["A-B", "capacity_bps"] == 1e8
    assert table.loc["A-B", "bw_per_connection_bps"] == pytest.approx(6e7)
    # the same as a symmetric link at the slower direction
    slow = parse_topology(variant(links=[{**links[0], "capacity": "100Mbit/s"}, links[1]]))
    assert [p.clusters for p in threshold_partitions(t)] == [
        p.clusters for p in threshold_partitions(slow)]
    # and the command says so
    path = tmp_path / "asym.yaml"
    path.write_text(yaml.safe_dump(variant(links=links)))
    assert main(["truth", str(path)]) == 0
    out = capsys.readouterr().out
    assert ("link with a capacity per direction is taken at the slower one: A-B "
            "(A->B 1Gbit/s, B->A 100Mbit/s)") in out


def test_cycles_are_refused() -> None:
    links = BASE["links"] + [{"between": ["A", "C"], "capacity": "1Gbit/s", "latency": "1ms"}]
    with pytest.raises(TopologyError, match="needs a tree"):
        link_table(parse_topology(variant(links=links)))


def chain(fast_link: str) -> dict:
    """Four 4-host clusters in a chain A-B-C-D, 1 Gbit/s NICs; ``fast_link`` joins A and B.

    Per connection (Eq 5.3): A-B 4|12 hosts, 8/3 connections; B-C 8|8, 8
    connections, 250 Mbit/s -> 31 Mbit/s; C-D 12|4, 25 Mbit/s -> 9.4 Mbit/s.
    A NIC shared by 8 connections gives each 125 Mbit/s.
    """
    return {"name": "chain", "routers": ["A", "B", "C", "D"],
            "host_defaults": {"nic": "1Gbit/s", "latency": "50us"},
            "links": [{"between": ["A", "B"], "capacity": fast_link, "latency": "100us"},
                      {"between": ["B", "C"], "capacity": "250Mbit/s", "latency": "100us"},
                      {"between": ["C", "D"], "capacity": "25Mbit/s", "latency": "100us"}],
            "clusters": [{"name": r.lower(), "router": r, "hosts": 4, "label": r.lower()}
                         for r in "ABCD"]}


def test_a_cut_above_the_nic_share_is_unobservable() -> None:
    # A-B at 1 Gbit/s: 375 Mbit/s per connection, three times a NIC's share
    topo = parse_topology(chain("1Gbit/s"))
    assert nic_share(topo) == pytest.approx(125e6)
    parts = {len(p.clusters): p for p in threshold_partitions(topo)}
    finest = parts[4]
    assert finest.low == pytest.approx(375e6) and finest.gap > 2.5   # a clear gap ...
    assert not finest.observable and not finest.acceptable           # ... no broadcast sees
    assert parts[3].observable and parts[3].acceptable               # {a, b} together
    # without the share (the NIC unshared, as published) the finest cut is acceptable
    unshared = {len(p.clusters): p for p in threshold_partitions(topo, host_connections=1)}
    assert unshared[4].observable and unshared[4].acceptable
    each = {h.name: h.cluster for h in topo.hosts}
    seen = observable_labels(topo, each)
    assert seen["a-00"] == seen["b-00"] == "a+b" and seen["c-00"] == "c"


def test_a_cut_below_the_nic_share_is_observable() -> None:
    # A-B at 250 Mbit/s: 94 Mbit/s per connection, below the 125 Mbit/s share
    topo = parse_topology(chain("250Mbit/s"))
    parts = {len(p.clusters): p for p in threshold_partitions(topo)}
    assert parts[4].low == pytest.approx(93.75e6)
    assert parts[4].observable and parts[4].acceptable
    each = {h.name: h.cluster for h in topo.hosts}
    assert observable_labels(topo, each) == each


def test_the_share_counts_no_more_connections_than_peers() -> None:
    topo = parse_topology(variant())            # 5 hosts: at most 4 connections each
    assert nic_share(topo) == pytest.approx(1e9 / 4)
    with pytest.raises(ValueError, match="host_connections"):
        nic_share(topo, 0)


def test_n2_thesis_level_is_observable_with_libtorrent_slots() -> None:
    # thesis 5.11.4: R1+R2 and R3+R4 merged (278, 222 Mbit/s per connection: above the
    # 125 Mbit/s share), R2-R3 kept (121.5 Mbit/s: below it)
    n2 = read_topology("N2")
    parts = {len(p.clusters): p for p in threshold_partitions(n2)}
    assert parts[7].observable and parts[7].acceptable
    assert not parts[8].observable and not parts[9].observable
    # the simulator's peers upload on 8 + 1 connections: 111 Mbit/s, below R2-R3
    assert not {len(p.clusters): p for p in
                threshold_partitions(n2, host_connections=9)}[7].observable
