"""plot_layout: every host, the heaviest half of the edges, colour by cluster, shape by label."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import sparse

from tomography.model.synthetic import planted_partition
from tomography.model.weights import mean_weights
from visualize import plot_layout
from visualize.layout import AUTO_LIMIT, layout_positions

from .helpers import assert_legible, points, saved, segments


def _edge_count(m) -> int:
    return int((sparse.triu(mean_weights(m), 1) > 0).sum())


def test_layout_of_a_simulated_network(two_sites, two_sites_hierarchy, tmp_path) -> None:
    fig = plot_layout(two_sites, clusters=two_sites_hierarchy)
    saved(fig, tmp_path / "layout.png")
    ax = fig.axes[0]
    info = fig.tomography_info
    assert info["kind"] == "layout" and info["engine"] == "networkx"
    assert "networkx" in ax.get_title() and fig.get_label() == "layout (networkx)"
    # every host is drawn once; the heaviest half of the edges is drawn
    assert len(points(ax)) == two_sites.n_hosts == info["nodes"] == 20
    total = _edge_count(two_sites)
    assert info["edges_total"] == total
    assert len(segments(ax, "edges")) == math.ceil(total / 2) == info["edges"]
    # colour = found cluster (level 1), shape = true label (4 clusters of 5 hosts)
    assert info["colours"] == len(two_sites_hierarchy.level(1))
    assert info["shapes"] == len(set(two_sites.labels.values())) == 4
    legends = {lg.get_gid(): lg for lg in fig.legends}
    assert legends["legend-colour"].get_title().get_text() == "colour: found cluster"
    assert legends["legend-shape"].get_title().get_text() == "shape: true label"
    assert [t.get_text() for t in legends["legend-shape"].get_texts()] == \
        ["east/e1", "east/e2", "west/w1", "west/w2"]
    # the layout reflects the sites: hosts of one site are closer than hosts of two
    pos = info["positions"]
    site = {h: lab.split("/")[0] for h, lab in two_sites.labels.items()}
    same, other = [], []
    hosts = two_sites.host_names
    for i, a in enumerate(hosts):
        for b in hosts[i + 1:]:
            d = np.hypot(*np.subtract(pos[a], pos[b]))
            (same if site[a] == site[b] else other).append(d)
    assert np.mean(same) < 0.5 * np.mean(other)
    assert_legible(fig)            # the title (engine, edges drawn) was 5.5 pt


def test_top_share_and_reversed_roles(two_sites, two_sites_hierarchy) -> None:
    fig = plot_layout(two_sites, clusters=two_sites_hierarchy, top=0.25, colour_by="label")
    total = _edge_count(two_sites)
    assert len(segments(fig.axes[0], "edges")) == math.ceil(total / 4)
    titles = {lg.get_gid(): lg.get_title().get_text() for lg in fig.legends}
    assert titles == {"legend-colour": "colour: true label", "legend-shape": "shape: found cluster"}
    # without clusters, one legend: colour and shape both the true label
    fig = plot_layout(two_sites)
    assert [lg.get_gid() for lg in fig.legends] == ["legend"]
    assert fig.tomography_info["colours"] == fig.tomography_info["shapes"] == 4


def test_auto_engine_is_igraph_for_large_graphs() -> None:
    m = planted_partition(AUTO_LIMIT, 5, iterations=2, seed=1, file_size=2**20)
    fig = plot_layout(m, clusters={h: int(h[1:]) // 30 for h in m.host_names})
    info = fig.tomography_info
    assert info["engine"] == "igraph" and "igraph" in fig.axes[0].get_title()
    assert len(points(fig.axes[0])) == AUTO_LIMIT


def test_neato_engine(two_sites) -> None:
    pytest.importorskip("pygraphviz")
    fig = plot_layout(two_sites, engine="neato", seed=3)
    assert fig.tomography_info["engine"] == "neato"
    assert "Graphviz neato" in fig.axes[0].get_title()


def test_layout_positions_engines_agree_on_structure() -> None:
    w = np.full((6, 6), 1.0)
    w[:3, :3] = w[3:, 3:] = 20.0
    np.fill_diagonal(w, 0)
    for engine in ("networkx", "igraph"):
        pos, ran = layout_positions(w, engine=engine, seed=1)
        assert ran == engine and pos.shape == (6, 2)
        inner = np.linalg.norm(pos[0] - pos[1])
        outer = np.linalg.norm(pos[0] - pos[4])
        assert inner < outer


def test_layout_into_given_axes_and_errors(two_sites) -> None:
    from visualize.style import new_figure

    fig, axes = new_figure("double", ncols=2)
    assert plot_layout(two_sites, ax=axes[1]) is fig
    assert len(points(axes[1])) == 20 and len(points(axes[0])) == 0
    with pytest.raises(ValueError, match="top"):
        plot_layout(two_sites, top=0)
    with pytest.raises(ValueError, match="engine"):
        plot_layout(two_sites, engine="fdp")
    with pytest.raises(ValueError, match="no cluster for host 'e1-00'"):
        plot_layout(two_sites, clusters={"w1-00": 0})
