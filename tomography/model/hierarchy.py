"""The Hierarchy of bandwidth clusters, and the tree of clusters.

A :class:`Hierarchy` holds levels of partitions over the hosts.  Level 1 is
the finest (highest bandwidth inside its clusters); each cluster of level
``k`` lies inside exactly one cluster of level ``k + 1``, its parent.  Each
cluster records its averaged weight (Eq 5.4, or the mean linkage) to the
other clusters of its level, which are its siblings in the Hasse diagram, and
its internal weight.

A :class:`ClusterTree` is the topology as a tree (docs/method.md): clusters as
nodes, the maximum spanning tree of their averaged weights as edges.

Both serialize to JSON in the shapes the CLI prints.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Iterable, Iterator

import numpy as np

from tomography.model.display import some, span
from tomography.model.errors import TomographyError
from tomography.model.units import counted

if TYPE_CHECKING:
    import networkx as nx
    import pandas as pd

__all__ = ["Cluster", "Hierarchy", "ClusterTree", "TreeEdge", "hierarchy_frame", "hierarchy_graph",
           "hierarchy_from_graph", "tree_members_frame", "tree_edges_frame", "tree_graph"]


@dataclass(frozen=True)
class Cluster:
    """One bandwidth cluster of one hierarchy level.

    Attributes
    ----------
    id : str
        Unique in the hierarchy, ``L<level>C<index>`` (``L1C0``).
    level : int
        1 is the finest level.
    hosts : tuple of str
        Sorted host names.
    children : tuple of str
        Ids of the clusters of the level below that it merges (empty on level 1).
    parent : str or None
        Id of the cluster above it; None on the top level.
    internal : float
        Its linkage weight with itself (the self-loop it carries upwards).
    weights : dict of str to float
        Averaged weight to each sibling cluster (same level) it exchanged data with.
    confidence : float or None
        How reliably resampled iterations find it again, 0 to 1
        (:mod:`cluster.confidence`); None when not measured.
    """

    id: str
    level: int
    hosts: tuple[str, ...]
    children: tuple[str, ...] = ()
    parent: str | None = None
    internal: float = 0.0
    weights: dict[str, float] = field(default_factory=dict)
    confidence: float | None = None

    def __repr__(self) -> str:
        """One line whatever the size.

        Examples
        --------
        >>> Cluster("L1C0", 1, tuple(f"h{i}" for i in range(32)), confidence=0.9)
        Cluster('L1C0', level 1, 32 hosts: h0, h1, h2, ..., confidence 0.90)
        """
        confidence = "" if self.confidence is None else f", confidence {self.confidence:.2f}"
        return (f"Cluster({self.id!r}, level {self.level}, {counted(len(self.hosts), 'host')}: "
                f"{some(self.hosts, count=False)}{confidence})")

    def _repr_html_(self) -> str:
        from tomography.model.display import html_view

        return html_view(repr(self), [
            ("parent", self.parent or "-"), ("children", ", ".join(self.children) or "-"),
            ("hosts", some(self.hosts, 24, count=False))])

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        out = {"id": self.id, "hosts": list(self.hosts), "parent": self.parent,
               "children": list(self.children), "size": len(self.hosts),
               "internal": self.internal, "weights": dict(self.weights)}
        if self.confidence is not None:
            out["confidence"] = self.confidence
        return out


@dataclass
class Hierarchy:
    """Levels of bandwidth clusters over a set of hosts.

    Parameters
    ----------
    levels : list of list of Cluster
        ``levels[0]`` is level 1, the finest.
    params : dict
        How it was made (linkage, engine, seed, ...), recorded in the JSON.
    modularity : list of float
        Modularity of each level's partition on the graph it was computed on.
    confidence : list of float
        How reliably resampled iterations find each level again, 0 to 1
        (:func:`cluster.confidence.hierarchy_confidence`); empty when not
        measured.  ``params["confidence"]`` holds how it was measured and the
        support threshold.
    rows : tuple of str
        The row order of the weight matrix it was made from, when that is not
        the sorted order of its hosts (:attr:`hosts`); empty otherwise.  Not
        saved in JSON.  :func:`cluster.spanning_tree.hierarchy_tree` reads a
        matrix without host names in this order.

    Examples
    --------
    >>> h = Hierarchy.from_partitions(["a", "b", "c", "d"], [[0, 0, 1, 2], [0, 0, 1, 1]])
    >>> [c.hosts for c in h.levels[1]]
    [('a', 'b'), ('c', 'd')]
    >>> h.levels[0][2].parent
    'L2C1'
    >>> Hierarchy.from_json(h.to_json()).labels(2).tolist()
    [0, 0, 1, 1]
    """

    levels: list[list[Cluster]]
    params: dict[str, Any] = field(default_factory=dict)
    modularity: list[float] = field(default_factory=list)
    confidence: list[float] = field(default_factory=list)
    rows: tuple[str, ...] = field(default=(), repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.levels or not self.levels[0]:
            raise TomographyError("a hierarchy needs at least one level with one cluster")
        hosts = sorted(h for c in self.levels[0] for h in c.hosts)
        for number, level in enumerate(self.levels, start=1):
            got = sorted(h for c in level for h in c.hosts)
            if got != hosts:
                raise TomographyError(f"level {number} does not partition the hosts of level 1")
        if len(set(hosts)) != len(hosts):
            raise TomographyError("a host is in two clusters of level 1")

    @property
    def hosts(self) -> list[str]:
        """All hosts, sorted."""
        return sorted(h for c in self.levels[0] for h in c.hosts)

    @property
    def depth(self) -> int:
        """Number of levels."""
        return len(self.levels)

    def __len__(self) -> int:
        """Number of levels, as :attr:`depth`."""
        return len(self.levels)

    def __iter__(self) -> Iterator[list[Cluster]]:
        """The levels, level 1 (the finest) first."""
        return iter(self.levels)

    def __getitem__(self, key: int | str) -> list[Cluster] | Cluster:
        """``h[k]``: the clusters of level ``k``, numbered 1 (the finest) to ``len(h)`` as
        everywhere (:meth:`level`); ``h["L2C0"]``: that cluster (:meth:`cluster`).

        Examples
        --------
        >>> h = Hierarchy.from_partitions(["a", "b", "c"], [[0, 0, 1], [0, 0, 0]])
        >>> len(h), [c.id for c in h[1]], h["L2C0"].hosts
        (2, ['L1C0', 'L1C1'], ('a', 'b', 'c'))
        >>> h[0]
        Traceback (most recent call last):
        ...
        IndexError: no level 0: levels are numbered 1 (the finest) to 2, as h.labels(k) and the command line number them (h[-1] is the top)
        >>> [c.id for c in h[-1]]
        ['L2C0']
        """
        if isinstance(key, str):
            return self.cluster(key)
        if isinstance(key, bool) or not isinstance(key, (int, np.integer)):
            raise TypeError(f"a hierarchy is indexed by level number (1 to {self.depth}) or "
                            f"cluster id, not {type(key).__name__}")
        if -self.depth <= key <= -1:   # from the top, as Python counts from the end
            return self.levels[key]
        if not 1 <= key <= self.depth:
            raise IndexError(f"no level {key}: levels are numbered 1 (the finest) to "
                             f"{self.depth}, as h.labels(k) and the command line number them "
                             "(h[-1] is the top)")
        return self.levels[key - 1]

    def __repr__(self) -> str:
        """One line whatever the size.

        Examples
        --------
        >>> Hierarchy.from_partitions(["a", "b", "c"], [[0, 0, 1], [0, 0, 0]])
        Hierarchy(3 hosts, 2 levels of 2/1 clusters from the finest up)
        """
        sizes = "/".join(str(len(level)) for level in self.levels)
        return (f"Hierarchy({counted(len(self.hosts), 'host')}, "
                f"{counted(self.depth, 'level')} of {sizes} "
                f"{'cluster' if sizes == '1' else 'clusters'}"
                f"{' from the finest up' if self.depth > 1 else ''})")

    def _repr_html_(self) -> str:
        import pandas as pd

        from tomography.model.display import html_view

        rows = [{"level": k, "clusters": len(level),
                 "hosts per cluster": span(len(c.hosts) for c in level),
                 "confidence": span(c.confidence for c in level if c.confidence is not None)}
                for k, level in enumerate(self.levels, start=1)]
        return html_view(repr(self), [("hosts", some(self.hosts))], pd.DataFrame(rows))

    def level(self, number: int) -> list[Cluster]:
        """The clusters of level ``number`` (1 is the finest)."""
        if not 1 <= number <= self.depth:
            raise TomographyError(f"no level {number}; the hierarchy has levels 1 to {self.depth}")
        return self.levels[number - 1]

    def cluster(self, cluster_id: str) -> Cluster:
        """The cluster with this id."""
        for level in self.levels:
            for c in level:
                if c.id == cluster_id:
                    return c
        raise TomographyError(f"no cluster {cluster_id!r} in the hierarchy")

    @property
    def threshold(self) -> float | None:
        """The confidence a level needs to be supported (None when not measured)."""
        return (self.params.get("confidence") or {}).get("threshold")

    def separation(self, number: int) -> float | None:
        """How clearly all the iterations set level ``number``'s clusters apart.

        :func:`cluster.separation.separation`: the weakest inside cut of any
        of its clusters over the strongest tie between two of them, per host
        pair; None when the confidence was not measured.
        """
        values = (self.params.get("confidence") or {}).get("separations") or []
        return values[number - 1] if number <= len(values) else None

    def supported(self, number: int) -> bool | None:
        """Whether level ``number`` is supported: its confidence reaches the threshold
        (None when not measured)."""
        if not self.confidence or self.threshold is None:
            return None
        return bool(self.confidence[number - 1] >= self.threshold)

    def select(self, numbers: Iterable[int]) -> "Hierarchy":
        """A hierarchy of only these levels, renumbered from 1 (clusters get new ids).

        Confidence, internal and sibling weights and modularity are carried
        over; ``params["dropped_levels"]`` lists the levels left out (their
        number here, cluster count and confidence).

        Examples
        --------
        >>> h = Hierarchy.from_partitions(list("abcd"), [[0, 1, 2, 3], [0, 0, 1, 2], [0, 0, 0, 1]])
        >>> s = h.select([1, 3])
        >>> [len(level) for level in s.levels], s.params["dropped_levels"][0]["clusters"]
        ([4, 2], 3)
        """
        keep = sorted(set(numbers))
        if not keep:
            raise TomographyError("select at least one level")
        for number in keep:
            self.level(number)
        hosts = self.hosts
        partitions = [self.labels(n, hosts) for n in keep]
        internal = [np.array([c.internal for c in self.level(n)]) for n in keep]
        weights = []
        for n in keep:
            index = {c.id: i for i, c in enumerate(self.level(n))}
            k = len(index)
            rows, cols, data = [], [], []
            for c in self.level(n):
                for other, w in c.weights.items():
                    rows.append(index[c.id])
                    cols.append(index[other])
                    data.append(w)
            from scipy import sparse

            weights.append(sparse.csr_array((data, (rows, cols)), shape=(k, k)))
        params = dict(self.params)
        if "origins" in params:
            params["origins"] = [params["origins"][n - 1] for n in keep]
        params["dropped_levels"] = [
            {"level": n, "clusters": len(self.level(n)),
             "confidence": self.confidence[n - 1] if self.confidence else None,
             "separation": self.separation(n)}
            for n in range(1, self.depth + 1) if n not in keep]
        for key in ("separations", "separated", "separated_clusters", "before"):
            if (params.get("confidence") or {}).get(key):
                params["confidence"] = dict(params["confidence"], **{
                    key: [params["confidence"][key][n - 1] for n in keep]})
        out = Hierarchy.from_partitions(
            hosts, partitions, internal=internal, weights=weights, params=params,
            modularity=[self.modularity[n - 1] for n in keep
                        if n <= len(self.modularity)] or None)
        if self.confidence:
            out.confidence = [self.confidence[n - 1] for n in keep]
            by_hosts = {c.hosts: c.confidence for n in keep for c in self.level(n)}
            out.levels = [[replace(c, confidence=by_hosts.get(c.hosts)) for c in level]
                          for level in out.levels]
        out.rows = self.rows
        return out

    def to_networkx(self):
        """The Hasse diagram as a networkx DiGraph (:func:`hierarchy_graph`).

        Examples
        --------
        >>> h = Hierarchy.from_partitions(["a", "b", "c"], [[0, 0, 1], [0, 0, 0]])
        >>> Hierarchy.from_networkx(h.to_networkx()).labels(1).tolist()
        [0, 0, 1]
        """
        return hierarchy_graph(self)

    @classmethod
    def from_networkx(cls, graph) -> "Hierarchy":
        """Inverse of :meth:`to_networkx`."""
        return hierarchy_from_graph(graph)

    def to_frame(self):
        """One row per host and level: ``host, level, cluster, size, confidence``.

        Examples
        --------
        >>> Hierarchy.from_partitions(["a", "b"], [[0, 1]]).to_frame()["cluster"].tolist()
        ['L1C0', 'L1C1']
        """
        return hierarchy_frame(self)

    def labels(self, number: int, hosts: Iterable[str] | None = None) -> np.ndarray:
        """Cluster index of each host on level ``number``, in sorted host order by default."""
        index = {h: i for i, c in enumerate(self.level(number)) for h in c.hosts}
        return np.array([index[h] for h in (self.hosts if hosts is None else hosts)])

    @classmethod
    def from_partitions(cls, hosts: list[str], partitions: list[Iterable[int]], *,
                        internal: list[np.ndarray] | None = None,
                        weights: list[np.ndarray] | None = None,
                        params: dict[str, Any] | None = None,
                        modularity: list[float] | None = None) -> "Hierarchy":
        """Build a hierarchy from per-level host labels.

        Parameters
        ----------
        hosts : list of str
        partitions : list of array of int
            Label of each host per level, finest first; each level must
            merge clusters of the level before it.
        internal, weights : list of arrays, optional
            Per level, the internal weight of each cluster (length k) and the
            k x k averaged weights between clusters (sparse or dense).
        params, modularity
            Stored as they are.
        """
        codes = [np.unique(np.asarray(list(p)), return_inverse=True)[1].ravel()
                 for p in partitions]
        n = len(hosts)
        if any(len(c) != n for c in codes):
            raise TomographyError(f"every level must label all {n} hosts")
        order = np.argsort(hosts, kind="stable")
        names = np.asarray(hosts, dtype=object)
        levels: list[list[Cluster]] = []
        for number, code in enumerate(codes, start=1):
            k = int(code.max()) + 1
            members: list[list[str]] = [[] for _ in range(k)]
            for i in order:
                members[code[i]].append(names[i])
            children: list[list[str]] = [[] for _ in range(k)]
            if number > 1:
                pairs = np.unique(np.column_stack([codes[number - 2], code]), axis=0)
                if len(np.unique(pairs[:, 0])) != len(pairs):
                    raise TomographyError(f"level {number} splits a cluster of level {number - 1}")
                for child, mine in pairs:
                    children[mine].append(f"L{number - 1}C{child}")
            parents: list[str | None] = [None] * k
            if number < len(codes):
                for i in range(n):
                    parents[code[i]] = f"L{number + 1}C{codes[number][i]}"
            between = _rows(weights[number - 1]) if weights is not None else None
            clusters = []
            for c in range(k):
                sib: dict[str, float] = {}
                if between is not None:
                    cols, vals = between[c]
                    sib = {f"L{number}C{j}": float(w) for j, w in zip(cols, vals)
                           if j != c and w > 0}
                clusters.append(Cluster(
                    id=f"L{number}C{c}", level=number, hosts=tuple(members[c]),
                    children=tuple(children[c]), parent=parents[c],
                    internal=float(internal[number - 1][c]) if internal is not None else 0.0,
                    weights=sib))
            levels.append(clusters)
        return cls(levels=levels, params=dict(params or {}), modularity=list(modularity or []))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: ``{"levels": [{"level": 1, "clusters": [...]}, ...], ...}``.

        With a measured confidence each level also has ``confidence`` and
        ``supported``, and each cluster ``confidence``.
        """
        levels = []
        for n, level in enumerate(self.levels, start=1):
            entry: dict[str, Any] = {
                "level": n,
                "modularity": self.modularity[n - 1] if n <= len(self.modularity) else None}
            if self.confidence:
                entry["confidence"] = self.confidence[n - 1]
                entry["supported"] = self.supported(n)
            entry["clusters"] = [c.to_dict() for c in level]
            levels.append(entry)
        return {"levels": levels, "params": self.params}

    def to_json(self, **kwargs: Any) -> str:
        """The hierarchy as a JSON string (see :meth:`to_dict`)."""
        return json.dumps(self.to_dict(), **kwargs)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Hierarchy":
        """Inverse of :meth:`to_dict`; raises TomographyError naming a missing field."""
        try:
            levels = [[Cluster(id=str(c["id"]), level=int(lv["level"]),
                               hosts=tuple(sorted(c["hosts"])),
                               children=tuple(c.get("children", ())), parent=c.get("parent"),
                               internal=float(c.get("internal", 0.0)),
                               weights={str(k): float(v) for k, v in c.get("weights", {}).items()},
                               confidence=(None if c.get("confidence") is None
                                           else float(c["confidence"])))
                       for c in lv["clusters"]]
                      for lv in sorted(data["levels"], key=lambda lv: int(lv["level"]))]
            ordered = sorted(data["levels"], key=lambda lv: int(lv["level"]))
            modularity = [lv.get("modularity") for lv in ordered]
            confidence = [lv.get("confidence") for lv in ordered]
        except (KeyError, TypeError, ValueError) as exc:
            raise TomographyError(f"not a hierarchy: missing or bad field {exc}") from None
        return cls(levels=levels, params=dict(data.get("params", {})),
                   modularity=[q for q in modularity if q is not None],
                   confidence=([float(c) for c in confidence]
                               if confidence and all(c is not None for c in confidence) else []))

    @classmethod
    def from_json(cls, text: str) -> "Hierarchy":
        """Inverse of :meth:`to_json` (the text read within the bounds of
        :func:`tomography.model.safe_load.load_json`)."""
        from tomography.model.safe_load import load_json

        return cls.from_dict(load_json(text.encode("utf-8"), what="hierarchy JSON"))


