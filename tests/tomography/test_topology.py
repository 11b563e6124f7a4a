"""Topology files: units, schema errors, routing, and every scenario file."""

from __future__ import annotations

from pathlib import Path

import pytest

from tomography.model.topology import (SCENARIO_DIR, Link, TopologyError, parse_topology,
                                       read_topology)
from tomography.model.units import parse_bandwidth, parse_size, parse_time

BASE = {
    "name": "t", "routers": ["A", "B", "C"],
    "links": [{"between": ["A", "B"], "capacity": "1Gbit/s", "latency": "1ms"},
              {"between": ["B", "C"], "capacity": "100Mbit/s", "latency": "2ms"}],
    "clusters": [{"name": "a", "router": "A", "hosts": 2, "nic": "1Gbit/s", "latency": "50us"},
                 {"name": "c", "router": "C", "hosts": 3, "nic": "1Gbit/s"}],
}


def variant(**changes):
    data = {k: (list(v) if isinstance(v, list) else v) for k, v in BASE.items()}
    data.update(changes)
    return data


def test_units_are_strict() -> None:
    assert parse_bandwidth("100Mbit/s") == 1e8 and parse_bandwidth("1.5 Gbit/s") == 1.5e9
    assert parse_bandwidth("10MiB/s") == 10 * 2**20 * 8
    assert parse_time("100us") == pytest.approx(1e-4) and parse_time("20ms") == 0.02
    assert parse_size("64MiB") == 2**26
    for bad, parse in [("100", parse_bandwidth), (100, parse_bandwidth), ("1 Gbps", parse_bandwidth),
                       ("5", parse_time), ("1.5B", parse_size), ("fast", parse_time)]:
        with pytest.raises(ValueError):
            parse(bad)


def test_hosts_and_routing_on_a_tree() -> None:
    t = parse_topology(variant())
    assert [h.name for h in t.hosts] == ["a-00", "a-01", "c-00", "c-01", "c-02"]
    assert t.is_tree and t.route("A", "C") == [("A", "B"), ("B", "C")]
    assert t.route("C", "A") == [("C", "B"), ("B", "A")] and t.route("B", "B") == []
    # 50us + 1ms + 2ms + 0 (cluster c has no host latency)
    assert t.one_way_latency("a-00", "c-01") == pytest.approx(3.05e-3)


def test_routing_with_cycles_takes_the_lowest_latency() -> None:
    links = BASE["links"] + [{"between": ["A", "C"], "capacity": "10Gbit/s", "latency": "10ms"}]
    t = parse_topology(variant(links=links))
    assert not t.is_tree
    assert t.route("A", "C") == [("A", "B"), ("B", "C")]   # 3ms beats the direct 10ms
    fast = links[:-1] + [{"between": ["A", "C"], "capacity": "10Gbit/s", "latency": "1ms"}]
    assert parse_topology(variant(links=fast)).route("A", "C") == [("A", "C")]


@pytest.mark.parametrize("changes, field, words", [
    ({"name": ""}, "name", "missing"),
    ({"routers": ["A", "A"]}, "routers[1]", "duplicate router"),
    ({"links": [{"between": ["A", "Z"], "capacity": "1Gbit/s", "latency": "1ms"}]},
     "links[0].between", "unknown router 'Z'"),
    ({"links": [{"between": ["A", "B"], "capacity": "1000", "latency": "1ms"}]},
     "links[0].capacity", "unit written out"),
    ({"links": [{"between": ["A", "B"], "capacity": "1Gbit/s"}]}, "links[0].latency", "missing"),
    ({"links": [{"between": ["A", "B"], "capacity": "1Gbit/s", "latency": "1ms", "cost": 3}]},
     "links[0].cost", "unknown key"),
    ({"clusters": [{"name": "a", "router": "A", "hosts": 0, "nic": "1Gbit/s"}]},
     "clusters[0].hosts", "positive integer"),
    ({"clusters": [{"name": "a", "router": "A", "hosts": 2}]}, "clusters[0].nic", "no NIC"),
    ({"clusters": [{"name": "a", "router": "Q", "hosts": 2, "nic": "1Gbit/s"}]},
     "clusters[0].router", "unknown router"),
    ({"speed": "fast"}, "speed", "unknown key"),
    ({"unreachable": "A C"}, "unreachable", "list of pairs"),
    ({"unreachable": [["A"]]}, "unreachable[0]", "pair of routers"),
    ({"unreachable": [["A", "B"]]}, "unreachable[0]", "'B' is not a router with hosts"),
    ({"unreachable": [["A", "Z"]]}, "unreachable[0]", "'Z' is not a router with hosts"),
    ({"unreachable": [["A", "A"]]}, "unreachable[0]", "always reach each other"),
    ({"unreachable": [["A", "C"], ["C", "A"]]}, "unreachable[1]", "listed twice"),
])
def test_schema_errors_name_the_field(changes, field, words) -> None:
    with pytest.raises(TopologyError) as info:
        parse_topology(variant(**changes), source="net.yaml")
    assert info.value.field == field and words in str(info.value)
    assert str(info.value).startswith("net.yaml, field")


