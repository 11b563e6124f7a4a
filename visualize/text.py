"""Text renderings for the terminal: Hasse diagrams, indented trees, cluster lists."""

from __future__ import annotations

from typing import Mapping

from tomography.model.deprecation import keyword_only, renamed_parameter
from tomography.model.errors import expect
from tomography.model.hierarchy import Cluster, ClusterTree, Hierarchy
from tomography.model.units import counted, format_weight
from visualize._common import analysed, below, truth_labels, truth_summary

__all__ = ["hasse_text", "hierarchy_text", "cluster_tree_text", "describe_hosts",
           "confidence_note"]


def describe_hosts(hosts: tuple[str, ...] | list[str], limit: int = 4) -> str:
    """A short list of hosts: the first few, then how many more.

    Examples
    --------
    >>> describe_hosts(["a", "b", "c", "d", "e", "f"])
    'a, b, c, d, … (+2)'
    """
    shown = ", ".join(hosts[:limit])
    return shown + (f", … (+{len(hosts) - limit})" if len(hosts) > limit else "")


def _truth_note(cluster: Cluster, truth: Mapping[str, str] | None) -> str:
    """The cluster's truth (see :func:`visualize._common.truth_summary`), as a suffix."""
    summary = truth_summary(cluster.hosts, truth)
    return f"  truth: {summary}" if summary else ""


def _confidence(value: float | None) -> str:
    """``, confidence 0.93`` (empty when not measured)."""
    return "" if value is None else f", confidence {value:.2f}"


def _level_name(hierarchy: Hierarchy, number: int) -> str:
    """``level 2`` with its confidence, marked when it is below the support threshold."""
    if not hierarchy.confidence:
        return f"level {number}"
    confidence = hierarchy.confidence[number - 1]
    if hierarchy.supported(number) in (True, None):
        return f"level {number} ({confidence:.2f})"
    return f"level {number} ({below(confidence):.2f} unsupported)"


def _children(hierarchy: Hierarchy, cluster: Cluster) -> list[Cluster]:
    return [hierarchy.cluster(c) for c in cluster.children]


