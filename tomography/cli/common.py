"""Helpers shared by the ``tomography`` commands: option types, dataset loading, output."""

from __future__ import annotations

import argparse
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

__all__ = ["positive_int", "nonnegative_int", "add_analysis_options", "add_hierarchy_options",
           "add_tree_level_option", "load", "load_shared", "hierarchy", "tree_of", "weight_unit",
           "truth", "full_truth", "emit"]


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


def nonnegative_int(text: str) -> int:
    """An argparse type: an integer >= 0.

    Examples
    --------
    >>> nonnegative_int("0")
    0
    """
    return _at_least(text, 0, "an integer >= 0")


def _at_least(text: str, low: int, what: str) -> int:
    value = int(text)
    if value < low:
        raise argparse.ArgumentTypeError(f"must be {what}, got {text}")
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
    p.add_argument("--resamples", type=int, default=None, metavar="B",
                   help="resampled analyses for the confidence of every level, cluster and "
                        "tree edge (default 4: bootstrap over iterations, split halves below "
                        "4 iterations; 0: no confidence)")
    p.add_argument("--jobs", "-j", type=int, default=None, metavar="J",
                   help="processes for the independent analyses: resamples, a level's split "
                        "tests, evaluate's rows (default: every core on graphs of 50000 edges "
                        "or more, one below, where starting a process costs more than the "
                        "work; -1: every core); the result is the same for any J")


def add_hierarchy_options(p: argparse.ArgumentParser) -> None:
    """The options of the averaged-edge hierarchy (Eq 5.4/5.5)."""
    p.add_argument("--linkage", choices=("thesis", "mean", "sum"), default=None,
                   help="how collapsed clusters are weighted: mean over host pairs "
                        "(default for broadcasts); thesis: Eq 5.4/5.5 as written (sum over "
                        "min/max of the sizes; same levels, worse trees where cluster sizes "
                        "differ); sum: plain sum (default for probe datasets, whose "
                        "bandwidths add up)")
    p.add_argument("--start", choices=("refined", "best", "finest"), default="refined",
                   help="refined (default): Louvain's best partition plus the finer levels "
                        "that pass a permutation test; best: the thesis (can skip a fine "
                        "level); finest: Louvain's first level (fragments noisy data)")
    p.add_argument("--loops", type=float, default=0.5,
                   help="self-loop of a collapsed cluster, as a share of its strongest tie "
                        "to another cluster (default 0.5)")
    p.add_argument("--all-levels", action="store_true",
                   help="also show the unsupported levels (confidence below 0.5, or above "
                        "level 1 a gap below 1.3), marked unsupported")


def add_tree_level_option(p: Any, flag: str = "--level") -> None:
    """The hierarchy level a tree joins (``args.tree_level``)."""
    p.add_argument(flag, dest="tree_level", type=nonnegative_int, default=None, metavar="L",
                   help="the hierarchy level whose clusters the tree joins (default: the "
                        "level of Louvain's best partition, the method's flat clusters; 1 is "
                        "the finest; 0 joins the hosts themselves, for networks of one host "
                        "per router)")


def probe_dataset(m: Any) -> bool:
    """True for a probe mesh's dataset (pairwise bandwidths, no broadcasts)."""
    return not m.iteration_ids and m.probes is not None


def weight_unit(m: Any) -> str:
    """The unit of the dataset's ``w_n``: blocks per iteration, or Mbit/s for probes."""
    from tomography.units import WEIGHT_UNITS

    return WEIGHT_UNITS["probe" if probe_dataset(m) else "broadcast"]


def tree_of(args: argparse.Namespace, m: Any, W: Any, h: Any, sampler: Any = None):
    """The tree of ``h``'s level ``args.tree_level`` (with edge confidences when sampled)."""
    from cluster.spanning_tree import hierarchy_tree

    t = hierarchy_tree(W, h, args.tree_level, hosts=m.host_names, linkage=args.linkage)
    if sampler is not None:
        from cluster.confidence import DEFAULT_RESAMPLES, tree_confidence

        t = tree_confidence(t, sampler, resamples=args.resamples or DEFAULT_RESAMPLES,
                            seed=args.seed, n_jobs=args.jobs)
    t.params.update(iterations=args.iterations, weight_unit=weight_unit(m))
    return t


