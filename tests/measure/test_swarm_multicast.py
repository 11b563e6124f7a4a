"""MOB and Robber multicasts that run: each piece enters each cluster once, Robber's idle hosts
take over a slow host's share, a dead cluster mate loses nothing."""

from __future__ import annotations

import random
from pathlib import Path

import pandas as pd
import pytest

from measure import testbed
from measure.coordinator import local_hosts
from measure.multicast import run_multicasts
from tomography.cli import main
from tomography.model.dataset.multicast import read_multicasts
from tomography.model.topology import read_topology
from tomography.planning.swarms import swarm_plan

MiB = 2**20


def _sources(parents: str) -> dict[str, int]:
    """``HOST:BYTES ...`` of a swarm's receiver row."""
    return {h: int(n) for h, _, n in (x.rpartition(":") for x in str(parents).split())}


def _foreign(receivers: pd.DataFrame, cluster_of: dict[str, str]) -> dict[str, int]:
    """Bytes each receiver got from hosts of other clusters."""
    return {r.receiver: sum(n for h, n in _sources(r.parents).items()
                            if cluster_of[h] != cluster_of[r.receiver])
            for r in receivers.itertuples()}


def test_mob_and_robber_bring_each_piece_into_each_cluster_once(tmp_path: Path) -> None:
    hosts = local_hosts(9, first=160)
    names = list(hosts["host"])
    labels = {h: "ABC"[i // 3] for i, h in enumerate(names)}
    size = 6 * MiB + 5
    plans = [swarm_plan(labels, "h04", size, method=m, seed=2) for m in ("mob", "robber")]
    run = run_multicasts(hosts, [], tmp_path / "mc", swarms=plans, repeats=1, seed=4,
                         time_limit=60)
    assert [r.complete for r in run.results] == [True, True], [r.notes for r in run.results]
    meta, runs, receivers = read_multicasts(tmp_path / "mc")
    assert receivers["digest_ok"].all() and (receivers["bytes"] == size).all()
    assert meta["plans"]["mob"]["clusters"] == {"A": names[:3], "B": names[3:6], "C": names[6:]}
    assert runs["streams"].eq(0).all() and runs["achieved_Bps"].gt(0).all()
    for method, plan in zip(("mob", "robber"), plans):
        rows = receivers[receivers["method"] == method]
        foreign = _foreign(rows, labels)
        for cluster in "AC":   # the clusters without the root: one copy each, no more
            assert sum(n for h, n in foreign.items() if labels[h] == cluster) == size
        if method == "mob":   # each host fetched exactly its share from outside
            for h in names[:3] + names[6:]:
                share = plan.share(h)
                assert foreign[h] == sum(min(plan.piece, size - i * plan.piece) for i in share)


def test_the_cli_takes_clusters_from_a_file_and_prints_the_table(tmp_path: Path,
                                                                capsys) -> None:
    clusters = tmp_path / "clusters.csv"
    clusters.write_text("host,label\nh00,x\nh01,x\nh02,y\nh03,y\n")
    out = tmp_path / "mc"
    assert main(["multicast", "--local", "4", "--clusters", str(clusters), "--root", "h02",
                 "--method", "all", "--size", "1MiB", "--repeats", "1", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    for method in ("mob", "robber", "chain-hosts", "bittorrent"):
        assert any(line.split()[:1] == [method] and line.split()[-1] == "1/1"
                   for line in printed.splitlines()), printed
    meta, _, _ = read_multicasts(out)
    assert meta["plan_source"] == {"clusters": str(clusters)}


@pytest.mark.parametrize("argv,message", [
    (["--method", "mob"], "needs the hosts' clusters"),
    (["--method", "robber", "--clusters", "labels"], "have no label"),
    (["--method", "mob", "--clusters", "labels:0"], "labels:D with D >= 1"),
    (["--method", "mob", "--clusters", "nowhere.yaml"], "--clusters:"),
    (["--method", "mob", "--clusters", "{short}"], "are in no cluster"),
])
def test_missing_or_partial_clusters_are_refused_in_one_line(tmp_path: Path, capsys,
                                                             argv: list[str],
                                                             message: str) -> None:
    short = tmp_path / "short.csv"
    short.write_text("host,label\nh00,x\nh01,y\n")
    argv = [a.replace("{short}", str(short)) for a in argv]
    code = main(["multicast", "--local", "3", "--root", "h00", "--size", "1MiB",
                 "-o", str(tmp_path / "mc"), *argv])
    err = capsys.readouterr().err
    assert code == 2 and message in err, err
    assert len(err.strip().splitlines()) == 1


SLOW_MATE = """\
name: slow-mate
description: a root site A; site B, one of whose hosts (s-00) reaches A only over 2 Mbit/s
host_defaults: {nic: 100Mbit/s, latency: 50us}
routers: [A, B, S]
links:
- {between: [A, B], capacity: 40Mbit/s, latency: 1ms}
- {between: [A, S], capacity: 2Mbit/s, latency: 1ms}
- {between: [B, S], capacity: 100Mbit/s, latency: 100us}
clusters:
- {name: a, router: A, hosts: 2, label: A}
- {name: b, router: B, hosts: 3, label: B}
- {name: s, router: S, hosts: 1, label: B}
"""


@pytest.mark.root
@pytest.mark.slow
def test_robbers_idle_hosts_take_over_the_share_of_a_host_with_a_slow_path(
        as_root, tmp_path: Path, capsys) -> None:
    path = tmp_path / "slow-mate.yaml"
    path.write_text(SLOW_MATE)
    name = f"sw{random.randrange(10**4):04d}"
    testbed.up(read_topology(path), name=name)
    out = tmp_path / "mc"
    try:
        code = main(["multicast", "--testbed", str(path), "--name", name, "--clusters",
                     "labels", "--root", "a-00", "--method", "mob,robber", "--size", "4MiB",
                     "--repeats", "1", "--time-limit", "120s", "-o", str(out)])
    finally:
        testbed.down(name)
    assert code == 0, capsys.readouterr()
    meta, runs, receivers = read_multicasts(out)
    assert runs["complete"].all(), runs["note"].tolist()
    labels = {h: ("A" if h.startswith("a") else "B") for h in receivers["receiver"]} | {
        "a-00": "A"}
    share = 4 * MiB // 4   # four hosts in B
    by = {m: _foreign(receivers[receivers["method"] == m], labels) for m in ("mob", "robber")}
    for method in by:   # B gets each piece once from A
        assert sum(n for h, n in by[method].items() if labels[h] == "B") == 4 * MiB
    assert by["mob"]["s-00"] == share          # MOB: its share, over 2 Mbit/s
    assert by["robber"]["s-00"] < share / 2    # Robber: its cluster mates stole most of it
    achieved = runs.set_index("method")["achieved_Bps"]
    assert achieved["robber"] > 1.5 * achieved["mob"]


@pytest.mark.root
@pytest.mark.slow
def test_a_cluster_mate_that_dies_loses_nothing_for_the_others(as_root, tmp_path: Path,
                                                                 capsys) -> None:
    import signal
    import threading

    from .test_multicast import _kill_when_receiving

    path = tmp_path / "slow-mate.yaml"
    path.write_text(SLOW_MATE)
    name = f"sw{random.randrange(10**4):04d}"
    up = testbed.up(read_topology(path), name=name)
    stop = threading.Event()
    killer = threading.Thread(target=_kill_when_receiving,
                              args=(up.addresses["b-01"], signal.SIGKILL,
                                    tmp_path / "mc" / "meta.json", stop))
    try:
        killer.start()
        code = main(["multicast", "--testbed", str(path), "--name", name, "--clusters",
                     "labels:1", "--root", "a-00", "--method", "mob", "--size", "4MiB",
                     "--repeats", "1", "--time-limit", "60s", "-o", str(tmp_path / "mc")])
    finally:
        stop.set()
        killer.join()
        testbed.down(name)
    assert code == 0, capsys.readouterr()
    _, runs, receivers = read_multicasts(tmp_path / "mc")
    done = receivers.set_index("receiver")["complete"]
    assert not done["b-01"] and done.drop("b-01").all()   # its mates fetched its share
    assert runs["completion_s"].iloc[0] < 40 and not runs["complete"].iloc[0]
    assert "b-01" in runs["note"].iloc[0]


def test_a_measured_datasets_clusters_need_no_figures(tmp_path: Path, capsys) -> None:
    from tomography.model.dataset.incremental import MeasurementWriter

    hosts = [f"h{i:02d}" for i in range(4)]
    w = MeasurementWriter(tmp_path / "probes", {"method": "iperf3", "launcher": "local"},
                          [(h, "127.0.0.1", "") for h in hosts], probes=True)
    for src in hosts:   # {h00, h01} and {h02, h03}: fast inside, slow across
        for dst in hosts:
            if src != dst:
                fast = (src < "h02") == (dst < "h02")
                w.add_probe({"src": src, "dst": dst, "tool": "iperf3", "repeat": 0,
                             "bits_per_second": 9e8 if fast else 5e7, "streams": 1,
                             "concurrent": 1, "duration_s": 1.0, "error": ""})
    w.close()
    out = tmp_path / "mc"
    assert main(["multicast", "--local", "4", "--dataset", str(tmp_path / "probes"),
                 "--root", "h01", "--method", "robber", "--size", "1MiB", "--repeats", "1",
                 "-o", str(out)]) == 0
    meta, runs, _ = read_multicasts(out)
    assert runs["complete"].all()
    assert sorted(meta["plans"]["robber"]["clusters"].values()) == [["h00", "h01"],
                                                                    ["h02", "h03"]]
