"""Hostile multicast datasets (``tomography-multicast/1``; issue 39): ``info``, ``report
--multicast`` and ``multicast --resume`` refuse each in one line naming the file (and the line
and field where there is one), write nothing, and neither hang nor run out of memory.

Classes: files that are not regular files (a FIFO, a link to ``/dev/zero``); bytes that are no
UTF-8 CSV (binary, UTF-16, an unbalanced quote, a line cut mid-way, an empty file); columns
missing, strings where numbers go, ``meta.json`` parts of the wrong type; values no multicast
gives (negative or infinite throughputs, ``complete`` "maybe", a multicast twice, a method the
dataset never ran, no hosts); files missing or disagreeing with each other.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.hostile.common import refused, refused_here

HOSTS = 3
RESUME = ["multicast", "--local", str(HOSTS), "--root", "h00", "--size", "256KiB",
          "--repeats", "1", "--method", "bittorrent", "--time-limit", "60s"]


@pytest.fixture(scope="module")
def measurement(tmp_path_factory) -> Path:
    """A small measurement for ``report`` (the multicast dataset is refused before its
    analysis)."""
    from tomography.model.dataset import write_measurement
    from tomography.model.synthetic import planted_partition

    path = tmp_path_factory.mktemp("measurement") / "d"
    write_measurement(planted_partition(8, 2, iterations=2, seed=0), path)
    return path


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    """A real multicast dataset: BitTorrent among three local hosts, once."""
    from tomography.cli import main

    path = tmp_path_factory.mktemp("multicast") / "mc"
    assert main([*RESUME, "-o", str(path)]) == 0
    return path


def _copy(made: Path, tmp_path: Path) -> Path:
    data = tmp_path / "mc"
    shutil.copytree(made, data)
    (data / ".lock").unlink(missing_ok=True)
    return data


def _commands(data: Path, measurement: Path, out: Path) -> dict[str, list]:
    return {"info": ["info", data],
            "report": ["report", measurement, "--multicast", data, "--resamples", "0",
                       "-o", out / "x.html"],
            "resume": [*RESUME, "--resume", "-o", data]}


def _row(text: str, line: int, column: str, value: str) -> str:
    """``text`` (a CSV) with one field of one line (1 = the header) replaced."""
    lines = text.splitlines()
    header = lines[0].split(",")
    fields = lines[line - 1].split(",")
    fields[header.index(column)] = value
    lines[line - 1] = ",".join(fields)
    return "\n".join(lines) + "\n"


def _meta(change):
    def edit(data: Path) -> None:
        meta = json.loads((data / "meta.json").read_text())
        change(meta)
        (data / "meta.json").write_text(json.dumps(meta))
    return edit


def _text(name: str, content: str | bytes):
    def edit(data: Path) -> None:
        target = data / name
        target.write_bytes(content if isinstance(content, bytes) else content.encode())
    return edit


def _field(name: str, column: str, value: str, line: int = 2):
    def edit(data: Path) -> None:
        target = data / name
        target.write_text(_row(target.read_text(), line, column, value))
    return edit


def _twice(data: Path) -> None:
    target = data / "multicasts.csv"
    lines = target.read_text().splitlines()
    target.write_text("\n".join([*lines, lines[1]]) + "\n")


def _cut(data: Path) -> None:
    target = data / "receivers.csv"
    target.write_text(target.read_text()[:-7])


def _drop_column(data: Path) -> None:
    target = data / "multicasts.csv"
    lines = [",".join(line.split(",")[:-2]) for line in target.read_text().splitlines()]
    target.write_text("\n".join(lines) + "\n")


CASES = {
    "binary": (_text("multicasts.csv", b"\x89PNG\r\n\x1a\n\x00\xff\xfe"), [r"multicasts\.csv",
                                                                            "not UTF-8"]),
    "utf-16": (lambda d: (d / "receivers.csv").write_bytes(
        (d / "receivers.csv").read_text().encode("utf-16")), [r"receivers\.csv", "not UTF-8"]),
    "empty": (_text("multicasts.csv", ""), [r"multicasts\.csv", "empty file"]),
    "unbalanced quote": (_text("multicasts.csv", 'run,method\n"bittorrent-0,x\n'),
                         [r"multicasts\.csv"]),
    "missing column": (_drop_column, [r"multicasts\.csv", "missing column"]),
    "string for a number": (_field("multicasts.csv", "achieved_Bps", "fast"),
                            [r"multicasts\.csv", "line 2", "achieved_Bps", "not a number"]),
    "negative throughput": (_field("multicasts.csv", "achieved_Bps", "-5e6"),
                            ["achieved_Bps", "finite and >= 0"]),
    "infinite throughput": (_field("multicasts.csv", "achieved_Bps", "inf"),
                            ["achieved_Bps", "finite and >= 0"]),
    "complete maybe": (_field("multicasts.csv", "complete", "maybe"),
                       ["complete", "not true or false"]),
    "a multicast twice": (_twice, [r"multicasts\.csv", "line 3", "listed twice"]),
    "unknown method": (_field("multicasts.csv", "method", "teleport"),
                       ["method", "not a method of this dataset"]),
    "bytes in a receiver": (_field("receivers.csv", "bytes", "-1"), [r"receivers\.csv",
                                                                    "bytes", ">= 0"]),
    "unknown receiver": (_field("receivers.csv", "receiver", "<b>x</b>"),
                         [r"receivers\.csv", "unknown host"]),
    "params a list": (_meta(lambda m: m.update(params=[1, 2])), [r"meta\.json", "params",
                                                                 "an object"]),
    "no hosts": (_meta(lambda m: m.update(hosts={})), [r"meta\.json", "hosts", "0 hosts"]),
    "root not a host": (_meta(lambda m: m["params"].update(root="elsewhere")),
                        ["params.root", "not one of hosts"]),
    "hosts disagree": (_text("hosts.csv", "host,address,label\nh00,127.0.0.1,\nzz,127.0.0.9,\n"),
                       [r"hosts\.csv", "other hosts"]),
    "hosts.csv missing": (lambda d: (d / "hosts.csv").unlink(), [r"hosts\.csv", "missing"]),
    "receivers.csv missing": (lambda d: (d / "receivers.csv").unlink(),
                              [r"receivers\.csv", "missing"]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_hostile_multicast_dataset_is_refused_by_every_reader(made: Path, tmp_path: Path,
                                                                 measurement: Path,
                                                                 case: str) -> None:
    edit, says = CASES[case]
    data = _copy(made, tmp_path)
    edit(data)
    out = tmp_path / "out"
    out.mkdir()
    for command, argv in _commands(data, measurement, out).items():
        line = refused_here(argv, says=says, watch=[data, out])
        assert len(line) < 400, f"{command}: {line}"


@pytest.mark.slow   # a subprocess per command: a pipe must not hang them
@pytest.mark.parametrize("name", ["multicasts.csv", "streams.csv", "meta.json"])
def test_a_pipe_or_a_device_in_a_multicast_dataset_is_refused_unread(
        made: Path, tmp_path: Path, measurement: Path, name: str) -> None:
    data = _copy(made, tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (data / name).unlink()
    os.mkfifo(data / name)
    for argv in _commands(data, measurement, out).values():
        refused(argv, says=[name.replace(".", r"\."), "not a regular file"], watch=[out])
    (data / name).unlink()
    (data / name).symlink_to("/dev/zero")
    for argv in _commands(data, measurement, out).values():
        refused(argv, says=[name.replace(".", r"\."), "character device"], watch=[out])


def test_a_line_cut_mid_way_is_refused_by_readers_and_repaired_by_resume(
        made: Path, tmp_path: Path, measurement: Path) -> None:
    from tomography.model.dataset.multicast import read_multicasts
    from tomography.cli import main

    data = _copy(made, tmp_path)
    _cut(data)
    out = tmp_path / "out"
    out.mkdir()
    commands = _commands(data, measurement, out)
    for command in ("info", "report"):
        refused_here(commands[command], says=[r"receivers\.csv", "cut short"],
                     watch=[data, out])
    assert main([str(a) for a in commands["resume"]]) == 0
    _, runs, receivers = read_multicasts(data)
    assert len(runs) == 1 and len(receivers) == HOSTS - 2   # the cut receiver's row dropped


def test_a_dataset_with_its_header_alone_reads_as_no_multicasts(made: Path,
                                                               tmp_path: Path) -> None:
    from tomography.cli import main

    data = _copy(made, tmp_path)
    for name in ("multicasts.csv", "receivers.csv", "streams.csv"):
        target = data / name
        target.write_text(target.read_text().splitlines()[0] + "\n")
    assert main(["info", str(data)]) == 0
