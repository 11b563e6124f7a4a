"""The CLI end to end on datasets in temporary directories."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import SMALL, write_files
from tomography.cli import main
from tomography.model.dataset import read_measurement


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_info(capsys, hierarchy_dataset: Path) -> None:
    code, out, _ = run(capsys, "info", hierarchy_dataset, "--format", "json")
    info = json.loads(out)
    assert code == 0 and info["hosts"] == 144 and info["iterations"] == 6
    assert info["method"] == "synthetic" and info["complete_iterations"] == 6
    code, out, _ = run(capsys, "info", hierarchy_dataset)
    assert "144" in out and "iterations" in out


def test_cluster_json(capsys, hierarchy_dataset: Path) -> None:
    code, out, _ = run(capsys, "cluster", hierarchy_dataset, "--format", "json", "--seed", "1")
    data = json.loads(out)
    assert code == 0 and len(data["clusters"]) == 3
    assert sorted(len(c["hosts"]) for c in data["clusters"]) == [48, 48, 48]
    assert {c["id"] for c in data["clusters"]} == {"C0", "C1", "C2"}
    assert 0 < data["modularity"] < 1
    code, out2, _ = run(capsys, "cluster", hierarchy_dataset, "--format", "json",
                        "--engine", "louvain", "--seed", "1")
    assert [c["hosts"] for c in json.loads(out2)["clusters"]] == [c["hosts"] for c in data["clusters"]]


@pytest.mark.slow  # over 2 s
def test_hierarchy_json_levels(capsys, hierarchy_dataset: Path) -> None:
    code, out, _ = run(capsys, "hierarchy", hierarchy_dataset, "--format", "json")
    data = json.loads(out)
    # the three equal sites paired into two is a tie, no level: hidden by default
    assert code == 0 and [lv["level"] for lv in data["levels"]] == [1, 2]
    level1, level2 = data["levels"]
    assert [len(lv["clusters"]) for lv in data["levels"]] == [9, 3]
    ids2 = {c["id"] for c in level2["clusters"]}
    assert all(c["parent"] in ids2 for c in level1["clusters"])
    assert all(c["parent"] is None for c in level2["clusters"])
    assert sum(len(c["hosts"]) for c in level1["clusters"]) == 144
    dropped = data["params"]["dropped_levels"]
    assert [d["clusters"] for d in dropped] == [2] and dropped[0]["separation"] < 1.3
    code, out, _ = run(capsys, "hierarchy", hierarchy_dataset, "--format", "json", "--all-levels")
    assert [len(lv["clusters"]) for lv in json.loads(out)["levels"]] == [9, 3, 2]


@pytest.mark.slow  # over 2 s
def test_hierarchy_text_formats(capsys, hierarchy_dataset: Path) -> None:
    _, hasse, _ = run(capsys, "hierarchy", hierarchy_dataset)
    assert "level 2" in hasse and "level 1" in hasse and hasse.index("level 2") < hasse.index("level 1")
    _, tree, _ = run(capsys, "hierarchy", hierarchy_dataset, "--format", "tree")
    assert tree.startswith("network (144 hosts)") and tree.count("L1C") == 9
    _, dot, _ = run(capsys, "hierarchy", hierarchy_dataset, "--format", "dot", "--linkage", "mean")
    assert dot.startswith("digraph hasse") and dot.count("->") == 9


@pytest.mark.slow  # over 2 s
def test_tree_json(capsys, hierarchy_dataset: Path) -> None:
    code, out, _ = run(capsys, "tree", hierarchy_dataset, "--format", "json")
    data = json.loads(out)
    assert code == 0 and len(data["nodes"]) == 3 and len(data["edges"]) == 2
    ids = {n["id"] for n in data["nodes"]}
    assert all(e["source"] in ids and e["target"] in ids and e["weight"] > 0 for e in data["edges"])
    _, text, _ = run(capsys, "tree", hierarchy_dataset)
    assert "maximum spanning tree of 3 clusters of level 2" in text
    assert "in blocks per iteration" in text  # the edge weights' unit
    _, dot, _ = run(capsys, "tree", hierarchy_dataset, "--format", "dot")
    assert dot.startswith("graph tree") and dot.count(" -- ") == 2


def test_a_tree_over_a_level_the_data_do_not_support_says_so(capsys, tmp_path: Path) -> None:
    """One group of hosts, nothing to find: Louvain still splits it, the level is at
    confidence 0.00, and the tree drawn over it carries a note saying it may be noise."""
    from tomography.model.dataset import write_measurement
    from tomography.model.synthetic import planted_partition

    write_measurement(planted_partition(24, 1, iterations=4, seed=0), tmp_path / "flat")
    code, out, err = run(capsys, "tree", tmp_path / "flat")
    assert code == 0 and "maximum spanning tree" in out
    assert "note: level 1 is not supported by the data (confidence 0.00, below 0.45)" in err
    _, _, err = run(capsys, "tree", tmp_path / "flat", "--level", "0")   # the hosts: no level
    assert "not supported" not in err


def test_errors_name_the_flag_and_what_to_give_instead(capsys, tmp_path: Path,
                                                        hierarchy_dataset: Path) -> None:
    """The command line's errors speak in its own terms: flags, files, commands."""
    gauge = tmp_path / "net.gauge.xml"
    gauge.write_text("<gauge/>")
    code, _, err = run(capsys, "info", gauge)
    assert code != 0 and "a Gauge file is read by tomography plan" in err
    with pytest.raises(SystemExit):
        run(capsys, "tree", hierarchy_dataset, "--level", "-1")
    err = capsys.readouterr().err
    assert "argument --level: must be a whole number >= 0" in err and "tree_level" not in err
    code, _, err = run(capsys, "export", hierarchy_dataset, "-f", "gauge", "--bandwidth",
                       "figures", "-o", tmp_path / "x.gauge.xml")
    assert code != 0 and f"{hierarchy_dataset / 'figures' / 'figures.csv'}: no figures" in err
    unlabelled = write_files(tmp_path / "unlabelled", {**SMALL, "hosts.csv": (
        "host,address\nc,10.0.0.3\na,10.0.0.1\nb,10.0.0.2\n")})
    code, _, err = run(capsys, "evaluate", unlabelled)
    assert code != 0 and "--truth FILE" in err


