"""The ``tomography`` command line: a thin layer over the library.

One module per command (or small family): each has ``add_parser(sub)``,
which declares its options and sets ``run``, and ``run(args)``, which turns
the options into the arguments of one library function (for the analysis
commands, :func:`tomography.pipeline.analyze`) and prints the result.  The
analysis commands read a measurement dataset directory; the others read a
topology or a Gauge file, or measure.  Each prints text for people or
JSON/DOT for programs.  User mistakes (a :class:`TomographyError`) print one
line ``tomography: error: ...`` and exit with status 2; any other exception
is a bug and shows its traceback.
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from typing import Sequence

from tomography.cli import (cluster, common, completion, demo, evaluate, export, hierarchy,
                            import_results, info, measure, multicast, plan, plot, report,
                            simulate, synthetic, testbed, tree, truth)
from tomography.cli.common import add_verbosity_options
from tomography.model.errors import DatasetError, TomographyError

__all__ = ["main", "build_parser"]

EPILOG = """\
examples:
  tomography demo -o /tmp/demo                 # measure an emulated network (root) and analyse it
  tomography testbed up two-sites-demo         # raise an emulated network (root)
  tomography measure bittorrent --testbed two-sites-demo --until-converged -o run
  tomography info DATASET
  tomography cluster DATASET --format json
  tomography hierarchy DATASET                  # Hasse diagram as text
  tomography tree DATASET --format dot | dot -Tpng -o tree.png
  tomography evaluate DATASET --truth labels
  tomography truth N1                          # the ground-truth model of a topology
  tomography simulate N2 -n 5 --size 64MiB -o n2   # simulated BitTorrent broadcasts
  tomography export DATASET --format gauge -o - | tomography plan - --root HOST
  tomography multicast --testbed two-sites-demo --dataset run --root w1-00 -o mc
  tomography export DATASET --format graphml -o hosts.graphml   # for Gephi
  tomography report DATASET -o run.html        # one self-contained HTML page of the run

DATASET is a measurement directory: meta.json, hosts.csv, transfers.csv,
iterations.csv (the README's section "The measurement dataset" lists every column)."""


COMMANDS = (info, cluster, hierarchy, tree, evaluate, truth, import_results, synthetic,
            simulate, measure, testbed, demo, export, plan, multicast, plot, report, completion)
"""The command modules, in the order ``--help`` lists them."""

EXTRAS = {"libtorrent": "measure", "numba": "simulate", "mpi4py": "mpi"}
"""The optional libraries, each with the extra that installs it: the analysis needs none."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``tomography`` command."""
    parser = argparse.ArgumentParser(
        prog="tomography",
        description="Bandwidth tomography of grid and cluster networks: infer bandwidth "
                    "clusters, their hierarchy and a tree from BitTorrent block counts.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version",
                        version=f"%(prog)s {__import__('tomography').__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in COMMANDS:
        module.add_parser(sub)
    for each in common.parsers(parser):
        add_verbosity_options(each)
    sub.choices["completion"].set_defaults(root=parser)   # the script covers every command
    return parser


def _import_igraph_without_pyplot() -> None:
    """Import igraph with matplotlib hidden, unless either is loaded already.

    igraph imports ``matplotlib.pyplot`` for its drawing functions, which this
    command never uses: 0.8 s of a 3-second analysis of 4096 hosts.  Only the
    import is affected; ``tomography plot`` imports matplotlib as usual.
    """
    if "igraph" in sys.modules or "matplotlib" in sys.modules:
        return
    sys.modules["matplotlib"] = None   # type: ignore[assignment]  # makes its import fail
    try:
        import igraph  # noqa: F401
    except ImportError:   # igraph is optional for python-louvain users
        pass
    finally:
        del sys.modules["matplotlib"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``tomography`` command; returns the exit status.

    Examples
    --------
    >>> main(["info", "/nonexistent"])
    2
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    common.verbosity = getattr(args, "verbosity", common.NORMAL)
    _import_igraph_without_pyplot()
    started = time.perf_counter()
    try:
        status = args.run(args)
        common.say(f"tomography {args.command}: {time.perf_counter() - started:.1f} s",
                   verbose=True)
        return status
    except TomographyError as exc:
        if common.verbosity == common.VERBOSE:
            traceback.print_exc()
        text = str(exc)
        option = (common.setting_option(common.command_parser(parser, args.command), exc.field)
                  if isinstance(exc, DatasetError) and exc.field else None)
        if option and "cannot resume" in text:   # a recorded setting the command sets
            text += f" (set by {option})"
        for line in text.splitlines():  # one line per problem (a preflight's hosts)
            print(f"tomography: error: {line}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as exc:
        extra = EXTRAS.get((exc.name or "").split(".")[0])
        if extra is None:
            raise
        print(f"tomography: error: tomography {args.command} needs {exc.name}, which this "
              f"installation does not have: pip install 'bandwidth-tomography[{extra}]'",
              file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except OSError as exc:   # a file the user named: missing directory, no permission, full disk
        if common.verbosity == common.VERBOSE:
            traceback.print_exc()
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"tomography: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("tomography: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
