"""The Python API a notebook user meets: the same inputs, the same keywords, no silent surprises."""

from __future__ import annotations

import inspect
import warnings

import networkx as nx
import numpy as np
import pandas as pd
import pytest

import visualize
from cluster.averaged_edge import averaged_edge_hierarchy
from cluster.confidence import IterationSampler, as_sampler, tree_confidence, with_support
from cluster.louvain import louvain
from cluster.spanning_tree import cluster_tree, hierarchy_tree
from tomography.model.errors import GraphError, TomographyError
from tomography.model.interop import EdgeWeights, as_weights, to_networkx, weight_graph
from tomography.model.synthetic import planted_hierarchy, planted_partition
from tomography.model.weights import mean_weights


@pytest.fixture(scope="module")
def planted():
    return planted_hierarchy((2, 3), 6, iterations=4, seed=2)


@pytest.fixture(scope="module")
def probes():
    """A probe dataset: three hosts, two repeats, one failed test, one UDP test."""
    m = planted_partition(3, 1, iterations=1, seed=0)
    m.transfers, m.iterations = m.transfers.iloc[:0], m.iterations.iloc[:0]
    m.probes = pd.DataFrame({
        "src": ["h000", "h001", "h000", "h000", "h002", "h001"],
        "dst": ["h001", "h000", "h002", "h001", "h000", "h002"],
        "bits_per_second": [9e8, 7e8, 1e8, 8e8, 5e7, None],
        "repeat": [0, 0, 0, 1, 0, 0], "error": ["", "", "", "", "", "refused"],
        "protocol": ["tcp", "tcp", "tcp", "tcp", "udp", "tcp"]})
    return m


def test_edges_of_a_probe_dataset_are_its_weight_matrix(probes):
    edges = probes.edges()
    W, hosts = probes.weight_matrix()
    assert len(edges) == W.nnz // 2 == 2
    for row in edges.itertuples():
        assert row.weight == pytest.approx(W[hosts.index(row.source), hosts.index(row.target)])
    assert edges.attrs["unit"] == "Mbit/s"
    assert edges.set_index(["source", "target"]).loc[("h000", "h001"), "iterations"] == 2
    # the UDP test (h002 -> h000) changes nothing: h000-h002 is its TCP test alone
    assert edges.set_index(["source", "target"]).loc[("h000", "h002"), "weight"] == 100.0
    per = probes.edges(per_iteration=True)
    assert per[per["iteration"] == 1]["weight"].tolist() == [800.0]


def _bandwidth_graph(planted, attribute: str) -> nx.Graph:
    W, hosts = mean_weights(planted).toarray(), planted.host_names
    g = nx.Graph()
    g.add_nodes_from(hosts)
    g.add_edges_from((hosts[i], hosts[j], {attribute: W[i, j]})
                     for i in range(len(hosts)) for j in range(i + 1, len(hosts)) if W[i, j])
    return g


def test_a_graph_whose_weight_is_named_otherwise_needs_weight_and_is_never_read_as_ones(planted):
    g = _bandwidth_graph(planted, "bw")
    expected = averaged_edge_hierarchy(mean_weights(planted), planted.host_names, seed=1)
    assert averaged_edge_hierarchy(g, weight="bw", seed=1).levels == expected.levels
    for call in (lambda: averaged_edge_hierarchy(g, seed=1), lambda: louvain(g),
                 lambda: cluster_tree(g), lambda: hierarchy_tree(g, expected),
                 lambda: as_weights(g), lambda: weight_graph(g)):
        with pytest.raises(GraphError, match="carry 'bw': give weight='bw'"):
            call()
    assert louvain(g, weight="bw", seed=1).labels.tolist() == \
        louvain(mean_weights(planted), seed=1).labels.tolist()
    assert cluster_tree(g, weight="bw", seed=1).clusters
    assert hierarchy_tree(g, expected, weight="bw").edges
    # unweighted on purpose: every edge 1, as networkx reads weight=None
    ones = as_weights(g, weight=None).matrix
    assert set(ones.data.tolist()) == {1.0}
    g.edges["h000", "h001"].pop("bw")
    with pytest.raises(GraphError, match="have no 'bw' attribute, e.g. 'h000'-'h001'"):
        louvain(g, weight="bw")


