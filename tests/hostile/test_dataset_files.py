"""Hostile dataset files and meta.json (issue 28, class A), against every command that reads a
dataset: one line naming the file and the field, exit 2, no traceback, nothing written.

Organised by class of input, each with several generated cases:

* not a regular file, or larger than its limit (a FIFO, a link to ``/dev/zero``, a
  directory, a sparse file past the limit);
* block counts and sizes beyond any real dataset (sums that would wrap in 64 bits);
* a file cut short inside its last line (CSV without a line end, JSON that ends early);
* control characters in a value, rows longer than the header, a column named twice;
* ``meta.json`` values of the wrong type or range, nested too deep, keys given twice;
* a dataset whose clusters exchanged nothing with one another is not said to have no blocks.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import SMALL, write_files
from tests.hostile.common import refused, refused_here
from tomography.model.dataset.schema import FILE_LIMITS, MAX_BLOCKS, MAX_FILE_BYTES, MAX_HOSTS

META = json.loads(SMALL["meta.json"])

# every command that reads a dataset; D is the dataset, O a directory for outputs
COMMANDS = {
    "info": ["info", "D"],
    "cluster": ["cluster", "D"],
    "hierarchy": ["hierarchy", "D"],
    "tree": ["tree", "D"],
    "evaluate": ["evaluate", "D"],
    "export": ["export", "D", "--format", "json", "-o", "O/x.json"],
    "plot": ["plot", "D", "--kind", "heatmap", "-o", "O/x.png"],
    "report": ["report", "D", "-o", "O/x.html"],
    "resume": ["simulate", "bordeaux-2x2", "-o", "D", "--resume", "-n", "3"],
}


def argv(command: str, data: Path, out: Path) -> list[str]:
    return [str(data) if a == "D" else a.replace("O/", f"{out}/") for a in COMMANDS[command]]


def dataset(tmp_path: Path, **files: str | bytes) -> tuple[Path, Path]:
    """SMALL with some files replaced (bytes written as they are); and an empty output dir."""
    data = write_files(tmp_path / "d", {k: v for k, v in SMALL.items() if k not in files})
    for name, text in files.items():
        path = data / name
        path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    out = tmp_path / "out"
    out.mkdir()
    return data, out


def meta(**keys) -> str:
    return json.dumps({**META, **keys})


ALL = list(COMMANDS)
# the commands that read a given file: all of them (resume reads every file too)
CSV_FILES = ["hosts.csv", "transfers.csv", "iterations.csv"]


# --------------------------------------------------------------------------- not a regular file

@pytest.mark.slow
@pytest.mark.parametrize("name", ["meta.json", *CSV_FILES, "probes.csv"])
@pytest.mark.parametrize("kind", ["fifo", "zero"])
@pytest.mark.parametrize("command", ALL)
def test_a_pipe_or_a_device_is_refused_unread(tmp_path, command, kind, name) -> None:
    """In a subprocess, with a short bound: a FIFO would block, /dev/zero never ends."""
    data, out = dataset(tmp_path)
    target = data / name
    target.unlink(missing_ok=True)
    if kind == "fifo":
        os.mkfifo(target)
    else:
        target.symlink_to("/dev/zero")
    refused(argv(command, data, out), says=[rf"{name}: is not a regular file"], timeout=20,
            watch=[data, out])


@pytest.mark.parametrize("name", ["meta.json", *CSV_FILES])
@pytest.mark.parametrize("command", ALL)
def test_a_directory_or_a_file_past_its_limit_is_refused(tmp_path, command, name) -> None:
    data, out = dataset(tmp_path)
    (data / name).unlink()
    (data / name).mkdir()
    refused_here(argv(command, data, out), says=[rf"{name}: is a directory"], watch=[data, out])
    (data / name).rmdir()
    with (data / name).open("wb") as fh:     # sparse: nothing is written to the disk
        fh.truncate(FILE_LIMITS[name] + 1)
    refused_here(argv(command, data, out), says=[rf"{name}: \d+ bytes, more than"],
                 watch=[data, out])


def test_a_link_to_a_regular_file_is_read(tmp_path) -> None:
    from tomography.model.dataset import read_measurement

    data, _ = dataset(tmp_path)
    (tmp_path / "elsewhere.csv").write_text(SMALL["hosts.csv"])
    (data / "hosts.csv").unlink()
    (data / "hosts.csv").symlink_to(tmp_path / "elsewhere.csv")
    assert read_measurement(data).n_hosts == 3


# --------------------------------------------------------------------------- counts too large

HEADER = "iteration,receiver,sender,blocks\n"
BIG_COUNTS = {
    "eleven rows of 18 digits": HEADER + "".join(
        f"{i},{r},{s},999999999999999999\n" for i in (0, 1) for r in "abc" for s in "abc"
        if r != s)[:-len("1,c,b,999999999999999999\n")],
    "one count past the bound": HEADER + f"0,b,a,{MAX_BLOCKS + 1}\n1,a,c,8\n",
    "a count past the bound on a later line": HEADER + f"0,b,a,10\n1,a,c,{2**62}\n",
}


@pytest.mark.parametrize("case", list(BIG_COUNTS))
@pytest.mark.parametrize("command", ALL)
def test_block_counts_beyond_any_broadcast_are_refused(tmp_path, command, case) -> None:
    data, out = dataset(tmp_path, **{"transfers.csv": BIG_COUNTS[case]})
    refused_here(argv(command, data, out), says=[r"transfers\.csv, line \d+, field 'blocks'"],
                 watch=[data, out])


@pytest.mark.parametrize("command", ALL)
def test_a_broadcast_larger_than_any_file_is_refused(tmp_path, command) -> None:
    data, out = dataset(tmp_path, **{"iterations.csv": SMALL["iterations.csv"].replace(
        "163840", str(MAX_FILE_BYTES + 1))})
    refused_here(argv(command, data, out), says=[r"iterations\.csv, line 2, field 'bytes'"],
                 watch=[data, out])


def test_the_sums_of_counts_cannot_wrap(tmp_path) -> None:
    """Eleven counts of 18 digits wrapped int64: now the first is refused; the fit check and
    the all-zero check compute nothing that wraps."""
    from tomography.model.dataset import read_measurement
    from tomography.model.errors import DatasetError

    rows = "".join(f"0,b,a,{10**17}\n" for _ in range(1)) + "0,c,a,4\n1,a,c,8\n"
    data, _ = dataset(tmp_path, **{"transfers.csv": HEADER + rows})
    with pytest.raises(DatasetError, match="field 'blocks': more than 1099511627776"):
        read_measurement(data)


# --------------------------------------------------------------------------- cut short

CUT = {
    "hosts.csv": SMALL["hosts.csv"][:-3],                  # 'b,10.0.0.2,s' : a cut label
    "iterations.csv": SMALL["iterations.csv"][:-1],
    "transfers.csv": SMALL["transfers.csv"][:-1],
    "probes.csv": ("src,dst,tool,bits_per_second,streams,concurrent,duration_s\n"
                   "a,b,iperf3,1e9,1,1,10\nb,a,iperf3,1e9,1,1,1"),
}


@pytest.mark.parametrize(("command", "name"), [
    (c, n) for n in CUT for c in ALL
    # --resume repairs the files it appends to: it drops their cut line and continues
    if not (c == "resume" and n in ("iterations.csv", "transfers.csv"))])
def test_a_csv_file_cut_inside_its_last_line_is_refused(tmp_path, command, name) -> None:
    data, out = dataset(tmp_path, **{name: CUT[name]})
    refused_here(argv(command, data, out), says=[rf"{name}, line \d+: .*cut short"],
                 watch=[data, out])


@pytest.mark.parametrize("cut", [10, 30, 60])
@pytest.mark.parametrize("command", ALL)
def test_a_meta_json_that_ends_early_says_cut_short(tmp_path, command, cut) -> None:
    data, out = dataset(tmp_path, **{"meta.json": SMALL["meta.json"][:cut]})
    refused_here(argv(command, data, out), says=[r"meta\.json, line 1: not valid JSON.*cut short"],
                 watch=[data, out])


def test_a_trace_cut_short_is_refused(tmp_path) -> None:
    data, out = dataset(tmp_path, **{"trace.csv": "iteration,time_s,sender,receiver,piece,block\n"
                                                  "0,0.5,a,b,3,1\n0,0.7,a,b,3,"})
    refused_here(["plot", data, "--kind", "timeline", "-o", out / "t.png"],
                 says=[r"trace\.csv, line 3: .*cut short"], watch=[data, out])


# --------------------------------------------------------------------------- control characters, fields

def _hosts(row: str) -> str:
    return "host,address,label\nc,10.0.0.3,s2\n" + row + "\nb,10.0.0.2,s1\n"


FIELDS = {
    "NUL in a host name": ("hosts.csv", _hosts("a\x00x,10.0.0.1,s1"), r"line 3, field 'host'"),
    "escape in a label": ("hosts.csv", _hosts("a,10.0.0.1,\x1b[31ms1"), r"line 3, field 'label'"),
    "DEL in an address": ("hosts.csv", _hosts("a,10.0.0.1\x7f,s1"), r"line 3, field 'address'"),
    "line end in a quoted host name": ("hosts.csv", _hosts('"a\nx",10.0.0.1,s1'),
                                       r"line 3, field 'host'"),
    "an extra field on the first row": ("hosts.csv", "host,address,label\nc,10.0.0.3,s2,x\n"
                                        "a,10.0.0.1,s1\nb,10.0.0.2,s1\n",
                                        r"line 2, field 'field 4'"),
    "an extra field on a later row": ("hosts.csv", _hosts("a,10.0.0.1,s1,extra,more"),
                                      r"line 3, field 'field 4'"),
    "an extra field in transfers": ("transfers.csv", HEADER + "0,b,a,10,7\n1,a,c,8\n",
                                    r"line 2, field 'field 5'"),
    "an extra field in iterations": ("iterations.csv", "iteration,root,bytes,duration_s,complete\n"
                                     "0,a,163840,1.5,true\n1,c,131072,,false,x\n",
                                     r"line 3, field 'field 6'"),
    "a column named twice": ("hosts.csv", "host,address,host\na,1,a\nb,2,b\nc,3,c\n",
                             r"line 1, field 'host'"),
    "NUL in a transfers host": ("transfers.csv", HEADER + "0,b\x00,a,10\n1,a,c,8\n",
                                r"line 2, field 'receiver'"),
}


@pytest.mark.parametrize("case", list(FIELDS))
@pytest.mark.parametrize("command", ALL)
def test_control_characters_and_extra_fields_are_refused(tmp_path, command, case) -> None:
    name, text, where = FIELDS[case]
    data, out = dataset(tmp_path, **{name: text})
    refused_here(argv(command, data, out), says=[rf"{name}, {where}"], watch=[data, out])


# --------------------------------------------------------------------------- meta.json values

META_CASES = {
    "block_size of 31 digits": (meta(block_size=10**30), "block_size"),
    "block_size as text": (meta(block_size="16384"), "block_size"),
    "block_size 0": (meta(block_size=0), "block_size"),
    "topology a number": (meta(topology=5), "topology"),
    "topology a list": (meta(topology=["a"]), "topology"),
    "testbed a string": (meta(testbed="bed"), "testbed"),
    "testbed.scale a list": (meta(testbed={"scale": [1]}), r"testbed\.scale"),
    "testbed.scale.bandwidth text": (meta(testbed={"scale": {"bandwidth": "abc"}}),
                                     r"testbed\.scale\.bandwidth': expected a number.*\"abc\""),
    "testbed.scale.bandwidth negative": (meta(testbed={"scale": {"bandwidth": -1}}),
                                         r"testbed\.scale\.bandwidth"),
    "testbed.scale.hosts_per_cluster text": (meta(testbed={"scale": {"hosts_per_cluster": "2"}}),
                                             r"testbed\.scale\.hosts_per_cluster"),
    "testbed.latency_applied text": (meta(testbed={"latency_applied": "no"}),
                                     r"testbed\.latency_applied"),
    "params a list": (meta(params=[1]), "params"),
    "params.peer_list text": (meta(params={"peer_list": "abc"}), r"params\.peer_list"),
    "params.upload_slots huge": (meta(params={"upload_slots": 10**20}), r"params\.upload_slots"),
    "params.tit_for_tat text": (meta(params={"tit_for_tat": "false"}), r"params\.tit_for_tat"),
    "params.seed text": (meta(params={"seed": "7"}), r"params\.seed"),
    "topology_model a million hosts": (meta(topology_model={
        "name": "big", "routers": ["R"], "links": [],
        "clusters": [{"name": "x", "router": "R", "hosts": 10**6, "nic": "1Gbit/s"}]}),
        r"topology_model\.clusters\[0\]\.hosts"),
    "topology_model many clusters": (meta(topology_model={
        "name": "big", "routers": ["R"], "links": [],
        "clusters": [{"name": f"x{i}", "router": "R", "hosts": MAX_HOSTS // 4,
                      "nic": "1Gbit/s"} for i in range(5)]}), r"topology_model\.clusters'"),
    "topology_model a string": (meta(topology_model="N2"), "topology_model"),
    "resumes an object": (meta(resumes={"a": 1}), "resumes"),
    "created a number": (meta(created=2026), "created"),
    "method a list": (meta(method=["bittorrent"]), "method"),
    "format a number": (meta(format=1), "format"),
    "escape in created": (meta(created="\x1b]0;title\x07"), "created"),
    "NUL in a key": (meta(**{"no\x00te": 1}), r"no\\x00te|no.te"),
    "a key given twice": (SMALL["meta.json"][:-1] + ', "block_size": 1}', "block_size"),
}


@pytest.mark.parametrize("case", list(META_CASES))
@pytest.mark.parametrize("command", ALL)
def test_meta_json_values_of_the_wrong_type_or_range_are_refused(tmp_path, command,
                                                                 case) -> None:
    text, key = META_CASES[case]
    data, out = dataset(tmp_path, **{"meta.json": text})
    refused_here(argv(command, data, out), says=[rf"meta\.json, field '{key}"],
                 watch=[data, out])


DOCUMENTS = {
    "nested 100,000 deep": SMALL["meta.json"][:-1] + ', "x": ' + "[" * 100_000 + "]" * 100_000
    + "}",
    "nested 65 deep in objects": SMALL["meta.json"][:-1] + ', "x": ' + '{"a": ' * 65 + "1"
    + "}" * 65 + "}",
    "a number of 5000 digits": SMALL["meta.json"][:-1] + ', "x": ' + "9" * 5000 + "}",
    "NaN": SMALL["meta.json"][:-1] + ', "x": NaN}',
    "Infinity as 1e999": SMALL["meta.json"][:-1] + ', "x": 1e999}',
    "a list, not an object": "[1, 2]",
    "not UTF-8": b'{"format": "\xff\xfe"}',
}


@pytest.mark.parametrize(("command", "case"), [
    pytest.param(c, k) for k in DOCUMENTS for c in ALL])
def test_meta_json_documents_no_reader_should_parse_are_refused(tmp_path, command, case) -> None:
    data, out = dataset(tmp_path, **{"meta.json": DOCUMENTS[case]})
    refused_here(argv(command, data, out), says=[r"meta\.json"], watch=[data, out])


def test_every_key_of_a_real_meta_json_passes(tmp_path) -> None:
    """What the writers record (a testbed, a simulator's topology, resumes) is accepted."""
    from tomography.model.dataset import read_measurement

    real = meta(topology="bordeaux-2x2", launcher="testbed", source="pscheduler",
                measured_with="run", seed=3, resumes=[{"time": "2026-01-01"}],
                skipped_hosts={"d": "no answer\nfrom ssh"},
                software={"python": "3.11.7"},
                params={"seed": 2**100, "upload_slots": 8, "peer_list": 35,
                        "tit_for_tat": True, "file_size": 2**20, "tcp": {"loss": 0.0}},
                testbed={"name": "demo", "topology": "bordeaux-2x2",
                         "scale": {"bandwidth": 0.5, "hosts_per_cluster": None},
                         "latency_applied": False, "latency_note": "no netem",
                         "address_plan": "10.201/16", "subnets": {"R": "10.201.1.0/24"},
                         "created": "2026-01-01T00:00:00+00:00"},
                topology_model={"name": "t", "routers": ["R"], "links": [],
                                "clusters": [{"name": "s", "router": "R", "hosts": 3,
                                              "nic": "1Gbit/s"}]})
    data, _ = dataset(tmp_path, **{"meta.json": real})
    assert read_measurement(data).meta["testbed"]["scale"]["bandwidth"] == 0.5


# --------------------------------------------------------------------------- what is true

def test_clusters_that_exchanged_nothing_are_not_said_to_have_no_blocks(tmp_path) -> None:
    """One positive row per iteration: two pairs that never met.  No message may say that no
    blocks were exchanged between any two hosts."""
    from tomography.cli import main

    data, out = dataset(tmp_path, **{
        "hosts.csv": "host,address,label\na,,\nb,,\nc,,\nd,,\n",
        "transfers.csv": HEADER + "0,b,a,10\n1,d,c,8\n",
        "iterations.csv": "iteration,root,bytes,duration_s,complete\n0,a,163840,1.5,true\n"
                          "1,c,131072,1,true\n"})
    assert main(["cluster", str(data)]) == 0
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        main(["report", str(data), "-o", str(out / "r.html")])
    assert "between any two hosts" not in err.getvalue()


def test_an_empty_graph_of_clusters_says_what_is_true() -> None:
    from cluster.louvain import louvain
    from tomography.model.errors import EmptyGraphError

    with pytest.raises(EmptyGraphError, match="none of its 3 nodes .hosts, or clusters of hosts"):
        louvain(np.zeros((3, 3)))


@pytest.mark.parametrize("command", ["cluster", "hierarchy", "tree", "evaluate"])
def test_all_zero_counts_are_refused_without_a_sum(tmp_path, command) -> None:
    data, out = dataset(tmp_path, **{"transfers.csv": HEADER + "0,b,a,0\n1,a,c,0\n"})
    refused_here(argv(command, data, out),
                 says=[r"transfers\.csv, field 'blocks': every block count is 0"],
                 watch=[data, out])
