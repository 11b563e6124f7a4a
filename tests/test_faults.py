"""Faults, and nothing left behind: every command on success, on error, on Ctrl-C, after
SIGKILL; a hung peer, a full disk, two measurements at once.

Each command runs in a subprocess with a temporary directory of its own
(``TMPDIR``) and a marker in its environment, which every process it starts
inherits.  Afterwards its temporary directory must be empty, no process may
carry the marker, ``/dev/shm`` must hold nothing new of the toolkit's, and
no network namespace may have appeared.  A coordinator killed with SIGKILL
cannot clean up: its peers must still end, and the next run must remove what
it left (the peers' directories in ``/dev/shm``).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

# every test runs the CLI in subprocesses; most run networks of real peers
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
TOMOGRAPHY = str(Path(sys.executable).parent / "tomography")
MARK = "TOMOGRAPHY_RESIDUE_TEST"
SHM = Path("/dev/shm")
NETNS = Path("/run/netns")
ADDRESSES = [f"127.0.0.{i}" for i in (221, 222, 223)]   # this module's own peers
OTHERS = [f"127.0.0.{i}" for i in (224, 225, 226)]      # a second run's, at the same time


def _marked(mark: str) -> list[str]:
    """``pid command`` of every live process whose environment carries ``mark``."""
    needle = f"{MARK}={mark}".encode()
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if needle in (proc / "environ").read_bytes().split(b"\0"):
                found.append(f"{proc.name} {(proc / 'cmdline').read_bytes()[:120]!r}")
        except OSError:
            continue   # gone meanwhile, or not ours to read
    return found


def _ours_in_shm() -> set[str]:
    """The toolkit's entries in /dev/shm that belong to this module's peer addresses."""
    if not SHM.is_dir():
        return set()
    return {p.name for p in SHM.iterdir()
            if p.name.startswith("tomography-") and any(f"-{a}-" in p.name for a in ADDRESSES)}


def _namespaces() -> set[str]:
    return set(os.listdir(NETNS)) if NETNS.is_dir() else set()


class Command:
    """One command run under watch, in its own temporary directory."""

    def __init__(self, tmp: Path, name: str) -> None:
        self.mark = uuid.uuid4().hex
        self.tmpdir = tmp / f"tmp-{name}"
        self.tmpdir.mkdir()
        self.env = {**os.environ, MARK: self.mark, "TMPDIR": str(self.tmpdir),
                    "PYTHONUNBUFFERED": "1"}
        self.shm, self.netns = _ours_in_shm(), _namespaces()

    def start(self, *argv: object) -> subprocess.Popen:
        return subprocess.Popen([TOMOGRAPHY, *map(str, argv)], env=self.env, cwd=ROOT,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def run(self, *argv: object, timeout: float = 240) -> subprocess.CompletedProcess:
        return subprocess.run([TOMOGRAPHY, *map(str, argv)], env=self.env, cwd=ROOT,
                              capture_output=True, text=True, timeout=timeout)

    def left(self, *, grace: float = 15.0) -> list[str]:
        """What the command left behind (processes get ``grace`` seconds to end)."""
        deadline = time.monotonic() + grace
        while _marked(self.mark) and time.monotonic() < deadline:
            time.sleep(0.2)
        found = [f"process {p}" for p in _marked(self.mark)]
        found += [f"temporary file {p.relative_to(self.tmpdir)}"
                  for p in sorted(self.tmpdir.rglob("*"))]
        found += [f"/dev/shm/{n}" for n in sorted(_ours_in_shm() - self.shm)]
        found += [f"network namespace {n}" for n in sorted(_namespaces() - self.netns)]
        return found


def _hosts_file(tmp: Path, addresses: list[str] = ADDRESSES) -> Path:
    path = tmp / f"hosts-{addresses[0]}.csv"
    path.write_text("host,address\n" + "".join(f"h{i},{a}\n" for i, a in enumerate(addresses)))
    return path


def _iterations_done(dataset: Path) -> int:
    path = dataset / "iterations.csv"
    return max(0, len(path.read_text().splitlines()) - 1) if path.exists() else 0


def _wait_for_iteration(proc: subprocess.Popen, dataset: Path, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while _iterations_done(dataset) < 1:
        assert proc.poll() is None, proc.communicate()[1]
        assert time.monotonic() < deadline, "no iteration finished in time"
        time.sleep(0.1)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("residue") / "syn"
    done = subprocess.run([TOMOGRAPHY, "synthetic", "-o", out, "--branching", "2,2",
                           "--hosts-per-group", "3", "--iterations", "3", "--seed", "1"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return out


ANALYSES = [
    ("info", ["info", "{d}"]),
    ("cluster", ["cluster", "{d}"]),
    ("hierarchy", ["hierarchy", "{d}"]),
    ("tree", ["tree", "{d}", "--jobs", "2"]),
    ("evaluate", ["evaluate", "{d}"]),
    ("export", ["export", "{d}", "-f", "json", "-o", "{o}/topology.json"]),
    ("plot", ["plot", "{d}", "-k", "hasse", "-o", "{o}/hasse.png"]),
    ("truth", ["truth", "N1"]),
    ("synthetic", ["synthetic", "-o", "{o}/syn", "--iterations", "2", "--seed", "2"]),
    ("simulate", ["simulate", "tree-5", "-n", "1", "--size", "1MiB", "-o", "{o}/sim"]),
    ("plan", ["plan", "datasets/gauges/gridlab-8.gauge.xml", "--root", "fs0"]),
]


@pytest.mark.parametrize("name,argv", ANALYSES, ids=[a[0] for a in ANALYSES])
def test_command_leaves_nothing(name: str, argv: list[str], dataset: Path,
                                tmp_path: Path) -> None:
    watch = Command(tmp_path, name)
    args = [a.format(d=dataset, o=tmp_path) for a in argv]
    done = watch.run(*args)
    assert done.returncode == 0, done.stderr
    assert watch.left() == []
    # the same command on a dataset that is not there: one line, exit 2, nothing left
    broken = [tmp_path / "missing" if a == str(dataset) else a for a in args]
    if broken != args:
        failed = watch.run(*broken)
        assert failed.returncode == 2 and "Traceback" not in failed.stderr, failed.stderr
        assert watch.left() == []


def _measure_argv(tmp: Path, out: Path, iterations: int, size: str = "1MiB",
                  addresses: list[str] = ADDRESSES) -> list[object]:
    return ["measure", "bittorrent", "--hosts", _hosts_file(tmp, addresses), "-n", iterations,
            "--size", size, "-o", out]


def test_measurement_leaves_nothing(tmp_path: Path) -> None:
    watch = Command(tmp_path, "measure")
    out = tmp_path / "run"
    done = watch.run(*_measure_argv(tmp_path, out, 1))
    assert done.returncode == 0, done.stderr
    assert watch.left() == []
    refused = watch.run(*_measure_argv(tmp_path, out, 1))   # exists: refused, nothing started
    assert refused.returncode == 2 and "--resume" in refused.stderr
    assert watch.left() == []


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_interrupted_measurement_leaves_nothing(how: signal.Signals, tmp_path: Path) -> None:
    watch = Command(tmp_path, how.name)
    out = tmp_path / "run"
    proc = watch.start(*_measure_argv(tmp_path, out, 50, "4MiB"))
    _wait_for_iteration(proc, out)
    assert len(_marked(watch.mark)) > len(ADDRESSES)   # the watch sees coordinator and peers
    assert len(_ours_in_shm() - watch.shm) == len(ADDRESSES)  # and the peers' directories
    proc.send_signal(how)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode in (130, 143) and "--resume" in err, err
    assert watch.left() == []
    assert _iterations_done(out) >= 1


def test_killed_coordinator_is_cleaned_by_the_next_run(tmp_path: Path) -> None:
    watch = Command(tmp_path, "SIGKILL")
    out = tmp_path / "run"
    proc = watch.start(*_measure_argv(tmp_path, out, 50, "4MiB"))
    _wait_for_iteration(proc, out)
    proc.kill()
    proc.communicate(timeout=60)
    kept = _iterations_done(out)
    # the peers lose their coordinator and end by themselves
    assert [p for p in watch.left(grace=30) if p.startswith("process")] == []
    done = watch.run(*_measure_argv(tmp_path, out, kept + 1, "4MiB"), "--resume")
    assert done.returncode == 0, done.stderr
    assert _iterations_done(out) == kept + 1     # nothing finished was lost
    assert watch.left() == []                    # the dead peers' /dev/shm directories too


def test_probe_mesh_leaves_nothing(tmp_path: Path) -> None:
    if shutil.which("iperf3") is None:
        pytest.skip("iperf3 is not installed (make test installs it)")
    watch = Command(tmp_path, "iperf3")
    done = watch.run("measure", "iperf3", "--hosts", _hosts_file(tmp_path), "--duration", "1",
                     "-o", tmp_path / "mesh")
    assert done.returncode == 0, done.stderr
    assert watch.left() == []


def _peers(mark: str) -> list[int]:
    """The peer processes of a watched run."""
    return [int(p.split()[0]) for p in _marked(mark) if "measure.agent" in p]


def test_hung_peer_makes_its_iteration_incomplete(tmp_path: Path) -> None:
    watch = Command(tmp_path, "hung")
    out = tmp_path / "run"
    proc = watch.start(*_measure_argv(tmp_path, out, 3, "4MiB"), "--time-limit", "3s")
    _wait_for_iteration(proc, out)
    peers = _peers(watch.mark)
    assert len(peers) == len(ADDRESSES)
    os.kill(peers[-1], signal.SIGSTOP)     # alive, but answers nothing
    stdout, stderr = proc.communicate(timeout=180)
    assert proc.returncode == 0, stderr
    assert "did not answer" in stdout and "incomplete" in stdout
    m = subprocess.run([TOMOGRAPHY, "info", out, "--format", "json"], capture_output=True,
                       text=True, timeout=60)
    info = json.loads(m.stdout)
    assert info["iterations"] == 3 and info["complete_iterations"] < 3
    assert watch.left() == []              # the stopped peer was killed too


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small tmpfs needs root")
def test_full_disk_stops_the_run_and_keeps_what_was_written(tmp_path: Path) -> None:
    disk = tmp_path / "disk"
    disk.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=80k", "tmpfs", disk], check=True)
    try:
        watch = Command(tmp_path, "full")
        out = disk / "run"
        argv = _measure_argv(tmp_path, out, 8, "4MiB") + ["--trace"]
        failed = watch.run(*argv)
        assert failed.returncode == 2 and "Traceback" not in failed.stderr, failed.stderr
        last = failed.stderr.strip().splitlines()[-1]
        assert "No space left on device" in last and str(out) in last and "--resume" in last
        assert watch.left() == []
        kept = _iterations_done(out)
        assert kept >= 1
        info = subprocess.run([TOMOGRAPHY, "cluster", out], capture_output=True, text=True,
                              timeout=60)
        assert info.returncode == 0, info.stderr    # what was written reads
        subprocess.run(["mount", "-o", "remount,size=4m", disk], check=True)
        done = watch.run(*argv, "--resume")
        assert done.returncode == 0, done.stderr
        assert _iterations_done(out) == 8
        timeline = subprocess.run([TOMOGRAPHY, "plot", out, "-k", "timeline", "--iteration",
                                   str(kept), "-o", tmp_path / "t.png"], capture_output=True,
                                  text=True, timeout=120)
        assert timeline.returncode == 0, timeline.stderr   # the cut trace was repaired
    finally:
        subprocess.run(["umount", disk], check=False)


def test_two_measurements_at_once(tmp_path: Path) -> None:
    first, second = Command(tmp_path, "first"), Command(tmp_path, "second")
    a = first.start(*_measure_argv(tmp_path, tmp_path / "a", 3, "4MiB"))
    b = second.start(*_measure_argv(tmp_path, tmp_path / "b", 3, "4MiB", OTHERS))
    for proc in (a, b):
        _, err = proc.communicate(timeout=180)
        assert proc.returncode == 0, err
    for run, addresses in (("a", ADDRESSES), ("b", OTHERS)):
        m = subprocess.run([TOMOGRAPHY, "info", tmp_path / run, "--format", "json"],
                           capture_output=True, text=True, timeout=60)
        info = json.loads(m.stdout)
        assert info["iterations"] == 3 and info["complete_iterations"] == 3
        hosts = (tmp_path / run / "hosts.csv").read_text()
        assert all(a in hosts for a in addresses)   # each run its own peers, nothing mixed
    assert first.left() == [] and second.left() == []
