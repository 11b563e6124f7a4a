"""Real broadcasts inside an emulated network (root): the two sites come out."""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path

import pytest

from cluster.accuracy import nmi
from cluster.confidence import SWARM_SEPARATION
from cluster.louvain import louvain
from measure import testbed
from tomography.cli import main
from tomography.model.dataset import read_measurement
from tomography.model.weights import mean_weights

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
    meta = json.loads((out / "meta.json").read_text())
    assert meta["params"]["file_size"] == 2 * 2**20 and meta["params"]["block_quota"] == 128
    assert meta["stop_rule"]["k"] == 2 and meta["stop_rule"]["option"] == "--until-converged"
    assert meta["stop_rule"]["min_separation"] == SWARM_SEPARATION    # a real swarm's line
    assert meta["params"]["counted_by"] == "receiver"


def _truth_by_address(m, bed) -> list[str]:
    label = {row.address: row.label for row in bed.host_table().itertuples()}
    return [label[m.hosts.set_index("host").loc[h, "address"]] for h in m.host_names]


def test_mpi_and_ssh_runs_inside_the_emulated_network_find_its_sites(as_root, sshd,
                                                                     tmp_path: Path) -> None:
    """The cross-machine launchers on a network with a known answer: ranks and ssh
    sessions sit in the testbed's host namespaces; the partition is the local launcher's."""
    import sys

    from tomography.model.topology import read_topology

    from .conftest import mpiexec

    topology = tmp_path / "two.yaml"
    topology.write_text(TWO_SITES)
    name = f"mp{random.randrange(10**4):04d}"
    bed = testbed.up(read_topology(topology), name=name)
    tomography = str(Path(sys.executable).parent / "tomography")
    common = ["-n", "4", "--size", "2MiB", "--time-limit", "60s", "--seed", "1"]
    try:
        # MPI: rank 0 here, one agent rank in each host's namespace
        argv = [mpiexec(), "-n", "1", tomography, "measure", "bittorrent", "--mpi",
                "--network", "10.201.0.0/16", "-o", str(tmp_path / "mpi"), *common]
        for ns in bed.hosts.values():
            argv += [":", "-n", "1", "ip", "netns", "exec", ns, tomography, "measure",
                     "bittorrent", "--mpi", "--network", "10.201.0.0/16"]
        run = subprocess.run(argv, capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr
        assert "share node" not in run.stderr  # one machine, but six network stacks
        # SSH: each host's sshd runs in its namespace, reached through ProxyCommand
        config = tmp_path / "ssh_config"
        config.write_text("".join(
            f"Host {host}\n  ProxyCommand ip netns exec {ns} /usr/sbin/sshd -i -f "
            f"{sshd['config']}\n  User {sshd['user']}\n" for host, ns in bed.hosts.items()))
        hosts = tmp_path / "hosts.csv"
        hosts.write_text("host,ssh,address,label\n" + "".join(
            f"{r.host},{r.host},{r.address},{r.label}\n" for r in bed.host_table().itertuples()))
        ssh = main(["measure", "bittorrent", "--ssh", str(hosts), "--ssh-config", str(config),
                    "--ssh-identity", sshd["identity"], "--remote-python", sys.executable,
                    *[x for o in sshd["options"] for x in ("--ssh-option", o)],
                    "-o", str(tmp_path / "ssh"), *common])
        assert ssh == 0
        # the local launcher on the same network, same seed
        local = main(["measure", "bittorrent", "--testbed", str(topology), "--name", name,
                      "-o", str(tmp_path / "local"), *common])
        assert local == 0
    finally:
        testbed.down(name)
    partitions = {}
    for launcher in ("mpi", "ssh", "local"):
        m = read_measurement(tmp_path / launcher)
        assert m.iterations["complete"].all(), launcher
        flat = louvain(mean_weights(m), seed=0)
        assert nmi(_truth_by_address(m, bed), flat.labels) == 1.0, launcher
        partitions[launcher] = flat.labels
    assert nmi(partitions["mpi"], partitions["local"]) == 1.0
    assert nmi(partitions["ssh"], partitions["local"]) == 1.0


def test_probe_meshes_on_the_emulated_network_measure_its_shaping(as_root, tmp_path: Path
                                                                  ) -> None:
    """iperf3 within 15% of the shaped rates (TCP/IP headers take ~4% of a frame, tbf's
    burst and TCP's sawtooth a few more), the right partition; NetPIPE's Hockney beta is
    the shaped bandwidth and its alpha positive."""
    import numpy as np

    topology = tmp_path / "two.yaml"
    topology.write_text(TWO_SITES)
    name = f"pr{random.randrange(10**4):04d}"
    try:
        # --omit 1: TCP's slow start left out of the figure (one start that met a loss
        # once gave 0.83 of the shaped rate in 2 s)
        assert main(["measure", "iperf3", "--testbed", str(topology), "--name", name,
                     "--duration", "2", "--omit", "1", "--one-way",
                     "-o", str(tmp_path / "ip")]) == 0
        assert main(["measure", "netpipe", "--testbed", str(topology), "--name", name,
                     "--pairs", str(_pairs(tmp_path)), "-o", str(tmp_path / "np")]) == 0
    finally:
        testbed.down(name)
    m = read_measurement(tmp_path / "ip")
    ok = m.probes[m.probes["error"].astype(str) == ""]
    assert len(ok) == 15  # 6 hosts, one way
    site = {h: m.labels[h] for h in m.host_names}
    within = ok[[site[s] == site[d] for s, d in zip(ok["src"], ok["dst"])]]
    across = ok[[site[s] != site[d] for s, d in zip(ok["src"], ok["dst"])]]
    assert np.allclose(within["bits_per_second"], 50e6, rtol=0.15), within["bits_per_second"]
    assert np.allclose(across["bits_per_second"], 10e6, rtol=0.15), across["bits_per_second"]
    flat = louvain(mean_weights(m), seed=0)
    assert nmi([site[h] for h in m.host_names], flat.labels) == 1.0
    n = read_measurement(tmp_path / "np").probes
    assert (n["error"].astype(str) == "").all() and (n["alpha_s"] > 0).all()
    rate = 8 / n.set_index(["src", "dst"])["beta_s_per_byte"]
    assert np.allclose(rate, [50e6, 10e6], rtol=0.15), rate


def _pairs(tmp_path: Path) -> Path:
    """One pair inside site A (50 Mbit/s) and one across the sites (10 Mbit/s)."""
    path = tmp_path / "pairs.csv"
    path.write_text("src,dst\na-00,a-01\na-00,b-00\n")
    return path


SHARED_UPLINK = """\
name: shared-uplink
description: clusters c1 and c2 reach the core through one 20 Mbit/s uplink; c3 has its own
host_defaults: {nic: 100Mbit/s, latency: 50us}
routers: [core, s12, s1, s2, s3, sd]
links:
- {between: [s12, core], capacity: 20Mbit/s, latency: 100us}
- {between: [s1, s12], capacity: 40Mbit/s, latency: 100us}
- {between: [s2, s12], capacity: 40Mbit/s, latency: 100us}
- {between: [s3, core], capacity: 20Mbit/s, latency: 100us}
- {between: [sd, core], capacity: 400Mbit/s, latency: 100us}
clusters:
- {name: c1, router: s1, hosts: 2, label: c1}
- {name: c2, router: s2, hosts: 2, label: c2}
- {name: c3, router: s3, hosts: 2, label: c3}
- {name: d, router: sd, hosts: 2, label: d}
"""


def test_the_concurrency_test_finds_the_shared_uplink_and_only_it(as_root, tmp_path: Path
                                                                    ) -> None:
    from tomography.model.dataset.concurrency import read_concurrency

    topology = tmp_path / "shared.yaml"
    topology.write_text(SHARED_UPLINK)
    name = f"cc{random.randrange(10**4):04d}"
    try:
        assert main(["measure", "iperf3", "--testbed", str(topology), "--name", name,
                     "--concurrency", "--duration", "2", "--repeats", "2",
                     "-o", str(tmp_path / "cc")]) == 0
    finally:
        testbed.down(name)
    verdicts = read_concurrency(tmp_path / "cc").set_index(["cluster_a", "cluster_b"])
    assert verdicts.loc[("c1", "c2"), "shared"], verdicts
    assert not verdicts.loc[("c1", "c3"), "shared"], verdicts
    assert not verdicts.loc[("c2", "c3"), "shared"], verdicts
    assert verdicts.loc[("c1", "c2"), "drop"] > 0.3  # two flows split the 20 Mbit/s uplink
    m = read_measurement(tmp_path / "cc")
    assert set(m.probes["concurrent"].astype(int)) == {1, 2}


def test_one_allocation_measures_then_runs_hierarchical_collectives(as_root,
                                                                    tmp_path: Path) -> None:
    """The workflow of docs/mpi.md on the emulated network: one MPI job measures (rank 0
    coordinates, a rank in each host's namespace), the next runs a program whose ranks,
    told nothing, find their hosts in the dataset by address and check every collective."""
    import os
    import sys

    from tomography.model.topology import read_topology

    from .conftest import mpiexec

    topology = tmp_path / "two.yaml"
    topology.write_text(TWO_SITES)
    name = f"co{random.randrange(10**4):04d}"
    bed = testbed.up(read_topology(topology), name=name)
    tomography = str(Path(sys.executable).parent / "tomography")
    check = str(Path(__file__).parents[1] / "tomography" / "collectives_check.py")
    # ranks on one machine meet in shared memory unless told to use the network
    network_only = ["MPIR_CVAR_NOLOCAL=1", "UCX_TLS=tcp"]
    try:
        argv = [mpiexec(), "-n", "1", tomography, "measure", "bittorrent", "--mpi", "--network",
                "10.201.0.0/16", "-o", str(tmp_path / "run"), "-n", "3", "--size", "2MiB",
                "--seed", "1"]
        for ns in bed.hosts.values():
            argv += [":", "-n", "1", "ip", "netns", "exec", ns, tomography, "measure",
                     "bittorrent", "--mpi", "--network", "10.201.0.0/16"]
        assert subprocess.run(argv, capture_output=True, text=True,
                              timeout=300).returncode == 0
        argv = [mpiexec()]
        for i, ns in enumerate(bed.hosts.values()):
            argv += ([":"] if i else []) + ["-n", "1", "ip", "netns", "exec", ns, "env",
                                            *network_only, sys.executable, check,
                                            str(tmp_path / "run"), "16384"]
        run = subprocess.run(argv, capture_output=True, text=True, timeout=300,
                             env={k: v for k, v in os.environ.items()
                                  if k != "TOMOGRAPHY_HOST"})
    finally:
        testbed.down(name)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "checked" in run.stdout and "on 6 ranks over 2 levels (level 1, all)" in run.stdout
