"""A dataset's edge list: ``w_n`` (or a probe dataset's bandwidths) one row per host pair.

Its columns are networkx's (``source, target, weight``) and ``attrs["unit"]`` says what a
weight is: the one edge-table scheme of the toolkit
(:data:`tomography.model.interop.EDGE_COLUMNS` reads it back).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import sparse

from tomography.model.deprecation import renamed_parameter
from tomography.model.units import WEIGHT_UNITS
from tomography.model.weights import mean_weights, successful_probes

if TYPE_CHECKING:
    from tomography.model.dataset import Measurement

__all__ = ["edges_frame"]


def _probe_edges(measurement: "Measurement", iterations: int | None,
                 per_iteration: bool) -> pd.DataFrame:
    """:func:`edges_frame` of a probe dataset (its matrix's edges, its repeats)."""
    runs = successful_probes(measurement, iterations)
    src, dst = runs["src"].astype(str), runs["dst"].astype(str)
    low, high = np.where(src < dst, src, dst), np.where(src < dst, dst, src)
    repeat = runs["repeat"].to_numpy() if "repeat" in runs else np.zeros(len(runs), dtype=int)
    per = pd.DataFrame({"iteration": repeat, "source": low, "target": high,
                        "sender": src.to_numpy(),
                        "weight": runs["bits_per_second"].to_numpy(dtype=float) / 1e6})
    if per_iteration:
        directions = per.groupby(["iteration", "source", "target", "sender"], as_index=False)[
            "weight"].median()
        return directions.groupby(["iteration", "source", "target"], as_index=False)[
            "weight"].mean()
    matrix, hosts = mean_weights(measurement, iterations), measurement.host_names
    upper = sparse.triu(matrix, k=1, format="coo")   # hosts are sorted: source < target
    out = pd.DataFrame({"source": [hosts[i] for i in upper.row],
                        "target": [hosts[j] for j in upper.col], "weight": upper.data})
    counts = per.groupby(["source", "target"])["iteration"].nunique().rename("iterations")
    return out.join(counts, on=["source", "target"])


@renamed_parameter("n", "iterations")
def edges_frame(measurement: "Measurement", iterations: int | None = None, *,
                per_iteration: bool = False) -> pd.DataFrame:
    """The edges of ``w_n`` (a probe dataset: of its measured bandwidth) as a tidy DataFrame.

    The columns are networkx's (``networkx.from_pandas_edgelist(e, edge_attr=True)``
    reads it), and every function that takes weights takes the frame back.

    Parameters
    ----------
    measurement : Measurement
    iterations : int, optional
        The first ``iterations`` iterations (all by default; ``n=``, deprecated).
    per_iteration : bool, default False
        One row per iteration and pair (``iteration, source, target, weight``,
        Eq 4.1) instead of one per pair.

    Returns
    -------
    pandas.DataFrame
        ``source, target, weight, iterations`` (``source < target``; ``weight``
        is ``w_n``; ``iterations``: in how many of those iterations the pair
        exchanged blocks), heaviest first; ``attrs["unit"]`` says what a
        weight is (``"blocks per iteration"``).  A probe dataset gives the same
        columns for its weight matrix: ``weight`` in Mbit/s (per direction the
        median of its successful TCP tests, per pair the mean of both
        directions, as :func:`tomography.model.weights.probe_weights`),
        ``iterations`` the repeats with a successful test of the pair;
        ``per_iteration`` gives one row per repeat and pair (``iteration`` =
        the repeat, ``weight`` the mean of the directions measured in it).

    Examples
    --------
    >>> from tomography.model.synthetic import planted_partition
    >>> m = planted_partition(6, 2, iterations=2, seed=0)
    >>> e = edges_frame(m)
    >>> list(e.columns), e.attrs["unit"]
    (['source', 'target', 'weight', 'iterations'], 'blocks per iteration')
    >>> bool(abs(e["weight"].sum() - m.transfers["blocks"].sum() / 2) < 1e-9)
    True
    >>> from cluster.louvain import louvain
    >>> louvain(e, seed=0).n_clusters == louvain(m, seed=0).n_clusters
    True
    """
    probe = measurement.probes is not None and not measurement.iteration_ids
    if probe:
        out = _probe_edges(measurement, iterations, per_iteration)
    else:
        ids = measurement.iteration_ids[:iterations]
        t = measurement.transfers[measurement.transfers["iteration"].isin(ids)]
        a, b = t["receiver"].astype(str), t["sender"].astype(str)
        pairs = pd.DataFrame({"iteration": t["iteration"].to_numpy(),
                              "source": np.where(a < b, a, b), "target": np.where(a < b, b, a),
                              "weight": t["blocks"].to_numpy(dtype=float)})
        out = pairs.groupby(["iteration", "source", "target"], as_index=False)["weight"].sum()
        if not per_iteration:
            out = out.groupby(["source", "target"], as_index=False).agg(
                weight=("weight", "sum"), iterations=("iteration", "nunique"))
            out["weight"] = out["weight"] / max(len(ids), 1)
    if per_iteration:
        out = out.sort_values(["iteration", "source", "target"])
    else:
        out = out.sort_values(["weight", "source", "target"], ascending=[False, True, True])
    out = out.reset_index(drop=True)
    out.attrs["unit"] = WEIGHT_UNITS["probe" if probe else "broadcast"]
    return out
