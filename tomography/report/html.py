"""The report page's kit: its template and style, escaping, tables and figures as inline images.

Every section of :mod:`tomography.report.sections` is written with these; none of them
knows the analysis.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
from typing import TYPE_CHECKING, Any, Iterable, Sequence

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

MAX_ROWS = 200
"""Rows a table of the page shows before it stops with a note (``max_rows``)."""

_TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>{title}: bandwidth tomography report</title>
<style>{css}</style>
</head>
<body>
<header><h1>{title}</h1><p class="sub">bandwidth tomography report</p>
<nav>{nav}</nav></header>
<main>
{body}
</main>
<footer>{footer}</footer>
</body>
</html>
"""

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;
margin:0;color:#222;background:#fafafa;line-height:1.4}
header{background:#1f3b57;color:#fff;padding:0.8em 1.5em}
header h1{margin:0;font-size:1.5em}.sub{margin:0.1em 0 0.5em;opacity:0.8}
nav a{color:#cfe3f7;text-decoration:none;white-space:nowrap}nav a:hover{text-decoration:underline}
main{max-width:1100px;margin:0 auto;padding:0 1.5em}
section{background:#fff;border:1px solid #ddd;border-radius:6px;margin:1.2em 0;padding:0.4em 1.2em 1em}
h2{font-size:1.2em;border-bottom:1px solid #eee;padding-bottom:0.2em}
figure{margin:0.8em 0;text-align:center}
figure img{max-width:100%;height:auto;border:1px solid #eee;background:#fff}
figcaption{font-size:0.85em;color:#555;margin-top:0.3em;text-align:left}
table{border-collapse:collapse;font-size:0.85em;margin:0.5em 0}
th,td{border:1px solid #ddd;padding:0.15em 0.5em;text-align:left;vertical-align:top}
th{background:#f0f3f6}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
tr.bad td{background:#fde8e8}
.wide{overflow-x:auto;max-width:100%}
.note{color:#555;font-size:0.9em}
ul.items{columns:3 16em;margin:0;padding-left:1.2em;font-size:0.9em}.verdict{font-weight:bold}
code,pre{font-family:"DejaVu Sans Mono",monospace;font-size:0.85em}
pre{background:#f6f6f6;padding:0.5em;overflow:auto;max-height:24em}
footer{text-align:center;font-size:0.8em;color:#777;padding:1em}
"""


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _note(text: str) -> str:
    return f'<p class="note">{_e(text)}</p>'


DASH = "\u2013"
"""What a table shows where there is no value (no confidence, a level not found)."""


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _numeric(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and not _missing(value)


def _number(value: Any, digits: int = 3) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if not isinstance(value, float):
        return str(value)
    x = value
    if math.isnan(x):
        return ""
    return f"{x:.{digits}f}" if abs(x) < 1e6 else f"{x:.3g}"


def _table(header: Sequence[str], rows: Iterable[Sequence[Any]], max_rows: int,
           total: int | None = None, bad: Sequence[bool] | None = None, what: str = "rows"
           ) -> str:
    """An HTML table of at most ``max_rows`` rows, with a note of those left out.

    A column with a number in it is aligned right, header and every cell; a cell
    without a value (None, NaN) shows :data:`DASH`.  Headers may break after an
    underscore, so that a table of many columns fits the page; one that still
    does not scrolls sideways inside its own box, never the page."""
    shown_rows = []
    for row in rows:
        if len(shown_rows) >= max_rows:
            break
        shown_rows.append(list(row))
    numeric = [str(h) in NUMBER_COLUMNS or any(_numeric(r[j]) for r in shown_rows if j < len(r))
               for j, h in enumerate(header)]

    def cell(j: int, c: Any) -> str:
        num = ' class="num"' if j < len(numeric) and numeric[j] else ""
        text = (DASH if _missing(c) else _number(c) if isinstance(c, (bool, int, float))
                else str(c))
        return f"<td{num}>{_e(text)}</td>"

    right = ' class="num"'
    out = ['<div class="wide"><table><thead><tr>'
           + "".join(f'<th{right if numeric[j] else ""}>{_e(h).replace("_", "_<wbr>")}</th>'
                     for j, h in enumerate(header))
           + "</tr></thead><tbody>"]
    for i, row in enumerate(shown_rows):
        flag = ' class="bad"' if bad is not None and bad[i] else ""
        out.append(f"<tr{flag}>{''.join(cell(j, c) for j, c in enumerate(row))}</tr>")
    shown = len(shown_rows)
    out.append("</tbody></table></div>")
    if total is not None and total > shown:
        out.append(_note(f"the first {shown} of {total} {what} are shown (--max-rows)"))
    return "\n".join(out)


def _frame_table(frame: "pd.DataFrame", max_rows: int, what: str = "rows",
                 header: Sequence[str] | None = None) -> str:
    rows = _rows(frame.head(max_rows))
    return _table(list(header or map(str, frame.columns)), rows, max_rows, total=len(frame),
                  what=what)


NUMBER_COLUMNS = frozenset({"confidence", "separation", "weight", "modularity", "nmi", "Mbit/s"})
"""Columns of numbers, aligned right even when no row has a value (no confidence)."""
COUNT_COLUMNS = frozenset({"n", "clusters", "levels", "level", "truth_depth", "truth_clusters",
                           "best_depth", "repeat", "streams", "concurrent", "retransmits",
                           "runs", "complete", "receivers_complete", "hosts"})
"""Columns that count: shown as whole numbers even when pandas holds them as floats (a
column with a missing value)."""


def _rows(frame: "pd.DataFrame") -> list[list[Any]]:
    """The rows of a frame as Python values, counts (:data:`COUNT_COLUMNS`) as integers."""
    rows = [[_plain(v) for v in r] for r in frame.itertuples(index=False)]
    for j, name in enumerate(frame.columns):
        if str(name) in COUNT_COLUMNS and all(
                not _numeric(r[j]) or float(r[j]).is_integer() for r in rows):
            for r in rows:
                if _numeric(r[j]):
                    r[j] = int(r[j])
    return rows


def _plain(value: Any) -> Any:
    """A numpy scalar as a Python one (tables format numbers by their type); NA as None."""
    value = value.item() if hasattr(value, "item") else value
    try:
        import pandas as pd

        if value is pd.NA or value is pd.NaT:
            return None
    except ImportError:   # pragma: no cover - pandas is a dependency
        pass
    return value


def _image(fig: "Figure", fmt: str, alt: str, caption: str, *, dpi: float = 150,
           scale: float = 140) -> str:
    """A figure inline as a ``data:`` image (SVG or PNG) with its caption."""
    buf = io.BytesIO()
    metadata = {"Date": None} if fmt == "svg" else {}
    fig.savefig(buf, format=fmt, dpi=dpi, bbox_inches="tight", pad_inches=0.03,
                metadata=metadata)
    mime = "image/svg+xml" if fmt == "svg" else "image/png"
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    w, h = fig.get_size_inches()
    return (f'<figure><img src="data:{mime};base64,{data}" alt="{_e(alt)}" '
            f'data-figure="{_e(alt)}" style="width:{min(w * scale, 1050):.0f}px">'
            f"<figcaption>{_e(caption)}</figcaption></figure>")



def _seconds(x: float) -> str:
    """A small time in its unit: 21 µs, 3.2 ms, 1.5 s."""
    if x < 1e-3:
        return f"{x * 1e6:.0f} µs"
    return f"{x * 1e3:.1f} ms" if x < 1 else f"{x:.1f} s"


def _value(value: Any) -> str:
    """A meta.json value: scalars as text, objects as their flattened ``key: value`` items
    (empty ones left out); a list of strings as lines."""
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "<br>".join(map(_e, value))
    if not isinstance(value, (dict, list)):
        return _e(value)
    items = list(_flat(value))
    cut = len(items) > 120
    shown = "".join(f"<li><code>{_e(k)}</code>: {_e(v)}</li>" for k, v in items[:120])
    return (f'<ul class="items">{shown}</ul>'
            + (_note(f"the first 120 of {len(items)} entries (the rest are in meta.json)")
               if cut else ""))


def _flat(value: Any, prefix: str = "", raw: bool = False) -> Iterable[tuple[str, Any]]:
    """``(dotted key, JSON text)`` of every scalar inside a JSON object or list, the empty
    ones (None, "", {}, []) left out; ``raw``: the scalars themselves."""
    pairs = value.items() if isinstance(value, dict) else enumerate(value)
    for key, item in pairs:
        name = f"{prefix}.{key}" if prefix else str(key)
        if _empty(item):
            continue
        if isinstance(item, (dict, list)) and (raw or len(json.dumps(item, default=str)) > 40):
            yield from _flat(item, name, raw)
        else:
            yield name, (item if raw or isinstance(item, str)
                         else json.dumps(item, default=str))


def _empty(value: Any) -> bool:
    """None, an empty string, list or object: nothing to show."""
    return value is None or (isinstance(value, (str, list, dict, tuple)) and not value)
