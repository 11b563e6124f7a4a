"""The shared style of every plot: paper-column sizes, colour-blind-safe colours, markers.

Every ``plot_*`` function of :mod:`visualize` draws inside :func:`paper_style`
and makes its figure with :func:`new_figure`, so that all figures print
alike at the width of a paper column:

* widths :data:`SINGLE` (3.4 in, one column) and :data:`DOUBLE` (7 in, the
  page), fonts of 7 to 8 pt, thin spines, no top and right spines;
* categorical colours from the Okabe-Ito palette (:data:`PALETTE`),
  distinguishable with the common colour-vision deficiencies; beyond its 8
  colours, :func:`cluster_style` repeats them with hollow markers;
* sequential data in ``viridis`` (:data:`SEQUENTIAL`): perceptually uniform,
  readable in grey and by colour-blind readers;
* marker shapes (:data:`MARKERS`) for a second categorical variable.

Figures are made with :class:`matplotlib.figure.Figure` directly, not through
:mod:`matplotlib.pyplot`: no window opens, nothing is registered globally, no
backend is needed to save them (``fig.savefig("x.pdf")``) and a script never
leaks figures.  In a notebook, a figure returned by the last line of a cell
is shown as a picture (this module registers that display inside IPython
when matplotlib's own inline display is not there).

Examples
--------
>>> fig, ax = new_figure("single", aspect=0.6)
>>> fig.get_size_inches().tolist()
[3.4, 2.04]
>>> with paper_style():
...     import matplotlib
...     matplotlib.rcParams["font.size"]
8.0
>>> cluster_style(8)          # the 9th category: first colour again, hollow
('#E69F00', False)
"""

from __future__ import annotations

import contextlib
import functools
import sys
from typing import Any, Iterator, Mapping

import matplotlib
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from tomography.model.errors import ParameterError

__all__ = ["SINGLE", "DOUBLE", "PALETTE", "MARKERS", "SEQUENTIAL", "NEUTRAL", "RC",
           "paper_style", "new_figure", "figure_of", "cluster_style", "marker_of",
           "set_info", "block_unit", "tint", "box_layout", "text_size", "inches",
           "MIN_FONT", "RESOLUTIONS"]

SINGLE = 3.4
"""Width in inches of a one-column figure."""

DOUBLE = 7.0
"""Width in inches of a page-wide (two-column) figure."""

PALETTE = ("#E69F00", "#56B4E9", "#009E73", "#0072B2", "#D55E00", "#CC79A7", "#F0E442",
           "#000000")
"""Okabe-Ito colours (orange, sky blue, bluish green, blue, vermillion, reddish
purple, yellow, black), in the order categories get them."""

MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p")
"""Marker shapes, in the order categories get them."""

SEQUENTIAL = "viridis"
"""Colour map of every heat map and timeline."""

NEUTRAL = "#7F7F7F"
"""Grey for edges, guides and secondary marks."""

RESOLUTIONS = (100, 150, 200, 300)
"""Dots per inch a figure is shown (150 in a notebook) or saved at as a picture (300 by
``tomography plot``); PDF and SVG lay text out without hinting, within these widths."""

MIN_FONT = 6.0
"""The smallest font size, in points, of any text of a figure printed at its size."""

RC: dict[str, Any] = {
    "font.size": 8.0,
    "axes.titlesize": 8.0,
    "axes.labelsize": 8.0,
    "xtick.labelsize": 7.0,
    "ytick.labelsize": 7.0,
    "legend.fontsize": 7.0,
    "legend.title_fontsize": 7.0,
    "figure.titlesize": 8.0,
    "axes.linewidth": 0.6,
    "xtick.major.width": 0.6,
    "ytick.major.width": 0.6,
    "xtick.major.size": 2.5,
    "ytick.major.size": 2.5,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.prop_cycle": matplotlib.cycler(color=list(PALETTE)),
    "lines.linewidth": 1.2,
    "lines.markersize": 4.0,
    "legend.frameon": False,
    "legend.handlelength": 1.5,
    "legend.borderaxespad": 0.3,
    "image.cmap": SEQUENTIAL,
    "figure.dpi": 150,
    "savefig.dpi": 300,
    "savefig.bbox": "tight",
    "savefig.pad_inches": 0.02,
    "pdf.fonttype": 42,   # TrueType in PDF: editable text, accepted by publishers
    "ps.fonttype": 42,
    "svg.fonttype": "path",
}
"""The rc parameters of :func:`paper_style`."""


