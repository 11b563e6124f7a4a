"""One page per run: a self-contained HTML report of a dataset and its analysis.

:func:`write_report` analyses a dataset through :func:`tomography.pipeline.analyze`
(or takes an :class:`~tomography.pipeline.Analysis` already made) and writes one
HTML file that needs nothing else to open: no server, no network, no script,
every figure inline as a ``data:`` image (SVG for the diagrams, PNG for the
heat map).  The page shows

* how the dataset was measured (its ``meta.json``: method, hosts, iterations
  or tests, parameters, seed, software versions, launcher or testbed) and the
  options of the analysis;
* the heat map of ``w_n`` (broadcast datasets, :func:`visualize.plot_heatmap`),
  or a grid of the probes' bandwidths, sources in rows and destinations in
  columns, failed tests marked (probe datasets);
* Louvain's flat clusters, the Hasse diagram of the hierarchy and the tree of
  clusters, each with its confidence;
* the stop rule's verdict after each iteration, and with a ground truth the
  NMI per iteration and per level;
* the probe table (probe datasets) and the table of a multicast run recorded
  beside the dataset (``multicasts.csv``).

Large runs stay usable: the heat map is a raster image of bounded size, the
Hasse diagram folds small clusters itself, a tree of more than
:data:`MAX_TREE_NODES` clusters is given as a table only, and every table
stops after ``max_rows`` rows with a note.  Like the pipeline, this module
stands on top of the layers.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from tomography.errors import ParameterError
from tomography.pipeline import Analysis, analyze, is_probe_dataset, refuse_nothing_exchanged
from tomography.units import counted
from tomography.weights import tcp_probes

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = ["write_report", "report_html", "find_multicasts", "probe_grid", "Report", "MAX_ROWS",
           "MAX_TREE_NODES", "HEATMAP_PIXELS"]

MAX_ROWS = 200
"""Rows a table of the page shows before it stops with a note (``max_rows``)."""
MAX_TREE_NODES = 150
"""Clusters above which the tree is given as a table only (its drawing would be unreadable)."""
HEATMAP_PIXELS = 1400
"""Largest side, in pixels, of the heat map's image: at 4096 hosts a few hosts share a pixel."""
MULTICAST_PLACES = ("multicast", "../multicast")
"""Where a multicast run is looked for, relative to the dataset: inside it, or beside it
(``tomography demo`` writes ``OUT/dataset`` and ``OUT/multicast``)."""


@dataclass(frozen=True)
class Report:
    """What :func:`write_report` wrote.

    Attributes
    ----------
    path : Path
        The HTML file.
    bytes : int
        Its size.
    seconds : float
        Time taken, analysis included.
    sections : list of str
        The ids of the page's sections, in order.
    """

    path: Path
    bytes: int
    seconds: float
    sections: list[str]

    def describe(self) -> str:
        """One line for the user: where the page is, its size and its sections.

        Examples
        --------
        >>> Report(Path("r.html"), 2048, 1.5, ["measured", "heatmap"]).describe()
        'wrote r.html (2.0 KiB, 1.5 s; sections: measured, heatmap)'
        """
        size = (f"{self.bytes / 2**20:.1f} MiB" if self.bytes >= 2**20
                else f"{self.bytes / 2**10:.1f} KiB")
        return (f"wrote {self.path} ({size}, {self.seconds:.1f} s; sections: "
                f"{', '.join(self.sections)})")


def find_multicasts(dataset: str | os.PathLike[str]) -> Path | None:
    """The multicast run recorded beside a dataset, or None.

    A directory with ``multicasts.csv`` in one of :data:`MULTICAST_PLACES`
    (inside the dataset, or next to it as ``tomography demo`` writes it).

    Examples
    --------
    >>> find_multicasts("/nonexistent/dataset") is None
    True
    """
    root = Path(dataset)
    for place in MULTICAST_PLACES:
        candidate = (root / place).resolve()
        if (candidate / "multicasts.csv").is_file():
            return candidate
    return None