@keyword_only("truth")
@renamed_parameter("labels", "truth")
def hasse_text(hierarchy: Hierarchy, *, truth: Mapping[str, str] | None = None) -> str:
    """The hierarchy as a Hasse diagram in text.

    The top level (lowest bandwidth between its clusters) is printed first;
    each cluster stands below the cluster that contains it, so a lower
    position means higher achievable bandwidth inside.  A legend lists each
    cluster's hosts and, given a truth, its majority label.

    Parameters
    ----------
    hierarchy : Hierarchy
    truth : dict of host to label, optional

    Returns
    -------
    str

    Examples
    --------
    >>> h = Hierarchy.from_partitions(["a", "b", "c", "d"], [[0, 0, 1, 2], [0, 0, 1, 1]])
    >>> print(hasse_text(h).split("\\n\\n")[1])
    level 2    L2C0(2)      L2C1(2)
                  │        ┌───┴───┐
    level 1    L1C0(2)  L1C1(1) L1C2(1)
    """
    if isinstance(hierarchy, ClusterTree):
        expect(hierarchy, Hierarchy, "a ClusterTree is printed by cluster_tree_text")
    hierarchy, truth = analysed(hierarchy, Hierarchy, "hierarchy", "hasse_text", truth)
    truth = truth_labels(truth)
    top = hierarchy.levels[-1]
    width: dict[str, int] = {}
    label = {c.id: f"{c.id}({len(c.hosts)})" for level in hierarchy.levels for c in level}

    def measure(c: Cluster) -> int:
        kids = _children(hierarchy, c)
        inner = sum(measure(k) for k in kids) + max(len(kids) - 1, 0)
        width[c.id] = max(len(label[c.id]), inner)
        return width[c.id]

    centre: dict[str, int] = {}

    def place(c: Cluster, left: int) -> None:
        kids = _children(hierarchy, c)
        if kids:
            inner = sum(width[k.id] for k in kids) + len(kids) - 1
            x = left + (width[c.id] - inner) // 2
            for k in kids:
                place(k, x)
                x += width[k.id] + 1
            centre[c.id] = (centre[kids[0].id] + centre[kids[-1].id]) // 2
        else:
            centre[c.id] = left + width[c.id] // 2

    x = 0
    for c in top:
        measure(c)
        place(c, x)
        x += width[c.id] + 2
    total = x
    margin = max(len(_level_name(hierarchy, n)) for n in range(1, hierarchy.depth + 1)) + 4
    lines = []
    for number in range(hierarchy.depth, 0, -1):
        row = [" "] * total
        for c in hierarchy.level(number):
            text = label[c.id]
            start = max(0, centre[c.id] - len(text) // 2)
            row[start:start + len(text)] = text
        lines.append(_level_name(hierarchy, number).ljust(margin) + "".join(row).rstrip())
        if number > 1:
            link = [" "] * total
            for c in hierarchy.level(number):
                xs = [centre[k.id] for k in _children(hierarchy, c)]
                if len(xs) == 1:
                    link[xs[0]] = "│"
                    continue
                for p in range(xs[0], xs[-1] + 1):
                    link[p] = "─"
                for p in xs:
                    link[p] = "┬"
                link[xs[0]], link[xs[-1]] = "┌", "┐"
                link[centre[c.id]] = "┼" if centre[c.id] in xs[1:-1] else "┴"
            lines.append(" " * margin + "".join(link).rstrip())
    legend = [f"{c.id:<8}{len(c.hosts):>6} hosts  "
              + ("" if c.confidence is None else f"conf {c.confidence:.2f}  ")
              + f"{describe_hosts(c.hosts)}{_truth_note(c, truth)}"
              for level in reversed(hierarchy.levels) for c in level]
    head = ("Hasse diagram of bandwidth clusters: lower = higher achievable bandwidth "
            f"inside; {len(hierarchy.hosts)} hosts, {counted(hierarchy.depth, 'level')}")
    parts = [head, "\n".join(lines), "\n".join(legend)]
    note = confidence_note(hierarchy)
    if note:
        parts.insert(1, note)
    return "\n\n".join(parts)


def confidence_note(hierarchy: Hierarchy) -> str:
    """One line on how the confidences were measured and which levels were left out.

    Examples
    --------
    >>> h = Hierarchy.from_partitions(["a", "b"], [[0, 1]])
    >>> confidence_note(h)
    ''
    """
    how = hierarchy.params.get("confidence")
    if not how or not hierarchy.confidence:
        return ""
    resamples = how.get("separation_resamples") or how.get("resamples")
    text = (f"confidence: the share of {resamples} {how['method']} resamples of the "
            f"{how['iterations']} iterations"
            + (" (each keeping the roots' share per top-level cluster)" if how.get("strata")
               else "")
            + f" in which every cluster of a level holds together inside (at its weakest "
            f"cut) {how.get('min_separation', 1.3):g}x more than any two clusters of the level "
            f"are tied (per host pair)"
            + (", averaged with the same share on resamples of the first "
               f"{how['iterations'] - 1} iterations; a cluster's, the same for the cluster"
               if "before" in how else "")
            + f"; a level needs {how['threshold']:.2f}")
    dropped = hierarchy.params.get("dropped_levels") or []
    if dropped:
        gone = ", ".join(f"{d['clusters']} clusters at {below(d['confidence']):.2f}"
                         + (f" (separation {d['separation']:.2f}x)"
                            if d.get("separation") is not None else "")
                         for d in dropped if d.get("confidence") is not None)
        text += f"; not shown (--all-levels shows them): {gone}"
    return text


@keyword_only("truth")
@renamed_parameter("labels", "truth")
def hierarchy_text(hierarchy: Hierarchy, *, truth: Mapping[str, str] | None = None) -> str:
    """The hierarchy as an indented tree, top level first.

    Examples
    --------
    >>> h = Hierarchy.from_partitions(["a", "b", "c"], [[0, 1, 1]])
    >>> print(hierarchy_text(h))
    network (3 hosts)
    ├── L1C0 (1 hosts): a
    └── L1C1 (2 hosts): b, c
    """
    if isinstance(hierarchy, ClusterTree):
        expect(hierarchy, Hierarchy, "a ClusterTree is printed by cluster_tree_text")
    hierarchy, truth = analysed(hierarchy, Hierarchy, "hierarchy", "hierarchy_text", truth)
    truth = truth_labels(truth)
    lines = [f"network ({len(hierarchy.hosts)} hosts)"]
    note = confidence_note(hierarchy)

    def walk(c: Cluster, prefix: str, last: bool) -> None:
        kids = _children(hierarchy, c)
        members = "" if kids else f": {describe_hosts(c.hosts)}"
        lines.append(f"{prefix}{'└── ' if last else '├── '}{c.id} ({len(c.hosts)} hosts"
                     f"{_confidence(c.confidence)}){members}{_truth_note(c, truth)}")
        for i, k in enumerate(kids):
            walk(k, prefix + ("    " if last else "│   "), i == len(kids) - 1)

    top = hierarchy.levels[-1]
    for i, c in enumerate(top):
        walk(c, "", i == len(top) - 1)
    return "\n".join(lines + ([note] if note else []))


@keyword_only("truth")
@renamed_parameter("labels", "truth")
def cluster_tree_text(tree: ClusterTree, *, truth: Mapping[str, str] | None = None) -> str:
    """The maximum spanning tree of clusters, drawn from its best-connected cluster.

    Edge weights are printed on the branch leading to each cluster.

    Examples
    --------
    >>> from tomography.model.hierarchy import TreeEdge
    >>> t = ClusterTree([Cluster("L1C0", 1, ("a",)), Cluster("L1C1", 1, ("b",)),
    ...                  Cluster("L1C2", 1, ("c",))],
    ...                 [TreeEdge("L1C0", "L1C1", 8.0), TreeEdge("L1C1", "L1C2", 2.0)])
    >>> print(cluster_tree_text(t))
    L1C1 (1 hosts): b
    ├── 8 ── L1C0 (1 hosts): a
    └── 2 ── L1C2 (1 hosts): c
    """
    if isinstance(tree, Hierarchy):
        expect(tree, ClusterTree, "a Hierarchy is printed by hasse_text or hierarchy_text")
    tree, truth = analysed(tree, ClusterTree, "tree", "cluster_tree_text", truth)
    truth = truth_labels(truth)
    by_id = {c.id: c for c in tree.clusters}
    adjacent: dict[str, list[tuple[str, float, float | None]]] = {c.id: [] for c in tree.clusters}
    for e in tree.edges:
        adjacent[e.source].append((e.target, e.weight, e.confidence))
        adjacent[e.target].append((e.source, e.weight, e.confidence))
    lines: list[str] = []
    seen: set[str] = set()

    def node(cid: str) -> str:
        c = by_id[cid]
        if c.level == 0:  # a host
            return f"{cid}{_truth_note(c, truth)}"
        return (f"{cid} ({len(c.hosts)} hosts{_confidence(c.confidence)}): "
                f"{describe_hosts(c.hosts)}{_truth_note(c, truth)}")

    def walk(cid: str, prefix: str) -> None:
        seen.add(cid)
        kids = sorted((x for x in adjacent[cid] if x[0] not in seen), key=lambda x: -x[1])
        for i, (k, w, conf) in enumerate(kids):
            last = i == len(kids) - 1
            sure = "" if conf is None else f" ({conf:.2f})"
            lines.append(f"{prefix}{'└── ' if last else '├── '}{format_weight(w)}{sure} ── "
                         f"{node(k)}")
            walk(k, prefix + ("    " if last else "│   "))

    order = sorted(by_id, key=lambda cid: (-len(adjacent[cid]), cid))
    for cid in order:
        if cid not in seen:
            lines.append(node(cid))
            walk(cid, "")
    if not tree.is_connected:
        lines.append("(not connected: some clusters exchanged no data with the rest)")
    return "\n".join(lines)