def exchanged(m: Any, dataset: Any) -> None:
    """Refuse a dataset where no two hosts exchanged anything: nothing to cluster."""
    from tomography.errors import DatasetError

    if m.iteration_ids and int(m.transfers["blocks"].sum()) == 0:
        raise DatasetError("every block count is 0: no two hosts exchanged a block, so there "
                           "is nothing to cluster", path=Path(dataset) / "transfers.csv",
                           field="blocks")
    if probe_dataset(m) and not (m.probes["bits_per_second"] > 0).any():
        raise DatasetError("every bandwidth is 0: nothing to cluster",
                           path=Path(dataset) / "probes.csv", field="bits_per_second")


def load(args: argparse.Namespace, measurement: Any = None):
    """The dataset of ``args.dataset`` (or ``measurement``) and its w_n over ``args.iterations``."""
    from cluster.averaged_edge import DEFAULT_LINKAGE
    from tomography.dataset import read_measurement
    from tomography.weights import mean_weights

    m = measurement if measurement is not None else read_measurement(args.dataset)
    exchanged(m, args.dataset)
    W = mean_weights(m, getattr(args, "iterations", None))
    probes = probe_dataset(m)
    if hasattr(args, "linkage") and args.linkage is None:
        args.linkage = "sum" if probes else DEFAULT_LINKAGE
    if probes:
        print(f"note: {m.meta.get('method', 'probe')} dataset: the edge weight is the measured "
              "bandwidth in Mbit/s (median over repeats, mean of the two directions); "
              f"clusters are combined by {args.linkage if hasattr(args, 'linkage') else 'sum'}"
              " (--linkage)", file=sys.stderr)
    return m, W


def load_shared(args: argparse.Namespace):
    """The dataset, its ``w_n`` as a shared graph, and the sampler of its iterations.

    The sampler is None when there is no confidence to measure: ``--resamples
    0``, a probe dataset, or a single iteration (a note says why).
    """
    from cluster.adjacency import SharedGraph
    from cluster.averaged_edge import DEFAULT_LINKAGE
    from cluster.confidence import IterationSampler

    resamples = getattr(args, "resamples", None)
    if resamples is not None and resamples < 0:
        raise ValueError(f"--resamples must be >= 0, got {resamples}")
    from tomography.dataset import read_measurement

    m = read_measurement(args.dataset)
    exchanged(m, args.dataset)
    if probe_dataset(m):
        m, W = load(args, measurement=m)
        return m, SharedGraph(W, m.host_names), None
    n = getattr(args, "iterations", None)
    if n is not None and not 1 <= n <= len(m.iteration_ids):
        load(args, measurement=m)    # the same error as every other command
    if "complete" in m.iterations and not m.iterations["complete"].all():
        from tomography.units import counted

        bad = int((~m.iterations["complete"].astype(bool)).sum())
        print(f"note: {bad} of {counted(len(m.iterations), 'iteration')} "
              f"{'is' if bad == 1 else 'are'} incomplete (a time limit or a lost peer); their "
              "counts are in w_n (tomography info lists them)", file=sys.stderr)
    if hasattr(args, "linkage") and args.linkage is None:
        args.linkage = DEFAULT_LINKAGE
    sampler = IterationSampler.from_measurement(m, n=n)
    if resamples == 0:
        return m, sampler.graph, None
    if sampler.n_iterations < 2:
        print("note: one iteration cannot be resampled: no confidence (measure at least 2)",
              file=sys.stderr)
        return m, sampler.graph, None
    return m, sampler.graph, sampler


def hierarchy(args: argparse.Namespace, W: Any, hosts: list[str], sampler: Any = None):
    """The averaged-edge hierarchy of ``W`` with the options in ``args``.

    With a sampler, each level gets its confidence and, unless
    ``--all-levels``, the unsupported levels are left out.
    """
    from cluster.averaged_edge import averaged_edge_hierarchy

    h = averaged_edge_hierarchy(W, hosts, linkage=args.linkage, start=args.start,
                                loops=getattr(args, "loops", 0.5), engine=args.engine,
                                resolution=args.resolution, restarts=args.restarts,
                                seed=args.seed, n_jobs=getattr(args, "jobs", None))
    if sampler is None:
        return h
    from cluster.confidence import DEFAULT_RESAMPLES, with_support

    return with_support(h, sampler, resamples=args.resamples or DEFAULT_RESAMPLES,
                        all_levels=getattr(args, "all_levels", False), seed=args.seed,
                        n_jobs=args.jobs)


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