def test_disconnected_hosts_are_an_error() -> None:
    with pytest.raises(TopologyError, match="no path"):
        parse_topology(variant(links=BASE["links"][:1]))
    with pytest.raises(TopologyError, match="router 'Z' has no path") as info:
        parse_topology(variant(routers=[*BASE["routers"], "Z"]))     # linked to nothing
    assert info.value.field == "routers"


def test_file_errors_give_the_line(tmp_path: Path) -> None:
    bad = tmp_path / "net.yaml"
    bad.write_text("name: n\n"
                   "host_defaults: {nic: 1Gbit/s, latency: 50us}\n"
                   "routers: [A, B]\n"
                   "links:\n"
                   "- between: [A, B]\n"
                   "  capacity: 1\n"                           # line 6: no unit
                   "  latency: 1ms\n"
                   "clusters:\n"
                   "- {name: a, router: A, hosts: 2, latency: -5ms}\n"
                   "- {name: b, router: B, hosts: 2, nic: 1Gbit/s, nic_up: 2Gbit/s}\n")
    with pytest.raises(TopologyError) as info:
        read_topology(bad)
    assert info.value.line == 6 and info.value.field == "links[0].capacity"
    assert str(info.value).startswith(f"{bad}, line 6, field 'links[0].capacity': ")
    bad.write_text(bad.read_text().replace("capacity: 1\n", "capacity: 1Gbit/s\n"))
    with pytest.raises(TopologyError, match="line 9, field 'clusters.0..latency': a time "
                                            "cannot be negative"):
        read_topology(bad)
    bad.write_text(bad.read_text().replace(", latency: -5ms", ""))
    with pytest.raises(TopologyError, match="line 10, field 'clusters.1..nic': give nic"):
        read_topology(bad)
    # a bad default is blamed on host_defaults, where it is written
    bad.write_text(bad.read_text().replace(", nic_up: 2Gbit/s", "").replace(
        "- {name: b, router: B, hosts: 2, nic: 1Gbit/s}", "- {name: b, router: B, hosts: 2}")
        .replace("nic: 1Gbit/s, latency", "nic: 1, latency"))
    with pytest.raises(TopologyError, match="line 2, field 'host_defaults.nic'"):
        read_topology(bad)


