"""A planner's absolute figures, measured with a few iperf3 tests once the clusters are known.

The broadcasts find which hosts form bandwidth clusters and how the clusters
group (the hierarchy); they do not say what a link carries.  A planner needs
that: the hosts' capacity, each cluster pair's bandwidth, and which pairs
share a link.  Hosts of a bandwidth cluster are alike, so one representative
of each cluster (and of each group of clusters) stands for all, and the
tests grow with the clusters, not the hosts.  On the tree of clusters (the
clusters, the groups of them on the hierarchy's higher levels, the whole
network):

``host``
    In each cluster of two hosts or more, its second-last host to its last
    (hosts the ``pair`` tests leave free): the hosts' capacity (the path
    inside a cluster is its hosts' network cards).
``out``, ``in``
    For each node with siblings, up to ``MAX_FLOWS`` flows side by side from
    its hosts to its siblings' hosts (``out``) and back (``in``; with one
    sibling, the sibling's ``out``).  Together they get the node's local
    capacity; when a group's flows get less than its clusters could send, its
    pairs share a link of that capacity (the concurrency test, once per node
    of the tree instead of once per two clusters).
``pair``
    One flow alone between every two top-level nodes: what one connection
    gets across the widest links.

Flows side by side (``out``, ``in``) and the flows alone between top-level
nodes (``pair``) run for ``duration`` seconds (:data:`DURATION`); a flow
inside a cluster (``host``) half as long (:func:`single_duration`).  A flow
alone across a slow link with a deep queue loses much of its first second
to slow start: on emulated regions-3 (8 Mbit/s between the regions) iperf3
read 4.5-7.0 Mbit/s in 1 s tests, 7.65 in 2 s and 3 s tests.

Where the broadcasts were traced, their trace stands for the ``out`` and
``in`` tests of every node whose link they filled (:data:`TRUST_SHARE`,
:data:`ALONE_FLOOR`):
the flows alone run first, then only the flows side by side the trace
cannot replace.  On two sites of two clusters that leaves 2 rounds of 6.

:func:`figure_tests` chooses the tests and their rounds (pure; tested
without a network), :func:`run_figures` runs them on any launcher and writes
``figures/`` in the broadcast dataset
(:mod:`tomography.model.dataset.figures`);
:func:`tomography.export.bandwidth.from_figures` turns them into a model.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Collection, Mapping, Sequence

import pandas as pd

from measure.mesh import MeshOptions, _start
from measure.probetools import FIGURES_DURATION, single_duration
from measure.session import Run
from measure.transport import Launcher, Transport, local
from tomography.export.bandwidth.figures import ROOT, alone_across, figure_tree
from tomography.export.bandwidth.trace_peaks import WINDOW, node_peaks
from tomography.model.dataset import read_trace
from tomography.model.dataset.figures import FIGURES_DIR, FiguresWriter
from tomography.model.errors import ParameterError

__all__ = ["FigureTest", "figure_tests", "run_figures", "single_duration", "MAX_FLOWS",
           "DURATION"]

MAX_FLOWS = 8
"""Flows side by side in an ``out`` or ``in`` test, at most."""

DURATION = FIGURES_DURATION
"""Seconds of a test of flows side by side (whole seconds, iperf3's ``-t``)."""

SIDE_BY_SIDE = ("out", "in")
"""The kinds of test whose flows run side by side (the others are one flow alone)."""

TRUST_SHARE = 0.5
"""A node's busiest second out and in of the broadcasts' trace stand for its tests of flows
side by side when both are at most this share of what its hosts' cards carry together: a
link, not the cards, held the broadcasts back, and their many connections filled it (on the
emulated trees of clusters: 0.85-1.16 of the link, against iperf3's 0.87-1.01).  A node
nearer its cards may have been held back by libtorrent, which fills 0.6-0.9 of a card."""

ALONE_FLOOR = 0.8
"""A node's trace figure below this share of what one flow alone got across its link (the
``pair`` tests) is not the link's capacity, which carries at least that flow: the
broadcasts never filled it in any window (a short demo's broadcasts read a 10 Mbit/s site
link at 6.4, where the flow alone got 9.6).  On the emulated trees of clusters the trace
read the links at 0.81-1.17 of the flow alone."""

LATE = 0.4
"""Seconds a test of flows side by side may last beyond its duration (its window less the
duration: how far apart its flows began moving data).  Beyond, a flow began late (a
connection request lost and sent again a second later) and went on alone once the others
had ended, held back by its own path: the link was idle in part of the window, and the
test's bytes over it understate what the link carries (measured on emulated GridLab, seven
flows out of one host, 1.47 MiB/s: 1.18-1.21 in windows 0.5-0.7 s too long, 1.43-1.55
within 0.2 s).  Such a test runs again."""

RETRIES = 2
"""Times a test of flows side by side runs again when it lasted too long (:data:`LATE`);
the attempt closest to its duration counts."""


@dataclass(frozen=True)
class FigureTest:
    """Flows that run at once, and what they measure.

    Attributes
    ----------
    kind : {"host", "pair", "out", "in"}
    node : str
        The cluster or group measured (``pair``: the sending cluster).
    flows : tuple of (src, dst, src_cluster, dst_cluster)
    """

    kind: str
    node: str
    flows: tuple[tuple[str, str, str, str], ...]

    def duration(self, side_by_side: int = DURATION) -> int:
        """Its seconds: ``side_by_side`` for flows side by side and a flow alone between
        top-level nodes, :func:`single_duration` of it for a flow inside a cluster."""
        return single_duration(side_by_side) if self.kind == "host" else side_by_side


def figure_tests(clusters: Mapping[str, Sequence[str]],
                 groups: Mapping[str, Sequence[str]] | None = None, *,
                 max_flows: int = MAX_FLOWS, side_by_side: Collection[str] | None = None,
                 alone: bool = True) -> list[list[FigureTest]]:
    """The tests that measure a planner's figures, in rounds of tests that run at once.

    Parameters
    ----------
    clusters : mapping
        Cluster name -> its hosts.
    groups : mapping, optional
        Each group of clusters above them (the hierarchy's higher levels, the
        whole network left out) -> its clusters.
    max_flows : int
        Flows side by side in an ``out`` or ``in`` test.
    side_by_side : collection of str, optional
        The nodes whose ``out`` and ``in`` tests to run (default: every
        node).  Of two siblings, both run their ``out`` test if one is named
        (one's flows out are the other's in).
    alone : bool
        Also the tests of one flow alone (``host``, ``pair``).

    Returns
    -------
    list of list of FigureTest
        Rounds; the tests of a round share no host and no link of the tree
        of clusters (either way: a flow the other way slows a test down, its
        acknowledgements queue behind the data), and run at once.

    Examples
    --------
    Two sites of two clusters: the sites' link, out of each site in turn;
    inside both sites at once; one flow alone each way across, the hosts
    beside the first:

    >>> clusters = {c: [f"{c}-0{i}" for i in range(3)] for c in ("w1", "w2", "e1", "e2")}
    >>> rounds = figure_tests(clusters, {"w": ["w1", "w2"], "e": ["e1", "e2"]})
    >>> [sorted((t.kind, t.node) for t in r) for r in rounds]  # doctest: +NORMALIZE_WHITESPACE
    [[('out', 'e')], [('out', 'w')], [('out', 'e1'), ('out', 'w1')],
     [('out', 'e2'), ('out', 'w2')],
     [('host', 'e1'), ('host', 'e2'), ('host', 'w1'), ('host', 'w2'), ('pair', 'e')],
     [('pair', 'w')]]
    >>> [f[:2] for f in rounds[2][0].flows]
    [('w1-00', 'w2-02'), ('w1-01', 'w2-01'), ('w1-02', 'w2-00')]
    >>> [max(t.duration() for t in r) for r in rounds]   # seconds: the hosts' tests run 1
    [2, 2, 2, 2, 2, 2]

    Two clusters of ten: the hosts' tests beside the flows out, on hosts
    those leave free:

    >>> big = {c: [f"{c}-{i}" for i in range(10)] for c in ("a", "b")}
    >>> [sorted((t.kind, t.node) for t in r) for r in figure_tests(big)]
    [[('host', 'a'), ('out', 'a')], [('host', 'b'), ('out', 'b')], [('pair', 'a')], [('pair', 'b')]]

    The flows alone first, then only the site ``e``'s link side by side (with its sibling's):

    >>> [sorted((t.kind, t.node) for t in r)
    ...  for r in figure_tests(clusters, {"w": ["w1", "w2"], "e": ["e1", "e2"]},
    ...                        side_by_side=())]  # doctest: +NORMALIZE_WHITESPACE
    [[('host', 'e1'), ('host', 'e2'), ('host', 'w1'), ('host', 'w2'), ('pair', 'e')],
     [('pair', 'w')]]
    >>> [sorted((t.kind, t.node) for t in r)
    ...  for r in figure_tests(clusters, {"w": ["w1", "w2"], "e": ["e1", "e2"]},
    ...                        side_by_side={"e"}, alone=False)]
    [[('out', 'e')], [('out', 'w')]]
    """
    names = list(clusters)
    if len(names) < 2:
        raise ParameterError("figures need two clusters or more: with one there is no pair "
                             "to measure")
    members, children = figure_tree(names, groups)
    hosts = {c: sorted(hs) for c, hs in clusters.items()}

    def interleaved(lists: list[list[str]]) -> list[str]:
        """The first of each list, then the second of each, ..."""
        return [h for i in range(max(map(len, lists))) for hs in lists for h in hs[i:i + 1]]

    def spread(node: str, last: bool = False) -> list[str]:
        """The hosts of a node, one of each of its clusters in turn (from the last host)."""
        return interleaved([hosts[c][::-1] if last else hosts[c] for c in names
                            if c in members[node]])

    where = {h: c for c, hs in hosts.items() for h in hs}
    tests = [FigureTest("host", c, ((hs[-2], hs[-1], c, c),)) for c, hs in hosts.items()
             if len(hs) > 1 and alone]
    for parent, kids in children.items():
        if len(kids) < 2:
            continue
        for kid in kids:   # flows side by side out of it, and into it, from its siblings
            if side_by_side is not None and kid not in side_by_side and not (
                    len(kids) == 2 and set(kids) & set(side_by_side)):
                continue
            sources = spread(kid)
            there = interleaved([spread(other, last=True) for other in kids if other != kid])
            count = min(max_flows, len(there))
            out = tuple((sources[i % len(sources)], there[i]) for i in range(count))
            for kind, flows in (("out", out), ("in", tuple((d, s) for s, d in out))):
                if kind == "in" and len(kids) == 2:
                    continue    # two siblings: one's flows out are the other's in
                tests.append(FigureTest(kind, kid, tuple(
                    (s, d, where[s], where[d]) for s, d in flows)))
        if parent == ROOT and alone:  # one flow alone across the widest links
            first = {kid: spread(kid)[0] for kid in kids}
            tests += [FigureTest("pair", a, ((first[a], first[b], where[first[a]],
                                              where[first[b]]),))
                      for a in kids for b in kids if a != b]
    above = {c: [x for x, mine in members.items() if c in mine and x != ROOT] for c in names}

    def uses(test: FigureTest) -> set[str]:
        links: set[str] = set()
        for _, _, a, b in test.flows:
            links |= set(above[a]) ^ set(above[b])
        if test.kind == "host":
            links = {f"inside {test.node}"}
        return links | {f"host {h}" for flow in test.flows for h in flow[:2]}

    # first fit, the tests that use the most first: few rounds
    rounds: list[tuple[list[FigureTest], set[str]]] = []
    for test in sorted(tests, key=lambda t: -len(uses(t))):
        need = uses(test)
        for tests_of, used in rounds:
            if not need & used:
                tests_of.append(test)
                used |= need
                break
        else:
            rounds.append(([test], need))
    return [r for r, _ in rounds]


def _reversed(flows: list[tuple[str, str]]) -> frozenset[tuple[str, str]]:
    """The flows to run from a server on their sender (iperf3 ``-R``): those into a host that
    receives several at once, which serves one test at a time.

    Examples
    --------
    >>> sorted(_reversed([("a", "x"), ("b", "x"), ("c", "y")]))
    [('a', 'x'), ('b', 'x')]
    """
    into: dict[str, int] = {}
    for _, d in flows:
        into[d] = into.get(d, 0) + 1
    return frozenset((s, d) for s, d in flows if into[d] > 1)


def _window(rows: list[dict[str, Any]]) -> float | None:
    """The time a test's flows moved data in: first start to last end, less the least time a
    flow took beyond its own measured seconds (starting iperf3, connecting, reporting).

    The least, not the usual: the flows that connect first fill the link's queue, and the
    others' connections then wait on it (on emulated GridLab, 0.3-0.45 s longer with 88 ms
    queues), so the first flows move data alone meanwhile.  Their time alone is part of the
    window; the usual flow's extra time would leave it out and read the link 10-17 % high.

    Examples
    --------
    >>> _window([{"start": 0.0, "end": 2.1, "duration_s": 2.0},
    ...          {"start": 0.3, "end": 2.4, "duration_s": 2.0}])
    2.3
    >>> _window([{"start": 0.0, "end": 2.1, "duration_s": 2.0},   # the others 0.35 s later
    ...          {"start": 0.0, "end": 2.45, "duration_s": 2.0},
    ...          {"start": 0.0, "end": 2.45, "duration_s": 2.0}])
    2.35
    """
    done = [r for r in rows if r.get("duration_s") is not None and "end" in r
            and not r.get("error")]
    if not done:
        return None
    extra = min(r["end"] - r["start"] - float(r["duration_s"]) for r in done)
    span = max(r["end"] for r in done) - min(r["start"] for r in done)
    return round(max(span - max(extra, 0.0), max(float(r["duration_s"]) for r in done)), 4)


def run_figures(hosts: pd.DataFrame | Sequence[tuple[str, str, str]], dataset: str | Path,
                clusters: Mapping[str, Sequence[str]],
                groups: Mapping[str, Sequence[str]] | None = None, *, level: int = 1,
                launch: Launcher | Transport = local, duration: int = DURATION,
                max_flows: int = MAX_FLOWS, meta: dict[str, Any] | None = None,
                overwrite: bool = False, keep_transport: bool = False,
                progress: Callable[[int, int], None] | None = None) -> Path:
    """Measure a planner's figures among ``hosts`` and write them into ``dataset/figures``.

    When the broadcasts were traced (``trace.csv``), the flows alone run
    first; then a node's flows side by side run only where the trace cannot
    stand for them: a node whose busiest second out and in
    (:func:`tomography.export.bandwidth.trace_peaks.node_peaks`) is at most
    :data:`TRUST_SHARE` of what its hosts' cards carry (the ``host`` tests),
    and not below :data:`ALONE_FLOOR` of a flow alone across its link (the
    ``pair`` tests), had a link the broadcasts filled, and the trace's figures are recorded
    for it instead (``meta.json``, ``figures.trace``).

    Parameters
    ----------
    hosts : DataFrame or sequence of (host, address, label)
        The hosts of the clusters (the broadcast dataset's).
    dataset : path
        The broadcast dataset; its ``figures/`` is written (a probe dataset
        and ``figures.csv``).
    clusters, groups, max_flows
        As for :func:`figure_tests`.
    level : int
        The hierarchy level the clusters are (recorded).
    launch : callable or transport
        Where the probe agents run, as for :func:`measure.mesh.run_mesh`.
    duration : int
        Seconds of each iperf3 test of flows side by side, and of a flow alone
        between top-level nodes; a flow inside a cluster runs
        :func:`single_duration` of it.
    overwrite : bool
        Replace figures measured before.
    keep_transport : bool
        Leave the transport open for agents of another role once the figures are
        measured (a multicast after them on the same MPI ranks).
    progress : callable, optional
        ``progress(done, total)`` after each round.

    Returns
    -------
    Path
        The figures directory.
    """
    options = MeshOptions(duration=duration)
    options.validate()
    from measure.coordinator import host_frame

    frame = host_frame(hosts)
    wanted = {h for hs in clusters.values() for h in hs}
    missing = sorted(wanted - set(frame["host"]))
    if missing:
        raise ParameterError(f"the clusters name host {missing[0]!r}, which the run does not "
                             f"have ({len(missing)} missing)")
    peaks = _trace_peaks(Path(dataset), clusters, groups)
    if peaks is None:   # every test, in as few rounds as they fit
        phases = [figure_tests(clusters, groups, max_flows=max_flows)]
    else:               # the flows alone first: the hosts' cards say which peaks stand
        phases = [figure_tests(clusters, groups, max_flows=max_flows, side_by_side=())]
    out = Path(dataset) / FIGURES_DIR
    spec = {"clusters": {c: sorted(hs) for c, hs in clusters.items()},
            "groups": {g: list(cs) for g, cs in (groups or {}).items()}, "level": level,
            "duration_s": duration, "single_duration_s": single_duration(duration),
            "late_s": LATE, "retries": RETRIES,
            "rounds": len(phases[0]),
            "tests": sum(len(r) for r in phases[0])}
    with Run(out, resume=False, overwrite=overwrite, resumable=False) as run:
        _, mesh = _start(run, frame[frame["host"].isin(wanted)], options, launch,
                         {**(meta or {}), "figures": spec}, dict(vars(options)), overwrite,
                         False, unique=False)
        writer = FiguresWriter(run.path)
        done = _Rounds(mesh, writer, duration, progress)
        done.run(phases[0], len(phases[0]))
        if peaks is not None:
            trusted = _trusted(peaks, clusters, groups, done.inside(), done.alone)
            untested = set(figure_tree(list(clusters), groups)[0]) - {ROOT} - set(trusted)
            phases.append(figure_tests(clusters, groups, max_flows=max_flows,
                                       side_by_side=untested, alone=False))
            spec.update(rounds=sum(map(len, phases)), tests=sum(len(r) for p in phases for r in p),
                        trace={"window_s": WINDOW, "trust_share": TRUST_SHARE,
                               "alone_floor": ALONE_FLOOR,
                               "out": {n: f[0] for n, f in sorted(trusted.items())},
                               "in": {n: f[1] for n, f in sorted(trusted.items())}})
            mesh.writer.update_meta(figures=spec)
            done.run(phases[1], spec["rounds"])
        writer.close()
        if keep_transport:   # the probe agents go, the transport stays for the next role
            agents, run.agents = run.agents, None
            agents.close(transport=False)
    return out


def _trace_peaks(dataset: Path, clusters: Mapping[str, Sequence[str]],
                 groups: Mapping[str, Sequence[str]] | None
                 ) -> tuple[dict[str, float], dict[str, float]] | None:
    """Each node's busiest second out and in from the dataset's trace; None without a trace,
    or when no node has only clusters of two hosts or more (whose cards a ``host`` test
    measures: a node of one host is its card, which the broadcasts do not fill)."""
    if not (dataset / "trace.csv").exists() or all(len(hs) < 2 for hs in clusters.values()):
        return None
    return node_peaks(read_trace(dataset), clusters, groups)


def _trusted(peaks: tuple[dict[str, float], dict[str, float]],
             clusters: Mapping[str, Sequence[str]], groups: Mapping[str, Sequence[str]] | None,
             inside: Mapping[str, float], alone: Sequence[tuple[str, str, float]] = ()
             ) -> dict[str, tuple[float, float]]:
    """The nodes whose trace figures (out, in) stand for their tests: every cluster of the node
    has its hosts' capacity measured, both figures are at most :data:`TRUST_SHARE` of what
    its hosts carry together, and neither is below :data:`ALONE_FLOOR` of a flow alone that
    crossed the node's link that way (``alone``: source cluster, destination cluster, bit/s):
    the link carries at least what one flow got, so a trace figure under it is a link the
    broadcasts did not fill.

    Examples
    --------
    A site of two clusters of five 100 Mbit/s hosts, its link read at 10 Mbit/s; its clusters
    read at 40 and at 300 Mbit/s out (their hosts' cards, not a link, held that back):

    >>> clusters = {"a": [f"a{i}" for i in range(5)], "b": [f"b{i}" for i in range(5)],
    ...             "c": ["c0", "c1"]}
    >>> peaks = ({"a": 4e7, "b": 3e8, "c": 1e7, "s": 1e7},
    ...          {"a": 4e7, "b": 4e7, "c": 1e7, "s": 1e7})
    >>> sorted(_trusted(peaks, clusters, {"s": ["a", "b"]}, {"a": 1e8, "b": 1e8, "c": 1e8}))
    ['a', 'c', 's']

    One flow alone from ``a`` to ``c`` got 15 Mbit/s, above what the trace read out of the
    site (and into ``c``): neither read a full link.

    >>> sorted(_trusted(peaks, clusters, {"s": ["a", "b"]}, {"a": 1e8, "b": 1e8, "c": 1e8},
    ...                 [("a", "c", 1.5e7)]))
    ['a']
    """
    members, _ = figure_tree(list(clusters), groups)
    leaving, entering = peaks
    trusted = {}
    for node, mine in members.items():
        if node == ROOT or node not in leaving:
            continue
        cards = sum(len(clusters[c]) * inside.get(c, float("nan")) for c in mine)
        floor = [ALONE_FLOOR * alone_across(alone, mine, out=way) for way in (True, False)]
        figures = (leaving[node], entering[node])
        if all(f == f and least <= f <= TRUST_SHARE * cards     # NaN: not trusted
               for f, least in zip(figures, floor)):
            trusted[node] = figures
    return trusted


class _Rounds:
    """Runs rounds of tests on a mesh, each test again while its flows did not overlap, and
    writes their flows; numbers tests and rounds on across calls."""

    def __init__(self, mesh: Any, writer: FiguresWriter, duration: int,
                 progress: Callable[[int, int], None] | None) -> None:
        self.mesh, self.writer, self.duration, self.progress = mesh, writer, duration, progress
        self.round = self.test = 0
        self.hosts: dict[str, list[float]] = {}
        self.alone: list[tuple[str, str, float]] = []   # the pair tests: src, dst cluster, rate

    def inside(self) -> dict[str, float]:
        """Each cluster's ``host`` test so far (bit/s)."""
        return {c: float(pd.Series(rates).median()) for c, rates in self.hosts.items()}

    def run(self, rounds: list[list[FigureTest]], total: int) -> None:
        """Run ``rounds``; ``total``: every round of the run, for the progress."""
        duration = self.duration
        for tests in rounds:
            kept: dict[FigureTest, tuple[float, float | None, list[tuple[Any, ...]]]] = {}
            todo = list(tests)
            for _ in range(1 + RETRIES):   # a test whose flows did not overlap runs again
                flows = [(s, d) for t in todo for s, d, _, _ in t.flows]
                seconds = {(s, d): t.duration(duration) for t in todo for s, d, _, _ in t.flows}
                rates = self.mesh.measure(flows, self.round, reverse=_reversed(flows),
                                          duration=seconds)
                for test in todo:
                    rows = [self.mesh.last.get((s, d), {}) for s, d, _, _ in test.flows]
                    window = _window(rows)
                    late = (window - test.duration(duration) if window is not None
                            else float("inf"))
                    if test not in kept or late < kept[test][0]:
                        kept[test] = (late, window, [(row, *rates.get((s, d), (None, "not run")))
                                                     for (s, d, _, _), row in
                                                     zip(test.flows, rows)])
                todo = [t for t in todo if t.kind in SIDE_BY_SIDE and kept[t][0] > LATE]
                if not todo:
                    break
            for test in tests:
                _, window, results = kept[test]
                for (s, d, a, b), (row, rate, error) in zip(test.flows, results):
                    self.writer.add({"round": self.round, "test": self.test, "kind": test.kind,
                                     "node": test.node, "src": s, "dst": d, "src_cluster": a,
                                     "dst_cluster": b, "bits_per_second": rate,
                                     "bytes": row.get("bytes") if rate is not None else None,
                                     "window_s": window, "error": error.replace("\n", " ")[:200]})
                    if test.kind == "host" and rate is not None:
                        self.hosts.setdefault(test.node, []).append(rate)
                    elif test.kind == "pair" and rate is not None:
                        self.alone.append((a, b, rate))
                self.test += 1
            self.round += 1
            if self.progress is not None:
                self.progress(self.round, total)
