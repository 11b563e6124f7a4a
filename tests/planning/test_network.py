"""The planners' network model and its fixtures (docs/method.md, docs/scenarios.md)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from tomography.model.errors import TomographyError
from tomography.export.gauge import gauge_to_network, read_gauge
from tomography.planning import Network, four_host_example, gridlab8, lp_example

ROOT = Path(__file__).resolve().parents[2]
GAUGE = ROOT / "datasets" / "gauges" / "gridlab-8.gauge.xml"

# docs/scenarios.md, "Planner fixtures": den Burger 2009, Tables 3.1 and 3.2, as printed there.
TABLE_3_1 = """
fs0 10.54 9.32
n0 1.36 1.20
cluster3 1.23 1.47
helix 10.60 11.00
eltoro 1.18 0.95
ia64 1.20 1.20
mike4 11.00 10.60
pegasos 1.20 1.20
"""
TABLE_3_2 = """
fs0       -    1.03 1.06 0.45 1.02 1.15 0.51 1.15
n0       1.11  -    0.00 0.37 0.92 0.00 0.00 0.00
cluster3 1.19 0.00  -    0.36 0.92 1.08 0.37 1.09
helix    0.80 0.62 0.52  -    0.57 0.65 4.76 0.65
eltoro   1.01 0.92 0.84 0.38  -    1.15 0.36 1.15
ia64     1.15 0.00 0.94 0.35 1.10  -    0.41 0.00
mike4    0.86 0.93 0.57 6.39 0.61 0.63  -    0.63
pegasos  1.15 0.00 0.94 0.35 1.10 0.00 0.41  -
"""


def scenarios_gridlab() -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    capacity = [line.split() for line in TABLE_3_1.strip().splitlines()]
    rows = [line.split() for line in TABLE_3_2.strip().splitlines()]
    names = [row[0] for row in capacity]
    assert [row[0] for row in rows] == names
    bandwidth = np.array([[0.0 if x == "-" else float(x) for x in row[1:]] for row in rows])
    return (names, np.array([float(r[2]) for r in capacity]),
            np.array([float(r[1]) for r in capacity]), bandwidth)


def test_gridlab8_is_the_scenarios_table() -> None:
    names, out_cap, in_cap, bandwidth = scenarios_gridlab()
    net = gridlab8()
    assert net.nodes == names
    assert net.unit == "MiB/s"
    assert net.out_capacity.tolist() == out_cap.tolist()
    assert net.in_capacity.tolist() == in_cap.tolist()
    assert net.bandwidth.tolist() == bandwidth.tolist()


def test_gridlab8_dead_links() -> None:
    net = gridlab8()
    dead = {(net.nodes[i], net.nodes[j]) for i, j in np.argwhere(~net.live) if i != j}
    assert dead == {("n0", "cluster3"), ("n0", "ia64"), ("n0", "mike4"), ("n0", "pegasos"),
                    ("cluster3", "n0"), ("ia64", "n0"), ("ia64", "pegasos"),
                    ("pegasos", "n0"), ("pegasos", "ia64")}
    assert not net.live.diagonal().any()


def test_lp_example() -> None:
    net = lp_example()
    assert net.nodes == ["x", "y", "z"] and net.unit == ""
    assert net.out_capacity.tolist() == [10.0] * 3 and net.in_capacity.tolist() == [10.0] * 3
    assert net.bandwidth.tolist() == [[0, 10, 8], [10, 0, 4], [8, 4, 0]]


def test_four_host_example() -> None:
    net = four_host_example()
    assert net.nodes == ["A", "B", "C", "D"]
    assert net.out_capacity.tolist() == [10.0] * 4 and net.in_capacity.tolist() == [10.0] * 4
    assert net.bandwidth.tolist() == [[0, 10, 10, 10], [10, 0, 5, 5], [10, 5, 0, 5],
                                      [10, 5, 5, 0]]


def test_network_is_read_only_and_ignores_the_diagonal() -> None:
    net = Network(["a", "b"], [1, 2], [3, 4], [[7, 5], [6, 9]], unit="Mbit/s")
    assert net.bandwidth.tolist() == [[0, 5], [6, 0]]
    assert net.size == 2 and net.index("b") == 1
    for array in (net.out_capacity, net.in_capacity, net.bandwidth):
        with pytest.raises(ValueError):
            array[0] = 1.0
    with pytest.raises(AttributeError):
        net.unit = "MiB/s"  # type: ignore[misc]


def test_from_arrays_defaults() -> None:
    net = Network.from_arrays([[0, 5, 1], [5, 0, 2], [1, 2, 0]], capacity=4,
                              in_capacity=[1, 2, 3], unit="")
    assert net.nodes == ["h0", "h1", "h2"]
    assert net.out_capacity.tolist() == [4.0] * 3
    assert net.in_capacity.tolist() == [1.0, 2.0, 3.0]


@pytest.mark.parametrize("change, message", [
    ({"out_capacity": [1, -2, 1]}, "out_capacity b is negative: -2.0"),
    ({"in_capacity": [1, 1, np.nan]}, "in_capacity c is NaN"),
    ({"out_capacity": [np.inf, 1, 1]}, "out_capacity a is infinite: inf"),
    ({"bandwidth": [[0, 1, 1], [1, 0, np.nan], [1, 1, 0]]}, "bandwidth b -> c is NaN"),
    ({"bandwidth": [[0, 1, 1], [1, 0, 1], [-3, 1, 0]]}, "bandwidth c -> a is negative: -3.0"),
    ({"bandwidth": [[0, 1], [1, 0]]}, "bandwidth has shape (2, 2), expected (3, 3)"),
    ({"in_capacity": [1, 1]}, "in_capacity has shape (2,), expected (3,)"),
    ({"in_capacity": ["x", 1, 1]}, "in_capacity is not an array of numbers"),
    ({"nodes": ["a", "b", "a"]}, "node 'a' is listed twice"),
    ({"nodes": []}, "a network needs at least one node"),
    ({"unit": "furlongs"}, "unknown bandwidth unit 'furlongs'"),
])
def test_bad_networks_name_the_fault(change: dict, message: str) -> None:
    fields = {"nodes": ["a", "b", "c"], "out_capacity": [1, 1, 1], "in_capacity": [1, 1, 1],
              "bandwidth": np.ones((3, 3)), "unit": ""}
    fields.update(change)
    with pytest.raises(TomographyError) as caught:
        Network(**fields)
    assert message in str(caught.value)


def test_unknown_node() -> None:
    with pytest.raises(TomographyError, match=r"unknown node 'w'; the nodes are x, y, z"):
        lp_example().index("w")


def test_from_arrays_needs_capacities() -> None:
    with pytest.raises(TomographyError, match="in_capacity is missing"):
        Network.from_arrays([[0, 1], [1, 0]], out_capacity=1)


# -- the Gauge file of gridlab-8 ---------------------------------------------------------------

def test_gridlab_gauge_file_reads_back_as_gridlab8() -> None:
    model = read_gauge(GAUGE)
    net = gauge_to_network(model, "clusters", unit="MiB/s")
    expected = gridlab8()
    assert net.nodes == expected.nodes
    assert net.unit == "MiB/s"
    np.testing.assert_allclose(net.out_capacity, expected.out_capacity, rtol=1e-12)
    np.testing.assert_allclose(net.in_capacity, expected.in_capacity, rtol=1e-12)
    np.testing.assert_allclose(net.bandwidth, expected.bandwidth, rtol=1e-12, atol=0)
    assert (net.live == expected.live).all()         # the dead links stay exactly 0
    assert {c: list(h) for c, h in model.clusters.items()} == {n: [n] for n in expected.nodes}
    assert list(model.clusters) == expected.nodes
    assert {s.kind for s in model.sources.values()} == {"probes"}
    assert "Tables 3.1, 3.2" in model.sources["cluster_bandwidth"].method
    assert model.timestamp.isoformat() == "2026-11-21T00:00:00+00:00"
    assert model.missing() == []
    # host capacities equal the cluster ones (one host per cluster), in sorted host order
    order = [expected.index(h) for h in model.hosts]
    np.testing.assert_allclose(model.host_out, model.cluster_out[order])
    np.testing.assert_allclose(model.host_in, model.cluster_in[order])


def test_gridlab_gauge_file_is_reproducible(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("planners_benchmark",
                                                  ROOT / "benchmarks" / "multicast_planners.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.write_gridlab_gauge(tmp_path / "g.xml")
    assert (tmp_path / "g.xml").read_bytes() == GAUGE.read_bytes()
