"""Checks of what a figure holds: saved pictures, drawn points, lines and texts."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import matplotlib.image
import numpy as np
from matplotlib.axis import Axis
from matplotlib.collections import LineCollection, PathCollection
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.transforms import Bbox


def saved(fig: Figure, path: Path, dpi: int = 100) -> Path:
    """Save a figure; check that the file is a picture of the figure's size (PNG) or format."""
    fig.savefig(path, dpi=dpi)
    assert path.stat().st_size > 1000
    head = path.read_bytes()[:200]
    if path.suffix == ".png":
        image = matplotlib.image.imread(path)
        w, h = fig.get_size_inches()
        assert abs(image.shape[0] - h * dpi) <= 1 and abs(image.shape[1] - w * dpi) <= 1
        assert image[..., :3].std() > 0.05          # not a blank picture
    elif path.suffix == ".pdf":
        assert head.startswith(b"%PDF")
    elif path.suffix == ".svg":
        assert b"<svg" in path.read_bytes()[:2000]
    return path


def points(ax, prefix: str = "nodes") -> np.ndarray:
    """Offsets of the scatter collections whose gid starts with ``prefix``."""
    found = [c.get_offsets() for c in ax.collections
             if isinstance(c, PathCollection) and (c.get_gid() or "").startswith(prefix)]
    return np.concatenate(found) if found else np.zeros((0, 2))


def segments(ax, gid: str) -> list[np.ndarray]:
    """The segments of the line collection ``gid``."""
    (collection,) = [c for c in ax.collections
                     if isinstance(c, LineCollection) and c.get_gid() == gid]
    return collection.get_segments()


def texts(ax) -> dict[str, Text]:
    """The texts of an axes that have a gid, by gid."""
    return {t.get_gid(): t for t in ax.texts if t.get_gid()}


def drawn_texts(fig: Figure) -> dict[Text, Bbox]:
    """Every text the saved figure shows, with its extent in pixels (its box included).

    The figure is laid out first; empty or invisible texts, the ticks and
    labels of hidden axes and the labels of ticks outside the view are
    left out.
    """
    fig.draw_without_rendering()
    hidden: set[int] = set()
    for axis in fig.findobj(Axis):
        low, high = sorted(axis.get_view_interval())
        slack = 1e-9 * (high - low)
        shown = axis.get_visible() and axis.axes.axison
        if not shown:
            hidden.add(id(axis.label))
        for tick in axis.get_major_ticks() + axis.get_minor_ticks():
            if not shown or not low - slack <= tick.get_loc() <= high + slack:
                hidden.update({id(tick.label1), id(tick.label2)})
    found = {}
    for text in fig.findobj(Text):
        if not (text.get_visible() and text.get_text().strip()) or id(text) in hidden:
            continue
        extent = text.get_window_extent()
        patch = text.get_bbox_patch()
        if patch is not None:
            extent = Bbox.union([extent, patch.get_window_extent()])
        found[text] = extent
    return found


def overlapping_texts(fig: Figure, tolerance: float = 0.5) -> list[tuple[str, str]]:
    """Pairs of drawn texts whose extents overlap by more than ``tolerance`` pixels."""
    extents = drawn_texts(fig)
    pairs = []
    for (a, box_a), (b, box_b) in combinations(extents.items(), 2):
        if (min(box_a.x1, box_b.x1) - max(box_a.x0, box_b.x0) > tolerance
                and min(box_a.y1, box_b.y1) - max(box_a.y0, box_b.y0) > tolerance):
            pairs.append((a.get_text(), b.get_text()))
    return pairs


def smallest_font(fig: Figure) -> float:
    """The smallest font size, in points, of the texts the figure shows."""
    return min(t.get_fontsize() for t in drawn_texts(fig))


def assert_legible(fig: Figure) -> None:
    """No text on another, none under 6 pt, nothing outside the figure (a column or a page)."""
    assert overlapping_texts(fig) == []
    assert smallest_font(fig) >= 6.0
    drawn = fig.get_tightbbox()
    width, height = fig.get_size_inches()
    assert drawn.x0 >= -0.01 and drawn.y0 >= -0.01
    assert drawn.x1 <= width + 0.01 and drawn.y1 <= height + 0.01
