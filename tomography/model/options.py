"""Every analysis option, declared once: its name, type, range, default and help.

:data:`ANALYSIS` is the one home of the options of :func:`tomography.pipeline.analyze`
and of the analysis commands (``cluster``, ``hierarchy``, ``tree``, ``evaluate``,
``export``, ``plot``, ``report``): the command line adds each from here
(:meth:`Option.add_to`, help and default included), ``analyze`` checks each
with :func:`check_options` before any work, and the algorithms take their
choices from here (:data:`cluster.louvain.ENGINES` is ``OPTIONS["engine"].choices``).
Adding an option is one :class:`Option` in :data:`ANALYSIS`, one keyword of
``analyze``, and its use.

Examples
--------
>>> OPTIONS["restarts"].check(0)
Traceback (most recent call last):
...
tomography.model.errors.ParameterError: restarts must be a whole number >= 1, got 0
>>> import argparse
>>> p = argparse.ArgumentParser()
>>> OPTIONS["engine"].add_to(p)
>>> p.parse_args(["--engine", "louvain"]).engine
'louvain'
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from tomography.model.errors import ParameterError

__all__ = ["Option", "ANALYSIS", "OPTIONS", "check_options", "cli_arguments"]


@dataclass(frozen=True)
class Option:
    """One option: what ``analyze`` calls it, what the command line calls it, what it takes.

    Attributes
    ----------
    name : str
        The keyword of :func:`tomography.pipeline.analyze`.
    help : str
        The command line's help (say the default in it).
    default : object
        The default of both.
    kind : {"int", "float", "choice", "flag", "seed"}
        ``seed`` is an integer on the command line and anything
        :func:`tomography.model.seeding.check_seed` takes in Python.
    low : float, optional
        The smallest value (``above``: values must be greater).
    choices : tuple of str
        For ``kind="choice"``.
    optional : bool
        None is taken too (the option's automatic choice).
    flags : tuple of str
        The command line's flags; empty for an option of Python alone.
    metavar, dest : str, optional
        As argparse takes them (``dest`` defaults to the first flag's name).
    group : {"analysis", "hierarchy", "tree"}, optional
        The command line's group of options it belongs to: every command that
        analyses takes ``analysis``, those that build the hierarchy ``hierarchy``,
        those that draw a tree ``tree``.
    """

    name: str
    help: str
    default: Any = None
    kind: str = "int"
    low: float | None = None
    above: bool = False
    choices: tuple[str, ...] = ()
    optional: bool = False
    flags: tuple[str, ...] = ()
    metavar: str | None = None
    dest: str | None = None
    group: str | None = None

    @property
    def attribute(self) -> str:
        """The attribute argparse stores the option under."""
        return self.dest or self.flags[0].lstrip("-").replace("-", "_")

    def check(self, value: Any) -> Any:
        """``value`` if this option takes it; a :class:`ParameterError` naming the option
        otherwise."""
        if value is None and (self.optional or self.kind == "seed"):
            return value
        if self.kind == "choice":
            if value not in self.choices:
                raise ParameterError(f"unknown {self.name} {value!r}; choose one of "
                                     f"{', '.join(self.choices)}")
        elif self.kind == "flag":
            if not isinstance(value, bool):
                raise ParameterError(f"{self.name} must be True or False, got {value!r}")
        elif self.kind == "int":
            if isinstance(value, bool) or not isinstance(value, int) or (
                    self.low is not None and value < self.low):
                bound = "" if self.low is None else f" >= {self.low:g}"
                raise ParameterError(f"{self.name} must be a whole number{bound}, got {value!r}")
        elif self.kind == "float":
            if isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or not math.isfinite(value) or (self.low is not None and (
                        value <= self.low if self.above else value < self.low)):
                bound = f" {'>' if self.above else '>='} {self.low:g}" \
                    if self.low is not None else ""
                raise ParameterError(f"{self.name} must be a number{bound}, got {value!r}")
        return value

    def _parse(self) -> Callable[[str], Any]:
        """The argparse type: text to value, refused in the option's own words."""
        convert = {"int": int, "seed": int, "float": float}[self.kind]

        def parse(text: str) -> Any:
            try:
                return self.check(convert(text))
            except ValueError as exc:   # ParameterError is a ValueError too
                if not isinstance(exc, ParameterError):
                    raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
                # argparse names the flag ("argument --level: ..."): not Python's name too
                message = str(exc)
                raise argparse.ArgumentTypeError(message.removeprefix(f"{self.name} ")
                                                 if message.startswith(f"{self.name} must")
                                                 else message) from None
        parse.__name__ = self.kind
        return parse

    def add_to(self, parser: Any, flags: Sequence[str] | None = None) -> None:
        """Add the option to an argparse parser (or group), with ``flags`` instead of its own."""
        names = tuple(flags or self.flags)
        extra: dict[str, Any] = {"help": self.help, "default": self.default}
        if self.dest is not None or flags:
            extra["dest"] = self.attribute
        if self.kind == "flag":
            parser.add_argument(*names, action="store_true", **extra)
            return
        if self.kind == "choice":
            extra["choices"] = self.choices
        else:
            extra["type"] = self._parse()
        if self.metavar is not None:
            extra["metavar"] = self.metavar
        parser.add_argument(*names, **extra)


ANALYSIS: tuple[Option, ...] = (
    Option("iterations", "use w_n over the first N iterations (default: all)", None, "int",
           low=1, optional=True, flags=("--iterations", "-n"), metavar="N", group="analysis"),
    Option("engine", "Louvain implementation: igraph (fast, default) or python-louvain",
           "igraph", "choice", choices=("igraph", "louvain"), flags=("--engine",),
           group="analysis"),
    Option("seed", "random seed (default 0)", 0, "seed", flags=("--seed",), group="analysis"),
    Option("restarts", "Louvain runs; the best modularity is kept (default 1)", 1, "int",
           low=1, flags=("--restarts",), group="analysis"),
    Option("resolution", "modularity resolution (default 1.0)", 1.0, "float", low=0,
           above=True, flags=("--resolution",), group="analysis"),
    Option("resamples", "resampled analyses for the confidence of a flat clustering's "
           "clusters and of every tree edge (default 4: bootstrap over iterations, split halves "
           "below 4 iterations; a hierarchy's levels and clusters always take 64 resampled "
           "separations, which cost no clustering; 0: no confidence at all)", None, "int",
           low=0, optional=True, flags=("--resamples",), metavar="B", group="analysis"),
    Option("n_jobs", "processes for the independent analyses: resamples, a level's split "
           "tests, evaluate's rows (default: every core on graphs of 50000 edges or more, one "
           "below, where starting a process costs more than the work; -1: every core); the "
           "result is the same for any J", None, "int", optional=True, flags=("--jobs", "-j"),
           metavar="J", group="analysis"),
    Option("linkage", "how collapsed clusters are weighted: mean over host pairs (default for "
           "broadcasts); thesis: Eq 5.4/5.5 as written (sum over min/max of the sizes; same "
           "levels, worse trees where cluster sizes differ); sum: plain sum (default for probe "
           "datasets, whose bandwidths add up)", None, "choice",
           choices=("thesis", "mean", "sum"), optional=True, flags=("--linkage",),
           group="hierarchy"),
    Option("start", "refined (default): Louvain's best partition plus the finer levels that "
           "pass a permutation test; best: the thesis (can skip a fine level); finest: "
           "Louvain's first level (fragments noisy data)", "refined", "choice",
           choices=("refined", "best", "finest"), flags=("--start",), group="hierarchy"),
    Option("loops", "self-loop of a collapsed cluster, as a share of its strongest tie to "
           "another cluster (default 0.5)", 0.5, "float", low=0, flags=("--loops",),
           group="hierarchy"),
    Option("all_levels", "also show the levels the data do not support (confidence below the "
           "support threshold), marked unsupported", False, "flag", flags=("--all-levels",),
           group="hierarchy"),
    Option("tree_level", "the hierarchy level whose clusters the tree joins (default: the level "
           "of Louvain's best partition, the method's flat clusters; 1 is the finest; 0 joins "
           "the hosts themselves, for networks of one host per router)", None, "int", low=0,
           optional=True, flags=("--level",), metavar="L", dest="tree_level", group="tree"),
    Option("flat_level", "which Louvain level is the flat clustering: best (highest "
           "modularity) or finest", "best", "choice", choices=("best", "finest")),
)
"""The analysis options, in the order the command line lists them."""

OPTIONS: dict[str, Option] = {o.name: o for o in ANALYSIS}
""":data:`ANALYSIS` by name."""


def check_options(**values: Any) -> None:
    """Check each keyword against its declaration in :data:`OPTIONS`, before any work.

    Examples
    --------
    >>> check_options(resolution=0.5, engine="igraph")
    >>> check_options(loops=-1)
    Traceback (most recent call last):
    ...
    tomography.model.errors.ParameterError: loops must be a number >= 0, got -1
    """
    for name, value in values.items():
        OPTIONS[name].check(value)


def cli_arguments(args: argparse.Namespace) -> dict[str, Any]:
    """The keywords of ``analyze`` that a command's parsed options give (those it has).

    Examples
    --------
    >>> cli_arguments(argparse.Namespace(jobs=2, seed=3, dataset="d"))
    {'seed': 3, 'n_jobs': 2}
    """
    return {o.name: getattr(args, o.attribute) for o in ANALYSIS
            if o.flags and hasattr(args, o.attribute)}
