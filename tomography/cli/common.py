"""Helpers shared by the ``tomography`` commands: option types, the analysis options and
the one call that turns them into :func:`tomography.pipeline.analyze`'s arguments, output."""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

__all__ = ["positive_int", "port_range", "add_analysis_options", "add_hierarchy_options",
           "add_tree_level_option", "add_host_connections_option", "add_format_option",
           "analysis", "command", "emit", "Progress"]


def positive_int(text: str) -> int:
    """An argparse type: an integer >= 1.

    Examples
    --------
    >>> positive_int("3")
    3
    >>> positive_int("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a positive integer, got 0
    """
    return _at_least(text, 1, "a positive integer")


def port_range(text: str) -> tuple[int, int]:
    """An argparse type: ``LOW-HIGH`` (both included) or one port, of TCP ports 1 to 65535.

    Examples
    --------
    >>> port_range("5201-5210"), port_range("5201")
    ((5201, 5210), (5201, 5201))
    >>> port_range("6000-5000")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be LOW-HIGH with 1 <= LOW <= HIGH <= 65535, or one port; got 6000-5000
    """
    low, _, high = text.partition("-")
    try:
        ports = (int(low), int(high or low))
    except ValueError:
        ports = (0, 0)
    if not (low.strip().isdigit() and (not high or high.strip().isdigit())
            and 1 <= ports[0] <= ports[1] <= 65535):
        raise argparse.ArgumentTypeError("must be LOW-HIGH with 1 <= LOW <= HIGH <= 65535, "
                                         f"or one port; got {text}")
    return ports


def _at_least(text: str, low: int, what: str) -> int:
    value = int(text)
    if value < low:
        raise argparse.ArgumentTypeError(f"must be {what}, got {text}")
    return value


def add_analysis_options(p: argparse.ArgumentParser) -> None:
    """The dataset argument and the options of w_n and Louvain (their declarations:
    :data:`tomography.model.options.ANALYSIS`)."""
    from tomography.model.options import ANALYSIS

    p.add_argument("dataset", type=Path, help="measurement dataset directory")
    for option in ANALYSIS:
        if option.group == "analysis":
            option.add_to(p)


def add_hierarchy_options(p: argparse.ArgumentParser) -> None:
    """The options of the averaged-edge hierarchy (Eq 5.4/5.5)."""
    from tomography.model.options import ANALYSIS

    for option in ANALYSIS:
        if option.group == "hierarchy":
            option.add_to(p)


def add_tree_level_option(p: Any, flag: str = "--level") -> None:
    """The hierarchy level a tree joins (``args.tree_level``), under ``flag``."""
    from tomography.model.options import ANALYSIS

    for option in ANALYSIS:
        if option.group == "tree":
            option.add_to(p, flags=(flag,))


def analysis(args: argparse.Namespace, dataset: Any = None, **arguments: Any):
    """:func:`tomography.pipeline.analyze` of ``dataset`` (default ``args.dataset``) with the
    analysis options the command has, and ``arguments``; prints the analysis's notes."""
    from tomography.model.options import cli_arguments
    from tomography.pipeline import analyze

    given = cli_arguments(args)
    result = analyze(args.dataset if dataset is None else dataset, **{**given, **arguments})
    where = dataset if isinstance(dataset, (str, os.PathLike)) else args.dataset
    say(f"read {where}: {result.measurement!r}", verbose=True)
    for note in result.notes:
        say(f"note: {note}")
    return result


QUIET, NORMAL, VERBOSE = -1, 0, 1
verbosity = NORMAL
"""How much a command says on standard error (``-q``/``--quiet``, ``-v``/``--verbose``):
set once by :func:`tomography.cli.main` from the command line."""


def add_verbosity_options(parser: argparse.ArgumentParser) -> None:
    """``-q``/``--quiet`` and ``-v``/``--verbose``, given before or after the command's name.

    Both store into ``verbosity`` only when given (``argparse.SUPPRESS``), so that a
    command's parser does not reset what the main parser read.
    """
    group = parser.add_argument_group("output")
    either = group.add_mutually_exclusive_group()
    either.add_argument("-q", "--quiet", dest="verbosity", action="store_const", const=QUIET,
                        default=argparse.SUPPRESS,
                        help="print only results (and what was written where) and errors: no "
                             "progress, notes or warnings")
    either.add_argument("-v", "--verbose", dest="verbosity", action="store_const",
                        const=VERBOSE, default=argparse.SUPPRESS,
                        help="also say what was read and how long it took, and show the "
                             "traceback of an error")


def parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """``parser`` and every command's parser under it, sub-commands included."""
    out = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):   # aliases once
                out += parsers(child)
    return out


RECORDED_AS = {"file_size": "size"}
"""The settings ``meta.json`` records under another name than the option that sets them."""


