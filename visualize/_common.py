"""Helpers shared by the plot modules that need no matplotlib: clusters, truth labels,
confidences."""

from __future__ import annotations

import math
import os
import re
from collections import Counter
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from tomography.model.errors import ParameterError

__all__ = ["natural_key", "cluster_map", "truth_summary", "truth_labels", "dataset_of",
           "analysed", "group_order",
           "weight_input"]


def natural_key(text: Any) -> tuple:
    """Sort key that orders ``C2`` before ``C10``.

    Examples
    --------
    >>> sorted(["L1C10", "L1C2", "b", "a"], key=natural_key)
    ['L1C2', 'L1C10', 'a', 'b']
    """
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part)
                 for part in re.split(r"(\d+)", str(text)) if part != "")


def cluster_map(clusters: Any, hosts: Sequence[str]) -> dict[str, str] | None:
    """Cluster name of each host, from any of the shapes a caller may hold.

    Parameters
    ----------
    clusters : None, mapping, Hierarchy, list of Cluster, FlatClustering or sequence
        A mapping host -> cluster; a :class:`~tomography.model.hierarchy.Hierarchy`
        (its level 1); one level of it (``h.level(2)``, a list of
        :class:`~tomography.model.hierarchy.Cluster`); a
        :class:`~cluster.louvain.FlatClustering` or a sequence of labels in
        the order of ``hosts``.
    hosts : sequence of str
        Every host that needs a cluster.

    Returns
    -------
    dict or None
        Host -> cluster name (str); None when ``clusters`` is None.

    Raises
    ------
    ValueError
        When a host has no cluster, or a label sequence has the wrong length.

    Examples
    --------
    >>> from tomography.model.hierarchy import Hierarchy
    >>> h = Hierarchy.from_partitions(["a", "b", "c"], [[0, 0, 1]])
    >>> cluster_map(h, ["a", "b", "c"])
    {'a': 'L1C0', 'b': 'L1C0', 'c': 'L1C1'}
    >>> cluster_map([7, 7, 8], ["a", "b", "c"])
    {'a': '7', 'b': '7', 'c': '8'}
    """
    if clusters is None:
        return None
    if _is_analysis(clusters):   # an Analysis: its hierarchy
        clusters = clusters.hierarchy
    if hasattr(clusters, "levels") and hasattr(clusters, "level"):  # a Hierarchy
        clusters = clusters.level(1)
    if isinstance(clusters, Mapping):
        found = {str(h): str(c) for h, c in clusters.items()}
    elif isinstance(clusters, (list, tuple)) and clusters and hasattr(clusters[0], "hosts"):
        found = {h: str(c.id) for c in clusters for h in c.hosts}
    else:
        labels = np.asarray(getattr(clusters, "labels", clusters))
        if labels.ndim != 1 or len(labels) != len(hosts):
            raise ParameterError(f"clusters: {len(labels)} labels for {len(hosts)} hosts "
                                 "(give a mapping host -> cluster, or one label per host in "
                                 "sorted host order)")
        found = {h: str(c) for h, c in zip(hosts, labels.tolist())}
    missing = [h for h in hosts if h not in found]
    if missing:
        named = ("; the matrix's rows are named h00, h01, ...: give hosts= to name them"
                 if str(missing[0]).startswith("h0") and all(h not in found for h in hosts)
                 else "")
        raise ParameterError(f"clusters: no cluster for host {missing[0]!r} "
                             f"({len(missing)} of {len(hosts)} hosts missing){named}")
    return {h: found[h] for h in hosts}


def truth_summary(hosts: Iterable[str], truth: Mapping[str, str] | None) -> str:
    """The ground truth of a group of hosts in a few characters.

    The shared label; else the shared prefix (``east/*``); else the majority
    top-level label and its share (``mixed: 3/5 east``).  Empty without a truth.

    Examples
    --------
    >>> t = {"a": "x/1", "b": "x/1", "c": "x/2", "d": "y/3"}
    >>> truth_summary("ab", t), truth_summary("abc", t), truth_summary("abcd", t)
    ('x/1', 'x/*', 'mixed: 3/4 x')
    """
    if not truth:
        return ""
    paths = [str(truth.get(h, "?")).split("/") for h in hosts]
    if not paths:
        return ""
    if all(p == paths[0] for p in paths):
        return "/".join(paths[0])
    common: list[str] = []
    for parts in zip(*paths):
        if len(set(parts)) > 1:
            break
        common.append(parts[0])
    if common:
        return "/".join(common) + "/*"
    label, count = Counter(p[0] for p in paths).most_common(1)[0]
    return f"mixed: {count}/{len(paths)} {label}"


def group_order(hosts: Sequence[str], *keys: Mapping[str, str] | None
                ) -> tuple[list[str], list[tuple[str, int, int]]]:
    """Hosts sorted by the first key (then the next ones, then name), and the groups.

    Parameters
    ----------
    hosts : sequence of str
    *keys : mappings host -> name, or None (skipped)
        The first one defines the groups.

    Returns
    -------
    order : list of str
        The hosts, grouped.
    groups : list of (name, start, stop)
        Each group of the first key and its slice of ``order``; one group
        ``("", 0, len(hosts))`` without keys.

    Examples
    --------
    >>> group_order(["a", "b", "c"], {"a": "C2", "b": "C10", "c": "C2"})
    (['a', 'c', 'b'], [('C2', 0, 2), ('C10', 2, 3)])
    """
    keys = tuple(k for k in keys if k)
    order = sorted(hosts, key=lambda h: tuple(natural_key(k.get(h, "")) for k in keys)
                   + (natural_key(h),))
    if not keys:
        return order, [("", 0, len(order))]
    groups: list[tuple[str, int, int]] = []
    for i, h in enumerate(order):
        name = keys[0].get(h, "")
        if groups and groups[-1][0] == name:
            groups[-1] = (name, groups[-1][1], i + 1)
        else:
            groups.append((name, i, i + 1))
    return order, groups


