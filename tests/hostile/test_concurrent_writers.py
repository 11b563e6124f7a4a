"""Class D: one writer per dataset, signals, a full disk, file permissions.

Two writers on one dataset directory, in every combination of a new run,
``--resume`` and ``--force``: exactly one proceeds, the other is refused at
once naming the holder, and the dataset reads back whole.  The first writer is
held still (SIGSTOP) once its lock file names it, so that the overlap does not
depend on timing; it is let go once the second writers have answered.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import shutil
import sys
import time
from pathlib import Path

import pytest

from tests.hostile.common import ROOT, TOMOGRAPHY
from tomography.model.dataset import read_measurement
from tomography.model.dataset.lock import LOCK_NAME, DatasetLock, lock_holder
from tomography.model.errors import DatasetError

MODES = {"new": [], "resume": ["--resume"], "force": ["--force"]}

COMMANDS = {
    "simulate": (["simulate", "bordeaux-2x2", "--size", "256KiB", "-n", "2"], "iterations"),
    "bittorrent": (["measure", "bittorrent", "--local", "3", "--size", "256KiB", "-n", "1"],
                   "iterations"),
    "iperf3": (["measure", "iperf3", "--local", "3", "--duration", "1", "--one-way"], "probes"),
}


def _start(argv: list[str], **kw) -> subprocess.Popen:
    return subprocess.Popen([*TOMOGRAPHY, *argv], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, **kw)


def _holder_pid(path: Path, proc: subprocess.Popen, timeout: float = 60.0) -> int:
    """Wait until the lock file of ``path`` names ``proc`` (it holds the lock)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        holder = lock_holder(path)
        if holder and holder.get("pid") == proc.pid:
            return proc.pid
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError(f"{path}: no lock within {timeout} s")


def _size(path: Path, what: str) -> int:
    m = read_measurement(path)
    return len(m.iteration_ids) if what == "iterations" else len(m.probes)


@pytest.mark.slow
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_two_writers_one_proceeds(command, tmp_path):
    """First writer new, then --resume, then --force; each time the three kinds of second
    writer are refused naming it; the dataset reads back whole after each."""
    if command == "iperf3" and shutil.which("iperf3") is None:
        pytest.skip("iperf3 is not installed")
    argv, what = COMMANDS[command]
    out = tmp_path / "run"
    sizes = []
    for first in ("new", "resume", "force"):
        extra = ["-n", "2"] if first == "resume" and what == "iterations" else []
        a = _start([*argv, *extra, "-o", str(out), *MODES[first]])
        pid = _holder_pid(out, a)
        os.kill(pid, signal.SIGSTOP)                 # holds its lock, writes nothing more
        try:
            seconds = {mode: _start([*argv, "-o", str(out), *flags])
                       for mode, flags in MODES.items()}
            for mode, b in seconds.items():
                _, err = b.communicate(timeout=60)
                lines = err.decode().strip().splitlines()
                assert b.returncode == 2, (first, mode, err)
                assert len(lines) == 1 and "Traceback" not in err.decode(), (first, mode, err)
                assert "another writer has this dataset" in lines[0], lines
                assert f"process {pid} " in lines[0] and "tomography" in lines[0], lines
        finally:
            os.kill(pid, signal.SIGCONT)
        _, err = a.communicate(timeout=120)
        assert a.returncode == 0, (first, err.decode())
        assert not (out / LOCK_NAME).exists()
        sizes.append(_size(out, what))
    if what == "iterations":
        # new: 1 (2 for simulate), resume to -n 2: 2, force: a new dataset of the first size
        assert sizes[1] == 2 and sizes[2] == sizes[0], sizes
    else:
        assert sizes[0] == sizes[1] == sizes[2] == 3, sizes    # 3 one-way pairs, not doubled


def test_lock_refuses_other_process_and_dies_with_it(tmp_path):
    """A lock held by another process refuses at once naming it; killed (-9), it is gone."""
    out = tmp_path / "d"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from tomography.model.dataset.lock import "
         "DatasetLock; held = DatasetLock(sys.argv[1], command='holder here').acquire(); "
         "print('held', flush=True); time.sleep(60)", str(out)],
        cwd=ROOT, stdout=subprocess.PIPE)
    try:
        assert holder.stdout.readline().strip() == b"held"
        start = time.monotonic()
        with pytest.raises(DatasetError, match=rf"process {holder.pid} \(holder here\), "
                                               r"started \d{4}-"):
            DatasetLock(out).acquire()
        assert time.monotonic() - start < 2
    finally:
        holder.kill()
        holder.wait()
    with DatasetLock(out) as lock:                 # the kernel let it go with the process
        assert lock.held and lock_holder(out)["pid"] == os.getpid()
        with DatasetLock(out):                     # re-entrant within one process
            pass
        assert (out / LOCK_NAME).exists()
    assert not (out / LOCK_NAME).exists()


