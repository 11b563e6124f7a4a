"""Helpers shared by the ``tomography`` commands: option types, dataset loading, output."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

__all__ = ["positive_int", "add_analysis_options", "add_hierarchy_options", "load",
           "hierarchy", "truth", "full_truth", "emit"]


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
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def add_analysis_options(p: argparse.ArgumentParser) -> None:
    """The dataset argument and the options of w_n and Louvain."""
    p.add_argument("dataset", type=Path, help="measurement dataset directory")
    p.add_argument("--iterations", "-n", type=positive_int, metavar="N",
                   help="use w_n over the first N iterations (default: all)")
    p.add_argument("--engine", choices=("igraph", "louvain"), default="igraph",
                   help="Louvain implementation: igraph (fast, default) or python-louvain")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--restarts", type=positive_int, default=1,
                   help="Louvain runs; the best modularity is kept (default 1)")
    p.add_argument("--resolution", type=float, default=1.0,
                   help="modularity resolution (default 1.0)")


def add_hierarchy_options(p: argparse.ArgumentParser) -> None:
    """The options of the averaged-edge hierarchy (Eq 5.4/5.5)."""
    p.add_argument("--linkage", choices=("thesis", "mean", "sum"), default=None,
                   help="thesis: Eq 5.4/5.5 as written (default for broadcasts); mean: mean "
                        "over host pairs; sum: plain sum (default for probe datasets, whose "
                        "bandwidths add up)")
    p.add_argument("--start", choices=("refined", "best", "finest"), default="refined",
                   help="refined (default): Louvain's best partition plus the finer levels "
                        "that pass a permutation test; best: the thesis (can skip a fine "
                        "level); finest: Louvain's first level (fragments noisy data)")
    p.add_argument("--loops", type=float, default=0.5,
                   help="self-loop of a collapsed cluster, as a share of its strongest tie "
                        "to another cluster (default 0.5)")


def load(args: argparse.Namespace):
    """The dataset of ``args.dataset`` and its w_n over ``args.iterations``."""
    from tomography.dataset import read_measurement
    from tomography.weights import mean_weights

    m = read_measurement(args.dataset)
    W = mean_weights(m, getattr(args, "iterations", None))
    probes = not m.iteration_ids and m.probes is not None
    if hasattr(args, "linkage") and args.linkage is None:
        args.linkage = "sum" if probes else "thesis"
    if probes:
        print(f"note: {m.meta.get('method', 'probe')} dataset: the edge weight is the measured "
              "bandwidth in Mbit/s (median over repeats, mean of the two directions); "
              f"clusters are combined by {args.linkage if hasattr(args, 'linkage') else 'sum'}"
              " (--linkage)", file=sys.stderr)
    return m, W


def hierarchy(args: argparse.Namespace, W: Any, hosts: list[str]):
    """The averaged-edge hierarchy of ``W`` with the options in ``args``."""
    from cluster.averaged_edge import averaged_edge_hierarchy

    return averaged_edge_hierarchy(W, hosts, linkage=args.linkage, start=args.start,
                                   loops=getattr(args, "loops", 0.5), engine=args.engine,
                                   resolution=args.resolution, restarts=args.restarts,
                                   seed=args.seed)


def truth(args: argparse.Namespace, m: Any) -> dict[str, str]:
    """The ground truth ``--truth`` names: hosts.csv's labels or a CSV file; may be empty."""
    from tomography.truth import read_truth_file

    return m.labels if args.truth == "labels" else read_truth_file(args.truth)


def full_truth(args: argparse.Namespace, m: Any) -> dict[str, str]:
    """:func:`truth`, refused unless it labels every host of the dataset ``m``."""
    from tomography.errors import TomographyError

    labels = truth(args, m)
    if not labels:
        raise TomographyError("no ground truth: hosts.csv has no labels; give --truth FILE "
                              "(a CSV with columns host,label)")
    missing = [h for h in m.host_names if h not in labels]
    if missing:
        raise TomographyError(f"the ground truth has no label for host {missing[0]!r} "
                              f"({len(missing)} of {m.n_hosts} hosts unlabelled)")
    return labels


def emit(text: str) -> None:
    """Print ``text`` to stdout with exactly one final newline."""
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
