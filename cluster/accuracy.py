"""Accuracy against a ground truth (docs/method.md).

* :func:`nmi`: normalized mutual information of two partitions, with the
  **arithmetic** mean of the two entropies as normalizer (the value of
  scikit-learn's ``normalized_mutual_info_score``, computed here with NumPy).
* :func:`overlapping_nmi`: the NMI of Lancichinetti, Fortunato and Kertesz
  (New J. Phys. 11, 033015, 2009, appendix B), defined for covers (clusters
  may overlap); it does not reduce to :func:`nmi` on partitions.
* :func:`hierarchy_nmi`: both, per hierarchy level, against the matching depth
  of a hierarchical truth.
* :func:`convergence`: NMI after each number of iterations ``n = 1 .. N``.
"""

from __future__ import annotations

from typing import Any, Hashable, Iterable, Sequence

import numpy as np
import pandas as pd
from tqdm import tqdm

from cluster.adjacency import SharedGraph
from cluster.averaged_edge import averaged_edge_hierarchy
from cluster.louvain import louvain
from cluster.parallel import effective_jobs, fork_map
from tomography.model.dataset import Measurement
from tomography.model.errors import ParameterError
from tomography.model.hierarchy import Hierarchy
from tomography.model.truth_labels import as_truth, labels_at_depth, truth_depth
from tomography.model.weights import mean_weights, rounds

__all__ = ["nmi", "overlapping_nmi", "hierarchy_nmi", "convergence", "partition_to_cover"]


def nmi(labels_true: Sequence[Hashable], labels_pred: Sequence[Hashable]) -> float:
    """Normalized mutual information, arithmetic-mean normalization.

    Parameters
    ----------
    labels_true, labels_pred : sequences of the same length
        Cluster label of each node.

    Returns
    -------
    float
        1 for identical partitions (up to renaming), 0 for independent ones.

    Examples
    --------
    >>> nmi([0, 0, 1, 1], [5, 5, 7, 7])
    1.0
    >>> round(nmi([0, 0, 1, 1], [0, 1, 0, 1]), 6)
    0.0
    """
    for labels in (labels_true, labels_pred):
        if isinstance(labels, dict) or np.ndim(labels) != 1:
            raise ParameterError("nmi takes two sequences of labels in one host order (for dicts "
                                 "of host -> label: [d[h] for h in hosts])")
    if len(labels_true) != len(labels_pred):
        raise ParameterError(f"labels_true and labels_pred label {len(labels_true)} and "
                             f"{len(labels_pred)} nodes")
    a, ka = _codes(labels_true)
    b, kb = _codes(labels_pred)
    if ka == kb and ka <= 1:   # neither splits the nodes: the same (trivial) partition
        return 1.0
    joint = np.bincount(a * kb + b, minlength=ka * kb).astype(float)
    joint = joint[joint > 0] / len(a)
    pa, pb = np.bincount(a) / len(a), np.bincount(b) / len(b)
    ha, hb, hab = (-(p * np.log(p)).sum() for p in (pa, pb, joint))
    mutual = max(ha + hb - hab, 0.0)
    if mutual == 0.0:
        return 0.0
    return float(min(mutual / ((ha + hb) / 2.0), 1.0))


def _codes(labels: Sequence[Hashable]) -> tuple[np.ndarray, int]:
    """Integer codes ``0 .. k-1`` of any hashable labels, and ``k``."""
    codes, uniques = pd.factorize(np.asarray(labels, dtype=object) if not isinstance(
        labels, np.ndarray) else labels)
    return codes.astype(np.int64), len(uniques)


def partition_to_cover(labels: Sequence[Hashable]) -> list[set[int]]:
    """The clusters of a partition as sets of node indices.

    Examples
    --------
    >>> partition_to_cover(["a", "b", "a"])
    [{0, 2}, {1}]
    """
    groups: dict[Hashable, set[int]] = {}
    for i, lab in enumerate(labels):
        groups.setdefault(lab, set()).add(i)
    return list(groups.values())


