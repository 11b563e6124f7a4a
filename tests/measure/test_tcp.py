"""The simulator's TCP model: each mechanism against its closed form, and its effect."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from cluster.accuracy import nmi
from cluster.louvain import louvain
from measure.flows import max_min_rates
from measure.simulator import simulate
from measure.tcp import MSS, Connections, TcpModel, mathis_rate, restart_window
from tomography.model.dataset import read_measurement
from tomography.model.topology import read_topology
from tomography.model.weights import mean_weights

IW = 10 * MSS
ONLY_SLOW_START = TcpModel(restart_after_idle=False, rtt_fair=False, receive_window=None,
                           request_pipeline=False)


def run_alone(model: TcpModel, rtt: float, capacity: float, seconds: float,
              step: float) -> float:
    """Bytes one connection sends alone on a link of ``capacity`` bytes/s."""
    c = Connections(model, np.array([rtt]))
    sent, t = 0.0, 0.0
    for _ in range(round(seconds / step)):
        args = (np.array([capacity]), np.array([0]), np.array([0]), 1)
        rate = max_min_rates(*args, caps=c.caps(np.array([0]), t))
        ceiling = max_min_rates(*args, caps=c.other_caps(np.array([0])))
        sent += float(c.advance(np.array([0]), rate, step, t, ceiling)[0])
        t += step
    return sent


@pytest.mark.parametrize("step", [0.001, 0.008, 0.04, 0.24])
def test_slow_start_of_one_flow_is_the_closed_form(step: float) -> None:
    # the window doubles each round trip: IW * (2**k - 1) bytes after k round trips,
    # whatever the step of the simulation
    sent = run_alone(ONLY_SLOW_START, 0.04, 1e12, 0.04 * 6, step)
    assert sent == pytest.approx(IW * (2**6 - 1), rel=1e-6)


@pytest.mark.parametrize("step", [0.002, 0.1, 0.5])
def test_slow_start_ends_at_the_link_share(step: float) -> None:
    # 125 MB/s at 40 ms: a window of 5 MB, reached after log2(5e6 / IW) round trips
    rtt, capacity = 0.04, 125e6
    sent = run_alone(ONLY_SLOW_START, rtt, capacity, 2.0, step)
    ramp = math.log2(capacity * rtt / IW / math.log(2)) * rtt     # until ln2 * W / RTT = C
    expected = IW * (2 ** (ramp / rtt) - 1) + capacity * (2.0 - ramp)
    assert sent == pytest.approx(expected, rel=1e-6)
    assert sent < capacity * 2.0


def test_two_flows_share_a_link_in_inverse_proportion_to_rtt() -> None:
    rtt = np.array([0.001, 0.040])
    plain = dict(slow_start=False, request_pipeline=False, receive_window=None)
    for model, share in [(TcpModel.off(), [0.5, 0.5]),
                         (TcpModel(**plain, queue_delay=0.0), [40 / 41, 1 / 41]),
                         # a standing queue of 50 ms adds to both round trips
                         (TcpModel(**plain, queue_delay=0.05), [90 / 141, 51 / 141])]:
        c = Connections(model, rtt)
        pairs = np.arange(2)
        rates = max_min_rates(np.array([100.0]), pairs, np.zeros(2, dtype=int), 2,
                              weights=c.weights, caps=c.caps(pairs, 0.0))
        assert (rates / 100.0).tolist() == pytest.approx(share)


def test_receive_window_caps_a_long_path() -> None:
    model = TcpModel(slow_start=False, request_pipeline=False, receive_window=2**20)
    c = Connections(model, np.array([0.1]))
    assert c.caps(np.array([0]), 0.0)[0] == pytest.approx(2**20 / 0.1)


def test_restart_after_idle_halves_per_timeout() -> None:
    # Linux tcp_cwnd_restart: one halving per RTO elapsed, down to the initial window
    window, rto = np.full(4, 64.0 * IW), np.full(4, 0.24)
    idle = np.array([0.2, 0.3, 0.5, 100.0])
    assert (restart_window(window, idle, rto, IW) / IW).tolist() == [64, 32, 16, 1]
    model = TcpModel(rtt_fair=False, receive_window=None, request_pipeline=False)
    c = Connections(model, np.array([0.04]))
    c.starting[:] = False                           # a settled connection, 64 IW in flight...
    c.advance(np.array([0]), np.array([64.0 * IW / 0.04]), 0.01, 0.0)
    cap = c.caps(np.array([0]), 0.01 + 0.5)[0]      # ...idle for 0.5 s (RTO 0.24 s)
    assert c.starting[0] and cap == pytest.approx(math.log(2) * 16 * IW / 0.04)


def test_request_pipeline_starts_at_two_blocks_per_round_trip() -> None:
    model = TcpModel(slow_start=False, receive_window=None)
    c = Connections(model, np.array([0.04]))
    assert c.caps(np.array([0]), 0.0)[0] == pytest.approx(2 * 16384 / 0.04)
    c.advance(np.array([0]), np.array([819200.0]), 2.0, 0.0)   # a rate is measured
    assert c.caps(np.array([0]), 2.0)[0] > 50 * 16384 / 0.04


def test_mathis_loss_cap() -> None:
    model = TcpModel(slow_start=False, request_pipeline=False, receive_window=None, loss=1e-4)
    c = Connections(model, np.array([0.04]))
    expected = MSS / 0.04 * math.sqrt(1.5 / 1e-4)
    assert c.caps(np.array([0]), 0.0)[0] == pytest.approx(expected)
    assert float(mathis_rate(0.04, 1e-4)) == pytest.approx(expected)


def test_model_is_validated() -> None:
    with pytest.raises(ValueError, match="loss"):
        TcpModel(loss=1.5)
    with pytest.raises(ValueError, match="min_requests"):
        TcpModel(min_requests=0)
    with pytest.raises(ValueError, match="queue_delay"):
        TcpModel(queue_delay=-0.01)


@pytest.mark.slow  # over 2 s
def test_sites_that_differ_only_in_rtt_are_separated_with_the_model(tmp_path: Path) -> None:
    # two sites of 8 hosts, the same 1 Gbit/s NICs, a core that is never the
    # bottleneck: only the round-trip time (1 ms inside a site, 40 ms across) differs
    topo = read_topology("two-sites-rtt")
    scores = {}
    for name, model in [("on", TcpModel()), ("off", TcpModel.off())]:
        m = read_measurement(simulate(topo, tmp_path / name, iterations=3,
                                      file_size=8 * 2**20, seed=0, tcp=model))
        labels = louvain(mean_weights(m), seed=0).labels
        scores[name] = nmi([m.labels[h] for h in m.host_names], labels)
        assert m.meta["params"]["tcp"]["slow_start"] is (name == "on")
    assert scores["on"] == pytest.approx(1.0)
    assert scores["off"] < 0.3


def test_a_connection_reaches_the_capacity_of_its_own_direction() -> None:
    # one flow each way over a link of 40 Mbit/s one way and 10 the other: with the
    # whole TCP model on, each transfer ends at its own direction's capacity
    from measure.simulator import simulate_broadcast
    from tomography.model.topology import parse_topology
    t = parse_topology({
        "name": "asym", "routers": ["A", "B"],
        "links": [{"between": ["A", "B"], "capacity": {"A": "40Mbit/s", "B": "10Mbit/s"},
                   "latency": "1ms"}],
        "host_defaults": {"nic": "1Gbit/s", "latency": "50us"},
        "clusters": [{"name": "a", "router": "A", "hosts": 1},
                     {"name": "b", "router": "B", "hosts": 1}]})
    size = 8 * 2**20
    for root, capacity in [("a-00", 40e6), ("b-00", 10e6)]:
        r = simulate_broadcast(t, ["a-00", "b-00"], root, size, seed=0, tcp=TcpModel())
        assert size * 8 / r.duration == pytest.approx(capacity, rel=0.01)