def write_report(data: "str | os.PathLike[str] | Analysis", output: str | os.PathLike[str], *,
                 dataset: "str | os.PathLike[str] | None" = None,
                 multicast: "str | os.PathLike[str] | None | bool" = None,
                 stop_k: int | None = None, max_rows: int = MAX_ROWS,
                 title: str | None = None, **options: Any) -> Report:
    """Analyse a dataset and write its one-page HTML report.

    Parameters
    ----------
    data : dataset directory or Analysis
        A measurement dataset (analysed here with ``options``; its labels are
        the truth unless ``truth`` is given) or an analysis made already.
    output : path
        The HTML file to write (its directory is created).
    dataset : path, optional
        With an Analysis: its dataset's directory, named on the page and
        where a multicast run is looked for.
    multicast : path, False or None
        A multicast run's directory (``tomography multicast -o``) whose table
        the page shows; None looks beside the dataset (:func:`find_multicasts`);
        False shows none.
    stop_k : int, optional
        The stop rule's ``k``: iterations before the current one in which a
        level must have been supported (default
        :data:`cluster.stability.DEFAULT_STABLE`, as ``measure --until-converged``).
    max_rows : int
        Rows each table shows at most.
    title : str, optional
        The page's title (default: the dataset's name).
    **options
        Arguments of :func:`tomography.pipeline.analyze` (``seed``,
        ``iterations``, ``truth``, ...), when ``data`` is a dataset.

    Returns
    -------
    Report

    Raises
    ------
    TomographyError
        An unreadable dataset or multicast run.

    Examples
    --------
    >>> import tempfile
    >>> from tomography.synthetic import planted_partition
    >>> from tomography.dataset import write_measurement
    >>> d = Path(tempfile.mkdtemp())
    >>> write_measurement(planted_partition(8, 2, iterations=2, seed=0), d / "data")
    >>> r = write_report(d / "data", d / "run.html", resamples=0)
    >>> r.sections[:3], r.path.read_text().startswith("<!DOCTYPE html>")
    (['measured', 'heatmap', 'clusters'], True)
    """
    started = time.perf_counter()
    if isinstance(data, Analysis):
        if options:
            raise ParameterError("write_report() takes analysis options only with a dataset, "
                                 f"not with an Analysis (got {', '.join(sorted(options))})")
        a, where = data, None if dataset is None else Path(dataset)
    else:
        from tomography.dataset import read_measurement

        where = Path(data)
        m = read_measurement(where)
        refuse_nothing_exchanged(m, where)     # named with its file, before the analysis
        if "truth" not in options:   # the dataset's own labels, when it has any
            options["truth"] = "labels" if m.labels else None
        a = analyze(m, **options)
    if multicast is None and where is not None:
        multicast = find_multicasts(where)
    page, sections = _page(a, dataset=where, multicast=multicast or None, stop_k=stop_k,
                           max_rows=max_rows, title=title)
    out = Path(output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page, encoding="utf-8")
    return Report(out, out.stat().st_size, time.perf_counter() - started, sections)


def report_html(analysis: Analysis, *, dataset: "str | os.PathLike[str] | None" = None,
                multicast: "str | os.PathLike[str] | None" = None, stop_k: int | None = None,
                max_rows: int = MAX_ROWS, title: str | None = None) -> str:
    """The report of an analysis as one self-contained HTML page.

    Parameters
    ----------
    analysis : Analysis
        From :func:`tomography.pipeline.analyze`; a truth given to it adds the
        accuracy and convergence.
    dataset : path, optional
        The dataset's directory, named on the page.
    multicast : path, optional
        A multicast run's directory whose table the page shows.
    stop_k, max_rows, title
        As :func:`write_report`.

    Returns
    -------
    str

    Examples
    --------
    >>> from tomography.synthetic import planted_partition
    >>> page = report_html(analyze(planted_partition(8, 2, iterations=2, seed=0), resamples=0))
    >>> 'id="hierarchy"' in page, "http://" in page
    (True, False)
    """
    return _page(analysis, dataset=None if dataset is None else Path(dataset),
                 multicast=multicast, stop_k=stop_k, max_rows=max_rows, title=title)[0]


# --------------------------------------------------------------------------- the page