def _rows(matrix) -> list[tuple[list[int], list[float]]]:
    """Column indices and values of each row's non-zeros (sparse: no k x k array)."""
    from scipy import sparse

    csr = sparse.csr_array(matrix)
    csr.sort_indices()
    cols, vals, ptr = csr.indices.tolist(), csr.data.tolist(), csr.indptr.tolist()
    return [(cols[ptr[i]:ptr[i + 1]], vals[ptr[i]:ptr[i + 1]]) for i in range(csr.shape[0])]


@dataclass(frozen=True)
class TreeEdge:
    """An edge of a :class:`ClusterTree`.

    ``confidence`` is the share of resampled iterations whose tree has it
    too (None when not measured).
    """

    source: str
    target: str
    weight: float
    confidence: float | None = None


@dataclass
class ClusterTree:
    """The topology as a tree of bandwidth clusters (docs/method.md).

    Attributes
    ----------
    clusters : list of Cluster
        The nodes: the flat clusters the tree joins.
    edges : list of TreeEdge
        Maximum spanning tree edges, heaviest first.  With ``len(clusters) - 1``
        edges the tree is connected; fewer means the clusters fall into
        components that exchanged no data (a spanning forest).
    params : dict
        How it was made.

    Examples
    --------
    >>> t = ClusterTree([Cluster("L1C0", 1, ("a",)), Cluster("L1C1", 1, ("b",))],
    ...                 [TreeEdge("L1C0", "L1C1", 3.0)])
    >>> t.is_connected, t.total_weight
    (True, 3.0)
    >>> ClusterTree.from_json(t.to_json()).edges[0].weight
    3.0
    """

    clusters: list[Cluster]
    edges: list[TreeEdge]
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def is_connected(self) -> bool:
        """True when the edges span every cluster."""
        return len(self.edges) == len(self.clusters) - 1

    def __repr__(self) -> str:
        """One line whatever the size.

        Examples
        --------
        >>> ClusterTree([Cluster("L1C0", 1, ("a",)), Cluster("L1C1", 1, ("b", "c"))],
        ...             [TreeEdge("L1C0", "L1C1", 3.0)])
        ClusterTree(2 clusters of 3 hosts, 1 edge, connected)
        """
        hosts = sum(len(c.hosts) for c in self.clusters)
        return (f"ClusterTree({counted(len(self.clusters), 'cluster')} of "
                f"{counted(hosts, 'host')}, {counted(len(self.edges), 'edge')}, "
                f"{'connected' if self.is_connected else 'a forest (not connected)'})")

    def _repr_html_(self) -> str:
        from tomography.model.display import html_view

        return html_view(repr(self), [("weights", self.weight_caption)],
                         tree_edges_frame(self))

    @property
    def total_weight(self) -> float:
        """Sum of the edge weights."""
        return float(sum(e.weight for e in self.edges))

    @property
    def weight_caption(self) -> str:
        """What its edge weights are, with their unit (``params`` ``linkage``, ``weight_unit``).

        Examples
        --------
        >>> ClusterTree([], [], {"linkage": "sum", "weight_unit": "Mbit/s"}).weight_caption
        'edge weight: the measured bandwidth summed over the host pairs of the two clusters, in Mbit/s'
        """
        from tomography.model.units import WEIGHT_UNITS, weight_caption

        hosts = self.params.get("hierarchy_level") == 0  # a tree of hosts, not clusters
        return weight_caption(None if hosts else self.params.get("linkage", "mean"),
                              self.params.get("weight_unit", WEIGHT_UNITS["broadcast"]))

    def to_networkx(self):
        """The tree as a networkx Graph (:func:`tree_graph`)."""
        return tree_graph(self)

    def members_frame(self):
        """Which cluster each host is in: one row per host, ``host, cluster, size, confidence``
        (:func:`tree_members_frame`).

        Examples
        --------
        >>> t = ClusterTree([Cluster("L1C0", 1, ("a", "b")), Cluster("L1C1", 1, ("c",))],
        ...                 [TreeEdge("L1C0", "L1C1", 3.0, 0.9)])
        >>> t.members_frame()["cluster"].tolist()
        ['L1C0', 'L1C0', 'L1C1']
        """
        return tree_members_frame(self)

    def edges_frame(self):
        """The tree's edge list: ``source, target, weight, unit, confidence``, heaviest first
        (:func:`tree_edges_frame`; ``networkx.from_pandas_edgelist`` reads it).

        Examples
        --------
        >>> t = ClusterTree([Cluster("L1C0", 1, ("a", "b")), Cluster("L1C1", 1, ("c",))],
        ...                 [TreeEdge("L1C0", "L1C1", 3.0, 0.9)])
        >>> t.edges_frame().values.tolist()
        [['L1C0', 'L1C1', 3.0, 'blocks per iteration', 0.9]]
        """
        return tree_edges_frame(self)

    def to_frame(self):
        """Deprecated: a tree has two tables; use :meth:`members_frame` (this one, which
        host is in which cluster) or :meth:`edges_frame` (the edge list)."""
        import warnings

        warnings.warn("ClusterTree.to_frame() is deprecated since 0.1: use members_frame() "
                      "(host -> cluster, what it returned) or edges_frame() (the edge list)",
                      DeprecationWarning, stacklevel=2)
        return tree_members_frame(self)

    def to_dict(self) -> dict[str, Any]:
        """``{"nodes": [{"id", "level", "hosts"}], "edges": [{"source", "target", "weight"}], ...}``."""
        return {"nodes": [{"id": c.id, "level": c.level, "hosts": list(c.hosts),
                           "internal": c.internal,
                           **({} if c.confidence is None else {"confidence": c.confidence})}
                          for c in self.clusters],
                "edges": [{"source": e.source, "target": e.target, "weight": e.weight,
                           **({} if e.confidence is None else {"confidence": e.confidence})}
                          for e in self.edges],
                "connected": self.is_connected, "total_weight": self.total_weight,
                "params": self.params}

    def to_json(self, **kwargs: Any) -> str:
        """The tree as a JSON string (see :meth:`to_dict`)."""
        return json.dumps(self.to_dict(), **kwargs)

    @classmethod
    def from_json(cls, text: str) -> "ClusterTree":
        """Inverse of :meth:`to_json` (the text read within the bounds of
        :func:`tomography.model.safe_load.load_json`)."""
        from tomography.model.safe_load import load_json

        data = load_json(text.encode("utf-8"), what="tree JSON")
        try:
            clusters = [Cluster(id=n["id"], level=int(n.get("level", 1)), hosts=tuple(n["hosts"]),
                                internal=float(n.get("internal", 0.0)),
                                confidence=_optional_float(n.get("confidence")))
                        for n in data["nodes"]]
            edges = [TreeEdge(e["source"], e["target"], float(e["weight"]),
                              _optional_float(e.get("confidence"))) for e in data["edges"]]
        except (KeyError, TypeError, ValueError) as exc:
            raise TomographyError(f"not a cluster tree: {exc}") from None
        return cls(clusters=clusters, edges=edges, params=dict(data.get("params", {})))


