"""The one analysis pipeline: what every command reports, computed once."""

from __future__ import annotations

import json

import pytest

from tomography import analyze
from tomography.cli import main
from tomography.model.dataset import write_measurement
from tomography.model.errors import TomographyError
from tomography.model.synthetic import planted_hierarchy


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    m = planted_hierarchy((2, 3), 8, iterations=3, seed=0)
    path = tmp_path_factory.mktemp("pipeline") / "d"
    write_measurement(m, path)
    return m, path


def _cli_json(capsys, *argv: str) -> dict:
    capsys.readouterr()
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.slow  # over 2 s
def test_the_commands_print_the_pipelines_results(dataset, capsys) -> None:
    m, path = dataset
    a = analyze(path)
    assert _cli_json(capsys, "hierarchy", str(path), "--format", "json") == json.loads(
        a.hierarchy.to_json())
    assert _cli_json(capsys, "tree", str(path), "--format", "json") == json.loads(
        a.tree.to_json())
    flat = _cli_json(capsys, "cluster", str(path), "--format", "json")
    assert [c["confidence"] for c in flat["clusters"]] == a.flat.confidence
    assert analyze(m).hierarchy.to_json() == a.hierarchy.to_json()  # a Measurement or a path


def test_unsupported_levels_hidden_and_kept_on_request(dataset) -> None:
    m, _ = dataset
    h, every = analyze(m).hierarchy, analyze(m, all_levels=True).hierarchy
    assert every.depth > h.depth and h.params["dropped_levels"]          # a noise level hidden
    assert all(h.supported(k) for k in range(1, h.depth + 1))
    one = analyze(planted_hierarchy((2, 3), 8, iterations=1, seed=0))
    assert not one.hierarchy.confidence and one.sampler is None          # nothing to resample
    assert any("one iteration" in note for note in one.notes)


def test_accuracy_needs_a_truth_and_scores_every_level(dataset) -> None:
    m, _ = dataset
    with pytest.raises(TomographyError, match="no ground truth"):
        analyze(m).accuracy
    a = analyze(m, truth="labels", all_levels=True)
    assert list(a.accuracy["level"]) == list(range(1, a.hierarchy.depth + 1))
    assert a.observability["min_separation"] == 1.3 and "observable" in a.accuracy
    with pytest.raises(TomographyError, match="resamples must be a whole number >= 0"):
        analyze(m, resamples=-1)


@pytest.mark.parametrize("option, value, message", [
    ("engine", "x", "unknown engine 'x'"), ("linkage", "bogus", "unknown linkage"),
    ("iterations", 2.5, "iterations must be a whole number"), ("iterations", True, "whole"),
    ("restarts", 0, "restarts must be a whole number >= 1"),
    ("resolution", -1, "resolution must be a number > 0"), ("loops", -1, "loops must be")])
def test_bad_options_are_refused_before_any_work(dataset, option, value, message) -> None:
    from tomography.model.errors import ParameterError

    m, _ = dataset
    with pytest.raises(ParameterError, match=message):
        analyze(m, **{option: value})


def test_one_seed_for_every_part_and_every_option_reaches_every_part(dataset) -> None:
    m, _ = dataset
    a = analyze(m, seed=None, resamples=2)
    assert isinstance(a.options["seed"], int)
    assert a.hierarchy.params["seed"] == a.flat.clustering.seed == a.options["seed"]
    high = analyze(m, resolution=3.0, truth="labels", resamples=0)
    last = high.convergence().iloc[-1]
    assert last["clusters"] == high.flat.clustering.n_clusters
    assert "linkage='thesis'" in repr(analyze(m, linkage="thesis"))
    with pytest.raises(TomographyError, match="a Measurement or a dataset directory"):
        analyze(m.transfers)