def _page(a: Analysis, *, dataset: Path | None, multicast: Any, stop_k: int | None,
          max_rows: int, title: str | None) -> tuple[str, list[str]]:
    """The HTML text and the ids of its sections."""
    import matplotlib

    if "matplotlib.pyplot" not in __import__("sys").modules:
        matplotlib.use("Agg")
    if isinstance(max_rows, bool) or not isinstance(max_rows, int) or max_rows < 1:
        raise ParameterError(f"max_rows must be a whole number >= 1, got {max_rows!r}")
    m = a.measurement
    probe = is_probe_dataset(m)
    name = title or (dataset.resolve().name if dataset is not None else
                     f"{m.meta.get('method', 'dataset')} dataset")
    if name == "dataset" and dataset is not None:
        name = dataset.resolve().parent.name or name
    sections: list[tuple[str, str, str]] = [("measured", "What was measured, and how",
                                             _measured(a, dataset))]
    sections.append(("heatmap", "Bandwidth between hosts" if probe else "Heat map of w_n",
                     _probe_grid(a) if probe else _heatmap(a)))
    sections.append(("clusters", "Bandwidth clusters (Louvain)", _clusters(a, max_rows)))
    sections.append(("hierarchy", "Hierarchy (Hasse diagram)", _hierarchy(a, max_rows)))
    sections.append(("tree", "Tree of clusters", _tree(a, max_rows)))
    sections.append(("convergence", "Convergence and the stop rule",
                     _convergence(a, stop_k, max_rows)))
    if a.truth:
        sections.append(("accuracy", "Accuracy against the ground truth", _accuracy(a)))
    if probe:
        sections.append(("probes", "Probe tests", _probes(a, max_rows)))
    if multicast is not None:
        sections.append(("multicast", "Multicasts", _multicasts(Path(multicast), max_rows)))
    from tomography import __version__

    nav = " &middot; ".join(f'<a href="#{sid}">{_e(head)}</a>' for sid, head, _ in sections)
    body = "\n".join(f'<section id="{sid}">\n<h2>{_e(head)}</h2>\n{content}\n</section>'
                     for sid, head, content in sections)
    page = _TEMPLATE.format(title=_e(name), css=_CSS, nav=nav, body=body,
                            footer=_e(f"tomography {__version__} report; "
                                      f"{a.measurement.n_hosts} hosts; every number comes "
                                      "from tomography.pipeline.analyze with the options "
                                      "above"))
    return page, [sid for sid, _, _ in sections]


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


# --------------------------------------------------------------------------- sections

_META_ORDER = ("method", "topology", "created", "launcher", "testbed", "software", "params")


def _measured(a: Analysis, dataset: Path | None) -> str:
    m = a.measurement
    meta = m.meta
    rows: list[tuple[str, Any]] = []
    if dataset is not None:
        rows.append(("dataset", str(dataset)))
    rows.append(("hosts", f"{m.n_hosts}" + (f", {len(m.labels)} with a ground-truth label "
                                            f"({len(set(m.labels.values()))} distinct)"
                                            if m.labels else ", no ground-truth labels")))
    if is_probe_dataset(m):
        probes = m.probes
        failed = _failed(probes)
        udp = len(probes) - len(tcp_probes(probes))
        rows.append(("tests", f"{len(probes)} probe tests, {int(failed.sum())} failed; "
                              f"tools: {', '.join(sorted(set(map(str, probes['tool']))))}"
                              + (f"; {udp} UDP tests kept apart (not bandwidths)" if udp else "")))
    else:
        it = m.iterations
        done = int(it["complete"].astype(bool).sum()) if "complete" in it else len(it)
        blocks = int(m.transfers["blocks"].sum())
        rows.append(("iterations", f"{len(it)} ({done} complete), "
                                   f"{len(set(map(str, it['root'])))} distinct roots; "
                                   f"{blocks} blocks of {meta.get('block_size', '?')} bytes"))
    params = meta.get("params") or {}
    seed = params.get("seed", meta.get("seed"))
    if seed is not None:
        rows.append(("measurement seed", seed))
    hostnames = set(m.host_names)
    for key in [k for k in _META_ORDER if k in meta] + [
            k for k in meta if k not in _META_ORDER and k not in ("format", "topology_model")]:
        value = meta[key]
        if key == "params" or _empty(value) or (key == "block_size" and is_probe_dataset(m)):
            continue      # a probe dataset has no blocks
        if _per_host(value, hostnames):
            rows.append((_PER_HOST_NAMES.get(key, f"{key} (per host)"),
                         _host_facts(value, m.n_hosts)))
        elif key == "skipped_hosts" and isinstance(value, dict):
            rows.append(("skipped hosts", "; ".join(f"{h}: {why}" for h, why in value.items())))
        else:
            rows.append((key, value))
    if params:
        rows.append(("parameters", params))
    if "topology_model" in meta:
        model = meta["topology_model"]
        rows.append(("topology model", model.get("description") or model.get("name")
                     if isinstance(model, dict) else model))
    body = "".join(f"<tr><th>{_e(k)}</th><td>{_value(v)}</td></tr>" for k, v in rows)
    o = a.options
    shown = {k: v for k, v in o.items() if v is not None}
    analysis = ", ".join(f"{k}={v}" for k, v in shown.items())
    reason = _no_confidence(a)
    notes = "".join(f"<li>{_e(n)}</li>" for n in [*a.notes, *([reason] if reason else [])])
    return (f'<div class="wide"><table class="meta">{body}</table></div>'
            f"<p><b>Analysis</b> (tomography.pipeline.analyze): <code>{_e(analysis)}</code>; "
            f"edge weight: {_e(a.weight_unit)}.</p>"
            + (f"<ul class=\"note\">{notes}</ul>" if notes else ""))


