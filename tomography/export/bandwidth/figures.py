"""A planner's figures from the tests of ``tomography measure figures``: :func:`from_figures`."""

from __future__ import annotations

import os
from typing import Any, Collection, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from tomography.export.bandwidth.clusters import check_clusters
from tomography.export.bandwidth.model import BandwidthModel, Source
from tomography.model.dataset.figures import read_figures
from tomography.model.dataset.iperf3 import unreachable
from tomography.model.errors import DatasetError, TomographyError
from tomography.planning.network import SharedLink

__all__ = ["from_figures", "figure_tree", "alone_across", "ROOT", "SHARED_DROP"]

SHARED_DROP = 0.10
"""A group's flows out (in) side by side that get less than its clusters' own capacities by
more than this share of them cross a link of their own (the concurrency test's floor)."""


ROOT = "*"
"""The whole network in a tree of clusters: the node above every cluster and group."""


def _together(test: pd.DataFrame) -> float:
    """What a test's flows side by side carried: their bytes over the test's window, where
    the run recorded them, else the sum of their rates; NaN when one of them failed (the
    others then had its share).  A flow the network refused (:func:`unreachable`) never
    took a share: the others' figure stands, unless it was the only one."""
    test = test[~_refused(test)]
    if test.empty or test["bits_per_second"].isna().any():
        return float("nan")
    if {"bytes", "window_s"} <= set(test.columns) and test["bytes"].notna().all() \
            and test["window_s"].notna().all() and (test["window_s"] > 0).all():
        return float(8 * test["bytes"].sum() / test["window_s"].iloc[0])
    return float(test["bits_per_second"].sum())


def _refused(frame: pd.DataFrame) -> pd.Series:
    """The rows whose flow the network refused: their pair is dead."""
    if "error" not in frame.columns:
        return pd.Series(False, index=frame.index)
    return frame["bits_per_second"].isna() & frame["error"].map(unreachable)


def alone_across(alone: Iterable[tuple[str, str, float]], mine: Collection[str], *,
                 out: bool) -> float:
    """The most one flow alone (source cluster, destination cluster, bit/s) got across a
    node's link out of (into) the node whose clusters are ``mine``; 0 when none crossed it.
    The link carries at least that much.

    Examples
    --------
    >>> flows = [("a", "c", 9e6), ("c", "a", 7e6), ("a", "b", 5e7)]
    >>> alone_across(flows, {"a", "b"}, out=True), alone_across(flows, {"a", "b"}, out=False)
    (9000000.0, 7000000.0)
    >>> alone_across(flows, {"c"}, out=True), alone_across([], {"c"}, out=True)
    (7000000.0, 0.0)
    """
    return max((float(r) for a, b, r in alone if (a in mine) == out and (b in mine) != out),
               default=0.0)


def figure_tree(names: Sequence[str], groups: Mapping[str, Sequence[str]] | None = None
                ) -> tuple[dict[str, frozenset[str]], dict[str, list[str]]]:
    """The tree of clusters: each node's clusters, and each node's children.

    The nodes are the clusters, the groups (of two clusters or more, not all;
    a group with the clusters of another is left out) and :data:`ROOT`.

    Examples
    --------
    >>> members, children = figure_tree(["a", "b", "c"], {"g": ["a", "b"]})
    >>> sorted(members["g"]), children
    (['a', 'b'], {'g': ['a', 'b'], '*': ['c', 'g']})
    >>> figure_tree(["a"])[1]                   # one cluster: the whole network
    {'*': ['a']}
    """
    members = {c: frozenset([c]) for c in names}
    for g, cs in (groups or {}).items():
        if 1 < len(set(cs)) < len(names) and frozenset(cs) not in members.values():
            members[g] = frozenset(cs)
    members[ROOT] = frozenset(names)
    children: dict[str, list[str]] = {}
    for node, mine in members.items():
        if node != ROOT:   # the smallest node above it
            up = min((x for x, theirs in members.items() if mine < theirs or x == ROOT),
                     key=lambda x: (len(members[x]), x))
            children.setdefault(up, []).append(node)
    return members, {x: sorted(kids) for x, kids in children.items()}


