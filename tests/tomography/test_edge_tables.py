"""One edge-table scheme: every edge list the toolkit gives goes back into every function
that takes weights, and so do networkx's."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib
import networkx as nx
import numpy as np
import pandas as pd
import pytest

from cluster.averaged_edge import averaged_edge_hierarchy
from cluster.louvain import louvain
from cluster.spanning_tree import cluster_tree
from tomography.model.interop import as_weights, from_pandas, to_networkx

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def data(small_planted) -> dict:
    m, path = small_planted
    W, hosts = m.weight_matrix()
    return {"m": m, "path": path, "W": W.toarray(), "hosts": hosts}


def _outputs(d: dict) -> dict:
    """Every form of the dataset's w_n the toolkit or networkx hands a user."""
    m = d["m"]
    return {"dataset": m, "directory": d["path"], "directory (str)": str(d["path"]),
            "m.edges()": m.edges(), "m.edges(per_iteration=True)": m.edges(per_iteration=True),
            "to_networkx(m)": to_networkx(m),
            "networkx.to_pandas_edgelist": nx.to_pandas_edgelist(to_networkx(m)),
            "square DataFrame": pd.DataFrame(d["W"], index=d["hosts"], columns=d["hosts"]),
            "older src/dst/w_n": m.edges().rename(columns={"source": "src", "target": "dst",
                                                           "weight": "w_n"}),
            "EdgeWeights": as_weights(m)}


INPUTS = {
    "as_weights": lambda x: as_weights(x).matrix.toarray(),
    "louvain": lambda x: louvain(x, seed=0).labels,
    "averaged_edge_hierarchy": lambda x: averaged_edge_hierarchy(x, seed=0).labels(1),
    "cluster_tree": lambda x: len(cluster_tree(x, seed=0).clusters),
    "to_networkx": lambda x: nx.to_numpy_array(to_networkx(x), nodelist=sorted(to_networkx(x))),
}


@pytest.mark.parametrize("function", sorted(INPUTS))
def test_each_output_goes_into_each_input(data: dict, function: str) -> None:
    results = {name: INPUTS[function](x) for name, x in _outputs(data).items()}
    expected = results["dataset"]
    for name, got in results.items():
        if isinstance(expected, np.ndarray):
            assert np.allclose(got, expected), name
        else:
            assert got == expected or list(got) == list(expected), name


def test_the_toolkits_edge_lists_share_networkx_columns_and_state_their_unit(data) -> None:
    m = data["m"]
    tree = cluster_tree(m, seed=0)
    for frame in (m.edges(), m.edges(per_iteration=True), tree.edges_frame()):
        assert {"source", "target", "weight"} <= set(frame.columns)
        assert frame.attrs["unit"] == "blocks per iteration"
        nx.from_pandas_edgelist(frame, edge_attr=True)      # networkx reads it as it is
    assert from_pandas(m.edges()).unit == "blocks per iteration"
    assert from_pandas(m.edges(per_iteration=True)).iteration_weights().n_iterations == 3
    # a tree's edges are a graph of clusters: they go in as weights too
    assert as_weights(tree.edges_frame()).hosts == sorted(c.id for c in tree.clusters)


def test_the_plots_take_every_form(data) -> None:
    import visualize

    for name, x in _outputs(data).items():
        fig = visualize.plot_heatmap(x)
        assert sorted(fig.tomography_info["order"]) == data["hosts"], name
        matplotlib.pyplot.close(fig)


def test_an_edge_list_without_known_columns_says_which_to_name(data) -> None:
    frame = data["m"].edges().rename(columns={"source": "from"})
    with pytest.raises(Exception, match="no source column: looked for 'source' or 'src'.*"
                                        "give source=COLUMN"):
        louvain(frame)
    assert louvain(frame.rename(columns={"from": "a"}).pipe(
        lambda f: from_pandas(f, source="a")), seed=0).n_clusters >= 1


def test_a_path_that_is_no_dataset_is_named(tmp_path: Path) -> None:
    with pytest.raises(Exception, match=str(tmp_path / "nothing")):
        louvain(tmp_path / "nothing")


@pytest.mark.parametrize("writer", ["graphml", "gexf"])
def test_the_graphs_networkx_writes_as_they_are(data, tmp_path: Path, writer: str) -> None:
    from tomography.model.hierarchy import Hierarchy

    m = data["m"]
    a = __import__("tomography").analyze(m, resamples=20)
    write = getattr(nx, f"write_{writer}")
    read = getattr(nx, f"read_{writer}")
    for name, graph in (("hierarchy", a.hierarchy.to_networkx()),
                        ("tree", a.tree.to_networkx()), ("hosts", to_networkx(m))):
        write(graph, tmp_path / f"{name}.{writer}")
        back = read(tmp_path / f"{name}.{writer}")
        assert sorted(map(str, back.nodes)) == sorted(map(str, graph.nodes)), name
    if writer == "graphml":   # the hierarchy comes back from its GraphML file
        back = Hierarchy.from_networkx(nx.read_graphml(tmp_path / "hierarchy.graphml"))
        assert [len(level) for level in back.levels] == \
            [len(level) for level in a.hierarchy.levels]
        assert back.labels(1).tolist() == a.hierarchy.labels(1).tolist()
        assert back.params == json.loads(json.dumps(a.hierarchy.params, default=str))
