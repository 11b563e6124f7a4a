"""plot_edge_weight and plot_weight_distribution: the values drawn are Eq 4.1, 4.2 and w_n/mean."""

from __future__ import annotations

import numpy as np
import pytest

from tomography.model.errors import TomographyError
from tomography.model.weights import iteration_weights, mean_weights
from visualize import plot_edge_weight, plot_weight_distribution

from .helpers import assert_legible, saved


def test_edge_weight_per_iteration_and_mean(two_sites, tmp_path) -> None:
    hosts = two_sites.host_names
    a, b = "e1-00", "e1-01"
    fig = plot_edge_weight(two_sites, a, b)
    saved(fig, tmp_path / "edge.png")
    i, j = hosts.index(a), hosts.index(b)
    expected = [iteration_weights(two_sites, k)[i, j] for k in two_sites.iteration_ids]
    ax, side = fig.axes
    heights = [p.get_height() for p in ax.patches]
    assert np.allclose(heights, expected)
    (mean,) = [line for line in ax.get_lines() if line.get_gid() == "w_n"]
    assert np.allclose(mean.get_ydata(), np.cumsum(expected) / np.arange(1, 4))
    assert np.isclose(mean.get_ydata()[-1], mean_weights(two_sites)[i, j])
    assert sum(p.get_width() for p in side.patches) == 3      # histogram of 3 iterations
    assert "16 KiB" in ax.get_ylabel()
    assert fig.tomography_info["zero"] == sum(w == 0 for w in expected)
    assert_legible(fig)


def test_edge_errors(two_sites) -> None:
    with pytest.raises(TomographyError, match="no host 'zz'"):
        plot_edge_weight(two_sites, "zz", "e1-00")
    with pytest.raises(TomographyError, match="two different hosts"):
        plot_edge_weight(two_sites, "e1-00", "e1-00")


@pytest.mark.slow  # over 2 s
def test_distribution_of_two_datasets(two_sites, planted, tmp_path) -> None:
    fig = plot_weight_distribution(two_sites, planted, names=["simulated", "planted"])
    saved(fig, tmp_path / "distribution.png")
    info = fig.tomography_info
    assert info["names"] == ["simulated", "planted"]
    assert info["pairs"] == [190, 48 * 47 // 2] and 0 < info["ks"] < 1
    hist_ax, cdf_ax = fig.axes
    for m, name in ((two_sites, "simulated"), (planted, "planted")):
        W = mean_weights(m).toarray()
        w = W[np.triu_indices_from(W, 1)]
        w = np.sort(w / w.mean())
        (cdf,) = [line for line in cdf_ax.get_lines() if line.get_gid() == f"cdf:{name}"]
        assert np.allclose(cdf.get_xdata(), w)
        assert cdf.get_ydata()[-1] == 1.0
        (stairs,) = [p for p in hist_ax.patches if p.get_gid() == f"hist:{name}"]
        values, edges, _ = stairs.get_data()
        # the areas (per decade) add up to the share of pairs with w_n > 0
        assert np.isclose((values * np.diff(np.log10(edges))).sum(), (w > 0).mean())
    assert hist_ax.get_xscale() == cdf_ax.get_xscale() == "log"
    assert "Kolmogorov-Smirnov" in cdf_ax.get_title()
    assert_legible(fig)


@pytest.mark.slow  # over 2 s
def test_a_long_dataset_name_does_not_squeeze_the_plots(two_sites) -> None:
    """The legend goes under the plots: before, inside them, a long name shrank them."""
    fig = plot_weight_distribution(two_sites, names=["simulated (bordeaux-toulouse), seed 7"])
    assert_legible(fig)
    fig.draw_without_rendering()
    for ax in fig.axes:
        assert ax.get_position().width > 0.7
    (legend,) = fig.legends
    assert legend.get_texts()[0].get_text().startswith("simulated (bordeaux-toulouse)")


def test_distribution_options(two_sites) -> None:
    fig = plot_weight_distribution(two_sites, iterations=2, log=False, width="double")
    assert fig.get_size_inches()[0] == 7.0 and fig.tomography_info["ks"] is None
    assert fig.axes[0].get_xscale() == "linear" and "n = 2" in fig.axes[1].get_xlabel()
    assert fig.tomography_info["names"] == ["simulated (two-sites-demo)"]
    with pytest.raises(ValueError, match="2 names for 1 datasets"):
        plot_weight_distribution(two_sites, names=["a", "b"])
