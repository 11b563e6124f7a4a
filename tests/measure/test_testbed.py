"""The netns testbed: the plan without root, the real thing with root (marked ``root``)."""

from __future__ import annotations

import ipaddress
import json
import math
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import measure.testbed as testbed
from measure.testbed import (Machine, Testbed, TestbedError, TestbedPlan, claim, down, estimate,
                             load, plan, scaled, status, up)
from measure.testbed import claims, commands, lifecycle, names, resources, state
from tomography.model.topology import Topology, parse_topology, read_topology

TWO = {"name": "two", "routers": ["A", "B"],
       "links": [{"between": ["A", "B"], "capacity": "16Mbit/s", "latency": "1ms"}],
       "clusters": [{"name": "a", "router": "A", "hosts": 2, "nic": "100Mbit/s",
                     "latency": "50us"},
                    {"name": "b", "router": "B", "hosts": 2, "nic_up": "100Mbit/s",
                     "nic_down": "50Mbit/s"}]}


def two() -> Topology:
    return parse_topology(TWO)


def text(commands: list[list[str]]) -> list[str]:
    return [" ".join(argv) for argv in commands]


def router_of_address(p: TestbedPlan) -> dict[str, str]:
    """Router name of every router-side address (link ends and bridges)."""
    by_ns = {ns: r for r, ns in p.routers.items()}
    return {port.address.split("/")[0]: by_ns[port.namespace]
            for port in p.ports if port.address and port.namespace in by_ns}


def forwarded_path(p: TestbedPlan, s: str, d: str) -> list[tuple[str, str]]:
    """The routers a packet from the hosts of ``s`` to those of ``d`` crosses, per the plan."""
    owner, path, u = router_of_address(p), [], s
    while u != d:
        routes = [r for r in p.routes if r.namespace == p.routers[u]
                  and r.destination == p.subnets[d]]
        specific = [r for r in routes if r.source == p.subnets[s]]
        chosen = specific or [r for r in routes if r.source is None]
        assert len(chosen) == 1, (u, d, routes)
        path.append((u, owner[chosen[0].via]))
        u = path[-1][1]
        assert len(path) <= len(p.topology.routers)
    return path


# --------------------------------------------------------------------------- scaled

def test_scaled_multiplies_every_capacity_and_keeps_the_first_hosts() -> None:
    t = read_topology("emulated-4x16-fast")
    s = scaled(t, bandwidth=0.25, hosts_per_cluster=3)
    assert s.name == t.name and s is not t
    assert [link.capacity for link in s.links] == [link.capacity * 0.25 for link in t.links]
    assert all(c.nic_up == o.nic_up * 0.25 and c.nic_down == o.nic_down * 0.25
               for c, o in zip(s.clusters, t.clusters))
    assert [h.name for h in s.hosts if h.cluster == "cb"] == ["cb-00", "cb-01", "cb-02"]
    assert len(s.hosts) == 12 and len(t.hosts) == 64  # the original is untouched
    assert scaled(t, hosts_per_cluster=100).host_index.keys() == t.host_index.keys()


def test_scaled_keeps_host_names_when_their_padding_would_change() -> None:
    big = parse_topology({**TWO, "clusters": [{**TWO["clusters"][0], "hosts": 128}]})
    assert [h.name for h in scaled(big, hosts_per_cluster=2).hosts] == ["a-000", "a-001"]
    assert [h.name for h in scaled(scaled(big, hosts_per_cluster=3),
                                   hosts_per_cluster=2).hosts] == ["a-000", "a-001"]


@pytest.mark.parametrize("bandwidth", [0, -1.0, math.nan, math.inf, "2", True])
def test_scaled_refuses_a_bad_bandwidth(bandwidth) -> None:
    with pytest.raises(ValueError, match="bandwidth"):
        scaled(two(), bandwidth=bandwidth)


@pytest.mark.parametrize("k", [0, -3, 1.5, True])
def test_scaled_refuses_a_bad_host_count(k) -> None:
    with pytest.raises(ValueError, match="hosts_per_cluster"):
        scaled(two(), hosts_per_cluster=k)


# --------------------------------------------------------------------------- plan

def test_plan_names_addresses_and_devices() -> None:
    p = plan(read_topology("emulated-4x16-fast"), name="t1")
    assert len(p.namespaces) == len(set(p.namespaces)) == 4 + 64
    assert all(ns.startswith("tomo-t1-") for ns in p.namespaces)
    assert p.hosts["cd-15"] == "tomo-t1-cd-15" and p.routers["D"] == "tomo-t1-r-D"
    addresses = list(p.addresses.values())
    assert len(set(addresses)) == 64 and list(p.addresses) == [h.name for h in p.topology.hosts]
    assert all(ipaddress.ip_address(a) in ipaddress.ip_network("10.201.0.0/16")
               for a in addresses)
    every = [port.address for port in p.ports if port.address]
    assert len(set(every)) == len(every) == 64 + 4 + 2 * 6
    assert all(ipaddress.ip_interface(a).is_private for a in every)
    devices = [d for v in p.veths for d in (v.device_a, v.device_b)] + [x.device for x in p.ports]
    assert max(map(len, devices)) <= 15


