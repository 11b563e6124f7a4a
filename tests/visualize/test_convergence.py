"""plot_convergence: one curve per flat clustering and hierarchy level, the table's values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cluster.accuracy import convergence
from visualize import plot_convergence

from .helpers import saved


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
    assert ax.get_ylim()[0] < 0 < 1 < ax.get_ylim()[1] <= 1.05
    assert "NMI" in ax.get_ylabel() and "iterations" in ax.get_xlabel()
    assert [t.get_text() for t in ax.get_legend().get_texts()] == list(lines)


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
