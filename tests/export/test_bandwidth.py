"""BandwidthModel and its three estimators, on real topologies and small datasets."""

from __future__ import annotations

from datetime import datetime

import numpy as np
import pandas as pd
import pytest

from tests.export.conftest import topology_clusters
from tomography.model.errors import TomographyError
from tomography.export.bandwidth import (FIGURES, BandwidthModel, Source, clusters_from,
                                         from_broadcasts, from_probes, from_topology)
from tomography.model.synthetic import planted_partition

M = 1e6  # bit/s per Mbit/s


def by_hand(**changes) -> BandwidthModel:
    args = dict(clusters={"a": ["a1", "a2"], "b": ["b1"]}, host_out=[1e8] * 3,
                host_in=[1e8] * 3, cluster_out=[4e7, 1e8], cluster_in=[4e7, 1e8],
                cluster_bandwidth=[[1e8, 1e7], [1e7, np.nan]],
                sources={f: Source("topology-model", "by hand") for f in FIGURES[:3]})
    args.update(changes)
    return BandwidthModel(**args)


# --------------------------------------------------------------------------- topology model


def test_from_topology_two_sites_clusters(two_sites):
    m = from_topology(two_sites, topology_clusters(two_sites))
    assert list(m.clusters) == ["w1", "w2", "e1", "e2"]
    assert m.hosts == sorted(two_sites.host_index)
    assert (m.host_out == 100 * M).all() and (m.host_in == 100 * M).all()
    # five 100 Mbit/s NICs behind one 40 Mbit/s uplink: the uplink bounds the cluster
    assert (m.cluster_out == 40 * M).all() and (m.cluster_in == 40 * M).all()
    expected = np.array([[100, 40, 10, 10], [40, 100, 10, 10],
                         [10, 10, 100, 40], [10, 10, 40, 100]]) * M
    np.testing.assert_allclose(m.cluster_bandwidth, expected)
    # one-way delays: 2 x 50 us host links, + 2 x 100 us uplinks, + 5 ms WAN
    np.testing.assert_allclose(m.cluster_delay[0], [100e-6, 300e-6, 5.3e-3, 5.3e-3])
    assert m.host_bandwidth is None and m.host_delay is None
    assert {s.kind for s in m.sources.values()} == {"topology-model"}
    assert set(m.sources) == {"host_capacity", "cluster_capacity", "cluster_bandwidth",
                              "cluster_delay", "shared_links"}
    assert m.missing() == []
    assert m.timestamp.tzinfo is not None
    # the 10 Mbit/s WAN: each way one link for the four pairs across it
    shared = {x.name: x for x in m.shared_links}
    assert shared["west -> east"].capacity == 10 * M
    assert set(shared["west -> east"].pairs) == {(a, b) for a in ("w1", "w2")
                                                 for b in ("e1", "e2")}
    assert m.basis == "topology"


def test_from_topology_two_sites_as_sites(two_sites):
    sites = {"west": [h for h in two_sites.host_index if h[0] == "w"],
             "east": [h for h in two_sites.host_index if h[0] == "e"]}
    m = from_topology(two_sites, sites, host_pairs=True)
    # the 10 Mbit/s WAN link is the way out of a site
    assert m.cluster_out.tolist() == [10 * M, 10 * M]
    # within a site: 40 host pairs inside a cluster (100), 50 across the uplinks (40)
    assert m.cluster_bandwidth[0, 0] == 40 * M and m.cluster_bandwidth[0, 1] == 10 * M
    i, j, k = (m.hosts.index(h) for h in ("w1-00", "w1-01", "e2-04"))
    assert m.host_bandwidth[i, j] == 100 * M and m.host_bandwidth[i, k] == 10 * M
    assert m.host_delay[i, k] == pytest.approx(5.3e-3)
    assert np.isnan(m.host_bandwidth[i, i])
    assert {"host_bandwidth", "host_delay"} <= set(m.sources)