@contextlib.contextmanager
def paper_style(**overrides: Any) -> Iterator[None]:
    """Draw with the paper style (:data:`RC`), plus ``overrides`` (rc names with ``_`` for ``.``).

    Parameters
    ----------
    **overrides
        rc parameters to change, e.g. ``font_size=9`` for ``font.size``.

    Examples
    --------
    >>> import matplotlib
    >>> with paper_style(font_size=9):
    ...     matplotlib.rcParams["font.size"], matplotlib.rcParams["legend.frameon"]
    (9.0, False)
    """
    rc = dict(RC)
    rc.update({key.replace("_", ".", 1) if "." not in key else key: value
               for key, value in overrides.items()})
    with matplotlib.rc_context(rc):
        yield


def _figure_png(fig: Figure) -> bytes:
    import io

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=150, bbox_inches="tight")
    return buffer.getvalue()


def _notebook_display() -> None:
    """In IPython, show a returned Figure as a picture, unless something already does.

    matplotlib's notebook integration (``%matplotlib inline``) registers its
    own display of figures when pyplot loads its backend; figures made
    without pyplot need this one when the notebook never used pyplot.
    """
    ipython = sys.modules.get("IPython")
    shell = getattr(ipython, "get_ipython", lambda: None)() if ipython else None
    formatters = getattr(getattr(shell, "display_formatter", None), "formatters", {})
    png = formatters.get("image/png") if formatters else None
    if png is None:
        return
    try:
        png.lookup_by_type(Figure)
    except KeyError:
        png.for_type(Figure, _figure_png)


def new_figure(width: str | float = "single", *, aspect: float = 0.75, nrows: int = 1,
               ncols: int = 1, height: float | None = None,
               **subplot_kw: Any) -> tuple[Figure, Any]:
    """A figure at paper-column size, with constrained layout, and its axes.

    Parameters
    ----------
    width : {"single", "double"} or float
        :data:`SINGLE`, :data:`DOUBLE` or a width in inches.
    aspect : float, default 0.75
        Height over width, unless ``height`` is given.
    nrows, ncols : int
        Grid of axes (as :meth:`matplotlib.figure.Figure.subplots`).
    height : float, optional
        Height in inches.
    **subplot_kw
        Passed to :meth:`~matplotlib.figure.Figure.subplots` (``gridspec_kw``,
        ``sharey``, ...).

    Returns
    -------
    (Figure, Axes or array of Axes)

    Examples
    --------
    >>> fig, axes = new_figure("double", ncols=2, height=2.0)
    >>> fig.get_size_inches().tolist(), len(axes)
    ([7.0, 2.0], 2)
    """
    _notebook_display()
    w = inches(width)
    h = float(height) if height is not None else round(w * aspect, 4)
    fig = Figure(figsize=(w, h), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=True, **subplot_kw)
    return fig, axes


def inches(width: str | float) -> float:
    """A figure width in inches: :data:`SINGLE`, :data:`DOUBLE`, or the number given.

    Examples
    --------
    >>> inches("single"), inches("double"), inches(5)
    (3.4, 7.0, 5.0)
    """
    if isinstance(width, str):
        if width not in ("single", "double"):
            raise ParameterError(f"width must be 'single', 'double' or inches, got {width!r}")
        return SINGLE if width == "single" else DOUBLE
    return float(width)


def figure_of(ax: Axes | None, width: str | float = "single", **kwargs: Any
              ) -> tuple[Figure, Axes]:
    """``ax`` and its figure, or a new figure with one axes when ``ax`` is None.

    Examples
    --------
    >>> fig, ax = figure_of(None, "double", aspect=0.5)
    >>> figure_of(ax)[0] is fig
    True
    """
    if ax is None:
        return new_figure(width, **kwargs)
    return ax.get_figure(root=True) if _has_root_kw() else ax.figure, ax


def _has_root_kw() -> bool:
    return tuple(int(p) for p in matplotlib.__version__.split(".")[:2]) >= (3, 10)