@pytest.mark.slow  # over 2 s
def test_tree_names_clusters_as_the_hierarchy(capsys, hierarchy_dataset: Path,
                                              tmp_path: Path) -> None:
    """One naming scheme: a tree's node is the hierarchy's cluster of the same id and hosts."""
    levels = json.loads(run(capsys, "hierarchy", hierarchy_dataset, "--format", "json")[1])
    clusters = {c["id"]: c["hosts"] for lv in levels["levels"] for c in lv["clusters"]}
    for level, size in (("1", 9), ("2", 3)):
        tree = json.loads(run(capsys, "tree", hierarchy_dataset, "--level", level,
                              "--format", "json")[1])
        assert len(tree["nodes"]) == size
        assert all(clusters[n["id"]] == n["hosts"] and n["id"].startswith(f"L{level}C")
                   for n in tree["nodes"])
    out = tmp_path / "topology.json"
    assert run(capsys, "export", hierarchy_dataset, "-f", "json", "-o", out)[0] == 0
    exported = json.loads(out.read_text())
    assert all(clusters[n["id"]] == n["hosts"] for n in exported["tree"]["nodes"])
    code, _, err = run(capsys, "tree", hierarchy_dataset, "--level", "5")
    assert code == 2 and "no level 5" in err


@pytest.mark.slow  # over 2 s
def test_evaluate(capsys, hierarchy_dataset: Path, tmp_path: Path) -> None:
    code, out, _ = run(capsys, "evaluate", hierarchy_dataset, "--format", "json")
    data = json.loads(out)
    assert code == 0 and [r["nmi"] for r in data["levels"]][:2] == [1.0, 1.0]
    assert [r["n"] for r in data["convergence"]] == [1, 2, 3, 4, 5, 6]
    # a truth file: only the site level, so level 1 (9 clusters) no longer matches exactly
    truth = tmp_path / "truth.csv"
    info = json.loads(run(capsys, "hierarchy", hierarchy_dataset, "--format", "json")[1])
    rows = [f"{h},site{c['id'][-1]}" for c in info["levels"][1]["clusters"] for h in c["hosts"]]
    truth.write_text("host,label\n" + "\n".join(rows) + "\n")
    code, out, _ = run(capsys, "evaluate", hierarchy_dataset, "--truth", truth)
    assert code == 0 and "NMI per hierarchy level" in out and "convergence" in out