def _no_confidence(a: Analysis) -> str | None:
    """Why the page shows no confidence, said once (the tables show a dash), or None when
    the pipeline's notes say it already or there is a confidence."""
    if a.sampler is not None:
        return None
    if is_probe_dataset(a.measurement):
        return ("no confidence: a probe dataset's repeats are not resampled (confidence needs "
                "two or more broadcast iterations)")
    if any("no confidence" in n for n in a.notes):    # one iteration: the pipeline says so
        return None
    return "no confidence: the analysis was asked for none (--resamples 0)"


def _empty(value: Any) -> bool:
    """None, an empty string, list or object: nothing to show."""
    return value is None or (isinstance(value, (str, list, dict, tuple)) and not value)


_PER_HOST_NAMES = {"hosts": "host checks", "tools": "tools"}


def _per_host(value: Any, hosts: set[str]) -> bool:
    """A ``meta.json`` object with one entry per host (``hosts``, ``tools``)."""
    return (isinstance(value, dict) and bool(value) and set(map(str, value)) <= hosts
            and all(isinstance(v, dict) for v in value.values()))


def _host_facts(per_host: dict[str, dict[str, Any]], n_hosts: int) -> list[str]:
    """What every host of a run said of itself, summarised: one line per fact, never one per
    host (the per-host figures stay in meta.json).

    Examples
    --------
    >>> _host_facts({"h1": {"python": "3.11", "clock_offset_s": -2.07e-05, "libtorrent": ""},
    ...              "h2": {"python": "3.11", "clock_offset_s": 1e-06, "libtorrent": ""}}, 2)
    ['clock offsets: max |offset| 21 µs over 2 hosts', 'python 3.11 on every host']
    """
    values: dict[str, list[Any]] = {}
    for record in per_host.values():
        for key, value in _flat(record, raw=True):
            if not _empty(value):
                values.setdefault(key, []).append(value)
    out = []
    offsets = [abs(float(v)) for v in values.pop("clock_offset_s", []) if _numeric(v)]
    values.pop("clock_rtt_s", None)
    if offsets:
        out.append(f"clock offsets: max |offset| {_seconds(max(offsets))} over "
                   f"{counted(len(offsets), 'host')}")
    for key, found in values.items():
        distinct = sorted(set(map(str, found)), key=lambda v: (-found.count(v), v))
        if len(distinct) == 1:
            where = ("on every host" if len(found) == n_hosts
                     else f"on {len(found)} of {n_hosts} hosts")
            out.append(f"{key} {distinct[0]} {where}")
        elif len(distinct) <= 3:
            out.append(f"{key}: " + ", ".join(
                f"{v} ({counted(sum(1 for x in found if str(x) == v), 'host')})"
                for v in distinct))
        else:
            out.append(f"{key}: {len(distinct)} different values over "
                       f"{counted(len(found), 'host')}")
    return out


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


def _heatmap(a: Analysis) -> str:
    import visualize

    m, h = a.measurement, a.hierarchy
    fig = visualize.plot_heatmap(m, iterations=a.options["iterations"], clusters=h.level(1),
                                 weights="w", width="double")
    dpi = _raster_dpi(fig, m.n_hosts)
    return _image(fig, "png", "heatmap",
                  f"w_n (Eq 4.2), the blocks two hosts exchanged per iteration, of "
                  f"{m.n_hosts} x {m.n_hosts} hosts ordered by the level-1 clusters of the "
                  "hierarchy (white lines between clusters)", dpi=dpi, scale=100)