def test_from_topology_tree5(tree5):
    m = from_topology(tree5, topology_clusters(tree5))
    names = list(m.clusters)
    assert names == ["h1", "h2", "h3", "h4", "h5"]
    bw = {(a, b): m.cluster_bandwidth[i, j] / M for i, a in enumerate(names)
          for j, b in enumerate(names) if i != j}
    # bottleneck of the tree path R1-R2 (800), R2-R3 (400), R2-R4 (200), R4-R5 (100)
    assert bw["h1", "h2"] == 800 and bw["h1", "h3"] == 400 and bw["h1", "h4"] == 200
    assert bw["h1", "h5"] == 100 and bw["h3", "h4"] == 200 and bw["h5", "h3"] == 100
    assert bw == {(b, a): v for (a, b), v in bw.items()}       # symmetric links
    # a one-host cluster: its NIC (1G) or the router links it hangs on, whichever is less
    assert (m.cluster_out / M).tolist() == [800, 1000, 400, 300, 100]
    assert np.isnan(np.diag(m.cluster_bandwidth)).all()        # nothing within one host
    assert m.cluster_delay[0, 4] == pytest.approx(2 * 50e-6 + 3 * 100e-6)
    assert m.missing() == []                                   # diagonals do not count


def test_from_topology_takes_each_direction_of_a_link_at_its_own():
    from tomography.model.topology import parse_topology
    t = parse_topology({
        "name": "asym", "routers": ["A", "B"],
        "links": [{"between": ["A", "B"], "capacity": {"A": "16Mbit/s", "B": "4Mbit/s"},
                   "latency": "1ms"}],
        "host_defaults": {"nic": "100Mbit/s"},
        "clusters": [{"name": "a", "router": "A", "hosts": 2},
                     {"name": "b", "router": "B", "hosts": 2}]})
    m = from_topology(t, topology_clusters(t), host_pairs=True)
    assert (m.cluster_bandwidth / M).tolist()[0][1] == 16 and m.cluster_bandwidth[1, 0] == 4 * M
    assert (m.cluster_out / M).tolist() == [16, 4] and (m.cluster_in / M).tolist() == [4, 16]
    i, j = m.hosts.index("a-00"), m.hosts.index("b-01")
    assert (m.host_bandwidth[i, j], m.host_bandwidth[j, i]) == (16 * M, 4 * M)


def test_from_topology_of_gridlab_8_is_den_burgers_table():
    from tomography.planning import gridlab8
    from tomography.model.topology import read_topology
    from tomography.model.units import parse_bandwidth
    t, net, mib = read_topology("gridlab-8"), gridlab8(), parse_bandwidth("1MiB/s")
    m = from_topology(t, {c.name: c.host_names for c in t.clusters})
    assert list(m.clusters) == net.nodes
    # a live pair: its link in its direction, unless a NIC is narrower (eltoro's 0.95 out)
    expected = np.minimum(np.minimum.outer(net.out_capacity, net.in_capacity), net.bandwidth)
    live = net.live & ~np.eye(net.size, dtype=bool)
    np.testing.assert_allclose(m.cluster_bandwidth[live], expected[live] * mib, rtol=1e-12)
    h, k = net.index("helix"), net.index("mike4")
    assert (m.cluster_bandwidth[h, k], m.cluster_bandwidth[k, h]) == (4.76 * mib, 6.39 * mib)
    # the dead pairs are unreachable, but for n0 -> mike4, which the testbed routes over fs0
    dead = ~net.live & ~np.eye(net.size, dtype=bool)
    routed = np.zeros_like(dead)
    routed[net.index("n0"), k] = True
    assert (m.cluster_bandwidth[dead & ~routed] == 0).all() and dead.sum() == 9
    assert m.cluster_bandwidth[routed] == pytest.approx(0.51 * mib)


def test_from_topology_unknown_host(two_sites):
    with pytest.raises(TomographyError, match="cluster 'x': unknown host 'nope'"):
        from_topology(two_sites, {"x": ["w1-00", "nope"]})


