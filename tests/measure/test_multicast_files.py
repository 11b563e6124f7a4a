"""Real files multicast: every receiver ends with the same files (bytes, modes), free space is
checked before the first byte, a killed receiver's pieces count on the next run."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import threading
from pathlib import Path

import pytest

from measure import testbed
from tomography.cli import main
from tomography.model.dataset.multicast import read_multicasts
from tomography.model.topology import read_topology

from .test_swarm_multicast import SLOW_MATE, _sources


def _tree(root: Path) -> Path:
    """A directory of two files, one executable, in a sub-directory."""
    (root / "data" / "bin").mkdir(parents=True)
    (root / "data" / "big.bin").write_bytes(random.Random(1).randbytes(3 * 2**20 + 17))
    run = root / "data" / "bin" / "run.sh"
    run.write_text("#!/bin/sh\necho ok\n")
    run.chmod(0o750)
    return root / "data"


def _same(a: Path, b: Path) -> None:
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    for rel in files:
        assert (a / rel).read_bytes() == (b / rel).read_bytes()
        assert (a / rel).stat().st_mode == (b / rel).stat().st_mode


def test_a_directory_reaches_every_receiver_by_tree_and_by_swarm(tmp_path: Path,
                                                                  capsys) -> None:
    source = _tree(tmp_path / "src")
    clusters = tmp_path / "clusters.csv"
    clusters.write_text("host,label\nh00,x\nh01,x\nh02,y\nh03,y\n")
    dest = tmp_path / "dest" / "{host}"
    assert main(["multicast", "--local", "4", "--clusters", str(clusters), "--root", "h00",
                 "--file", str(source), "--dest", str(dest), "--repeats", "1",
                 "-o", str(tmp_path / "mc")]) == 0
    out, err = capsys.readouterr()
    assert "bittorrent left out" in err and "data (2 files" in out
    meta, runs, receivers = read_multicasts(tmp_path / "mc")
    assert sorted(runs["method"]) == ["chain-hosts", "mob", "robber"] and runs["complete"].all()
    assert meta["params"]["file"]["name"] == "data" and len(meta["params"]["file"]["files"]) == 2
    assert (receivers["bytes"] == 3 * 2**20 + 17 + 18).all()
    for host in ("h01", "h02", "h03"):
        _same(source, tmp_path / "dest" / host / "data")
        assert not list((tmp_path / "dest" / host).glob(".*"))   # no staging file left


@pytest.mark.parametrize("argv,message", [
    (["--file", "{tmp}/nothing", "--dest", "/tmp/x"], "no such file or directory"),
    (["--file", "{tmp}/full", "--dest", "relative/dir"], "--dest takes an absolute path"),
    (["--dest", "/tmp/x"], "--dest goes with --file"),
    (["--file", "{tmp}/full"], "--file needs --dest"),
    (["--file", "{tmp}/empty", "--dest", "/tmp/x"], "nothing to send"),
    (["--file", "{tmp}/full", "--dest", "/tmp/x", "--method", "bittorrent"],
     "bittorrent sends its synthetic payload only"),
])
def test_files_that_cannot_be_sent_are_refused_in_one_line(tmp_path: Path, capsys,
                                                           argv: list[str],
                                                           message: str) -> None:
    (tmp_path / "empty").write_bytes(b"")
    (tmp_path / "full").write_bytes(b"x")
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    code = main(["multicast", "--local", "3", "--root", "h00", "-o", str(tmp_path / "mc"),
                 *argv])
    err = capsys.readouterr().err
    assert code == 2 and message in err, err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "mc").exists()


@pytest.mark.root
def test_a_receiver_without_room_fails_before_the_first_byte(as_root, tmp_path: Path,
                                                             capsys) -> None:
    source = _tree(tmp_path / "src")
    small = tmp_path / "small"
    small.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1M", "tmpfs", str(small)], check=True)
    try:
        code = main(["multicast", "--local", "3", "--root", "h00", "--method", "chain-hosts",
                     "--file", str(source), "--dest", f"{small}/{{host}}", "--repeats", "1",
                     "-o", str(tmp_path / "mc")])
        left = [p for p in small.rglob("*") if p.is_file() and p.stat().st_blocks]
    finally:
        subprocess.run(["umount", str(small)], check=True)
    assert code == 0
    _, runs, receivers = read_multicasts(tmp_path / "mc")
    note = runs["note"].iloc[0]
    assert not runs["complete"].iloc[0] and "not started" in note and "bytes free" in note
    assert (receivers["bytes"] == 0).all() and not left


@pytest.mark.root
@pytest.mark.slow
def test_a_killed_receiver_keeps_its_pieces_for_the_next_run(as_root, tmp_path: Path,
                                                              capsys) -> None:
    from .test_multicast import _kill_when_receiving

    source = tmp_path / "src" / "payload.bin"
    source.parent.mkdir()
    source.write_bytes(random.Random(2).randbytes(4 * 2**20))
    path = tmp_path / "slow-mate.yaml"
    path.write_text(SLOW_MATE)
    name = f"sf{random.randrange(10**4):04d}"
    up = testbed.up(read_topology(path), name=name)
    stop = threading.Event()
    common = ["multicast", "--testbed", str(path), "--name", name, "--clusters", "labels:1",
              "--root", "a-00", "--method", "mob", "--file", str(source), "--dest",
              str(tmp_path / "dest" / "{host}"), "--repeats", "1", "--time-limit", "60s"]
    killer = threading.Thread(target=_kill_when_receiving,
                              args=(up.addresses["b-01"], signal.SIGKILL,
                                    tmp_path / "mc1" / "meta.json", stop))
    try:
        killer.start()
        assert main([*common, "-o", str(tmp_path / "mc1")]) == 0
        stop.set()
        killer.join()
        part = tmp_path / "dest" / "b-01" / ".payload.bin.part"
        assert part.exists()   # what it had got is kept
        assert main([*common, "-o", str(tmp_path / "mc2")]) == 0
    finally:
        stop.set()
        killer.join()
        testbed.down(name)
    capsys.readouterr()
    _, first, _ = read_multicasts(tmp_path / "mc1")
    _, second, receivers = read_multicasts(tmp_path / "mc2")
    assert not first["complete"].iloc[0] and second["complete"].iloc[0]
    row = receivers.set_index("receiver").loc["b-01"]
    fetched = sum(_sources(row["parents"]).values())
    assert 0 < fetched < 4 * 2**20   # only what it lacked
    assert (tmp_path / "dest" / "b-01" / "payload.bin").read_bytes() == source.read_bytes()
    assert not part.exists() and os.stat(tmp_path / "dest" / "b-01" / "payload.bin")


def test_a_directory_reaches_every_receiver_by_dealt_trees(tmp_path: Path) -> None:
    from .test_multicast import cluster_gauge

    source = _tree(tmp_path / "src")
    gauge = cluster_gauge(tmp_path / "g.gauge.xml", [f"h{i:02d}" for i in range(4)], clusters=4)
    assert main(["multicast", "--local", "4", "--gauge", str(gauge), "--root", "h00",
                 "--method", "fpfr", "--file", str(source), "--dest",
                 str(tmp_path / "dest" / "{host}"), "--repeats", "1",
                 "-o", str(tmp_path / "mc")]) == 0
    meta, runs, _ = read_multicasts(tmp_path / "mc")
    assert len(meta["plans"]["fpfr"]["streams"]) > 1 and runs["complete"].all()
    for host in ("h01", "h02", "h03"):
        _same(source, tmp_path / "dest" / host / "data")
