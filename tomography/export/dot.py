"""Graphviz DOT for the Hasse diagram and the cluster tree."""

from __future__ import annotations

from tomography.model.hierarchy import ClusterTree, Hierarchy
from tomography.model.units import format_weight

__all__ = ["hierarchy_to_dot", "cluster_tree_to_dot"]


def _escape(text: str) -> str:
    """For a label (an escString): a backslash is written doubled."""
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _quote(text: str) -> str:
    """A quoted DOT id: Graphviz unescapes only ``\\"`` there, backslashes stay as they are."""
    return '"' + text.replace('"', '\\"') + '"'


def _node_label(cluster_id: str, size: int, confidence: float | None = None) -> str:
    """Id, size and confidence on lines of their own (``\\n`` is DOT's centred line break)."""
    sure = "" if confidence is None else f"\\nconfidence {confidence:.2f}"
    return f'"{_escape(cluster_id)}\\n{size} hosts{sure}"'


def hierarchy_to_dot(hierarchy: Hierarchy) -> str:
    """The hierarchy as a Hasse diagram in DOT: level 1 at the bottom.

    Edges go from each cluster up to the cluster containing it; clusters of
    one level share a rank.

    Examples
    --------
    >>> h = Hierarchy.from_partitions(["a", "b", "c"], [[0, 1, 1]])
    >>> print(hierarchy_to_dot(h))  # doctest: +ELLIPSIS
    digraph hasse {
      rankdir=BT;
    ...
      { rank=same; "L1C0"; "L1C1"; }
    }
    """
    lines = ["digraph hasse {", "  rankdir=BT;",
             '  node [shape=box, style=rounded, fontname="Helvetica"];']
    for number, level in enumerate(hierarchy.levels, start=1):
        dashed = ", style=\"rounded,dashed\"" if hierarchy.supported(number) is False else ""
        for c in level:
            lines.append(f"  {_quote(c.id)} [label={_node_label(c.id, len(c.hosts), c.confidence)}"
                         f"{dashed}];")
    for level in hierarchy.levels:
        for c in level:
            if c.parent:
                lines.append(f"  {_quote(c.id)} -> {_quote(c.parent)};")
    for level in hierarchy.levels:
        lines.append("  { rank=same; " + " ".join(f"{_quote(c.id)};" for c in level) + " }")
    lines.append("}")
    return "\n".join(lines)


def cluster_tree_to_dot(tree: ClusterTree) -> str:
    """The cluster tree in DOT, edges labelled with their averaged weight.

    The label holds the weight (three significant digits, as every output
    prints it); the graph's label says what it is and its unit.  Graphviz's
    ``weight`` attribute (which pulls heavy edges short and straight, and
    must be an integer for ``dot``) is the weight relative to the heaviest
    edge, 1 to 100; ``penwidth`` 1 to 4.

    Examples
    --------
    >>> from tomography.model.hierarchy import Cluster, TreeEdge
    >>> t = ClusterTree([Cluster("L1C0", 1, ("a",)), Cluster("L1C1", 1, ("b",))],
    ...                 [TreeEdge("L1C0", "L1C1", 3.0)])
    >>> print(cluster_tree_to_dot(t).splitlines()[-2])
      "L1C0" -- "L1C1" [label="3", weight=100, penwidth=4];
    """
    heaviest = max((e.weight for e in tree.edges), default=1.0) or 1.0
    lines = ["graph tree {",
             f'  label={_quote(tree.weight_caption)}; labelloc=b; fontname="Helvetica";',
             '  node [shape=ellipse, fontname="Helvetica"];']
    for c in tree.clusters:
        lines.append(f"  {_quote(c.id)} [label={_node_label(c.id, len(c.hosts), c.confidence)}];")
    for e in tree.edges:
        pen = 1 + 3 * e.weight / heaviest
        pull = max(1, round(100 * e.weight / heaviest))
        sure = "" if e.confidence is None else f" ({e.confidence:.2f})"
        lines.append(f"  {_quote(e.source)} -- {_quote(e.target)} [label=\"{format_weight(e.weight)}"
                     f"{sure}\", weight={pull}, penwidth={pen:.3g}];")
    lines.append("}")
    return "\n".join(lines)
