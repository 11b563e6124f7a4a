"""A notebook shows the toolkit's objects in a line, or a small table, whatever their size."""

from __future__ import annotations

import pytest

import tomography
from tomography.model.synthetic import planted_hierarchy


@pytest.fixture(scope="module")
def large():
    m = planted_hierarchy((4, 4), 64, iterations=3, seed=2)    # 1024 hosts
    return m, tomography.analyze(m, truth="labels", resamples=0)


def test_reprs_are_one_short_line_at_1024_hosts(large) -> None:
    m, a = large
    for obj in (m, a, a.flat, a.flat.clustering, a.hierarchy, a.tree, a.hierarchy[1][0]):
        text = repr(obj)
        assert "\n" not in text and len(text) < 200, (type(obj).__name__, len(text))
    assert repr(a.hierarchy).startswith("Hierarchy(1024 hosts, ")


def test_notebook_views_are_small_html_tables(large) -> None:
    m, a = large
    _ = a.accuracy
    for obj in (m, a, a.flat, a.flat.clustering, a.hierarchy, a.tree):
        html = obj._repr_html_()
        assert html.startswith("<div") and "<table" in html, type(obj).__name__
        assert len(html) < 20_000, (type(obj).__name__, len(html))
    assert "more rows" in m._repr_html_()          # 1024 hosts: the first rows only


def test_a_hierarchy_is_sized_and_indexed_by_level_number(large) -> None:
    _, a = large
    h = a.hierarchy
    assert len(h) == h.depth and list(h) == h.levels
    assert h[1] == h.level(1) and h[len(h)] == h.levels[-1]
    assert h[h[1][0].id] == h[1][0]
    with pytest.raises(IndexError, match="no level 0: levels are numbered 1 .the finest. to"):
        h[0]
    with pytest.raises(TypeError, match="indexed by level number"):
        h[1.5]


def test_flat_clusterings_have_a_frame(large) -> None:
    m, a = large
    frame = a.flat.clustering.to_frame()
    assert list(frame.columns) == ["host", "cluster"] and len(frame) == m.n_hosts
    assert list(a.flat.to_frame().columns) == ["host", "cluster", "confidence"]


def test_smaller_objects_print_short_too(large) -> None:
    from tomography.model.interop import as_weights, from_pandas

    m, a = large
    h = a.hierarchy
    assert h[-1] == h.levels[-1]
    assert "<table>" in h[1][0]._repr_html_()
    assert repr(as_weights(m)).startswith("EdgeWeights(1024 hosts, ")
    rounds = from_pandas(m.edges(per_iteration=True))
    assert len(repr(rounds)) < 120 and "3 rounds" in repr(rounds)
