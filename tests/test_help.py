"""Every command's --help teaches: a description, an example, help for every option."""

from __future__ import annotations

import argparse

import pytest

from tomography.cli import build_parser


def commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list:
    """Every (sub)command parser under ``parser``, with its words."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.append((path + (name,), sub))
                found += commands(sub, path + (name,))
    return found


ALL = commands(build_parser())


@pytest.mark.parametrize("words,parser", ALL, ids=[" ".join(w) for w, _ in ALL])
def test_command_help_has_a_description_an_example_and_option_help(words, parser) -> None:
    text = parser.format_help()
    leaf = not any(isinstance(a, argparse._SubParsersAction) for a in parser._actions)
    assert parser.description, f"tomography {' '.join(words)}: no description"
    if leaf:
        assert "example" in text.lower(), f"tomography {' '.join(words)}: no example"
    bare = [a.option_strings[0] for a in parser._actions
            if a.option_strings and a.help in (None, "") and a.dest != "help"]
    assert not bare, f"tomography {' '.join(words)}: options without help: {bare}"