def _raster_dpi(fig: "Figure", n: int) -> float:
    """A resolution at which the figure's longest side is at most :data:`HEATMAP_PIXELS`."""
    longest = max(fig.get_size_inches())
    return max(72.0, min(200.0, HEATMAP_PIXELS / longest)) if n > 64 else 150.0


def _failed(probes: "pd.DataFrame") -> Any:
    import numpy as np

    bad = np.array(probes["bits_per_second"].isna(), dtype=bool)
    if "error" in probes:
        bad |= np.array(probes["error"].fillna("").astype(str).str.strip() != "", dtype=bool)
    return bad


def probe_grid(probes: "pd.DataFrame", hosts: Sequence[str]
               ) -> tuple["np.ndarray", "np.ndarray", int]:
    """The numbers of the probe grid: per ordered pair (row: source, column: destination) the
    median Mbit/s of its successful TCP tests (NaN: none), whether a test of it failed, and
    how many TCP tests failed.  UDP tests are left out: their rate is the rate asked for.

    Examples
    --------
    >>> import pandas as pd
    >>> probes = pd.DataFrame({"src": ["a", "a", "b"], "dst": ["b", "b", "a"],
    ...                        "bits_per_second": [9e8, 5e9, None], "error": ["", "", "refused"],
    ...                        "protocol": ["tcp", "udp", "tcp"]})
    >>> grid, failed, count = probe_grid(probes, ["a", "b"])
    >>> grid.tolist(), failed.tolist(), count
    ([[nan, 900.0], [nan, nan]], [[False, False], [True, False]], 1)
    """
    import numpy as np

    probes = tcp_probes(probes)
    index = {h: i for i, h in enumerate(hosts)}
    n = len(hosts)
    failed = _failed(probes)
    grid = np.full((n, n), np.nan)
    medians = probes[~failed].groupby(["src", "dst"])["bits_per_second"].median() / 1e6
    for (src, dst), value in medians.items():
        grid[index[src], index[dst]] = value
    some_failed = np.zeros((n, n), dtype=bool)
    for src, dst in probes.loc[failed, ["src", "dst"]].itertuples(index=False):
        some_failed[index[src], index[dst]] = True
    return grid, some_failed, int(failed.sum())


def _probe_grid(a: Analysis) -> str:
    """perfSONAR MaDDash's grid: sources in rows, destinations in columns, Mbit/s in colour."""
    import matplotlib
    import numpy as np
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    from visualize.style import PALETTE, SEQUENTIAL, new_figure, paper_style

    m = a.measurement
    hosts = m.host_names
    n = len(hosts)
    grid, some_failed, failed = probe_grid(m.probes, hosts)
    only_failed = some_failed & np.isnan(grid)
    with paper_style():
        fig, ax = new_figure("double", aspect=0.8 if n > 2 else 0.5)
        cmap = matplotlib.colormaps[SEQUENTIAL].with_extremes(bad="#eeeeee")
        image = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, interpolation="nearest",
                          origin="upper", aspect="equal")
        if only_failed.any():
            ax.imshow(np.where(only_failed, 1.0, np.nan), interpolation="nearest",
                      cmap=ListedColormap([PALETTE[4]]), origin="upper", aspect="equal")
        if n <= 40:
            rows, cols = np.nonzero(some_failed)
            ax.scatter(cols, rows, marker="x", s=40, color="white", linewidths=2.0)
            ax.scatter(cols, rows, marker="x", s=30, color=PALETTE[4], linewidths=1.2)
            ax.set_xticks(range(n), hosts, rotation=90, fontsize=6)
            ax.set_yticks(range(n), hosts, fontsize=6)
        else:
            ax.set_xticks([])
            ax.set_yticks([])
        ax.set_xlabel(f"destination ({n} hosts, sorted by name)")
        ax.set_ylabel("source")
        bar = fig.colorbar(image, ax=ax, shrink=0.9, pad=0.02, aspect=30)
        bar.set_label("median bandwidth (Mbit/s)", fontsize=7)
        bar.ax.tick_params(labelsize=6)
        ax.legend(handles=[Patch(color=PALETTE[4], label="every test failed"),
                           Patch(color="#eeeeee", label="not measured")]
                  + ([] if n > 40 else [ax.collections[-1]]),
                  labels=["every test failed", "not measured"]
                  + ([] if n > 40 else ["a test failed"]),
                  loc="upper left", bbox_to_anchor=(0, -0.12 if n <= 40 else -0.05),
                  ncol=3, fontsize=6, frameon=False)
    measured = int((~np.isnan(grid)).sum())
    fmt = "svg" if n <= 40 else "png"
    return _image(fig, fmt, "probe grid",
                  f"median bandwidth of the successful TCP tests from each source (row) to each "
                  f"destination (column), as perfSONAR's MaDDash grids show them; "
                  f"{measured} of {n * (n - 1)} ordered pairs measured, "
                  f"{failed} failed test(s), {int(only_failed.sum())} pair(s) "
                  "with no successful test", dpi=_raster_dpi(fig, n), scale=100)


