"""The MPI hierarchy: communicators, leaders, rank order, schedule, host files, the example."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tomography.model.errors import TomographyError
from tomography.export.mpi import (FORMAT, check_mpi_hierarchy, hostfile, mpi_flavor,
                                   mpi_hierarchy, rank_order, rankfile, read_mpi_hierarchy,
                                   write_mpi_hierarchy)
from tomography.model.hierarchy import Cluster, Hierarchy
from tomography.planning import broadcast_schedule

from ..conftest import mpiexec

EXAMPLE = Path(__file__).parents[2] / "docs" / "examples" / "hierarchical_bcast.py"

# Cluster labels that do not follow host names: level 1 {a, c} {b, e} {d, f} {g, h},
# level 2 {a, c, d, f} {b, e, g, h}.
INTERLEAVED = Hierarchy.from_partitions(list("abcdefgh"), [[0, 1, 0, 2, 1, 2, 3, 3],
                                                          [0, 1, 0, 0, 1, 0, 1, 1]])


def check_document(doc: dict, h: Hierarchy, root: str, slots: dict[str, int]) -> None:
    """Everything the format promises, checked against the hierarchy itself."""
    assert doc["format"] == FORMAT and sorted(doc["hosts"]) == h.hosts
    size = sum(slots.values())
    assert doc["size"] == size == len(doc["rank_hosts"])
    ranks_of = {x: [r for r, y in enumerate(doc["rank_hosts"]) if y == x] for x in h.hosts}
    for x, mine in ranks_of.items():       # a host's ranks are consecutive, from "ranks"
        assert mine == list(range(doc["ranks"][x], doc["ranks"][x] + slots[x]))
    assert doc["root"] == {"host": root, "rank": doc["ranks"][root]}
    assert len(doc["levels"]) == h.depth
    for number, (level, clusters) in enumerate(zip(doc["levels"], h.levels), start=1):
        assert level["level"] == number
        colours = level["colours"]
        assert len(colours) == size and all(isinstance(c, int) for c in colours)
        # clusters numbered in rank order: colours never decrease, start at 0, step by 1
        assert colours[0] == 0 and all(b - a in (0, 1) for a, b in zip(colours, colours[1:]))
        assert max(colours) + 1 == len(clusters) == len(level["clusters"])
        by_id = {c["id"]: c for c in level["clusters"]}
        for cluster in clusters:
            ranks = sorted(r for x in cluster.hosts for r in ranks_of[x])
            assert ranks == list(range(ranks[0], ranks[-1] + 1))       # contiguous
            entry = by_id[cluster.id]
            assert {colours[r] for r in ranks} == {entry["colour"]}
            assert entry["hosts"] == sorted(cluster.hosts, key=doc["ranks"].__getitem__)
            assert entry["ranks"] == [ranks[0], ranks[-1]]
            assert entry["leader"] in ranks                            # leaders are members
            expected = doc["ranks"][root] if root in cluster.hosts else ranks[0]
            assert entry["leader"] == expected
            assert doc["rank_hosts"][entry["leader"]] == (root if root in cluster.hosts
                                                          else cluster.hosts[0])
        leaders = {c["leader"] for c in level["clusters"]}
        above = doc["levels"][number]["colours"] if number < h.depth else [0] * size
        assert level["leaders"] == [above[r] if r in leaders else None for r in range(size)]
        roots = ([c["leader"] for c in doc["levels"][number]["clusters"]] if number < h.depth
                 else [doc["root"]["rank"]])
        assert level["leaders_roots"] == roots
        for colour, root_rank in enumerate(roots):                     # roots are members
            assert level["leaders"][root_rank] == colour
    assert check_mpi_hierarchy(doc) is doc


def deliveries(doc: dict) -> dict[int, int]:
    """Run the schedule: rank -> the step it received in; fails on a send without data."""
    got = {doc["root"]["rank"]: 0}
    for step in doc["schedule"]:
        fresh = {}
        for send in step["sends"]:
            assert send["from_rank"] in got, f"step {step['step']}: sender has no data"
            assert send["from"] == doc["rank_hosts"][send["from_rank"]]
            assert send["to"] == [doc["rank_hosts"][r] for r in send["to_ranks"]]
            for r in send["to_ranks"]:
                assert r not in got and r not in fresh, f"rank {r} receives twice"
                fresh[r] = step["step"]
        got.update(fresh)
    return got


# --------------------------------------------------------------------------- the document


@pytest.mark.parametrize("root", [None, "h000", "h017", "h035"])
def test_inferred_hierarchy(inferred, root):
    doc = mpi_hierarchy(inferred, root_host=root)
    root = root or "h000"
    check_document(doc, inferred, root, {x: 1 for x in inferred.hosts})
    assert doc["hosts"] == inferred.hosts          # planted groups follow host names
    assert len(deliveries(doc)) == doc["size"]
    assert doc["params"]["root_host"] == root and doc["params"]["slots"] == 1
    assert doc["params"]["hierarchy"]["seed"] == inferred.params["seed"]
    json.dumps(doc)                                # JSON-ready


@pytest.mark.parametrize("root", list("abcdefgh"))
def test_interleaved_names(root):
    doc = mpi_hierarchy(INTERLEAVED, root_host=root)
    assert doc["hosts"] == list("acdfbegh") == rank_order(INTERLEAVED)
    check_document(doc, INTERLEAVED, root, {x: 1 for x in "abcdefgh"})
    assert doc["levels"][0]["colours"] == [0, 0, 1, 1, 2, 2, 3, 3]
    assert doc["levels"][1]["colours"] == [0, 0, 0, 0, 1, 1, 1, 1]


@pytest.mark.parametrize("h, root", [(None, "h013"), (INTERLEAVED, "f"), (INTERLEAVED, "a")])
def test_schedule_is_broadcast_schedule(inferred, h, root):
    h = h or inferred
    doc = mpi_hierarchy(h, root_host=root)
    as_hosts = [sorted((s["from"], s["to"]) for s in step["sends"]) for step in doc["schedule"]]
    assert as_hosts == [sorted((s, list(rs)) for s, rs in step)
                        for step in broadcast_schedule(h, root)]
    for step in doc["schedule"]:                   # ranks are the hosts' ranks
        for s in step["sends"]:
            assert s["from_rank"] == doc["ranks"][s["from"]]
            assert s["to_ranks"] == [doc["ranks"][x] for x in s["to"]]
    # level by level, top first, then inside the level-1 clusters
    kinds = [(step["level"], step["communicator"]) for step in doc["schedule"]]
    assert kinds == [(k, "leaders") for k in range(h.depth, 0, -1)] + [(1, "cluster")]
    assert [step["step"] for step in doc["schedule"]] == list(range(1, len(kinds) + 1))


def test_schedule_sends_within_the_communicators(inferred):
    doc = mpi_hierarchy(inferred, root_host="h022")
    for step in doc["schedule"]:
        level = doc["levels"][step["level"] - 1]
        colours = level["leaders"] if step["communicator"] == "leaders" else level["colours"]
        for s in step["sends"]:
            colour = colours[s["from_rank"]]
            assert colour is not None and all(colours[r] == colour for r in s["to_ranks"])
            if step["communicator"] == "leaders":
                assert level["leaders_roots"][colour] == s["from_rank"]


def test_slots_expand_hosts_into_consecutive_ranks(inferred):
    doc = mpi_hierarchy(inferred, root_host="h005", slots=3)
    check_document(doc, inferred, "h005", {x: 3 for x in inferred.hosts})
    assert doc["size"] == 108 and doc["slots"] == [3] * 36
    assert doc["rank_hosts"][:4] == ["h000", "h000", "h000", "h001"]
    got = deliveries(doc)
    assert sorted(got) == list(range(108))           # every rank, each exactly once
    # the root's host-mates get the data in the last step, from the root
    last = doc["schedule"][-1]
    assert last["communicator"] == "cluster"
    root_send = next(s for s in last["sends"] if s["from_rank"] == doc["root"]["rank"])
    mates = {r: x for r, x in zip(root_send["to_ranks"], root_send["to"]) if x == "h005"}
    assert mates == {16: "h005", 17: "h005"} and doc["root"]["rank"] == 15
    for step in doc["schedule"]:                     # sends listed by sender rank
        senders = [s["from_rank"] for s in step["sends"]]
        assert senders == sorted(senders)


def test_slots_per_host():
    slots = {"a": 2, "b": 1, "c": 4, "d": 1, "e": 1, "f": 3, "g": 1, "h": 2}
    doc = mpi_hierarchy(INTERLEAVED, root_host="e", slots=slots)
    check_document(doc, INTERLEAVED, "e", slots)
    assert doc["slots"] == [slots[x] for x in doc["hosts"]]
    assert doc["ranks"] == {"a": 0, "c": 2, "d": 6, "f": 7, "b": 10, "e": 11, "g": 12, "h": 13}
    assert sorted(deliveries(doc)) == list(range(15))
    assert doc["params"]["slots"] == {x: slots[x] for x in doc["hosts"]}


def test_cluster_hosts_in_rank_order():
    # level 1 {a, z} {b, c}: ranks a z b c, so level 2 lists its hosts in that order
    h = Hierarchy.from_partitions(["a", "b", "c", "z"], [[0, 1, 1, 0], [0, 0, 0, 0]])
    doc = mpi_hierarchy(h, root_host="c")
    check_document(doc, h, "c", {x: 1 for x in "abcz"})
    assert doc["hosts"] == ["a", "z", "b", "c"]
    assert doc["levels"][1]["clusters"][0]["hosts"] == ["a", "z", "b", "c"]


def test_large_random_hierarchy():
    import numpy as np

    n = 512
    hosts = [f"n{i:04d}" for i in range(n)]
    leaf = np.random.default_rng(5).permutation(n) // 8
    h = Hierarchy.from_partitions(hosts, [leaf, leaf // 8, leaf // 32])
    slots = {x: 1 + i % 3 for i, x in enumerate(hosts)}
    doc = mpi_hierarchy(h, root_host="n0333", slots=slots)
    check_document(doc, h, "n0333", slots)
    assert sorted(deliveries(doc)) == list(range(doc["size"]))


def test_degenerate_hierarchies():
    one = Hierarchy.from_partitions(["x", "y", "z"], [[0, 0, 0]])
    doc = mpi_hierarchy(one, root_host="y")
    check_document(doc, one, "y", {"x": 1, "y": 1, "z": 1})
    assert [(s["level"], s["communicator"]) for s in doc["schedule"]] == [(1, "cluster")]
    alone = Hierarchy.from_partitions(["x", "y", "z"], [[0, 1, 2]])
    doc = mpi_hierarchy(alone)
    check_document(doc, alone, "x", {"x": 1, "y": 1, "z": 1})
    assert [(s["level"], s["communicator"]) for s in doc["schedule"]] == [(1, "leaders")]
    assert mpi_hierarchy(Hierarchy.from_partitions(["x"], [[0]]))["schedule"] == []
    assert len(deliveries(mpi_hierarchy(alone, slots=2))) == 6


def test_input_errors(inferred):
    with pytest.raises(TomographyError, match="unknown root host 'nope'; the hierarchy has 36"):
        mpi_hierarchy(inferred, root_host="nope")
    with pytest.raises(TomographyError, match="slots of host 'h000' must be a positive integer"):
        mpi_hierarchy(inferred, slots=0)
    with pytest.raises(TomographyError, match="slots names host 'zz', which the hierarchy"):
        mpi_hierarchy(INTERLEAVED, slots={**{x: 1 for x in "abcdefgh"}, "zz": 1})
    with pytest.raises(TomographyError, match="slots gives no count for host 'h'"):
        hostfile(INTERLEAVED, slots={x: 1 for x in "abcdefg"})
    with pytest.raises(TomographyError, match="expected a Hierarchy"):
        rankfile({"a": ["a1"]})
    # levels that do not nest, or a parent that does not list its children
    split = Hierarchy([[Cluster("L1C0", 1, ("a", "b")), Cluster("L1C1", 1, ("c",))],
                       [Cluster("L2C0", 2, ("a",), ("L1C0",)),
                        Cluster("L2C1", 2, ("b", "c"), ("L1C1",))]])
    with pytest.raises(TomographyError, match="cluster 'L1C0' of level 1 is split between "
                                              "clusters L2C0, L2C1 of level 2"):
        mpi_hierarchy(split)
    orphan = Hierarchy([[Cluster("L1C0", 1, ("a",)), Cluster("L1C1", 1, ("b",))],
                        [Cluster("L2C0", 2, ("a", "b"), ("L1C0",))]])
    with pytest.raises(TomographyError, match=r"cluster 'L2C0' of level 2 lists children "
                                              r"\['L1C0'\], but holds"):
        mpi_hierarchy(orphan)


# --------------------------------------------------------------------------- files


def test_round_trip(inferred, tmp_path):
    path = tmp_path / "topo.mpi.json"
    write_mpi_hierarchy(inferred, path, root_host="h030", slots=2)
    back = read_mpi_hierarchy(path)
    assert back == json.loads(json.dumps(mpi_hierarchy(inferred, root_host="h030", slots=2)))
    assert back["root"] == {"host": "h030", "rank": 60}


def tamper(doc: dict, where: str, value) -> dict:
    *path, last = re.findall(r"[^.\[\]]+", where)
    node = doc
    for key in path:
        node = node[int(key)] if isinstance(node, list) else node[key]
    if isinstance(node, list):
        node[int(last)] = value
    elif value is KeyError:
        del node[last]
    else:
        node[last] = value
    return doc


@pytest.mark.parametrize("where, value, message", [
    ("format", "tomography-mpi/0", r"field 'format': unsupported 'tomography-mpi/0'"),
    ("hosts", KeyError, r"field 'hosts': missing"),
    ("size", 7, r"field 'size': is 7, but the slots add up to 8"),
    ("slots.2", 0, r"field 'slots\[2\]': must be an integer in 1..65536, got 0"),
    ("ranks.d", 5, r"field 'ranks.d': must be 2"),
    ("rank_hosts.3", "a", r"field 'rank_hosts\[3\]': disagrees"),
    ("root.host", "zz", r"field 'root.host': unknown host 'zz'"),
    ("root.rank", 0, r"field 'root.rank': must be 4, the first rank of 'b'"),
    ("levels.0.level", 2, r"field 'levels\[0\].level': must be 1"),
    ("levels.1.colours.5", 0, r"field 'levels\[1\].colours\[5\]': rank 5 has colour 0"),
    ("levels.0.colours.1", "x", r"field 'levels\[0\].colours\[1\]': must be an integer"),
    ("levels.0.clusters.1.ranks", [3, 3], r"field 'levels\[0\].clusters\[1\].ranks': must "
                                          r"start at rank 2"),
    ("levels.0.clusters.1.hosts", ["d"], r"field 'levels\[0\].clusters\[1\].hosts': must be"),
    ("levels.0.clusters.2.leader", 5, r"field 'levels\[0\].clusters\[2\].leader': must be 4"),
    ("levels.0.clusters.0.leader", 9, r"rank 9 is not in the cluster"),
    ("levels.0.leaders.1", 0, r"field 'levels\[0\].leaders\[1\]': must be None: rank 1 leads "
                              r"no cluster of level 1"),
    ("levels.0.leaders.2", 1, r"field 'levels\[0\].leaders\[2\]': must be 0"),
    ("levels.1.leaders_roots", [0], r"field 'levels\[1\].leaders_roots': must be \[4\]"),
    ("schedule.0.sends.0.from_rank", 1, r"field 'schedule\[0\].sends\[0\].from_rank': rank 1 "
                                        r"does not hold the data"),
    ("schedule.2.sends.0.to_ranks", [1, 4], r"field 'schedule\[2\].sends\[0\].to_ranks': "
                                            r"rank 4 receives twice"),
    ("schedule.2.sends.1.to_ranks", [], r"field 'schedule\[2\].sends\[1\]': host names"),
    ("schedule.2.communicator", "world", r"field 'schedule\[2\].communicator'"),
    ("params", [], r"field 'params': must be an object"),
])
def test_read_errors_name_the_field(tmp_path, where, value, message):
    doc = tamper(mpi_hierarchy(INTERLEAVED, root_host="b"), where, value)
    path = tmp_path / "bad.mpi.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(TomographyError, match=message) as info:
        read_mpi_hierarchy(path)
    assert str(info.value).startswith(f"{path}: ")


def test_read_errors_schedule_and_file(tmp_path):
    doc = mpi_hierarchy(INTERLEAVED, root_host="b")
    doc["schedule"][-1]["sends"].pop()
    with pytest.raises(TomographyError, match=r"field 'schedule': rank \d+ never receives"):
        check_mpi_hierarchy(doc)
    (tmp_path / "x.json").write_text("{")
    with pytest.raises(TomographyError, match="not valid JSON"):
        read_mpi_hierarchy(tmp_path / "x.json")
    with pytest.raises(TomographyError, match="missing file"):
        read_mpi_hierarchy(tmp_path / "absent.json")
    with pytest.raises(TomographyError, match="is a JSON object"):
        check_mpi_hierarchy([])


def test_hostfiles(inferred):
    doc = mpi_hierarchy(inferred, slots=4)
    text = hostfile(inferred, slots=4, flavor="openmpi")
    lines = text.splitlines()
    assert text.endswith("\n") and len(lines) == 36
    assert all(re.fullmatch(r"[^\s#=]+ slots=4", line) for line in lines)
    assert [line.split()[0] for line in lines] == doc["hosts"]
    mpich = hostfile(INTERLEAVED, slots={x: 1 + (x in "ce") for x in "abcdefgh"},
                     flavor="mpich")
    assert mpich == "a:1\nc:2\nd:1\nf:1\nb:1\ne:2\ng:1\nh:1\n"
    with pytest.raises(TomographyError, match="unknown hostfile flavor 'slurm'"):
        hostfile(inferred, flavor="slurm")
    spaced = Hierarchy.from_partitions(["a b", "c"], [[0, 1]])
    with pytest.raises(TomographyError, match="host name 'a b' cannot be written"):
        hostfile(spaced, flavor="openmpi")
    colon = Hierarchy.from_partitions(["fe80::1", "c"], [[0, 1]])
    assert "fe80::1 slots=1" in hostfile(colon, flavor="openmpi")
    with pytest.raises(TomographyError, match="cannot be written in an MPICH hostfile"):
        hostfile(colon, flavor="mpich")


def test_rankfile(inferred):
    doc = mpi_hierarchy(inferred, slots=2)
    lines = rankfile(inferred, slots=2).splitlines()
    assert len(lines) == doc["size"] == 72
    parsed = [re.fullmatch(r"rank (\d+)=(\S+) slot=(\d+)", line).groups() for line in lines]
    assert [int(r) for r, _, _ in parsed] == list(range(72))
    assert [host for _, host, _ in parsed] == doc["rank_hosts"]
    assert [int(s) for _, _, s in parsed] == [0, 1] * 36
    assert rankfile(INTERLEAVED).splitlines()[4] == "rank 4=b slot=0"


# --------------------------------------------------------------------------- the example


@pytest.mark.parametrize("root", ["h000", "h029", "h017"])
def test_the_collectives_broadcast_along_the_schedule(inferred, root):
    """tomography.collectives' stages for the file's root are the file's schedule."""
    from tomography.collectives import Layout

    doc = json.loads(json.dumps(mpi_hierarchy(inferred, root_host=root)))
    levels = {h: [] for h in doc["hosts"]}
    for level in doc["levels"]:
        for cluster in level["clusters"]:
            for h in cluster["hosts"]:
                levels[h].append(cluster["colour"])
    layout = Layout.build(doc["rank_hosts"], levels)
    sends = []
    for stage in layout.stages(doc["root"]["rank"]):
        step = [(lead, [r for r in group if r != lead])
                for group, lead in zip(stage.groups, stage.roots) if len(group) > 1]
        if step:
            sends.append(sorted(step))
    schedule = [[(s["from_rank"], s["to_ranks"]) for s in step["sends"]]
                for step in doc["schedule"]]
    assert sends == schedule