def from_figures(path: str | os.PathLike[str] | tuple[pd.DataFrame, dict[str, Any]],
                 clusters: Mapping[str, Iterable[str]] | None = None) -> BandwidthModel:
    """The figures of the clusters a figures run measured: capacities, pairs, shared links.

    The tests (:mod:`measure.figures`) measure the hosts' capacity inside
    each cluster, flows side by side out of (into) each node of the tree of
    clusters (a cluster, or a group of them) towards its siblings, and one
    flow alone between the top-level nodes.  The figures follow from the
    tree: a flow from A to B crosses the links of the nodes that hold one of
    them and not the other.

    Parameters
    ----------
    path : path, or (frame, spec)
        A broadcast dataset with ``figures/``, the figures directory, or
        what :func:`tomography.model.dataset.figures.read_figures` returns.
    clusters : mapping, optional
        The clusters wanted; refused unless they are the ones measured.

    Returns
    -------
    BandwidthModel
        Every figure labelled ``"probes"`` (iperf3):

        * host out and in: a cluster's hosts, the test between two of them; a
          cluster of one host, what its flows out (in) got side by side;
        * cluster out (in): what its flows out (in) got side by side (or the
          broadcasts' trace), at least what one flow alone across its link
          got, else the sum of its hosts' capacities;
        * pair A -> B (one connection): the least of the hosts' capacities,
          of what flows side by side got out of each node on A's side of the
          path and into each on B's side, and of the flow alone between the
          two top-level nodes it joins (at least what one flow between them
          got side by side: across a slow link with a deep queue a short flow
          alone loses part of it to slow start); on the diagonal, the test inside;
        * shared links: each group whose flows out (in) together got less
          than its clusters' own capacities: one link at what they got, for
          every pair leaving (entering) the group;
        * host pairs, when every cluster is one host (figures measured
          between hosts): the cluster pairs'.

    Raises
    ------
    TomographyError
        When ``clusters`` are not the clusters measured.

    Examples
    --------
    Two sites ``w``, ``e`` of two clusters; 40 Mbit/s out of each cluster,
    10 across the sites:

    >>> rows = [(0, "host", c, f"{c}1", f"{c}2", c, c, 100) for c in ("w1", "w2", "e1", "e2")]
    >>> for t, (c, o) in enumerate((("w1", "w2"), ("w2", "w1"), ("e1", "e2"), ("e2", "e1"))):
    ...     rows += [(1 + t, "out", c, f"{c}{i}", f"{o}{i}", c, o, 20) for i in (1, 2)]
    >>> for t, (s, o) in enumerate((("w", "e"), ("e", "w"))):
    ...     rows += [(5 + t, "out", s, f"{s}{i}1", f"{o}{i}1", f"{s}{i}", f"{o}{i}", 5)
    ...              for i in (1, 2)]
    ...     rows += [(7 + t, "pair", s, f"{s}11", f"{o}11", f"{s}1", f"{o}1", 9.5)]
    >>> frame = pd.DataFrame(rows, columns=["test", "kind", "node", "src", "dst", "src_cluster",
    ...                                     "dst_cluster", "bits_per_second"])
    >>> frame["bits_per_second"] *= 1e6
    >>> spec = {"clusters": {c: [f"{c}1", f"{c}2"] for c in ("w1", "w2", "e1", "e2")},
    ...         "groups": {"w": ["w1", "w2"], "e": ["e1", "e2"]}}
    >>> m = from_figures((frame, spec))
    >>> (m.cluster_bandwidth[0] / 1e6).tolist(), (m.cluster_out / 1e6).tolist()
    ([100.0, 40.0, 9.5, 9.5], [40.0, 40.0, 40.0, 40.0])
    >>> [(x.name, x.capacity / 1e6, len(x.pairs)) for x in m.shared_links]
    [('out of e', 10.0, 4), ('into e', 10.0, 4), ('out of w', 10.0, 4), ('into w', 10.0, 4)]
    """
    frame, spec = read_figures(path) if not isinstance(path, tuple) else path
    measured = check_clusters(spec["clusters"])
    if clusters is not None and check_clusters(clusters) != measured:
        raise TomographyError(
            "the figures were measured for other clusters than the ones asked for (another "
            "hierarchy level, or a dataset analysed again): measure them again with "
            "tomography measure figures --dataset DIR --force")
    names = list(measured)
    members, children = figure_tree(names, spec.get("groups"))
    notes = []
    refused = _refused(frame)
    failed = frame[frame["bits_per_second"].isna() & ~refused]
    if len(failed):
        notes.append(f"{len(failed)} of {len(frame)} test flows failed: "
                     + "; ".join(f"{r.src} -> {r.dst}" for r in failed.head(3).itertuples()))
    dead = frame[refused & (frame["kind"] == "pair")]
    if len(dead):
        notes.append(f"{len(dead)} pair(s) the network refused, dead links: "
                     + "; ".join(f"{r.src} -> {r.dst}" for r in dead.head(3).itertuples()))
    ok = frame[frame["bits_per_second"].notna()]
    whole = frame[~frame["test"].isin(failed["test"])]   # side by side: every flow ran
    inside = {c: float(g["bits_per_second"].median())
              for c, g in ok[ok["kind"] == "host"].groupby("node")}
    # what flows side by side got out of (into) each node: the tests whose every flow left
    # (entered) it; the largest, the test that filled its link best
    leaving: dict[str, float] = {}
    entering: dict[str, float] = {}
    for _, test in whole[whole["kind"].isin(("out", "in"))].groupby("test"):
        total = _together(test)
        for node, mine in members.items():
            if node == ROOT:
                continue
            if test["src_cluster"].isin(mine).all() and not test["dst_cluster"].isin(mine).any():
                leaving[node] = max(leaving.get(node, 0.0), total)
            if test["dst_cluster"].isin(mine).all() and not test["src_cluster"].isin(mine).any():
                entering[node] = max(entering.get(node, 0.0), total)
    traced = spec.get("trace") or {"out": {}, "in": {}}
    unknown = sorted((set(traced["out"]) | set(traced["in"])) - set(members) - {ROOT})
    if unknown:
        raise DatasetError(f"figures from the trace for {unknown[0]!r}, which is no cluster "
                           "or group of these figures", field="figures.trace")
    for figures, found in ((traced["out"], leaving), (traced["in"], entering)):
        for node, figure in figures.items():
            found.setdefault(node, float(figure))
    # a node's link carries at least what one flow alone got across it (a trace that never
    # filled the link in any window reads it short)
    single = ok[ok["kind"] == "pair"]
    flows = list(zip(single["src_cluster"], single["dst_cluster"], single["bits_per_second"]))
    for node, mine in members.items():
        for found, out in ((leaving, True), (entering, False)):
            if node in found:
                found[node] = max(found[node], alone_across(flows, mine, out=out))
    top = {c: next(x for x in children[ROOT] if c in members[x]) for c in names}
    alone = {(top[a], top[b]): float(g["bits_per_second"].median()) for (a, b), g in
             single.groupby(["src_cluster", "dst_cluster"])}
    # one flow alone carries at least what a flow between the same nodes got beside others:
    # across a slow link with a deep queue, a short flow alone loses much of it to slow start
    beside = ok[ok["kind"].isin(("out", "in"))]
    for a, b, rate in zip(beside["src_cluster"], beside["dst_cluster"],
                          beside["bits_per_second"]):
        if (top[a], top[b]) in alone:
            alone[top[a], top[b]] = max(alone[top[a], top[b]], float(rate))
    alone.update({(top[a], top[b]): 0.0 for a, b in zip(dead["src_cluster"], dead["dst_cluster"])
                  if (top[a], top[b]) not in alone})
    what = "iperf3 (tomography measure figures)"
    nodes = sorted(set(traced["out"]) | set(traced["in"]))
    trace = (f"; for {', '.join(nodes)}, the broadcasts' busiest {traced.get('window_s', 1):g} s "
             "out (in) in their trace instead, a link they filled" if nodes else "")
    sources = {
        "host_capacity": Source("probes", f"{what}: the test between two hosts of the cluster; "
                                "a cluster of one host, its flows out (in) side by side"),
        "cluster_capacity": Source("probes", f"{what}: flows side by side out of (into) the "
                                   f"cluster, else the sum of its hosts' capacities{trace}"),
        "cluster_bandwidth": Source("probes", f"{what}: the least, along the tree of clusters, "
                                    "of the hosts' capacities, what flows side by side got "
                                    "out of and into each node on the path, and one flow "
                                    "alone between the top-level nodes (at least what one "
                                    f"flow between them got side by side){trace}"),
        "shared_links": Source("probes", f"{what}: flows side by side out of (into) each group "
                               "of clusters, where they got less than its clusters' own "
                               f"capacities{trace}"),
    }
    return tree_model(measured, spec.get("groups"), inside, leaving, entering, alone,
                      sources=sources, notes=notes)