def test_file_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [unclosed\n")
    with pytest.raises(TopologyError, match=r"bad.yaml, line 2: not valid YAML"):
        read_topology(bad)
    with pytest.raises(TopologyError, match="built-in"):
        read_topology(tmp_path / "none.yaml")


EXPECTED = {"bordeaux-2x2": 4, "bordeaux-64": 64, "bordeaux-toulouse": 64,
            "grenoble-toulouse": 64, "three-sites": 96, "four-sites": 64, "N1": 512, "N2": 576,
            "tree-5": 5, "emulated-4x16-fast": 64, "emulated-4x16-slow": 64,
            "two-sites-demo": 20, "two-sites-rtt": 16, "gridlab-8": 8, "das-2x8": 16,
            "das-chain-3x8": 24}


def test_every_scenario_is_a_valid_file() -> None:
    assert {p.stem for p in SCENARIO_DIR.glob("*.yaml")} == set(EXPECTED)
    for name, hosts in EXPECTED.items():
        t = read_topology(name)
        assert len(t.hosts) == hosts, name
        assert all(h.label for h in t.hosts), name
    slow = read_topology("emulated-4x16-slow")
    assert slow.graph.edges["A", "D"]["capacity"] == pytest.approx(0.8 * 2**20 * 8)


def test_duplicate_keys_implausible_capacities_and_directories(tmp_path) -> None:
    dup = tmp_path / "dup.yaml"
    dup.write_text("name: x\nname: y\nrouters: [A]\nclusters: [{name: a, router: A, hosts: 2}]\n")
    with pytest.raises(TopologyError, match="line 2: key 'name' given twice"):
        read_topology(dup)
    links = [{"between": ["A", "B"], "capacity": "1e30Gbit/s", "latency": "1ms"}]
    with pytest.raises(TopologyError, match="beyond any network") as err:
        parse_topology(variant(links=links))
    assert err.value.field == "links[0].capacity"
    with pytest.raises(TopologyError, match="is a directory"):
        read_topology(tmp_path)


def test_a_mistyped_scenario_name_gets_a_suggestion() -> None:
    with pytest.raises(TopologyError, match="did you mean two-sites-demo"):
        read_topology("two-site-demo")
    with pytest.raises(TopologyError, match="did you mean N1"):
        read_topology("n1")


# ----------------------------------------------------------------- capacity per direction

def directed(capacity, between=("A", "B")):
    return {"between": list(between), "capacity": capacity, "latency": "1ms"}


def test_a_link_may_give_one_capacity_per_direction() -> None:
    links = [directed({"A": "100Mbit/s", "B": "40Mbit/s"}), BASE["links"][1]]
    t = parse_topology(variant(links=links))
    ab, bc = t.links
    assert (ab.capacity_from("A"), ab.capacity_from("B"), ab.capacity) == (1e8, 4e7, 4e7)
    assert not ab.symmetric and bc.symmetric and not t.symmetric
    assert bc.capacity_from("B") == bc.capacity_from("C") == bc.capacity == 1e8
    assert t.link_capacity("A", "B") == 1e8 and t.link_capacity("B", "A") == 4e7
    assert t.graph.edges["A", "B"]["capacity"] == 4e7        # undirected: the slower way
    with pytest.raises(ValueError, match="not an end"):
        ab.capacity_from("C")
    with pytest.raises(TopologyError, match="no link between 'A' and 'C'"):
        t.link_capacity("A", "C")
    # keyed by the sender, whatever the order of between; equal directions are one capacity
    swapped = parse_topology(variant(links=[directed({"B": "40Mbit/s", "A": "100Mbit/s"}),
                                            BASE["links"][1]]))
    assert swapped.links[0] == ab
    same = parse_topology(variant(links=[directed({"A": "1Gbit/s", "B": "1000Mbit/s"}),
                                         BASE["links"][1]]))
    assert same.links == parse_topology(variant()).links and same.symmetric


@pytest.mark.parametrize("capacity, field, words", [
    ({"A": "100Mbit/s"}, "links[0].capacity", "'B' is missing"),
    ({"A": "100Mbit/s", "B": "1Gbit/s", "C": "1Gbit/s"}, "links[0].capacity.C",
     "'C' is not an end of this link"),
    ({"A": "100Mbit/s", "Z": "1Gbit/s"}, "links[0].capacity.Z", "not an end"),
    ({"A": "100Mbit/s", "B": "40"}, "links[0].capacity.B", "unit written out"),
    ({"A": "100Mbit/s", "B": "0Mbit/s"}, "links[0].capacity.B", "positive"),
    ({"A": "none", "B": "none"}, "links[0].capacity", "at least one way"),
    ({"A": "none", "B": "1Gbit/s"}, "links", "router 'A' cannot reach router 'C'"),
])
def test_bad_capacities_per_direction_name_the_field(capacity, field, words) -> None:
    links = [directed(capacity), BASE["links"][1]]
    with pytest.raises(TopologyError) as info:
        parse_topology(variant(links=links), source="net.yaml")
    assert info.value.field == field and words in str(info.value)


def test_both_spellings_of_a_capacity_at_once_are_refused(tmp_path: Path) -> None:
    bad = tmp_path / "net.yaml"
    bad.write_text("name: n\nrouters: [A, B]\nlinks:\n"
                   "- between: [A, B]\n"
                   "  capacity: 1Gbit/s\n"
                   "  capacity: {A: 1Gbit/s, B: 2Gbit/s}\n"     # line 6
                   "  latency: 1ms\n"
                   "clusters: [{name: a, router: A, hosts: 1, nic: 1Gbit/s}, "
                   "{name: b, router: B, hosts: 1, nic: 1Gbit/s}]\n")
    with pytest.raises(TopologyError, match="line 6: key 'capacity' given twice"):
        read_topology(bad)
    bad.write_text(bad.read_text().replace("  capacity: 1Gbit/s\n", "")
                   .replace("B: 2Gbit/s", "R2: 2Gbit/s"))
    with pytest.raises(TopologyError) as info:
        read_topology(bad)
    assert info.value.field == "links[0].capacity.R2" and info.value.line == 5


def test_a_one_way_link_is_routed_only_the_way_it_carries() -> None:
    links = [directed({"A": "none", "B": "1Gbit/s"}), BASE["links"][1],
             {"between": ["A", "C"], "capacity": "1Gbit/s", "latency": "10ms"}]
    t = parse_topology(variant(links=links))
    assert t.links[0].capacity == 0.0 and t.links[0].capacity_from("B") == 1e9
    assert t.route("B", "A") == [("B", "A")]
    assert t.route("A", "B") == [("A", "C"), ("C", "B")]      # not back over the dead way
    assert t.route("C", "A") == [("C", "B"), ("B", "A")]      # 3 ms beats the direct 10 ms


def test_links_check_their_capacities() -> None:
    assert Link.directed("A", "B", 5.0, 5.0, 0.1) == Link("A", "B", 5.0, 0.1)
    assert Link.directed("A", "B", 5.0, 2.0, 0.1).scaled(2) == Link.directed("A", "B", 10.0,
                                                                              4.0, 0.1)
    for capacity, ab, ba in [(5.0, 5.0, None),      # one direction without the other
                             (5.0, 5.0, 3.0),       # capacity is not the slower way
                             (0.0, 0.0, 0.0)]:      # carries nothing at all
        with pytest.raises(ValueError):
            Link("A", "B", capacity, 0.1, ab, ba)


def test_gridlab_8_is_den_burgers_tables() -> None:
    from tomography.planning import gridlab8
    t, net = read_topology("gridlab-8"), gridlab8()
    mib = parse_bandwidth("1MiB/s")
    assert [c.name for c in t.clusters] == net.nodes == t.routers
    assert [h.name for h in t.hosts] == [f"{site}-00" for site in net.nodes]
    assert [h.label for h in t.hosts] == net.nodes
    for i, a in enumerate(net.nodes):
        host = t.host_index[f"{a}-00"]
        assert (host.router, host.nic_up, host.nic_down) == (a, net.out_capacity[i] * mib,
                                                             net.in_capacity[i] * mib)
        for j, b in enumerate(net.nodes):
            if i == j:
                continue
            if net.bandwidth[i, j] > 0:           # live: the direct link, at the table's figure
                assert t.route(a, b) == [(a, b)], (a, b)
                assert t.link_capacity(a, b) == net.bandwidth[i, j] * mib, (a, b)
            else:                                 # dead: no link that way
                assert len(t.route(a, b)) == 2, (a, b)
    assert len(t.links) == 8 * 7 // 2 - 4                     # 4 pairs dead both ways
    assert t.link_capacity("mike4", "n0") == 0.93 * mib and t.link_capacity("n0", "mike4") == 0


@pytest.mark.parametrize("name, clusters", [("das-2x8", 2), ("das-chain-3x8", 3)])
def test_clusters_behind_a_wan(name: str, clusters: int) -> None:
    t = read_topology(name)
    assert len(t.hosts) == 8 * clusters
    assert sorted({h.label for h in t.hosts}) == list("ABC"[:clusters])
    mbit = 1e6
    # within a cluster over the switch (60 Mbit/s), across over the hosts' cards (2 Mbit/s)
    # and the WAN (12 Mbit/s): six cards side by side fill the WAN
    assert t.route("a0", "a5") == [("a0", "a-lan"), ("a-lan", "a5")]
    assert t.route("a0", "b3") == [("a0", "a-wan"), ("a-wan", "b-wan"), ("b-wan", "b3")]
    assert t.link_capacity("a0", "a-lan") == 60 * mbit
    assert t.link_capacity("a0", "a-wan") == 2 * mbit
    assert t.link_capacity("a-wan", "b-wan") == 12 * mbit == 6 * t.link_capacity("b3", "b-wan")
    if clusters == 3:
        assert t.route("a0", "c1")[1:3] == [("a-wan", "b-wan"), ("b-wan", "c-wan")]

def test_a_directory_named_like_a_built_in_scenario_does_not_hide_it(tmp_path, monkeypatch):
    """`tomography demo -o two-sites-demo` leaves a directory of that name: the name still
    means the built-in topology, never the directory."""
    (tmp_path / "two-sites-demo").mkdir()
    monkeypatch.chdir(tmp_path)
    assert len(read_topology("two-sites-demo").hosts) == 20


def test_an_unreachable_pair_is_refused_both_ways_and_routed_as_before() -> None:
    t = parse_topology(variant(unreachable=[["C", "A"]]))
    assert t.unreachable == (("C", "A"),)
    assert not t.reaches("A", "C") and not t.reaches("C", "A") and t.reaches("A", "B")
    assert t.route("A", "C") == [("A", "B"), ("B", "C")]   # the path a firewall cuts
    assert parse_topology(variant()).unreachable == ()


def test_gridlab_8_lists_its_dead_pairs_as_unreachable() -> None:
    t = read_topology("gridlab-8")
    dead = {frozenset(p) for p in t.unreachable}
    assert dead == {frozenset(p) for p in [("n0", "cluster3"), ("n0", "ia64"), ("n0", "pegasos"),
                                           ("ia64", "pegasos")]}
    linked = {frozenset((link.a, link.b)) for link in t.links}
    assert not dead & linked    # a dead pair has no link of its own