def _optional_float(value: Any) -> float | None:
    return None if value is None else float(value)


# ------------------------------------------------------------- pandas and networkx views


def hierarchy_frame(hierarchy: Hierarchy) -> pd.DataFrame:
    """One row per host and level: ``host, level, cluster, size, confidence``.

    Examples
    --------
    >>> from tomography.model.hierarchy import Hierarchy
    >>> h = Hierarchy.from_partitions(["a", "b", "c"], [[0, 0, 1], [0, 0, 0]])
    >>> hierarchy_frame(h).query("level == 1")["cluster"].tolist()
    ['L1C0', 'L1C0', 'L1C1']
    """
    import pandas as pd

    rows = [(host, number, c.id, len(c.hosts), c.confidence)
            for number, level in enumerate(hierarchy.levels, start=1)
            for c in level for host in c.hosts]
    return pd.DataFrame(rows, columns=["host", "level", "cluster", "size", "confidence"])


def hierarchy_graph(hierarchy: Hierarchy, unit: str | None = None) -> "nx.DiGraph":
    """The Hasse diagram as a networkx DiGraph.

    Nodes are the clusters (attributes ``level``, ``hosts``, ``size``,
    ``internal``, ``confidence``); edges ``kind="contains"`` go from a
    cluster to each cluster it merges, edges ``kind="linkage"`` join clusters
    of one level with their averaged weight (``weight``, ``unit``), stored
    once, from the smaller id to the larger (the weight is symmetric).
    Every attribute is a number or a string, so that ``networkx.write_graphml``
    and ``write_gexf`` (Gephi) write the graph as it is: ``hosts`` is the
    hosts' names separated by spaces, ``confidence`` is left out where none
    was measured, and the graph's ``params`` are JSON text.

    Examples
    --------
    >>> from tomography.model.hierarchy import Hierarchy
    >>> h = Hierarchy.from_partitions(["a", "b", "c"], [[0, 0, 1], [0, 0, 0]])
    >>> g = hierarchy_graph(h)
    >>> sorted(g.successors("L2C0")), g.nodes["L1C0"]["hosts"]
    (['L1C0', 'L1C1'], 'a b')
    """

    import networkx as nx

    from tomography.model.units import WEIGHT_UNITS

    unit = unit or hierarchy.params.get("weight_unit", WEIGHT_UNITS["broadcast"])
    g = nx.DiGraph(unit=unit, params=json.dumps(hierarchy.params, default=str))
    for number, level in enumerate(hierarchy.levels, start=1):
        for c in level:
            g.add_node(c.id, **_node_attributes(c), level=number)
    for level in hierarchy.levels:
        for c in level:
            for child in c.children:
                g.add_edge(c.id, child, kind="contains")
            for other, w in c.weights.items():
                if c.id < other:
                    g.add_edge(c.id, other, kind="linkage", weight=w, unit=unit)
    return g


