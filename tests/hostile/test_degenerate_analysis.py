"""Degenerate datasets every analysis command must finish on (issue 39): one transfer row per
iteration, a single pair that ever exchanged, all-zero counts, one host exchanging with
everyone and the others with nobody.  Each command answers (a result, or one line saying why
there is none) within a bound: no merging loop of the analysis may run on without end
(``separated_coarsening`` once merged a cluster with itself forever).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from tests.hostile.common import ROOT, TOMOGRAPHY, _capped
from tomography.model.dataset import write_measurement
from tomography.model.errors import GraphError
from tomography.model.synthetic import planted_hierarchy

BOUND = 60.0


def _one_row_per_iteration(m):
    m.transfers = m.transfers.groupby("iteration").head(1).reset_index(drop=True)


def _single_pair(m):
    import pandas as pd

    a, b = m.host_names[:2]
    m.transfers = pd.DataFrame({"iteration": m.iteration_ids, "receiver": a, "sender": b,
                                "blocks": 5})


def _all_zero(m):
    m.transfers = m.transfers.assign(blocks=0)


def _star(m):
    hub = m.host_names[0]
    keep = (m.transfers["receiver"] == hub) | (m.transfers["sender"] == hub)
    m.transfers = m.transfers[keep].reset_index(drop=True)


SHAPES = {"one row per iteration": _one_row_per_iteration, "a single pair": _single_pair,
          "all-zero counts": _all_zero, "one host with everyone": _star}


def _dataset(tmp_path: Path, shape: str) -> Path:
    m = planted_hierarchy((2, 2), 6, iterations=6, seed=3)
    SHAPES[shape](m)
    path = tmp_path / "d"
    write_measurement(m, path)
    return path


def test_separated_coarsening_ends_on_any_weights() -> None:
    from cluster.separation import separated_coarsening

    rng = np.random.default_rng(0)
    for weights in (np.zeros((6, 6)), rng.random((6, 6)) * 1e-300, np.eye(6),
                    np.ones((6, 6)) - np.eye(6)):
        labels = separated_coarsening(weights, list("aabbcc"))
        assert len(labels) == 6
    with pytest.raises(GraphError, match="NaN"):
        separated_coarsening(np.full((6, 6), np.nan), list("aabbcc"))


def test_separated_cuts_end_on_any_weights() -> None:
    from cluster.refine import separated_cuts

    rng = np.random.default_rng(0)
    # nothing, tiny numbers, no edge, one clique, one host that exchanged nothing
    lone = np.ones((8, 8)) - np.eye(8)
    lone[0] = lone[:, 0] = 0.0
    for weights in (np.zeros((8, 8)), rng.random((8, 8)) * 1e-300, np.eye(8),
                    np.ones((8, 8)) - np.eye(8), lone):
        levels = separated_cuts(weights, np.zeros(8, dtype=int))
        assert len(levels) < 8
        assert all(len(level) == 8 for level in levels)


@pytest.mark.slow   # a subprocess per command: a loop is caught by the bound
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_every_analysis_command_answers_on_a_degenerate_dataset(tmp_path: Path,
                                                               shape: str) -> None:
    data = _dataset(tmp_path, shape)
    commands = [["cluster", data], ["hierarchy", data], ["tree", data], ["evaluate", data],
                ["report", data, "-o", tmp_path / "r.html"]]
    for argv in commands:
        where = f"tomography {' '.join(map(str, argv))} ({shape})"
        try:
            run = subprocess.run([*TOMOGRAPHY, *map(str, argv)], cwd=ROOT, capture_output=True,
                                 text=True, timeout=BOUND, preexec_fn=_capped)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"{where}: no answer within {BOUND} s") from None
        assert "Traceback" not in run.stderr, f"{where}:\n{run.stderr}"
        if run.returncode != 0:
            errors = [line for line in run.stderr.splitlines() if "error" in line]
            assert run.returncode == 2 and len(errors) == 1, f"{where}:\n{run.stderr}"
        if shape == "all-zero counts":   # nothing to cluster, said naming the file
            assert run.returncode == 2 and "transfers.csv" in run.stderr, run.stderr
