"""Topology as a tree: a known tree-shaped network, agreement of MST implementations."""

from __future__ import annotations

import numpy as np
import pytest

from cluster.spanning_tree import cluster_tree, maximum_spanning_tree
from tomography.model.hierarchy import ClusterTree


def tree_network(seed: int = 0) -> tuple[np.ndarray, list[str]]:
    """Four 12-host clusters A, B, C, D on a physical tree B-A-C, A-D.

    Links A-B 0.2, A-C 0.12, A-D 0.08 (inside a cluster 1); the weight between
    two clusters is the product of the links on their path, as each shared
    link on the way takes its toll, so the maximum spanning tree of the
    clusters must be exactly the physical links.
    """
    link = {("A", "B"): 0.2, ("A", "C"): 0.12, ("A", "D"): 0.08}
    names = "ABCD"
    bw = np.eye(4)
    for (x, y), cap in link.items():
        bw[names.index(x), names.index(y)] = bw[names.index(y), names.index(x)] = cap
    for x, y in [("B", "C"), ("B", "D"), ("C", "D")]:
        i, j = names.index(x), names.index(y)
        bw[i, j] = bw[j, i] = link[("A", x)] * link[("A", y)]
    lab = np.repeat(np.arange(4), 12)
    rng = np.random.default_rng(seed)
    w = bw[lab][:, lab] * rng.lognormal(0, 0.2, (48, 48)) * 100
    w = np.triu(w, 1)
    hosts = [f"{names[c]}{i:02d}" for c, i in zip(lab, np.tile(np.arange(12), 4))]
    return w + w.T, hosts


def test_tree_of_a_known_tree_shaped_network() -> None:
    w, hosts = tree_network()
    t = cluster_tree(w, hosts, seed=0)
    assert t.is_connected and len(t.clusters) == 4
    name = {c.id: c.hosts[0][0] for c in t.clusters}
    assert all(len(set(h[0] for h in c.hosts)) == 1 for c in t.clusters)
    edges = {frozenset((name[e.source], name[e.target])) for e in t.edges}
    assert edges == {frozenset("AB"), frozenset("AC"), frozenset("AD")}
    weights = [e.weight for e in t.edges]
    assert weights == sorted(weights, reverse=True)


def test_mst_implementations_agree_on_total_weight() -> None:
    rng = np.random.default_rng(3)
    w = rng.integers(0, 50, size=(60, 60)).astype(float)
    w = np.triu(w, 1)
    w = w + w.T
    totals = {m: sum(e[2] for e in maximum_spanning_tree(w, method=m))
              for m in ("scipy", "igraph", "networkx")}
    assert totals["scipy"] == pytest.approx(totals["igraph"]) == pytest.approx(totals["networkx"])
    assert len(maximum_spanning_tree(w)) == 59


def test_forest_when_disconnected() -> None:
    w = np.zeros((4, 4))
    w[0, 1] = w[1, 0] = 3.0
    w[2, 3] = w[3, 2] = 2.0
    t = cluster_tree(w, ["a", "b", "c", "d"], self_loop=100.0, seed=0)
    assert not t.is_connected and len(t.edges) == 2


def test_tree_json_round_trip() -> None:
    w, hosts = tree_network(1)
    t = cluster_tree(w, hosts, seed=0)
    back = ClusterTree.from_json(t.to_json())
    assert back.to_dict() == t.to_dict()


def test_the_unit_of_measured_weights_reaches_the_tree_and_its_graphs() -> None:
    import pandas as pd

    from cluster.averaged_edge import averaged_edge_hierarchy
    from cluster.spanning_tree import hierarchy_tree
    from tomography.model.interop import from_pandas

    df = pd.DataFrame({"src": list("aabccda"), "dst": list("bccdeee"),
                       "mbps": [90, 10, 80, 85, 12, 70, 5.0]})
    w = from_pandas(df, weight="mbps", unit="Mbit/s")
    h = averaged_edge_hierarchy(w, seed=0)
    t = hierarchy_tree(w, h)
    assert h.params["weight_unit"] == "Mbit/s" and t.weight_caption.endswith("in Mbit/s")
    assert h.to_networkx().graph["unit"] == t.to_networkx().graph["unit"] == "Mbit/s"
    plain = averaged_edge_hierarchy(w.matrix.toarray(), seed=0)      # no unit given: none claimed
    assert "weight_unit" not in plain.params
    assert hierarchy_tree(w.matrix.toarray(), plain).weight_caption.endswith("blocks per iteration")


def test_default_names_keep_the_rows_order_and_a_dataframe_names_its_rows() -> None:
    import pandas as pd

    from cluster.averaged_edge import averaged_edge_hierarchy
    from cluster.spanning_tree import hierarchy_tree

    rng = np.random.default_rng(0)
    n = 12                                  # two groups of 6; names h00..h11 sort as the rows
    A = np.where(np.equal.outer(np.arange(n) < 6, np.arange(n) < 6), 50.0, 2.0)
    A += rng.random((n, n)); A = (A + A.T) / 2; np.fill_diagonal(A, 0)
    h = averaged_edge_hierarchy(A, seed=0)
    assert h.hosts == [f"h{i:02d}" for i in range(n)] and h.labels(1).tolist() == [0] * 6 + [1] * 6
    strong = hierarchy_tree(A, h, 0).edges           # a tree of the hosts
    assert sum(e.weight for e in strong) > 10 * 50   # joined along the heavy pairs
    perm = rng.permutation(n)
    names = [f"x{i}" for i in perm]
    df = pd.DataFrame(A[np.ix_(perm, perm)], index=names, columns=names)
    hd = averaged_edge_hierarchy(df, seed=0)
    assert sorted(hd.hosts) == sorted(names)
    assert hierarchy_tree(df, hd).total_weight == pytest.approx(
        hierarchy_tree(A, h).total_weight)          # same tree whatever the row order
    hp = averaged_edge_hierarchy(A[np.ix_(perm, perm)], names, seed=0)
    assert hierarchy_tree(A[np.ix_(perm, perm)], hp).total_weight == pytest.approx(
        hierarchy_tree(A, h).total_weight)          # unsorted names, unnamed matrix: h.rows
    with pytest.raises(ValueError, match="hosts= names the rows of a graph"):
        averaged_edge_hierarchy(df, names[::-1])