def _clusters(a: Analysis, max_rows: int) -> str:
    f = a.flat
    c = f.clustering
    members: dict[int, list[str]] = {}
    for host, label in zip(a.hosts, c.labels):
        members.setdefault(int(label), []).append(host)
    sure = ""
    if f.confidence is not None:
        sure = (f"; overall confidence (mean NMI with {f.resamples} {f.method} resamples) "
                f"{f.overall:.3f}")
    rows = [(k, len(hosts), f.confidence[k] if f.confidence is not None else None,
             _hosts(hosts)) for k, hosts in sorted(members.items())]
    header = ["cluster", "hosts", "confidence", "members"]
    return (f"<p>{counted(c.n_clusters, 'cluster')}, modularity {c.modularity:.3f}{_e(sure)}."
            "</p>" + _table(header, rows, max_rows, total=len(rows), what="clusters"))


def _hosts(hosts: Sequence[str], limit: int = 8) -> str:
    shown = ", ".join(hosts[:limit])
    return shown + (f", ... ({len(hosts)} hosts)" if len(hosts) > limit else "")


def _hierarchy(a: Analysis, max_rows: int) -> str:
    import visualize

    h = a.hierarchy
    labels = a.truth or a.measurement.labels or None
    fig = visualize.plot_hasse(h, truth=labels)
    info = fig.tomography_info
    folded = sum(len(v) for v in info.get("folded", {}).values())
    caption = (f"{h.depth} level(s), level 1 the finest"
               + ("; each level's confidence under its name" if h.confidence else "")
               + (f"; {folded} small clusters folded into '+N' boxes" if folded else ""))
    rows = []
    for k in range(1, h.depth + 1):
        rows.append((k, len(h.level(k)),
                     h.modularity[k - 1] if len(h.modularity) >= k else None,
                     h.confidence[k - 1] if h.confidence else None,
                     _support(h.supported(k)) if h.confidence else None,
                     h.separation(k) if h.confidence else None))
    out = [_image(fig, "svg", "hasse", caption),
           _table(["level", "clusters", "modularity", "confidence", "supported", "separation"],
                  rows, max_rows, total=len(rows), what="levels")]
    dropped = h.params.get("dropped_levels") or []
    if dropped:
        out.append(_note(f"{counted(len(dropped), 'unsupported level')} left out ("
                         + ", ".join(f"{d['clusters']} clusters" for d in dropped)
                         + "); tomography report --all-levels shows them"))
    if h.confidence:
        out.append(_note("confidence: the share of resampled iterations whose data set the "
                         "level's clusters apart, averaged with that share one iteration "
                         "earlier; separation: on all iterations, the weakest inside cut "
                         "of any of its clusters over the strongest tie between any two of "
                         "them; threshold " f"{h.threshold}"))
    return "\n".join(out)


def _support(value: bool | None) -> str | None:
    return {True: "yes", False: "no", None: None}[value]


