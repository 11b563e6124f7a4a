"""Our hierarchy and flat clustering against community-detection libraries.

Every method gets the same edge weights, ``w_n`` of
:func:`tomography.model.weights.mean_weights`, and its levels (finest first) are
scored the same way, with :func:`cluster.accuracy.hierarchy_nmi`: level 1
against the full truth labels, level 2 against the labels one part shorter,
and so on.  The methods:

``ours``
    :func:`cluster.averaged_edge.averaged_edge_hierarchy` with its defaults:
    the algorithm itself, every level, on the same ``w_n`` as the others.
``ours, shown``
    The hierarchy as ``tomography hierarchy`` reports it: the ``hierarchy``
    of :func:`tomography.analyze` (seed 0), each level with its confidence
    and the unsupported levels left out.
``louvain``
    :func:`cluster.louvain.louvain`, flat (one level).
``leiden``
    ``leidenalg`` (modularity, weighted, ``n_iterations=-1``), flat.
``leiden-rec``
    The same applied recursively: the flat partition is the top; each
    cluster of at least :data:`REC_MIN_SIZE` hosts is partitioned again by
    Leiden on its induced subgraph, and the split is kept when it has at
    least two parts and a weighted modularity (on the subgraph) of at least
    :data:`REC_MIN_Q` (0.3, the value above which Clauset, Newman and Moore
    2004 call community structure significant); repeated until nothing
    splits.  Level ``r`` from the top is the partition after ``r`` rounds of
    splitting (clusters that did not split stay whole).
``infomap``
    ``infomap`` (multi-level, undirected, weighted, one trial); the levels
    are the depths of its module tree (hosts of a shallower branch keep
    their deepest module).
``paris``
    ``sknetwork.hierarchy.Paris`` (deterministic); the dendrogram is cut at
    each gap where the merge distance grows by a factor of at least
    :data:`PARIS_MIN_GAP` (1.25) from one merge to the next, among the cuts
    that leave between 2 and ``n / 4`` clusters; with no such gap, at the
    single largest gap there.  One cut per level.
``nsbm``
    graph-tool's nested stochastic block model
    (``minimize_nested_blockmodel_dl``, degree-corrected, the weights as a
    ``real-exponential`` edge covariate), run by the system Python (Debian's
    ``python3-graph-tool``) in a subprocess with ``OMP_NUM_THREADS=1``; its
    time is measured inside that process, without the interpreter start,
    the import and the transfer of the weights.  graph-tool 2.45's answer
    still varies from run to run (seen on 256 hosts: level 1 of 7, 8 or 9
    blocks) although every seed is set (``seed_rng``, NumPy, ``random``,
    one OpenMP thread, ``PYTHONHASHSEED``).

For every method a level of one cluster (the whole network) or of only
singletons is dropped, and so is a level equal to the one below it.

Cases: planted hierarchies (:func:`tomography.model.synthetic.planted_hierarchy`)
of five shapes at noise 0.5 and 1.0 and 3 and 10 iterations, and the
simulated reference networks N1 and N2 (the simulator's defaults, seed 0,
cached under ``benchmarks/_data/simulated`` and shared with
``benchmarks/hierarchy_defaults.py``).  Times are wall-clock seconds per method,
the best of up to three runs (runs are repeated only while they are short).

Run::

    .venv/bin/python benchmarks/community_libraries.py              # ~15 min on 2 cores
    .venv/bin/python benchmarks/community_libraries.py --quick      # two small cases, < 1 min
    .venv/bin/python benchmarks/community_libraries.py --nsbm some  # nested SBM on fewer cases
    .venv/bin/python benchmarks/community_libraries.py --nsbm none  # no graph-tool, ~2 min

The Markdown goes to stdout and to ``/tmp/communities.md`` (``--output``).
It needs the optional packages ``leidenalg``, ``infomap`` and
``scikit-network`` in the virtualenv, and ``python3-graph-tool`` (Debian)
for the nested SBM.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np
from scipy import sparse

from bench_support import machine_line, simulated_dataset   # benchmarks/ is the script's directory
from cluster.accuracy import hierarchy_nmi, nmi
from cluster.averaged_edge import averaged_edge_hierarchy
from cluster.adjacency import igraph_graph
from cluster.louvain import louvain
from tomography import analyze
from tomography.model.dataset import Measurement, read_measurement
from tomography.model.hierarchy import Hierarchy
from tomography.model.synthetic import planted_hierarchy
from tomography.model.truth_labels import labels_at_depth, truth_depth
from tomography.model.weights import mean_weights

if TYPE_CHECKING:
    import igraph

SEED = 0
"""Seed of every method and every synthetic case (Infomap's must be >= 1: SEED + 1)."""
REC_MIN_Q = 0.3
"""Recursive Leiden keeps a split whose modularity on the subgraph is at least this."""
REC_MIN_SIZE = 8
"""Recursive Leiden does not split clusters smaller than this."""
PARIS_MIN_GAP = 1.25
"""Paris is cut where the merge distance grows by at least this factor."""
NSBM_TIMEOUT = 300.0
"""Seconds after which one nested-SBM run is abandoned."""
SYSTEM_PYTHON = "/usr/bin/python3"
"""The interpreter that has Debian's graph-tool."""
MISSING = "—"

Levels = list[np.ndarray]
"""Host labels per level, finest first, in ``m.host_names`` order."""


@dataclass
class Case:
    """One measurement to cluster.

    Attributes
    ----------
    name : str
        Label of the case in the table.
    make : callable
        Returns the :class:`Measurement` (its ``labels`` are the truth).
    slow : bool
        Whether the (slow) nested SBM skips this case under ``--nsbm some``.
    """

    name: str
    make: Callable[[], Measurement]
    slow: bool = False


@dataclass
class Result:
    """What one method found on one case.

    Attributes
    ----------
    method : str
    levels : list of int
        Clusters per level, finest first (empty when the method failed).
    nmi : list of float
        NMI of each level against the matching truth depth.
    best : list of float
        Per truth depth (deepest first), the highest NMI of any level.
    seconds : float or None
    note : str
        Why the method did not run, if it did not.
    """

    method: str
    levels: list[int] = field(default_factory=list)
    nmi: list[float] = field(default_factory=list)
    best: list[float] = field(default_factory=list)
    seconds: float | None = None
    note: str = ""


# ---------------------------------------------------------------------------
# helpers


def clean_levels(levels: Sequence[Sequence[int]], n: int) -> Levels:
    """Drop trivial and repeated levels.

    Parameters
    ----------
    levels : sequence of sequences of int
        Host labels per level, finest first.
    n : int
        Number of hosts.

    Returns
    -------
    list of ndarray
        The levels with more than one cluster and fewer than ``n``, each
        different from the one kept below it.

    Examples
    --------
    >>> [x.tolist() for x in clean_levels([[0, 1, 2], [0, 0, 1], [5, 5, 6], [0, 0, 0]], 3)]
    [[0, 0, 1]]
    """
    out: Levels = []
    for level in levels:
        codes = np.unique(np.asarray(level), return_inverse=True)[1].ravel()
        k = int(codes.max()) + 1 if codes.size else 0
        if k <= 1 or k >= n:
            continue
        if out and k == len(np.unique(out[-1])) and _same_partition(out[-1], codes):
            continue
        out.append(codes)
    return out


def _same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two label arrays define the same partition."""
    pairs = np.unique(np.column_stack([a, b]), axis=0)
    return len(pairs) == len(np.unique(a)) == len(np.unique(b))


def timed(run: Callable[[], Levels], repeats: int = 3, short: float = 2.0
          ) -> tuple[Levels, float]:
    """Run a method, repeating it while it is short, and keep the best time.

    Parameters
    ----------
    run : callable
        Returns the levels; it must be deterministic (seeded).
    repeats : int, default 3
        Most runs.
    short : float, default 2.0
        Another run is made only while the total so far is below this (s).

    Returns
    -------
    levels : list of ndarray
        The first run's result.
    seconds : float
        The shortest wall-clock time.
    """
    best, result, total = float("inf"), None, 0.0
    for i in range(repeats):
        start = time.perf_counter()
        out = run()
        elapsed = time.perf_counter() - start
        best, total = min(best, elapsed), total + elapsed
        if i == 0:
            result = out
        if total >= short:
            break
    return result, best


# ---------------------------------------------------------------------------
# methods: each takes (W, hosts) and returns host labels per level, finest first


def run_ours(W: sparse.sparray, hosts: list[str]) -> Levels:
    """Our averaged-edge hierarchy, default options.

    Parameters
    ----------
    W : scipy sparse array
        ``w_n`` in ``hosts`` order.
    hosts : list of str

    Returns
    -------
    list of ndarray
        Host labels per level, finest first, in ``hosts`` order.
    """
    h = averaged_edge_hierarchy(W, hosts, seed=SEED)
    return [h.labels(k, hosts) for k in range(1, h.depth + 1)]


def run_ours_shown(m: Measurement, W: sparse.sparray, hosts: list[str]) -> Levels:
    """Our hierarchy as ``tomography hierarchy`` reports it: :func:`tomography.analyze`'s,
    the levels its confidence and gap support.

    Parameters
    ----------
    m : Measurement
        The dataset of ``W``: the analysis takes ``w_n`` of all its iterations
        and resamples them.
    W : scipy sparse array
        Not used (the analysis makes its own ``w_n``, the same); the methods' signature.
    hosts : list of str

    Returns
    -------
    list of ndarray
    """
    h = analyze(m, seed=SEED).hierarchy
    return [h.labels(k, hosts) for k in range(1, h.depth + 1)]


def run_louvain(W: sparse.sparray, hosts: list[str]) -> Levels:
    """Our flat Louvain (igraph engine, best level).

    Parameters
    ----------
    W : scipy sparse array
    hosts : list of str

    Returns
    -------
    list of ndarray
        One level.
    """
    return [louvain(W, seed=SEED).labels]


def _leiden(g: igraph.Graph, seed: int) -> np.ndarray:
    """Leiden modularity partition of a weighted igraph graph."""
    import leidenalg

    part = leidenalg.find_partition(g, leidenalg.ModularityVertexPartition, weights="weight",
                                    n_iterations=-1, seed=seed)
    return np.asarray(part.membership)


def run_leiden(W: sparse.sparray, hosts: list[str]) -> Levels:
    """Flat Leiden (``leidenalg``, modularity, weighted, seeded).

    Parameters
    ----------
    W : scipy sparse array
    hosts : list of str

    Returns
    -------
    list of ndarray
        One level.
    """
    return [_leiden(igraph_graph(W), SEED)]


def run_leiden_recursive(W: sparse.sparray, hosts: list[str], *, min_q: float = REC_MIN_Q,
                         min_size: int = REC_MIN_SIZE, max_rounds: int = 8) -> Levels:
    """Leiden applied again inside each cluster while the split is strong enough.

    Parameters
    ----------
    W : scipy sparse array
    hosts : list of str
    min_q : float, default :data:`REC_MIN_Q`
        Smallest weighted modularity (on the cluster's own subgraph) of a kept split.
    min_size : int, default :data:`REC_MIN_SIZE`
        Clusters with fewer hosts are not split.
    max_rounds : int, default 8
        Most rounds of splitting below the top.

    Returns
    -------
    list of ndarray
        Host labels per level, finest first.

    Notes
    -----
    leidenalg 0.12's ``partition.modularity`` ignores the edge weights (it
    equals igraph's unweighted modularity), so the modularity is computed
    by ``igraph.Graph.modularity`` with the weights.
    """
    g = igraph_graph(W)
    current = _leiden(g, SEED)
    rounds = [current]
    done: set[int] = set()   # clusters (labels of ``current``) tested and kept whole
    calls = 0
    for _ in range(max_rounds):
        new = current.copy()
        next_id = int(current.max()) + 1
        changed = False
        for c in np.unique(current):
            idx = np.flatnonzero(current == c)
            if int(c) in done or len(idx) < min_size:
                continue
            sub = g.induced_subgraph(idx.tolist())
            calls += 1
            split = _leiden(sub, SEED + calls)
            q = sub.modularity(split.tolist(), weights="weight") if sub.ecount() else 0.0
            if len(np.unique(split)) < 2 or q < min_q:
                done.add(int(c))
                continue
            codes = np.unique(split, return_inverse=True)[1].ravel()
            new[idx] = np.where(codes == 0, c, next_id + codes - 1)
            next_id += int(codes.max())
            changed = True
        if not changed:
            break
        # relabel compactly, carrying over which clusters are known to stay whole
        _, new_codes = np.unique(new, return_inverse=True)
        new_codes = new_codes.ravel()
        done = {int(new_codes[np.flatnonzero(new == old)[0]]) for old in
                {int(x) for x in new} if int(old) in done}
        current = new_codes
        rounds.append(current)
    return clean_levels(rounds[::-1], W.shape[0])


def run_infomap(W: sparse.sparray, hosts: list[str]) -> Levels:
    """Infomap's multi-level module tree (undirected, weighted, one trial, seeded).

    Parameters
    ----------
    W : scipy sparse array
    hosts : list of str

    Returns
    -------
    list of ndarray
        One level per depth of the module tree, finest first.
    """
    import infomap

    n = W.shape[0]
    im = infomap.Infomap(silent=True, seed=SEED + 1, num_trials=1, directed=False)
    upper = sparse.triu(W, k=1, format="coo")
    im.add_nodes(range(n))
    im.add_links(zip(upper.row.tolist(), upper.col.tolist(), upper.data.tolist()))
    result = im.run()
    paths = result.multilevel_modules()
    depth = max(len(p) for p in paths.values())
    levels = []
    for d in range(depth, 0, -1):
        codes: dict[tuple[int, ...], int] = {}
        keys = [tuple(paths.get(i, (-1 - i,))[:d]) for i in range(n)]
        levels.append(np.array([codes.setdefault(k, len(codes)) for k in keys]))
    return clean_levels(levels, n)


def paris_cuts(heights: np.ndarray, n: int, *, min_gap: float = PARIS_MIN_GAP) -> list[int]:
    """Cluster counts at which to cut a dendrogram: its largest gaps.

    Parameters
    ----------
    heights : ndarray
        Merge distances of the ``n - 1`` merges, non-decreasing.
    n : int
        Number of leaves.
    min_gap : float, default :data:`PARIS_MIN_GAP`
        Smallest ratio of a merge distance to the one before it.

    Returns
    -------
    list of int
        Cluster counts, largest (finest) first.

    Examples
    --------
    >>> paris_cuts(np.r_[np.ones(30), np.full(7, 4.0), 12, 12], 40)
    [10, 3]
    >>> paris_cuts(np.r_[np.ones(37), 1.1, 1.2], 40)    # no gap of 1.25: the largest
    [3]
    """
    heights = np.asarray(heights, dtype=float)
    ratio = heights[1:] / np.maximum(heights[:-1], 1e-300)
    k = n - 1 - np.arange(len(ratio))     # clusters left before merge i + 1
    allowed = (k >= 2) & (k <= max(n // 4, 2))
    if not allowed.any():
        return []
    chosen = np.flatnonzero(allowed & (ratio >= min_gap))
    if not len(chosen):
        chosen = [int(np.flatnonzero(allowed)[np.argmax(ratio[allowed])])]
    return sorted({int(k[i]) for i in chosen}, reverse=True)


def run_paris(W: sparse.sparray, hosts: list[str]) -> Levels:
    """Paris (scikit-network) cut at the largest gaps of its dendrogram.

    Parameters
    ----------
    W : scipy sparse array
    hosts : list of str

    Returns
    -------
    list of ndarray
        One level per cut, finest first (see :func:`paris_cuts`).
    """
    from sknetwork.hierarchy import Paris, cut_straight

    A = sparse.csr_matrix(W)
    # Paris's Cython code wants 32-bit indices
    A.indices, A.indptr = A.indices.astype(np.int32), A.indptr.astype(np.int32)
    dendrogram = Paris().fit_predict(A)
    n = W.shape[0]
    levels = [cut_straight(dendrogram, n_clusters=k) for k in paris_cuts(dendrogram[:, 2], n)]
    return clean_levels(levels, n)


NSBM_WORKER = r'''
import json, random, sys, time
import numpy as np
import graph_tool.all as gt
data = np.load(sys.argv[1])
n, seed = int(data["n"]), int(sys.argv[2])
gt.openmp_set_num_threads(1)
gt.seed_rng(seed)
np.random.seed(seed)
random.seed(seed)
start = time.perf_counter()
g = gt.Graph(directed=False)
g.add_vertex(n)
w = g.new_ep("double")
g.add_edge_list(np.column_stack([data["row"], data["col"], data["w"]]), eprops=[w])
state = gt.minimize_nested_blockmodel_dl(
    g, state_args=dict(recs=[w], rec_types=["real-exponential"]))
levels, b = [], np.arange(n)
for s in state.get_levels():
    b = np.asarray(s.b.a)[b]
    levels.append(b.tolist())
    if s.get_nonempty_B() == 1:
        break
print(json.dumps({"seconds": time.perf_counter() - start, "levels": levels}))
'''


def nsbm_python() -> tuple[str, str] | None:
    """An interpreter that imports graph-tool, and its graph-tool version.

    This virtualenv's first (graph-tool has no PyPI wheel, but it may have been
    built into it), then :data:`SYSTEM_PYTHON` (Debian's ``python3-graph-tool``).

    Returns
    -------
    (str, str) or None
        The interpreter and the version, or None when neither has graph-tool.
    """
    probe = "import graph_tool; print(graph_tool.__version__)"
    for python in (sys.executable, SYSTEM_PYTHON):
        try:
            out = subprocess.run([python, "-c", probe], capture_output=True, text=True,
                                 timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if out.returncode == 0 and out.stdout.strip():
            return python, out.stdout.strip().split()[0]
    return None


def run_nsbm(W: sparse.sparray, hosts: list[str], *, python: str = SYSTEM_PYTHON,
             timeout: float = NSBM_TIMEOUT) -> tuple[Levels, float]:
    """graph-tool's nested SBM, weighted, in a subprocess.

    Parameters
    ----------
    W : scipy sparse array
    hosts : list of str
    python : str, default :data:`SYSTEM_PYTHON`
        An interpreter with graph-tool (see :func:`nsbm_python`).
    timeout : float, default :data:`NSBM_TIMEOUT`

    Returns
    -------
    levels : list of ndarray
        Finest first.
    seconds : float
        Measured inside the subprocess (inference only).

    Raises
    ------
    subprocess.TimeoutExpired, RuntimeError
    """
    upper = sparse.triu(W, k=1, format="coo")
    with tempfile.TemporaryDirectory() as tmp:
        data, worker = Path(tmp) / "w.npz", Path(tmp) / "nsbm.py"
        np.savez(data, n=W.shape[0], row=upper.row, col=upper.col, w=upper.data)
        worker.write_text(NSBM_WORKER)
        env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONHASHSEED="0")
        out = subprocess.run([python, str(worker), str(data), str(SEED)],
                             capture_output=True, text=True, timeout=timeout, env=env)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "failed")
    answer = json.loads(out.stdout.strip().splitlines()[-1])
    return clean_levels(answer["levels"], W.shape[0]), float(answer["seconds"])


METHODS: dict[str, Callable[[sparse.sparray, list[str]], Levels]] = {
    "ours": run_ours,
    "louvain": run_louvain,
    "leiden": run_leiden,
    "leiden-rec": run_leiden_recursive,
    "infomap": run_infomap,
    "paris": run_paris,
}


# ---------------------------------------------------------------------------
# cases


def simulated(name: str, iterations: int, size: str) -> Measurement:
    """A simulated reference network, generated once and cached.

    Parameters
    ----------
    name : str
        Built-in scenario (``N1``, ``N2``).
    iterations : int
    size : str
        File size with its unit (``32MiB``).

    Returns
    -------
    Measurement
    """
    return read_measurement(simulated_dataset(name, iterations, size, seed=SEED))


def synthetic(branching: tuple[int, ...], hosts_per_group: int | list[int], noise: float,
              iterations: int) -> Callable[[], Measurement]:
    """A seeded planted hierarchy, made when called.

    Parameters
    ----------
    branching : tuple of int
    hosts_per_group : int or list of int
    noise : float
    iterations : int

    Returns
    -------
    callable
        Returns the :class:`Measurement`.
    """
    return lambda: planted_hierarchy(branching, hosts_per_group, iterations=iterations,
                                     noise=noise, seed=SEED)


UNEVEN = [16, 96, 40, 64, 24, 80]
"""Leaf group sizes of the uneven 2x3 shape (320 hosts)."""
SHAPES: list[tuple[str, tuple[int, ...], int | list[int]]] = [
    ("3x3 of 64", (3, 3), 64),
    ("4x8 of 16", (4, 8), 16),
    ("2x2x2 of 32", (2, 2, 2), 32),
    ("2x3 of 16-96", (2, 3), UNEVEN),
    ("8 of 32 (flat)", (8,), 32),
]


def cases(quick: bool) -> list[Case]:
    """The cases of a full or a quick run.

    Parameters
    ----------
    quick : bool

    Returns
    -------
    list of Case
    """
    if quick:
        return [Case("2x2 of 16, noise 0.5, 3 it", synthetic((2, 2), 16, 0.5, 3)),
                Case("2x2 of 8-24, noise 1.0, 3 it", synthetic((2, 2), [8, 24, 12, 20], 1.0, 3))]
    out = []
    for label, branching, per_group in SHAPES:
        for noise in (0.5, 1.0):
            for iterations in (3, 10):
                out.append(Case(f"{label}, noise {noise}, {iterations} it",
                                synthetic(branching, per_group, noise, iterations),
                                slow=(noise != 1.0)))
    out.append(Case("N1 (sim, 32MiB, 10 it)", lambda: simulated("N1", 10, "32MiB")))
    out.append(Case("N2 (sim, 32MiB, 10 it)", lambda: simulated("N2", 10, "32MiB")))
    return out


# ---------------------------------------------------------------------------
# scoring and output


def score(method: str, levels: Levels, hosts: list[str], truth: dict[str, str],
          seconds: float) -> Result:
    """NMI per level (shared level-to-depth matching) and best NMI per truth depth.

    Parameters
    ----------
    method : str
    levels : list of ndarray
        Host labels per level, finest first, in ``hosts`` order.
    hosts : list of str
    truth : dict of host to label path
    seconds : float

    Returns
    -------
    Result
    """
    if not levels:
        return Result(method, best=[float("nan")] * truth_depth(truth), seconds=seconds)
    h = Hierarchy.from_partitions(hosts, levels)
    table = hierarchy_nmi(h, truth)
    depth = truth_depth(truth)
    best = []
    for d in range(depth, 0, -1):
        true = labels_at_depth(truth, d, hosts)
        best.append(max(nmi(true, level) for level in levels))
    return Result(method, levels=[int(c) for c in table["clusters"]],
                  nmi=[float(x) for x in table["nmi"]], best=best, seconds=seconds)


def fmt(x: float) -> str:
    """Two decimals, or the missing mark."""
    return MISSING if x is None or np.isnan(x) else f"{x:.2f}"


def case_rows(case: str, truth_levels: list[int], results: list[Result], width: int
              ) -> list[str]:
    """Markdown rows of one case.

    Parameters
    ----------
    case : str
    truth_levels : list of int
        Clusters per truth depth, deepest first.
    results : list of Result
    width : int
        Number of NMI columns.

    Returns
    -------
    list of str
    """
    depth = len(truth_levels)
    rows = [f"| **{case}** | truth | {'·'.join(map(str, truth_levels))} | "
            + " | ".join(["1.00" if i < depth else "" for i in range(width)])
            + f" | {depth}/{depth} | | |"]
    for r in results:
        if r.seconds is None:   # did not run
            rows.append(f"| | {r.method} | {r.note} | " + " | ".join([""] * width) + " | | | |")
            continue
        cells = []
        for i in range(width):
            if i >= depth:
                cells.append("")
            elif i < len(r.nmi):
                cells.append(fmt(r.nmi[i]))
            else:
                cells.append(MISSING)
        exact = sum(1 for i in range(min(depth, len(r.nmi))) if r.nmi[i] >= 0.99)
        best = "/".join(fmt(b) for b in r.best)
        seconds = MISSING if r.seconds is None else f"{r.seconds:.3f}"
        found = "·".join(map(str, r.levels)) or "1 (no split)"
        rows.append(f"| | {r.method} | {found} | " + " | ".join(cells)
                    + f" | {exact}/{depth} | {best} | {seconds} |")
    return rows


def machine() -> list[str]:
    """Lines describing the machine, Python and the library versions.

    Returns
    -------
    list of str
    """
    gt = nsbm_python()
    graph_tool = (f"graph-tool {gt[1]} (run by {gt[0]})" if gt
                  else "graph-tool (not available)")
    return ["- " + machine_line(("numpy", "scipy", "igraph", "leidenalg", "infomap",
                                 "scikit-network"), extra=[graph_tool], load=True),
            f"- Date: {time.strftime('%Y-%m-%d %H:%M')}; seed {SEED} everywhere "
            f"(Infomap {SEED + 1}: it needs >= 1)"]


def summary(all_results: list[tuple[str, int, list[Result]]], methods: list[str]) -> list[str]:
    """Markdown table of totals per method over the cases.

    Parameters
    ----------
    all_results : list of (case, truth depth, results)
    methods : list of str

    Returns
    -------
    list of str
    """
    lines = ["| method | cases | truth levels matched (NMI >= 0.99) | mean NMI over truth depths "
             "(missing level = 0) | total s |", "|---|---|---|---|---|"]
    for method in methods:
        matched = total = cases_run = 0
        nmis, seconds = [], 0.0
        for _, depth, results in all_results:
            r = next((x for x in results if x.method == method), None)
            if r is None or r.seconds is None:
                continue
            cases_run += 1
            total += depth
            matched += sum(1 for i in range(min(depth, len(r.nmi))) if r.nmi[i] >= 0.99)
            nmis += [r.nmi[i] if i < len(r.nmi) else 0.0 for i in range(depth)]
            seconds += r.seconds or 0.0
        if cases_run:
            lines.append(f"| {method} | {cases_run} | {matched}/{total} | {np.mean(nmis):.3f} "
                         f"| {seconds:.2f} |")
    return lines


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and print its Markdown.

    Parameters
    ----------
    argv : list of str, optional
        Command-line arguments (``sys.argv[1:]`` by default).
    """
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="two small cases (< 1 min)")
    parser.add_argument("--nsbm", choices=("all", "some", "none"), default="all",
                        help="graph-tool's nested SBM on every case (all, default), only on "
                             "the noise-1.0 planted cases and N1/N2 (some: ~5 min less), "
                             "or on none")
    parser.add_argument("--output", type=Path, default=Path("/tmp/communities.md"),
                        help="also write the Markdown here (default /tmp/communities.md)")
    args = parser.parse_args(argv)

    out: list[str] = []

    def emit(line: str = "") -> None:
        out.append(line)
        print(line, flush=True)

    started = time.perf_counter()
    emit("# Community detection against our hierarchy")
    emit()
    for line in machine():
        emit(line)
    emit()
    nsbm = None if args.nsbm == "none" else nsbm_python()
    methods = ["ours", "ours, shown"] + list(METHODS)[1:] + ["nsbm"]
    width = 3
    header = ("| case | method | clusters per level (finest first) | "
              + " | ".join(f"L{i + 1} NMI" for i in range(width))
              + " | exact | best NMI per depth | s |")
    emit(header)
    emit("|" + "---|" * (width + 6))
    all_results = []
    for case in cases(args.quick):
        m = case.make()
        hosts = list(m.host_names)
        truth = m.labels
        W = mean_weights(m)
        depth = truth_depth(truth)
        truth_levels = [len({"/".join(truth[h].split("/")[:d]) for h in hosts})
                        for d in range(depth, 0, -1)]
        results = []
        per_case = {"ours": METHODS["ours"], "ours, shown": partial(run_ours_shown, m),
                    **METHODS}
        for name, method in per_case.items():
            levels, seconds = timed(lambda: method(W, hosts))
            results.append(score(name, levels, hosts, truth, seconds))
        if nsbm is None:
            results.append(Result("nsbm", note="skipped" if args.nsbm == "none"
                                  else "not available"))
        elif case.slow and args.nsbm == "some":
            results.append(Result("nsbm", note="not run (time)"))
        else:
            try:
                levels, seconds = run_nsbm(W, hosts, python=nsbm[0])
                results.append(score("nsbm", levels, hosts, truth, seconds))
            except subprocess.TimeoutExpired:
                results.append(Result("nsbm", note=f"timeout > {NSBM_TIMEOUT:.0f} s"))
            except RuntimeError as exc:
                results.append(Result("nsbm", note=f"failed: {exc}"))
        all_results.append((case.name, depth, results))
        for row in case_rows(f"{case.name} ({len(hosts)} hosts)", truth_levels, results, width):
            emit(row)
    emit()
    emit("Summary over the cases each method ran on:")
    emit()
    for line in summary(all_results, methods):
        emit(line)
    emit()
    emit("Notes: level k is scored against the truth cut at depth D - k + 1 (D = truth depth), "
         "the matching of `cluster.accuracy.hierarchy_nmi`, for every method; "
         f"{MISSING} = the method has no such level; a blank NMI cell is past the truth's depth "
         "(levels beyond it are still listed in 'clusters per level'). 'exact' = truth depths "
         "whose matching level has NMI >= 0.99. 'best NMI per depth' = for each truth depth "
         "(deepest first) the highest NMI of any level of the method, whatever its position. "
         "'1 (no split)' = the method put all hosts in one cluster (it still counts, with NMI 0, "
         "in the summary). Leiden runs to convergence (n_iterations=-1). "
         "Times: wall-clock seconds from w_n to the levels, best of up to 3 runs (repeated "
         "only while the total stays under 2 s); nsbm once, timed inside its own process. "
         f"Recursive Leiden keeps a split with weighted modularity >= {REC_MIN_Q} on the "
         f"cluster's subgraph (clusters of >= {REC_MIN_SIZE} hosts); Paris is cut at every "
         f"merge-distance ratio >= {PARIS_MIN_GAP} among cuts into 2..n/4 clusters (else at "
         "the largest); nsbm = graph-tool minimize_nested_blockmodel_dl, degree-corrected, "
         "weights as real-exponential covariates, OMP_NUM_THREADS=1"
         + ("" if args.quick or args.nsbm != "some"
            else ", run on the noise-1.0 planted cases and N1/N2 only (time)")
         + (". graph-tool is not available here (no PyPI wheel; Debian python3-graph-tool "
            "not installed), so nsbm is skipped." if nsbm is None and args.nsbm != "none"
            else ".")
         )
    emit()
    emit(f"Total run time: {time.perf_counter() - started:.0f} s.")
    args.output.write_text("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