def test_weight_graph_and_to_networkx_take_the_same_inputs_and_give_the_same_graph(planted):
    W, hosts = mean_weights(planted), planted.host_names
    frame = pd.DataFrame(W.toarray(), index=hosts, columns=hosts)
    reference = weight_graph(planted)
    assert reference.graph["unit"] == "blocks per iteration"
    for data, kwargs in ((planted, {}), (W, {"hosts": hosts}), (W.toarray(), {"hosts": hosts}),
                         (frame, {}), (EdgeWeights(W, hosts), {}), (reference, {})):
        for function in (weight_graph, to_networkx):
            g = function(data, **kwargs)
            assert list(g.nodes) == hosts
            assert {(u, v): d["weight"] for u, v, d in g.edges(data=True)} == pytest.approx(
                {(u, v): d["weight"] for u, v, d in reference.edges(data=True)})
    assert weight_graph is to_networkx   # one function, two names
    # the old positional forms of both still work, told apart by what they are
    with pytest.warns(DeprecationWarning, match=r"passing hosts=\.\.\. positionally"):
        assert list(to_networkx(W, hosts).nodes) == hosts
    with pytest.warns(DeprecationWarning, match=r"passing hosts=\.\.\. positionally"):
        assert list(weight_graph(W, hosts).nodes) == hosts
    with pytest.warns(DeprecationWarning, match=r"passing iterations=\.\.\. positionally"):
        assert weight_graph(planted, 1).number_of_edges() > 0
    with pytest.raises(TomographyError, match="iterations= selects a dataset's iterations"):
        weight_graph(W, hosts=hosts, iterations=1)


def _keyword_only(function) -> set[str]:
    return {name for name, p in inspect.signature(function).parameters.items()
            if p.kind is inspect.Parameter.KEYWORD_ONLY}


def test_the_hasse_diagram_in_text_and_as_a_figure_take_the_same_keywords(planted):
    h = averaged_edge_hierarchy(mean_weights(planted), planted.host_names, seed=1)
    truth = planted.labels
    assert "truth" in _keyword_only(visualize.hasse_text) & _keyword_only(visualize.plot_hasse)
    for text in (visualize.hasse_text, visualize.hierarchy_text, visualize.cluster_tree_text,
                 visualize.plot_hasse, visualize.plot_tree):
        first, *rest = inspect.signature(text).parameters.values()
        assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in rest), text.__name__
    assert "truth:" in visualize.hasse_text(h, truth=truth)
    with pytest.warns(DeprecationWarning, match=r"give truth=\.\.\. by keyword"):
        assert visualize.hasse_text(h, truth) == visualize.hasse_text(h, truth=truth)
    with pytest.warns(DeprecationWarning, match=r"plot_hasse\(labels=\.\.\.\) is deprecated"):
        old = visualize.plot_hasse(h, labels=truth).tomography_info["texts"]
    assert old == visualize.plot_hasse(h, truth=truth).tomography_info["texts"]