# --------------------------------------------------------------------------- probes


def with_probes(rows: list[tuple]) -> object:
    m = planted_partition(4, 2, iterations=1, seed=0)   # g0 = h000, h001; g1 = h002, h003
    m.probes = pd.DataFrame(rows, columns=["src", "dst", "tool", "bits_per_second", "streams",
                                           "concurrent", "duration_s"])
    return m


def test_from_probes_medians_and_notes():
    m = with_probes([
        ("h000", "h001", "iperf3", 9e8, 1, "", 10.0),
        ("h000", "h001", "iperf3", 7e8, 1, "", 10.0),   # pair median 8e8
        ("h000", "h002", "iperf3", 1e8, 1, "", 10.0),
        ("h001", "h003", "iperf3", 3e8, 1, "no", 10.0),
        ("h000", "h003", "iperf3", 5e9, 1, "h001->h002", 10.0),   # concurrent: left out
        ("h002", "h000", "NPtcp", 2e8, 1, "0", 10.0),
    ])
    g = from_probes(m, clusters_from(m.labels), host_pairs=True)
    assert list(g.clusters) == ["g0", "g1"]
    np.testing.assert_allclose(g.cluster_bandwidth[0], [8e8, 2e8])   # median(1e8, 3e8)
    assert g.cluster_bandwidth[1, 0] == 2e8 and np.isnan(g.cluster_bandwidth[1, 1])
    np.testing.assert_allclose(g.host_out, [9e8, 3e8, 2e8, np.nan])
    np.testing.assert_allclose(g.host_in, [2e8, 9e8, 1e8, 3e8])
    # g1: h002 sent 2e8, h003 never sent: counted at the cluster's median
    np.testing.assert_allclose(g.cluster_out, [1.2e9, 4e8])
    assert g.host_bandwidth[0, 1] == 8e8 and np.isnan(g.host_bandwidth[3, 0])
    assert "1 concurrent probe runs left out" in g.notes
    assert "no probe within cluster g1" in g.notes
    assert g.sources["cluster_bandwidth"].kind == "probes"
    assert "NPtcp, iperf3" in g.sources["cluster_bandwidth"].method
    assert "host_out h003" in g.missing() and "cluster_bandwidth g1 -> g1" not in g.missing()


def test_from_probes_missing_concurrent_is_solo(tmp_path):
    m = with_probes([("h000", "h002", "iperf3", 1e8, 1, None, 1.0),
                     ("h002", "h000", "iperf3", 2e8, 1, np.nan, 1.0)])
    g = from_probes(m, clusters_from(m.labels))
    assert g.cluster_bandwidth[0, 1] == 1e8 and g.cluster_bandwidth[1, 0] == 2e8
    assert not any("concurrent" in note for note in g.notes)
    # written and read back, an empty field is solo too
    from tomography.model.dataset import read_measurement, write_measurement
    write_measurement(m, tmp_path / "probed")
    back = read_measurement(tmp_path / "probed")
    assert from_probes(back, clusters_from(back.labels)).cluster_bandwidth[0, 1] == 1e8


def test_from_probes_a_pair_the_network_refused_is_a_dead_link():
    m = with_probes([("h000", "h002", "iperf3", 1e8, 1, "", 1.0),
                     ("h002", "h000", "iperf3", np.nan, 1, "", np.nan),
                     ("h001", "h003", "iperf3", np.nan, 1, "", np.nan),
                     ("h003", "h001", "iperf3", np.nan, 1, "", np.nan)])
    m.probes["error"] = ["", "unable to connect to server: No route to host",
                         "unable to connect to server: Connection timed out",
                         "unable to connect to server: Connection refused"]   # not the network
    g = from_probes(m, clusters_from(m.labels), host_pairs=True)
    assert g.host_bandwidth[2, 0] == 0 and g.host_bandwidth[1, 3] == 0
    assert np.isnan(g.host_bandwidth[3, 1]) and g.host_bandwidth[0, 2] == 1e8
    assert g.cluster_bandwidth[1, 0] == 0     # g1 -> g0: its one probed pair refused
    assert "2 host pair(s) the network refused, dead links: h001 -> h003; h002 -> h000" \
        in g.notes


