"""The shared style, and the package staying cheap to import."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import matplotlib
import pytest

import visualize
from visualize.style import MARKERS, PALETTE, RC, new_figure, paper_style

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # over 2 s
def test_import_does_not_load_matplotlib() -> None:
    code = ("import sys, visualize; print('matplotlib' in sys.modules); "
            "visualize.plot_hasse; print('matplotlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout.split()
    assert out == ["False", "True"]


def test_every_plot_is_exported() -> None:
    for name in ("plot_layout", "plot_heatmap", "plot_timeline", "plot_hasse", "plot_tree",
                 "plot_convergence", "plot_edge_weight", "plot_weight_distribution",
                 "hasse_text", "hierarchy_text", "cluster_tree_text"):
        assert callable(getattr(visualize, name)) and name in visualize.__all__


def test_paper_sizes_and_palette() -> None:
    fig, _ = new_figure()
    assert fig.get_size_inches()[0] == 3.4
    assert len(set(PALETTE)) == 8 and len(set(MARKERS)) == len(MARKERS)
    before = matplotlib.rcParams["font.size"]
    with paper_style():
        assert matplotlib.rcParams["font.size"] == RC["font.size"] == 8
        assert matplotlib.rcParams["image.cmap"] == "viridis"
    assert matplotlib.rcParams["font.size"] == before
