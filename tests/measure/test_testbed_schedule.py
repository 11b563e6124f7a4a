"""A network that changes under a run (root): links reshaped on time, rates that follow."""

from __future__ import annotations

import json
import random
import subprocess
import time
from pathlib import Path

import pytest

from measure import testbed
from measure.testbed import Reshaper, read_schedule
from tomography.cli import main
from tomography.model.dataset import read_measurement
from tomography.model.topology import parse_topology

pytestmark = [pytest.mark.root, pytest.mark.slow]

TWO = {"name": "two-routers", "host_defaults": {"nic": "100Mbit/s", "latency": "50us"},
       "routers": ["A", "B"],
       "links": [{"between": ["A", "B"], "capacity": "20Mbit/s", "latency": "1ms"}],
       "clusters": [{"name": "a", "router": "A", "hosts": 1, "label": "A"},
                    {"name": "b", "router": "B", "hosts": 1, "label": "B"}]}


@pytest.fixture
def bed(as_root):
    name = f"ch{random.randrange(10**4):04d}"
    try:
        yield testbed.up(parse_topology(TWO), name=name)
    finally:
        testbed.down(name)


def _rate(bed, router: str) -> str:
    ns = f"tomo-{bed.name}-r-{router}"
    shown = subprocess.run(["tc", "-n", ns, "qdisc", "show", "dev", "l0"], capture_output=True,
                           text=True, check=True).stdout
    return next(word for line in shown.splitlines() if "tbf" in line
                for i, word in enumerate(line.split()) if line.split()[i - 1] == "rate")


def test_a_change_lands_on_time_the_rate_follows_it_and_the_end_restores_it(bed) -> None:
    schedule = read_schedule({"changes": [{"at": 3, "link": ["A", "B"],
                                           "capacity": "5Mbit/s"}]})
    server = subprocess.Popen(bed.command("b-00", ["iperf3", "-s", "-1", "-J", "-p", "5201"]),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.5)
        with Reshaper(bed, schedule) as reshaper:
            done = subprocess.run(bed.command("a-00", [
                "iperf3", "-c", bed.addresses["b-00"], "-p", "5201", "-t", "6", "-J",
                "--get-server-output"]),
                capture_output=True, text=True, timeout=60)
            assert _rate(bed, "A") == _rate(bed, "B") == "5Mbit"
        assert reshaper.error is None
        assert _rate(bed, "A") == _rate(bed, "B") == "20Mbit"    # given back at the end
    finally:
        server.kill()
        server.wait()
    applied = reshaper.applied
    assert [(r["link"], r["from_router"], r["rate_bps"]) for r in applied] == [
        ("A--B", "A", 5_000_000), ("A--B", "B", 5_000_000)]
    assert all(0 <= r["applied_s"] - r["due_s"] < 0.5 for r in applied), applied
    # the receiver's seconds (the sender's run ahead of the shaped rate while the queue behind
    # the shaper fills: 6.3 Mbit/s two seconds after the change to 5 in one run); the first
    # second is the ramp, so two seconds are averaged each side, clear of the change
    server = json.loads(done.stdout)["server_output_json"]
    seconds = [i["sum"]["bits_per_second"] for i in server["intervals"]]
    before, after = sum(seconds[1:3]) / 2, sum(seconds[4:6]) / 2
    assert 15e6 < before < 21e6 and 3.5e6 < after < 6e6, seconds


def test_a_run_records_the_changes_and_a_bad_schedule_is_refused_first(as_root,
                                                                       tmp_path: Path) -> None:
    topology = tmp_path / "two.yaml"
    topology.write_text(json.dumps(TWO))          # JSON is YAML
    changes = tmp_path / "changes.yaml"
    changes.write_text("random: {every: 1, fraction: [0.2, 1.0], seed: 3}\n")
    name = f"cr{random.randrange(10**4):04d}"
    out = tmp_path / "run"
    try:
        assert main(["measure", "bittorrent", "--testbed", str(topology), "--name", name,
                     "--changes", str(changes), "-n", "2", "--size", "1MiB",
                     "-o", str(out)]) == 0
    finally:
        testbed.down(name)
    m = read_measurement(out)
    assert m.meta["testbed"]["changes"]["random"]["every"] == 1
    rows = (out / "network_changes.csv").read_text().splitlines()
    assert rows[0].startswith("session,due_s,applied_s")
    assert len(rows) >= 3 and {r.split(",")[4] for r in rows[1:]} == {"A--B"}
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text("changes: [{at: 1, link: [A, C], fraction: 0.5}]\n")
    assert main(["measure", "bittorrent", "--testbed", str(topology), "--name", name,
                 "--changes", str(wrong), "-o", str(tmp_path / "never")]) == 2
    assert not testbed.status(name)["up"] and not (tmp_path / "never").exists()
