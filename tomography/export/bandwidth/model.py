"""The bandwidth model: :class:`BandwidthModel`, its figures and the :class:`Source` of each."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Iterable, Mapping

import numpy as np

from tomography.model.errors import TomographyError
from tomography.export.bandwidth.clusters import check_clusters
from tomography.planning.network import SharedLink, checked_links

__all__ = ["SOURCE_KINDS", "FIGURES", "BASIS", "Source", "BandwidthModel"]

SOURCE_KINDS = ("topology-model", "probes", "broadcast-throughput")
"""Where a figure can come from."""

FIGURES = ("host_capacity", "cluster_capacity", "cluster_bandwidth", "host_bandwidth",
           "cluster_delay", "host_delay", "shared_links")
"""The kinds of figure a model holds; each has one :class:`Source`."""

BASIS = {"topology-model": "topology", "probes": "measured", "broadcast-throughput": "lower bound"}
"""What a prediction over figures of each source kind is: a forecast from the topology's
model values or from measured figures, or a lower bound (rates the broadcasts reached)."""


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
    shared_links : list of SharedLink, optional
        Links that several cluster pairs cross, each with its capacity in
        bit/s and the ordered cluster pairs whose traffic crosses it; None
        when nobody looked (a model without them gives each pair its
        bandwidth alone), ``[]`` when none was found.
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
    shared_links: list[SharedLink] | None = None
    timestamp: datetime = field(default_factory=lambda: datetime.now(timezone.utc))
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.clusters = check_clusters(self.clusters)
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
        if self.shared_links is not None:
            self.shared_links = list(checked_links(self.shared_links, set(self.clusters),
                                                   "cluster"))

    @property
    def basis(self) -> str:
        """What a prediction over these figures rests on: ``"measured"``, ``"topology"`` or
        ``"lower bound"`` (from the source of the cluster bandwidths, see :data:`BASIS`)."""
        return BASIS[self.sources["cluster_bandwidth"].kind]

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