def test_plan_shapes_each_direction_with_tbf_at_the_right_rate() -> None:
    p = plan(two(), name="t2")
    lines = text(p.commands())
    rates = {(ns, dev): line.split(" rate ")[1].split()[0] for line in lines
             if " tbf " in line for ns, dev in [(line.split()[2], line.split()[6])]}
    assert rates == {("tomo-t2-a-00", "eth0"): "100000000bit",
                     ("tomo-t2-a-01", "eth0"): "100000000bit",
                     ("tomo-t2-b-00", "eth0"): "100000000bit",
                     ("tomo-t2-b-01", "eth0"): "100000000bit",
                     ("tomo-t2-r-A", "h0"): "100000000bit", ("tomo-t2-r-A", "h1"): "100000000bit",
                     ("tomo-t2-r-B", "h0"): "50000000bit", ("tomo-t2-r-B", "h1"): "50000000bit",
                     ("tomo-t2-r-A", "l0"): "16000000bit", ("tomo-t2-r-B", "l0"): "16000000bit"}
    assert not any("netem" in line for line in lines)


ASYMMETRIC = {**TWO, "links": [{"between": ["A", "B"],
                                 "capacity": {"A": "16Mbit/s", "B": "4Mbit/s"},
                                 "latency": "1ms"}]}


def test_plan_shapes_each_end_of_a_link_at_its_own_direction() -> None:
    p = plan(parse_topology(ASYMMETRIC), name="t2")
    lines = text(p.commands())
    link = {ns: line.split(" rate ")[1].split()[0] for line in lines
            if " tbf " in line and " dev l0 " in line for ns in [line.split()[2]]}
    assert link == {"tomo-t2-r-A": "16000000bit", "tomo-t2-r-B": "4000000bit"}
    # scaled: both directions, each its own
    half = plan(scaled(parse_topology(ASYMMETRIC), bandwidth=0.5), name="t2")
    assert [(s.namespace, s.rate) for s in half.shapers if s.device == "l0"] == [
        ("tomo-t2-r-A", 8e6), ("tomo-t2-r-B", 2e6)]


def test_plan_routes_a_one_way_link_only_the_way_it_carries() -> None:
    t = parse_topology({**TWO, "routers": ["A", "B", "C"], "links": [
        {"between": ["A", "B"], "capacity": {"A": "none", "B": "16Mbit/s"}, "latency": "1ms"},
        {"between": ["A", "C"], "capacity": "8Mbit/s", "latency": "1ms"},
        {"between": ["C", "B"], "capacity": "8Mbit/s", "latency": "1ms"}]})
    p = plan(t, name="t2")
    assert forwarded_path(p, "B", "A") == [("B", "A")]
    assert forwarded_path(p, "A", "B") == [("A", "C"), ("C", "B")]
    # the dead way carries only ARP; tbf needs a rate: the other way's
    assert [(s.namespace, s.rate) for s in p.shapers if s.device == "l0"] == [
        ("tomo-t2-r-A", 16e6), ("tomo-t2-r-B", 16e6)]


def test_gridlab_8_forwards_every_live_pair_over_its_direct_link() -> None:
    from tomography.planning import gridlab8
    net, p = gridlab8(), plan(read_topology("gridlab-8"), name="gl")
    for i, a in enumerate(net.nodes):
        for j, b in enumerate(net.nodes):
            if i != j:
                path = forwarded_path(p, a, b)
                assert path == p.topology.route(a, b)
                assert (path == [(a, b)]) == (net.bandwidth[i, j] > 0), (a, b)


def test_plan_configures_nothing_in_the_root_namespace() -> None:
    for argv in plan(read_topology("N2"), name="t2").commands(netem=True):
        assert (argv[1] == "-n" or argv[1:3] in (["netns", "add"], ["netns", "exec"])
                or (argv[1:3] == ["link", "add"] and argv.count("netns") == 2)), argv


def test_plan_adds_netem_delays_only_when_asked() -> None:
    lines = text(plan(two(), name="t2").commands(netem=True))
    assert ("tc -n tomo-t2-r-A qdisc add dev l0 root handle 1: netem delay 1000us limit 1000"
            in lines)
    assert ("tc -n tomo-t2-r-A qdisc add dev l0 parent 1:1 handle 10: tbf rate 16000000bit "
            "burst 15140 limit 200000" in lines)
    assert any(line.startswith("tc -n tomo-t2-a-00 qdisc add dev eth0 root handle 1: netem "
                               "delay 50us") for line in lines)
    # hosts of b have no latency: no netem on their NICs
    assert not any("netem" in line for line in lines if "tomo-t2-b-00" in line)


def test_plan_routes_every_remote_subnet_and_hosts_through_their_bridge() -> None:
    p = plan(read_topology("N1"), name="n1")
    for router, ns in p.routers.items():
        remote = {r.destination for r in p.routes if r.namespace == ns and r.source is None}
        assert remote == {net for r, net in p.subnets.items() if r != router}
    gateway = {ns: r.via for r in p.routes for ns in [r.namespace] if r.destination == "default"}
    assert gateway == {p.hosts[h.name]: f"10.201.{p.topology.routers.index(h.router)}.1"
                       for h in p.topology.hosts}


