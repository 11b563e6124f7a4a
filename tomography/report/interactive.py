"""The report's interactive parts: a heat map that names hosts and values under the pointer,
and a table of every host with a search box.  Self-contained: the data are in the page, the
script is inline, nothing is fetched.

The heat map draws at most :data:`MAX_CELLS` cells a side: beyond that, hosts in cluster
order are pooled into blocks of a few (the mean of their values), and the pointer names the
block's first and last host.  Each value is sent as one byte on a log (or linear) scale of
256 steps, about 3 % apart over three decades: the colour's precision, and the hover's.
"""

from __future__ import annotations

import base64
import json
import math
from typing import TYPE_CHECKING, Sequence

import numpy as np

from tomography.report.html import _e, _number

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["MAX_CELLS", "heatmap_html", "hosts_html", "quantize"]

MAX_CELLS = 1024
"""Cells a side of the heat map; more hosts are pooled in blocks (4096 hosts: 4 a cell)."""

_SCRIPT = r"""
(function () {
  const spec = JSON.parse(document.getElementById('heatmap-data').textContent);
  const canvas = document.getElementById('heatmap-canvas');
  const tip = document.getElementById('heatmap-tip');
  const raw = atob(spec.cells), n = spec.n, q = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) q[i] = raw.charCodeAt(i);
  const value = k => k === 0 ? 0 : (spec.log
      ? Math.exp(Math.log(spec.lo) + (k - 1) / 254 * (Math.log(spec.hi) - Math.log(spec.lo)))
      : spec.lo + (k - 1) / 254 * (spec.hi - spec.lo));
  const side = Math.min(820, Math.max(480, n * 6)), cell = side / n;
  const ctx = canvas.getContext('2d');
  ctx.font = '11px system-ui, sans-serif';
  const names = cell >= 10 && spec.block === 1 ? spec.first : spec.groups.map(g => g[0]);
  const margin = Math.min(110, 12 + Math.max(0, ...names.map(s => ctx.measureText(s).width)));
  const left = margin, top = margin;
  canvas.dataset.margin = margin; canvas.dataset.cell = cell;   // where the cells are
  canvas.width = left + side + 10; canvas.height = top + side + 10;
  canvas.style.maxWidth = '100%';
  const image = new ImageData(n, n);
  for (let i = 0; i < n * n; i++) {
    const c = spec.colours[q[i]];
    image.data.set([parseInt(c.slice(1, 3), 16), parseInt(c.slice(3, 5), 16),
                    parseInt(c.slice(5, 7), 16), 255], 4 * i);
  }
  const off = document.createElement('canvas');
  off.width = n; off.height = n; off.getContext('2d').putImageData(image, 0, 0);
  let marked = null;
  function draw() {
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(off, left, top, side, side);
    ctx.strokeStyle = '#fff'; ctx.lineWidth = 1;
    for (const g of spec.groups.slice(1)) {
      const x = left + g[1] * cell, y = top + g[1] * cell;
      ctx.beginPath(); ctx.moveTo(x, top); ctx.lineTo(x, top + side); ctx.stroke();
      ctx.beginPath(); ctx.moveTo(left, y); ctx.lineTo(left + side, y); ctx.stroke();
    }
    ctx.fillStyle = '#222'; ctx.font = '11px system-ui, sans-serif';
    const labels = cell >= 10 && spec.block === 1
      ? spec.first.map((h, i) => [h, i, i + 1])
      : spec.groups.filter(g => (g[2] - g[1]) * cell >= 12);
    for (const [name, a, b] of labels) {
      const mid = (a + b) / 2 * cell;
      ctx.textAlign = 'right'; ctx.textBaseline = 'middle';
      ctx.fillText(name, left - 4, top + mid, left - 6);
      ctx.save(); ctx.translate(left + mid, top - 4); ctx.rotate(-Math.PI / 2);
      ctx.textAlign = 'left'; ctx.fillText(name, 0, 0, top - 6); ctx.restore();
    }
    if (marked !== null) {
      ctx.strokeStyle = '#e8473f'; ctx.lineWidth = 2;
      ctx.strokeRect(left, top + marked * cell, side, Math.max(cell, 2));
      ctx.strokeRect(left + marked * cell, top, Math.max(cell, 2), side);
    }
  }
  function name(i) {
    return spec.block === 1 || spec.first[i] === spec.last[i]
      ? spec.first[i] : spec.first[i] + ' \u2026 ' + spec.last[i];
  }
  function group(i) {
    for (const g of spec.groups) if (i >= g[1] && i < g[2]) return g[0];
    return '';
  }
  function format(v) {
    return v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toPrecision(2);
  }
  canvas.addEventListener('mousemove', e => {
    const r = canvas.getBoundingClientRect(), scale = canvas.width / r.width;
    const col = Math.floor(((e.clientX - r.left) * scale - left) / cell);
    const row = Math.floor(((e.clientY - r.top) * scale - top) / cell);
    if (row < 0 || col < 0 || row >= n || col >= n) { tip.hidden = true; return; }
    const k = q[row * n + col];
    tip.textContent = name(row) + ' (' + group(row) + ')' + spec.arrow + name(col) + ' ('
      + group(col) + '): ' + (row === col && spec.block === 1 ? 'same host'
      : k === 0 ? spec.empty : '\u2248 ' + format(value(k)) + ' ' + spec.unit);
    tip.hidden = false;
    const right = window.scrollX + document.documentElement.clientWidth;
    const x = e.pageX + 12 + tip.offsetWidth > right ? e.pageX - 12 - tip.offsetWidth : e.pageX + 12;
    tip.style.left = Math.max(window.scrollX, x) + 'px'; tip.style.top = (e.pageY + 12) + 'px';
  });
  canvas.addEventListener('mouseleave', () => { tip.hidden = true; });
  window.tomographyMark = host => {
    marked = null;
    for (let i = 0; i < n; i++) {
      const found = spec.block === 1 ? spec.first[i] === host
        : spec.members[i].indexOf(host) >= 0;
      if (found) { marked = i; break; }
    }
    draw();
    return marked;
  };
  draw();
})();
"""