def test_user_errors_are_one_line(capsys, tmp_path: Path) -> None:
    bad = write_files(tmp_path / "bad", SMALL | {"transfers.csv": SMALL["transfers.csv"] + "0,a,zz,1\n"})
    code, out, err = run(capsys, "cluster", bad)
    assert code == 2 and out == ""
    assert err.startswith("tomography: error: ") and err.count("\n") == 1
    assert "transfers.csv, line 9, field 'sender'" in err
    code, _, err = run(capsys, "evaluate", write_files(tmp_path / "nolabel", SMALL | {
        "hosts.csv": "host,address\na,1\nb,2\nc,3\n"}))
    assert code == 2 and "no ground truth" in err
    code, _, err = run(capsys, "cluster", write_files(tmp_path / "ok", SMALL), "-n", "5")
    assert code == 2 and "between 1 and 2" in err


@pytest.mark.slow  # over 2 s
def test_module_entry_point_and_help(tmp_path: Path) -> None:
    help_text = subprocess.run([sys.executable, "-m", "tomography", "--help"],
                               capture_output=True, text=True, check=True).stdout
    for command in ("info", "cluster", "hierarchy", "tree", "evaluate", "demo"):
        assert command in help_text
    done = subprocess.run([sys.executable, "-m", "tomography", "info", str(tmp_path / "none")],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr


@pytest.mark.slow  # over 2 s
def test_synthetic_and_demo(capsys, tmp_path: Path) -> None:
    code, out, _ = run(capsys, "synthetic", "-o", tmp_path / "s", "--branching", "2,2",
                       "--hosts-per-group", "6", "--iterations", "2")
    assert code == 0 and "24 hosts" in out
    assert json.loads((tmp_path / "s" / "meta.json").read_text())["method"] == "synthetic"
    code, out, _ = run(capsys, "demo", "-o", tmp_path / "demo", "--simulate", "-n", "2",
                       "--size", "2MiB")
    assert code == 0 and "SIMULATING" in out and "Hasse diagram" in out
    assert "no multicasts: they need the emulated network" in out
    h = json.loads((tmp_path / "demo" / "hierarchy.json").read_text())
    assert h["levels"][0]["clusters"]
    meta = json.loads((tmp_path / "demo" / "dataset" / "meta.json").read_text())
    assert meta["method"] == "simulated" and meta["topology"] == "two-sites-demo"
    # by default the simulated demo uses the testbed's 8 MiB broadcasts and its stop rule
    code, out, err = run(capsys, "demo", "-o", tmp_path / "demo", "--simulate", "-n", "2")
    meta = json.loads((tmp_path / "demo" / "dataset" / "meta.json").read_text())
    assert code == 0 and meta["params"]["file_size"] == 8 * 2**20
    assert "simulated broadcasts of 8MiB" in out and "stop rule after 2 iterations" in err


@pytest.mark.slow  # over 2 s
def test_dot_is_one_statement_per_line(capsys, hierarchy_dataset: Path) -> None:
    for command in ("hierarchy", "tree"):
        _, dot, _ = run(capsys, command, hierarchy_dataset, "--format", "dot")
        for line in dot.splitlines()[1:-1]:
            assert line.rstrip().endswith((";", "}", "{")), line
        assert '\\n' in dot  # Graphviz line break inside labels, escaped


@pytest.mark.skipif(shutil.which("dot") is None,
                    reason="Graphviz 'dot' is not installed (scripts/setup.sh installs it)")
@pytest.mark.slow  # over 2 s
def test_graphviz_renders_the_dot(capsys, hierarchy_dataset: Path, tmp_path: Path) -> None:
    for command in ("hierarchy", "tree"):
        _, dot, _ = run(capsys, command, hierarchy_dataset, "--format", "dot")
        done = subprocess.run(["dot", "-Tsvg"], input=dot, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        nodes = [ln for ln in dot.splitlines() if "[label=" in ln and " -" not in ln]
        assert done.stdout.count('class="node"') == len(nodes) > 0


def test_truth_command(capsys) -> None:
    code, out, _ = run(capsys, "truth", "N1")
    assert code == 0 and "R9-R13" in out and "acceptable" in out
    code, out, _ = run(capsys, "truth", "N2", "--format", "json")
    data = json.loads(out)
    assert data["hosts"] == 576 and len(data["links"]) == 8
    sevens = [p for p in data["partitions"] if len(p["clusters"]) == 7]
    assert sevens and sevens[0]["acceptable"]
    code, _, err = run(capsys, "truth", "emulated-4x16-fast")
    assert code == 2 and "needs a tree" in err
    code, _, err = run(capsys, "truth", "no-such-net")
    assert code == 2 and "built-in" in err


def test_simulate_resume_and_analyse(capsys, tmp_path: Path) -> None:
    out_dir = tmp_path / "sim"
    code, out, _ = run(capsys, "simulate", "tree-5", "-n", "2", "--size", "1MiB", "-o", out_dir)
    assert code == 0 and "2 simulated iterations" in out
    code, _, err = run(capsys, "simulate", "tree-5", "-n", "2", "--size", "1MiB", "-o", out_dir)
    assert code == 2 and "exists" in err
    code, _, _ = run(capsys, "simulate", "tree-5", "-n", "3", "--size", "1MiB", "-o", out_dir,
                     "--resume")
    info = json.loads(run(capsys, "info", out_dir, "--format", "json")[1])
    assert info["iterations"] == 3 and info["method"] == "simulated"
    assert info["params"]["tit_for_tat"] is True and info["params"]["peer_list"] == 35
    code, _, err = run(capsys, "simulate", "tree-5", "-n", "4", "--size", "2MiB", "-o", out_dir,
                       "--resume")
    assert code == 2 and "cannot resume" in err and "(set by --size)" in err
    code, _, err = run(capsys, "simulate", "tree-5", "-o", out_dir, "--size", "12")
    assert code == 2 and "unit" in err
    code, out, _ = run(capsys, "tree", out_dir, "--level", "0", "--format", "json")
    assert code == 0 and len(json.loads(out)["edges"]) == 4


def test_time_box_and_block_quota_are_parsed_recorded_and_refused_when_bad(capsys, tmp_path: Path) -> None:
    code, _, _ = run(capsys, "simulate", "tree-5", "-n", "2", "--size", "4MiB", "-o",
                     tmp_path / "boxed", "--time-box", "250ms")
    m = read_measurement(tmp_path / "boxed")
    assert code == 0 and m.meta["params"]["time_box"] == 0.25
    assert m.iterations["complete"].all() and (m.iterations["duration_s"] <= 0.25 + 1e-6).all()
    code, _, _ = run(capsys, "simulate", "tree-5", "-n", "1", "--size", "1MiB", "-o",
                     tmp_path / "whole", "--time-box", "off")
    assert code == 0 and read_measurement(tmp_path / "whole").meta["params"]["time_box"] is None
    code, _, err = run(capsys, "simulate", "tree-5", "-o", tmp_path / "x", "--time-box", "0s")
    assert code == 2 and "--time-box must be positive" in err
    code, _, err = run(capsys, "simulate", "tree-5", "-o", tmp_path / "x", "--time-box", "soon")
    assert code == 2 and "--time-box" in err
    code, _, _ = run(capsys, "simulate", "tree-5", "-n", "1", "--size", "4MiB", "-o",
                     tmp_path / "quota", "--block-quota", "32")
    m = read_measurement(tmp_path / "quota")
    assert code == 0 and m.meta["params"]["block_quota"] == 32
    assert m.transfers.groupby("receiver")["blocks"].sum().min() >= 32
    for bad in ("0", "1.5", "lots"):
        code, _, err = run(capsys, "simulate", "tree-5", "-o", tmp_path / "x",
                           "--block-quota", bad)
        assert code == 2 and "--block-quota" in err
    with pytest.raises(SystemExit):
        main(["measure", "bittorrent", "--help"])
    assert "(default 128, 2 MiB" in " ".join(capsys.readouterr().out.split())


def test_simulate_records_how_its_roots_were_chosen(capsys, tmp_path: Path) -> None:
    from measure.swarm import root_order

    code, _, _ = run(capsys, "simulate", "tree-5", "-n", "3", "--size", "1MiB", "-o",
                     tmp_path / "spread")
    m = read_measurement(tmp_path / "spread")
    assert code == 0 and m.meta["params"]["roots"] == "spread"
    code, _, _ = run(capsys, "simulate", "tree-5", "-n", "3", "--size", "1MiB", "-o",
                     tmp_path / "random", "--roots", "random", "--seed", "4")
    m = read_measurement(tmp_path / "random")
    assert code == 0 and m.meta["params"]["roots"] == "random"
    assert list(m.iterations["root"]) == root_order(sorted(m.host_names), 4)[:3]
    with pytest.raises(SystemExit) as exit_info:
        main(["simulate", "tree-5", "-o", str(tmp_path / "x"), "--roots", "far"])
    assert exit_info.value.code == 2 and "--roots" in capsys.readouterr().err


def test_simulate_tcp_mechanisms_switched_off_and_recorded(capsys, tmp_path: Path) -> None:
    out_dir = tmp_path / "sim"
    code, _, _ = run(capsys, "simulate", "tree-5", "-n", "1", "--size", "1MiB", "-o", out_dir,
                     "--tcp-off", "slow-start,rtt-fair", "--loss", "1e-5")
    tcp = json.loads((out_dir / "meta.json").read_text())["params"]["tcp"]
    assert code == 0 and tcp["slow_start"] is False and tcp["rtt_fair"] is False
    assert tcp["request_pipeline"] is True and tcp["loss"] == 1e-5
    code, _, _ = run(capsys, "simulate", "tree-5", "-n", "2", "--size", "1MiB", "-o", out_dir,
                     "--resume")     # the model differs: refused, nothing mixed
    assert code == 2
    code, _, _ = run(capsys, "simulate", "tree-5", "-n", "1", "--size", "1MiB", "-o", out_dir,
                     "--tcp-off", "all", "--force")
    tcp = json.loads((out_dir / "meta.json").read_text())["params"]["tcp"]
    assert tcp["receive_window"] is None and tcp["slow_start"] is False
    code, _, err = run(capsys, "simulate", "tree-5", "-o", out_dir, "--tcp-off", "nagle")
    assert code == 2 and "unknown mechanism 'nagle'" in err


@pytest.mark.slow  # over 2 s
def test_evaluate_says_when_it_leaves_levels_out(capsys, tmp_path: Path) -> None:
    out_dir = tmp_path / "sim"
    assert run(capsys, "simulate", "four-sites", "-n", "3", "--size", "4MiB", "-o",
               out_dir)[0] == 0
    shown = json.loads(run(capsys, "evaluate", out_dir, "--format", "json")[1])["levels"]
    every = json.loads(run(capsys, "evaluate", out_dir, "--format", "json",
                           "--all-levels")[1])["levels"]
    _, out, _ = run(capsys, "evaluate", out_dir)
    left_out = len(every) - len(shown)
    assert left_out > 0                   # 3 short broadcasts: a level without support
    assert ("unsupported level" in out) == (left_out > 0)
    assert ("may number the levels differently" in out) == (left_out > 0)


def test_bad_broadcast_options_are_named(capsys, tmp_path: Path) -> None:
    for option, value, says in (("--size", "4", "--size: a size needs its unit"),
                                ("--time-limit", "60", "--time-limit: a time needs its unit"),
                                ("--time-limit", "0s", "--time-limit must be positive"),
                                ("--unchoke-interval", "0s", "--unchoke-interval must be"),
                                ("--piece-size", "1000B", "--piece-size must be a positive "
                                                          "multiple of 16384")):
        code, _, err = run(capsys, "simulate", "tree-5", "-o", tmp_path / "x", option, value)
        assert code == 2 and says in err and err.count("\n") == 1, err
    code, _, err = run(capsys, "demo", "--simulate", "--size", "3", "-o", tmp_path / "x")
    assert code == 2 and "--size: a size needs its unit" in err
    assert not (tmp_path / "x").exists()


def test_simulate_says_what_it_added_and_what_went_wrong(capsys, tmp_path: Path) -> None:
    out_dir = tmp_path / "sim"
    args = ("simulate", "tree-5", "--size", "1MiB", "-o", out_dir)
    code, out, err = run(capsys, *args, "-n", "1", "--resume")     # nothing there yet
    assert code == 0 and "wrote 1 simulated iteration of" in out and "(5 hosts)" in out
    assert f"note: no dataset in {out_dir} to resume: starting a new one" in err
    code, out, _ = run(capsys, *args, "-n", "3", "--resume")
    assert code == 0 and "wrote 2 simulated iterations" in out and "(3 in all)" in out
    code, out, _ = run(capsys, *args, "-n", "2", "--resume")
    assert code == 0 and "already has 3 iterations: nothing to simulate" in out
    code, _, err = run(capsys, *args, "-n", "4", "--resume", "--tcp", "receive-window=1MiB")
    assert code == 2 and "tcp.receive_window (3145728; this command: 1048576)" in err
    code, _, err = run(capsys, *args, "-n", "2", "--force", "--time-limit", "10ms")
    assert code == 0 and "2 iterations of 2 hit the time limit (10ms)" in err
    code, _, err = run(capsys, "cluster", out_dir)
    assert code == 0 and "note: 2 of 2 iterations are incomplete" in err


def test_simulate_tcp_figures_set_and_recorded(capsys, tmp_path: Path) -> None:
    out_dir = tmp_path / "sim"
    code, _, _ = run(capsys, "simulate", "tree-5", "-n", "1", "--size", "1MiB", "-o", out_dir,
                     "--tcp", "receive-window=64KiB", "--tcp", "rto-min=1s",
                     "--tcp", "max-requests=50", "--tcp", "queue-delay=0s")
    tcp = json.loads((out_dir / "meta.json").read_text())["params"]["tcp"]
    assert code == 0 and tcp["receive_window"] == 65536 and tcp["rto_min"] == 1.0
    assert tcp["queue_delay"] == 0.0
    assert tcp["max_requests"] == 50 and tcp["initial_window"] == 14480    # the rest default
    for bad, says in (("window=1", "NAME one of initial-window"),
                      ("rto-min=1", "rto-min takes a time"),
                      ("initial-window=ten", "initial-window takes a size"),
                      ("min-requests=0", "min-requests must be positive"),
                      ("queue-delay=-5ms", "queue-delay"),
                      ("max-requests=2.5", "max-requests takes a whole number"),
                      ("min-requests=600", "min-requests (600) is above max-requests (500)")):
        code, _, err = run(capsys, "simulate", "tree-5", "-o", tmp_path / "x", "--tcp", bad)
        assert code == 2 and says in err and err.count("\n") == 1, err
    assert not (tmp_path / "x").exists()
    code, _, err = run(capsys, "simulate", "tree-5", "-o", tmp_path / "x", "--tcp",
                       "receive-window=1MiB", "--tcp-off", "receive-window")
    assert code == 2 and "--tcp-off switches off" in err


def test_testbed_refuses_clearly_without_root(capsys, monkeypatch) -> None:
    monkeypatch.setattr("os.geteuid", lambda: 1000)
    code, _, err = run(capsys, "testbed", "up", "two-sites-demo", "--name", "nr")
    assert code == 2 and "root" in err and err.count("\n") == 1
    code, out, _ = run(capsys, "testbed", "status", "--name", "nosuch")
    assert code == 1 and "down" in out


def test_testbed_up_refuses_more_than_the_machine_carries(capsys, monkeypatch,
                                                          tmp_path: Path) -> None:
    from measure.testbed import lifecycle, names, resources

    monkeypatch.setattr(lifecycle, "require", lambda tools: None)  # refused before anything runs
    monkeypatch.setattr(names, "STATE_DIR", tmp_path / "run")
    monkeypatch.setattr(names, "NETNS_DIR", tmp_path / "netns")
    monkeypatch.setattr(resources, "machine", lambda: resources.Machine(2, 16 * 2**30))
    code, _, err = run(capsys, "testbed", "up", "N1", "--name", "wtb5")
    assert code == 2 and err.count("\n") == 1 and "527 namespaces, 512 peers" in err
    assert "--hosts-per-cluster 2 --bandwidth-scale 0.38" in err and "--force" in err
    code, _, err = run(capsys, "measure", "bittorrent", "--testbed", "N1", "--name", "wtb5",
                       "-o", tmp_path / "out")
    assert code == 2 and "more than this machine can carry" in err
    assert not (tmp_path / "out").exists() and not (tmp_path / "netns").exists()


def test_measure_names_a_bad_hosts_file(capsys, tmp_path: Path) -> None:
    code, _, err = run(capsys, "measure", "bittorrent", "--hosts", tmp_path / "none.csv",
                       "-o", tmp_path / "out")
    assert code == 2 and "none.csv" in err
    bad = tmp_path / "bad.csv"
    bad.write_text("host,address\na,127.0.0.2\na,127.0.0.3\n")
    code, _, err = run(capsys, "measure", "bittorrent", "--hosts", bad, "-o", tmp_path / "out")
    assert code == 2 and "duplicate host" in err and "line 3" in err


@pytest.mark.slow  # over 2 s
def test_truth_marks_what_bandwidth_alone_cannot_reveal(capsys, tmp_path: Path) -> None:
    import yaml

    from tests.tomography.test_ground_truth import chain

    topo = tmp_path / "chain.yaml"
    topo.write_text(yaml.safe_dump(chain("1Gbit/s")))      # A-B: 3x a NIC's share
    code, out, _ = run(capsys, "truth", topo)
    assert code == 0 and "beyond share" in out and "125Mbit/s = the smallest NIC" in out
    assert "tomography evaluate says which truth levels the broadcasts set apart" in out
    data = json.loads(run(capsys, "truth", topo, "--format", "json")[1])
    finest = [p for p in data["partitions"] if len(p["clusters"]) == 4][0]
    assert not finest["observable"] and not finest["acceptable"]
    data = json.loads(run(capsys, "truth", topo, "--host-connections", "1", "--format", "json")[1])
    assert [p for p in data["partitions"] if len(p["clusters"]) == 4][0]["acceptable"]
    code, _, err = run(capsys, "truth", topo, "--min-gap", "0.5")
    assert code == 2 and "--min-gap is a ratio of bandwidths, at least 1" in err
    code, out, _ = run(capsys, "truth", "two-sites-rtt")    # only latency tells the sites apart
    assert "link A-B gives a connection at least a whole NIC" in out and "round trip" in out
    code, out, _ = run(capsys, "truth", "tree-5")    # 5 hosts: 4 connections, not 8
    assert "250Mbit/s = the smallest NIC over 4 connections per host, 8 capped at the 4 " \
           "other hosts" in out


@pytest.mark.slow  # over 2 s
def test_evaluate_judges_on_the_data_which_truth_levels_show(capsys, tmp_path: Path) -> None:
    from tomography.model.dataset import write_measurement
    from tomography.model.synthetic import planted_hierarchy

    m = planted_hierarchy((2, 2), 10, iterations=4, seed=1)
    out_dir = tmp_path / "planted"
    write_measurement(m, out_dir)
    # a truth one level deeper than the data: each leaf group cut in two halves
    truth = tmp_path / "truth.csv"
    rows = [f"{h},{m.labels[h]}/{i % 2}" for i, h in enumerate(m.host_names)]
    truth.write_text("host,label\n" + "\n".join(rows) + "\n")
    data = json.loads(run(capsys, "evaluate", out_dir, "--truth", truth, "--format", "json")[1])
    seen = data["observability"]
    assert seen["min_separation"] == 1.3
    assert [(d["truth_clusters"], d["shown_clusters"]) for d in seen["hidden"]] == [(8, 4)]
    finest = [lv for lv in data["levels"] if lv["truth_clusters"] == 8][0]
    assert finest["observable"] is False and finest["truth_separation"] < 1.3
    assert finest["nmi_observable"] == pytest.approx(1.0)     # the 4 groups the data hold
    code, out, err = run(capsys, "evaluate", out_dir, "--truth", truth, "--topology", "N1")
    assert code == 0 and "(8 clusters) is not set apart by these broadcasts" in out
    assert "at most 4 clusters" in out and "--topology and --host-connections are no longer" in err
    code, out, _ = run(capsys, "evaluate", out_dir)
    assert "every truth level is set apart by these broadcasts" in out


@pytest.mark.slow  # over 2 s
def test_a_file_that_cannot_be_written_is_one_line(capsys, hierarchy_dataset: Path,
                                                   tmp_path: Path) -> None:
    target = tmp_path / "missing" / "dir" / "topology.json"
    code, _, err = run(capsys, "export", hierarchy_dataset, "--format", "json", "-o", target)
    assert code == 2 and err == f"tomography: error: {target}: No such file or directory\n"


def test_a_single_host_and_an_all_zero_dataset_say_what_is_wrong(capsys, tmp_path: Path) -> None:
    one = write_files(tmp_path / "one", SMALL | {
        "hosts.csv": "host,address,label\na,1,s1\n",
        "transfers.csv": "iteration,receiver,sender,blocks\n",
        "iterations.csv": "iteration,root,bytes,duration_s,complete\n0,a,16384,1,true\n"})
    code, _, err = run(capsys, "cluster", one)
    assert code == 2 and "hosts.csv: 1 host(s) listed: a measurement needs at least two" in err
    zero = write_files(tmp_path / "zero", SMALL | {
        "transfers.csv": "iteration,receiver,sender,blocks\n0,b,a,0\n1,a,c,0\n"})
    for command in ("cluster", "hierarchy", "tree", "evaluate"):
        code, _, err = run(capsys, command, zero)
        assert code == 2 and "transfers.csv, field 'blocks': every block count is 0" in err
