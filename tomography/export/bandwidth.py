"""Absolute bandwidth figures for a topology of clusters, and where they come from.

BitTorrent block counts give the *structure* of a network (which hosts share
bandwidth clusters), not absolute rates.  The consumers of a topology (the
Gauge of a multicast planner, a SimGrid platform) need rates in bit/s, so a
:class:`BandwidthModel` holds them together with the source of every figure.
Three estimators fill one, each saying what its figures mean:

:func:`from_topology` (source ``"topology-model"``)
    Model values of a simulated or emulated network, read off the topology
    file: NIC capacities, link capacities on the routes, route latencies.
:func:`from_probes` (source ``"probes"``)
    Pairwise probe runs (``probes.csv``, iperf3 or NetPIPE): medians of the
    achievable bandwidths measured one pair at a time.
:func:`from_broadcasts` (source ``"broadcast-throughput"``)
    Bytes actually moved during the BitTorrent broadcasts divided by the
    broadcasts' durations: observed aggregate rates, lower bounds on what the
    paths can carry.

All rates are stored in bit/s and delays in seconds; the exporters state the
unit they write.  ``NaN`` means unknown; ``0`` means a dead link.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Iterable, Mapping

import numpy as np
import pandas as pd

from tomography.dataset import Measurement
from tomography.errors import TomographyError
from tomography.hierarchy import ClusterTree, Hierarchy
from tomography.topology import Topology
from tomography.weights import directed_counts

__all__ = ["SOURCE_KINDS", "FIGURES", "Source", "BandwidthModel", "clusters_from",
           "from_topology", "from_probes", "from_broadcasts"]

SOURCE_KINDS = ("topology-model", "probes", "broadcast-throughput")
"""Where a figure can come from."""

FIGURES = ("host_capacity", "cluster_capacity", "cluster_bandwidth", "host_bandwidth",
           "cluster_delay", "host_delay")
"""The kinds of figure a model holds; each has one :class:`Source`."""


@dataclass(frozen=True)
class Source:
    """Where a kind of figure comes from.

    Attributes
    ----------
    kind : str
        One of :data:`SOURCE_KINDS`.
    method : str
        How the figures were obtained, in words, with their caveats.
    """

    kind: str
    method: str

    def __post_init__(self) -> None:
        if self.kind not in SOURCE_KINDS:
            raise TomographyError(f"unknown source kind {self.kind!r}; expected one of "
                                  f"{', '.join(SOURCE_KINDS)}")
        if not self.method.strip():
            raise TomographyError(f"the {self.kind} source needs a method description")


@dataclass
class BandwidthModel:
    """Clusters of hosts with local capacities, achievable bandwidths and delays.

    Hosts are indexed in sorted order (:attr:`hosts`), clusters in the order
    of ``clusters``.  Pair matrices are indexed ``[from, to]``; on the
    diagonal of the cluster matrices is the figure *within* a cluster
    (between two of its hosts), ``NaN`` for a single-host cluster; the
    diagonal of the host matrices is unused.

    Parameters
    ----------
    clusters : mapping of str to iterable of str
        Cluster name to its hosts; every host in exactly one cluster.
    host_out, host_in : array of shape (n,)
        Outgoing and incoming local capacity of each host, bit/s.
    cluster_out, cluster_in : array of shape (k,)
        Outgoing and incoming local capacity of each cluster, bit/s.
    cluster_bandwidth : array of shape (k, k)
        Achievable bandwidth from cluster to cluster, bit/s (0 = dead link).
    sources : mapping of str to Source
        One entry per figure present: ``host_capacity``, ``cluster_capacity``,
        ``cluster_bandwidth``, and each optional matrix that is not None.
    host_bandwidth : array of shape (n, n), optional
        Achievable bandwidth from host to host, bit/s.
    cluster_delay, host_delay : array, optional
        One-way delay from cluster to cluster (k, k) or host to host (n, n), s.
    timestamp : datetime, optional
        When the figures were taken (timezone-aware); now by default.
    notes : list of str
        Caveats of the estimate (missing pairs, excluded runs, ...).

    Raises
    ------
    TomographyError
        Naming the figure at fault: a negative or infinite value, a wrong
        shape, a missing source, a host in two clusters.

    Examples
    --------
    >>> m = BandwidthModel(
    ...     {"a": ["a1", "a2"], "b": ["b1"]},
    ...     host_out=[1e8, 1e8, 1e8], host_in=[1e8, 1e8, 1e8],
    ...     cluster_out=[4e7, 1e8], cluster_in=[4e7, 1e8],
    ...     cluster_bandwidth=[[1e8, 1e7], [1e7, np.nan]],
    ...     sources={f: Source("topology-model", "by hand") for f in FIGURES[:3]})
    >>> m.hosts, m.cluster_of["b1"]
    (['a1', 'a2', 'b1'], 'b')
    >>> m.missing()
    []
    """

    clusters: Mapping[str, Iterable[str]]
    host_out: np.ndarray
    host_in: np.ndarray
    cluster_out: np.ndarray
    cluster_in: np.ndarray
    cluster_bandwidth: np.ndarray
    sources: Mapping[str, Source]
    host_bandwidth: np.ndarray | None = None
    cluster_delay: np.ndarray | None = None
    host_delay: np.ndarray | None = None
    timestamp: datetime = field(default_factory=lambda: datetime.now(timezone.utc))
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.clusters = _check_clusters(self.clusters)
        n, k = len(self.hosts), len(self.clusters)
        for name, shape in (("host_out", (n,)), ("host_in", (n,)), ("cluster_out", (k,)),
                            ("cluster_in", (k,)), ("cluster_bandwidth", (k, k)),
                            ("host_bandwidth", (n, n)), ("cluster_delay", (k, k)),
                            ("host_delay", (n, n))):
            value = getattr(self, name)
            if value is not None:
                setattr(self, name, self._checked(name, value, shape))
        present = {"host_capacity", "cluster_capacity", "cluster_bandwidth"} | {
            f for f in FIGURES[3:] if getattr(self, f) is not None}
        self.sources = dict(self.sources)
        missing, extra = sorted(present - set(self.sources)), sorted(set(self.sources) - present)
        if missing:
            raise TomographyError(f"no source given for the {missing[0]} figures")
        if extra:
            raise TomographyError(f"a source is given for {extra[0]}, but the model has none")
        for figure, source in self.sources.items():
            if not isinstance(source, Source):
                raise TomographyError(f"the source of {figure} must be a Source, got {source!r}")
        if self.timestamp.tzinfo is None:
            raise TomographyError("the timestamp needs a time zone (e.g. datetime.now(timezone.utc))")
        self.notes = [str(note) for note in self.notes]

    def _checked(self, name: str, value, shape: tuple[int, ...]) -> np.ndarray:
        array = np.array(value, dtype=float)
        if array.shape != shape:
            raise TomographyError(f"{name} has shape {array.shape}; expected {shape}")
        bad = np.argwhere(np.isinf(array) | (array < 0))
        if len(bad):
            where = self._label(name, tuple(int(i) for i in bad[0]))
            raise TomographyError(f"{where} must be finite and >= 0, got {array[tuple(bad[0])]}")
        return array

    def _label(self, name: str, index: tuple[int, ...]) -> str:
        names = self.hosts if name.startswith("host") else list(self.clusters)
        return f"{name} " + " -> ".join(names[i] for i in index)

    @property
    def hosts(self) -> list[str]:
        """All hosts, sorted: the row order of the host arrays."""
        return sorted(h for members in self.clusters.values() for h in members)

    @property
    def cluster_of(self) -> dict[str, str]:
        """Host to the name of its cluster."""
        return {h: name for name, members in self.clusters.items() for h in members}

    def missing(self) -> list[str]:
        """The unknown (NaN) capacities and bandwidths, diagonals of pair matrices aside.

        Delays are not listed: a consumer may do without them.

        Returns
        -------
        list of str
            ``"<figure> <name>"`` or ``"<figure> <from> -> <to>"``.
        """
        out = []
        for name in ("host_out", "host_in", "cluster_out", "cluster_in", "cluster_bandwidth",
                     "host_bandwidth"):
            value = getattr(self, name)
            if value is None:
                continue
            unknown = np.isnan(value)
            if value.ndim == 2:
                np.fill_diagonal(unknown, False)
            out.extend(self._label(name, tuple(int(i) for i in idx))
                       for idx in np.argwhere(unknown))
        return out

    def require_complete(self, prefix: str = "") -> None:
        """Raise unless every figure whose name starts with ``prefix`` is known.

        Raises
        ------
        TomographyError
            Naming the first unknown figures and how to supply them.
        """
        missing = [m for m in self.missing() if m.startswith(prefix)]
        if missing:
            raise TomographyError(
                f"{len(missing)} unknown figure(s), e.g. {', '.join(missing[:3])}: every one "
                "is needed (0 for a dead link); give it in the Gauge file, or from Python "
                "fill them with BandwidthModel.fill_missing(value)")

    def fill_missing(self, value: float) -> "BandwidthModel":
        """A copy with every unknown figure of :meth:`missing` set to ``value`` (bit/s).

        ``0`` treats unknown pairs as dead links.  The fill is recorded in
        the notes.

        Examples
        --------
        >>> m = BandwidthModel({"a": ["a1"], "b": ["b1"]}, [1.0, 1.0], [1.0, np.nan],
        ...     [1.0, 1.0], [1.0, 1.0], [[np.nan, 2.0], [np.nan, np.nan]],
        ...     {f: Source("probes", "by hand") for f in FIGURES[:3]})
        >>> m.missing()
        ['host_in b1', 'cluster_bandwidth b -> a']
        >>> m.fill_missing(0.0).missing(), m.fill_missing(0.0).notes
        ([], ['2 unknown figures set to 0 bit/s'])
        """
        if not np.isfinite(value) or value < 0:
            raise TomographyError(f"the fill value must be finite and >= 0, got {value}")
        changes = {}
        for name in ("host_out", "host_in", "cluster_out", "cluster_in", "cluster_bandwidth",
                     "host_bandwidth"):
            array = getattr(self, name)
            if array is None:
                continue
            diagonal = array.diagonal().copy() if array.ndim == 2 else None
            filled = np.where(np.isnan(array), value, array)
            if diagonal is not None:
                np.fill_diagonal(filled, diagonal)
            changes[name] = filled
        note = f"{len(self.missing())} unknown figures set to {value:g} bit/s"
        return replace(self, **changes, notes=[*self.notes, note])


def _check_clusters(clusters: Mapping[str, Iterable[str]]) -> dict[str, tuple[str, ...]]:
    if not isinstance(clusters, Mapping) or not clusters:
        raise TomographyError("clusters must be a non-empty mapping of cluster name to hosts")
    out: dict[str, tuple[str, ...]] = {}
    seen: dict[str, str] = {}
    for name, members in clusters.items():
        if not isinstance(name, str) or not name.strip():
            raise TomographyError(f"cluster names must be non-empty strings, got {name!r}")
        if isinstance(members, str):
            raise TomographyError(f"cluster {name!r}: give its hosts as a list, not a string")
        hosts = tuple(sorted(str(h) for h in members))
        if not hosts:
            raise TomographyError(f"cluster {name!r} has no hosts")
        for h in hosts:
            if h in seen:
                raise TomographyError(f"host {h!r} is in clusters {seen[h]!r} and {name!r}")
            seen[h] = name
        out[name] = hosts
    return out


def clusters_from(result: Hierarchy | ClusterTree | Mapping[str, str], *,
                  level: int = 1) -> dict[str, tuple[str, ...]]:
    """Clusters (name to hosts) from a hierarchy level, a cluster tree or host labels.

    Parameters
    ----------
    result : Hierarchy, ClusterTree or mapping of host to label
        A label mapping is, for instance, :attr:`Measurement.labels`.
    level : int, default 1
        The hierarchy level (1 is the finest); ignored otherwise.

    Examples
    --------
    >>> h = Hierarchy.from_partitions(["a", "b", "c"], [[0, 0, 1], [0, 0, 0]])
    >>> clusters_from(h)
    {'L1C0': ('a', 'b'), 'L1C1': ('c',)}
    >>> clusters_from({"b": "s1", "a": "s1", "c": "s2"})
    {'s1': ('a', 'b'), 's2': ('c',)}
    """
    if isinstance(result, Hierarchy):
        return {c.id: c.hosts for c in result.level(level)}
    if isinstance(result, ClusterTree):
        return {c.id: c.hosts for c in result.clusters}
    out: dict[str, list[str]] = {}
    for host, label in sorted(result.items()):
        out.setdefault(str(label), []).append(str(host))
    return {name: tuple(hosts) for name, hosts in sorted(out.items())}


def _indices(hosts: list[str], clusters: dict[str, tuple[str, ...]]) -> list[np.ndarray]:
    index = {h: i for i, h in enumerate(hosts)}
    return [np.array([index[h] for h in members]) for members in clusters.values()]


def _pool(clusters: Mapping[str, Iterable[str]], known: Iterable[str], what: str
          ) -> dict[str, tuple[str, ...]]:
    checked = _check_clusters(clusters)
    known = set(known)
    for name, members in checked.items():
        unknown = [h for h in members if h not in known]
        if unknown:
            raise TomographyError(f"cluster {name!r}: unknown host {unknown[0]!r} "
                                  f"(not in the {what})")
    return checked


def _pair_medians(matrix: np.ndarray, groups: list[np.ndarray]) -> np.ndarray:
    """Median over host pairs (distinct hosts, NaN ignored) between every two groups."""
    k = len(groups)
    out = np.full((k, k), np.nan)
    for a, rows in enumerate(groups):
        for b, cols in enumerate(groups):
            block = matrix[np.ix_(rows, cols)].copy()
            if a == b:
                np.fill_diagonal(block, np.nan)
            values = block[~np.isnan(block)]
            if values.size:
                out[a, b] = float(np.median(values))
    return out


# --------------------------------------------------------------------------- topology model


def from_topology(topology: Topology, clusters: Mapping[str, Iterable[str]], *,
                  host_pairs: bool = False) -> BandwidthModel:
    """Model values of a simulated or emulated network, from its topology file.

    Parameters
    ----------
    topology : Topology
    clusters : mapping of str to iterable of str
        Cluster name to hosts of the topology (see :func:`clusters_from`);
        hosts left out are not part of the model.
    host_pairs : bool, default False
        Also fill the host-to-host bandwidth and delay matrices.

    Returns
    -------
    BandwidthModel
        Every figure labelled ``"topology-model"``:

        * host out / in: the NIC's up / down capacity;
        * cluster out (in): the smaller of the sum of its hosts' NIC up
          (down) capacities and the total capacity of the router links by
          which traffic to (from) the model's other hosts leaves (enters)
          the cluster's routers (the routers of its hosts and those on the
          routes between them).  That is the thesis's local capacity of a
          cluster (den Burger et al. 2005, section 3.2): the NICs, or the shared access link,
          whichever is less.  When some other host sits on one of the
          cluster's routers, or there is no other host, only the NICs bound it;
        * pair bandwidth A -> B: the bottleneck of a route from a host of A
          to a host of B (the sender's NIC up, the router links, the
          receiver's NIC down), the median over host pairs: what one flow
          gets alone on an idle network.  Concurrent flows share links (see
          :mod:`tomography.ground_truth` for the share during a broadcast);
        * delay A -> B: median over host pairs of the one-way latency (both
          host links and the route).

    Raises
    ------
    TomographyError
        When a cluster names a host the topology does not have.

    Examples
    --------
    >>> from tomography.topology import read_topology
    >>> topo = read_topology("two-sites-demo")
    >>> sites = {g.name: g.host_names for g in topo.clusters}
    >>> m = from_topology(topo, sites)
    >>> (m.cluster_out / 1e6).tolist()                    # the 40 Mbit/s uplinks
    [40.0, 40.0, 40.0, 40.0]
    >>> (m.cluster_bandwidth[0] / 1e6).tolist()           # w1 to w1, w2, e1, e2
    [100.0, 40.0, 10.0, 10.0]
    >>> round(float(m.cluster_delay[0, 2]) * 1e3, 3)       # ms from w1 to e1
    5.3
    """
    pool = _pool(clusters, topology.host_index, f"topology {topology.name!r}")
    hosts = sorted(h for members in pool.values() for h in members)
    info = [topology.host_index[h] for h in hosts]
    routers = {r: i for i, r in enumerate(topology.routers)}
    bottleneck, latency = _router_matrices(topology)
    where = np.array([routers[h.router] for h in info])
    up = np.array([h.nic_up for h in info])
    down = np.array([h.nic_down for h in info])
    lat = np.array([h.latency for h in info])
    host_bw = np.minimum(np.minimum.outer(up, down), bottleneck[np.ix_(where, where)])
    host_delay = np.add.outer(lat, lat) + latency[np.ix_(where, where)]
    np.fill_diagonal(host_bw, np.nan)
    np.fill_diagonal(host_delay, np.nan)
    groups = _indices(hosts, pool)
    outside = [np.setdiff1d(where, where[g]) for g in groups]
    cluster_out = np.array([min(up[g].sum(), _access(topology, where[g], other, out=True))
                            for g, other in zip(groups, outside)])
    cluster_in = np.array([min(down[g].sum(), _access(topology, where[g], other, out=False))
                           for g, other in zip(groups, outside)])
    name = topology.name
    sources = {
        "host_capacity": Source("topology-model", f"NIC capacities of topology {name!r} "
                                "(out = NIC up, in = NIC down)"),
        "cluster_capacity": Source("topology-model", f"topology {name!r}: the smaller of the "
                                   "sum of the hosts' NICs and the capacity of the router links "
                                   "by which traffic leaves (enters) the cluster's routers"),
        "cluster_bandwidth": Source("topology-model", f"topology {name!r}: bottleneck capacity "
                                    "(NICs and router links) of the route, median over host "
                                    "pairs; one flow alone on an idle network"),
        "cluster_delay": Source("topology-model", f"topology {name!r}: one-way latency of the "
                                "route (host links and router links), median over host pairs"),
    }
    if host_pairs:
        sources["host_bandwidth"] = Source("topology-model", f"topology {name!r}: bottleneck "
                                           "capacity of the route; one flow alone on an idle "
                                           "network")
        sources["host_delay"] = Source("topology-model", f"topology {name!r}: one-way latency "
                                       "of the route (host links and router links)")
    return BandwidthModel(
        pool, host_out=up, host_in=down, cluster_out=cluster_out, cluster_in=cluster_in,
        cluster_bandwidth=_pair_medians(host_bw, groups), sources=sources,
        host_bandwidth=host_bw if host_pairs else None,
        cluster_delay=_pair_medians(host_delay, groups),
        host_delay=host_delay if host_pairs else None)


def _router_matrices(topology: Topology) -> tuple[np.ndarray, np.ndarray]:
    """Bottleneck capacity and latency of the route between every two routers."""
    r = len(topology.routers)
    bottleneck = np.full((r, r), np.inf)
    latency = np.zeros((r, r))
    edges = topology.graph.edges
    for i, a in enumerate(topology.routers):
        for j, b in enumerate(topology.routers):
            if i != j:
                path = topology.route(a, b)
                bottleneck[i, j] = min(edges[u, v]["capacity"] for u, v in path)
                latency[i, j] = sum(edges[u, v]["latency"] for u, v in path)
    return bottleneck, latency


def _access(topology: Topology, mine: np.ndarray, others: np.ndarray, *, out: bool) -> float:
    """Total capacity of the links by which routes leave (or enter) a cluster's routers.

    ``mine`` and ``others`` are router indices; infinite when some route to
    (from) another host needs no such link, or there is no other host.
    """
    names = topology.routers
    own = {names[i] for i in mine}
    region = set(own)
    for a in own:
        for b in own:
            region.update(x for link in topology.route(a, b) for x in link)
    links: set[frozenset[str]] = set()
    for a in own:
        for b in {names[i] for i in others}:
            path = topology.route(a, b) if out else topology.route(b, a)[::-1]
            crossing = [(u, v) for u, v in path if (u in region) != (v in region)]
            if not crossing:
                return float("inf")
            links.add(frozenset(crossing[0]))
    if not links:
        return float("inf")
    return float(sum(topology.graph.edges[tuple(link)]["capacity"] for link in links))


# --------------------------------------------------------------------------- probes


_SOLO = {"", "0", "false", "no", "none"}


def from_probes(measurement: Measurement, clusters: Mapping[str, Iterable[str]], *,
                host_pairs: bool = False) -> BandwidthModel:
    """Achievable bandwidths and capacities from pairwise probe runs (``probes.csv``).

    Only solo runs count: rows whose ``concurrent`` field is empty (or
    missing, NaN), ``0``, ``false``, ``no`` or ``none``.  A run beside another probe measures the
    sharing of a link, not the pair's achievable bandwidth.

    Parameters
    ----------
    measurement : Measurement
        A dataset with probes.
    clusters : mapping of str to iterable of str
        Cluster name to hosts of the dataset.
    host_pairs : bool, default False
        Also fill the host-to-host bandwidth matrix.

    Returns
    -------
    BandwidthModel
        Every figure labelled ``"probes"``:

        * host out (in): the largest ``bits_per_second`` of the probes the
          host sent (received); unknown for a host never probed;
        * cluster out (in): the sum of its hosts' figures, a host never
          probed counted at the median of the cluster's probed hosts (the
          hosts of a bandwidth cluster are alike).  Solo probes do not see a
          shared access link, so this is an upper bound;
        * pair bandwidth A -> B: median over host pairs (a host of A sending
          to a host of B) of each pair's median probe; on the diagonal,
          pairs within the cluster.  Pairs never probed are unknown and
          listed in the notes;
        * no delays (``probes.csv`` holds none).

    Raises
    ------
    TomographyError
        When the dataset has no solo probes, or a cluster names an unknown host.

    Examples
    --------
    >>> import pandas as pd
    >>> from tomography.synthetic import planted_partition
    >>> m = planted_partition(4, 2, iterations=1, seed=0)
    >>> m.probes = pd.DataFrame({"src": ["h000", "h000", "h002"], "dst": ["h001", "h002", "h000"],
    ...     "tool": "iperf3", "bits_per_second": [9e8, 1e8, 2e8], "streams": 1,
    ...     "concurrent": "", "duration_s": 10.0})
    >>> g = from_probes(m, clusters_from(m.labels))
    >>> (g.cluster_bandwidth / 1e6).tolist()
    [[900.0, 100.0], [200.0, nan]]
    >>> g.notes[0]
    'no probe within cluster g1'
    """
    pool = _pool(clusters, measurement.host_names, "dataset")
    probes = measurement.probes
    if probes is None or probes.empty:
        raise TomographyError("the dataset has no probes (probes.csv); measure with iperf3 "
                              "or NetPIPE first")
    concurrent = probes["concurrent"]
    text = concurrent.astype(str).str.strip().str.lower()
    count = pd.to_numeric(text, errors="coerce").to_numpy()  # tests at once: 1 is solo
    solo = concurrent.isna().to_numpy() | text.isin(_SOLO).to_numpy() | (count <= 1)
    if "error" in probes:  # failed tests carry no rate
        solo &= (probes["error"].astype(str).str.strip() == "").to_numpy()
    solo &= probes["bits_per_second"].notna().to_numpy()
    notes = []
    if not solo.all():
        notes.append(f"{int((~solo).sum())} concurrent probe runs left out")
    hosts = sorted(h for members in pool.values() for h in members)
    index = {h: i for i, h in enumerate(hosts)}
    runs = probes[solo & probes["src"].isin(index).to_numpy() & probes["dst"].isin(index).to_numpy()]
    if runs.empty:
        raise TomographyError("no solo probe run between the hosts of the clusters")
    n = len(hosts)
    per_pair = runs.groupby(["src", "dst"])["bits_per_second"].median()
    pair = np.full((n, n), np.nan)
    pair[[index[s] for s, _ in per_pair.index], [index[d] for _, d in per_pair.index]] = \
        per_pair.to_numpy()
    host_out = _by_host(runs.groupby("src")["bits_per_second"].max(), index)
    host_in = _by_host(runs.groupby("dst")["bits_per_second"].max(), index)
    groups = _indices(hosts, pool)
    names = list(pool)
    bandwidth = _pair_medians(pair, groups)
    for a, b in np.argwhere(np.isnan(bandwidth)):
        if a != b:
            notes.append(f"no probe from cluster {names[a]} to cluster {names[b]}")
        elif len(groups[a]) > 1:
            notes.append(f"no probe within cluster {names[a]}")
    unprobed = [h for h in hosts if np.isnan(host_out[index[h]]) and np.isnan(host_in[index[h]])]
    if unprobed:
        notes.append(f"{len(unprobed)} hosts never probed: {', '.join(unprobed[:10])}"
                     + (" ..." if len(unprobed) > 10 else ""))
    tools = ", ".join(sorted(set(runs["tool"].astype(str))))
    sources = {
        "host_capacity": Source("probes", f"largest solo probe ({tools}) the host sent (out) or "
                                "received (in)"),
        "cluster_capacity": Source("probes", "sum of the hosts' probe capacities, unprobed hosts "
                                   "at the cluster's median; an upper bound, solo probes do not "
                                   "see a shared access link"),
        "cluster_bandwidth": Source("probes", f"median over host pairs of the median solo probe "
                                    f"({tools}) of each pair"),
    }
    if host_pairs:
        sources["host_bandwidth"] = Source("probes", f"median of the solo probes ({tools}) of "
                                           "the pair")
    return BandwidthModel(
        pool, host_out=host_out, host_in=host_in,
        cluster_out=np.array([_extrapolated_sum(host_out[g]) for g in groups]),
        cluster_in=np.array([_extrapolated_sum(host_in[g]) for g in groups]),
        cluster_bandwidth=bandwidth, sources=sources,
        host_bandwidth=pair if host_pairs else None, notes=notes)


def _by_host(series, index: dict[str, int]) -> np.ndarray:
    out = np.full(len(index), np.nan)
    out[[index[h] for h in series.index]] = series.to_numpy()
    return out


def _extrapolated_sum(values: np.ndarray) -> float:
    """Sum of ``values``, each NaN counted at the median of the others (NaN if all are)."""
    known = values[~np.isnan(values)]
    if not known.size:
        return float("nan")
    return float(known.sum() + np.median(known) * (values.size - known.size))


# --------------------------------------------------------------------------- broadcasts


def from_broadcasts(measurement: Measurement, clusters: Mapping[str, Iterable[str]], *,
                    iterations: Iterable[int] | None = None,
                    host_pairs: bool = False) -> BandwidthModel:
    """Observed aggregate rates of the BitTorrent broadcasts.

    Each iteration moved ``blocks x block_size`` bytes between every two
    hosts in ``duration_s`` seconds (``iterations.csv``); dividing one by the
    other gives rates actually reached while the swarm shared the network.
    They are lower bounds: the swarm did not keep every path busy for the
    whole broadcast.  (Bytes count whole blocks; a file's last block may be
    shorter.)

    Parameters
    ----------
    measurement : Measurement
        A broadcast dataset whose iterations record their duration.
    clusters : mapping of str to iterable of str
        Cluster name to hosts of the dataset.
    iterations : iterable of int, optional
        The iterations to average; all by default.
    host_pairs : bool, default False
        Also fill the host-to-host rate matrix.

    Returns
    -------
    BandwidthModel
        Every figure labelled ``"broadcast-throughput"``, a mean over iterations:

        * pair A -> B: bytes sent directly from A's hosts to B's hosts in
          the iteration over its duration (on the diagonal: within A);
        * host out: bytes the host sent (to any host) over the duration;
          host in: bytes it received, over the iterations it was not the root;
        * cluster out: bytes its hosts sent to hosts outside it; cluster in:
          bytes they received from outside, over the iterations whose root
          was outside it;
        * no delays.

    Raises
    ------
    TomographyError
        When an iteration has no ``duration_s`` (synthetic datasets have
        none) or a cluster names an unknown host.

    Examples
    --------
    >>> from tomography.synthetic import planted_partition
    >>> m = planted_partition(6, 2, iterations=2, seed=0, file_size=16 * 16384)
    >>> from_broadcasts(m, clusters_from(m.labels))
    Traceback (most recent call last):
    ...
    tomography.errors.TomographyError: iterations.csv has no duration_s for iteration(s) 0, 1: \
