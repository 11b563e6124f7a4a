"""Schedules of network changes (``--changes FILE``): refused in one line, before any
testbed is raised, naming the field."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.hostile.common import refused, refused_here

TOPOLOGY = {"name": "two-routers", "host_defaults": {"nic": "100Mbit/s", "latency": "50us"},
            "routers": ["A", "B"],
            "links": [{"between": ["A", "B"], "capacity": "20Mbit/s", "latency": "1ms"}],
            "clusters": [{"name": "a", "router": "A", "hosts": 1},
                         {"name": "b", "router": "B", "hosts": 1}]}

CASES = {
    "not a mapping": ("[1, 2]\n", "mapping with 'changes'"),
    "an unknown key": ("changes: []\nwhen: now\n", "mapping with 'changes'"),
    "a time in words": ("changes: [{at: soon, link: all, fraction: 0.5}]\n",
                        r"changes\[0\]\.at: expected a number"),
    "a negative time": ("changes: [{at: -5, link: all, fraction: 0.5}]\n", r"changes\[0\]\.at"),
    "a time of 1e300 s": ("changes: [{at: 1e300, link: all, fraction: 0.5}]\n",
                          r"changes\[0\]\.at"),
    "no rate": ("changes: [{at: 1, link: all}]\n", "one of capacity or fraction"),
    "both rates": ("changes: [{at: 1, link: all, fraction: 0.5, capacity: 1Mbit/s}]\n",
                   "one of capacity or fraction"),
    "a capacity that is no bandwidth": ("changes: [{at: 1, link: all, capacity: fast}]\n",
                                        r"changes\[0\]\.capacity"),
    "a fraction of 2": ("changes: [{at: 1, link: all, fraction: 2}]\n", r"changes\[0\]\.fraction"),
    "a fraction of 0": ("changes: [{at: 1, link: all, fraction: 0}]\n", r"changes\[0\]\.fraction"),
    "a link of one router": ("changes: [{at: 1, link: [A], fraction: 0.5}]\n",
                             r"changes\[0\]\.link"),
    "a link the topology lacks": ("changes: [{at: 1, link: [A, C], fraction: 0.5}]\n",
                                  "link A -- C that the topology"),
    "random without a period": ("random: {fraction: [0.1, 1]}\n", "random: expected every"),
    "random every 1 ms": ("random: {every: 0.001, fraction: [0.1, 1]}\n", "random.every"),
    "random fractions reversed": ("random: {every: 5, fraction: [0.9, 0.1]}\n",
                                  r"random\.fraction\[1\]"),
    "a seed of -1": ("random: {every: 5, fraction: [0.1, 1], seed: -1}\n", "random.seed"),
    "an alias bomb": ("a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a]\n"
                      "c: &c [*b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c]\n"
                      "e: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n",
                      "."),
    "binary": (b"\x00\xff" * 100, "."),
}


@pytest.fixture
def topology(tmp_path: Path) -> Path:
    path = tmp_path / "two.yaml"
    path.write_text(json.dumps(TOPOLOGY))
    return path


@pytest.mark.parametrize("case", CASES)
def test_a_hostile_schedule_is_refused_before_a_testbed_is_raised(tmp_path: Path, topology,
                                                                  case) -> None:
    text, says = CASES[case]
    changes = tmp_path / "changes.yaml"
    changes.write_bytes(text if isinstance(text, bytes) else text.encode())
    line = refused_here(["measure", "bittorrent", "--testbed", topology, "--name", "never",
                         "--changes", changes, "-o", tmp_path / "out"], says=[says],
                        watch=[tmp_path])
    assert str(changes) in line, line           # the file named
    assert not (tmp_path / "out").exists()


def test_changes_need_a_testbed(tmp_path: Path) -> None:
    changes = tmp_path / "changes.yaml"
    changes.write_text("changes: [{at: 1, link: all, fraction: 0.5}]\n")
    refused_here(["measure", "bittorrent", "--local", "2", "--changes", changes, "-o",
                  tmp_path / "out"], says=["--changes .* needs --testbed"], watch=[tmp_path])


def test_a_schedule_that_is_a_pipe_is_refused_unread(tmp_path: Path, topology) -> None:
    fifo = tmp_path / "changes.yaml"
    os.mkfifo(fifo)
    refused(["measure", "bittorrent", "--testbed", topology, "--name", "never", "--changes",
             fifo, "-o", tmp_path / "out"], says=["changes.yaml"], watch=[tmp_path])