def command_parser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    """The parser of ``command`` (a name or alias) under the top-level ``parser``."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices[command]
    raise KeyError(command)


def setting_option(parser: argparse.ArgumentParser, field: str) -> str | None:
    """The option of ``parser`` that sets a run setting recorded as ``field`` in ``meta.json``
    (``params``, nested ones dotted), as the user writes it; None if it has none.

    Examples
    --------
    >>> p = argparse.ArgumentParser()
    >>> _ = p.add_argument("--size"); _ = p.add_argument("--peer-list"); _ = p.add_argument("--tcp")
    >>> setting_option(p, "file_size"), setting_option(p, "peer_list")
    ('--size', '--peer-list')
    >>> setting_option(p, "tcp.queue_delay"), setting_option(p, "roots")
    ('--tcp queue-delay=VALUE', None)
    """
    options = {a.dest: a.option_strings[-1] for a in parser._actions if a.option_strings}
    head, _, tail = field.partition(".")
    dest = RECORDED_AS.get(field, tail or head)
    if dest in options:
        return options[dest]
    if tail and head in options:
        return f"{options[head]} {tail.replace('_', '-')}=VALUE"
    return None


def say(text: str, *, verbose: bool = False, result: bool = False) -> None:
    """A message for the user on standard error (a note, a warning, a summary): not under
    ``--quiet``; with ``verbose``, only under ``--verbose``; with ``result`` (what a
    command wrote, where), always.

    Examples
    --------
    >>> import contextlib, io
    >>> err = io.StringIO()
    >>> with contextlib.redirect_stderr(err):
    ...     say("note: shown"); say("how long it took", verbose=True)
    >>> err.getvalue().splitlines()
    ['note: shown']
    """
    if not result and (verbosity == QUIET or (verbose and verbosity < VERBOSE)):
        return
    print(text, file=sys.stderr, flush=True)


def emit(text: str) -> None:
    """Print ``text`` to stdout with exactly one final newline."""
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def add_host_connections_option(p: argparse.ArgumentParser, default: str) -> None:
    """``--host-connections K``: the connections that share a host's NIC in a broadcast."""
    p.add_argument("--host-connections", type=positive_int, metavar="K",
                   help="connections sharing a host's NIC in a broadcast: a partition that "
                        "splits a link giving a connection more than the NIC / K is marked "
                        f"beyond share (default: {default}; 1: the NIC unshared, the model "
                        "as the thesis published it)")


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """argparse's help, lines never broken inside a hyphenated name (``two-sites-demo``)."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)


def command(sub: Any, name: str, summary: str, description: str,
            examples: list[str]) -> argparse.ArgumentParser:
    """A sub-command with its one-line summary, a description and examples in ``--help``."""
    return sub.add_parser(name, help=summary, description=textwrap.fill(description, 78),
                          epilog="examples:\n" + "\n".join(f"  {e}" for e in examples),
                          formatter_class=HelpFormatter)


def add_format_option(p: argparse.ArgumentParser, choices: tuple[str, ...]) -> None:
    """``--format``: text for people (the default), the others for programs."""
    p.add_argument("--format", choices=choices, default=choices[0],
                   help=f"{choices[0]} for people (default)"
                        + "".join(f"; {c}" + {"json": ": for programs (jq, pandas)",
                                              "dot": ": Graphviz"}.get(c, "")
                                  for c in choices[1:]))


class Progress:
    """Progress of a long run: a bar on a terminal, a line every few seconds otherwise.

    Logs, batch jobs and CI see lines such as ``simulating N2: 3/15
    iterations, 14 s (4.4s simulated)``; a terminal sees tqdm's bar.

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> p = Progress("simulating", total=2, every=0.0, stream=out)
    >>> p.set(1, note="first"); p.set(2); p.close()
    >>> print(out.getvalue().replace("0 s", "T"), end="")
    simulating: 1/2 iterations, T (first)
    simulating: 2/2 iterations, T
    """

    def __init__(self, desc: str, *, total: int | None = None, unit: str = "iteration",
                 every: float = 5.0, stream: Any = None) -> None:
        self.desc, self.total, self.unit, self.every = desc, total, unit, every
        self.stream = stream if stream is not None else sys.stderr
        self.done, self.note, self._clock = 0, "", time.monotonic
        self.started = self.last = self._clock()
        self.printed = -1
        self.bar = None
        self.quiet = verbosity == QUIET and stream is None
        if not self.quiet and getattr(self.stream, "isatty", lambda: False)():
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc=desc, unit=unit, file=self.stream)

    def set(self, done: int, *, total: int | None = None, note: str = "") -> None:
        """``done`` units of ``total`` (a new total if given), with a short note."""
        self.done, self.note = done, note
        if total is not None:
            self.total = total
        if self.quiet:
            return
        if self.bar is not None:
            self.bar.total, self.bar.n = self.total, done
            self.bar.set_postfix_str(note, refresh=False)
            self.bar.refresh()
            return
        now = self._clock()
        if now - self.last >= self.every or (self.total is not None and done >= self.total):
            self._line(now)

    def _line(self, now: float) -> None:
        of = f"/{self.total}" if self.total is not None else ""
        print(f"{self.desc}: {self.done}{of} {self.unit}s, {now - self.started:.0f} s"
              + (f" ({self.note})" if self.note else ""), file=self.stream, flush=True)
        self.last, self.printed = now, self.done

    def close(self) -> None:
        """End the bar, or print the last state if it has not been printed (nothing if
        nothing was done: a run that failed before its first unit says why itself)."""
        if self.bar is not None:
            self.bar.close()
        elif self.done and self.printed != self.done and not self.quiet:
            self._line(self._clock())
