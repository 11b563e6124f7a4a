"""``tomography synthetic``: a planted-partition dataset (synthetic, not a measurement)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from tomography.cli.common import command, emit, positive_int
from tomography.model.errors import TomographyError

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    """Add ``synthetic`` to the ``tomography`` sub-commands."""
    p = command(sub, "synthetic", "write a planted-partition dataset (synthetic, not a "
                "measurement)",
                "Write a dataset of block counts drawn from a planted hierarchy of groups "
                "(stronger inside a group than across), with its truth as labels: for "
                "trying the analysis without measuring anything.",
                ["tomography synthetic -o flat --branching 8",
                 "tomography synthetic -o two-level --branching 3,3 --iterations 10",
                 "tomography evaluate two-level"])
    p.add_argument("-o", "--output", type=Path, required=True, help="dataset directory to write")
    p.add_argument("--branching", default="8", metavar="B1,B2,...",
                   help="groups per level, top first (default 8: flat; 3,3: 9 in 3)")
    p.add_argument("--hosts-per-group", type=positive_int, default=8,
                   help="hosts in each group of the finest level (default 8)")
    p.add_argument("--iterations", type=positive_int, default=5,
                   help="iterations to draw (default 5)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--force", action="store_true", help="overwrite an existing dataset")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Write a planted-hierarchy dataset."""
    from tomography.model.dataset import write_measurement
    from tomography.model.synthetic import planted_hierarchy

    try:
        branching = tuple(int(b) for b in args.branching.split(","))
    except ValueError:
        raise TomographyError(f"--branching takes integers separated by commas, got "
                              f"{args.branching!r}") from None
    m = planted_hierarchy(branching, args.hosts_per_group, iterations=args.iterations,
                          seed=args.seed)
    write_measurement(m, args.output, overwrite=args.force)
    emit(f"wrote {m.n_hosts} hosts x {len(m.iteration_ids)} iterations (synthetic) "
          f"to {args.output}")
    return 0