def add_host_connections_option(p: argparse.ArgumentParser, default: str) -> None:
    """``--host-connections K``: the connections that share a host's NIC in a broadcast."""
    p.add_argument("--host-connections", type=positive_int, metavar="K",
                   help="connections sharing a host's NIC in a broadcast: a partition that "
                        "splits a link giving a connection more than the NIC / K is marked "
                        f"unobservable (default: {default}; 1: the NIC unshared, the model "
                        "as the thesis published it)")


def swarm_connections(meta: dict[str, Any]) -> int:
    """Connections per host of the swarm that measured a dataset (its recorded parameters).

    Examples
    --------
    >>> swarm_connections({"method": "simulated", "params": {"upload_slots": 8}})
    9
    >>> swarm_connections({"method": "bittorrent", "params": {"upload_slots": 8}})
    8
    >>> swarm_connections({"method": "iperf3"})
    8
    """
    from tomography.ground_truth import HOST_CONNECTIONS

    params = meta.get("params") or {}
    slots = params.get("upload_slots")
    if not isinstance(slots, int) or isinstance(slots, bool) or slots < 1:
        return HOST_CONNECTIONS
    if meta.get("method") == "simulated":   # the simulator's optimistic slot comes on top
        return slots + 1
    if params.get("tit_for_tat") is False:  # libtorrent without a slot limit: every peer listed
        return max(slots, int(params.get("peer_list") or slots))
    return slots


def observable_truths(args: argparse.Namespace, m: Any) -> tuple[Any, int, str]:
    """The topology to check the truth's observability against, ``K``, and a note if none.

    Without ``--topology`` a topology that cannot be used is a note; with it, an error.
    """
    from tomography.topology import TopologyError, parse_topology, read_topology

    k = args.host_connections or swarm_connections(m.meta)

    def unchecked(text: str) -> tuple[None, int, str]:
        if args.topology:
            raise TopologyError(text, path=args.topology)
        return None, k, text

    name = args.topology or m.meta.get("topology")
    model = m.meta.get("topology_model")      # the simulator records the whole topology
    if not name and not isinstance(model, dict):
        return unchecked("no topology in meta.json (give --topology to mark unobservable "
                         "levels)")
    try:
        topo = (parse_topology(model, source="meta.json topology_model")
                if isinstance(model, dict) and not args.topology else read_topology(name))
    except (TopologyError, OSError) as exc:
        if args.topology:
            raise
        return unchecked(f"topology {name!r} not found ({exc}); give --topology FILE")
    if not topo.is_tree:
        return unchecked(f"topology {topo.name!r} has cycles: the ground-truth model needs a "
                         "tree of routers")
    missing = [h for h in m.host_names if h not in {h.name for h in topo.hosts}]
    if missing:
        return unchecked(f"host {missing[0]!r} of the dataset is not in topology "
                         f"{topo.name!r} ({len(missing)} hosts missing)")
    return topo, k, ""


def command(sub: Any, name: str, summary: str, description: str,
            examples: list[str]) -> argparse.ArgumentParser:
    """A sub-command with its one-line summary, a description and examples in ``--help``."""
    return sub.add_parser(name, help=summary, description=textwrap.fill(description, 78),
                          epilog="examples:\n" + "\n".join(f"  {e}" for e in examples),
                          formatter_class=argparse.RawDescriptionHelpFormatter)


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
        if getattr(self.stream, "isatty", lambda: False)():
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc=desc, unit=unit, file=self.stream)

    def set(self, done: int, *, total: int | None = None, note: str = "") -> None:
        """``done`` units of ``total`` (a new total if given), with a short note."""
        self.done, self.note = done, note
        if total is not None:
            self.total = total
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
        elif self.done and self.printed != self.done:
            self._line(self._clock())
