"""SimGrid platforms: written, parsed by SimGrid itself where it is installed, errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest
from lxml import etree

from tests.export.conftest import topology_clusters
from tomography.model.errors import TomographyError
from tomography.export.bandwidth import from_topology
from tomography.export.simgrid import simgrid_platform

# Debian's python3-simgrid lives in dist-packages; it is put on the path of a
# child process only, never on this one's.
SIMGRID_PATH = os.environ.get("TOMOGRAPHY_SIMGRID_PATH", "/usr/lib/python3/dist-packages")

LOAD = textwrap.dedent("""
    import json, sys
    import simgrid
    engine = simgrid.Engine(["x", "--cfg=network/model:CM02", "--log=root.thres:critical"])
    engine.load_platform(sys.argv[1])
    routes = {}
    for pair in sys.argv[2:]:
        src, dst = pair.split(">")
        links, latency = engine.host_by_name(src).route_to(engine.host_by_name(dst))
        routes[pair] = {"links": [l.name for l in links],
                        "bandwidths": [l.bandwidth for l in links], "latency": latency}
    print(json.dumps({"hosts": sorted(h.name for h in engine.all_hosts), "routes": routes}))
""")


@lru_cache(maxsize=1)
def simgrid_missing() -> str | None:
    """Why SimGrid cannot be used here, or None when it can."""
    env = {**os.environ, "PYTHONPATH": SIMGRID_PATH}
    try:
        done = subprocess.run([sys.executable, "-c", "import simgrid"], env=env,
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"cannot start Python to import simgrid: {exc}"
    if done.returncode:
        last = (done.stderr.strip().splitlines() or ["?"])[-1]
        return (f"SimGrid's Python module is not available with {SIMGRID_PATH} on the path "
                f"(install python3-simgrid): {last}")
    return None


def load_in_simgrid(path: Path, *pairs: str) -> dict:
    reason = simgrid_missing()
    if reason:
        print(f"skipped: {reason}")
        pytest.skip(reason)
    done = subprocess.run([sys.executable, "-c", LOAD, str(path), *pairs],
                          env={**os.environ, "PYTHONPATH": SIMGRID_PATH},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def model(two_sites):
    return from_topology(two_sites, topology_clusters(two_sites))


def test_platform_is_well_formed(model):
    xml = simgrid_platform(model)
    assert xml.startswith("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM")
    root = etree.fromstring(xml.encode())
    assert root.tag == "platform" and root.get("version") == "4.1"
    assert len(root.findall(".//host")) == 20 and len(root.findall("zone/zone")) == 4
    assert len(root.findall("zone/zoneRoute")) == 4 * 3
    link = root.find(".//link[@id='wan:w1:e1']")
    # 10 Mbit/s = 1.25 MB/s; 5.3 ms one way, of which the NIC links carry 2 x 50 us
    assert link.get("bandwidth") == "1.25MBps" and link.get("latency") == "5200us"


def test_simgrid_loads_the_platform(model, tmp_path):
    path = tmp_path / "two-sites.xml"
    path.write_text(simgrid_platform(model, speed="2Gf"))
    got = load_in_simgrid(path, "w1-00>e1-03", "w1-00>w1-01", "w2-04>w1-02")
    assert got["hosts"] == model.hosts
    wan = got["routes"]["w1-00>e1-03"]
    assert wan["links"] == ["nic-out:w1-00", "cluster-out:w1", "wan:w1:e1", "cluster-in:e1",
                            "nic-in:e1-03"]
    # SimGrid keeps bytes/s: 100, 40, 10, 40 and 100 Mbit/s
    assert wan["bandwidths"] == pytest.approx([12.5e6, 5e6, 1.25e6, 5e6, 12.5e6])
    assert wan["latency"] == pytest.approx(model.cluster_delay[0, 2])
    inside = got["routes"]["w1-00>w1-01"]
    assert inside["links"] == ["nic-out:w1-00", "nic-in:w1-01"]
    assert inside["latency"] == pytest.approx(model.cluster_delay[0, 0])
    assert got["routes"]["w2-04>w1-02"]["latency"] == pytest.approx(model.cluster_delay[1, 0])


def test_simgrid_loads_tree5_with_a_dead_link(tree5, tmp_path):
    m = from_topology(tree5, topology_clusters(tree5))
    m.cluster_bandwidth[0, 4] = 0.0                      # h1 -> h5 dead: no route
    xml = simgrid_platform(m, default_delay=1e-3)
    assert 'id="wan:h1:h5"' not in xml and 'id="wan:h5:h1"' in xml
    path = tmp_path / "tree-5.xml"
    path.write_text(xml)
    got = load_in_simgrid(path, "h5-00>h1-00", "h3-00>h4-00")
    assert got["hosts"] == ["h1-00", "h2-00", "h3-00", "h4-00", "h5-00"]
    # one-host clusters: their NIC links carry half the default delay each
    assert got["routes"]["h5-00>h1-00"]["latency"] == pytest.approx(m.cluster_delay[4, 0])
    assert min(got["routes"]["h3-00>h4-00"]["bandwidths"]) == pytest.approx(200e6 / 8)


def test_a_link_with_a_capacity_per_direction_gives_two_pair_links():
    from tomography.model.topology import read_topology
    t = read_topology("gridlab-8")
    root = etree.fromstring(simgrid_platform(from_topology(t, topology_clusters(t))).encode())
    bandwidth = {link.get("id"): link.get("bandwidth") for link in root.iter("link")}
    mib = 2**20 / 1e6                                    # MBps (10^6 bytes/s) per MiB/s
    assert bandwidth["wan:helix:mike4"] == f"{4.76 * mib:.12g}MBps"
    assert bandwidth["wan:mike4:helix"] == f"{6.39 * mib:.12g}MBps"


def test_unknown_figures_are_refused(model):
    m = model.fill_missing(0.0)
    m.cluster_bandwidth[0, 1] = np.nan
    with pytest.raises(TomographyError, match=r"1 unknown figure\(s\), e.g. cluster_bandwidth "
                                              r"w1 -> w2: every one is needed"):
        simgrid_platform(m)
    assert "wan:w1:w2" not in simgrid_platform(m.fill_missing(0.0))


def test_other_errors(model):
    m = model.fill_missing(0.0)
    m.host_out[3] = 0.0
    with pytest.raises(TomographyError, match=f"host_out {m.hosts[3]} is 0"):
        simgrid_platform(m)
    with pytest.raises(TomographyError, match="default_delay must be finite and >= 0"):
        simgrid_platform(model, default_delay=-1.0)