broadcast throughput needs the duration of each broadcast (synthetic datasets have none)
    >>> m.iterations["duration_s"] = 2.0
    >>> g = from_broadcasts(m, clusters_from(m.labels))
    >>> (g.host_in * 2 / (8 * 16384)).tolist()      # each receiver got 16 blocks in 2 s
    [16.0, 16.0, 16.0, 16.0, 16.0, 16.0]
    """
    pool = _pool(clusters, measurement.host_names, "dataset")
    table = measurement.iterations.set_index("iteration")
    ids = measurement.iteration_ids if iterations is None else list(iterations)
    unknown = sorted(set(ids) - set(table.index))
    if not ids or unknown:
        raise TomographyError(f"no iteration {unknown[0] if unknown else '(none chosen)'} in "
                              "the dataset")
    duration = table.loc[ids, "duration_s"].to_numpy(dtype=float)
    lacking = [str(i) for i, d in zip(ids, duration) if np.isnan(d)]
    if lacking:
        raise TomographyError(f"iterations.csv has no duration_s for iteration(s) "
                              f"{', '.join(lacking)}: broadcast throughput needs the duration "
                              "of each broadcast (synthetic datasets have none)")
    zero = [str(i) for i, d in zip(ids, duration) if d <= 0]
    if zero:
        raise TomographyError(f"iteration {zero[0]} has duration_s 0; no rate can be derived")
    everyone = {h: i for i, h in enumerate(measurement.host_names)}
    hosts = sorted(h for members in pool.values() for h in members)
    rows = np.array([everyone[h] for h in hosts])
    member = np.zeros((len(everyone), len(pool)))
    for c, members in enumerate(pool.values()):
        member[[everyone[h] for h in members], c] = 1.0
    roots = [everyone[r] for r in table.loc[ids, "root"]]
    bits = 8.0 * int(measurement.meta.get("block_size", 16384))
    rates = [bits * directed_counts(measurement, [i]).T.toarray() / d  # [sender, receiver]
             for i, d in zip(ids, duration)]
    inner = [member.T @ r @ member for r in rates]
    host_out = np.mean([r.sum(axis=1)[rows] for r in rates], axis=0)
    host_in = _mean_where([r.sum(axis=0)[rows] for r in rates],
                          [rows != root for root in roots])
    cluster_out = np.mean([member.T @ r.sum(axis=1) - np.diag(m) for r, m in zip(rates, inner)],
                          axis=0)
    cluster_in = _mean_where([r.sum(axis=0) @ member - np.diag(m) for r, m in zip(rates, inner)],
                             [member[root] == 0 for root in roots])
    what = f"mean over {len(ids)} iterations of bytes"
    bound = "over the broadcast's duration_s; an observed rate, a lower bound on"
    sources = {
        "host_capacity": Source("broadcast-throughput", f"{what} the host sent (received, when "
                                f"not the root) {bound} the local capacity"),
        "cluster_capacity": Source("broadcast-throughput", f"{what} the cluster's hosts sent to "
                                   f"(received from) hosts outside it {bound} the local capacity"),
        "cluster_bandwidth": Source("broadcast-throughput", f"{what} sent directly from A's hosts "
                                    f"to B's hosts {bound} the achievable bandwidth"),
    }
    if host_pairs:
        sources["host_bandwidth"] = Source("broadcast-throughput", f"{what} sent directly from "
                                           f"host to host {bound} the achievable bandwidth")
    host_rates = np.mean([r[np.ix_(rows, rows)] for r in rates], axis=0)
    np.fill_diagonal(host_rates, np.nan)
    return BandwidthModel(
        pool, host_out=host_out, host_in=host_in, cluster_out=cluster_out,
        cluster_in=cluster_in, cluster_bandwidth=np.mean(inner, axis=0), sources=sources,
        host_bandwidth=host_rates if host_pairs else None,
        notes=[f"iterations {', '.join(map(str, ids))}"])


def _mean_where(values: list[np.ndarray], masks: list[np.ndarray]) -> np.ndarray:
    """Element-wise mean of ``values`` over the entries whose mask is true (NaN if none)."""
    stacked = np.where(np.array(masks), np.array(values), np.nan)
    counts = (~np.isnan(stacked)).sum(axis=0)
    return np.where(counts > 0, np.nansum(stacked, axis=0) / np.maximum(counts, 1), np.nan)
