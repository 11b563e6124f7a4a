"""Checks of what a figure holds: saved pictures, drawn points, lines and texts."""

from __future__ import annotations

from pathlib import Path

import matplotlib.image
import numpy as np
from matplotlib.collections import LineCollection, PathCollection
from matplotlib.figure import Figure
from matplotlib.text import Text


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