def cluster_style(index: int) -> tuple[str, bool]:
    """Colour of category ``index`` and whether its markers are filled.

    The first 8 categories get the 8 palette colours, filled; the next 8 the
    same colours hollow, and so on, alternating.

    Examples
    --------
    >>> cluster_style(0), cluster_style(8)
    (('#E69F00', True), ('#E69F00', False))
    """
    return PALETTE[index % len(PALETTE)], (index // len(PALETTE)) % 2 == 0


def marker_of(index: int) -> str:
    """Marker shape of category ``index`` (cycling through :data:`MARKERS`).

    Examples
    --------
    >>> marker_of(0), marker_of(len(MARKERS) + 1)
    ('o', 's')
    """
    return MARKERS[index % len(MARKERS)]


def tint(colour: str, amount: float = 0.8) -> tuple[float, float, float]:
    """``colour`` mixed with white (``amount`` of white): a background that keeps text readable.

    Examples
    --------
    >>> tint("#000000", 0.5)
    (0.5, 0.5, 0.5)
    """
    from matplotlib.colors import to_rgb

    r, g, b = to_rgb(colour)
    return (r + (1 - r) * amount, g + (1 - g) * amount, b + (1 - b) * amount)


def box_layout(texts: list[str], slots: float, width: str | float | None,
               share: float = 0.8) -> tuple[str | float, float]:
    """Figure width and font size for ``slots`` boxes of ``texts`` side by side.

    One column when the boxes fit at 6 pt or more, else the page; the font is
    the largest (at most 7 pt, at least 4 pt) at which the widest box fits
    its slot.  ``share`` is the part of the figure width the boxes get.

    Examples
    --------
    >>> box_layout(["L1C0\\n5 hosts"], 2, None)
    ('single', 7.0)
    >>> box_layout(["R1-R4/R1R2"] * 8, 8, None)[0]
    'double'
    """
    longest = max((len(line) for t in texts for line in t.split("\n")), default=1)
    ems = longest * 0.6 + 1.6          # a character is about 0.6 em; padding on both sides

    def size(across: float) -> float:
        return 72.0 * across * share / max(slots, 1.0) / ems

    if width is None:
        width = "single" if size(SINGLE) >= 6.0 else "double"
    return width, float(min(7.0, max(4.0, size(inches(width)))))


def text_size(text: str, fontsize: float, *, linespacing: float = 1.2
              ) -> tuple[float, float]:
    """Width and height in inches of ``text`` as matplotlib lays it out at ``fontsize``.

    Measured with the font of the current rc parameters (call it inside
    :func:`paper_style`), lines split at ``\\n``; a box around the text adds
    its padding to this.  Hinted glyphs make a line a few percent wider or
    narrower from one resolution to the next: the width is the largest at
    the resolutions figures are saved at (:data:`RESOLUTIONS`).

    Parameters
    ----------
    text : str
    fontsize : float
        In points.
    linespacing : float, default 1.2
        Between lines, in font sizes (matplotlib's default).

    Returns
    -------
    (float, float)
        Width and height in inches.

    Examples
    --------
    >>> with paper_style():
    ...     w1, h1 = text_size("L1C0", 6.0)
    ...     w2, h2 = text_size("L1C0\\nL1C0", 6.0)
    >>> w1 == w2, bool(h2 > 1.5 * h1), round(72 * w1)     # the width in points
    (True, True, 15)
    """
    from matplotlib.font_manager import FontProperties

    font = FontProperties(size=fontsize)     # the family and weight of the current rc
    lines = text.split("\n")
    # matplotlib makes every line as tall as the font's tallest letters: the height
    # depends on the number of lines only
    return max(_width(line, font) for line in lines), _height(len(lines), font, linespacing)


@functools.lru_cache(maxsize=4096)
def _width(line: str, font: Any) -> float:
    """Width in inches of one line of text, the largest at the :data:`RESOLUTIONS`."""
    from matplotlib.cbook import is_math_text

    return max(_renderer(dpi).get_text_width_height_descent(
        line, font, ismath=is_math_text(line))[0] / dpi for dpi in RESOLUTIONS)


@functools.lru_cache(maxsize=64)
def _height(lines: int, font: Any, linespacing: float) -> float:
    """Height in inches of ``lines`` lines of text, as matplotlib lays them out."""
    probe = Figure(dpi=72).text(0, 0, "\n".join(["Ag"] * lines), fontproperties=font,
                                linespacing=linespacing)
    return float(probe.get_window_extent(renderer=_renderer(72)).height) / 72.0


@functools.lru_cache(maxsize=None)
def _renderer(dpi: int) -> Any:
    from matplotlib.backends.backend_agg import RendererAgg

    return RendererAgg(1, 1, dpi)


def set_info(fig: Figure, **info: Any) -> None:
    """Record what a plot drew as ``fig.tomography_info`` (a dict), for code and tests.

    Every ``plot_*`` function sets ``kind`` and the counts that describe its
    content (nodes, edges, levels, ...); a figure holding several plots keeps
    the last one's.

    Examples
    --------
    >>> fig, _ = new_figure()
    >>> set_info(fig, kind="example", nodes=3)
    >>> fig.tomography_info
    {'kind': 'example', 'nodes': 3}
    """
    fig.tomography_info = dict(info)


def block_unit(meta: Mapping[str, Any] | None) -> str:
    """The block size of a dataset in words: ``"16 KiB"``.

    Examples
    --------
    >>> block_unit({"block_size": 16384}), block_unit({"block_size": 1000})
    ('16 KiB', '1000 B')
    """
    size = int((meta or {}).get("block_size", 16384))
    if size % 1024 == 0:
        return f"{size // 1024} KiB"
    return f"{size} B"
