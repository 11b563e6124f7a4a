"""The sections of the report page, one renderer each: what was measured, the heat map or
the probe grid, the clusters, the hierarchy, the tree, the convergence, the accuracy, the
probe table and the multicasts.  Every number comes from the analysis; every figure from
:mod:`visualize`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from tomography.pipeline import Analysis, is_probe_dataset
from tomography.report.html import (MAX_ROWS, _e, _empty, _flat, _frame_table, _image,
                                    _missing, _note, _numeric, _rows, _seconds, _table, _value)
from tomography.model.stop_rule import stop_rule_text
from tomography.model.units import counted
from tomography.model.weights import tcp_probes
from visualize.probe_grid import failed_tests

if TYPE_CHECKING:
    import pandas as pd

MAX_TREE_NODES = 150
"""Clusters above which the tree is given as a table only (its drawing would be unreadable)."""
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
        failed = failed_tests(probes)
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


def rates(a: Analysis) -> "np.ndarray | None":
    """What every two hosts exchanged in Mbit/s (:func:`exchange_rates`), dense, in the
    analysis's host order; None when the dataset has no durations."""
    from tomography.model.weights import exchange_rates

    r = exchange_rates(a.measurement, a.options["iterations"])
    return None if r is None else r.toarray()


def _ordered(a: Analysis) -> tuple[list[str], list[tuple[str, int, int]], list[int]]:
    """The hosts grouped by the hierarchy's level-1 clusters, the groups, and each ordered
    host's row in the analysis."""
    from visualize._common import group_order

    cluster = {host: c.id for c in a.hierarchy.level(1) for host in c.hosts}
    order, groups = group_order(a.hosts, cluster)
    row = {h: i for i, h in enumerate(a.hosts)}
    return order, groups, [row[h] for h in order]


def _heatmap(a: Analysis, exchanged: "np.ndarray | None") -> str:
    """The heat map of what every two hosts exchanged: Mbit/s where the iterations have
    durations, else w_n; the hosts grouped by the level-1 clusters."""
    from tomography.report.interactive import heatmap_html

    m = a.measurement
    order, groups, rows = _ordered(a)
    if exchanged is not None:
        matrix, unit = exchanged, "Mbit/s"
        what = ("what two hosts exchanged in Mbit/s: the blocks they sent each other in an "
                "iteration over its duration, averaged over the iterations (a lower bound on "
                "their path's bandwidth)")
    else:
        matrix, unit = a.graph.matrix.toarray(), "blocks per iteration"
        what = ("w_n (Eq 4.2), the blocks two hosts exchanged per iteration (the dataset "
                "records no durations, so no Mbit/s)")
    matrix = np.asarray(matrix)[np.ix_(rows, rows)]
    return heatmap_html(matrix, order, groups, unit,
                        f"{what}, of {m.n_hosts} x {m.n_hosts} hosts grouped by the level-1 "
                        "clusters of the hierarchy (white lines between clusters).")


def _probe_grid(a: Analysis) -> str:
    """perfSONAR MaDDash's grid: sources in rows, destinations in columns, Mbit/s in colour,
    values and hosts under the pointer (:func:`visualize.probe_grid.probe_grid`)."""
    from tomography.report.interactive import heatmap_html
    from visualize.probe_grid import probe_grid

    m = a.measurement
    hosts = m.host_names
    n = len(hosts)
    grid, some_failed, failed = probe_grid(m.probes, hosts)
    order, groups, rows = _ordered(a)
    measured = int((~np.isnan(grid)).sum())
    only_failed = int((some_failed & np.isnan(grid)).sum())
    return heatmap_html(grid[np.ix_(rows, rows)], order, groups, "Mbit/s",
                        f"median bandwidth of the successful TCP tests from each source (row) "
                        f"to each destination (column), as perfSONAR's MaDDash grids show them;"
                        f" {measured} of {n * (n - 1)} ordered pairs measured, {failed} failed "
                        f"test(s), {only_failed} pair(s) with no successful test (grey; the "
                        "probe tests below list them).", directed=True, name="probe grid")


def _host_table(a: Analysis, exchanged: "np.ndarray | None") -> str:
    """Every host: its address and label, its cluster on every level, what it exchanged."""
    import pandas as pd

    from tomography.report.interactive import hosts_html

    m, h = a.measurement, a.hierarchy
    frame = m.hosts.set_index("host").reindex(a.hosts)
    table = pd.DataFrame({"host": a.hosts})
    if frame["address"].astype(str).str.len().gt(0).any():
        table["address"] = frame["address"].fillna("").to_numpy()
    if frame["label"].astype(str).str.len().gt(0).any():
        table["label"] = frame["label"].fillna("").to_numpy()
    table["flat cluster"] = [f"C{int(c)}" for c in a.flat.clustering.labels]
    for k in range(1, h.depth + 1):
        cluster = {host: c.id for c in h.level(k) for host in c.hosts}
        table[f"level {k}"] = [cluster.get(x, "") for x in a.hosts]
    if is_probe_dataset(m):   # one-way tests: a host's mean bandwidth to the others measured
        grid = np.asarray(a.graph.matrix.toarray())
        measured = (grid > 0).sum(axis=1)
        table["mean bandwidth to the others (Mbit/s)"] = np.divide(
            grid.sum(axis=1), measured, out=np.full(len(grid), np.nan), where=measured > 0)
    else:
        matrix = exchanged if exchanged is not None else a.graph.matrix.toarray()
        unit = "Mbit/s" if exchanged is not None else "blocks per iteration"
        table[f"exchanged with all ({unit})"] = np.asarray(matrix).sum(axis=1)
    return hosts_html(table.sort_values("host", key=_natural).reset_index(drop=True))