def weight_input(data: Any, hosts: Sequence[str] | None, *, weight: str | None,
                 iterations: int | None, truth: Mapping[str, str] | None
                 ) -> tuple[Any, dict[str, str] | None]:
    """The weights of any input the analysis takes, and the truth to show with them.

    ``data`` as :func:`tomography.model.interop.as_weights` takes it (a dataset, a
    matrix with ``hosts``, a DataFrame, a networkx graph, EdgeWeights).  The
    truth is ``truth`` when given, else the dataset's labels, else a graph's
    ``label`` node attributes, else None.

    Examples
    --------
    >>> import networkx as nx
    >>> g = nx.Graph([("a", "b", {"weight": 2.0})])
    >>> g.nodes["a"]["label"] = "x"
    >>> w, truth = weight_input(g, None, weight="weight", iterations=None, truth=None)
    >>> w.hosts, truth
    (['a', 'b'], {'a': 'x'})
    """
    from tomography.model.interop import as_weights

    if isinstance(data, (str, os.PathLike)) or _is_analysis(data):
        data = dataset_of(data, "a figure")
    w = as_weights(data, None if hosts is None else list(hosts), weight=weight,
                   iterations=iterations)
    truth = truth_labels(truth, data if hasattr(data, "transfers") else None)
    if truth is None:
        if hasattr(data, "transfers") and hasattr(data, "labels"):
            truth = data.labels
        elif hasattr(data, "nodes") and callable(getattr(data, "nodes", None)):
            truth = {str(n): str(d["label"]) for n, d in data.nodes(data=True) if "label" in d}
    return w, ({str(h): str(v) for h, v in truth.items()} or None) if truth else None


def truth_labels(truth: Any, dataset: Any = None) -> dict[str, str] | None:
    """The ground truth a text or figure was given, as host -> label
    (:func:`tomography.model.truth_labels.as_truth`: a mapping, a dataset, ``"labels"``
    with a dataset at hand, a truth file, or None).

    Examples
    --------
    >>> truth_labels({"a": "x"}), truth_labels(None)
    ({'a': 'x'}, None)
    >>> truth_labels(["x", "y"])
    Traceback (most recent call last):
    ...
    tomography.model.errors.ParameterError: truth= takes a mapping or pandas Series host -> label path, a Measurement (its labels), 'labels' (the labels of the dataset at hand) or a CSV file with columns host,label; got list
    """
    from tomography.model.truth_labels import as_truth

    labels = as_truth(truth, dataset)
    return labels or None


def _is_analysis(data: Any) -> bool:
    """An :class:`~tomography.pipeline.Analysis` (known by its parts: the views do not import
    the pipeline)."""
    return hasattr(data, "measurement") and hasattr(data, "hierarchy") and hasattr(data, "flat")


def dataset_of(data: Any, function: str) -> Any:
    """A dataset given by its directory, read; a Measurement as it is; anything else refused,
    naming ``function`` and what it takes.

    Examples
    --------
    >>> dataset_of(3, "plot_edge_weight")
    Traceback (most recent call last):
    ...
    tomography.model.errors.ParameterError: plot_edge_weight takes a dataset: a Measurement or its directory (as analyze() takes), got int
    """
    if isinstance(data, (str, os.PathLike)):
        from tomography.model.dataset import read_measurement

        return read_measurement(data)
    if _is_analysis(data):
        return data.measurement
    if hasattr(data, "transfers") and hasattr(data, "host_names"):
        return data
    raise ParameterError(f"{function} takes a dataset: a Measurement or its directory (as "
                         f"analyze() takes), got {type(data).__name__}")


def analysed(data: Any, kind: type, attribute: str, function: str, truth: Any = None
             ) -> tuple[Any, Any]:
    """What a figure of a ``kind`` (Hierarchy, ClusterTree) draws: that, or an Analysis's
    ``attribute`` (with its truth when ``truth`` is None).  A dataset is refused with how
    to analyse it: the views do not run the clustering themselves.

    Returns
    -------
    (object, truth)
    """
    if isinstance(data, kind):
        return data, truth
    if _is_analysis(data):
        if truth is None and getattr(data, "truth_source", None) is not None:
            truth = data.truth
        return getattr(data, attribute), truth_labels(truth, data.measurement)
    dataset = isinstance(data, (str, os.PathLike)) or hasattr(data, "transfers")
    raise ParameterError(f"{function} takes a {kind.__name__} or an Analysis, got "
                         f"{type(data).__name__}" + (
                             f": draw a dataset's with {function}(tomography.analyze(data))"
                             if dataset else ""))


def below(confidence: float) -> float:
    """A confidence rounded down to two decimals, for a level below the support threshold:
    0.796875 reads 0.79, never the 0.80 it needs.

    Examples
    --------
    >>> below(0.796875), below(0.5)
    (0.79, 0.5)
    """
    return math.floor(confidence * 100 + 1e-9) / 100