@pytest.mark.parametrize("scenario", ["emulated-4x16-slow", "N2", "bordeaux-2x2"])
def test_forwarding_follows_the_topology_routes(scenario: str) -> None:
    p = plan(read_topology(scenario), name="t3")
    assert not any(r.source for r in p.routes)
    for s in p.subnets:
        for d in p.subnets:
            assert forwarded_path(p, s, d) == p.topology.route(s, d)


def test_source_routes_keep_packets_on_the_topology_path_when_routes_tie() -> None:
    t = parse_topology({
        "name": "diamond", "routers": ["S", "M", "X", "Y", "D"],
        "links": [{"between": list(e), "capacity": "1Gbit/s", "latency": "1ms"}
                  for e in ["SM", "MX", "XD", "MY", "YD"]],
        "clusters": [{"name": "s", "router": "S", "hosts": 1, "nic": "1Gbit/s"},
                     {"name": "d", "router": "D", "hosts": 1, "nic": "1Gbit/s"}]})
    real = t.route
    t.route = lambda a, b: ([("M", "Y"), ("Y", "D")] if (a, b) == ("M", "D") else real(a, b))
    assert t.route("S", "D") == [("S", "M"), ("M", "X"), ("X", "D")]  # a tie, broken apart
    p = plan(t, name="t4")
    for s in p.subnets:
        for d in p.subnets:
            assert forwarded_path(p, s, d) == t.route(s, d)
    lines = text(p.commands())
    assert "ip -n tomo-t4-r-M route add 10.201.4.0/24 via 10.202.0.6 table 1000" in lines
    assert ("ip -n tomo-t4-r-M rule add from 10.201.0.0/24 to 10.201.4.0/24 table 1000"
            in lines)


@pytest.mark.parametrize("name", ["", "TB", "a-b", "toolong12", 7])
def test_plan_refuses_a_bad_testbed_name(name) -> None:
    with pytest.raises(TestbedError, match="testbed name"):
        plan(two(), name=name)


def test_plan_refuses_node_names_that_cannot_be_namespaces() -> None:
    spaced = {**TWO, "clusters": [{**TWO["clusters"][0], "host_prefix": "a b"}]}
    with pytest.raises(TestbedError, match="host 'a b00' cannot name a network namespace"):
        plan(parse_topology(spaced))
    # host r-00 of cluster a and router 00 would both live in tomo-tb-r-00
    clash = {**TWO, "routers": ["A", "B", "00"],
             "links": [*TWO["links"], {"between": ["A", "00"], "capacity": "1Gbit/s",
                                       "latency": "1ms"}],
             "clusters": [{**TWO["clusters"][0], "host_prefix": "r-", "hosts": 1}]}
    with pytest.raises(TestbedError, match="share the namespace 'tomo-tb-r-00'"):
        plan(parse_topology(clash))


def test_plan_refuses_more_hosts_than_the_address_plan_holds() -> None:
    crowded = {**TWO, "clusters": [{**TWO["clusters"][0], "hosts": 254}]}
    with pytest.raises(TestbedError, match="254 hosts on router 'A'.* at most 253"):
        plan(parse_topology(crowded))


def test_batches_run_the_commands_in_order_one_process_per_namespace() -> None:
    p = plan(two(), name="t5")
    batches = commands.batches(p.commands())
    assert batches[0] == (["ip", "-batch", "-"], [" ".join(argv[1:])
                                                  for argv in p.commands()[:6 + 5]])
    replayed = []
    for argv, lines in batches:
        replayed += [" ".join(argv)] if lines is None else [" ".join([*argv[:-2], line])
                                                             for line in lines]
    assert replayed == text(p.commands())
    # root, IPv6 off per namespace, ip per namespace, forwarding, tc
    assert len(batches) == 1 + 6 + 6 + 2 + 6


# --------------------------------------------------------------------------- without root

