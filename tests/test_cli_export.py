"""``tomography export`` and ``tomography plan``: measure -> infer -> plan, from the shell."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from tomography.cli import main
from tomography.export.gauge import gauge_to_network, read_gauge
from tomography.planning import balanced_multicast

ROOT = Path(__file__).resolve().parents[1]
GRIDLAB = ROOT / "datasets" / "gauges" / "gridlab-8.gauge.xml"


def run(capsys, *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def four_by_16(tmp_path_factory) -> Path:
    """A simulated dataset of emulated-4x16-fast: 4 clusters of 16 hosts, 3 iterations."""
    out = tmp_path_factory.mktemp("sim") / "4x16"
    assert main(["simulate", "emulated-4x16-fast", "-n", "3", "--size", "8MiB",
                 "-o", str(out)]) == 0
    return out


@pytest.mark.slow  # over 2 s
def test_pipeline_simulate_hierarchy_gauge_plan(four_by_16: Path, tmp_path: Path) -> None:
    """One shell pipeline: export the found clusters as a Gauge, plan a balanced multicast."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    tomography = [sys.executable, "-m", "tomography"]
    pipeline = (f"{' '.join(tomography)} export {four_by_16} --format gauge -o - | "
                f"{' '.join(tomography)} plan - --root ca-00 --format json")
    done = subprocess.run(["bash", "-o", "pipefail", "-c", pipeline], capture_output=True,
                          text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert len(result["nodes"]) == 4          # the four clusters were found
    assert "root host ca-00 is in cluster" in done.stderr
    by_method = {r["method"]: r for r in result["methods"]}
    balanced = by_method["balanced"]["throughput"]
    assert balanced > 0 and by_method["balanced"]["trees"]
    for method in ("flat", "semi-flat", "max-bottleneck", "fpfr"):
        assert by_method[method]["throughput"] <= balanced + 1e-9
    assert by_method["exact"]["throughput"] == pytest.approx(balanced, rel=0.35)
    assert by_method["exact"]["throughput"] >= balanced - 1e-9
    # the model figures are those of the topology file: its inter-cluster links
    gauge = tmp_path / "g.xml"
    assert main(["export", str(four_by_16), "--format", "gauge", "-o", str(gauge)]) == 0
    model = read_gauge(gauge)
    assert {s.kind for s in model.sources.values()} == {"topology-model"}
    net = gauge_to_network(model, unit="MiB/s")   # the thesis MB/s: 2^20 bytes
    assert sorted(np.round(net.bandwidth[net.bandwidth > 0], 6).tolist()) == \
        sorted([10, 10, 3, 3, 2, 2, 6, 6, 8, 8, 8, 8])
    assert balanced_multicast(net, net.nodes[0]).throughput > 0


@pytest.mark.slow  # over 2 s
def test_export_every_format(capsys, four_by_16: Path, tmp_path: Path) -> None:
    out = {}
    for kind in ("json", "graphml", "gexf", "dot", "simgrid", "mpi", "hostfile", "rankfile"):
        out[kind] = tmp_path / f"topo.{kind}"
        code, _, err = run(capsys, "export", four_by_16, "--format", kind, "-o", out[kind])
        assert code == 0, err
        assert f"-> {out[kind]}" in err
    topo = json.loads(out["json"].read_text())
    assert topo["format"] == "tomography-topology/1" and len(topo["hosts"]) == 64
    assert len(topo["hierarchy"]["levels"][0]["clusters"]) == 4
    graph = nx.read_graphml(out["graphml"])
    assert graph.number_of_nodes() == 64 and "level_1" in graph.nodes["ca-00"]
    assert nx.read_gexf(out["gexf"]).number_of_nodes() == 64
    assert out["dot"].read_text().startswith("digraph hasse")
    assert out["simgrid"].read_text().count("<host ") == 64
    mpi = json.loads(out["mpi"].read_text())
    assert mpi["format"] == "tomography-mpi/1" and len(mpi["hosts"]) == 64
    # in the syntax of the mpiexec on PATH: MPICH's (the set-up's wheel) or, where Debian's
    # openmpi-bin provides /usr/bin/mpiexec, Open MPI's
    from tomography.export.mpi.hostfiles import mpi_flavor

    line = r"[^\s:]+ slots=1" if mpi_flavor() == "openmpi" else r"[^\s:]+:1"
    hostfile = out["hostfile"].read_text().splitlines()
    assert len(hostfile) == 64 and all(re.fullmatch(line, h) for h in hostfile), hostfile[:3]
    assert out["rankfile"].read_text().startswith("rank 0=")
    code, tree_dot, _ = run(capsys, "export", four_by_16, "--format", "dot", "--graph", "tree",
                            "-o", "-")
    assert code == 0 and tree_dot.startswith("graph tree") and tree_dot.count(" -- ") == 3


@pytest.mark.slow  # over 2 s
def test_export_errors(capsys, four_by_16: Path, tmp_path: Path) -> None:
    code, _, err = run(capsys, "export", four_by_16, "--format", "graphml", "-o", "-")
    assert code == 2 and "give -o FILE" in err
    code, _, err = run(capsys, "export", four_by_16, "--format", "gauge", "--bandwidth",
                       "probes", "-o", tmp_path / "g.xml")
    assert code == 2 and "no probes" in err
    code, _, err = run(capsys, "export", four_by_16, "--format", "gauge", "--bandwidth",
                       "topology", "--topology", tmp_path / "none.yaml", "-o", tmp_path / "g.xml")
    assert code == 2 and "none.yaml: no such topology file" in err
    code, _, err = run(capsys, "export", four_by_16, "--format", "mpi", "--root", "nohost",
                       "-o", "-")
    assert code == 2 and "nohost" in err
    code, _, err = run(capsys, "export", tmp_path / "missing", "--format", "json", "-o", "-")
    assert code == 2 and "missing" in err
    # a host renamed in hosts.csv is not the topology's: the error names both files
    import re
    import shutil
    renamed = tmp_path / "renamed"
    shutil.copytree(four_by_16, renamed)
    first = (renamed / "hosts.csv").read_text().splitlines()[1].split(",")[0]
    for name in ("hosts.csv", "transfers.csv", "iterations.csv"):
        f = renamed / name
        f.write_text(re.sub(rf"\b{re.escape(first)}\b", "renamed-host", f.read_text()))
    for kind in ("gauge", "simgrid"):
        code, _, err = run(capsys, "export", renamed, "--format", kind, "--bandwidth",
                           "topology", "-o", tmp_path / f"r.{kind}")
        assert code == 2 and len(err.strip().splitlines()) == 1
        assert f"{renamed}/hosts.csv: host 'renamed-host' is not a host of topology" in err
        assert "emulated-4x16-fast" in err and not (tmp_path / f"r.{kind}").exists()


def test_plan_gridlab(capsys) -> None:
    code, out, _ = run(capsys, "plan", GRIDLAB, "--root", "n0")
    assert code == 0
    rows = {line.split()[0]: line for line in out.splitlines()[3:11] if line.strip()}
    assert "dead links" in rows["flat"]           # n0 cannot reach four sites directly
    assert "trees of exact" in out or "trees of balanced" in out
    assert "fpfr: " in out and "trees sent unpaced" in out   # what its prediction assumes
    code, out, _ = run(capsys, "plan", GRIDLAB, "--root", "n0", "--method", "balanced",
                       "--format", "json", "--max-nodes", "8")
    plan = json.loads(out)["methods"][0]
    assert plan["method"] == "balanced" and plan["throughput"] > 0
    net = gauge_to_network(read_gauge(GRIDLAB))
    for tree in plan["trees"]:
        for a, b in tree["edges"]:
            assert net.bandwidth[net.index(a), net.index(b)] > 0


def test_plan_errors(capsys, tmp_path: Path) -> None:
    code, _, err = run(capsys, "plan", GRIDLAB, "--root", "atlantis")
    assert code == 2 and "unknown root 'atlantis': give a host" in err
    bad = tmp_path / "bad.xml"
    bad.write_text(GRIDLAB.read_text().replace('unit="MiB/s"', "", 1))
    code, _, err = run(capsys, "plan", bad, "--root", "fs0")
    assert code == 2 and "bad.xml, line" in err and "unit" in err
    code, _, err = run(capsys, "plan", GRIDLAB, "--root", "fs0", "--level", "hosts")
    assert code == 2 and "host-pair" in err
    code, _, err = run(capsys, "plan", tmp_path, "--root", "fs0")     # a dataset's directory
    assert code == 2 and "plan reads a Gauge file" in err and "export" in err


def test_gauge_export_warns_of_links_its_cluster_pairs_share() -> None:
    from tomography.export.bandwidth import shared_links
    from tomography.model.hierarchy import Hierarchy

    # four clusters in two sites: the four pairs across the sites share the one link between
    h = Hierarchy.from_partitions(list("abcdefgh"), [[0, 0, 1, 1, 2, 2, 3, 3],
                                                     [0, 0, 0, 0, 1, 1, 1, 1]])
    (note,) = shared_links(h, 1)
    assert "4 cluster pairs of level 1" in note and "export --level 2" in note
    assert shared_links(h, 2) == []      # the top level: nothing above to share
    two = Hierarchy.from_partitions(list("abcd"), [[0, 0, 1, 1], [0, 0, 1, 1]])
    assert shared_links(two, 1) == []    # one cluster per parent: each link its own pair


def test_export_says_when_the_datasets_figures_are_of_other_clusters(four_by_16: Path,
                                                                     tmp_path: Path,
                                                                     capsys) -> None:
    import shutil

    from tomography.model.dataset.figures import FIGURE_COLUMNS, FiguresWriter
    from tomography.model.dataset.incremental import MeasurementWriter

    data = tmp_path / "d"
    shutil.copytree(four_by_16, data)
    figures = data / "figures"          # figures of two hosts alone, not of the 4 clusters
    MeasurementWriter(figures, {"method": "iperf3", "launcher": "local",
                                "figures": {"clusters": {"a": ["ca-00"], "b": ["cb-00"]}}},
                      [("ca-00", "127.0.0.1", ""), ("cb-00", "127.0.0.2", "")],
                      probes=True).close()
    writer = FiguresWriter(figures)
    writer.add(dict(zip(FIGURE_COLUMNS, [0, 0, "pair", "a", "ca-00", "cb-00", "a", "b", 1e7,
                                         2e6, 2.0, ""])))
    writer.close()
    code, _, err = run(capsys, "export", data, "--format", "gauge", "-o", tmp_path / "g.xml")
    assert code == 0
    assert "rates from the topology, not from the dataset's figures: they are of 2 other" in err
