"""The flow-level simulator: conservation, repeatability, fair sharing, clustering, resume."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cluster.louvain import louvain
from measure.flows import max_min_rates
from measure.simulator import simulate, simulate_broadcast
from measure.swarm import SwarmParams
from tomography.model.dataset import read_measurement
from tomography.model.errors import DatasetError
from tomography.model.topology import parse_topology, read_topology
from tomography.model.weights import mean_weights


def two_clusters() -> object:
    return parse_topology({
        "name": "two", "routers": ["A", "B"],
        "links": [{"between": ["A", "B"], "capacity": "50Mbit/s", "latency": "1ms"}],
        "host_defaults": {"nic": "1Gbit/s", "latency": "50us"},
        "clusters": [{"name": "a", "router": "A", "hosts": 10, "label": "a"},
                     {"name": "b", "router": "B", "hosts": 10, "label": "b"}]})


def test_conservation_of_blocks() -> None:
    t = two_clusters()
    hosts = sorted(h.name for h in t.hosts)
    size = 3 * 2**20 + 5000                       # a short last piece and a short last block
    r = simulate_broadcast(t, hosts, hosts[4], size, seed=1)
    blocks = -(-size // 16384)
    received = r.counts.sum(axis=1)
    assert r.complete and received[4] == 0
    assert (np.delete(received, 4) == blocks).all()
    assert np.diag(r.counts).sum() == 0
    assert r.counts.sum() == blocks * (len(hosts) - 1)


def test_peers_of_an_unreachable_pair_never_exchange_a_block() -> None:
    t = read_topology("gridlab-8")
    hosts = [h.name for h in t.hosts]
    r = simulate_broadcast(t, hosts, "n0-00", 2**20, seed=2)
    router = {h.name: h.router for h in t.hosts}
    refused = [(i, j) for i, a in enumerate(hosts) for j, b in enumerate(hosts)
               if not t.reaches(router[a], router[b])]
    assert r.complete and len(refused) == 8
    assert all(r.counts[i, j] == 0 for i, j in refused)
    assert r.counts.sum() == 64 * 7


def test_repeatable_with_a_seed() -> None:
    t = two_clusters()
    hosts = sorted(h.name for h in t.hosts)
    a = simulate_broadcast(t, hosts, hosts[0], 2**21, seed=7)
    b = simulate_broadcast(t, hosts, hosts[0], 2**21, seed=7)
    c = simulate_broadcast(t, hosts, hosts[0], 2**21, seed=8)
    assert np.array_equal(a.counts, b.counts) and a.duration == b.duration
    assert not np.array_equal(a.counts, c.counts)


def test_fair_sharing_of_a_bottleneck() -> None:
    # two flows on one link get equal rates
    rates = max_min_rates(np.array([100.0, 1e9, 1e9]), np.array([0, 0, 1, 1]),
                          np.array([0, 1, 0, 2]), 2)
    assert rates.tolist() == [50.0, 50.0]
    # a flow limited elsewhere (resource 1 at 20) leaves the rest to the other
    rates = max_min_rates(np.array([100.0, 20.0]), np.array([0, 1, 1]), np.array([0, 0, 1]), 2)
    assert rates.tolist() == [80.0, 20.0]
    # weights 1/RTT: a flow with half the RTT gets twice the share
    rates = max_min_rates(np.array([90.0]), np.array([0, 1]), np.array([0, 0]), 2,
                          weights=np.array([2.0, 1.0]))
    assert rates.tolist() == pytest.approx([60.0, 30.0])
    # a window cap binds when it is below the fair share
    rates = max_min_rates(np.array([90.0]), np.array([0, 1]), np.array([0, 0]), 2,
                          caps=np.array([10.0, np.inf]))
    assert rates.tolist() == pytest.approx([10.0, 80.0])


@pytest.mark.parametrize("seed", range(20))
def test_random_sharing_is_weighted_max_min_fair(seed: int) -> None:
    """The definition, checked on random incidences with weights and caps: no resource is over
    its capacity, and every flow is at its cap or crosses a full resource on which no flow
    gets more per unit of weight (its bottleneck)."""
    rng = np.random.default_rng(seed)
    n_res, n_flows = int(rng.integers(1, 40)), int(rng.integers(1, 200))
    capacity = rng.uniform(1, 100, n_res)
    pairs = [(f, r) for f in range(n_flows)
             for r in rng.choice(n_res, int(rng.integers(1, min(n_res, 5) + 1)), replace=False)]
    flow_of, resource_of = (np.array(x, dtype=np.int64) for x in zip(*pairs))
    w = rng.uniform(0.2, 3.0, n_flows)
    caps = np.where(rng.random(n_flows) < 0.3, rng.uniform(0.05, 20, n_flows), np.inf)
    rates = max_min_rates(capacity, flow_of, resource_of, n_flows, weights=w, caps=caps)
    used = np.bincount(resource_of, weights=rates[flow_of], minlength=n_res)
    assert np.all(used <= capacity * (1 + 1e-9))
    full = used >= capacity * (1 - 1e-9)
    per_weight = rates / w
    top = np.zeros(n_res)
    np.maximum.at(top, resource_of, per_weight[flow_of])
    for f in range(n_flows):
        mine = resource_of[flow_of == f]
        bottleneck = full[mine] & (per_weight[f] >= top[mine] * (1 - 1e-9))
        assert rates[f] >= caps[f] * (1 - 1e-9) or bottleneck.any(), f


def test_two_cluster_topology_clusters_into_two(tmp_path: Path) -> None:
    d = simulate(two_clusters(), tmp_path / "sim", iterations=3, file_size=4 * 2**20, seed=2)
    m = read_measurement(d)
    assert m.meta["method"] == "simulated" and m.meta["topology"] == "two"
    assert m.meta["params"]["seed"] == 2 and m.meta["params"]["upload_slots"] == 8
    labels = louvain(mean_weights(m), seed=0).labels
    truth = [m.labels[h] for h in m.host_names]
    assert len(set(labels)) == 2
    assert all((labels[i] == labels[j]) == (truth[i] == truth[j])
               for i in range(20) for j in range(20))


def test_resume_gives_the_same_dataset(tmp_path: Path) -> None:
    t = read_topology("tree-5")
    simulate(t, tmp_path / "full", iterations=3, file_size=2**20, seed=4)
    simulate(t, tmp_path / "part", iterations=1, file_size=2**20, seed=4)
    with open(tmp_path / "part" / "transfers.csv", "a") as fh:   # killed mid-iteration
        fh.write("1,h2-00,h1-00,3\n")
    simulate(t, tmp_path / "part", iterations=3, file_size=2**20, seed=4, resume=True)
    full, part = read_measurement(tmp_path / "full"), read_measurement(tmp_path / "part")
    assert full.transfers.equals(part.transfers)
    assert full.iterations["root"].tolist() == part.iterations["root"].tolist()
    with pytest.raises(DatasetError, match="another file_size"):
        simulate(t, tmp_path / "part", iterations=4, file_size=2**21, seed=4, resume=True)


def test_time_limit_marks_incomplete_and_keeps_counts() -> None:
    t = two_clusters()
    hosts = sorted(h.name for h in t.hosts)
    r = simulate_broadcast(t, hosts, hosts[0], 64 * 2**20, seed=0,
                           params=SwarmParams(time_limit=0.2))
    assert not r.complete and r.duration == pytest.approx(0.2, abs=0.05)
    assert 0 < r.counts.sum() < 63 * 4096


def test_time_box_ends_the_broadcast_complete_with_the_counts_so_far() -> None:
    t = two_clusters()
    hosts = sorted(h.name for h in t.hosts)
    whole = simulate_broadcast(t, hosts, hosts[0], 16 * 2**20, seed=0)
    boxed = simulate_broadcast(t, hosts, hosts[0], 16 * 2**20, seed=0,
                               params=SwarmParams(time_box=whole.duration / 4))
    assert boxed.complete and boxed.duration == pytest.approx(whole.duration / 4, rel=0.01)
    assert 0 < boxed.counts.sum() < whole.counts.sum()
    roomy = simulate_broadcast(t, hosts, hosts[0], 16 * 2**20, seed=0,
                               params=SwarmParams(time_box=whole.duration * 2))
    assert roomy.duration == whole.duration and roomy.counts.sum() == whole.counts.sum()


def test_block_quota_ends_the_broadcast_once_every_peer_holds_it() -> None:
    t = two_clusters()
    hosts = sorted(h.name for h in t.hosts)
    whole = simulate_broadcast(t, hosts, hosts[0], 16 * 2**20, seed=0)
    cut = simulate_broadcast(t, hosts, hosts[0], 16 * 2**20, seed=0,
                             params=SwarmParams(block_quota=128))
    received = cut.counts.sum(axis=1)
    assert cut.complete and cut.duration < whole.duration
    assert received[1:].min() >= 128 and received.sum() < whole.counts.sum()
    assert simulate_broadcast(t, hosts, hosts[0], 16 * 2**20, seed=0, params=SwarmParams(
        block_quota=2048)).counts.sum() == whole.counts.sum()   # the whole file: no cut


def test_params_are_validated() -> None:
    with pytest.raises(ValueError, match="multiple of 16384"):
        SwarmParams(piece_size=1000)
    for box in (0, -1.0, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="time_box must be a positive"):
            SwarmParams(time_box=box)
    for quota in (0, -3, 2.5, True, "128"):
        with pytest.raises(ValueError, match="block_quota must be a positive"):
            SwarmParams(block_quota=quota)


def test_ctrl_c_inside_a_compiled_kernel_is_a_keyboard_interrupt() -> None:
    from measure.simulator import _interrupts_pass_through_kernels

    @_interrupts_pass_through_kernels
    def kernel_interrupted() -> None:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as e:      # what Numba's dispatcher raises in its place
            raise SystemError("CPUDispatcher returned a result with an exception set") from e

    @_interrupts_pass_through_kernels
    def kernel_broken() -> None:
        raise SystemError("a real fault")

    with pytest.raises(KeyboardInterrupt):
        kernel_interrupted()
    with pytest.raises(SystemError, match="a real fault"):
        kernel_broken()


def asymmetric(ab: str = "40Mbit/s", ba: str = "10Mbit/s", hosts: int = 1) -> object:
    return parse_topology({
        "name": "asym", "routers": ["A", "B"],
        "links": [{"between": ["A", "B"], "capacity": {"A": ab, "B": ba}, "latency": "1ms"}],
        "host_defaults": {"nic": "1Gbit/s", "latency": "50us"},
        "clusters": [{"name": "a", "router": "A", "hosts": hosts, "label": "a"},
                     {"name": "b", "router": "B", "hosts": hosts, "label": "b"}]})


def test_each_direction_of_a_link_has_its_own_capacity() -> None:
    from measure.simulator import _Network
    from measure.tcp import TcpModel
    t = asymmetric()
    hosts = ["a-00", "b-00"]
    net = _Network(t, hosts)
    flows, resources = net.incidence(np.array([0, 1]), np.array([1, 0]))
    assert max_min_rates(net.capacity, flows, resources, 2).tolist() == [40e6, 10e6]
    # a broadcast from a crosses at 40 Mbit/s, one from b at 10
    size = 8 * 2**20
    rate = {root: size * 8 / simulate_broadcast(t, hosts, root, size, seed=0,
                                                tcp=TcpModel.off()).duration
            for root in hosts}
    assert rate == pytest.approx({"a-00": 40e6, "b-00": 10e6}, rel=1e-3)
    # symmetric again when both directions are equal
    same = asymmetric("25Mbit/s", "25Mbit/s")
    assert _Network(same, hosts).capacity.tolist()[-2:] == [25e6, 25e6]


def test_a_one_way_link_is_never_crossed_the_dead_way() -> None:
    t = parse_topology({
        "name": "one-way", "routers": ["A", "B", "C"],
        "links": [{"between": ["A", "B"], "capacity": {"A": "none", "B": "50Mbit/s"},
                   "latency": "1ms"},
                  {"between": ["A", "C"], "capacity": "5Mbit/s", "latency": "1ms"},
                  {"between": ["C", "B"], "capacity": "5Mbit/s", "latency": "1ms"}],
        "host_defaults": {"nic": "1Gbit/s", "latency": "50us"},
        "clusters": [{"name": "a", "router": "A", "hosts": 1},
                     {"name": "b", "router": "B", "hosts": 1}]})
    hosts = ["a-00", "b-00"]
    r = simulate_broadcast(t, hosts, "a-00", 2**20, seed=0)     # a -> b over C at 5 Mbit/s
    assert r.complete and 2**20 * 8 / r.duration < 5e6 * 1.001
    r = simulate_broadcast(t, hosts, "b-00", 2**20, seed=0)     # b -> a direct at 50
    assert r.complete and 2**20 * 8 / r.duration > 20e6