@pytest.mark.slow
def test_heatmap_and_layout_take_what_the_analysis_takes(planted, probes):
    W, hosts = mean_weights(planted), planted.host_names
    frame = pd.DataFrame(W.toarray(), index=hosts, columns=hosts)
    graph = weight_graph(planted)
    inputs = [(W, {"hosts": hosts}), (frame, {}), (graph, {}), (EdgeWeights(W, hosts), {})]
    w_n = visualize.plot_heatmap(planted, weights="w").tomography_info
    for data, kwargs in inputs:
        info = visualize.plot_heatmap(data, **kwargs).tomography_info
        assert info["shape"] == w_n["shape"]
        assert info["total"] == pytest.approx(w_n["total"])
        assert info["order"] == w_n["order"] or data is not graph
        layout = visualize.plot_layout(data, seed=0, **kwargs).tomography_info
        assert layout["nodes"] == len(hosts)
    # a graph's label attributes are its truth, as a dataset's labels are
    assert visualize.plot_heatmap(graph).tomography_info["groups"] == w_n["groups"]
    # a probe dataset: its bandwidth matrix, in Mbit/s
    info = visualize.plot_heatmap(probes).tomography_info
    assert info["total"] == pytest.approx(2 * (775.0 + 100.0))
    assert "Mbit/s" in info["label"]
    assert visualize.plot_layout(probes).tomography_info["nodes"] == 3
    import matplotlib.pyplot as plt
    plt.close("all")


def test_a_tree_and_a_hierarchy_get_their_confidence_in_one_call(planted):
    W, hosts = mean_weights(planted), planted.host_names
    h = averaged_edge_hierarchy(W, hosts, seed=1)
    supported = with_support(h, planted, seed=0)
    assert all(c is not None for c in supported.confidence)
    tree = tree_confidence(hierarchy_tree(W, supported), planted, seed=0)
    internal = tree_confidence(hierarchy_tree(W, supported),
                               IterationSampler.from_measurement(planted), seed=0)
    assert [e.confidence for e in tree.edges] == [e.confidence for e in internal.edges]
    assert all(0 <= e.confidence <= 1 for e in tree.edges)
    rounds = pd.DataFrame({"src": ["a", "a", "b", "a", "a", "b"], "dst": ["b", "c", "c"] * 2,
                           "weight": [9.0, 1.0, 1.0, 8.0, 2.0, 1.0], "round": [0] * 3 + [1] * 3})
    from tomography.model.interop import from_pandas
    assert as_sampler(from_pandas(rounds, round="round")).n_iterations == 2
    with pytest.raises(TomographyError, match="fewer than two rounds"):
        as_sampler(from_pandas(rounds[rounds["round"] == 0]))


def test_a_tree_offers_its_edge_list_and_its_membership_by_name(planted):
    W, hosts = mean_weights(planted), planted.host_names
    tree = cluster_tree(W, hosts, seed=1)
    edges = tree.edges_frame()
    assert edges.columns.tolist() == ["source", "target", "weight", "unit", "confidence"]
    assert len(edges) == len(tree.edges) and edges["weight"].is_monotonic_decreasing
    g = nx.from_pandas_edgelist(edges, "source", "target", "weight")
    assert nx.is_tree(g)
    members = tree.members_frame()
    assert members.columns.tolist() == ["host", "cluster", "size", "confidence"]
    assert sorted(members["host"]) == hosts
    with pytest.warns(DeprecationWarning, match="members_frame"):
        assert tree.to_frame().equals(members)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tree.edges_frame(), tree.members_frame()
    assert np.isnan(edges["confidence"]).all()


def test_a_probe_dataset_of_udp_tests_alone_has_nothing_to_cluster(probes):
    import copy

    from tomography.model.errors import DatasetError
    from tomography.pipeline import analyze

    udp = copy.deepcopy(probes)
    udp.probes["protocol"] = "udp"
    with pytest.raises(DatasetError, match="every TCP bandwidth is 0 or missing.*6 UDP tests"):
        analyze(udp)