def _natural(column: "pd.Series") -> "pd.Series":
    from visualize._common import natural_key

    return column.map(natural_key)


def _between(a: Analysis, exchanged: "np.ndarray", one: Sequence[str],
             other: Sequence[str]) -> float:
    """The mean of ``exchanged`` over the host pairs of two groups (inside one: ``one`` twice),
    NaN with no pair."""
    row = {h: i for i, h in enumerate(a.hosts)}
    i, j = [row[h] for h in one], [row[h] for h in other]
    block = exchanged[np.ix_(i, j)]
    if one is other:
        pairs = len(i) * (len(i) - 1)
        return float(block.sum() / pairs) if pairs else float("nan")
    return float(block.mean()) if block.size else float("nan")


def _clusters(a: Analysis, max_rows: int, exchanged: "np.ndarray | None" = None) -> str:
    f = a.flat
    c = f.clustering
    members: dict[int, list[str]] = {}
    for host, label in zip(a.hosts, c.labels):
        members.setdefault(int(label), []).append(host)
    sure = ""
    if f.confidence is not None:
        sure = (f"; overall confidence (mean NMI with {f.resamples} {f.method} resamples) "
                f"{f.overall:.3f}")
    rows = [(f"C{k}", len(hosts), f.confidence[k] if f.confidence is not None else None,
             *([_between(a, exchanged, hosts, hosts)] if exchanged is not None else []),
             _hosts(hosts)) for k, hosts in sorted(members.items())]
    header = ["cluster", "hosts", "confidence",
              *(["inside (Mbit/s, mean of its pairs)"] if exchanged is not None else []),
              "members"]
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
        line = h.params.get("confidence", {}).get("min_separation")
        apart = "" if line is None else f" (a separation of at least {line:g})"
        out.append(_note("confidence: the share of resampled iterations whose data set the "
                         f"level's clusters apart{apart}, averaged with that share one "
                         "iteration earlier; separation: on all iterations, the weakest "
                         "inside cut of any of its clusters over the strongest tie between "
                         "any two of them; threshold " f"{h.threshold}"))
    return "\n".join(out)


def _support(value: bool | None) -> str | None:
    return {True: "yes", False: "no", None: None}[value]


def _tree(a: Analysis, max_rows: int, exchanged: "np.ndarray | None" = None) -> str:
    import visualize
    from tomography.model.units import format_weight

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
    members = {c.id: list(c.hosts) for c in t.clusters}
    edges = sorted(t.edges, key=lambda e: -e.weight)
    rows = [(e.source, size.get(e.source, ""), e.target, size.get(e.target, ""), e.weight,
             *([_between(a, exchanged, members[e.source], members[e.target])]
               if exchanged is not None else []),
             e.confidence) for e in edges]
    out.append(_table(["from", "hosts", "to", "hosts", "weight",
                       *(["exchanged (Mbit/s, mean of its host pairs)"]
                         if exchanged is not None else []), "confidence"],
                      rows, max_rows, total=len(rows), what="edges"))
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
        verdict = (f"the stop rule ({stop_rule_text(stop['k'])}) "
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
        rows = [(s["n"], s["levels"] if s.get("measured", True) else "-", s["settled"],
                 s["unstable"],
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
    "truth_separation: how clearly the data set the truth depth's clusters apart "
    "(the weakest inside cut of any of its clusters over the strongest tie between any two); "
    "observable: whether it reaches the minimum; nmi_observable: the NMI against the finest "
    "coarsening of the truth depth that the data do set apart.")


def _accuracy(a: Analysis) -> str:
    levels = a.accuracy
    return ("<p>NMI (arithmetic-mean normalisation) of each hierarchy level against the truth "
            "cut to the level's depth; best_depth: the truth depth it matches best."
            + (f" {_e(_OBSERVABLE)}" if "observable" in levels else "") + "</p>"
            + _frame_table(levels.round(4), MAX_ROWS, what="levels"))


def _probes(a: Analysis, max_rows: int) -> str:
    probes = a.measurement.probes
    failed = failed_tests(probes)
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
    from tomography.model.dataset.multicast import read_summary
    from tomography.planning.delivery import unpaced_note

    meta, table = read_summary(where)     # every file checked: errors name the file
    head = (f"<p>{counted(int(table['runs'].sum()), 'multicast')} in {_e(where)} (launcher "
            f"{_e(meta.get('launcher', '?'))}, created {_e(meta.get('created', '?'))}); "
            "throughputs in MiB/s, best achieved first. <i>basis</i>: what each prediction "
            "rests on: <i>measured</i> figures, the <i>topology</i>'s model values, or a "
            "<i>lower bound</i> (rates the broadcasts reached: not a forecast).</p>")
    notes = "".join(f"<p>{_e(note)}</p>" for note in
                    (unpaced_note(m, len(p.get("streams", [])))
                     for m, p in sorted(meta.get("plans", {}).items())) if note)
    return head + _frame_table(table.round(3), max_rows, what="methods") + notes
