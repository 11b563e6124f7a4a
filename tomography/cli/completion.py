"""``tomography completion SHELL``: the shell's completion script for every command and option."""

from __future__ import annotations

import argparse
from typing import Any

from pathlib import Path

from tomography.cli.common import command, emit, parsers

__all__ = ["add_parser", "run", "SHELLS"]

SHELLS = ("bash", "zsh", "tcsh")


def add_parser(sub: Any) -> None:
    """Add ``completion`` to the ``tomography`` sub-commands."""
    p = command(sub, "completion", "print a completion script for bash, zsh or tcsh",
                "Print the script that lets the shell complete tomography's commands, "
                "options and their choices (generated from this command line by shtab). "
                "Load it once in the shell's start-up file, as the examples show.",
                ["tomography completion bash > ~/.local/share/bash-completion/completions/"
                 "tomography",
                 'echo \'eval "$(tomography completion bash)"\' >> ~/.bashrc',
                 "tomography completion zsh > ~/.zfunc/_tomography   # with fpath+=~/.zfunc"])
    p.add_argument("shell", choices=SHELLS, help="the shell to complete in")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print the completion script of ``args.root`` (the whole command line) for the shell."""
    import shtab

    for parser in parsers(args.root):
        for action in parser._actions:
            if action.choices or action.nargs == 0 or getattr(action, "complete", None):
                continue
            if action.type is Path or action.dest in ("dataset", "output", "topology", "gauge"):
                directory = action.dest in ("dataset", "output") and "file" not in (
                    action.help or "").lower()
                action.complete = shtab.DIRECTORY if directory else shtab.FILE
    emit(shtab.complete(args.root, shell=args.shell))
    return 0