def test_up_refuses_without_root(monkeypatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(TestbedError, match=r"needs root .* uid 1000"):
        up(two(), name="t6")


def test_up_names_the_missing_tools(monkeypatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda tool: None if tool == "tc" else "/sbin/" + tool)
    with pytest.raises(TestbedError, match=r"needs tc \(iproute2\).*apt-get install iproute2"):
        up(two(), name="t6")


def made(p: TestbedPlan, **scale) -> Testbed:
    return Testbed(p.name, p.topology, p.hosts, p.addresses, p.subnets, False, "no netem",
                   scale, "2026-01-01T00:00:00+00:00")


def test_state_file_round_trip(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(names, "STATE_DIR", tmp_path)
    big = parse_topology({**TWO, "clusters": [{**TWO["clusters"][0], "hosts": 128}]})
    tb = made(plan(scaled(big, hosts_per_cluster=2), name="t7"), hosts_per_cluster=2)
    state.write_state("t7", state.record(tb))
    back = load("t7")
    assert back == tb and [h.name for h in back.topology.hosts] == ["a-000", "a-001"]
    assert back.command("a-001", ["hostname"]) == ["ip", "netns", "exec", "tomo-t7-a-001",
                                                   "hostname"]
    assert back.host_table()["address"].tolist() == ["10.201.0.2", "10.201.0.3"]
    meta = back.to_meta()
    assert meta["topology"] == "two" and meta["scale"] == {"hosts_per_cluster": 2}
    assert meta["latency_applied"] is False and "10.201" in meta["address_plan"]
    with pytest.raises(TestbedError, match="no host 'zz'"):
        back.command("zz", ["true"])


def test_status_tells_a_half_built_testbed_from_one_that_is_up(tmp_path: Path,
                                                               monkeypatch) -> None:
    monkeypatch.setattr(names, "STATE_DIR", tmp_path / "run")
    monkeypatch.setattr(names, "NETNS_DIR", tmp_path / "netns")
    (tmp_path / "netns").mkdir()
    p = plan(two(), name="wtb3")
    assert status("wtb3")["phase"] == "down"
    state.write_state("wtb3", state.building_record("wtb3", p.topology))
    with claim("wtb3"):                       # its up is still at work: this process
        assert status("wtb3")["phase"] == "building"
    assert status("wtb3")["phase"] == "half-built"   # its up is gone (killed)
    with pytest.raises(TestbedError, match="'wtb3' is not complete.*testbed down --name wtb3"):
        load("wtb3")
    for ns in p.namespaces[:-1]:
        (tmp_path / "netns" / ns).touch()
    state.write_state("wtb3", state.record(made(p)))
    assert status("wtb3")["phase"] == "half-built"   # one namespace missing
    assert status("wtb3")["missing"] == [p.namespaces[-1]]
    (tmp_path / "netns" / p.namespaces[-1]).touch()
    assert status("wtb3")["phase"] == "up" and status("wtb3")["up"]
    assert [b["name"] for b in testbed.raised_testbeds()] == ["wtb3"]
    assert [f.name for f in (tmp_path / "run").iterdir()] == ["testbed-wtb3.json"]


def test_state_keeps_the_capacity_of_each_direction(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(names, "STATE_DIR", tmp_path)
    tb = made(plan(parse_topology(ASYMMETRIC), name="t9"))
    state.write_state("t9", state.record(tb))
    back = load("t9")
    assert back.topology.links == tb.topology.links and not back.topology.symmetric
    assert back.topology.link_capacity("B", "A") == 4e6


def test_load_says_what_is_wrong(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(names, "STATE_DIR", tmp_path)
    with pytest.raises(TestbedError, match="no testbed 't8' is up"):
        load("t8")
    (tmp_path / "testbed-t8.json").write_text("{", encoding="utf-8")
    with pytest.raises(TestbedError, match="testbed-t8.json: cannot read"):
        load("t8")
    (tmp_path / "testbed-t8.json").write_text("{}", encoding="utf-8")
    with pytest.raises(TestbedError, match="not a testbed state file"):
        load("t8")


# --------------------------------------------------------------------------- resources

TWO_CORES = Machine(2, 4 * 2**30)


def test_estimate_counts_namespaces_peers_and_what_a_broadcast_moves() -> None:
    e = estimate(read_topology("two-sites-demo"))
    assert (e.namespaces, e.peers, e.rate) == (26, 20, 700e6)
    assert e.cores == pytest.approx(20 * resources.PEER_CPU + 0.7 * resources.CPU_PER_GBIT)
    assert e.memory == 26 * resources.NAMESPACE_MEMORY + 20 * resources.PEER_MEMORY
    # from a root in a: its neighbour at 100 Mbit/s, b's two hosts behind the 16 Mbit/s link
    assert resources.broadcast_rate(two()) == 100e6 + 2 * 16e6
    assert estimate(scaled(two(), bandwidth=2)).rate == 2 * (100e6 + 2 * 16e6)


def test_what_a_broadcast_moves_takes_each_direction_of_a_link_at_its_own() -> None:
    # from a root in a: 100 to its neighbour, 2 x 16 across; from b: 50 to its neighbour
    # (its NIC down), 2 x 4 across; the larger wins
    assert resources.broadcast_rate(parse_topology(ASYMMETRIC)) == 100e6 + 2 * 16e6
    slow_out = {**ASYMMETRIC, "links": [{**ASYMMETRIC["links"][0],
                                         "capacity": {"A": "1Mbit/s", "B": "60Mbit/s"}}]}
    assert resources.broadcast_rate(parse_topology(slow_out)) == 50e6 + 2 * 60e6
    # the cut from a router is the maximum flow over each direction's own capacity
    t = parse_topology({**TWO, "routers": ["A", "B", "C"], "links": [
        {"between": ["A", "B"], "capacity": {"A": "none", "B": "16Mbit/s"}, "latency": "1ms"},
        {"between": ["A", "C"], "capacity": {"A": "8Mbit/s", "C": "1Mbit/s"}, "latency": "1ms"},
        {"between": ["C", "B"], "capacity": "2Mbit/s", "latency": "1ms"}]})
    cut = resources._cuts(t)
    # A -> B only over C (2); B -> A direct 16 + 1 over C; B -> C 2 + 8 over A; C -> A 1 + 2
    assert (cut("A", "B"), cut("B", "A"), cut("B", "C"), cut("C", "A")) == (2e6, 17e6, 10e6, 3e6)


def test_gridlab_8_fits_two_cores() -> None:
    e = resources.check(read_topology("gridlab-8"), m=TWO_CORES)
    assert e.fits(TWO_CORES) and e.peers == 8 and e.namespaces == 16


def test_the_demo_fits_two_cores_and_n1_is_refused_with_options_that_fit() -> None:
    assert resources.check(read_topology("two-sites-demo"), m=TWO_CORES).fits(TWO_CORES)
    with pytest.raises(TestbedError, match=r"^testbed 'tb' is more than this machine can carry: "
                                           r"527 namespaces, 512 peers, .* \(this machine has 2\)"
                                           r".* --hosts-per-cluster 2 --bandwidth-scale ([.\d]+); "
                                           r"or simulate it \(tomography simulate N1\); "
                                           r"or raise it anyway .*--force`$") as refused:
        resources.check(read_topology("N1"), m=TWO_CORES)
    factor = float(re.search(r"--bandwidth-scale ([.\d]+)", str(refused.value)).group(1))
    fitting = scaled(read_topology("N1"), hosts_per_cluster=2, bandwidth=factor)  # the advice
    assert resources.check(fitting, bandwidth=factor, m=TWO_CORES).cores <= 2


def test_the_advice_starts_from_the_scale_given_and_weighs_memory() -> None:
    fast = scaled(read_topology("tree-5"), bandwidth=3)
    with pytest.raises(TestbedError, match=r"--bandwidth-scale ([.\d]+);") as refused:
        resources.check(fast, bandwidth=3, m=TWO_CORES)
    factor = float(re.search(r"--bandwidth-scale ([.\d]+)", str(refused.value)).group(1))
    assert 1 < factor < 3
    assert resources.check(scaled(read_topology("tree-5"), bandwidth=factor),
                           bandwidth=factor, m=TWO_CORES)
    small = Machine(64, 2**30)                      # cores to spare, 1 GiB of memory
    with pytest.raises(TestbedError, match=r"2.1 GiB of memory \(1.0 GiB available\); it would "
                                           r"fit with --hosts-per-cluster 2;"):
        resources.check(read_topology("two-sites-demo"), m=small)


def test_up_refuses_before_it_makes_anything(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(lifecycle, "require", lambda tools: None)   # root or not: nothing is run
    monkeypatch.setattr(names, "STATE_DIR", tmp_path / "run")
    monkeypatch.setattr(names, "NETNS_DIR", tmp_path / "netns")
    monkeypatch.setattr(resources, "machine", lambda: TWO_CORES)
    with pytest.raises(TestbedError, match="more than this machine can carry"):
        up(read_topology("N1"), name="wtb4")
    assert not (tmp_path / "netns").exists() and list((tmp_path / "run").iterdir()) == []


# --------------------------------------------------------------------------- claims

HOLD = """
import sys, time
from pathlib import Path
from measure.testbed import claim, names
names.STATE_DIR = Path(sys.argv[1])
with claim(sys.argv[2]):
    print("ready", flush=True)
    time.sleep(120)
"""


def holding(name: str) -> subprocess.Popen:
    """Another process holding testbed ``name``'s claim (in the current STATE_DIR)."""
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(names.STATE_DIR), name],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    return proc


@pytest.mark.slow  # over 2 s
def test_a_claim_is_refused_while_another_process_holds_it(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(names, "STATE_DIR", tmp_path)
    other = holding("wtb1")
    try:
        with pytest.raises(TestbedError, match=rf"^testbed 'wtb1' is in use by process "
                                               rf"{other.pid} \(.*-c .*\): wait until it ends, "
                                               r"or use another --name"):
            with claim("wtb1"):
                pass
        assert status("wtb1")["holder"]["pid"] == other.pid
        with claim("wtb2"):  # another name is free
            pass
    finally:
        other.kill()  # SIGKILL: the kernel drops its lock all the same
        other.wait()
    with claim("wtb1"):
        with claim("wtb1"):  # re-entrant within a process
            pass
        assert claims.holder("wtb1")["pid"] == os.getpid()
    assert claims.holder("wtb1") is None and list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- with root

def fresh_name() -> str:
    return f"tst{random.randrange(10**4):04d}"


def root_namespace() -> tuple[str, str]:
    """The root namespace's veths and addresses."""
    veths = subprocess.run(["ip", "-o", "link", "show", "type", "veth"], capture_output=True,
                           text=True, check=True).stdout
    addrs = subprocess.run(["ip", "-o", "addr"], capture_output=True, text=True,
                           check=True).stdout
    return veths, addrs


@pytest.fixture(scope="module")
def root_before(as_root) -> tuple[str, str]:
    return root_namespace()


@pytest.fixture(scope="module")
def bed(root_before) -> Testbed:
    name = fresh_name()
    tb = up(two(), name=name)
    try:
        yield tb
    finally:
        down(name)


SERVER = """
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], 7000)); s.listen(); print("ready", flush=True)
while True:
    c, _ = s.accept(); c.close()
"""
CLIENT = """
import json, socket, sys
out = {}
for addr in sys.argv[2:]:
    try:
        socket.create_connection((addr, int(sys.argv[1])), timeout=2).close()
        out[addr] = "ok"
    except OSError as exc:
        out[addr] = str(exc)
print(json.dumps(out))
"""
RECEIVER = """
import socket, sys, time
s = socket.socket(); s.bind((sys.argv[1], 7001)); s.listen(); print("ready", flush=True)
c, _ = s.accept(); n, t0 = 0, None
while (b := c.recv(1 << 16)):
    t0 = t0 or time.monotonic(); n += len(b)
print(n * 8 / (time.monotonic() - t0), flush=True)
"""
SENDER = """
import socket, sys, time
c = socket.create_connection((sys.argv[1], 7001)); end = time.monotonic() + float(sys.argv[2])
while time.monotonic() < end:
    c.sendall(b"x" * 65536)
c.close()
"""


def start(tb: Testbed, host: str, script: str, *args: str) -> subprocess.Popen:
    proc = subprocess.Popen(tb.command(host, [sys.executable, "-c", script, *args]),
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    return proc


def run_in(tb: Testbed, host: str, script: str, *args: str) -> str:
    return subprocess.run(tb.command(host, [sys.executable, "-c", script, *args]),
                          capture_output=True, text=True, check=True, timeout=20).stdout


@pytest.mark.root
def test_every_host_reaches_every_other(bed: Testbed) -> None:
    servers = [start(bed, h, SERVER, a) for h, a in bed.addresses.items()]
    try:
        for host, addr in bed.addresses.items():
            others = [a for a in bed.addresses.values() if a != addr]
            reached = json.loads(run_in(bed, host, CLIENT, "7000", *others))
            assert reached == dict.fromkeys(others, "ok"), host
    finally:
        for proc in servers:
            proc.kill()
            proc.wait()


@pytest.mark.root
def test_nothing_leaves_the_testbed(bed: Testbed, root_before: tuple[str, str]) -> None:
    reply = json.loads(run_in(bed, "a-00", CLIENT, "53", "8.8.8.8"))
    assert "unreachable" in reply["8.8.8.8"]
    got = subprocess.run(["ip", "-n", f"tomo-{bed.name}-r-A", "route", "get", "8.8.8.8"],
                         capture_output=True, text=True)
    assert got.returncode != 0 and "unreachable" in got.stderr
    assert root_namespace() == root_before  # no veth end, no address in the root namespace


@pytest.mark.root
def test_tc_shows_the_shaping(bed: Testbed) -> None:
    def qdiscs(ns: str) -> str:
        return subprocess.run(["tc", "-n", ns, "qdisc", "show"], capture_output=True,
                              text=True, check=True).stdout
    router_b = qdiscs(f"tomo-{bed.name}-r-B")
    assert "dev l0 root" in router_b and "rate 16Mbit" in router_b
    assert "dev h1 root" in router_b and "rate 50Mbit" in router_b
    assert "tbf" in qdiscs(bed.hosts["b-01"]) and "rate 100Mbit" in qdiscs(bed.hosts["b-01"])


@pytest.mark.root
def test_throughput_is_shaped_by_the_link(bed: Testbed) -> None:
    receiver = start(bed, "b-00", RECEIVER, bed.addresses["b-00"])
    try:
        run_in(bed, "a-00", SENDER, bed.addresses["b-00"], "1.2")
        rate = float(receiver.communicate(timeout=10)[0])
    finally:
        receiver.kill()
    assert 0.5 * 16e6 < rate < 1.05 * 16e6


@pytest.mark.root
def test_status_load_and_latency_report(bed: Testbed) -> None:
    now = status(bed.name)
    assert now["up"] and not now["missing"] and len(now["namespaces"]) == 6
    assert load(bed.name) == bed
    netem = subprocess.run(["tc", "-n", f"tomo-{bed.name}-r-A", "qdisc", "show", "dev", "l0"],
                           capture_output=True, text=True).stdout
    assert bed.latency_applied == ("netem" in netem)
    if not bed.latency_applied:
        assert "no netem" in bed.latency_note


@pytest.mark.root
def test_up_refuses_a_testbed_that_is_up(bed: Testbed, capsys) -> None:
    from tomography.cli import main

    with pytest.raises(TestbedError, match=f"'{bed.name}' is already up .* take it down first: "
                                           f"tomography testbed down --name {bed.name}$"):
        up(two(), name=bed.name)
    code = main(["testbed", "up", "two-sites-demo", "--name", bed.name])
    err = capsys.readouterr().err
    assert code == 2 and "already up" in err and err.count("\n") == 1
    assert load(bed.name) == bed                  # left as it was: nothing mixed in


@pytest.mark.root
def test_a_failed_up_removes_what_it_made(as_root, monkeypatch) -> None:
    name, commands = fresh_name(), TestbedPlan.commands

    def broken(self, *, netem=False):
        return [*commands(self, netem=netem),
                ["ip", "-n", self.hosts["a-00"], "link", "set", "nosuchdev", "up"]]
    monkeypatch.setattr(TestbedPlan, "commands", broken)
    try:
        with pytest.raises(TestbedError, match=f"`ip -n tomo-{name}-a-00 link set nosuchdev up`"):
            up(two(), name=name)
        assert status(name) == {"name": name, "phase": "down", "up": False, "namespaces": [],
                                "missing": [], "state": None, "holder": None}
    finally:
        down(name)


def sleeper_in(namespace: str) -> subprocess.Popen:
    """A process sleeping inside the namespace, returned once it is in."""
    proc = subprocess.Popen(["ip", "netns", "exec", namespace, "sleep", "60"])
    inside = lifecycle._identities([namespace])
    deadline = time.monotonic() + 2
    while proc.pid not in lifecycle._pids(inside) and time.monotonic() < deadline:
        time.sleep(0.01)
    return proc


def wait_dead(proc: subprocess.Popen) -> int | None:
    deadline = time.monotonic() + 2
    while proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    return proc.poll()


@pytest.mark.root
def test_down_kills_and_removes_everything(as_root) -> None:
    name = fresh_name()
    tb = up(two(), name=name, hosts_per_cluster=1)
    sleeper = sleeper_in(tb.hosts["b-00"])
    removed = down(name)
    assert wait_dead(sleeper) is not None
    assert sorted(removed) == sorted([*tb.hosts.values(), f"tomo-{name}-r-A",
                                      f"tomo-{name}-r-B", str(state.state_path(name))])
    assert status(name)["namespaces"] == [] and not state.state_path(name).exists()
    assert down(name) == []


@pytest.mark.root
def test_down_cleans_up_after_a_crash_and_touches_nothing_else(as_root) -> None:
    name = fresh_name()
    mine = [f"tomo-{name}-r-A", f"tomo-{name}-a-00"]
    theirs = f"tomo-{name}9-a-00"  # another testbed, whose name starts with ours
    try:
        for ns in [*mine, theirs]:
            subprocess.run(["ip", "netns", "add", ns], check=True)
        subprocess.run(["ip", "link", "add", "eth0", "netns", mine[1], "type", "veth", "peer",
                        "name", "h0", "netns", mine[0]], check=True)
        sleeper = sleeper_in(mine[1])
        assert sorted(down(name)) == sorted(mine)
        assert wait_dead(sleeper) is not None
        assert status(name)["namespaces"] == [] and status(name + "9")["namespaces"] == [theirs]
    finally:
        subprocess.run(["ip", "netns", "del", theirs], capture_output=True)
        down(name)


@pytest.mark.root
def test_status_lists_every_testbed_whole_or_half_built(as_root) -> None:
    from tomography.cli.testbed import format_testbeds

    whole, half = fresh_name(), fresh_name()
    try:
        up(two(), name=whole, hosts_per_cluster=1)
        subprocess.run(["ip", "netns", "add", f"tomo-{half}-a-00"], check=True)  # an up killed
        beds = {b["name"]: b for b in testbed.raised_testbeds()}
        assert beds[whole]["up"] and not beds[half]["up"] and beds[half]["namespaces"]
        table = format_testbeds([beds[whole], beds[half]])
        assert f"{whole:<9} up" in table and f"{half:<9} half-built" in table
        assert "testbed down --name NAME" in table
    finally:
        down(whole)
        down(half)
    assert whole not in {b["name"] for b in testbed.raised_testbeds()}


@pytest.mark.root
def test_an_up_killed_midway_is_half_built_until_down(as_root, tmp_path: Path, capsys) -> None:
    """SIGKILL leaves namespaces and a building state; status says half-built (with and
    without --name), up refuses to mix with it, down --name removes all of it."""
    from tomography.cli import main

    name = fresh_name()
    raising = subprocess.Popen([sys.executable, "-m", "tomography", "testbed", "up", "N1",
                                "--hosts-per-cluster", "32", "--force", "--name", name],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while len(names.namespaces(f"tomo-{name}-")) < 10:
            assert raising.poll() is None and time.monotonic() < deadline, raising.stderr.read()
            time.sleep(0.01)
        raising.kill()
        raising.wait()
        assert status(name)["state"]["phase"] == "building"
        assert status(name)["phase"] == "half-built"
        for argv in (["testbed", "status"], ["testbed", "status", "--name", name]):
            main(argv)
            out = capsys.readouterr().out
            assert f"{name:<9} half-built   N1" in out and "down --name NAME" in out, out
        assert main(["testbed", "status", "--name", name]) == 1   # not up
        assert main(["testbed", "up", "N1", "--name", name]) == 2
        err = capsys.readouterr().err
        assert f"'{name}' is half-built" in err and f"testbed down --name {name}" in err
        assert main(["testbed", "down", "--name", name]) == 0
        time.sleep(1)  # nothing of the killed up goes on making namespaces
        assert status(name)["phase"] == "down"
        assert list(names.STATE_DIR.glob(f"testbed-{name}.*")) == []
    finally:
        raising.kill()
        down(name)


@pytest.mark.root
def test_testbed_up_prints_its_estimate_and_takes_the_demo_network(as_root, capsys) -> None:
    from tomography.cli import main

    name = fresh_name()
    try:
        assert main(["testbed", "up", "N1", "--name", name]) == 2      # 527 namespaces: no
        assert "--hosts-per-cluster" in capsys.readouterr().err
        assert status(name)["phase"] == "down"
        assert main(["testbed", "up", "two-sites-demo", "--name", name]) == 0
        out = capsys.readouterr().out
        assert "estimate: 26 namespaces, 20 peers, at most 0.70 Gbit/s" in out
        assert "cores (this machine has" in out and "MORE than" not in out
    finally:
        down(name)


@pytest.mark.root
def test_namespaces_speak_ipv4_only(as_root) -> None:
    name = fresh_name()
    try:
        tb = up(two(), name=name, hosts_per_cluster=1)
        for ns in [tb.hosts["a-00"], f"tomo-{name}-r-A"]:
            six = subprocess.run(["ip", "-n", ns, "-6", "addr"], capture_output=True, text=True,
                                 check=True).stdout
            assert six.strip() == "", six        # no link-local address: no solicitations
    finally:
        down(name)


@pytest.mark.root
def test_down_leaves_a_testbed_in_use_alone_unless_forced(as_root) -> None:
    name = fresh_name()
    try:
        tb = up(two(), name=name, hosts_per_cluster=1)
        user = holding(name)
        with pytest.raises(TestbedError, match=rf"'{name}' is in use by process {user.pid} .*"
                                               r"--force.*exits with status 130"):
            down(name)
        assert status(name)["up"] and user.poll() is None
        removed = down(name, force=True)
        assert user.wait(timeout=5) == -signal.SIGTERM     # asked to stop, then removed
        assert tb.hosts["a-00"] in removed and status(name)["namespaces"] == []
    finally:
        if "user" in locals():
            user.kill()
            user.wait()
        down(name)


@pytest.mark.root
@pytest.mark.slow
def test_two_measurements_never_share_a_testbed(as_root, tmp_path: Path, capsys) -> None:
    """A second measurement with the same --name is refused, naming the first; down
    refuses while the first runs; down --force stops it (status 130, not 0) first."""
    import yaml

    from tomography.cli import main

    name, topology = fresh_name(), tmp_path / "two.yaml"
    topology.write_text(yaml.safe_dump(TWO))
    first = subprocess.Popen([sys.executable, "-m", "tomography", "measure", "bittorrent",
                              "--testbed", str(topology), "--name", name, "-n", "50", "--size",
                              "4MiB", "-o", str(tmp_path / "first")],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not (status(name)["up"] and (status(name)["holder"] or {}).get("pid") == first.pid):
            if first.poll() is not None or time.monotonic() > deadline:
                first.kill()
                pytest.fail(f"the first measurement never held testbed {name}: "
                            f"{first.communicate()}")
            time.sleep(0.2)
        code = main(["measure", "bittorrent", "--testbed", str(topology), "--name", name,
                     "-n", "1", "-o", str(tmp_path / "second")])
        err = capsys.readouterr().err
        assert code == 2 and f"in use by process {first.pid} (" in err and err.count("\n") == 1
        assert not (tmp_path / "second").exists()
        assert main(["testbed", "down", "--name", name]) == 2
        assert "--force" in capsys.readouterr().err and status(name)["up"]
        assert main(["testbed", "down", "--name", name, "--force"]) == 0
        out, err = first.communicate(timeout=60)
        assert first.returncode == 130 and "terminated" in err, (out, err)
        assert status(name)["namespaces"] == []
    finally:
        first.kill()
        down(name)


THREE = {"name": "three", "routers": ["A", "B", "C"],
         "links": [{"between": ["A", "B"], "capacity": "16Mbit/s", "latency": "1ms"},
                   {"between": ["B", "C"], "capacity": "16Mbit/s", "latency": "1ms"}],
         "clusters": [{"name": c, "router": c.upper(), "hosts": 2, "nic": "100Mbit/s"}
                      for c in "abc"],
         "unreachable": [["A", "C"]]}


def test_plan_refuses_an_unreachable_pair_at_each_senders_router() -> None:
    p = plan(parse_topology(THREE), name="t3")
    lines = [line for line in text(p.commands()) if " prohibit" in line]
    assert lines == [
        "ip -n tomo-t3-r-A rule add pref 100 from 10.201.0.0/24 to 10.201.2.0/24 prohibit",
        "ip -n tomo-t3-r-C rule add pref 100 from 10.201.2.0/24 to 10.201.0.0/24 prohibit"]
    assert not [r for r in plan(two(), name="t3").commands() if "prohibit" in r]


def test_state_keeps_the_unreachable_pairs(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(names, "STATE_DIR", tmp_path)
    tb = made(plan(scaled(parse_topology(THREE), bandwidth=0.5), name="t10"))
    state.write_state("t10", state.record(tb))
    back = load("t10").topology
    assert back.unreachable == (("A", "C"),) and not back.reaches("C", "A")
    assert back.reaches("A", "B")


@pytest.mark.root
def test_hosts_of_an_unreachable_pair_are_refused_at_once_and_the_others_connect(
        root_before, tmp_path: Path, capsys) -> None:
    import yaml

    from tomography.cli import main

    name = fresh_name()
    path = tmp_path / "three.yaml"
    path.write_text(yaml.safe_dump(THREE))
    assert main(["testbed", "up", str(path), "--name", name]) == 0
    assert "unreachable (their routers refuse them): A-C" in capsys.readouterr().out
    tb = load(name)
    try:
        servers = [start(tb, h, SERVER, a) for h, a in tb.addresses.items()]
        try:
            for host, addr in tb.addresses.items():
                others = {h: a for h, a in tb.addresses.items() if a != addr}
                began = time.monotonic()
                reached = json.loads(run_in(tb, host, CLIENT, "7000", *others.values()))
                assert time.monotonic() - began < 5, host   # refused, not timed out
                for other, a in others.items():
                    refused = {host[0], other[0]} == {"a", "c"}
                    assert (reached[a] != "ok") == refused, (host, other, reached[a])
                    if refused:
                        assert "No route to host" in reached[a]
        finally:
            for proc in servers:
                proc.kill()
                proc.wait()
    finally:
        down(name)