def tree_graph(tree: ClusterTree, unit: str | None = None) -> "nx.Graph":
    """The cluster tree as a networkx Graph (``hosts``, ``size``, ``confidence`` on nodes;
    ``weight``, ``unit``, ``confidence`` on edges), written to GraphML and GEXF as it is
    (the attributes as in :func:`hierarchy_graph`).

    Examples
    --------
    >>> from tomography.model.hierarchy import Cluster, ClusterTree, TreeEdge
    >>> t = ClusterTree([Cluster("L1C0", 1, ("a",)), Cluster("L1C1", 1, ("b",))],
    ...                 [TreeEdge("L1C0", "L1C1", 3.0)])
    >>> tree_graph(t)["L1C0"]["L1C1"]["weight"]
    3.0
    """
    import networkx as nx

    from tomography.model.units import WEIGHT_UNITS

    unit = unit or tree.params.get("weight_unit", WEIGHT_UNITS["broadcast"])
    g = nx.Graph(unit=unit)
    for c in tree.clusters:
        g.add_node(c.id, **_node_attributes(c))
    for e in tree.edges:
        g.add_edge(e.source, e.target, weight=float(e.weight), unit=unit,
                   **({} if e.confidence is None else {"confidence": float(e.confidence)}))
    return g


def _node_attributes(c: Cluster) -> dict[str, Any]:
    """A cluster's node attributes, numbers and strings only (GraphML, GEXF)."""
    return {"hosts": " ".join(c.hosts), "size": len(c.hosts), "internal": float(c.internal),
            **({} if c.confidence is None else {"confidence": float(c.confidence)})}