_SEARCH = r"""
(function () {
  const box = document.getElementById('host-search');
  const rows = Array.from(document.querySelectorAll('#host-table tbody tr'));
  const count = document.getElementById('host-count');
  const cells = rows.map(r => Array.from(r.cells).map(c => c.textContent.toLowerCase()));
  box.addEventListener('input', () => {
    const text = box.value.trim().toLowerCase();
    // a cell exactly the text (a host, a cluster id) wins over cells that contain it
    const exactly = text && cells.some(row => row.indexOf(text) >= 0);
    let shown = 0;
    rows.forEach((row, i) => {
      const hit = !text || (exactly ? cells[i].indexOf(text) >= 0
                                    : cells[i].some(c => c.indexOf(text) >= 0));
      row.hidden = !hit;
      if (hit) shown++;
    });
    count.textContent = text ? shown + ' of ' + rows.length + ' hosts match' : rows.length + ' hosts';
    const exact = rows.find(r => !r.hidden && r.cells[0].textContent.toLowerCase() === text);
    if (window.tomographyMark) window.tomographyMark(exact ? exact.cells[0].textContent : null);
  });
})();
"""

CSS = """
canvas#heatmap-canvas{display:block;margin:0 auto;cursor:crosshair}
#heatmap-tip{position:absolute;background:#222;color:#fff;padding:0.2em 0.5em;border-radius:4px;
font-size:0.8em;pointer-events:none;white-space:nowrap;z-index:5}
.legend{display:flex;align-items:center;gap:0.5em;justify-content:center;font-size:0.8em}
.legend span.bar{display:inline-block;width:220px;height:10px}
#host-search{font-size:1em;padding:0.3em 0.5em;width:22em;max-width:100%}
.hosts{max-height:34em;overflow:auto;border:1px solid #eee}
.hosts table{margin:0;width:100%}.hosts th{position:sticky;top:0}
"""


def quantize(values: np.ndarray) -> tuple[np.ndarray, float, float, bool]:
    """Values >= 0 as bytes: 0 for zero (or NaN), 1 to 255 from the smallest positive value to
    the largest, on a log scale when they span more than a decade and a half.

    Returns
    -------
    (bytes, lo, hi, log)

    Examples
    --------
    >>> q, lo, hi, log = quantize(np.array([0.0, 1.0, 10.0, 100.0]))
    >>> q.tolist(), lo, hi, log
    ([0, 1, 128, 255], 1.0, 100.0, True)
    >>> quantize(np.array([2.0, 3.0]))[0].tolist()
    [1, 255]
    """
    v = np.nan_to_num(np.asarray(values, dtype=float), nan=0.0)
    positive = v[v > 0]
    if not positive.size:
        return np.zeros(v.shape, dtype=np.uint8), 0.0, 0.0, False
    lo, hi = float(positive.min()), float(positive.max())
    log = hi > 30 * lo
    if hi == lo:
        scaled = np.zeros(v.shape)
    elif log:
        scaled = (np.log(np.where(v > 0, v, lo)) - math.log(lo)) / (math.log(hi) - math.log(lo))
    else:
        scaled = (v - lo) / (hi - lo)
    q = np.where(v > 0, 1 + np.rint(254 * np.clip(scaled, 0, 1)), 0).astype(np.uint8)
    return q, lo, hi, log


