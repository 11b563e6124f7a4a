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
stops after ``max_rows`` rows with a note.  Like the pipeline, this package
stands on top of the layers: :mod:`tomography.report.html` is the page's kit
(template, style, tables, inline figures), :mod:`tomography.report.sections`
renders each section from the analysis, every figure comes from :mod:`visualize`.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tomography.model.errors import ParameterError
from tomography.pipeline import Analysis, analyze, is_probe_dataset, refuse_nothing_exchanged
from tomography.report.html import _CSS, _TEMPLATE, MAX_ROWS, _e
from tomography.report.interactive import CSS as INTERACTIVE_CSS
from tomography.report.interactive import MAX_CELLS
from tomography.report.sections import (MAX_TREE_NODES, _accuracy, _clusters, _convergence,
                                        _heatmap, _hierarchy, _host_table, _measured,
                                        _multicasts, _probe_grid, _probes, _tree, rates)

__all__ = ["write_report", "report_html", "find_multicasts", "Report", "MAX_ROWS",
           "MAX_TREE_NODES", "MAX_CELLS"]

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
    >>> from tomography.model.synthetic import planted_partition
    >>> from tomography.model.dataset import write_measurement
    >>> d = Path(tempfile.mkdtemp())
    >>> write_measurement(planted_partition(8, 2, iterations=2, seed=0), d / "data")
    >>> r = write_report(d / "data", d / "run.html", resamples=0)
    >>> r.sections[:3], r.path.read_text().startswith("<!DOCTYPE html>")
    (['measured', 'heatmap', 'hosts'], True)
    """
    started = time.perf_counter()
    if isinstance(data, Analysis):
        if options:
            raise ParameterError("write_report() takes analysis options only with a dataset, "
                                 f"not with an Analysis (got {', '.join(sorted(options))})")
        a, where = data, None if dataset is None else Path(dataset)
    else:
        from tomography.model.dataset import read_measurement

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
    >>> from tomography.model.synthetic import planted_partition
    >>> page = report_html(analyze(planted_partition(8, 2, iterations=2, seed=0), resamples=0))
    >>> 'id="hierarchy"' in page, "http://" in page
    (True, False)
    """
    return _page(analysis, dataset=None if dataset is None else Path(dataset),
                 multicast=multicast, stop_k=stop_k, max_rows=max_rows, title=title)[0]



def _page(a: Analysis, *, dataset: Path | None, multicast: Any, stop_k: int | None,
          max_rows: int, title: str | None) -> tuple[str, list[str]]:
    """The HTML text and the ids of its sections."""
    import matplotlib

    if "matplotlib.pyplot" not in sys.modules:
        matplotlib.use("Agg")
    if isinstance(max_rows, bool) or not isinstance(max_rows, int) or max_rows < 1:
        raise ParameterError(f"max_rows must be a whole number >= 1, got {max_rows!r}")
    m = a.measurement
    probe = is_probe_dataset(m)
    name = title or (dataset.resolve().name if dataset is not None else
                     f"{m.meta.get('method', 'dataset')} dataset")
    if name == "dataset" and dataset is not None:
        name = dataset.resolve().parent.name or name
    exchanged = rates(a)
    sections: list[tuple[str, str, str]] = [("measured", "What was measured, and how",
                                             _measured(a, dataset))]
    sections.append(("heatmap", "Bandwidth between hosts" if probe else
                     "What the hosts exchanged" if exchanged is not None else "Heat map of w_n",
                     _probe_grid(a) if probe else _heatmap(a, exchanged)))
    sections.append(("hosts", "Hosts", _host_table(a, exchanged)))
    sections.append(("clusters", "Bandwidth clusters (Louvain)",
                     _clusters(a, max_rows, exchanged)))
    sections.append(("hierarchy", "Hierarchy (Hasse diagram)", _hierarchy(a, max_rows)))
    sections.append(("tree", "Tree of clusters", _tree(a, max_rows, exchanged)))
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
    page = _TEMPLATE.format(title=_e(name), css=_CSS + INTERACTIVE_CSS, nav=nav, body=body,
                            footer=_e(f"tomography {__version__} report; "
                                      f"{a.measurement.n_hosts} hosts; every number comes "
                                      "from tomography.pipeline.analyze with the options "
                                      "above"))
    return page, [sid for sid, _, _ in sections]


