"""Short views of the toolkit's objects: one line for ``repr``, a table for a notebook.

A dataset or a hierarchy of thousands of hosts prints in one line whatever its
size; in Jupyter, ``_repr_html_`` shows the few facts that matter and the
first rows of its table.
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING, Iterable, Sequence

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["some", "span", "html_view", "ROWS"]

ROWS = 12
"""Rows of a table a notebook view shows before saying how many more there are."""


def some(names: Sequence[str], limit: int = 3, *, count: bool = True) -> str:
    """The first ``limit`` names, and (``count``) how many there are in all.

    Examples
    --------
    >>> some(["a", "b"]), some([f"h{i}" for i in range(40)])
    ('a, b', 'h0, h1, h2, ... (40)')
    >>> some([f"h{i}" for i in range(40)], count=False)
    'h0, h1, h2, ...'
    """
    names = [str(n) for n in names]
    if len(names) <= limit:
        return ", ".join(names)
    return f"{', '.join(names[:limit])}, ..." + (f" ({len(names)})" if count else "")


def span(values: Iterable[float]) -> str:
    """The range of some values, as text: one value, ``low-high``, or "" for none.

    Examples
    --------
    >>> span([3, 3]), span([2, 5, 4]), span([0.8125, 1.0]), span([])
    ('3', '2-5', '0.81-1.00', '')
    """
    values = sorted(values)
    if not values:
        return ""
    text = [f"{v:.2f}" if isinstance(v, float) else str(v) for v in (values[0], values[-1])]
    return text[0] if text[0] == text[1] else f"{text[0]}-{text[1]}"


def html_view(title: str, facts: Iterable[tuple[str, object]],
              frame: "pd.DataFrame | None" = None, *, rows: int = ROWS) -> str:
    """An object's notebook view: its title, a table of facts, the first ``rows`` of a frame.

    Examples
    --------
    >>> import pandas as pd
    >>> html = html_view("Thing", [("hosts", 3)], pd.DataFrame({"x": range(20)}), rows=2)
    >>> "<th>hosts</th><td>3</td>" in html, "18 more rows" in html
    (True, True)
    """
    lines = "".join(f"<tr><th>{escape(str(k))}</th><td>{escape(str(v))}</td></tr>"
                    for k, v in facts)
    parts = [f"<div class='tomography-view'><strong>{escape(title)}</strong>",
             f"<table>{lines}</table>" if lines else ""]
    if frame is not None and len(frame):
        parts.append(frame.head(rows).to_html(index=False, border=0))
        if len(frame) > rows:
            parts.append(f"<p>{len(frame) - rows} more rows</p>")
    return "".join(parts) + "</div>"
