"""pandas and networkx in and out: the analysis on data measured by other tools.

:class:`EdgeWeights` is what the clustering functions need and nothing more:
a symmetric weight matrix, its host order, the unit of its weights and,
when the data come in repeated measurements, the rows of each one, so that
the confidence of :mod:`cluster.confidence` can resample them.  Build one
from a networkx graph (:func:`from_networkx`) or an edge list
(:func:`from_pandas`); every function that takes ``w_n`` takes it.

:func:`edges_frame` and :func:`hierarchy_frame` / :func:`hierarchy_graph`
(and the methods of :class:`~tomography.dataset.Measurement`,
:class:`~tomography.hierarchy.Hierarchy` and
:class:`~tomography.hierarchy.ClusterTree` that call them) go the other way.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import sparse

from tomography.deprecation import renamed_parameter
from tomography.errors import TomographyError
from tomography.hierarchy import (hierarchy_frame, hierarchy_from_graph, hierarchy_graph,
                                  tree_frame, tree_graph)
from tomography.weights import IterationWeights

if TYPE_CHECKING:
    import networkx as nx

    from tomography.dataset import Measurement

__all__ = ["EdgeWeights", "from_networkx", "from_pandas", "edges_frame", "hierarchy_frame",
           "hierarchy_graph", "hierarchy_from_graph", "tree_graph", "tree_frame"]


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
        Columns ``round, src, dst, weight``: the repeated measurements whose
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

    def iteration_weights(self) -> IterationWeights | None:
        """The rounds as :class:`tomography.weights.IterationWeights`, for a resampled
        confidence (None without at least two rounds)."""
        if self.rounds is None or self.rounds["round"].nunique() < 2:
            return None
        index = pd.Index(self.hosts)
        ids = pd.Index(sorted(self.rounds["round"].unique()))
        return IterationWeights(self.matrix, self.hosts, ids.get_indexer(self.rounds["round"]),
                                index.get_indexer(self.rounds["src"]),
                                index.get_indexer(self.rounds["dst"]),
                                self.rounds["weight"].to_numpy(dtype=float), len(ids))


def from_pandas(frame: pd.DataFrame, *, source: str = "src", target: str = "dst",
                weight: str = "weight", round: str | None = None, hosts: list[str] | None = None,
                unit: str = "weight") -> EdgeWeights:
    """Weights from an edge list, e.g. another tool's pairwise bandwidths.

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per measured pair (either direction; both directions add up,
        and so do repeated rows, with a warning, unless ``round`` numbers them).
    source, target, weight : str
        Column names.
    round : str, optional
        Column numbering repeated measurements; the weight is then the mean
        over rounds (Eq 4.2) and the rounds can be resampled for a confidence.
    hosts : list of str, optional
        Every host, isolated ones included (default: those in the edge list, sorted).
    unit : str, default "weight"

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
    >>> df = pd.DataFrame({"src": ["a", "b", "a"], "dst": ["b", "c", "c"],
    ...                    "weight": [10.0, 9.0, 1.0]})
    >>> w = from_pandas(df, unit="Mbit/s")
    >>> w.hosts, w.matrix.toarray().tolist()
    (['a', 'b', 'c'], [[0.0, 10.0, 1.0], [10.0, 0.0, 9.0], [1.0, 9.0, 0.0]])
    >>> from cluster.louvain import louvain
    >>> louvain(w, seed=0).nodes
    ['a', 'b', 'c']
    """
    wanted = [source, target, weight] + ([round] if round else [])
    missing = [c for c in wanted if c not in frame.columns]
    if missing:
        raise TomographyError(f"the edge list has no column {missing[0]!r} "
                              f"(columns: {', '.join(map(str, frame.columns))})")
    src, dst = frame[source].astype(str), frame[target].astype(str)
    values = pd.to_numeric(frame[weight], errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(values) | (values < 0)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise TomographyError(f"row {row}: weight {frame[weight].iloc[row]!r} is not a finite "
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
        rounds = pd.DataFrame({"round": frame[round].to_numpy(), "src": src.to_numpy(),
                               "dst": dst.to_numpy(), "weight": values})
    return EdgeWeights(matrix=matrix, hosts=names, unit=unit, rounds=rounds)


def from_networkx(graph: "nx.Graph", *, weight: str = "weight", unit: str = "weight"
                  ) -> EdgeWeights:
    """Weights from an undirected networkx graph (nodes in sorted order, as strings).

    Examples
    --------
    >>> import networkx as nx
    >>> g = nx.Graph([("a", "b", {"weight": 3.0}), ("b", "c", {"weight": 1.0})])
    >>> w = from_networkx(g)
    >>> w.hosts, float(w.matrix[0, 1])
    (['a', 'b', 'c'], 3.0)
    """
    if graph.is_directed():
        raise TomographyError("expected an undirected graph; symmetrize it first (w = C + C^T)")
    rows = [(str(u), str(v), d.get(weight, 1.0)) for u, v, d in graph.edges(data=True) if u != v]
    frame = pd.DataFrame(rows, columns=["src", "dst", "weight"])
    return from_pandas(frame, hosts=sorted(str(node) for node in graph.nodes), unit=unit)


@renamed_parameter("n", "iterations")
def edges_frame(measurement: "Measurement", iterations: int | None = None, *,
                per_iteration: bool = False) -> pd.DataFrame:
    """The edges of ``w_n`` as a tidy DataFrame.

    Parameters
    ----------
    measurement : Measurement
    iterations : int, optional
        The first ``iterations`` iterations (all by default; ``n=``, deprecated).
    per_iteration : bool, default False
        One row per iteration and pair (``iteration, src, dst, weight``, Eq 4.1)
        instead of one per pair.

    Returns
    -------
    pandas.DataFrame
        ``src, dst, w_n, iterations`` (``src < dst``; ``iterations``: in how
        many of those iterations the pair exchanged blocks), heaviest first.

    Examples
    --------
    >>> from tomography.synthetic import planted_partition
    >>> m = planted_partition(6, 2, iterations=2, seed=0)
    >>> e = edges_frame(m)
    >>> list(e.columns), bool(abs(e["w_n"].sum() - m.transfers["blocks"].sum() / 2) < 1e-9)
    (['src', 'dst', 'w_n', 'iterations'], True)
    """
    ids = measurement.iteration_ids[:iterations]
    t = measurement.transfers[measurement.transfers["iteration"].isin(ids)]
    a, b = t["receiver"].astype(str), t["sender"].astype(str)
    low = np.where(a < b, a, b)
    high = np.where(a < b, b, a)
    pairs = pd.DataFrame({"iteration": t["iteration"].to_numpy(), "src": low, "dst": high,
                          "weight": t["blocks"].to_numpy(dtype=float)})
    per = pairs.groupby(["iteration", "src", "dst"], as_index=False)["weight"].sum()
    if per_iteration:
        return per.sort_values(["iteration", "src", "dst"]).reset_index(drop=True)
    out = per.groupby(["src", "dst"], as_index=False).agg(
        w_n=("weight", "sum"), iterations=("iteration", "nunique"))
    out["w_n"] = out["w_n"] / max(len(ids), 1)
    return out.sort_values(["w_n", "src", "dst"], ascending=[False, True, True]).reset_index(
        drop=True)
