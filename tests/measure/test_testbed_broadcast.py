"""Real broadcasts inside an emulated network (root): the two sites come out."""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path

import pytest

from cluster.accuracy import nmi
from cluster.louvain import louvain
from measure import testbed
from tomography.cli import main
from tomography.dataset import read_measurement
from tomography.weights import mean_weights

TWO_SITES = """\
name: two-sites-5x
description: two sites of 3 hosts; 50 Mbit/s NICs, 10 Mbit/s between the sites (5x less)
host_defaults: {nic: 50Mbit/s, latency: 50us}
routers: [A, B]
links:
- {between: [A, B], capacity: 10Mbit/s, latency: 1ms}
clusters:
- {name: a, router: A, hosts: 3, label: A}
- {name: b, router: B, hosts: 3, label: B}
"""

pytestmark = [pytest.mark.root, pytest.mark.slow]


def test_two_sites_cluster_apart_and_the_testbed_goes_away(as_root, tmp_path: Path) -> None:
    topology = tmp_path / "two.yaml"
    topology.write_text(TWO_SITES)
    name = f"bt{random.randrange(10**4):04d}"
    out = tmp_path / "run"
    try:
        code = main(["measure", "bittorrent", "--testbed", str(topology), "--name", name,
                     "-o", str(out), "-n", "6", "--until-converged", "2", "--size", "2MiB",
                     "--time-limit", "60s"])
    finally:
        testbed.down(name)
    assert code == 0
    m = read_measurement(out)
    assert m.meta["method"] == "bittorrent" and m.meta["topology"] == "two-sites-5x"
    assert m.meta["testbed"]["latency_applied"] in (True, False)
    assert "latency_note" in m.meta["testbed"]
    assert m.iterations["complete"].all()
    assert 3 <= len(m.iteration_ids) <= 6  # the stop rule needs 3 equal partitions
    flat = louvain(mean_weights(m), seed=0)
    truth = [m.labels[h] for h in m.host_names]
    assert nmi(truth, flat.labels) == 1.0
    # the run raised its own testbed and took it down: nothing of it is left
    assert not testbed.status(name)["up"]
    left = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert f"tomo-{name}-" not in left
    assert json.loads((out / "meta.json").read_text())["params"]["file_size"] == 2 * 2**20
