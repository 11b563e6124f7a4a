"""A planner's figures: which tests, what they give on a known network, written and read back."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from measure.figures import figure_tests
from tomography.export.bandwidth import from_figures, from_topology
from tomography.export.bandwidth.figures import figure_tree
from tomography.model.dataset.figures import FIGURE_COLUMNS, FiguresWriter, read_figures
from tomography.model.errors import DatasetError, ParameterError, TomographyError
from tomography.model.topology import read_topology
from tomography.planning.throughput import _max_min

TOMOGRAPHY = str(Path(sys.executable).parent / "tomography")


def _two_sites(hosts: int = 5):
    clusters = {c: [f"{c}-0{i}" for i in range(hosts)] for c in ("w1", "w2", "e1", "e2")}
    return clusters, {"west": ["w1", "w2"], "east": ["e1", "e2"]}


def test_the_tests_grow_with_the_clusters_not_the_hosts() -> None:
    few, groups = _two_sites(2)
    many, _ = _two_sites(40)
    assert sum(map(len, figure_tests(few, groups))) == sum(map(len, figure_tests(many, groups)))
    # rounds: as many, but for the hosts two clusters of two must share between tests
    assert abs(len(figure_tests(few, groups)) - len(figure_tests(many, groups))) <= 1
    eight = {f"c{i}": [f"c{i}-{j}" for j in range(3)] for i in range(8)}
    assert sum(map(len, figure_tests(eight))) > sum(map(len, figure_tests(few, groups)))


def test_tests_that_run_at_once_share_no_host_and_no_link_of_the_tree() -> None:
    clusters, groups = _two_sites()
    site = {h: c[0] for c, hs in clusters.items() for h in hs}
    for tests in figure_tests(clusters, groups):
        used = [h for t in tests for f in t.flows for h in f[:2]]
        assert len(used) == len(set(used)) or len(tests) == 1
        across = {i for i, t in enumerate(tests) for s, d, _, _ in t.flows if site[s] != site[d]}
        assert len(across) <= 1     # the sites' link: one test at a time, either way


def test_one_cluster_has_nothing_to_measure() -> None:
    with pytest.raises(ParameterError, match="two clusters"):
        figure_tests({"a": ["a1", "a2"]})


def test_a_dataset_of_one_cluster_is_refused_before_any_test(tmp_path: Path, capsys) -> None:
    from tomography.cli import main
    from tomography.model.dataset.write import write_measurement
    from tomography.model.synthetic import planted_partition

    # alike hosts (ratio 1): the hierarchy is one cluster of all four, as on GridLab, whose
    # eight sites the broadcasts do not group
    write_measurement(planted_partition(4, 1, iterations=4, seed=0), tmp_path / "run")
    hosts = tmp_path / "hosts.csv"
    hosts.write_text("host,address,label\n" + "".join(f"h00{i},127.0.0.{180 + i},\n"
                                                       for i in range(4)))
    assert main(["measure", "figures", "--hosts", str(hosts), "--dataset",
                 str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert "one cluster of all 4 hosts" in err and "--level hosts" in err
    assert "Traceback" not in err and not (tmp_path / "run" / "figures" / "figures.csv").exists()


def _simulated(topology_name: str, clusters: dict, groups: dict) -> pd.DataFrame:
    """The rows a figures run gets on a topology: each test's flows share its links fairly;
    a flow between unreachable routers is refused at once, as the testbed refuses it."""
    topo = read_topology(topology_name)
    info = topo.host_index
    rows = []
    refused = "unable to connect to server: No route to host"
    for r, tests in enumerate(figure_tests(clusters, groups)):
        for t, test in enumerate(tests):
            links: dict[tuple, float] = {}
            use = []
            for s, d, _, _ in test.flows:
                a, b = info[s], info[d]
                if not topo.reaches(a.router, b.router):
                    use.append(None)
                    continue
                path = [("up", s), ("down", d)] + [(u, v) for u, v in
                                                   topo.route(a.router, b.router)]
                links.update({("up", s): a.nic_up, ("down", d): b.nic_down})
                links.update({(u, v): topo.link_capacity(u, v) for u, v in path[2:]})
                use.append(path)
            names = list(links)
            ran = [path for path in use if path is not None]
            usage = np.array([[p.count(x) for p in ran] for x in names], dtype=float)
            shares = iter(_max_min(usage, np.array([links[x] for x in names])) if ran else [])
            rates = [np.nan if path is None else next(shares) for path in use]
            rows += [{"round": r, "test": 1000 * r + t, "kind": test.kind, "node": test.node,
                      "src": s, "dst": d, "src_cluster": a, "dst_cluster": b,
                      "bits_per_second": rate, "bytes": np.nan, "window_s": np.nan,
                      "error": refused if rate != rate else ""}
                     for (s, d, a, b), rate in zip(test.flows, rates)]
    return pd.DataFrame(rows, columns=list(FIGURE_COLUMNS))


def test_on_a_known_network_the_figures_are_the_topologys() -> None:
    topo = read_topology("two-sites-demo")
    clusters = {g.name: list(g.host_names) for g in topo.clusters}
    groups = {"west": ["w1", "w2"], "east": ["e1", "e2"]}
    model = from_figures((_simulated("two-sites-demo", clusters, groups),
                          {"clusters": clusters, "groups": groups}))
    truth = from_topology(topo, clusters)
    np.testing.assert_allclose(model.cluster_bandwidth, truth.cluster_bandwidth)
    np.testing.assert_allclose(model.cluster_out, truth.cluster_out)
    np.testing.assert_allclose(model.cluster_in, truth.cluster_in)
    np.testing.assert_allclose(model.host_out, truth.host_out)
    # the WAN: each way one link, at its capacity, for the four pairs across it
    found = {frozenset(x.pairs): x.capacity for x in model.shared_links}
    expected = {frozenset(x.pairs): x.capacity for x in truth.shared_links}
    assert found == pytest.approx(expected)
    assert model.basis == "measured" and model.missing() == []


def test_a_pair_the_network_refuses_is_a_dead_link_and_its_tests_still_count() -> None:
    topo = read_topology("gridlab-8")
    hosts = {h.name: [h.name] for h in topo.hosts}
    frame = _simulated("gridlab-8", hosts, {})
    assert frame["error"].str.contains("No route to host").sum() > 8   # side by side too
    model = from_figures((frame, {"clusters": hosts, "groups": {}}))
    truth = from_topology(topo, hosts)
    np.testing.assert_allclose(model.cluster_bandwidth, truth.cluster_bandwidth)
    n0, cluster3 = list(model.clusters).index("n0-00"), list(model.clusters).index("cluster3-00")
    assert model.cluster_bandwidth[n0, cluster3] == model.cluster_bandwidth[cluster3, n0] == 0
    # n0's flows out to its four live siblings still give its capacity out
    np.testing.assert_allclose(model.cluster_out[n0], truth.cluster_out[n0])
    assert any("8 pair(s) the network refused" in note for note in model.notes)
    assert not any("failed" in note for note in model.notes)


def test_a_flow_alone_slower_than_the_same_pair_beside_others_is_not_the_figure() -> None:
    # a 1 s flow alone loses much of it to slow start: on a GridLab testbed helix -> pegasos
    # got 3.4 Mbit/s alone, 5.3 beside helix's other flows out
    topo = read_topology("gridlab-8")
    hosts = {h.name: [h.name] for h in topo.hosts}
    frame = _simulated("gridlab-8", hosts, {})
    truth = from_topology(topo, hosts)
    names = list(truth.clusters)
    a, b = names.index("helix-00"), names.index("pegasos-00")
    beside = frame[(frame["kind"] == "out") & (frame["src"] == "helix-00")
                   & (frame["dst"] == "pegasos-00")]
    assert beside["bits_per_second"].item() == pytest.approx(truth.cluster_bandwidth[a, b])
    slow = frame.copy()
    alone = (slow["kind"] == "pair") & (slow["src"] == "helix-00") & (slow["dst"] == "pegasos-00")
    slow.loc[alone, "bits_per_second"] *= 0.6
    model = from_figures((slow, {"clusters": hosts, "groups": {}}))
    np.testing.assert_allclose(model.cluster_bandwidth, truth.cluster_bandwidth)
    # a pair no flow crossed beside others keeps its flow alone's figure
    c, d = names.index("cluster3-00"), names.index("helix-00")
    slow.loc[(slow["kind"] == "pair") & (slow["src"] == "cluster3-00")
             & (slow["dst"] == "helix-00"), "bits_per_second"] *= 0.6
    slow = slow[~((slow["kind"] == "out") & (slow["src"] == "cluster3-00")
                  & (slow["dst"] == "helix-00"))
                & ~((slow["kind"] == "in") & (slow["src"] == "cluster3-00")
                    & (slow["dst"] == "helix-00"))]
    assert from_figures((slow, {"clusters": hosts, "groups": {}})).cluster_bandwidth[c, d] \
        == pytest.approx(0.6 * truth.cluster_bandwidth[c, d])


def test_figures_are_written_and_read_back(tmp_path: Path) -> None:
    from tomography.model.dataset.incremental import MeasurementWriter

    clusters, groups = _two_sites(2)
    frame = _simulated("two-sites-demo", {c: [h.replace("-0", "-0") for h in hs]
                                          for c, hs in clusters.items()}, groups)
    hosts = sorted(h for hs in clusters.values() for h in hs)
    writer = MeasurementWriter(tmp_path / "figures", {"method": "iperf3", "launcher": "local",
                                                      "figures": {"clusters": clusters,
                                                                  "groups": groups}},
                               [(h, "127.0.0.1", "") for h in hosts], probes=True)
    writer.close()
    rows = FiguresWriter(tmp_path / "figures")
    for row in frame.to_dict("records"):
        rows.add(row)
    with pytest.raises(DatasetError, match="no figures measured"):
        read_figures(tmp_path)      # not whole yet: no planner takes half the figures
    rows.close()
    back, spec = read_figures(tmp_path)
    assert spec["groups"] == groups and len(back) == len(frame)
    np.testing.assert_allclose(back["bits_per_second"], frame["bits_per_second"])
    again = from_figures(tmp_path)
    assert again.sources["cluster_bandwidth"].kind == "probes"
    np.testing.assert_allclose(again.cluster_bandwidth, from_figures((frame, spec))
                               .cluster_bandwidth)
    with pytest.raises(TomographyError, match="other clusters"):
        from_figures(tmp_path, {"all": hosts})


@pytest.mark.parametrize("change, message", [
    (("kind", "sideways"), "not one of host, pair, out, in"),
    (("bits_per_second", "-5"), "not a rate"),
    (("bits_per_second", "fast"), "not a number"),
    (("test", "x"), "not a whole number"),
])
def test_a_broken_figures_file_is_refused_naming_file_line_and_field(
        tmp_path: Path, change, message) -> None:
    from tomography.model.dataset.incremental import MeasurementWriter

    MeasurementWriter(tmp_path, {"method": "iperf3", "launcher": "local",
                                 "figures": {"clusters": {"a": ["a1"], "b": ["b1"]}}},
                      [("a1", "127.0.0.1", ""), ("b1", "127.0.0.2", "")], probes=True).close()
    row = dict(zip(FIGURE_COLUMNS, [0, 0, "pair", "a", "a1", "b1", "a", "b", 1e7, 2e6, 2.0, ""]))
    row[change[0]] = change[1]
    writer = FiguresWriter(tmp_path)
    writer.add(row)
    writer.close()
    with pytest.raises(DatasetError, match=message) as caught:
        read_figures(tmp_path)
    assert "figures.csv" in str(caught.value) and "line 2" in str(caught.value)


def test_a_figures_file_cut_short_is_refused_not_read_as_a_failed_flow(tmp_path: Path) -> None:
    from tomography.model.dataset.incremental import MeasurementWriter

    MeasurementWriter(tmp_path, {"method": "iperf3", "launcher": "local",
                                 "figures": {"clusters": {"a": ["a1"], "b": ["b1"]}}},
                      [("a1", "127.0.0.1", ""), ("b1", "127.0.0.2", "")], probes=True).close()
    writer = FiguresWriter(tmp_path)
    for test in range(2):
        writer.add(dict(zip(FIGURE_COLUMNS, [0, test, "pair", "a", "a1", "b1", "a", "b", 1e7,
                                             2e6, 2.0, ""])))
    writer.close()
    file = next(tmp_path.rglob("figures.csv"))
    file.write_bytes(file.read_bytes()[:-30])      # the last row without its rate
    with pytest.raises(DatasetError, match="cut short") as caught:
        read_figures(tmp_path)
    assert "figures.csv, line 3" in str(caught.value)


def test_a_tree_skips_groups_of_one_and_of_everything() -> None:
    members, children = figure_tree(["a", "b", "c"], {"x": ["a"], "y": ["a", "b", "c"],
                                                      "z": ["a", "b"], "z2": ["b", "a"]})
    assert set(members) == {"a", "b", "c", "z", "*"}
    assert children == {"z": ["a", "b"], "*": ["c", "z"]}


@pytest.mark.slow
def test_figures_measured_with_iperf3_on_loopback(tmp_path: Path) -> None:
    if shutil.which("iperf3") is None:
        pytest.fail("iperf3 missing: run scripts/setup.sh (it installs iperf3)")
    from measure.coordinator import local_hosts
    from measure.figures import run_figures

    hosts = local_hosts(4, first=170)
    names = sorted(hosts["host"]) if hasattr(hosts, "columns") else [h[0] for h in hosts]
    clusters = {"a": names[:2], "b": names[2:]}
    out = run_figures(hosts, tmp_path, clusters, duration=2)
    frame, spec = read_figures(tmp_path)
    assert out == tmp_path / "figures" and spec["clusters"] == clusters
    # flows side by side and a flow alone across ran 2 s, inside a cluster 1 s (iperf3's own
    # seconds, in probes.csv)
    seconds = pd.read_csv(out / "probes.csv").set_index(["src", "dst"])["duration_s"]
    took = {kind: sorted(round(seconds[(s, d)]) for s, d in zip(rows["src"], rows["dst"]))
            for kind, rows in frame.groupby("kind")}
    assert took == {"out": [2] * 4, "pair": [2, 2], "host": [1, 1]}, took
    assert spec["duration_s"] == 2 and spec["single_duration_s"] == 1
    assert set(frame["kind"]) == {"host", "out", "pair"} and (frame["error"].isna()
                                                             | (frame["error"] == "")).all()
    assert (frame["bits_per_second"] > 1e8).all()     # loopback: far above any NIC
    model = from_figures(tmp_path, clusters)
    assert model.missing() == [] and model.basis == "measured"
    # hosts as clusters of their own: flows into one host run from servers on the senders
    single = {h: [h] for h in names[:3]}
    run_figures(hosts, tmp_path / "hosts", single, duration=1)
    frame, _ = read_figures(tmp_path / "hosts")
    assert "in" in set(frame["kind"]) and frame["bits_per_second"].notna().all()
    assert from_figures(tmp_path / "hosts").host_bandwidth is not None


@pytest.mark.slow
def test_multicast_over_a_dataset_without_figures_measures_them_first(tmp_path: Path,
                                                                       capsys) -> None:
    if shutil.which("iperf3") is None:
        pytest.fail("iperf3 missing: run scripts/setup.sh (it installs iperf3)")
    from tomography.cli import main
    from tomography.model.dataset.multicast import read_multicasts
    from tomography.model.dataset.write import write_measurement
    from tomography.model.synthetic import planted_partition

    # two clusters the analysis finds, {h000, h001} and {h002, h003}; no probes, no figures
    write_measurement(planted_partition(4, 2, iterations=4, seed=0, ratio=8), tmp_path / "run")
    hosts = tmp_path / "hosts.csv"
    hosts.write_text("host,address,label\n" + "".join(f"h00{i},127.0.0.{190 + i},\n"
                                                       for i in range(4)))
    argv = ["multicast", "--hosts", str(hosts), "--dataset", str(tmp_path / "run"),
            "--root", "h000", "--method", "balanced,chain-clusters,chain-hosts",
            "--size", "1MiB", "--repeats", "1"]
    assert main([*argv, "-o", str(tmp_path / "mc")]) == 0
    err = capsys.readouterr()
    assert "has no figures for its clusters: measuring them" in err.err
    assert (tmp_path / "run" / "figures" / "figures.csv").exists()
    meta, runs, _ = read_multicasts(tmp_path / "mc")
    assert runs["complete"].all()
    assert {m: meta["plans"][m]["basis"] for m in meta["plans"]} == {
        "balanced": "measured", "chain-clusters": "measured", "chain-hosts": "measured"}
    assert "measured" in err.out and "lower bound" not in err.out
    # the next run plans on the figures kept: nothing measured again
    assert main([*argv, "-o", str(tmp_path / "mc2")]) == 0
    assert "measuring them" not in capsys.readouterr().err


@pytest.mark.slow
def test_under_mpiexec_the_figures_are_measured_then_the_multicast_runs(tmp_path: Path) -> None:
    import socket
    import subprocess

    from tests.conftest import mpiexec
    from tomography.model.dataset.multicast import read_multicasts
    from tomography.model.dataset.write import write_measurement
    from tomography.model.synthetic import planted_partition

    name = socket.gethostname().split(".")[0]     # the ranks' hosts: NAME-1 ... NAME-4
    run = tmp_path / "run"
    write_measurement(planted_partition(4, 2, iterations=4, seed=0, ratio=8), run)
    for path in run.glob("*.csv"):
        text = path.read_text()
        for i in range(4):
            text = text.replace(f"h00{i}", f"{name}-{i + 1}")
        path.write_text(text)
    done = subprocess.run([mpiexec(), "-n", "5", TOMOGRAPHY, "multicast", "--mpi", "--network",
                           "127.0.0.0/8", "--dataset", str(run), "--root", f"{name}-1",
                           "--method", "balanced,chain-clusters", "--size", "1MiB",
                           "--repeats", "1", "-o", str(tmp_path / "mc")],
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    assert "measuring them on the run's hosts first" in done.stderr
    assert (run / "figures" / "figures.csv").exists()    # the probe agents came and went...
    meta, runs, _ = read_multicasts(tmp_path / "mc")     # ... and the multicast's followed
    assert meta["launcher"] == "mpi" and runs["complete"].all()
    assert {p["basis"] for p in meta["plans"].values()} == {"measured"}
    for leftover in Path("/dev/shm").glob("mpich_shm_*"):
        leftover.unlink(missing_ok=True)


@pytest.mark.parametrize("most", [False, True], ids=["one-flow-late", "most-flows-late"])
def test_a_test_whose_flows_did_not_overlap_runs_again(tmp_path: Path, monkeypatch,
                                                       most: bool) -> None:
    """A flow side by side that began late (its connection request lost) ran partly alone;
    or most did, and the one on time had the link alone: the test runs again, and the
    attempt closest to its duration is the one written."""
    import measure.figures as figures

    class Scripted:
        """iperf3's results as a test plans them: in its first attempt, the first flow of
        every test of flows side by side (``most``: every other flow) begins moving data
        0.7 s after it was started, so it ends that much later."""

        def __init__(self) -> None:
            self.last: dict = {}
            self.attempts: dict = {}

        def measure(self, flows, repeat, reverse=frozenset(), duration=None):
            out = {}
            for i, (s, d) in enumerate(flows):
                n = self.attempts[(s, d)] = self.attempts.get((s, d), 0) + 1
                seconds = duration[(s, d)]
                late = 0.7 if n == 1 and seconds == 2 and (i % 4 == 0) != most else 0.0
                self.last[(s, d)] = {"start": 100.0 * n, "duration_s": seconds,
                                     "end": 100.0 * n + late + seconds + 0.05, "bytes": n}
                out[(s, d)] = (8.0 * n, "")
            return out

    mesh = Scripted()

    def start(run, frame, options, launch, meta, *args, **kwargs):
        run.path.mkdir(parents=True, exist_ok=True)   # the probe dataset, as _start makes it
        (run.path / "meta.json").write_text(json.dumps(
            {"format": "tomography-measurement/1", "method": "iperf3", **meta}))
        return None, mesh

    monkeypatch.setattr(figures, "_start", start)
    hosts = [(f"{c}{i}", f"127.0.{ord(c)}.{i + 1}", c) for c in "ab" for i in range(4)]
    clusters = {c: [h for h, _, label in hosts if label == c] for c in "ab"}
    figures.run_figures(hosts, tmp_path, clusters)
    frame, spec = read_figures(tmp_path)
    assert (spec["late_s"], spec["retries"]) == (figures.LATE, figures.RETRIES)
    sides = frame[frame["kind"] == "out"]
    # each test of flows side by side ran twice; the second attempt (bytes 2) was kept
    assert set(mesh.attempts[(s, d)] for s, d in zip(sides["src"], sides["dst"])) == {2}
    assert (sides["bytes"] == 2).all() and (sides["window_s"] < 2.1).all()
    alone = frame[frame["kind"] != "out"]   # a flow alone never runs again
    assert set(mesh.attempts[(s, d)] for s, d in zip(alone["src"], alone["dst"])) == {1}


@pytest.mark.root
@pytest.mark.slow
def test_pairs_a_firewall_refuses_or_drops_are_dead_links_on_a_testbed(as_root,
                                                                       tmp_path: Path) -> None:
    """a-c refused by the testbed (unreachable), b-c dropped silently (a blackhole rule):
    both dead links in the figures, a-b live."""
    import random
    import subprocess

    from measure import testbed
    from measure.figures import run_figures
    from measure.transport import ProcessTransport
    from tomography.model.topology import parse_topology

    topo = parse_topology({
        "name": "fw", "routers": ["A", "B", "C"],
        "links": [{"between": ["A", "B"], "capacity": "16Mbit/s", "latency": "1ms"},
                  {"between": ["B", "C"], "capacity": "16Mbit/s", "latency": "1ms"}],
        "clusters": [{"name": c, "router": c.upper(), "hosts": 1, "nic": "100Mbit/s"}
                     for c in "abc"],
        "unreachable": [["A", "C"]]})
    name = f"fw{random.randrange(10**4):04d}"
    bed = testbed.up(topo, name=name)
    try:
        drop = [["ip", "-n", testbed.names.prefix(name) + "r-" + r, "rule", "add", "pref", "99",
                 "from", bed.subnets[r], "to", bed.subnets[o], "blackhole"]
                for r, o in (("B", "C"), ("C", "B"))]
        for argv in drop:
            subprocess.run(argv, check=True)
        hosts = [(h, a, "") for h, a in bed.addresses.items()]
        run_figures(hosts, tmp_path, {c: [f"{c}-00"] for c in "abc"}, duration=1,
                    launch=ProcessTransport(bed.command, name="testbed"))
    finally:
        testbed.down(name)
    frame, _ = read_figures(tmp_path)
    errors = frame.loc[frame["kind"] == "pair"].set_index(["src", "dst"])["error"]
    assert "No route to host" in errors[("a-00", "c-00")]
    assert "Connection timed out" in errors[("b-00", "c-00")]
    model = from_figures(tmp_path)
    bw = pd.DataFrame(model.cluster_bandwidth, index=list(model.clusters),
                      columns=list(model.clusters))
    assert bw.loc["a", "c"] == bw.loc["c", "a"] == bw.loc["b", "c"] == bw.loc["c", "b"] == 0
    assert bw.loc["a", "b"] > 1e6 and bw.loc["b", "a"] > 1e6


def _scripted_figures(tmp_path: Path, monkeypatch, trace: list[tuple[float, str, str]],
                      across: float = 1.2e7):
    """run_figures on clusters ``a`` and ``b`` of four hosts, over a dataset whose trace is
    ``trace`` (time, sender, receiver), a flow inside a cluster at 100 Mbit/s and one across
    at ``across``: the flows it ran."""
    import measure.figures as figures
    from tomography.model.dataset.incremental import MeasurementWriter

    ran: list[tuple[str, str]] = []

    class Mesh:
        last: dict = {}

        def measure(self, flows, repeat, reverse=frozenset(), duration=None):
            ran.extend(flows)
            self.last = {f: {"start": 0.0, "end": duration[f] + 0.05, "duration_s": duration[f],
                             "bytes": int(duration[f] * 1.25e7)} for f in flows}
            return {(s, d): (1e8 if s[0] == d[0] else across, "") for s, d in flows}

    def start(run, frame, options, launch, meta, *args, **kwargs):
        run.path.mkdir(parents=True, exist_ok=True)
        writer = MeasurementWriter(run.path, {"method": "iperf3", "launcher": "local", **meta},
                                   [(h, "", "") for h in frame["host"]], probes=True)
        writer.close()
        mesh.writer = writer
        return None, mesh

    mesh = Mesh()
    monkeypatch.setattr(figures, "_start", start)
    hosts = [(f"{c}{i}", f"127.0.{ord(c)}.{i + 1}", c) for c in "ab" for i in range(4)]
    clusters = {c: [h for h, _, label in hosts if label == c] for c in "ab"}
    run = MeasurementWriter(tmp_path, {"method": "bittorrent"}, hosts)
    run.add_trace(0, [(t, s, r, i, 0) for i, (t, s, r) in enumerate(trace)])
    run.close()
    figures.run_figures(hosts, tmp_path, clusters)
    return ran


BOTH_WAYS = [(0.01 * i, "a0", "b1") for i in range(80)] + [(0.01 * i, "b2", "a3")
                                                          for i in range(80)]
"""A trace whose busiest second carried 80 blocks (10.5 Mbit/s) each way between a and b."""


def test_a_link_the_traced_broadcasts_filled_is_read_from_their_trace(tmp_path: Path,
                                                                     monkeypatch) -> None:
    # in their busiest second, 80 blocks (10.5 Mbit/s) crossed each way: far below the hosts'
    # 4 x 100 Mbit/s, a link the broadcasts filled; no iperf3 test runs across it
    ran = _scripted_figures(tmp_path, monkeypatch, BOTH_WAYS, across=1e7)
    frame, spec = read_figures(tmp_path)
    assert set(frame["kind"]) == {"host", "pair"} and len(ran) == len(frame) == 4
    assert spec["trace"]["out"] == spec["trace"]["in"] == {"a": 80 * 16384 * 8,
                                                           "b": 80 * 16384 * 8}
    assert spec["rounds"] == frame["round"].nunique() and spec["tests"] == 4
    model = from_figures(tmp_path)
    assert model.cluster_out.tolist() == [80 * 16384 * 8] * 2
    # a pair's figure: the least along its path, one connection's 10 Mbit/s below the link's
    assert model.cluster_bandwidth[0, 1] == 1e7
    assert "the broadcasts' busiest 1 s" in model.sources["cluster_capacity"].method


def test_a_link_read_from_the_trace_carries_at_least_a_flow_alone(tmp_path: Path,
                                                                  monkeypatch) -> None:
    # the busiest second read 10.5 Mbit/s each way, one flow alone across got 12: the trace
    # stands (above 0.8 of the flow), but the link carries at least that flow's 12
    _scripted_figures(tmp_path, monkeypatch, BOTH_WAYS, across=1.2e7)
    frame, spec = read_figures(tmp_path)
    assert set(frame["kind"]) == {"host", "pair"}
    assert spec["trace"]["out"] == {"a": 80 * 16384 * 8, "b": 80 * 16384 * 8}
    model = from_figures(tmp_path)
    assert model.cluster_out.tolist() == model.cluster_in.tolist() == [1.2e7] * 2
    assert model.cluster_bandwidth[0, 1] == model.cluster_bandwidth[1, 0] == 1.2e7


def test_a_link_near_its_hosts_cards_is_tested_not_read_from_the_trace(tmp_path: Path,
                                                                      monkeypatch) -> None:
    # 1600 blocks in a second out of b (210 Mbit/s): over half its hosts' cards, where
    # libtorrent may have held it back, so the iperf3 tests run (both siblings' flows out)
    blocks = [(0.01 * i, "a0", "b1") for i in range(80)] + [(i / 1600, f"b{i % 4}", "a3")
                                                               for i in range(1600)]
    ran = _scripted_figures(tmp_path, monkeypatch, blocks)
    frame, spec = read_figures(tmp_path)
    assert set(frame["kind"]) == {"host", "pair", "out"}
    assert set(frame.loc[frame["kind"] == "out", "node"]) == {"a", "b"}
    assert spec["trace"] == {"window_s": 1.0, "trust_share": 0.5, "alone_floor": 0.8,
                             "out": {}, "in": {}}
    assert len(ran) == len(frame) and spec["tests"] == frame["test"].nunique()
    assert from_figures(tmp_path).cluster_out.tolist() == [8e8 / 2] * 2   # the tests' 4 flows


def test_a_link_read_below_a_flow_alone_across_it_is_tested(tmp_path: Path,
                                                             monkeypatch) -> None:
    # the trace's busiest second read 10.5 Mbit/s each way, but one flow alone got 20: the
    # link carries more than the broadcasts ever put through it, so its tests run
    _scripted_figures(tmp_path, monkeypatch, BOTH_WAYS, across=2e7)
    frame, spec = read_figures(tmp_path)
    assert set(frame.loc[frame["kind"] == "out", "node"]) == {"a", "b"}
    assert spec["trace"]["out"] == spec["trace"]["in"] == {}


@pytest.mark.parametrize("trace, field, message", [
    ([1, 2], "figures.trace", "not an object"),
    ({"out": {}}, "figures.trace.in", "not an object"),
    ({"out": {"a": -1.0}, "in": {}}, "figures.trace.out.a", "not a rate"),
    ({"out": {"a": "fast"}, "in": {}}, "figures.trace.out.a", "not a rate"),
    ({"out": {"z": 1e6}, "in": {}}, "figures.trace", "'z', which is no cluster or group"),
])
def test_a_broken_trace_figure_in_meta_is_refused(tmp_path: Path, trace, field,
                                                  message) -> None:
    from tomography.model.dataset.incremental import MeasurementWriter

    MeasurementWriter(tmp_path, {"method": "iperf3", "launcher": "local",
                                 "figures": {"clusters": {"a": ["a1"], "b": ["b1"]},
                                             "trace": trace}},
                      [("a1", "127.0.0.1", ""), ("b1", "127.0.0.2", "")], probes=True).close()
    writer = FiguresWriter(tmp_path)
    writer.add(dict(zip(FIGURE_COLUMNS, [0, 0, "pair", "a", "a1", "b1", "a", "b", 1e7, 2e6,
                                         2.0, ""])))
    writer.close()
    with pytest.raises(DatasetError, match=message) as caught:
        from_figures(tmp_path)
    assert f"field '{field}'" in str(caught.value)


def test_a_broken_trace_is_refused_before_any_test_runs(tmp_path: Path, monkeypatch) -> None:
    import measure.figures as figures

    def start(*args, **kwargs):
        raise AssertionError("no agent starts on a broken trace")

    monkeypatch.setattr(figures, "_start", start)
    (tmp_path / "trace.csv").write_text("iteration,time_s,sender,receiver,piece,block\n"
                                        "0,soon,a0,b0,0,0\n")
    clusters = {c: [f"{c}{i}" for i in range(2)] for c in "ab"}
    hosts = [(h, f"127.0.0.{i + 1}", "") for i, h in enumerate(["a0", "a1", "b0", "b1"])]
    with pytest.raises(DatasetError, match="time_s") as caught:
        figures.run_figures(hosts, tmp_path, clusters)
    assert "trace.csv, line 2" in str(caught.value)


@pytest.mark.root
@pytest.mark.slow
def test_on_a_testbed_the_traced_broadcasts_stand_for_the_link_they_filled(as_root,
                                                                          tmp_path: Path) -> None:
    """Two clusters of three 100 Mbit/s hosts behind an 8 Mbit/s link: real broadcasts (traced
    by default at this size), then the figures: the link read from the trace, no flows side by
    side run, the figure near the link's capacity."""
    import random

    from measure import testbed
    from measure.coordinator import run_broadcasts
    from measure.figures import run_figures
    from measure.transport import ProcessTransport
    from tomography.model.topology import parse_topology

    topo = parse_topology({
        "name": "tr", "routers": ["A", "B"],
        "links": [{"between": ["A", "B"], "capacity": "8Mbit/s", "latency": "1ms"}],
        "clusters": [{"name": c, "router": c.upper(), "hosts": 3, "nic": "100Mbit/s"}
                     for c in "ab"]})
    name = f"tr{random.randrange(10**4):04d}"
    bed = testbed.up(topo, name=name)
    try:
        hosts = [(h, a, "") for h, a in bed.addresses.items()]
        launch = ProcessTransport(bed.command, name="testbed")
        run_broadcasts(hosts, tmp_path, iterations=2, file_size=2 * 2**20, seed=1, launch=launch)
        assert (tmp_path / "trace.csv").exists()
        clusters = {c: sorted(h for h in bed.addresses if h.startswith(f"{c}-")) for c in "ab"}
        run_figures(hosts, tmp_path, clusters, duration=1,
                    launch=ProcessTransport(bed.command, name="testbed"))
    finally:
        testbed.down(name)
    frame, spec = read_figures(tmp_path)
    assert set(frame["kind"]) == {"host", "pair"}, frame      # no flows side by side ran
    assert set(spec["trace"]["out"]) == set(spec["trace"]["in"]) == {"a", "b"}
    model = from_figures(tmp_path)
    assert ((model.cluster_out > 0.6 * 8e6) & (model.cluster_out < 1.3 * 8e6)).all(), \
        model.cluster_out
    assert (np.diag(model.cluster_bandwidth) > 5e7).all()   # inside: the hosts' own cards
