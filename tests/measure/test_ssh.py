"""Real SSH runs against a real sshd on a loopback port, and the preflight's verdicts."""

from __future__ import annotations

import csv
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from measure.coordinator import AgentGroup, local_hosts
from measure.preflight import format_checks
from measure.ssh import SshOptions, read_ssh_hosts, ssh_transport
from measure.swarm import SwarmParams
from measure.transport import ProcessTransport, local
from tomography.model.dataset import read_measurement, read_trace
from tomography.model.errors import DatasetError

from tests.conftest import assert_trace_within_counts

from .conftest import peer_pids, wait_for_iterations

pytestmark = pytest.mark.slow

TOMOGRAPHY = str(Path(sys.executable).parent / "tomography")
# An old toolkit's peer, as a host with a stale installation would run it.
OLD_PEER = (f"{sys.executable} -c 'import json, sys; print(json.dumps({{\"event\": \"hello\", "
            "\"port\": 1, \"toolkit\": \"0.0.1\", \"libtorrent\": \"2.1.0.0\", \"hostname\": "
            "\"old\", \"cpus\": 1}), flush=True); sys.stdin.read()'")


def _hosts_file(path: Path, sshd: dict, rows: list[tuple[str, str, str, str]],
                port: int | None = None) -> Path:
    target = f"ssh://{sshd['user']}@127.0.0.1:{port or sshd['port']}"
    with path.open("w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["host", "ssh", "address", "label", "command"])
        out.writerows([h, target, a, label, command] for h, a, label, command in rows)
    return path


def _ssh_args(sshd: dict) -> list[str]:
    args = ["--remote-python", sys.executable, "--ssh-identity", sshd["identity"]]
    for option in sshd["options"]:
        args += ["--ssh-option", option]
    return args


def _tomography(*args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run([TOMOGRAPHY, *args], capture_output=True, text=True, timeout=timeout)


def test_a_run_over_ssh_gives_a_complete_dataset(sshd, tmp_path: Path) -> None:
    hosts = _hosts_file(tmp_path / "hosts.csv", sshd,
                        [(f"n{i}", f"127.0.0.{80 + i}", "a" if i < 2 else "b", "")
                         for i in range(4)])
    run = _tomography("measure", "bittorrent", "--ssh", str(hosts), "-o", str(tmp_path / "run"),
                      "-n", "2", "--size", "2MiB", "--upload-limit", "4MiB/s", "--trace",
                      *_ssh_args(sshd))
    assert run.returncode == 0, run.stderr
    m = read_measurement(tmp_path / "run")
    assert m.iterations["complete"].all() and m.iteration_ids == [0, 1]
    assert m.labels == {"n0": "a", "n1": "a", "n2": "b", "n3": "b"}
    assert m.meta["launcher"] == "ssh"
    assert m.meta["ssh"]["targets"]["n0"].startswith("ssh://")
    assert set(m.meta["hosts"]) == {"n0", "n1", "n2", "n3"}
    assert all(r["clock_offset_s"] is not None for r in m.meta["hosts"].values())
    # a row per block written, no more than each pair's counts (these also hold blocks that
    # came twice)
    assert_trace_within_counts(read_trace(tmp_path / "run"), m.transfers)
    assert not peer_pids({f"127.0.0.{80 + i}" for i in range(4)})


def test_the_preflight_names_each_failed_host_in_one_line(sshd, tmp_path: Path) -> None:
    python_without_toolkit = f"{sys.executable} -S -m measure.agent"  # no site-packages
    hosts = _hosts_file(tmp_path / "hosts.csv", sshd, [
        ("good1", "127.0.0.90", "", ""), ("good2", "127.0.0.91", "", ""),
        ("bare", "127.0.0.92", "", python_without_toolkit),
        ("old", "127.0.0.93", "", OLD_PEER),
        ("elsewhere", "203.0.113.9", "", "")])
    with hosts.open("a") as fh:  # a host whose sshd does not answer: a closed port
        fh.write(f"down,ssh://{sshd['user']}@127.0.0.1:1,127.0.0.94,,\n")
    check = _tomography("measure", "bittorrent", "--ssh", str(hosts), "--check",
                        *_ssh_args(sshd), timeout=60)
    assert check.returncode == 2, check.stderr
    table = check.stdout
    assert "2 of 6 hosts ready" in table
    rows = {line.split()[0]: line for line in table.splitlines()[1:-1]}
    assert rows["good1"].endswith("ok") and rows["good2"].endswith("ok")
    assert "unreachable over SSH" in rows["down"] and "Connection refused" in rows["down"]
    assert "the toolkit is not installed there" in rows["bare"]
    assert "toolkit 0.0.1 there" in rows["old"]
    assert "address 203.0.113.9 is not on this host" in rows["elsewhere"]

    run = _tomography("measure", "bittorrent", "--ssh", str(hosts), "-o", str(tmp_path / "r"),
                      *_ssh_args(sshd), timeout=60)
    assert run.returncode == 2
    errors = run.stderr.strip().splitlines()
    assert len(errors) == 4 and all(line.startswith("tomography: error: host ")
                                    for line in errors)
    assert {line.split()[3] for line in errors} == {"bare", "old", "elsewhere", "down"}
    assert not (tmp_path / "r").exists()  # nothing started, nothing written

    skip = _tomography("measure", "bittorrent", "--ssh", str(hosts), "-o", str(tmp_path / "s"),
                       "-n", "1", "--size", "1MiB", "--skip-failed", *_ssh_args(sshd))
    assert skip.returncode == 0, skip.stderr
    assert skip.stdout.count("left out after the preflight") == 4
    m = read_measurement(tmp_path / "s")
    assert m.host_names == ["good1", "good2"]
    assert set(m.meta["skipped_hosts"]) == {"bare", "old", "elsewhere", "down"}
    assert not peer_pids({f"127.0.0.{i}" for i in range(90, 95)})


def test_sigterm_keeps_finished_iterations_and_resume_continues(sshd, tmp_path: Path) -> None:
    hosts = _hosts_file(tmp_path / "hosts.csv", sshd,
                        [(f"n{i}", f"127.0.0.{100 + i}", "", "") for i in range(3)])
    out = tmp_path / "run"
    cmd = [TOMOGRAPHY, "measure", "bittorrent", "--ssh", str(hosts), "-o", str(out), "-n", "5",
           "--size", "3MiB", "--upload-limit", "3MiB/s", *_ssh_args(sshd)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for_iterations(out, 1)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "--resume" in err
    kept = read_measurement(out).iteration_ids
    assert 1 <= len(kept) < 5
    deadline = time.monotonic() + 10  # sshd ends the remote peers once the channels close
    addresses = {f"127.0.0.{100 + i}" for i in range(3)}
    while time.monotonic() < deadline and peer_pids(addresses):
        time.sleep(0.2)
    assert not peer_pids(addresses)
    done = subprocess.run(cmd + ["--resume"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert read_measurement(out).iteration_ids == list(range(5))


def test_the_connection_limit_bounds_the_peers_starting_at_once() -> None:
    class Counting(ProcessTransport):
        def open(self, host, agent_args, inbox):
            starting = [h for h in agents.peers if h not in agents.hello
                        and agents.peers[h].alive()]
            self.most = max(getattr(self, "most", 0), len(starting) + 1)
            return super().open(host, agent_args, inbox)

    transport = Counting(local, max_starting=2)
    agents = AgentGroup(local_hosts(6, first=110), transport, SwarmParams(), 0, 0)
    try:
        assert agents.start(list(agents.hosts["host"])) == []
    finally:
        agents.close()
    assert transport.most == 2


def test_ssh_hosts_file_errors_name_file_line_and_field(tmp_path: Path) -> None:
    f = tmp_path / "h.csv"
    f.write_text("host,address\nn1,10.0.0.1\n")
    with pytest.raises(DatasetError, match=r"h.csv, line 1, field 'ssh': missing column"):
        read_ssh_hosts(f)
    f.write_text("host,ssh,address\nn1,a@n1,10.0.0.1\nn2,,10.0.0.2\n")
    with pytest.raises(DatasetError, match=r"line 3, field 'ssh': empty ssh"):
        read_ssh_hosts(f)
    f.write_text("host,ssh,address\nn1,a@n1,10.0.0.1\nn1,a@n2,10.0.0.2\n")
    with pytest.raises(DatasetError, match=r"line 3, field 'host': duplicate host 'n1'"):
        read_ssh_hosts(f)
    with pytest.raises(DatasetError, match="missing file"):
        read_ssh_hosts(tmp_path / "missing.csv")
    t = ssh_transport(read_ssh_hosts(_hosts_file(tmp_path / "ok.csv", {"user": "u", "port": 22},
                                                 [("n1", "10.0.0.1", "", "")])),
                      SshOptions(identity="/k", options=["Foo=bar"], connections=3))
    argv = t.launch("n1", ["py", "-m", "measure.agent", "--address", "10.0.0.1"])
    assert argv[argv.index("-i") + 1] == "/k" and "Foo=bar" in argv and t.max_starting == 3
    assert argv[-1] == "python3 -m measure.agent --address 10.0.0.1"
    assert format_checks([]).endswith("0 of 0 hosts ready")


def test_the_destination_follows_a_double_dash_so_ssh_never_reads_it_as_an_option(
        tmp_path: Path) -> None:
    """Even a target that got past the file's checks is a host name to ssh, never an option."""
    from measure.ssh import ssh_command

    marker = tmp_path / "proxy-command-ran"
    argv = ssh_command(f"-oProxyCommand=touch {marker}", ["--role", "probe"],
                       SshOptions(options=["ConnectTimeout=2"]))
    assert argv.index("--") == len(argv) - 3
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 255 and not marker.exists(), done.stderr


def test_a_loopback_address_needs_a_target_on_this_machine(tmp_path: Path) -> None:
    f = tmp_path / "h.csv"
    f.write_text("host,ssh,address\nn1,ssh://u@127.0.0.1:2222,127.0.0.5\n"
                 "n2,u@localhost,127.0.0.6\nn3,u@node3,10.0.0.3\n")
    assert read_ssh_hosts(f)["address"].tolist() == ["127.0.0.5", "127.0.0.6", "10.0.0.3"]
    f.write_text("host,ssh,address\nn1,u@node1,10.0.0.1\nn2,u@node2,127.0.0.6\n")
    with pytest.raises(DatasetError, match=r"line 3, field 'address': 127.0.0.6 is a loopback"):
        read_ssh_hosts(f)
    f.write_text("host,ssh,address\nn1,u@node1,10.0.0.1\nn2,u@node2,10.0.0.1\n")
    with pytest.raises(DatasetError, match=r"line 3, field 'address': .* also on line 2"):
        read_ssh_hosts(f)