def test_from_probes_errors():
    m = planted_partition(4, 2, iterations=1, seed=0)
    with pytest.raises(TomographyError, match="no probes"):
        from_probes(m, clusters_from(m.labels))
    m = with_probes([("h000", "h001", "iperf3", 1e8, 1, "yes", 1.0)])
    with pytest.raises(TomographyError, match="no solo probe run"):
        from_probes(m, clusters_from(m.labels))
    with pytest.raises(TomographyError, match="unknown host 'zz'"):
        from_probes(m, {"g0": ["h000", "zz"]})


# --------------------------------------------------------------------------- broadcasts


def test_from_broadcasts_rates_from_the_transfers():
    m = planted_partition(8, 2, iterations=3, seed=4, file_size=32 * 16384)
    m.iterations["duration_s"] = [2.0, 4.0, 1.0]
    clusters = clusters_from(m.labels)
    g = from_broadcasts(m, clusters, host_pairs=True)
    bits = 8 * 16384
    t = m.transfers.merge(m.iterations[["iteration", "duration_s", "root"]], on="iteration")
    t["rate"] = t["blocks"] * bits / t["duration_s"]
    group = {h: c for c, hosts in clusters.items() for h in hosts}
    # host out: mean over iterations of the rate it sent at
    sent = t.groupby(["iteration", "sender"])["rate"].sum().unstack(fill_value=0.0)
    sent = sent.reindex(columns=m.host_names, fill_value=0.0)
    np.testing.assert_allclose(g.host_out, sent.mean(axis=0).to_numpy())
    # host in: every receiver got the 32 blocks, over the iterations it was not the root
    durations = m.iterations.set_index("iteration")["duration_s"]
    roots = m.iterations.set_index("iteration")["root"]
    for i, h in enumerate(m.host_names):
        mine = [32 * bits / durations[it] for it in durations.index if roots[it] != h]
        assert g.host_in[i] == pytest.approx(np.mean(mine))
    # cluster pair A -> B: mean over iterations of the rate from A's hosts to B's hosts
    t["a"], t["b"] = t["sender"].map(group), t["receiver"].map(group)
    for i, a in enumerate(clusters):
        for j, b in enumerate(clusters):
            per = t[(t.a == a) & (t.b == b)].groupby("iteration")["rate"].sum()
            assert g.cluster_bandwidth[i, j] == pytest.approx(per.reindex(range(3),
                                                                         fill_value=0).mean())
    np.testing.assert_allclose(g.cluster_out, g.cluster_bandwidth.sum(axis=1)
                               - np.diag(g.cluster_bandwidth))
    assert g.host_bandwidth.shape == (8, 8) and np.isnan(np.diag(g.host_bandwidth)).all()
    assert g.notes == ["rates from the broadcasts of iterations 0, 1, 2"]
    assert {s.kind for s in g.sources.values()} == {"broadcast-throughput"}


def test_from_broadcasts_errors():
    m = planted_partition(4, 2, iterations=2, seed=0)
    clusters = clusters_from(m.labels)
    with pytest.raises(TomographyError, match="no duration_s for iteration.s. 0, 1"):
        from_broadcasts(m, clusters)
    m.iterations["duration_s"] = [1.0, 0.0]
    with pytest.raises(TomographyError, match="iteration 1 has duration_s 0"):
        from_broadcasts(m, clusters)
    with pytest.raises(TomographyError, match="no iteration 7"):
        from_broadcasts(m, clusters, iterations=[0, 7])
    g = from_broadcasts(m, clusters, iterations=[0])
    assert g.notes == ["rates from the broadcasts of iterations 0"]


# --------------------------------------------------------------------------- the model


