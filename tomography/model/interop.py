"""pandas and networkx in and out: the analysis on data measured by other tools.

:class:`EdgeWeights` is what the clustering functions need and nothing more:
a symmetric weight matrix, its host order, the unit of its weights and,
when the data come in repeated measurements, the rows of each one, so that
the confidence of :mod:`cluster.confidence` can resample them.  Build one
from a networkx graph (:func:`from_networkx`) or an edge list
(:func:`from_pandas`); every function that takes ``w_n`` takes it.

:func:`edges_frame` and :func:`hierarchy_frame` / :func:`hierarchy_graph`
(and the methods of :class:`~tomography.model.dataset.Measurement`,
:class:`~tomography.model.hierarchy.Hierarchy` and
:class:`~tomography.model.hierarchy.ClusterTree` that call them) go the other way.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy import sparse

from tomography.model.deprecation import renamed_parameter
from tomography.model.edges import edges_frame
from tomography.model.errors import GraphError, TomographyError
from tomography.model.hierarchy import (hierarchy_frame, hierarchy_from_graph, hierarchy_graph,
                                        tree_edges_frame, tree_graph, tree_members_frame)
from tomography.model.hostnames import row_names
from tomography.model.matrices import checked_matrix
from tomography.model.units import WEIGHT_UNITS
from tomography.model.weights import IterationWeights, mean_weights

if TYPE_CHECKING:
    import networkx as nx

    from tomography.model.dataset import Measurement

__all__ = ["EdgeWeights", "EDGE_COLUMNS", "edge_unit", "as_weights", "from_networkx",
           "from_pandas", "weight_graph",
           "to_networkx", "edges_frame", "hierarchy_frame", "hierarchy_graph",
           "hierarchy_from_graph", "tree_graph", "tree_members_frame", "tree_edges_frame",
           "check_weight_attribute"]


@dataclass
class EdgeWeights:
    """A measurement-like weight input: ``w`` between hosts, in a known host order.

    Attributes
    ----------
    matrix : scipy.sparse.csr_array
        Symmetric, non-negative, zero diagonal.
    hosts : list of str
        The host of each row.
    unit : str
        What a weight is (``"blocks per iteration"``, ``"Mbit/s"``, ...).
    rounds : pandas.DataFrame or None
        Columns ``round, source, target, weight``: the repeated measurements whose
        mean is ``matrix`` (each undirected pair once per round), or None.
    """

    matrix: sparse.csr_array
    hosts: list[str]
    unit: str = "weight"
    rounds: pd.DataFrame | None = None

    @property
    def n_hosts(self) -> int:
        """Number of hosts."""
        return len(self.hosts)

    def __repr__(self) -> str:
        """One line whatever the size.

        Examples
        --------
        >>> EdgeWeights(sparse.csr_array(np.array([[0, 2.0], [2.0, 0]])), ["a", "b"], "Mbit/s")
        EdgeWeights(2 hosts, 1 edge, Mbit/s)
        """
        from tomography.model.units import counted

        rounds = ("" if self.rounds is None else
                  f", {counted(int(self.rounds['round'].nunique()), 'round')}")
        return (f"EdgeWeights({counted(self.n_hosts, 'host')}, "
                f"{counted(int(sparse.triu(self.matrix, k=1).nnz), 'edge')}, {self.unit}{rounds})")

    def iteration_weights(self) -> IterationWeights | None:
        """The rounds as :class:`tomography.model.weights.IterationWeights`, for a resampled
        confidence (None without at least two rounds)."""
        if self.rounds is None or self.rounds["round"].nunique() < 2:
            return None
        index = pd.Index(self.hosts)
        ids = pd.Index(sorted(self.rounds["round"].unique()))
        return IterationWeights(self.matrix, self.hosts, ids.get_indexer(self.rounds["round"]),
                                index.get_indexer(self.rounds["source"]),
                                index.get_indexer(self.rounds["target"]),
                                self.rounds["weight"].to_numpy(dtype=float), len(ids))


EDGE_COLUMNS = {"source": ("source", "src"), "target": ("target", "dst"),
                "weight": ("weight", "w_n"), "round": ("iteration", "round")}
"""The columns an edge list is read from, each the first of its names present: networkx's
``source, target, weight`` (what the toolkit writes), or the older ``src, dst, w_n``;
repeated measurements numbered by ``iteration`` or ``round``."""


def _column(frame: pd.DataFrame, role: str, given: str | None, *, needed: bool = True
            ) -> str | None:
    """The column of ``frame`` that plays ``role``: ``given``, else the first of its names."""
    if given is not None:
        if given not in frame.columns:
            raise TomographyError(f"the edge list has no column {given!r} ({role}=; columns: "
                                  f"{', '.join(map(str, frame.columns))})")
        return given
    found = next((c for c in EDGE_COLUMNS[role] if c in frame.columns), None)
    if found is None and needed:
        raise TomographyError(f"the edge list has no {role} column: looked for "
                              f"{' or '.join(map(repr, EDGE_COLUMNS[role]))} (columns: "
                              f"{', '.join(map(str, frame.columns))}); give {role}=COLUMN "
                              "(a DataFrame is a square adjacency when its index and columns "
                              "name the same hosts, else an edge list)")
    return found


def edge_unit(frame: pd.DataFrame) -> str | None:
    """The unit an edge list states: ``frame.attrs["unit"]``, else its ``unit`` column's one
    value; None when it states none.

    Examples
    --------
    >>> df = pd.DataFrame({"source": ["a"], "target": ["b"], "weight": [9.0]})
    >>> edge_unit(df) is None
    True
    >>> df.attrs["unit"] = "Mbit/s"
    >>> edge_unit(df)
    'Mbit/s'
    """
    if frame.attrs.get("unit"):
        return str(frame.attrs["unit"])
    if "unit" in frame.columns and frame["unit"].nunique() == 1:
        return str(frame["unit"].iloc[0])
    return None


def from_pandas(frame: pd.DataFrame, *, source: str | None = None, target: str | None = None,
                weight: str | None = None, round: str | None = None,
                hosts: list[str] | None = None, unit: str | None = None) -> EdgeWeights:
    """Weights from an edge list: the toolkit's own tables, networkx's, another tool's.

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per measured pair (either direction; both directions add up,
        and so do repeated rows, with a warning, unless ``round`` numbers them).
    source, target, weight : str, optional
        Column names; by default networkx's ``source``, ``target`` and
        ``weight`` (:data:`EDGE_COLUMNS`: ``src``, ``dst`` and ``w_n`` too),
        so that ``m.edges()``, ``tree.edges_frame()`` and
        ``networkx.to_pandas_edgelist(g)`` go in as they are.
    round : str, optional
        Column numbering repeated measurements (default: ``iteration`` or
        ``round`` when there is one, as in ``m.edges(per_iteration=True)``);
        the weight is then the mean over rounds (Eq 4.2) and the rounds can be
        resampled for a confidence.
    hosts : list of str, optional
        Every host, isolated ones included (default: those in the edge list, sorted).
    unit : str, optional
        What a weight is; by default what the frame states (:func:`edge_unit`),
        else ``"weight"``.

    Returns
    -------
    EdgeWeights

    Raises
    ------
    TomographyError
        For a missing column, a host not in ``hosts``, a self-pair, or a
        negative or non-finite weight, naming the row.

    Examples
    --------
    >>> df = pd.DataFrame({"source": ["a", "b", "a"], "target": ["b", "c", "c"],
    ...                    "weight": [10.0, 9.0, 1.0]})
    >>> w = from_pandas(df, unit="Mbit/s")
    >>> w.hosts, w.matrix.toarray().tolist()
    (['a', 'b', 'c'], [[0.0, 10.0, 1.0], [10.0, 0.0, 9.0], [1.0, 9.0, 0.0]])
    >>> from cluster.louvain import louvain
    >>> louvain(w, seed=0).nodes
    ['a', 'b', 'c']
    >>> from_pandas(df.rename(columns={"weight": "mbps"}))
    Traceback (most recent call last):
    ...
    tomography.model.errors.TomographyError: the edge list has no weight column: looked for 'weight' or 'w_n' (columns: source, target, mbps); give weight=COLUMN (a DataFrame is a square adjacency when its index and columns name the same hosts, else an edge list)
    """
    source = _column(frame, "source", source)
    target = _column(frame, "target", target)
    weight = _column(frame, "weight", weight)
    round = _column(frame, "round", round, needed=False)
    unit = unit or edge_unit(frame) or "weight"
    src, dst = frame[source].astype(str), frame[target].astype(str)
    values = pd.to_numeric(frame[weight], errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(values) | (values < 0)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise GraphError(f"row {row}: weight {frame[weight].tolist()[row]!r} is not a finite "
                         "number >= 0")
    same = (src == dst).to_numpy()
    if same.any():
        row = int(np.flatnonzero(same)[0])
        raise TomographyError(f"row {row}: a pair of the same host {src.iloc[row]!r}")
    names = sorted(set(src) | set(dst)) if hosts is None else [str(h) for h in hosts]
    index = pd.Index(names)
    i, j = index.get_indexer(src), index.get_indexer(dst)
    unknown = (i < 0) | (j < 0)
    if unknown.any():
        row = int(np.flatnonzero(unknown)[0])
        host = src.iloc[row] if i[row] < 0 else dst.iloc[row]
        raise TomographyError(f"row {row}: unknown host {host!r} (not in hosts)")
    count = frame[round].nunique() if round else 1
    if not round:
        repeated = int(pd.DataFrame({"s": i, "t": j}).duplicated().sum())
        if repeated:
            warnings.warn(f"{repeated} row(s) repeat a pair already listed: their weights are "
                          "summed; give round=COLUMN to average repeated measurements",
                          stacklevel=2)
    n = len(names)
    directed = sparse.csr_array((values, (i, j)), shape=(n, n))
    matrix = ((directed + directed.T) / count).tocsr()
    matrix.eliminate_zeros()
    rounds = None
    if round:
        rounds = pd.DataFrame({"round": frame[round].to_numpy(), "source": src.to_numpy(),
                               "target": dst.to_numpy(), "weight": values})
    return EdgeWeights(matrix=matrix, hosts=names, unit=unit, rounds=rounds)


def check_weight_attribute(graph: "nx.Graph", weight: str | None = "weight") -> None:
    """Refuse a networkx graph whose edges do not carry ``weight``, as networkx would not.

    networkx reads a missing ``weight`` attribute as 1: a graph whose
    bandwidths are stored as ``bw`` would be clustered as if every edge were
    equal.  ``weight=None`` says the graph is unweighted on purpose (every
    edge 1), as in networkx.

    Raises
    ------
    GraphError
        When no edge has ``weight`` but the edges carry another numeric
        attribute (named in the message), or when only some edges have it, or
        when a value is not a number.

    Examples
    --------
    >>> import networkx as nx
    >>> g = nx.Graph([("a", "b", {"bw": 9.4}), ("b", "c", {"bw": 0.9})])
    >>> check_weight_attribute(g, "bw")
    >>> check_weight_attribute(g)
    Traceback (most recent call last):
    ...
    tomography.model.errors.GraphError: no edge of the graph has a 'weight' attribute, but they carry 'bw': give weight='bw' (or weight=None to treat every edge as 1)
    >>> check_weight_attribute(nx.path_graph(3))     # no attribute at all: unweighted, 1 each
    """
    if weight is None:
        return
    edges = [(u, v, d) for u, v, d in graph.edges(data=True)]
    having = [d[weight] for _, _, d in edges if weight in d]
    if not having:
        numeric = sorted({k for _, _, d in edges for k, v in d.items()
                          if isinstance(v, (int, float, np.number)) and not isinstance(v, bool)},
                         key=str)
        if numeric:
            raise GraphError(f"no edge of the graph has a {weight!r} attribute, but they carry "
                             f"{', '.join(map(repr, numeric))}: give weight={numeric[0]!r} "
                             "(or weight=None to treat every edge as 1)")
        return
    if len(having) < len(edges):
        u, v, _ = next(e for e in edges if weight not in e[2])
        raise GraphError(f"{len(edges) - len(having)} of {len(edges)} edges have no {weight!r} "
                         f"attribute, e.g. {u!r}-{v!r}: give every edge one")
    for u, v, d in edges:
        value = d[weight]
        if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
            raise GraphError(f"edge {u!r}-{v!r}: {weight} = {value!r} is not a number")


def from_networkx(graph: "nx.Graph", *, weight: str | None = "weight", unit: str = "weight"
                  ) -> EdgeWeights:
    """Weights from an undirected networkx graph (nodes in sorted order, as strings).

    Parameters
    ----------
    graph : networkx.Graph
    weight : str or None, default "weight"
        The edge attribute holding the weight, as in networkx; None for an
        unweighted graph (every edge 1).  A graph whose edges lack it but
        carry another number is refused (:func:`check_weight_attribute`).
    unit : str, default "weight"

    Examples
    --------
    >>> import networkx as nx
    >>> g = nx.Graph([("a", "b", {"weight": 3.0}), ("b", "c", {"weight": 1.0})])
    >>> w = from_networkx(g)
    >>> w.hosts, float(w.matrix[0, 1])
    (['a', 'b', 'c'], 3.0)
    >>> g = nx.Graph([("a", "b", {"mbps": 940.0}), ("b", "c", {"mbps": 95.0})])
    >>> float(from_networkx(g, weight="mbps", unit="Mbit/s").matrix[1, 2])
    95.0
    """
    if graph.is_directed():
        raise TomographyError("expected an undirected graph; symmetrize it first (w = C + C^T)")
    check_weight_attribute(graph, weight)
    rows = [(str(u), str(v), 1.0 if weight is None else d.get(weight, 1.0))
            for u, v, d in graph.edges(data=True) if u != v]
    frame = pd.DataFrame(rows, columns=["source", "target", "weight"])
    return from_pandas(frame, hosts=sorted(str(node) for node in graph.nodes), unit=unit)


def _is_measurement(data: object) -> bool:
    return hasattr(data, "transfers") and hasattr(data, "host_names")


def as_weights(data: object, hosts: list[str] | None = None, *, weight: str | None = "weight",
               iterations: int | None = None) -> EdgeWeights:
    """Any weight input the toolkit takes, as :class:`EdgeWeights`.

    Parameters
    ----------
    data : Measurement, path, EdgeWeights, networkx.Graph, pandas.DataFrame, sparse array or ndarray
        A dataset or its directory (its ``w_n``, or a probe dataset's
        bandwidths, over the first ``iterations``); weights already converted;
        an undirected graph (:func:`from_networkx`); a square DataFrame whose
        index and columns name the hosts, or an edge list with ``source``,
        ``target`` and ``weight`` columns (:func:`from_pandas`, which also
        reads ``src``, ``dst``, ``w_n``); a symmetric matrix, its rows named by
        ``hosts`` (``h00, h01, ...`` without).
    hosts : list of str, optional
        The rows of a matrix; for the inputs that name their hosts, the same
        names in the same order or nothing.
    weight : str or None, default "weight"
        The edge attribute of a graph, or the weight column of an edge list.
    iterations : int, optional
        For a dataset: average its first ``iterations`` (all by default).

    Returns
    -------
    EdgeWeights
        ``unit`` says what a weight is when the input says it.

    Raises
    ------
    TomographyError
        Naming what is wrong with the input (a :class:`~tomography.model.errors.GraphError`
        for a matrix that is not square, finite, non-negative and symmetric).

    Examples
    --------
    >>> import numpy as np
    >>> as_weights(np.array([[0, 2.0], [2.0, 0]]), ["a", "b"]).hosts
    ['a', 'b']
    >>> from tomography.model.synthetic import planted_partition
    >>> w = as_weights(planted_partition(6, 2, iterations=2, seed=0))
    >>> w.matrix.shape, w.unit
    ((6, 6), 'blocks per iteration')
    >>> df = pd.DataFrame([[0, 5.0], [5.0, 0]], index=["x", "y"], columns=["x", "y"])
    >>> float(as_weights(df).matrix[0, 1])
    5.0
    """
    import sys

    if isinstance(data, (str, os.PathLike)):   # a dataset directory, as analyze() takes
        from tomography.model.dataset import read_measurement

        data = read_measurement(data)
    if iterations is not None and not _is_measurement(data):
        raise TomographyError("iterations= selects a dataset's iterations; the weights given "
                              "are already averaged")
    networkx = sys.modules.get("networkx")
    if _is_measurement(data):
        probe = data.probes is not None and not data.iteration_ids
        out = EdgeWeights(mean_weights(data, iterations), data.host_names,
                          unit=WEIGHT_UNITS["probe" if probe else "broadcast"])
    elif isinstance(data, EdgeWeights):
        out = data
    elif networkx is not None and isinstance(data, networkx.Graph):
        out = from_networkx(data, weight=weight, unit=str(data.graph.get("unit", "weight")))
    elif isinstance(data, pd.DataFrame):
        square = data.shape[0] == data.shape[1] and list(data.index) == list(data.columns)
        if square:
            out = EdgeWeights(sparse.csr_array(data.to_numpy(dtype=float)),
                              [str(h) for h in data.index])
        else:
            out = from_pandas(data, weight=None if weight == "weight" else weight,
                              hosts=hosts)
    elif hasattr(data, "matrix") and hasattr(data, "hosts"):   # SharedGraph
        out = EdgeWeights(sparse.csr_array(data.matrix), row_names(data.matrix.shape[0],
                                                                   data.hosts))
    else:
        array = data if sparse.issparse(data) else np.asarray(data, dtype=float)
        if array.ndim != 2 or array.shape[0] != array.shape[1]:
            raise TomographyError(f"expected a square weight matrix, got shape {array.shape}")
        out = EdgeWeights(sparse.csr_array(array), row_names(array.shape[0], hosts))
    out = replace(out, matrix=checked_matrix(out.matrix, out.hosts))
    if hosts is not None:
        row_names(len(out.hosts), hosts, out.hosts)   # the same names, or a clear error
    return out


def _old_positions(function):
    """Take the arguments that used to follow the data positionally, with a warning:
    ``weight_graph(m, iterations)`` and ``to_networkx(matrix, hosts, labels)``, told apart
    by what the second one is (a number of iterations, or the host names)."""
    import functools
    import warnings

    @functools.wraps(function)
    def wrapper(data: object, *args: Any, **kwargs: Any) -> Any:
        if not args:
            return function(data, **kwargs)
        if len(args) > 2:
            raise TomographyError("to_networkx() takes the data positionally; give hosts=, "
                                  "labels=, iterations= by keyword")
        count = isinstance(args[0], (int, np.integer)) and not isinstance(args[0], bool)
        names = ("iterations",) if count else ("hosts", "labels")
        if len(args) > len(names):
            raise TomographyError("after a number of iterations, give the rest by keyword")
        for name, value in zip(names, args):
            if name in kwargs:
                raise TomographyError(f"to_networkx() got {name} twice")
            kwargs[name] = value
        moved = ", ".join(f"{n}=..." for n in names[:len(args)])
        warnings.warn(f"passing {moved} positionally is deprecated since 0.1: give it by "
                      "keyword", DeprecationWarning, stacklevel=2)
        return function(data, **kwargs)

    return wrapper


@_old_positions
@renamed_parameter("n", "iterations")
def to_networkx(data: object, *, hosts: list[str] | None = None,
                labels: dict[str, str] | None = None, iterations: int | None = None,
                weight: str | None = "weight") -> "nx.Graph":
    """A weighted :class:`networkx.Graph` of ``w_n`` or of any other weight input.

    ``weight_graph`` is the same function under its older name.

    Parameters
    ----------
    data : Measurement, EdgeWeights, networkx.Graph, pandas.DataFrame, sparse array or ndarray
        As :func:`as_weights` takes it.
    hosts : list of str, optional
        Node names of a matrix's rows (``h00, h01, ...`` without).
    labels : dict, optional
        Host to ground-truth label, node attribute ``label`` (a dataset's own
        labels by default).
    iterations : int, optional
        For a dataset: the first ``iterations`` averaged (Eq 4.2); all by
        default (``n=``, deprecated).
    weight : str or None, default "weight"
        The weight attribute or column of a graph or edge-list input.

    Returns
    -------
    networkx.Graph
        Every host a node (isolated ones included), in the rows' order; edge
        attribute ``weight``; graph attribute ``unit``.

    Examples
    --------
    >>> import numpy as np
    >>> g = to_networkx(np.array([[0, 2.0], [2.0, 0]]), hosts=["a", "b"])
    >>> g["a"]["b"]["weight"]
    2.0
    >>> from tomography.model.synthetic import planted_partition
    >>> g = weight_graph(planted_partition(8, 2, iterations=2, seed=0))
    >>> g.number_of_nodes(), g.nodes["h000"]["label"], g.graph["unit"]
    (8, 'g0', 'blocks per iteration')
    """
    import networkx as nx   # on use: 0.1 s to import

    w = as_weights(data, hosts, weight=weight, iterations=iterations)
    if labels is None and _is_measurement(data):
        labels = data.labels
    graph = nx.Graph(unit=w.unit)
    for host in w.hosts:
        graph.add_node(host, **({"label": labels[host]} if labels and host in labels else {}))
    coo = sparse.coo_array(w.matrix)
    keep = coo.row < coo.col
    graph.add_weighted_edges_from(
        (w.hosts[i], w.hosts[j], float(x))
        for i, j, x in zip(coo.row[keep], coo.col[keep], coo.data[keep]) if x)
    return graph


weight_graph = to_networkx