def tree_members_frame(tree: ClusterTree) -> pd.DataFrame:
    """Which cluster each host is in: one row per host, ``host, cluster, size, confidence``.

    Examples
    --------
    >>> from tomography.model.hierarchy import Cluster, ClusterTree
    >>> tree_members_frame(ClusterTree([Cluster("L1C0", 1, ("a", "b"))], [])).shape
    (2, 4)
    """
    import pandas as pd

    rows = [(host, c.id, len(c.hosts), c.confidence) for c in tree.clusters for host in c.hosts]
    return pd.DataFrame(rows, columns=["host", "cluster", "size", "confidence"])


def tree_edges_frame(tree: ClusterTree) -> pd.DataFrame:
    """The tree's edges: ``source, target, weight, unit, confidence``, heaviest first.

    ``confidence`` is NaN where none was measured; ``attrs["unit"]`` is the
    unit too, as in every edge list of the toolkit.

    Examples
    --------
    >>> from tomography.model.hierarchy import Cluster, ClusterTree, TreeEdge
    >>> t = ClusterTree([Cluster("a", 0, ("a",)), Cluster("b", 0, ("b",))],
    ...                 [TreeEdge("a", "b", 940.0)], {"weight_unit": "Mbit/s"})
    >>> tree_edges_frame(t).values.tolist()
    [['a', 'b', 940.0, 'Mbit/s', nan]]
    """
    import pandas as pd

    from tomography.model.units import WEIGHT_UNITS

    unit = tree.params.get("weight_unit", WEIGHT_UNITS["broadcast"])
    rows = [(e.source, e.target, float(e.weight), unit,
             float("nan") if e.confidence is None else float(e.confidence))
            for e in sorted(tree.edges, key=lambda e: -e.weight)]
    frame = pd.DataFrame(rows, columns=["source", "target", "weight", "unit", "confidence"])
    frame.attrs["unit"] = unit
    return frame