@pytest.mark.parametrize("changes, message", [
    ({"host_out": [1e8, -1.0, 1e8]}, r"host_out a2 must be finite and >= 0, got -1.0"),
    ({"cluster_bandwidth": [[1e8, np.inf], [0, 0]]},
     r"cluster_bandwidth a -> b must be finite and >= 0"),
    ({"cluster_in": [1.0]}, r"cluster_in has shape \(1,\); expected \(2,\)"),
    ({"sources": {"host_capacity": Source("probes", "x")}},
     r"no source given for the cluster_bandwidth figures"),
    ({"host_delay": np.zeros((3, 3))}, r"no source given for the host_delay figures"),
    ({"clusters": {"a": ["a1", "a2"], "b": ["a1"]}}, r"host 'a1' is in clusters 'a' and 'b'"),
    ({"clusters": {"a": "a1"}}, r"cluster 'a': give its hosts as a list"),
    ({"clusters": {}}, r"clusters must be a non-empty mapping"),
    ({"timestamp": datetime(2026, 1, 1)}, r"the timestamp needs a time zone"),
])
def test_model_errors_name_the_figure(changes, message):
    with pytest.raises(TomographyError, match=message):
        by_hand(**changes)


def test_source_and_fill():
    with pytest.raises(TomographyError, match="unknown source kind 'guess'"):
        Source("guess", "x")
    with pytest.raises(TomographyError, match="needs a method description"):
        Source("probes", "  ")
    m = by_hand(sources={**{f: Source("probes", "x") for f in FIGURES[:3]},
                         "host_bandwidth": Source("probes", "y")},
                host_bandwidth=np.full((3, 3), np.nan))
    assert len(m.missing()) == 6                 # host pairs; b -> b is a diagonal, not missing
    assert all(x.startswith("host_bandwidth") for x in m.missing())
    filled = m.fill_missing(0.0)
    assert filled.missing() == [] and np.isnan(filled.host_bandwidth[0, 0])
    assert filled.notes[-1] == "6 unknown figures set to 0 bit/s"
    assert filled.timestamp == m.timestamp
    with pytest.raises(TomographyError, match="fill value"):
        m.fill_missing(-1.0)


def test_clusters_from_hierarchy_tree_and_labels(inferred, tree, planted):
    level2 = clusters_from(inferred, level=2)
    assert sorted(h for hosts in level2.values() for h in hosts) == planted.host_names
    assert list(level2) == [c.id for c in inferred.level(2)]
    assert list(clusters_from(tree)) == [c.id for c in tree.clusters]
    labels = clusters_from(planted.labels)
    assert len(labels) == 9 and labels["g0/g0.0"] == ("h000", "h001", "h002", "h003")


def test_a_testbed_raised_from_a_file_is_found_again_from_that_file(tmp_path) -> None:
    import json
    import shutil

    from tomography.cli import main
    from tomography.export.bandwidth import analysis_model
    from tomography.model.topology import scenario_path
    from tomography.pipeline import analyze

    mine = tmp_path / "my-net.yaml"   # a network no built-in name reaches
    shutil.copy(scenario_path("bordeaux-2x2"), mine)
    mine.write_text(mine.read_text().replace("name: bordeaux-2x2", "name: my-net"))
    assert main(["simulate", str(mine), "-o", str(tmp_path / "run"), "--iterations", "3",
                 "--size", "4MiB"]) == 0
    meta_path = tmp_path / "run" / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["topology"] = "my-net"   # as a testbed run records it (no model of its own)
    del meta["topology_model"]
    meta["testbed"] = {"name": "t", "topology": "my-net", "scale": {}}
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(TomographyError, match="cannot read topology 'my-net'"):
        analysis_model(analyze(tmp_path / "run"), source="topology")
    meta["testbed"]["topology_source"] = str(mine)
    meta_path.write_text(json.dumps(meta))
    model = analysis_model(analyze(tmp_path / "run"), source="topology")
    assert model.sources["cluster_bandwidth"].kind == "topology-model"
