"""Hostile Gauge files for ``multicast --gauge`` and ``plan`` (issue 39): refused in one line
naming the file, its line and element, before any agent starts, and nothing written.

Classes: capacities of 0 (a host or cluster that can send or receive nothing: before, a
cluster's raised a numpy error and a host's changed no prediction), negative, infinite,
NaN and 1e400 figures, text where a figure goes, binary bytes, a FIFO.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.hostile.common import refused, refused_here
from tests.measure.test_multicast import cluster_gauge

HOSTS = [f"h{i:02d}" for i in range(4)]


def _commands(gauge: Path, out: Path) -> dict[str, list]:
    return {"plan": ["plan", gauge, "--root", "h00"],
            "multicast": ["multicast", "--local", str(len(HOSTS)), "--root", "h00", "--size",
                          "64KiB", "--repeats", "1", "--gauge", gauge, "-o", out / "mc"]}


def _variant(tmp_path: Path, old: str, new: str) -> Path:
    path = cluster_gauge(tmp_path / "base.gauge.xml", HOSTS)
    text = path.read_text(encoding="utf-8")
    assert old in text, text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


HOST = '<host name="h01" in="400" out="400"/>'
CLUSTER = '<cluster name="B" in="400" out="400"/>'
PAIR = 'value="200"'

CASES = {
    "host capacity 0": (HOST, '<host name="h01" in="0" out="400"/>', "a capacity of 0"),
    "cluster capacity 0": (CLUSTER, '<cluster name="B" in="400" out="0"/>', "a capacity of 0"),
    "negative": (HOST, '<host name="h01" in="-5" out="400"/>', "-5"),
    "infinite": (CLUSTER, '<cluster name="B" in="INF" out="400"/>', "INF"),
    "nan": (PAIR, 'value="NaN"', "NaN"),
    "1e400": (PAIR, 'value="1e400"', "1e400"),
    "text": (HOST, '<host name="h01" in="fast" out="400"/>', "fast"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_gauge_figure_no_network_has_is_refused_before_anything_starts(tmp_path: Path,
                                                                       case: str) -> None:
    old, new, says = CASES[case]
    gauge = _variant(tmp_path, old, new)
    out = tmp_path / "out"
    out.mkdir()
    for argv in _commands(gauge, out).values():
        refused_here(argv, says=[re.escape(str(gauge)), r"line \d+", re.escape(says)],
                     watch=[tmp_path])
        assert not (out / "mc").exists()


@pytest.mark.slow   # subprocesses: a pipe must not hang them
def test_a_gauge_that_is_binary_or_a_pipe_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    binary = tmp_path / "binary.gauge.xml"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff" * 100)
    pipe = tmp_path / "pipe.gauge.xml"
    os.mkfifo(pipe)
    for argv in _commands(binary, out).values():
        refused(argv, says=[re.escape(str(binary))], watch=[out])
    for argv in _commands(pipe, out).values():    # a pipe of the shell is read; an empty one
        refused(argv, says=[re.escape(str(pipe))], watch=[out], timeout=30)