def _h(p: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(p > 0, -p * np.log2(np.where(p > 0, p, 1.0)), 0.0)


def _normalized_conditional_entropy(X: list[set[int]], Y: list[set[int]], n: int) -> float:
    """``H(X|Y)_norm`` of LFK 2009: mean over X_k of ``H(X_k|Y) / H(X_k)``."""
    nx_ = np.array([len(x) for x in X], dtype=float)
    ny = np.array([len(y) for y in Y], dtype=float)
    inter = np.array([[len(x & y) for y in Y] for x in X], dtype=float)
    p11 = inter / n
    p10 = (nx_[:, None] - inter) / n
    p01 = (ny[None, :] - inter) / n
    p00 = 1.0 - p11 - p10 - p01
    hx = _h(nx_ / n) + _h(1 - nx_ / n)
    hy = _h(ny / n) + _h(1 - ny / n)
    joint = _h(p11) + _h(p10) + _h(p01) + _h(p00)
    conditional = joint - hy[None, :]                      # H(X_k | Y_l)
    admissible = _h(p11) + _h(p00) > _h(p01) + _h(p10)     # LFK's constraint (B.14)
    conditional = np.where(admissible, conditional, hx[:, None])
    best = conditional.min(axis=1) if len(Y) else hx     # H(X_k | Y)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(hx > 0, best / np.where(hx > 0, hx, 1.0), 1.0)
    return float(np.mean(ratio))


def overlapping_nmi(cover_a: Iterable[Iterable[int]], cover_b: Iterable[Iterable[int]],
                    n: int | None = None) -> float:
    """The overlapping NMI of Lancichinetti, Fortunato and Kertesz (2009).

    ``N(X|Y) = 1 - (H(X|Y)_norm + H(Y|X)_norm) / 2`` where, for each cluster
    ``X_k`` seen as a binary variable over the nodes, ``H(X_k|Y)`` is the
    smallest ``H(X_k|Y_l)`` over the clusters ``Y_l`` that pass LFK's
    constraint ``h(P11) + h(P00) > h(P01) + h(P10)`` (else ``H(X_k)``), and
    ``H(X|Y)_norm`` is the mean of ``H(X_k|Y) / H(X_k)``.  Logarithms base 2.
    Two conventions the paper leaves open follow the reference implementation
    of McDaid, Greene and Hurley (``onmi``, arXiv:1110.2515), which cdlib
    also matches: identical covers score 1, and a cluster holding every node
    (``H(X_k) = 0``, no information) counts 1 in the mean.

    Parameters
    ----------
    cover_a, cover_b : iterables of iterables of int
        Clusters as collections of node indices (they may overlap).
    n : int, optional
        Number of nodes; by default the size of the union of both covers.

    Returns
    -------
    float
        1 for identical covers.

    Examples
    --------
    >>> overlapping_nmi([{0, 1, 2}, {3, 4, 5}], [{3, 4, 5}, {0, 1, 2}])
    1.0
    >>> round(overlapping_nmi([{0, 1, 2}, {3, 4, 5}], [{0, 1, 2, 3}, {4, 5}]), 4)
    0.4796
    >>> overlapping_nmi([{0, 1, 2, 3}], [{0, 1}, {2, 3}])   # everything vs a split
    0.0
    """
    A = [set(c) for c in cover_a if len(c)]
    B = [set(c) for c in cover_b if len(c)]
    universe = set().union(*A, *B) if (A or B) else set()
    n = len(universe) if n is None else n
    if n == 0 or not A or not B:
        raise ParameterError("both covers need at least one non-empty cluster")
    if universe and max(universe) >= n and all(isinstance(x, (int, np.integer)) for x in universe):
        raise ParameterError(f"node index {max(universe)} out of range for n = {n}")
    if {frozenset(c) for c in A} == {frozenset(c) for c in B}:
        return 1.0
    return float(1.0 - 0.5 * (_normalized_conditional_entropy(A, B, n)
                              + _normalized_conditional_entropy(B, A, n)))


def hierarchy_nmi(hierarchy: Hierarchy, truth: Any) -> pd.DataFrame:
    """NMI of every hierarchy level against the matching depth of a hierarchical truth.

    Level 1 (the finest) is compared with the full labels, level 2 with the
    labels cut one part shorter, and so on; levels above the truth's depth
    are compared with its top level (the thesis's mapping).  A hierarchy
    with more levels than the truth has depths shifts that mapping, so every
    level is also scored against each truth depth and the best is reported
    (``best_depth``, ``best_nmi``; the finer depth on a tie).

    Parameters
    ----------
    hierarchy : Hierarchy
    truth : mapping host -> label path (``site/cluster``), Measurement or truth file

    Returns
    -------
    pandas.DataFrame
        Columns ``level``, ``clusters``, ``truth_depth``, ``truth_clusters``,
        ``nmi``, ``overlapping_nmi``, ``best_depth``, ``best_nmi``.

    Examples
    --------
    >>> h = Hierarchy.from_partitions(["a", "b", "c", "d"], [[0, 0, 1, 2], [0, 0, 1, 1]])
    >>> t = {"a": "x/1", "b": "x/1", "c": "y/2", "d": "y/3"}
    >>> hierarchy_nmi(h, t)[["level", "truth_depth", "nmi"]].to_dict("records")
    [{'level': 1, 'truth_depth': 2, 'nmi': 1.0}, {'level': 2, 'truth_depth': 1, 'nmi': 1.0}]

    An extra, finer level shifts the mapping; ``best_depth`` still finds
    the level that is right:

    >>> h3 = Hierarchy.from_partitions(["a", "b", "c", "d"],
    ...                                [[0, 1, 2, 3], [0, 0, 1, 2], [0, 0, 1, 1]])
    >>> hierarchy_nmi(h3, t)[["level", "truth_depth", "nmi", "best_depth", "best_nmi"]].round(2)
       level  truth_depth   nmi  best_depth  best_nmi
    0      1            2  0.86           2      0.86
    1      2            1  0.80           2      1.00
    2      3            1  1.00           1      1.00
    """
    hosts = hierarchy.hosts
    truth = as_truth(truth)
    if truth is None:
        raise ParameterError("truth: give the ground truth, e.g. truth=m (the dataset's "
                             "labels)")
    missing = [h for h in hosts if h not in truth]
    if missing:
        raise ParameterError(f"truth: host {missing[0]!r} of the hierarchy has no label")
    depth = truth_depth({h: truth[h] for h in hosts})
    truths = {d: labels_at_depth(truth, d, hosts) for d in range(1, depth + 1)}
    rows = []
    for number in range(1, hierarchy.depth + 1):
        d = max(depth - number + 1, 1)
        true = truths[d]
        found = hierarchy.labels(number)
        scores = {k: nmi(labels, found) for k, labels in truths.items()}
        best = max(scores, key=lambda k: (round(scores[k], 12), k))
        rows.append({"level": number, "clusters": len(hierarchy.level(number)),
                     "truth_depth": d, "truth_clusters": len(set(true)),
                     "nmi": scores[d],
                     "overlapping_nmi": overlapping_nmi(partition_to_cover(true),
                                                        partition_to_cover(found), len(hosts)),
                     "best_depth": best, "best_nmi": scores[best]})
    return pd.DataFrame(rows)


def convergence(measurement: Measurement, truth: Any, *,
                iterations: int | None = None, engine: str = "igraph",
                hierarchy: bool = True, seed: int = 0, progress: bool = False,
                n_jobs: int | None = None, resolution: float = 1.0, restarts: int = 1,
                **options) -> pd.DataFrame:
    """NMI after each number of iterations ``n = 1 .. N`` (Figs 5.13, 5.21).

    For each ``n``, ``w_n`` (Eq 4.2) is clustered flat (Louvain, best level)
    and compared with the full truth labels; with ``hierarchy`` the
    averaged-edge hierarchy is built too and each level compared as in
    :func:`hierarchy_nmi`.

    Parameters
    ----------
    measurement : Measurement
    truth : mapping host -> label path, Measurement, "labels" (the dataset's) or truth file
    iterations : int, optional
        Largest ``n``; all iterations by default.
    engine : str, default "igraph"
    hierarchy : bool, default True
    seed : int, default 0
        The same seed for every ``n``, so that rows differ only by data.
    progress : bool, default False
        Show a progress bar (on a terminal) over ``n``.
    n_jobs : int or None
        Processes over ``n`` (:func:`cluster.parallel.effective_jobs`: by
        default every core on large datasets); the table does not depend on it.
    resolution, restarts : float, int
        Louvain's, for the flat clustering and the hierarchy.
    **options
        Passed to :func:`cluster.averaged_edge.averaged_edge_hierarchy`
        (``linkage``, ``start``, ...).

    Returns
    -------
    pandas.DataFrame
        One row per ``n``: ``n``, ``clusters``, ``modularity``, ``nmi``,
        ``overlapping_nmi`` and, with ``hierarchy``, ``levels`` and
        ``level_<k>_nmi`` per level.

    Examples
    --------
    >>> from tomography.model.synthetic import planted_partition
    >>> m = planted_partition(32, 2, iterations=3, seed=0)
    >>> convergence(m, m.labels, hierarchy=False)["nmi"].tolist()
    [1.0, 1.0, 1.0]
    """
    total = rounds(measurement)  # iterations, or a probe dataset's repeats
    last = total if iterations is None else min(iterations, total)
    hosts = measurement.host_names
    truth = as_truth(truth, measurement)
    if not truth:
        raise ParameterError("truth: the dataset has no labels; give the ground truth (a "
                             "mapping host -> label path, or a truth file)")
    flat_truth = labels_at_depth(truth, truth_depth(truth), hosts)

    def row_of(n: int) -> dict[str, float]:
        W = SharedGraph(mean_weights(measurement, n), hosts)   # one igraph graph per n
        flat = louvain(W, engine=engine, seed=seed, resolution=resolution, restarts=restarts)
        row = {"n": n, "clusters": flat.n_clusters, "modularity": flat.modularity,
               "nmi": nmi(flat_truth, flat.labels),
               "overlapping_nmi": overlapping_nmi(partition_to_cover(flat_truth),
                                                  partition_to_cover(flat.labels), len(hosts))}
        if hierarchy:
            h = averaged_edge_hierarchy(W, hosts, engine=engine, seed=seed,
                                        resolution=resolution, restarts=restarts, **options)
            levels = hierarchy_nmi(h, truth)
            row["levels"] = h.depth
            row.update({f"level_{int(r.level)}_nmi": r.nmi for r in levels.itertuples()})
        return row

    steps = list(range(1, last + 1))
    jobs = effective_jobs(n_jobs, len(steps), len(measurement.transfers))
    with tqdm(total=len(steps), desc="convergence", unit="n", disable=not progress or None,
              leave=False) as bar:
        rows, _ = fork_map(row_of, steps, jobs, done=lambda _row: bar.update())
    return pd.DataFrame(rows)
