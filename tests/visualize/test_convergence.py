"""plot_convergence: one curve per flat clustering and hierarchy level, the table's values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cluster.accuracy import convergence
from visualize import plot_convergence

from .helpers import assert_legible, saved


def _lines(fig) -> dict[str, object]:
    return {line.get_gid()[len("series:"):]: line for line in fig.axes[0].get_lines()
            if (line.get_gid() or "").startswith("series:")}


@pytest.fixture(scope="module")
def table(two_sites) -> pd.DataFrame:
    return convergence(two_sites, two_sites.labels)


def test_curves_are_the_table(table, tmp_path) -> None:
    fig = plot_convergence(table)
    saved(fig, tmp_path / "convergence.png")
    lines = _lines(fig)
    levels = [c for c in table.columns if c.startswith("level_")]
    assert len(lines) == 1 + len(levels)
    flat = lines["flat (Louvain)"]
    assert list(flat.get_xdata()) == table["n"].tolist() == [1, 2, 3]
    assert np.allclose(flat.get_ydata(), table["nmi"])
    for column in levels:
        k = column.split("_")[1]
        # a level absent at some n (NaN in the table) is a gap in its curve
        assert np.allclose(lines[f"hierarchy level {k}"].get_ydata(), table[column],
                           equal_nan=True)
    ax = fig.axes[0]
    assert ax.get_ylim()[0] < 0 < 1 < ax.get_ylim()[1] <= 1.1
    assert "NMI" in ax.get_ylabel() and "iterations" in ax.get_xlabel()
    assert [t.get_text() for t in ax.get_legend().get_texts()] == list(lines)
    assert_legible(fig)            # the legend above the plot stays inside the figure


def test_bars_overlap_and_several_tables(table, tmp_path) -> None:
    fig = plot_convergence(table, kind="bar", overlapping=True, levels=False)
    bars = [p for p in fig.axes[0].patches]
    assert len(bars) == 2 * len(table)                # flat and overlapping, per n
    assert np.allclose(sorted(b.get_height() for b in bars),
                       sorted(table["nmi"].tolist() + table["overlapping_nmi"].tolist()))
    other = table.assign(nmi=table["nmi"] / 2)
    fig = plot_convergence({"real": table, "simulated": other})
    saved(fig, tmp_path / "two.svg")
    lines = _lines(fig)
    assert "real: flat (Louvain)" in lines and "simulated: flat (Louvain)" in lines
    assert np.allclose(lines["simulated: flat (Louvain)"].get_ydata(), table["nmi"] / 2)
    # one colour per table, one line style per curve kind
    assert lines["real: flat (Louvain)"].get_color() != \
        lines["simulated: flat (Louvain)"].get_color()
    assert lines["real: flat (Louvain)"].get_linestyle() != \
        lines["real: hierarchy level 1"].get_linestyle()
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert legend[:2] == ["real", "simulated"] and "flat (Louvain)" in legend


def test_errors(table) -> None:
    with pytest.raises(ValueError, match="columns n and nmi"):
        plot_convergence(pd.DataFrame({"x": [1]}))
    with pytest.raises(ValueError, match="one table"):
        plot_convergence({"a": table, "b": table}, kind="bar")


def test_flat_curves_at_1_and_0_stand_clear_of_the_axes(tmp_path) -> None:
    """NMI 1 from the start (found at once) and 0 throughout: both curves visible."""
    t = pd.DataFrame({"n": [1, 2, 3, 4], "nmi": [1.0] * 4, "level_1_nmi": [0.0] * 4})
    fig = plot_convergence(t)
    saved(fig, tmp_path / "flat.png")
    ax = fig.axes[0]
    fig.draw_without_rendering()
    to_points = 72.0 / fig.dpi
    bottom, top = (ax.transData.transform([(1, y)])[0][1] * to_points
                   for y in ax.get_ylim())
    at_one = ax.transData.transform([(1, 1.0)])[0][1] * to_points
    at_zero = ax.transData.transform([(1, 0.0)])[0][1] * to_points
    # a whole marker (the largest is 5.5 pt across) between the curve and the axis line:
    # the line stays clear of the spine (or the frame of a caller's style)
    assert top - at_one >= 5.5 and at_zero - bottom >= 5.5
    for line in _lines(fig).values():
        assert not line.get_clip_on()             # markers on the edges are drawn whole
    assert [t.get_text() for t in ax.get_yticklabels()] == ["0.00", "0.25", "0.50", "0.75",
                                                            "1.00"]
    assert_legible(fig)


def test_a_long_legend_takes_fewer_columns() -> None:
    """Five curves in three columns stuck out of a one-column figure: now two columns."""
    t = pd.DataFrame({"n": [1, 2], "nmi": [0.5, 1.0],
                      **{f"level_{k}_nmi": [0.5, 1.0] for k in range(1, 5)}})
    fig = plot_convergence(t)
    assert len(fig.tomography_info["series"]) == 5
    assert_legible(fig)
    columns = {round(t.get_window_extent().x0) for t in fig.axes[0].get_legend().get_texts()}
    assert len(columns) == 2
