"""``tomography completion SHELL``: the shell's completion script for every command and option."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from tomography.cli.common import command, emit, parsers
from tomography.model.scenarios import builtin_networks, network_help

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


def _networks() -> tuple[dict[str, str], dict[str, str]]:
    """The completion of a topology argument (a built-in network's name or a file), for
    shtab: the preamble that defines it and the completer of each shell."""
    names = " ".join(builtin_networks())
    preamble = {"bash": "_shtab_tomography_networks() {\n"
                        f"  compgen -W \"{names}\" -- \"$1\"\n"
                        "  compgen -f -- \"$1\"\n}\n"}
    complete = {"bash": "_shtab_tomography_networks",
                "zsh": f"_alternative 'networks:built-in network:({names})' 'files:file:_files'",
                "tcsh": "f"}
    return preamble, complete


def run(args: argparse.Namespace) -> int:
    """Print the completion script of ``args.root`` (the whole command line) for the shell:
    a topology argument completes to the built-in networks' names and to files."""
    import shtab

    preamble, networks = _networks()
    for parser in parsers(args.root):
        for action in parser._actions:
            if action.choices or action.nargs == 0 or getattr(action, "complete", None):
                continue
            if network_help() in (action.help or ""):     # a built-in name or a file
                action.complete = networks
            elif (action.type is Path
                  or action.dest in ("dataset", "output", "topology", "gauge")):
                directory = action.dest in ("dataset", "output") and "file" not in (
                    action.help or "").lower()
                action.complete = shtab.DIRECTORY if directory else shtab.FILE
    emit(shtab.complete(args.root, shell=args.shell, preamble=preamble))
    return 0
