"""Multicasts that run (local processes): every byte arrives, paced rates hold, faults end cleanly."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from measure.coordinator import local_hosts
from measure.multicast import run_multicasts
from tomography.model.dataset.multicast import read_multicasts
from tomography.cli import main
from tomography.model.errors import DatasetError, ParameterError
from tomography.export.bandwidth import BandwidthModel, Source
from tomography.export.gauge import write_gauge
from tomography.planning.delivery import Delivery, Stream, chain_delivery

from .conftest import peer_pids

MiB = 2**20


def cluster_gauge(path: Path, hosts: list[str], *, clusters: int = 2,
                  mbit: float = 400.0) -> Path:
    """A Gauge file of ``hosts`` cut into ``clusters`` clusters in order, figures in Mbit/s.

    Every cluster and host has ``mbit`` in and out, every pair of clusters
    half of it: from two clusters on, balanced multicasting sends two trees.
    """
    groups = np.array_split(np.array(hosts), clusters)
    names = [chr(ord("A") + i) for i in range(clusters)]
    source = Source("topology-model", "written by the test")
    pair = np.full((clusters, clusters), mbit * 1e6 / 2)
    np.fill_diagonal(pair, np.nan)
    n = len(hosts)
    model = BandwidthModel({c: list(g) for c, g in zip(names, groups)},
                           host_out=[mbit * 1e6] * n, host_in=[mbit * 1e6] * n,
                           cluster_out=[mbit * 1e6] * clusters,
                           cluster_in=[mbit * 1e6] * clusters, cluster_bandwidth=pair,
                           sources={"host_capacity": source, "cluster_capacity": source,
                                    "cluster_bandwidth": source})
    write_gauge(model, path, unit="Mbit/s")
    return path


def test_a_chain_and_a_paced_balanced_plan_deliver_every_byte(tmp_path: Path) -> None:
    hosts = local_hosts(4, first=100)
    names = list(hosts["host"])
    two = Delivery("two-trees", "h00", names, 3 * MiB + 7, [
        Stream(0, 0, 2 * MiB, 40 * MiB, {"h01": "h00", "h02": "h01", "h03": "h02"}),
        Stream(1, 2 * MiB, MiB + 7, 20 * MiB, {"h03": "h00", "h02": "h03", "h01": "h00"})])
    chain = chain_delivery(names, "h00", 3 * MiB + 7)
    run = run_multicasts(hosts, [chain, two], tmp_path / "mc", repeats=1, seed=3)
    assert [r.complete for r in run.results] == [True, True]
    meta, runs, receivers = read_multicasts(tmp_path / "mc")
    assert meta["params"]["bytes"] == 3 * MiB + 7 and set(meta["plans"]) == {"chain-hosts",
                                                                             "two-trees"}
    assert len(receivers) == 6 and receivers["digest_ok"].all()
    assert (receivers["bytes"] == 3 * MiB + 7).all()
    assert (receivers["last_s"] >= receivers["first_s"]).all()
    streams = pd.read_csv(tmp_path / "mc" / "streams.csv")
    assert len(streams) == 3 + 6 and streams["digest_ok"].all()
    two_rows = streams[streams["run"] == "two-trees-0"]
    assert sorted(zip(two_rows["stream"], two_rows["receiver"], two_rows["parent"])) == [
        (0, "h01", "h00"), (0, "h02", "h01"), (0, "h03", "h02"),
        (1, "h01", "h00"), (1, "h02", "h03"), (1, "h03", "h00")]
    assert runs["achieved_Bps"].gt(0).all() and runs["complete"].all()


def test_info_shows_a_multicast_dataset_as_its_table(tmp_path: Path, capsys) -> None:
    hosts = local_hosts(3, first=105)
    run_multicasts(hosts, [chain_delivery(list(hosts["host"]), "h01", MiB)], tmp_path / "mc",
                   repeats=2)
    assert main(["info", str(tmp_path / "mc")]) == 0
    out = capsys.readouterr().out
    assert "(multicast, created" in out and "from h01 to 2 hosts" in out
    line = next(x for x in out.splitlines() if x.split()[:1] == ["chain-hosts"])
    assert line.split()[-1] == "2/2"


@pytest.mark.slow
@pytest.mark.parametrize("pacing", ["kernel", "sleep"])
def test_a_paced_stream_holds_its_rate(tmp_path: Path, pacing: str) -> None:
    hosts = local_hosts(2, first=110)
    rate = 8 * MiB
    d = Delivery("paced", "h00", ["h00", "h01"], 24 * MiB,
                 [Stream(0, 0, 24 * MiB, rate, {"h01": "h00"})])
    run = run_multicasts(hosts, [d], tmp_path / "mc", repeats=1, pacing=pacing)
    row = run.results[0].streams[0]
    assert row["digest_ok"]
    assert row["rate_Bps"] == pytest.approx(rate, rel=0.1)   # loopback would go 100x faster


def _kill_when_receiving(address: str, sig: int, started: Path, stop: threading.Event) -> None:
    """Send ``sig`` to the multicast agent on ``address`` once the multicast is under way.

    ``started`` (the dataset's meta.json) is written after the preflight; the
    multicast is paced to last 8 s.
    """
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not stop.is_set():
        if started.exists():
            time.sleep(1.5)
            for pid in peer_pids({address}):
                os.kill(pid, sig)
            return
        time.sleep(0.05)


def _run_and_signal(hosts, delivery, out: Path, address: str, sig: int, *, time_limit: float,
                    repeats: int = 1):
    """Multicasts, the agent on ``address`` sent ``sig`` once the first is under way (stall 2 s)."""
    stop = threading.Event()
    killer = threading.Thread(target=_kill_when_receiving,
                              args=(address, sig, out / "meta.json", stop))
    killer.start()
    try:
        # the sleeping sender: the kernel's pacing of loopback's 64 KiB segments is coarse
        # at low rates, and these tests need the multicast to last
        return run_multicasts(hosts, [delivery], out, repeats=repeats, stall=2.0,
                              time_limit=time_limit, pacing="sleep")
    finally:
        stop.set()
        killer.join()
        for pid in peer_pids({address}):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGSTOP], ids=["killed", "stopped"])
def test_a_receiver_that_dies_or_stops_ends_its_subtree_and_the_run(tmp_path: Path,
                                                                     sig: int) -> None:
    first = 120 if sig == signal.SIGKILL else 124   # the two may run side by side
    hosts = local_hosts(4, first=first)
    names = list(hosts["host"])
    chain = Delivery("slow-chain", "h00", names, 16 * MiB,
                     [Stream(0, 0, 16 * MiB, 2 * MiB, {"h01": "h00", "h02": "h01",
                                                      "h03": "h00"})])
    started = time.monotonic()
    run = _run_and_signal(hosts, chain, tmp_path / "mc", f"127.0.0.{first + 1}", sig,
                          time_limit=60, repeats=2)
    assert time.monotonic() - started < 50   # neither the time limit nor a hang
    assert run.results[1].complete   # the next multicast has the agent started afresh
    result = run.results[0]
    assert not result.complete
    done = {r["receiver"]: r["complete"] for r in result.receivers}
    assert done == {"h01": False, "h02": False, "h03": True}   # h03 is not below h01
    assert "h01" in " ".join(result.notes)
    _, runs, receivers = read_multicasts(tmp_path / "mc")
    assert runs["receivers_complete"].tolist() == [1, 3]
    assert receivers[receivers["run"] == "slow-chain-0"].set_index("receiver").loc["h02", "error"]


@pytest.mark.slow
def test_an_interrupted_run_resumes_with_what_is_missing(tmp_path: Path) -> None:
    hosts = local_hosts(3, first=130)
    names = list(hosts["host"])
    plans = [chain_delivery(names, "h00", MiB),
             chain_delivery(names[::-1], "h00", MiB, method="chain-back")]
    seen = []

    def interrupt(result):
        seen.append(result.run)
        if len(seen) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_multicasts(hosts, plans, tmp_path / "mc", repeats=2, progress=interrupt)
    _, runs, _ = read_multicasts(tmp_path / "mc")
    assert runs["run"].tolist() == seen
    again = run_multicasts(hosts, plans, tmp_path / "mc", repeats=2, resume=True)
    assert again.kept == 2 and sorted(r.run for r in again.results) == sorted(
        {"chain-hosts-0", "chain-hosts-1", "chain-back-0", "chain-back-1"} - set(seen))
    _, runs, receivers = read_multicasts(tmp_path / "mc")
    assert len(runs) == 4 and len(receivers) == 8 and runs["complete"].all()
    with pytest.raises(DatasetError, match="another repeats"):
        run_multicasts(hosts, plans, tmp_path / "mc", repeats=3, resume=True)


def test_plans_over_other_hosts_are_refused_before_any_start(tmp_path: Path) -> None:
    hosts = local_hosts(3, first=140)
    other = chain_delivery(["h00", "h01", "x"], "h00", MiB)
    with pytest.raises(ParameterError, match="x in one but not the other"):
        run_multicasts(hosts, [other], tmp_path / "mc")
    assert not (tmp_path / "mc").exists()


def test_the_cli_runs_every_planner_and_prints_the_table(tmp_path: Path, capsys) -> None:
    gauge = cluster_gauge(tmp_path / "g.gauge.xml", [f"h{i:02d}" for i in range(4)])
    code = main(["multicast", "--local", "4", "--gauge", str(gauge), "--root", "h01",
                 "--size", "2MiB", "--repeats", "1", "--parallel", "2", "--method",
                 "balanced,flat,binomial,chain-clusters,chain-hosts", "-o",
                 str(tmp_path / "mc")])
    out = capsys.readouterr().out
    assert code == 0, out
    _, runs, receivers = read_multicasts(tmp_path / "mc")
    assert runs["complete"].all() and receivers["digest_ok"].all()
    assert sorted(runs["method"]) == sorted(["balanced", "flat", "binomial", "chain-clusters",
                                             "chain-hosts"])
    for method in ("balanced", "chain-clusters", "flat"):
        assert any(line.split()[:1] == [method] for line in out.splitlines()), out
    assert runs.set_index("method").loc["flat", "streams"] == 2   # two hosts side by side
    assert "trees sent unpaced" not in out   # no FPFR: no word on unpaced trees
    chain = pd.read_csv(tmp_path / "mc" / "streams.csv").query("run == 'chain-clusters-0'")
    assert dict(zip(chain["receiver"], chain["parent"])) == {"h00": "h01", "h02": "h00",
                                                            "h03": "h02"}


@pytest.mark.parametrize("argv, message", [
    (["--method", "balanced"], "needs a plan: give --gauge FILE or --dataset DIR"),
    (["--method", "fastest"], "unknown method 'fastest'"),
    (["--gauge", "{gauge}", "--root", "nobody"], "--root 'nobody' is not a host of the plan"),
    (["--root", "nobody", "--method", "chain-hosts"], "the root 'nobody' is not a host of the run"),
    (["--parallel", "x"], "--parallel takes auto or a whole number >= 1, got 'x'"),
    (["--seed", "-1"], "--seed takes a whole number >= 0"),
    (["--skip-failed"], "multicast does not take --skip-failed"),
    (["--unit", "2MiB/s"], "--unit takes a unit such as MiB/s"),
    (["--gauge", "{one}", "--method", "balanced"], "there is nothing to plan between clusters"),
    (["--gauge", "{gauge}", "-o", "{measurement}"], "holds another dataset (a measurement?)"),
    (["--gauge", "{other}", "--root", "x00"],
     "the plan's hosts are not the run's: not in the run: x00, x01"),
])
def test_bad_plans_and_hosts_give_one_line(tmp_path: Path, capsys, argv, message) -> None:
    gauge = cluster_gauge(tmp_path / "g.gauge.xml", ["h00", "h01"])
    other = cluster_gauge(tmp_path / "o.gauge.xml", ["x00", "x01"])
    one = tmp_path / "one.gauge.xml"
    source = Source("topology-model", "written by the test")
    write_gauge(BandwidthModel({"A": ["h00", "h01"]}, host_out=[1e8] * 2, host_in=[1e8] * 2,
                               cluster_out=[1e8], cluster_in=[1e8],
                               cluster_bandwidth=[[np.nan]],
                               sources={"host_capacity": source, "cluster_capacity": source,
                                        "cluster_bandwidth": source}), one)
    measurement = tmp_path / "measurement"
    measurement.mkdir()
    (measurement / "meta.json").write_text('{"format": 1, "method": "bittorrent"}')
    argv = [a.format(gauge=gauge, other=other, one=one, measurement=measurement)
            for a in argv]
    if "--root" not in argv:
        argv += ["--root", "h00"]
    if "-o" not in argv:
        argv += ["-o", str(tmp_path / "mc")]
    code = main(["multicast", "--local", "2", *argv])
    err = capsys.readouterr().err
    assert code == 2
    lines = [line for line in err.splitlines() if line.startswith("tomography: error")]
    assert len(lines) == 1 and message in lines[0], err


def test_the_gridlab_testbed_gauge_has_the_testbeds_hosts_and_the_tables_figures() -> None:
    from tomography.export.gauge import gauge_to_network, read_gauge
    from tomography.planning import gridlab8
    from tomography.model.topology import read_topology

    gauges = Path(__file__).parents[2] / "datasets" / "gauges"
    model = read_gauge(gauges / "gridlab-8-testbed.gauge.xml")
    topology = read_topology("gridlab-8")
    assert sorted(model.hosts) == sorted(h.name for h in topology.hosts)
    assert all(model.cluster_of[h.name] == h.cluster for h in topology.hosts)
    net, fixture = gauge_to_network(model, unit="MiB/s"), gridlab8()
    assert net.nodes == fixture.nodes
    assert np.array_equal(net.bandwidth, fixture.bandwidth)
    assert np.array_equal(net.out_capacity, fixture.out_capacity)


@pytest.mark.slow
def test_under_mpiexec_the_ranks_multicast_and_switch_to_bittorrent_and_robber(tmp_path: Path) -> None:
    import socket
    import subprocess
    import sys

    from .conftest import mpiexec

    name = socket.gethostname().split('.')[0]
    root = f"{name}-1"
    clusters = tmp_path / "clusters.csv"
    clusters.write_text(f"host,label\n{name}-1,x\n{name}-2,x\n{name}-3,y\n")
    run = subprocess.run([mpiexec(), "-n", "4", str(Path(sys.executable).parent / "tomography"),
                          "multicast", "--mpi", "--network", "127.0.0.0/8", "--root", root,
                          "--method", "chain-hosts,bittorrent,robber", "--clusters",
                          str(clusters), "--size", "2MiB",
                          "--repeats", "1", "-o", str(tmp_path / "mc")],
                         capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr
    meta, runs, receivers = read_multicasts(tmp_path / "mc")
    assert meta["launcher"] == "mpi"
    assert sorted(runs["method"]) == ["bittorrent", "chain-hosts", "robber"]
    assert runs["complete"].all() and len(receivers) == 6 and receivers["complete"].all()
    for leftover in Path("/dev/shm").glob("mpich_shm_*"):
        leftover.unlink(missing_ok=True)


@pytest.mark.slow
def test_over_ssh_every_receiver_gets_every_byte(sshd, tmp_path: Path) -> None:
    from .test_ssh import _hosts_file, _ssh_args, _tomography

    hosts = _hosts_file(tmp_path / "hosts.csv", sshd,
                        [(f"n{i}", f"127.0.0.{150 + i}", "a" if i < 2 else "b", "")
                         for i in range(4)])
    gauge = cluster_gauge(tmp_path / "g.gauge.xml", ["n0", "n1", "n2", "n3"])
    run = _tomography("multicast", "--ssh", str(hosts), "--gauge", str(gauge), "--root", "n0",
                      "--method", "balanced,chain-hosts,mob", "--size", "2MiB", "--repeats",
                      "1", "-o", str(tmp_path / "mc"), *_ssh_args(sshd))
    assert run.returncode == 0, run.stderr
    meta, runs, receivers = read_multicasts(tmp_path / "mc")
    assert meta["launcher"] == "ssh" and runs["complete"].all()
    assert receivers["digest_ok"].all() and len(receivers) == 9
    assert not peer_pids({f"127.0.0.{150 + i}" for i in range(4)})


@pytest.mark.slow
def test_sigterm_keeps_finished_multicasts_and_resume_runs_the_rest(tmp_path: Path) -> None:
    import subprocess
    import sys

    gauge = cluster_gauge(tmp_path / "g.gauge.xml", [f"h{i:02d}" for i in range(3)],
                          clusters=3, mbit=12.0)   # two trees paced at 6 Mbit/s: 2 s each
    argv = [str(Path(sys.executable).parent / "tomography"), "multicast", "--local", "3",
            "--gauge", str(gauge), "--root", "h00", "--method", "balanced", "--size", "3MiB",
            "--pacing", "sleep",
            "--repeats", "3", "-o", str(tmp_path / "mc")]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    table = tmp_path / "mc" / "multicasts.csv"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (table.exists()
                                               and len(table.read_text().splitlines()) > 1):
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "the finished multicasts stay in" in err and err.count("--resume") == 1, err
    kept = len(pd.read_csv(table))
    assert 1 <= kept < 3
    again = subprocess.run(argv + ["--resume"], capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert f"after {kept} already on disk" in again.stdout
    _, runs, _ = read_multicasts(tmp_path / "mc")
    assert sorted(runs["run"]) == ["balanced-0", "balanced-1", "balanced-2"]
    assert runs["complete"].all()


@pytest.mark.slow
def test_a_dataset_of_one_cluster_has_nothing_to_plan_between(tmp_path: Path, capsys) -> None:
    assert main(["measure", "bittorrent", "--local", "3", "-n", "2", "--size", "1MiB",
                 "--upload-limit", "4MiB/s", "-o", str(tmp_path / "bt")]) == 0
    capsys.readouterr()
    code = main(["multicast", "--local", "3", "--dataset", str(tmp_path / "bt"),
                 "--bandwidth", "broadcasts", "--root", "h00", "--method", "balanced",
                 "-o", str(tmp_path / "mc")])
    err = capsys.readouterr().err
    assert code == 2
    errors = [line for line in err.splitlines() if line.startswith("tomography: error")]
    assert len(errors) == 1 and "nothing to plan between clusters" in errors[0], err
    assert not (tmp_path / "mc").exists()


def one_cluster_probes(path: Path, hosts: list[str]) -> Path:
    """A probe dataset of ``hosts`` where every pair has the same bandwidth: one cluster."""
    from tomography.model.dataset.incremental import MeasurementWriter

    w = MeasurementWriter(path, {"method": "iperf3", "launcher": "local"},
                          [(h, "127.0.0.1", "") for h in hosts], probes=True)
    for src in hosts:
        for dst in hosts:
            if src != dst:
                w.add_probe({"src": src, "dst": dst, "tool": "iperf3", "repeat": 0,
                             "bits_per_second": 9e8, "streams": 1, "concurrent": 1,
                             "duration_s": 1.0, "error": ""})
    return path


class _Launched(Exception):
    """Raised instead of starting agents: the argument checks were passed."""


def test_a_one_cluster_dataset_refuses_planners_and_lets_chain_hosts_and_bittorrent_run(
        tmp_path: Path, capsys, monkeypatch) -> None:
    import tomography.cli.multicast as cli

    data = one_cluster_probes(tmp_path / "probes", [f"h{i:02d}" for i in range(4)])
    common = ["multicast", "--local", "4", "--dataset", str(data), "--root", "h00",
              "-o", str(tmp_path / "mc")]
    for method in ("all", "balanced", "chain-clusters,chain-hosts"):
        assert main([*common, "--method", method]) == 2
        errors = [line for line in capsys.readouterr().err.splitlines()
                  if line.startswith("tomography: error")]
        assert len(errors) == 1 and "nothing to plan between clusters" in errors[0], errors
        assert "run --method chain-hosts,bittorrent" in errors[0]
    assert not (tmp_path / "mc").exists()

    def launched(*args, **kwargs):
        raise _Launched

    monkeypatch.setattr(cli, "open_launcher", launched)
    for method in ("chain-hosts,bittorrent", "chain-hosts", "bittorrent"):  # what it suggests
        with pytest.raises(_Launched):
            main([*common, "--method", method])
        assert "tomography: error" not in capsys.readouterr().err


@pytest.mark.slow
def test_bittorrent_alone_and_a_resume_with_another_plan(tmp_path: Path, capsys) -> None:
    hosts = [f"h{i:02d}" for i in range(6)]
    gauge = cluster_gauge(tmp_path / "g.gauge.xml", hosts, clusters=3)
    low = cluster_gauge(tmp_path / "low.gauge.xml", hosts, clusters=3, mbit=40.0)
    common = ["multicast", "--local", "6", "--root", "h00", "--size", "1MiB", "--repeats", "1"]
    assert main([*common, "--method", "bittorrent", "-o", str(tmp_path / "bt")]) == 0
    _, runs, receivers = read_multicasts(tmp_path / "bt")
    assert runs["method"].tolist() == ["bittorrent"] and runs["pacing"].tolist() == ["-"]
    assert (receivers["bytes"] == MiB).all()   # the payload, end-game doubles left out
    assert main([*common, "--gauge", str(gauge), "--method", "balanced,flat", "-o",
                 str(tmp_path / "mc")]) == 0
    _, runs, _ = read_multicasts(tmp_path / "mc")
    # balanced sends two trees, paced; flat one, as fast as TCP goes
    assert dict(zip(runs["method"], runs["pacing"])) == {"balanced": "kernel", "flat": "none"}
    assert dict(zip(runs["method"], runs["streams"])) == {"balanced": 2, "flat": 1}
    capsys.readouterr()
    code = main([*common, "--gauge", str(low), "--method", "balanced,flat", "--resume", "-o",
                 str(tmp_path / "mc")])
    err = capsys.readouterr().err
    assert code == 2 and "the plan of balanced differs from the dataset's" in err, err
    code = main([*common, "--gauge", str(gauge), "--method", "flat", "--resume", "-o",
                 str(tmp_path / "mc")])
    assert code == 2 and "another methods" in capsys.readouterr().err


@pytest.mark.slow
def test_a_leaf_that_hangs_with_its_data_in_its_buffers_is_found_and_killed(
        tmp_path: Path) -> None:
    hosts = local_hosts(3, first=230)   # addresses no other test's agents use: it stops one
    chain = Delivery("paced-chain", "h00", list(hosts["host"]), MiB // 2,
                     [Stream(0, 0, MiB // 2, 128 * 1024, {"h01": "h00", "h02": "h01"})])
    started = time.monotonic()
    run = _run_and_signal(hosts, chain, tmp_path / "mc", "127.0.0.232", signal.SIGSTOP,
                          time_limit=120)
    assert time.monotonic() - started < 40   # found by the watchdog, not the time limit
    result = run.results[0]
    done = {r["receiver"]: r["complete"] for r in result.receivers}
    assert done == {"h01": True, "h02": False}
    assert "hung" in " ".join(result.notes) or "dropped" in " ".join(result.notes)


def _two_trees(names: list[str], size: int, slow: float) -> Delivery:
    """FPFR's two trees over four hosts, the payload split evenly; the second paced at
    ``slow`` bytes/s (a tree TCP shortchanges)."""
    return Delivery("fpfr", "h00", names, size, [
        Stream(0, 0, size // 2, 0.0, {"h01": "h00", "h02": "h01", "h03": "h02"}),
        Stream(1, size // 2, size - size // 2, slow, {"h03": "h00", "h02": "h03",
                                                      "h01": "h00"})])


def test_unpaced_trees_take_the_chunks_as_their_receivers_confirm_them(tmp_path: Path) -> None:
    hosts = local_hosts(4, first=162)
    size = 4 * MiB + 5
    # split in advance, the slow tree's half would take 8 s at 256 KiB/s
    run = run_multicasts(hosts, [_two_trees(list(hosts["host"]), size, MiB / 4)],
                         tmp_path / "mc", repeats=1, pacing="sleep")
    result = run.results[0]
    assert result.complete, result.notes
    assert result.completion < 4
    _, _, receivers = read_multicasts(tmp_path / "mc")
    assert receivers["digest_ok"].all() and (receivers["bytes"] == size).all()
    streams = pd.read_csv(tmp_path / "mc" / "streams.csv").groupby("stream")["bytes"].max()
    assert streams[1] < size / 4 < size / 2 < streams[0]   # the slow tree carried less
    assert streams.sum() < 1.2 * size                      # few chunks sent twice


@pytest.mark.slow
def test_a_dead_receiver_of_dealt_trees_does_not_hold_back_the_others(tmp_path: Path) -> None:
    hosts = local_hosts(4, first=166)
    names = list(hosts["host"])
    trees = Delivery("fpfr", "h00", names, 16 * MiB, [
        Stream(0, 0, 8 * MiB, 2 * MiB, {"h01": "h00", "h02": "h00", "h03": "h02"}),
        Stream(1, 8 * MiB, 8 * MiB, 2 * MiB, {"h03": "h00", "h02": "h03", "h01": "h02"})])
    started = time.monotonic()
    run = _run_and_signal(hosts, trees, tmp_path / "mc", "127.0.0.167", signal.SIGKILL,
                          time_limit=60)
    assert time.monotonic() - started < 40   # neither the time limit nor a hang
    done = {r["receiver"]: r["complete"] for r in run.results[0].receivers}
    assert done == {"h01": False, "h02": True, "h03": True}
    assert "h01" in " ".join(run.results[0].notes)


@pytest.mark.slow
def test_the_table_says_what_fpfrs_prediction_assumes(tmp_path: Path) -> None:
    from tomography.cli.multicast import multicast_table

    from tomography.planning import Network, plan
    from tomography.planning.delivery import delivery_of_plan

    hosts = local_hosts(4, first=150)
    names = sorted(hosts["host"])
    net = Network(names, [10] * 4, [10] * 4,
                  [[0, 4, 1, 4], [4, 0, 4, 4], [1, 4, 0, 4], [4, 4, 4, 0]])
    fpfr = delivery_of_plan(plan(net, names[0], "fpfr"), net, size=MiB, unit_bytes=MiB / 4)
    assert len(fpfr.streams) > 1
    run_multicasts(hosts, [fpfr], tmp_path / "mc")
    table = multicast_table(tmp_path / "mc")
    assert f"fpfr: {len(fpfr.streams)} trees sent unpaced" in table, table
    assert "the chunks dealt to them as their receivers confirm them" in table
    from tomography.report.sections import _multicasts   # the report's section says it too

    assert f"fpfr: {len(fpfr.streams)} trees sent unpaced" in _multicasts(tmp_path / "mc", 20)


def test_every_method_delivers_every_byte(tmp_path: Path) -> None:
    from tomography.cli.multicast import ALL_METHODS

    hosts = [f"h{i:02d}" for i in range(6)]
    gauge = cluster_gauge(tmp_path / "g.gauge.xml", hosts, clusters=3)
    assert main(["multicast", "--local", "6", "--gauge", str(gauge), "--root", "h03",
                 "--size", "1MiB", "--repeats", "1", "--method", "all",
                 "-o", str(tmp_path / "mc")]) == 0
    _, runs, receivers = read_multicasts(tmp_path / "mc")
    assert sorted(runs["method"]) == sorted(ALL_METHODS)
    assert runs["complete"].all() and len(receivers) == 5 * len(ALL_METHODS)
    assert receivers["digest_ok"].all() and (receivers["bytes"] == MiB).all()