def hierarchy_from_graph(graph: "nx.DiGraph") -> Hierarchy:
    """Inverse of :func:`hierarchy_graph` (partitions, weights and confidences).

    Examples
    --------
    >>> from tomography.model.hierarchy import Hierarchy
    >>> h = Hierarchy.from_partitions(["a", "b", "c"], [[0, 0, 1], [0, 0, 0]])
    >>> hierarchy_from_graph(hierarchy_graph(h)).labels(1).tolist()
    [0, 0, 1]
    """
    levels: dict[int, list[Cluster]] = {}
    for node, data in graph.nodes(data=True):
        parents = [u for u, _, d in graph.in_edges(node, data=True) if d.get("kind") == "contains"]
        children = sorted(v for _, v, d in graph.out_edges(node, data=True)
                          if d.get("kind") == "contains")
        weights = {}
        for u, v, d in list(graph.out_edges(node, data=True)) + list(graph.in_edges(node, data=True)):
            if d.get("kind") == "linkage":
                weights[v if u == node else u] = float(d["weight"])
        try:
            levels.setdefault(int(data["level"]), []).append(Cluster(
                id=str(node), level=int(data["level"]), hosts=tuple(sorted(
                    data["hosts"].split() if isinstance(data["hosts"], str) else data["hosts"])),
                children=tuple(children), parent=parents[0] if parents else None,
                internal=float(data.get("internal", 0.0)), weights=weights,
                confidence=data.get("confidence")))
        except KeyError as exc:
            raise TomographyError(f"node {node!r} has no attribute {exc}") from None
    def order(c: Cluster) -> tuple[int, str]:
        tail = c.id.rsplit("C", 1)[-1]
        return (int(tail), c.id) if tail.isdigit() else (0, c.id)

    params = graph.graph.get("params", {})
    if isinstance(params, str):
        params = json.loads(params)
    return Hierarchy(levels=[sorted(levels[k], key=order) for k in sorted(levels)],
                     params=dict(params))