def tree_model(clusters: Mapping[str, Sequence[str]], groups: Mapping[str, Sequence[str]] | None,
               inside: Mapping[str, float], leaving: Mapping[str, float],
               entering: Mapping[str, float], alone: Mapping[tuple[str, str], float],
               *, sources: Mapping[str, Source], notes: list[str]) -> BandwidthModel:
    """The model of a tree of clusters from what was measured at its nodes.

    ``inside``: the figure between two hosts of a cluster; ``leaving``
    (``entering``): what left (entered) each node of the tree at most, a
    cluster or a group; ``alone``: one flow alone between two top-level nodes.
    A pair's figure is the least of those its path crosses
    (:func:`from_figures` says how); a group whose traffic out (in) got less
    than its clusters' own capacities holds a shared link.

    Examples
    --------
    Two sites of one cluster each, 40 Mbit/s out of and into each, 10 across:

    >>> how = {f: Source("probes", "by hand") for f in ("host_capacity", "cluster_capacity",
    ...                                                 "cluster_bandwidth", "shared_links")}
    >>> m = tree_model({"a": ["a1", "a2"], "b": ["b1", "b2"]}, None, {"a": 1e8, "b": 1e8},
    ...                {"a": 4e7, "b": 4e7}, {"a": 4e7, "b": 4e7}, {("a", "b"): 1e7},
    ...                sources=how, notes=[])
    >>> (m.cluster_bandwidth / 1e6).tolist()
    [[100.0, 10.0], [40.0, 100.0]]
    """
    measured = check_clusters(clusters)
    names = list(measured)
    members, children = figure_tree(names, groups)
    index = {c: i for i, c in enumerate(names)}
    k = len(names)
    top = {c: next(x for x in children[ROOT] if c in members[x]) for c in names}
    size = {c: len(hs) for c, hs in measured.items()}
    cluster_out = np.array([leaving.get(c, inside.get(c, np.nan) * size[c]) for c in names])
    cluster_in = np.array([entering.get(c, inside.get(c, np.nan) * size[c]) for c in names])
    bandwidth = np.full((k, k), np.nan)
    for a in names:
        for b in names:
            if a == b:
                bandwidth[index[a], index[a]] = inside.get(a, np.nan)
                continue
            own = [x for x, mine in members.items() if x != ROOT and a in mine and b not in mine]
            their = [x for x, mine in members.items() if x != ROOT and b in mine and a not in mine]
            limits = [inside.get(a, np.nan), inside.get(b, np.nan),
                      *(leaving.get(x, np.nan) for x in own),
                      *(entering.get(x, np.nan) for x in their),
                      alone.get((top[a], top[b]), np.nan)]
            known = [x for x in limits if x == x]
            bandwidth[index[a], index[b]] = min(known) if known else np.nan
    hosts = sorted(h for hs in measured.values() for h in hs)
    at = {h: i for i, h in enumerate(hosts)}
    host_out, host_in = np.full(len(hosts), np.nan), np.full(len(hosts), np.nan)
    for c, hs in measured.items():
        rows = [at[h] for h in hs]
        host_out[rows] = inside.get(c, leaving.get(c, np.nan))
        host_in[rows] = inside.get(c, entering.get(c, np.nan))
    shared = []
    for group in sorted(set(members) - set(names) - {ROOT}):
        mine = [c for c in names if c in members[group]]
        others = [c for c in names if c not in members[group]]
        for label, figure, pairs, own in (
                ("out of", leaving, [(a, b) for a in mine for b in others], cluster_out),
                ("into", entering, [(b, a) for a in mine for b in others], cluster_in)):
            total = figure.get(group)
            if total is not None and total < (1 - SHARED_DROP) * sum(
                    own[index[c]] for c in mine):
                shared.append(SharedLink(f"{label} {group}", total, tuple(pairs)))
    sources = dict(sources)
    pairs = None
    if all(len(hs) == 1 for hs in measured.values()):   # hosts measured: their own figures
        order = [index[next(c for c, hs in measured.items() if hs == (h,))] for h in hosts]
        pairs = bandwidth[np.ix_(order, order)].copy()
        np.fill_diagonal(pairs, np.nan)
        sources["host_bandwidth"] = sources["cluster_bandwidth"]
    return BandwidthModel(measured, host_out=host_out, host_in=host_in,
                          cluster_out=cluster_out, cluster_in=cluster_in,
                          cluster_bandwidth=bandwidth, host_bandwidth=pairs, sources=sources,
                          shared_links=shared, notes=notes)
