"""Every figure of data takes what analyze() takes, every figure of results an Analysis, and
truth= means the same everywhere."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import pandas as pd
import pytest

import tomography
import visualize
from tomography.model.errors import ParameterError

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def run(small_planted):
    return small_planted


def test_every_plot_takes_a_dataset_directory_and_an_analysis(run) -> None:
    m, path = run
    a, b = m.host_names[0], m.host_names[1]
    figures = [visualize.plot_heatmap(path), visualize.plot_layout(str(path)),
               visualize.plot_edge_weight(path, a, b),
               visualize.plot_weight_distribution(path, m),
               visualize.plot_hasse(tomography.analyze(path, truth="labels")),
               visualize.plot_tree(tomography.analyze(str(path))),
               visualize.plot_convergence(tomography.analyze(m, truth="labels"))]
    for fig in figures:
        assert fig.axes
        matplotlib.pyplot.close(fig)


def test_a_wrong_first_argument_names_the_function_and_what_it_takes() -> None:
    with pytest.raises(ParameterError, match="plot_edge_weight takes a dataset: a Measurement "
                                             "or its directory"):
        visualize.plot_edge_weight(3, "a", "b")
    with pytest.raises(ParameterError, match="plot_hasse takes a Hierarchy or an Analysis, "
                                             "got int$"):
        visualize.plot_hasse(3)
    with pytest.raises(ParameterError, match=r"got PosixPath: draw a dataset's with "
                                             r"plot_tree\(tomography.analyze\(data\)\)"):
        visualize.plot_tree(Path("run"))
    with pytest.raises(ParameterError, match="plot_convergence takes a convergence table"):
        visualize.plot_convergence(3)
    with pytest.raises(ParameterError, match="plot_probe_grid.*needs the hosts"):
        visualize.plot_probe_grid(pd.DataFrame({"src": [], "dst": []}))


TRUTHS = {"mapping": lambda m, p: dict(m.labels), "Series": lambda m, p: pd.Series(m.labels),
          "dataset": lambda m, p: m, "truth file": lambda m, p: p}


@pytest.mark.parametrize("form", sorted(TRUTHS))
def test_truth_has_one_meaning_everywhere(run, form: str, tmp_path: Path) -> None:
    m, _ = run
    pd.DataFrame({"host": list(m.labels), "label": list(m.labels.values())}).to_csv(
        tmp_path / "truth.csv", index=False)
    truth = TRUTHS[form](m, tmp_path / "truth.csv")
    a = tomography.analyze(m, truth=truth)
    expected = tomography.analyze(m, truth="labels")
    assert a.truth == expected.truth
    assert a.accuracy["nmi"].tolist() == expected.accuracy["nmi"].tolist()
    assert visualize.hasse_text(a.hierarchy, truth=truth) == \
        visualize.hasse_text(a.hierarchy, truth=m.labels)
    fig = visualize.plot_heatmap(m, truth=truth)
    matplotlib.pyplot.close(fig)


def test_a_truth_of_the_wrong_kind_is_refused_at_once_and_says_what_to_pass(run) -> None:
    m, _ = run
    with pytest.raises(ParameterError, match="truth= takes a mapping or pandas Series host -> "
                                             "label path, a Measurement"):
        tomography.analyze(m, truth=["a", "b"])
    h = tomography.analyze(m).hierarchy
    with pytest.raises(ParameterError, match="truth='labels' means the labels of the dataset "
                                             "at hand.*pass the dataset"):
        visualize.hasse_text(h, truth="labels")
    assert visualize.hasse_text(h, truth=m) == visualize.hasse_text(h, truth=m.labels)


def test_an_analysis_goes_wherever_its_parts_go(run) -> None:
    m, path = run
    a = tomography.analyze(path, truth="labels")
    for fig in (visualize.plot_heatmap(a), visualize.plot_heatmap(m, clusters=a),
                visualize.plot_layout(a), visualize.plot_hasse(a, truth="labels")):
        matplotlib.pyplot.close(fig)
    assert visualize.hasse_text(a) == visualize.hasse_text(a.hierarchy, truth=m)
    assert visualize.cluster_tree_text(a) == visualize.cluster_tree_text(a.tree, truth=m)
    # a dataset's directory is a truth too: its labels
    assert tomography.analyze(m, truth=path).truth == m.labels


def test_a_former_spelling_warns_at_the_callers_line(run) -> None:
    import warnings

    m, _ = run
    h = tomography.analyze(m).hierarchy
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        visualize.hasse_text(h, labels=m.labels)
    assert [Path(w.filename).name for w in caught] == [Path(__file__).name]