def test_readers_ignore_the_lock_file(tmp_path):
    """A dataset being written (its .lock there) reads as any other."""
    from tomography.cli import main
    from tomography.model.dataset import write_measurement
    from tomography.model.synthetic import planted_partition

    write_measurement(planted_partition(8, 2, iterations=2, seed=0), tmp_path / "d")
    with DatasetLock(tmp_path / "d"):
        assert len(read_measurement(tmp_path / "d").iteration_ids) == 2
        assert main(["info", str(tmp_path / "d")]) == 0


def test_synthetic_into_a_locked_dataset_is_refused(tmp_path):
    from tomography.cli import main

    out = tmp_path / "s"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from tomography.model.dataset.lock import "
         "DatasetLock; held = DatasetLock(sys.argv[1]).acquire(); print('held', flush=True); "
         "time.sleep(60)", str(out)], cwd=ROOT, stdout=subprocess.PIPE)
    try:
        assert holder.stdout.readline().strip() == b"held"
        assert main(["synthetic", "-o", str(out), "--force"]) == 2
        assert not (out / "meta.json").exists()
    finally:
        holder.kill()
        holder.wait()


# --- signals -------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_background_job_stops_on_signal(signum, tmp_path):
    """Started as ``cmd &`` from a script (SIGINT ignored), a run still stops on SIGINT or
    SIGTERM, keeps its finished iterations and says how to resume."""
    out = tmp_path / "run"

    def background() -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    proc = _start(["simulate", "bordeaux-64", "--size", "4MiB", "-n", "50", "-o", str(out)],
                  preexec_fn=background)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        rows = (out / "iterations.csv").read_text().splitlines() \
            if (out / "iterations.csv").exists() else []
        if len(rows) >= 2:
            break
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.1)
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err.decode()
    assert "--resume" in err.decode() and "Traceback" not in err.decode()
    assert len(read_measurement(out).iteration_ids) >= 1
    assert not (out / LOCK_NAME).exists()


# --- a full disk ---------------------------------------------------------------------------

def _fill(mnt: Path) -> None:
    """Fill the file system of ``mnt`` up (a file ``filler``)."""
    try:
        with open(mnt / "filler", "wb") as fh:
            while True:
                fh.write(b"\0" * 4096)
                fh.flush()
    except OSError:
        pass