def _tree(a: Analysis, max_rows: int) -> str:
    import visualize
    from tomography.units import format_weight

    t = a.tree
    level = t.params.get("hierarchy_level")
    what = "hosts" if level == 0 else "clusters"
    if len(t.clusters) < 2:
        return _note(f"one cluster ({counted(len(a.hosts), 'host')}"
                     + (f", level {level} of the hierarchy" if level else "")
                     + "): no tree to draw")
    how = t.params.get("confidence")
    weights = t.weight_caption
    caption = (f"maximum spanning tree of {counted(len(t.clusters), what.split()[0][:-1])}"
               + ("" if level == 0 else f" of level {level}") + "; total weight "
               f"{format_weight(t.total_weight)}; {weights}"
               + (f"; confidence: the share of {how['resamples']} {how['method']} resamples "
                  "whose tree has the edge" if how else ""))
    out = []
    if len(t.clusters) <= MAX_TREE_NODES:
        fig = visualize.plot_tree(t, truth=a.truth or a.measurement.labels or None)
        out.append(_image(fig, "svg", "tree", caption))
    else:
        out.append(_note(f"{caption}. The tree of {len(t.clusters)} nodes is too large to "
                         f"draw readably (more than {MAX_TREE_NODES}); its edges follow."))
    size = {c.id: len(c.hosts) for c in t.clusters}
    edges = sorted(t.edges, key=lambda e: -e.weight)
    rows = [(e.source, size.get(e.source, ""), e.target, size.get(e.target, ""), e.weight,
             e.confidence) for e in edges]
    out.append(_table(["from", "hosts", "to", "hosts", "weight", "confidence"], rows, max_rows,
                      total=len(rows), what="edges"))
    return "\n".join(out)


def _convergence(a: Analysis, stop_k: int | None, max_rows: int) -> str:
    m = a.measurement
    if is_probe_dataset(m):
        return _note("a probe dataset has no broadcast iterations: there is no convergence "
                     "over iterations and no stop rule to replay")
    out = []
    steps = None
    if a.options["resamples"] == 0:    # the rule decides on confidences: none were asked for
        out.append(f'<p class="verdict">{_e(_NOT_REPLAYED)}</p>')
    else:
        stop = a.stop_rule(stop_k)
        steps = stop["steps"]
        verdict = (f"the stop rule (the levels supported in {stop['k'] + 1} iterations in a "
                   "row, unchanged one iteration later) "
                   + (f"stops after n = {stop['stops_at']} of {len(steps)} iterations"
                      if stop["stops_at"] else f"does not stop within {len(steps)} "
                                               "iterations: measure more"))
        out.append(f'<p class="verdict">Verdict: {_e(verdict)}.</p>')
    if a.truth:
        import visualize

        table = a.convergence()
        fig = visualize.plot_convergence(table, width="single")
        legend = fig.axes[0].get_legend() if fig.axes else None
        for text in legend.get_texts() if legend is not None else []:
            text.set_text(text.get_text().replace("hierarchy level", "found level"))
        out.append(f"<p>{_e(_FOUND_LEVELS)}</p>")
        out.append(_image(fig, "svg", "convergence",
                          "NMI against the ground truth after 1..n iterations: Louvain's flat "
                          "clustering (against the finest truth) and each level as found after "
                          "n iterations (against the truth depth of its found number)"))
        header = [_CONVERGENCE_HEADER.get(str(c), str(c)) for c in table.columns]
        header = [f"found level {c[6:-4]} NMI" if c.startswith("level_") and c.endswith("_nmi")
                  else c for c in header]
        out.append(_frame_table(table.round(4), max_rows, what="iterations", header=header))
        out.append(_note(_last_row(a, table)))
    else:
        out.append(_note("no ground truth (no labels in hosts.csv; --truth FILE gives one): "
                         "no NMI per iteration"))
    if steps is not None:
        rows = [(s["n"], s["levels"], s["settled"], s["unstable"],
                 ("stop: no hierarchy" if s["flat"] else "stop") if s["stop"] else s["held_back"])
                for s in steps]
        out.append(_table(["n", "supported levels", "settled", "unstable", "decision"], rows,
                          max_rows, total=len(rows), what="iterations"))
    return "\n".join(out)


_NOT_REPLAYED = ("The stop rule is not replayed: it decides on the levels' confidences, and "
                 "the analysis was asked for none (--resamples 0).")


_FOUND_LEVELS = (
    "The analysis repeated on the first n iterations, n = 1..N, as tomography evaluate does. "
    "Its levels are the levels as found at each n, unsupported ones included (a confidence "
    "per n is not computed here), numbered from the finest: found level k is scored against "
    "the truth cut k - 1 parts shorter. The Hasse diagram, the stop rule and the Accuracy "
    "table number the supported levels only, so a found level is one of them only where the "
    "note under the table says so; earlier rows may have found other levels (the table of the "
    "stop rule says how many were supported after each n).")