def _pooled(matrix: np.ndarray, block: int) -> np.ndarray:
    """Means of ``block`` x ``block`` cells (the last block may be smaller)."""
    n = matrix.shape[0]
    cells = -(-n // block)
    padded = np.full((cells * block, cells * block), np.nan)
    padded[:n, :n] = matrix
    return np.nanmean(padded.reshape(cells, block, cells, block), axis=(1, 3))


def heatmap_html(matrix: np.ndarray, hosts: Sequence[str],
                 groups: Sequence[tuple[str, int, int]], unit: str, caption: str, *,
                 directed: bool = False, name: str = "heatmap") -> str:
    """The heat map of ``matrix`` whose rows and columns are ``hosts`` (already ordered), with
    ``groups`` (name, start, stop) as white lines, values under the pointer: between two hosts,
    or from the row's host to the column's when ``directed``.

    Examples
    --------
    >>> page = heatmap_html(np.array([[0, 5.0], [5.0, 0]]), ["a", "b"], [("C0", 0, 2)],
    ...                     "Mbit/s", "two hosts")
    >>> '<canvas id="heatmap-canvas"' in page and '"unit":"Mbit/s"' in page
    True
    """
    import matplotlib

    n = len(hosts)
    block = max(1, -(-n // MAX_CELLS))
    pooled = _pooled(np.asarray(matrix, dtype=float), block) if block > 1 else matrix
    q, lo, hi, log = quantize(pooled)
    cells = q.shape[0]
    cmap = matplotlib.colormaps["viridis"]
    colours = ["#eeeeee"] + [matplotlib.colors.to_hex(cmap(i / 254)) for i in range(255)]
    first = [hosts[i * block] for i in range(cells)]
    last = [hosts[min(n, (i + 1) * block) - 1] for i in range(cells)]
    spec = {"n": cells, "block": block, "unit": unit, "lo": lo, "hi": hi, "log": log,
            "arrow": " \u2192 " if directed else " \u2194 ",
            "empty": "no successful test" if directed else "nothing exchanged",
            "cells": base64.b64encode(q.tobytes()).decode("ascii"), "colours": colours,
            "first": first, "last": last,
            "groups": [[name, start // block, -(-stop // block)] for name, start, stop in groups]}
    if block > 1:
        spec["members"] = [list(hosts[i * block:(i + 1) * block]) for i in range(cells)]
    data = json.dumps(spec, separators=(",", ":")).replace("</", "<\\/")
    pooled_note = (f" Each cell pools {block} x {block} hosts (their mean); the pointer names "
                   "the first and last." if block > 1 else "")
    scale = "log" if log else "linear"
    legend = (f'<div class="legend"><span>{lo:.3g}</span><span class="bar" style="'
              f'background:linear-gradient(to right,{colours[1]},{colours[128]},{colours[255]})'
              f'"></span><span>{hi:.3g} {_e(unit)} ({scale} scale)</span></div>'
              if hi > 0 else "")
    return (f'<figure data-figure="{_e(name)}"><canvas id="heatmap-canvas" role="img" '
            f'aria-label="{_e(caption)}"></canvas>{legend}<figcaption>{_e(caption)} Point at a '
            f"cell for its hosts and value; search a host below to mark it.{pooled_note}"
            f'</figcaption></figure><div id="heatmap-tip" hidden></div>'
            f'<script type="application/json" id="heatmap-data">{data}</script>'
            f"<script>{_SCRIPT}</script>")


def hosts_html(frame: "pd.DataFrame") -> str:
    """Every host in one table (its first column the host), filtered as one types.

    Examples
    --------
    >>> import pandas as pd
    >>> page = hosts_html(pd.DataFrame({"host": ["a", "b"], "cluster": ["C0", "C1"]}))
    >>> 'id="host-search"' in page and page.count("<tr>") == 3
    True
    """
    head = "".join(f"<th>{_e(c)}</th>" for c in frame.columns)
    body = "".join("<tr>" + "".join(f"<td>{_e(_number(v))}</td>" for v in row) + "</tr>"
                   for row in frame.itertuples(index=False))
    return (f'<p><input id="host-search" type="search" placeholder="find a host, a label, a '
            f'cluster" aria-label="find a host"> <span id="host-count" class="note">'
            f"{len(frame)} hosts</span></p>"
            f'<div class="hosts"><table id="host-table"><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table></div><script>{_SEARCH}</script>")