@pytest.mark.slow  # needs MPI (the installed mpiexec)
def test_the_hostfile_follows_the_installed_mpiexec(inferred, tmp_path):
    launcher = mpiexec()
    assert mpi_flavor(launcher) == "mpich"  # the set-up installs MPICH's Hydra
    # the default follows the mpiexec on PATH (Debian's Open MPI, once openmpi-bin is in)
    assert hostfile(inferred) == hostfile(inferred, flavor=mpi_flavor() or "mpich")
    fake = tmp_path / "mpiexec"
    fake.write_text("#!/bin/sh\necho 'mpiexec (OpenRTE) 4.1.4'\n")
    fake.chmod(0o755)
    assert mpi_flavor(str(fake)) == "openmpi"


@pytest.mark.slow  # needs MPI (the installed mpiexec)
def test_example_runs_under_mpiexec(tmp_path):
    """docs/examples/hierarchical_bcast.py on four ranks of this machine: ranks sharing a
    node are its hosts NODE-1 ... NODE-4 (as measure --mpi names them)."""
    node = socket.gethostname()
    sub = Hierarchy.from_partitions([f"{node}-{i}" for i in range(1, 5)], [[0, 0, 1, 1]])
    path = tmp_path / "topo.mpi.json"
    write_mpi_hierarchy(sub, path)
    done = subprocess.run([mpiexec(), "-n", "4", sys.executable, str(EXAMPLE), str(path), "1"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "all ranks got the data" in done.stdout and "MPI_Bcast" in done.stdout
    wrong = subprocess.run([mpiexec(), "-n", "3", sys.executable, str(EXAMPLE), str(path)],
                           capture_output=True, text=True, timeout=120)
    assert wrong.returncode == 2 and "describes 4 ranks; this communicator has 3" in wrong.stderr


@pytest.mark.slow  # needs MPI (the installed mpiexec)
def test_the_one_machine_recipe_of_docs_mpi(tmp_path):
    """docs/mpi.md's recipe: a simulated network, each rank told its host by TOMOGRAPHY_HOST
    from its rank (PMI_RANK: the set-up's mpiexec is MPICH's)."""
    from tomography.cli import main

    assert main(["simulate", "two-sites-demo", "-o", str(tmp_path / "sim"), "-n", "4",
                 "--size", "4MiB", "-q"]) == 0
    line = ('TOMOGRAPHY_HOST=$(sed -n "$((PMI_RANK * 2 + 2))p" sim/hosts.csv | cut -d, -f1) '
            f'exec {sys.executable} {EXAMPLE} sim 8')
    assert line.replace(sys.executable, "python").replace(str(EXAMPLE),
                                                          "docs/examples/hierarchical_bcast.py") \
        in " ".join((EXAMPLE.parent.parent / "mpi.md").read_text().replace("\\\n", "").split())
    done = subprocess.run([mpiexec(), "-n", "8", "sh", "-c", line], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    # the clusters and the sites of the ranks' hosts (east's two clusters, one of the west's)
    assert "to 8 ranks (3 levels" in done.stdout and "all ranks got the data" in done.stdout


@pytest.mark.slow  # over 2 s
def test_cli_export(tmp_path, planted):
    from tomography.cli import main
    from tomography.model.dataset import write_measurement

    data = tmp_path / "planted"
    write_measurement(planted, data)
    out = tmp_path / "topo.mpi.json"
    assert main(["export", str(data), "--format", "mpi", "--root", "h010", "--slots", "2",
                 "-o", str(out)]) == 0
    doc = read_mpi_hierarchy(out)
    assert doc["root"] == {"host": "h010", "rank": 20} and doc["size"] == 72
    hosts = tmp_path / "topo.hosts"
    assert main(["export", str(data), "--format", "hostfile", "--flavor", "mpich",
                 "--slots", "2", "-o", str(hosts)]) == 0
    assert [line.split(":")[0] for line in hosts.read_text().splitlines()] == doc["hosts"]
    assert main(["export", str(data), "--format", "mpi", "--root", "nope", "-o",
                 str(tmp_path / "x.json")]) != 0
