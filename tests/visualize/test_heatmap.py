"""plot_heatmap: the matrix shown is the blocks received, hosts grouped by cluster."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from tomography.model.errors import TomographyError
from tomography.model.synthetic import planted_partition
from tomography.model.weights import directed_counts, mean_weights
from visualize import plot_heatmap

from .helpers import assert_legible, saved


def _image(fig) -> np.ndarray:
    (image,) = fig.axes[0].get_images()
    return np.asarray(image.get_array())


def test_heatmap_of_received_blocks(two_sites, two_sites_hierarchy, tmp_path) -> None:
    fig = plot_heatmap(two_sites, clusters=two_sites_hierarchy)
    saved(fig, tmp_path / "heatmap.png")
    data = _image(fig)
    info = fig.tomography_info
    assert data.shape == (20, 20) == info["shape"]
    # rows = receivers, columns = senders, in the order shown, mean per iteration
    order = info["order"]
    index = [two_sites.host_names.index(h) for h in order]
    expected = directed_counts(two_sites).toarray()[np.ix_(index, index)] / 3
    assert np.allclose(data, expected)
    # hosts come grouped by found cluster, and the groups are named on the axes
    groups = info["groups"]
    level = {h: c.id for c in two_sites_hierarchy.level(1) for h in c.hosts}
    assert [g[0] for g in groups] == [c.id for c in two_sites_hierarchy.level(1)]
    for name, start, stop in groups:
        assert {level[h] for h in order[start:stop]} == {name}
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == [g[0] for g in groups]
    assert "16 KiB" in info["label"] and "per iteration" in info["label"]
    (bar,) = [a for a in fig.axes if a is not ax]
    assert bar.get_ylabel() == info["label"]
    assert_legible(fig)


@pytest.mark.slow  # over 2 s
def test_one_iteration_and_w(two_sites, tmp_path) -> None:
    fig = plot_heatmap(two_sites, iteration=1)
    data, order = _image(fig), fig.tomography_info["order"]
    root = two_sites.iterations.set_index("iteration").loc[1, "root"]
    assert data[order.index(root)].sum() == 0            # the root receives nothing
    blocks = two_sites.transfers.query("iteration == 1")["blocks"].sum()
    assert data.sum() == blocks
    assert "iteration 1" in fig.tomography_info["label"]
    # grouped by true label without clusters
    assert [g[0] for g in fig.tomography_info["groups"]] == ["east/e1", "east/e2", "west/w1",
                                                            "west/w2"]
    fig = plot_heatmap(two_sites, weights="w", iterations=2, log=True)
    saved(fig, tmp_path / "w.svg")
    data = np.ma.filled(_image(fig), 0.0)
    assert np.allclose(data, data.T)
    assert np.isclose(data.sum(), mean_weights(two_sites, 2).sum())
    assert "w_n" in fig.tomography_info["label"] and "n = 2" in fig.tomography_info["label"]


def test_heatmap_errors(two_sites) -> None:
    with pytest.raises(TomographyError, match="no iteration 7"):
        plot_heatmap(two_sites, iteration=7)
    with pytest.raises(TomographyError, match="between 1 and 3"):
        plot_heatmap(two_sites, iterations=4)
    with pytest.raises(ValueError, match="weights"):
        plot_heatmap(two_sites, weights="sent")


@pytest.mark.slow  # over 2 s
def test_hosts_without_groups_are_named_one_in_k(tmp_path) -> None:
    """64 hosts without labels or clusters: one host in k named at 6 pt, and said so."""
    m = planted_partition(64, 4, iterations=1, seed=0)
    m = replace(m, hosts=m.hosts.assign(label=""))
    fig = plot_heatmap(m)
    saved(fig, tmp_path / "heatmap.png")
    ax = fig.axes[0]
    step = int(ax.get_ylabel().split("one in ")[1].split()[0])
    assert step > 1 and ax.get_xlabel() == f"sender\n(one in {step} named)"
    names = m.host_names[::step]
    assert [t.get_text() for t in ax.get_xticklabels()] == names
    assert [t.get_text() for t in ax.get_yticklabels()] == names
    assert_legible(fig)


def test_small_groups_keep_their_names_without_overlap() -> None:
    """Clusters of very different sizes (as N2's): names and truths where they fit, no overlap."""
    m = planted_partition(240, 4, iterations=1, seed=0)
    sizes = [120, 40, 40, 16, 16, 8]
    clusters = {}
    for i, h in enumerate(m.host_names):
        clusters[h] = f"L1C{next(k for k in range(6) if i < sum(sizes[:k + 1]))}"
    fig = plot_heatmap(m, clusters=clusters)
    ax = fig.axes[0]
    ticks = [t.get_text() for t in ax.get_yticklabels()]
    assert ticks[0] == "L1C0\nmixed: 60/120 g0"                  # room for its truth
    assert all(t.split("\n")[0].startswith("L1C") for t in ticks)
    assert ax.get_xlabel() == "sender (ordered by cluster)\n(small groups unnamed)"
    assert_legible(fig)