def test_every_weight_input_is_checked_as_the_clustering_checks_it():
    asymmetric = np.array([[0, 1, 2], [5, 0, 1], [2, 1, 0.0]])
    # named rows are named in the message (louvain's bare matrix has no names)
    for bad, says in ((asymmetric, "not symmetric: w\\[(0, 1|'a', 'b')\\] = 1.0 but "
                                   "w\\[(1, 0|'b', 'a')\\] = 5.0"),
                      (np.full((3, 3), np.nan), "NaN or infinite"),
                      (-np.ones((3, 3)), "negative weights")):
        for call in (lambda: as_weights(bad, list("abc")),
                     lambda: weight_graph(bad, hosts=list("abc")),
                     lambda: visualize.plot_heatmap(bad, hosts=list("abc")),
                     lambda: visualize.plot_layout(bad, hosts=list("abc")),
                     lambda: louvain(bad)):
            with pytest.raises(GraphError, match=says):
                call()


def test_the_clustering_functions_take_a_dataset_too(planted):
    W = mean_weights(planted)
    assert louvain(planted, seed=1).labels.tolist() == louvain(W, seed=1).labels.tolist()
    assert averaged_edge_hierarchy(planted, seed=1).levels == \
        averaged_edge_hierarchy(W, planted.host_names, seed=1).levels


def test_the_toolkit_s_own_tables_go_back_in(planted):
    W = mean_weights(planted)
    edges = planted.edges()
    assert abs(as_weights(edges).matrix - W).max() < 1e-9
    rounds = as_weights(planted.edges(per_iteration=True))
    assert abs(rounds.matrix - W).max() < 1e-9
    assert rounds.iteration_weights().n_iterations == len(planted.iteration_ids)
    info = visualize.plot_heatmap(edges).tomography_info
    assert info["total"] == pytest.approx(float(W.sum()))
    h = averaged_edge_hierarchy(W, planted.host_names, seed=1)
    assert with_support(h, rounds, seed=0).confidence   # resampled from the table
    g = weight_graph(planted)
    assert "blocks per iteration" in visualize.plot_heatmap(g).tomography_info["label"]


def test_truth_is_accepted_as_a_dataset_and_the_wrong_object_is_named(planted):
    W = mean_weights(planted)
    h = averaged_edge_hierarchy(W, planted.host_names, seed=1)
    tree = hierarchy_tree(W, h)
    assert visualize.hasse_text(h, truth=planted) == \
        visualize.hasse_text(h, truth=planted.labels)
    for function in (visualize.hasse_text, visualize.hierarchy_text, visualize.plot_hasse):
        with pytest.raises(TomographyError, match="expected a Hierarchy, got ClusterTree"):
            function(tree)
    for function in (visualize.cluster_tree_text, visualize.plot_tree):
        with pytest.raises(TomographyError, match="expected a ClusterTree, got Hierarchy"):
            function(h)
    with pytest.raises(TomographyError, match="truth= takes a mapping or pandas Series"):
        visualize.hasse_text(h, truth=["a"])
    # both former spellings of the truth work everywhere they were used, with a warning
    for function, data in ((visualize.hasse_text, h), (visualize.cluster_tree_text, tree),
                           (visualize.plot_tree, tree), (visualize.plot_hasse, h)):
        with pytest.warns(DeprecationWarning):
            function(data, planted.labels)
        with pytest.warns(DeprecationWarning):
            function(data, labels=planted.labels)
    with pytest.warns(DeprecationWarning, match=r"measurement=\.\.\.\) is deprecated"):
        visualize.plot_heatmap(measurement=planted)
    import matplotlib.pyplot as plt
    plt.close("all")


def test_the_tree_figure_shows_each_edge_s_confidence(planted):
    W = mean_weights(planted)
    h = averaged_edge_hierarchy(W, planted.host_names, seed=1)
    tree = tree_confidence(hierarchy_tree(W, h), planted, seed=0)
    labels = visualize.plot_tree(tree).tomography_info["edge_labels"]
    assert all(label.endswith(f"({e.confidence:.2f})") for label, e in zip(labels, tree.edges))
    assert tree_confidence(hierarchy_tree(W, h), planted, resamples=0).edges[0].confidence is None
    assert with_support(h, planted, resamples=0) is h
