"""One home per option: an analysis option declared once is in the command line's help and in
``analyze``'s checks, with the same range and default."""

from __future__ import annotations

import argparse

import pytest

from tomography.model import options
from tomography.model.errors import ParameterError


def test_an_option_declared_once_is_in_the_help_and_in_the_checks(monkeypatch) -> None:
    added = options.Option("smoothing", "how much to smooth the counts (default 0.25)", 0.25,
                           "float", low=0, flags=("--smoothing",), group="hierarchy")
    monkeypatch.setattr(options, "ANALYSIS", (*options.ANALYSIS, added))
    monkeypatch.setitem(options.OPTIONS, "smoothing", added)
    from tomography.cli import build_parser

    parser = build_parser()
    help_text = parser._subparsers._group_actions[0].choices["hierarchy"].format_help()
    assert "--smoothing" in help_text and "how much to smooth the counts" in help_text
    args = parser.parse_args(["hierarchy", "d", "--smoothing", "0.5"])
    assert options.cli_arguments(args)["smoothing"] == 0.5
    assert parser.parse_args(["hierarchy", "d"]).smoothing == 0.25     # the one default
    with pytest.raises(SystemExit):                                     # the one range
        parser.parse_args(["hierarchy", "d", "--smoothing", "-1"])
    with pytest.raises(ParameterError, match="smoothing must be a number >= 0, got -1"):
        options.check_options(smoothing=-1)


def test_the_command_line_and_analyze_refuse_alike(capsys) -> None:
    from tomography.cli import main

    with pytest.raises(SystemExit) as stopped:     # argparse's exit
        main(["hierarchy", "nowhere", "--restarts", "0"])
    assert stopped.value.code == 2
    said = capsys.readouterr().err
    with pytest.raises(ParameterError) as caught:
        options.check_options(restarts=0)
    # the same words; the command line names its flag where Python names its keyword
    assert str(caught.value) == "restarts must be a whole number >= 1, got 0"
    assert "argument --restarts: must be a whole number >= 1, got 0" in said


def test_every_flag_names_its_keyword_of_analyze() -> None:
    import inspect

    from tomography.pipeline import analyze

    keywords = set(inspect.signature(analyze).parameters)
    assert {o.name for o in options.ANALYSIS} <= keywords
    parser = argparse.ArgumentParser()
    for option in options.ANALYSIS:
        if option.flags:
            option.add_to(parser)
    defaults = vars(parser.parse_args([]))
    signature = inspect.signature(analyze).parameters
    for option in options.ANALYSIS:
        if option.flags:
            assert defaults[option.attribute] == option.default == signature[option.name].default