_CONVERGENCE_HEADER = {"clusters": "flat clusters", "modularity": "flat modularity",
                       "nmi": "flat NMI", "overlapping_nmi": "flat overlapping NMI",
                       "levels": "levels found"}


def _last_row(a: Analysis, table: "pd.DataFrame") -> str:
    """Which levels of the last row are the supported levels the rest of the page shows."""
    h = a.hierarchy
    dropped = {int(d["level"]): d for d in h.params.get("dropped_levels") or []}
    last = table.iloc[-1]
    found = int(last["levels"]) if "levels" in table and not _missing(last["levels"]) else 0
    n = int(last["n"])
    if found != h.depth + len(dropped):
        return (f"after n = {n} iterations {counted(found, 'level')} found; the Hasse diagram "
                f"and the Accuracy table show {counted(h.depth, 'supported level')} of "
                f"{counted(h.depth + len(dropped), 'level')} found with these options")
    kept = [k for k in range(1, found + 1) if k not in dropped]
    accuracy = a.accuracy.set_index("level")
    parts = []
    for j, k in enumerate(kept, start=1):
        here, there = last.get(f"level_{k}_nmi"), accuracy.loc[j, "nmi"]
        same = not _missing(here) and abs(float(here) - float(there)) < 5e-5
        parts.append(f"found level {k} is level {j} ({counted(len(h.level(j)), 'cluster')})"
                     + ("" if same else
                        f", scored there against truth depth "
                        f"{int(accuracy.loc[j, 'truth_depth'])}: NMI {float(there):.4f}"))
    text = (f"last row, n = {n}: " + "; ".join(parts)
            + " of the Hasse diagram and the Accuracy table")
    if dropped:
        text += ("; " + ", ".join(f"found level {k} ({counted(d['clusters'], 'cluster')})"
                                  for k, d in sorted(dropped.items()))
                 + f" {'is' if len(dropped) == 1 else 'are'} unsupported and shown nowhere "
                 "else (--all-levels keeps them)")
    return text


_OBSERVABLE = (
    "truth_separation: how clearly these broadcasts set the truth depth's clusters apart "
    "(the weakest inside cut of any of its clusters over the strongest tie between any two); "
    "observable: whether it reaches the minimum; nmi_observable: the NMI against the finest "
    "coarsening of the truth depth that the broadcasts do set apart.")


def _accuracy(a: Analysis) -> str:
    levels = a.accuracy
    return ("<p>NMI (arithmetic-mean normalisation) of each hierarchy level against the truth "
            "cut to the level's depth; best_depth: the truth depth it matches best."
            + (f" {_e(_OBSERVABLE)}" if "observable" in levels else "") + "</p>"
            + _frame_table(levels.round(4), MAX_ROWS, what="levels"))


def _probes(a: Analysis, max_rows: int) -> str:
    probes = a.measurement.probes
    failed = _failed(probes)
    wanted = [c for c in ("src", "dst", "tool", "protocol", "repeat", "bits_per_second", "streams",
                          "concurrent", "duration_s", "rtt_ms", "retransmits", "error")
              if c in probes.columns]
    frame = probes[wanted].copy()
    frame["bits_per_second"] = frame["bits_per_second"] / 1e6
    frame = frame.rename(columns={"bits_per_second": "Mbit/s"})
    rows = _rows(frame.head(max_rows))
    return (f"<p>{len(probes)} tests, {int(failed.sum())} failed (marked).</p>"
            + _table(list(frame.columns), rows, max_rows, total=len(frame),
                     bad=list(failed[:max_rows]), what="tests"))


def _multicasts(where: Path, max_rows: int) -> str:
    from measure.multicast import read_multicasts, summary_table

    meta, runs, _ = read_multicasts(where)     # every file checked: errors name the file
    table = summary_table(runs)
    head = (f"<p>{counted(len(runs), 'multicast')} in {_e(where)} (launcher "
            f"{_e(meta.get('launcher', '?'))}, created {_e(meta.get('created', '?'))}); "
            "throughputs in MiB/s, best achieved first.</p>")
    return head + _frame_table(table.round(3), max_rows, what="methods")