@pytest.fixture
def full_disk(tmp_path):
    """A 1 MiB tmpfs mounted in tmp_path, filled up (root)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)]).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        _fill(mnt)
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)])


@pytest.mark.root
@pytest.mark.parametrize("argv", [["simulate", "bordeaux-2x2", "--size", "256KiB", "-n", "1"],
                                  ["synthetic"]])
def test_full_disk_leaves_nothing(argv, full_disk):
    """No space at the start: one line naming a file of the dataset, nothing left behind."""
    from tests.hostile.common import refused

    out = full_disk / "run"
    refused([*argv, "-o", out], says=[str(out), "No space left on device"], watch=[full_disk])
    assert not out.exists()
    (full_disk / "filler").unlink()                 # room again: the same command runs
    done = subprocess.run([*TOMOGRAPHY, *argv, "-o", str(out)], cwd=ROOT, capture_output=True)
    assert done.returncode == 0, done.stderr.decode()
    assert read_measurement(out).n_hosts >= 2


@pytest.mark.root
@pytest.mark.slow
def test_full_disk_resume_over_a_started_dataset(full_disk):
    """The disk fills during a run: it stops naming the file it cannot write, keeps what it
    wrote, and ``--resume`` continues once there is room."""
    out = full_disk / "run"
    sim = [*TOMOGRAPHY, "simulate", "bordeaux-2x2", "--size", "256KiB", "-o", str(out)]
    (full_disk / "filler").unlink()
    done = subprocess.run([*sim, "-n", "1"], cwd=ROOT, capture_output=True)
    assert done.returncode == 0, done.stderr.decode()
    _fill(full_disk)              # the files' last pages still take a few rows, not 20 runs'
    done = subprocess.run([*sim, "-n", "20", "--resume"], cwd=ROOT, capture_output=True)
    err = done.stderr.decode().strip().splitlines()[-1]
    assert done.returncode == 2 and str(out) in err and "--resume" in err, err
    assert "No space left on device" in err, err
    kept = len(read_measurement(out).iteration_ids)
    assert 1 <= kept < 20
    (full_disk / "filler").unlink()
    done = subprocess.run([*sim, "-n", "20", "--resume"], cwd=ROOT, capture_output=True)
    assert done.returncode == 0, done.stderr.decode()
    assert list(read_measurement(out).iteration_ids) == list(range(20))


def test_failed_start_removes_what_it_wrote(tmp_path, monkeypatch):
    """meta.json failing to be written (injected ENOSPC) leaves no half dataset, and over an
    old dataset (--force) no old meta.json naming the new files."""
    import errno

    from tomography.model.dataset import MeasurementWriter, incremental, lock

    real = lock.write_atomic

    def full(path, text):
        if Path(path).name == "meta.json":
            raise DatasetError(f"cannot write ({os.strerror(errno.ENOSPC)})", path=path)
        return real(path, text)

    hosts = [("a", "", ""), ("b", "", "")]
    out = tmp_path / "d"
    MeasurementWriter(out, {"method": "synthetic"}, hosts).close()
    monkeypatch.setattr(incremental, "write_atomic", full)
    for target, overwrite in ((tmp_path / "new", False), (out, True)):
        with pytest.raises(DatasetError, match="meta.json.*No space left"):
            MeasurementWriter(target, {"method": "synthetic"}, hosts, overwrite=overwrite)
        assert not target.exists() or sorted(p.name for p in target.iterdir()) == []


# --- permissions ---------------------------------------------------------------------------

def _modes(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_mode & 0o777
            for p in [root, *root.rglob("*")]}


def test_permissive_umask_gives_no_world_writable_dataset(tmp_path):
    """Under umask 000 a simulated dataset is 0755/0644, nothing group- or world-writable."""
    out = tmp_path / "sim"
    done = subprocess.run([*TOMOGRAPHY, "simulate", "bordeaux-2x2", "--size", "256KiB", "-n",
                           "1", "-o", str(out)], cwd=ROOT, capture_output=True,
                          preexec_fn=lambda: os.umask(0))
    assert done.returncode == 0, done.stderr.decode()
    modes = _modes(out)
    assert modes.pop(".") == 0o755 and set(modes.values()) == {0o644}, modes


def test_permissive_umask_write_measurement(tmp_path):
    from tomography.model.dataset import write_measurement
    from tomography.model.synthetic import planted_partition

    old = os.umask(0)
    try:
        write_measurement(planted_partition(8, 2, iterations=1, seed=0), tmp_path / "w")
    finally:
        os.umask(old)
    modes = _modes(tmp_path / "w")
    assert modes.pop(".") == 0o755 and set(modes.values()) == {0o644}, modes


def test_testbed_state_is_owner_only(tmp_path, monkeypatch):
    from measure.testbed import names
    from measure.testbed.state import write_state

    monkeypatch.setattr(names, "STATE_DIR", tmp_path / "run" / "tomography")
    old = os.umask(0)
    try:
        write_state("demo", {"phase": "building"})
    finally:
        os.umask(old)
    assert names.STATE_DIR.stat().st_mode & 0o777 == 0o700
    assert (names.STATE_DIR / "testbed-demo.json").stat().st_mode & 0o777 == 0o600
    assert json.loads((names.STATE_DIR / "testbed-demo.json").read_text())["phase"] == "building"


def test_testbed_claim_lock_is_owner_only(tmp_path, monkeypatch):
    from measure.testbed import claims, names

    monkeypatch.setattr(names, "STATE_DIR", tmp_path / "run" / "tomography")
    old = os.umask(0)
    try:
        with claims.claim("demo"):
            assert names.STATE_DIR.stat().st_mode & 0o777 == 0o700
            assert claims.lock_path("demo").stat().st_mode & 0o777 == 0o600
    finally:
        os.umask(old)


def test_an_import_s_raw_files_follow_no_permissive_umask(tmp_path):
    from tomography.model.dataset.probe_import import write_probe_import
    import pandas as pd

    rows = pd.DataFrame({"src": ["10.0.0.1"], "dst": ["10.0.0.2"], "tool": ["iperf3"],
                         "protocol": ["tcp"], "bits_per_second": [9.4e8], "streams": [1],
                         "concurrent": [1], "repeat": [0], "error": [""]})
    old = os.umask(0)
    try:
        write_probe_import(rows, tmp_path / "d", "iperf3-json", raw=["{}"])
    finally:
        os.umask(old)
    raw = tmp_path / "d" / "raw"
    assert raw.stat().st_mode & 0o777 == 0o755
    assert all(f.stat().st_mode & 0o777 == 0o644 for f in raw.iterdir())
