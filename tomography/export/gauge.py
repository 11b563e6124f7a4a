"""Gauge files: the Pool and the Gauge of a multicast planner, in XML.

Balanced Multicasting (den Burger et al. 2005, section 3.3; den Burger 2009,
section 3.2.3) reads its environment from a *Pool* (which hosts in which
clusters) and a *Gauge* (local capacities and achievable bandwidths between
them).  A Gauge file,
format ``tomography-gauge/1``, holds both; its schema is ``gauge.xsd`` next
to this module (XML Schema 1.0) and is checked on every write and read::

    <environment format="tomography-gauge/1" timestamp="2026-05-01T12:00:00+00:00">
      <pool>
        <cluster name="w1"> <host name="w1-00"/> <host name="w1-01"/> </cluster>
        <cluster name="e1"> <host name="e1-00"/> </cluster>
      </pool>
      <gauge>
        <hostCapacities unit="Mbit/s" source="topology-model" method="NIC capacities ...">
          <host name="w1-00" in="100" out="100"/> ...
        </hostCapacities>
        <clusterCapacities unit="Mbit/s" source="topology-model" method="...">
          <cluster name="w1" in="40" out="40"/> ...
        </clusterCapacities>
        <clusterBandwidths unit="Mbit/s" source="topology-model" method="...">
          <pair from="w1" to="e1" value="10"/>
          <pair from="w1" to="w1" value="100"/>      <!-- within w1 -->
        </clusterBandwidths>
        <hostBandwidths ...> <pair from="w1-00" to="e1-00" value="10"/> </hostBandwidths>
        <clusterDelays unit="ms" source="topology-model" method="...">
          <pair from="w1" to="e1" value="5.3"/>
        </clusterDelays>
        <hostDelays ...> ... </hostDelays>
        <sharedLinks unit="Mbit/s" source="topology-model" method="...">
          <link name="west -> east" capacity="10">
            <pair from="w1" to="e1"/> <pair from="w2" to="e1"/> ...
          </link>
        </sharedLinks>
      </gauge>
      <note>free-text caveats of the estimate</note>
    </environment>

The three capacity and bandwidth groups are required, the host-pair and
delay groups optional.  ``sharedLinks``, also optional, is this format's
extension of den Burger's Gauge: the links that several cluster pairs cross,
each with one capacity for all of them.  Den Burger's model cannot express
them (it gives every pair its bandwidth alone); a reader that ignores the
element over-predicts trees that cross such a link side by side, and a
model that has none to say, but was not looked at for them, writes none.
Each group states its ``unit`` (rates in ``bit/s``,
``kbit/s``, ``Mbit/s``, ``Gbit/s``, ``B/s``, ``KiB/s``, ``MiB/s`` or
``GiB/s``; the "MB/s" of den Burger's tables, MB = 2^20 bytes, is
``MiB/s``; delays in ``s``, ``ms``, ``us`` or ``ns``) and the ``source``
and ``method`` of its figures (see :mod:`tomography.export.bandwidth`).  An
absent figure is unknown; a bandwidth of 0 is a dead link.  Names must
refer to the pool, every figure must be finite and >= 0, and the timestamp
carries its time zone.
"""

from __future__ import annotations

import os
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import numpy as np
from lxml import etree

from tomography.model.errors import TomographyError
from tomography.export.bandwidth import BandwidthModel, Source
from tomography.planning.network import Network, SharedLink
from tomography.model.safe_load import DocumentError, parse_xml
from tomography.model.topology import MAX_HOSTS, MAX_LATENCY, check_quantity
from tomography.model.units import bandwidth_unit, parse_time

MAX_DELAY = MAX_LATENCY
"""The longest one-way delay a Gauge file may give (seconds): a topology's longest latency."""

MAX_GAUGE_BYTES = 64 * 2**20
"""The largest Gauge document read (bytes), from a file or standard input."""

MAX_GAUGE_HOSTS = MAX_HOSTS
"""The most hosts the pool of a Gauge file may list."""

MAX_PAIR_HOSTS = 5_000
"""The most hosts of a Gauge file with host-pair figures (each group a hosts x hosts matrix)."""

__all__ = ["FORMAT", "SCHEMA_PATH", "RATE_UNITS", "TIME_UNITS", "GaugeError", "gauge_schema",
           "gauge_to_xml", "write_gauge", "read_gauge", "gauge_to_network"]

FORMAT = "tomography-gauge/1"
"""The ``format`` attribute of the files this module reads and writes."""

SCHEMA_PATH = Path(__file__).with_name("gauge.xsd")
"""The XML Schema of Gauge files."""

RATE_UNITS = ("bit/s", "kbit/s", "Mbit/s", "Gbit/s", "B/s", "KiB/s", "MiB/s", "GiB/s")
"""The rate units a Gauge file may state (the schema's ``RateUnit``)."""

TIME_UNITS = ("s", "ms", "us", "ns")
"""The delay units a Gauge file may state (the schema's ``TimeUnit``)."""

# (element, figure, level, kind): the groups of figures, in schema order.
_GROUPS = (("hostCapacities", "host_capacity", "host", "capacity"),
           ("clusterCapacities", "cluster_capacity", "cluster", "capacity"),
           ("clusterBandwidths", "cluster_bandwidth", "cluster", "rate"),
           ("hostBandwidths", "host_bandwidth", "host", "rate"),
           ("clusterDelays", "cluster_delay", "cluster", "delay"),
           ("hostDelays", "host_delay", "host", "delay"))


class GaugeError(TomographyError):
    """A Gauge file is malformed or invalid; names the file, line and element.

    Examples
    --------
    >>> str(GaugeError("negative", path="g.xml", line=7, element="/environment/gauge"))
    'g.xml, line 7, element /environment/gauge: negative'
    """

    def __init__(self, message: str, *, path: str | os.PathLike[str] | None = None,
                 line: int | None = None, element: str | None = None) -> None:
        self.path = None if path is None else str(path)
        self.line = line
        self.element = element
        where = [x for x in (self.path, line and f"line {line}", element and f"element {element}")
                 if x]
        super().__init__(f"{', '.join(where)}: {message}" if where else message)


@lru_cache(maxsize=1)
def gauge_schema() -> etree.XMLSchema:
    """The compiled schema of :data:`SCHEMA_PATH`."""
    return etree.XMLSchema(etree.parse(str(SCHEMA_PATH)))


def _validate(document: etree._ElementTree, path: str | os.PathLike[str] | None) -> None:
    schema = gauge_schema()
    if schema.validate(document):
        return
    errors = list(schema.error_log)
    first = errors[0]
    more = f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else ""
    raise GaugeError(first.message + more, path=path, line=first.line,
                     element=first.path or _element_at(document, first.line, first.message))


def _element_at(document: etree._ElementTree, line: int, message: str) -> str | None:
    """The path of the element a schema error names, found by its line.

    libxml2 gives no element path for identity-constraint errors (an unknown
    host in a pair, a name listed twice); the message starts with
    ``Element 'pair'``, and the line tells which one.
    """
    tag = message.split("'")[1] if message.startswith("Element '") else None
    for element in document.getroot().iter(tag):
        if element.sourceline == line:
            return document.getpath(element)
    return None


def _number(value: float) -> str:
    """12 significant digits: exact enough, and free of binary noise (0.30000000000000004)."""
    return format(float(value), ".12g")


def gauge_to_xml(model: BandwidthModel, *, unit: str = "Mbit/s", delay_unit: str = "ms") -> str:
    """The model as a Gauge document, checked against the schema.

    Parameters
    ----------
    model : BandwidthModel
    unit : str, default "Mbit/s"
        Unit of the rates written; one the schema allows.
    delay_unit : str, default "ms"
        Unit of the delays written.

    Returns
    -------
    str

    Raises
    ------
    GaugeError
        On a unit not in :data:`RATE_UNITS` or :data:`TIME_UNITS`, or when
        the document breaks the schema (a name that is empty once whitespace
        is collapsed).

    Examples
    --------
    >>> from tomography.export.bandwidth import FIGURES
    >>> m = BandwidthModel({"a": ["a1"], "b": ["b1"]}, [1e8, 1e8], [1e8, 1e8], [1e8, 1e8],
    ...     [1e8, 1e8], [[np.nan, 1e7], [0.0, np.nan]],
    ...     {f: Source("topology-model", "by hand") for f in FIGURES[:3]})
    >>> print(gauge_to_xml(m).split("<clusterBandwidths")[1].split("</")[0])  # doctest: +NORMALIZE_WHITESPACE
    unit="Mbit/s" source="topology-model" method="by hand">
      <pair from="a" to="b" value="10"/>
      <pair from="b" to="a" value="0"/>
    """
    if unit not in RATE_UNITS:
        raise GaugeError(f"a Gauge file cannot state rates in {unit!r}; use one of "
                         f"{', '.join(RATE_UNITS)} (MB/s of 2^20 bytes is MiB/s)")
    if delay_unit not in TIME_UNITS:
        raise GaugeError(f"a Gauge file cannot state delays in {delay_unit!r}; use one of "
                         f"{', '.join(TIME_UNITS)}")
    rate, delay = bandwidth_unit(unit), parse_time(f"1{delay_unit}")
    root = etree.Element("environment", format=FORMAT, timestamp=model.timestamp.isoformat())
    pool = etree.SubElement(root, "pool")
    for name, members in model.clusters.items():
        cluster = etree.SubElement(pool, "cluster", name=name)
        for host in members:
            etree.SubElement(cluster, "host", name=host)
    gauge = etree.SubElement(root, "gauge")
    for tag, figure, level, kind in _GROUPS:
        if figure not in model.sources:
            continue
        source = model.sources[figure]
        group = etree.SubElement(gauge, tag, unit=delay_unit if kind == "delay" else unit,
                                 source=source.kind, method=source.method)
        names = model.hosts if level == "host" else list(model.clusters)
        if kind == "capacity":
            incoming, outgoing = (getattr(model, f"{level}_in"), getattr(model, f"{level}_out"))
            for i, name in enumerate(names):
                known = {k: _number(v[i] / rate) for k, v in (("in", incoming), ("out", outgoing))
                         if not np.isnan(v[i])}
                if known:
                    etree.SubElement(group, level, name=name, **known)
            continue
        matrix, factor = getattr(model, figure), delay if kind == "delay" else rate
        for i, j in np.argwhere(~np.isnan(matrix)):
            if level == "cluster" or i != j:
                etree.SubElement(group, "pair", {"from": names[i], "to": names[j],
                                                 "value": _number(matrix[i, j] / factor)})
    if model.shared_links is not None:
        source = model.sources["shared_links"]
        group = etree.SubElement(gauge, "sharedLinks", unit=unit, source=source.kind,
                                 method=source.method)
        for link in model.shared_links:
            element = etree.SubElement(group, "link", name=link.name,
                                       capacity=_number(link.capacity / rate))
            for a, b in link.pairs:
                etree.SubElement(element, "pair", {"from": a, "to": b})
    for note in model.notes:
        etree.SubElement(root, "note").text = note
    _validate(etree.ElementTree(root), None)
    return etree.tostring(root, pretty_print=True, xml_declaration=True,
                          encoding="UTF-8").decode("utf-8")


def write_gauge(model: BandwidthModel, path: str | os.PathLike[str], *, unit: str = "Mbit/s",
                delay_unit: str = "ms") -> None:
    """Write the model as a Gauge file, after checking it against the schema.

    Parameters
    ----------
    model : BandwidthModel
    path : str or path-like
    unit, delay_unit : str
        Units written (see :func:`gauge_to_xml`).

    Examples
    --------
    >>> import tempfile
    >>> from tomography.export.bandwidth import from_topology
    >>> from tomography.model.topology import read_topology
    >>> topo = read_topology("tree-5")
    >>> model = from_topology(topo, {g.name: g.host_names for g in topo.clusters})
    >>> path = tempfile.mkdtemp() + "/tree-5.gauge.xml"
    >>> write_gauge(model, path)
    >>> float(read_gauge(path).cluster_bandwidth[0, 4]) / 1e6      # h1 to h5: 100 Mbit/s link
    100.0
    """
    text = gauge_to_xml(model, unit=unit, delay_unit=delay_unit)
    Path(path).write_text(text, encoding="utf-8")


def _figure(text: str, factor: float, kind: str, path: Any, element: Any, document: Any) -> float:
    """A figure of the file in SI units, refused when beyond any network.

    Pair rates: 0 (a dead link) or within a topology's capacities; a host's
    or cluster's capacity within them (0 would be a member that can send
    or receive nothing: it belongs out of the pool); delays within its
    latencies (:func:`tomography.model.topology.check_quantity`).
    """
    value = float(text) * factor
    if kind == "capacity" and value == 0:
        raise GaugeError(f"a capacity of {text}: a member that can send or receive nothing "
                         "takes no part in a multicast (leave it out of the pool)", path=path,
                         line=element.sourceline, element=document.getpath(element))
    try:
        if not (kind == "rate" and value == 0):
            check_quantity(value, "time" if kind == "delay" else "bandwidth", text)
    except TomographyError as exc:
        raise GaugeError(str(exc), path=path, line=element.sourceline,
                         element=document.getpath(element)) from None
    return value


def read_gauge(path: str | os.PathLike[str] | bytes, *, name: str | None = None
               ) -> BandwidthModel:
    """Read a Gauge file, checked against the schema.

    Parameters
    ----------
    path : str, path-like or bytes
        The file, or the document itself (read from standard input).
    name : str, optional
        The name of the document in messages (default the path;
        ``"standard input"``).

    Returns
    -------
    BandwidthModel
        Rates in bit/s, delays in s; figures the file leaves out are NaN.

    Raises
    ------
    GaugeError
        Naming the file, the line and the element: malformed XML, a schema
        violation (unknown host or cluster, negative or missing value,
        missing or unknown unit, missing source), a host paired with itself,
        a figure beyond any network, a document past the limits
        (:data:`MAX_GAUGE_BYTES`, :data:`MAX_GAUGE_HOSTS`,
        :data:`MAX_PAIR_HOSTS`, nesting), a DOCTYPE.

    Examples
    --------
    >>> read_gauge(b"<environment>" * 50, name="standard input")
    Traceback (most recent call last):
    ...
    tomography.export.gauge.GaugeError: standard input, line 1: nested deeper than 8 levels: not a document the toolkit reads
    """
    where = name or (None if isinstance(path, (bytes, bytearray)) else str(path)) or "<bytes>"
    try:
        document = parse_xml(path, what=where, max_bytes=MAX_GAUGE_BYTES, max_depth=8,
                             max_nodes=4_000_000,
                             kind="Gauge file")
    except DocumentError as exc:
        raise GaugeError(exc.reason, path=exc.path, line=exc.line) from None
    path = where
    _validate(document, path)
    root = document.getroot()
    clusters = {c.get("name"): [h.get("name") for h in c.iterfind("host")]
                for c in root.iterfind("pool/cluster")}
    hosts = sorted(h for members in clusters.values() for h in members)
    if len(hosts) > MAX_GAUGE_HOSTS:
        raise GaugeError(f"{len(hosts)} hosts: more than any network this toolkit measures "
                         f"(at most {MAX_GAUGE_HOSTS})", path=path, element="/environment/pool")
    index = {"host": {h: i for i, h in enumerate(hosts)},
             "cluster": {c: i for i, c in enumerate(clusters)}}
    figures: dict[str, np.ndarray] = {}
    sources = {}
    for tag, figure, level, kind in _GROUPS:
        group = root.find(f"gauge/{tag}")
        if group is None:
            continue
        try:
            sources[figure] = Source(group.get("source"), group.get("method"))
        except TomographyError as exc:
            raise GaugeError(str(exc), path=path, line=group.sourceline,
                             element=document.getpath(group)) from None
        where = index[level]
        if kind != "capacity" and len(where) > MAX_PAIR_HOSTS:
            raise GaugeError(f"pair figures among {len(where)} {level}s: more than any "
                             f"measurement gives (at most {MAX_PAIR_HOSTS})", path=path,
                             line=group.sourceline, element=document.getpath(group))
        unit = group.get("unit")
        factor = parse_time(f"1{unit}") if kind == "delay" else bandwidth_unit(unit)
        if kind == "capacity":
            for direction in ("in", "out"):
                values = figures.setdefault(f"{level}_{direction}", np.full(len(where), np.nan))
                for item in group.iterfind(level):
                    if item.get(direction) is not None:
                        values[where[item.get("name")]] = _figure(
                            item.get(direction), factor, kind, path, item, document)
            continue
        matrix = figures.setdefault(figure, np.full((len(where), len(where)), np.nan))
        for pair in group.iterfind("pair"):
            a, b = pair.get("from"), pair.get("to")
            if level == "host" and a == b:
                raise GaugeError(f"host {a!r} paired with itself", path=path,
                                 line=pair.sourceline, element=document.getpath(pair))
            matrix[where[a], where[b]] = _figure(pair.get("value"), factor, kind, path, pair,
                                                 document)
    shared = None
    group = root.find("gauge/sharedLinks")
    if group is not None:
        try:
            sources["shared_links"] = Source(group.get("source"), group.get("method"))
        except TomographyError as exc:
            raise GaugeError(str(exc), path=path, line=group.sourceline,
                             element=document.getpath(group)) from None
        factor = bandwidth_unit(group.get("unit"))
        shared = [SharedLink(link.get("name"), _figure(link.get("capacity"), factor, "rate",
                                                       path, link, document),
                             tuple((x.get("from"), x.get("to")) for x in link.iterfind("pair")))
                  for link in group.iterfind("link")]
    try:
        timestamp = datetime.fromisoformat(root.get("timestamp"))
    except ValueError as exc:
        raise GaugeError(f"timestamp {root.get('timestamp')!r}: {exc}", path=path,
                         line=root.sourceline, element=document.getpath(root)) from None
    try:
        return BandwidthModel(clusters, sources=sources, notes=[n.text or "" for n in
                                                                root.iterfind("note")],
                              timestamp=timestamp, shared_links=shared, **figures)
    except TomographyError as exc:
        raise GaugeError(str(exc), path=path) from None


def gauge_to_network(model: BandwidthModel, level: Literal["clusters", "hosts"] = "clusters",
                     *, unit: str = "MiB/s") -> Network:
    """The planners' network model of a gauge, in one unit.

    Parameters
    ----------
    model : BandwidthModel
    level : {"clusters", "hosts"}, default "clusters"
        Nodes are the clusters (each treated as one host, den Burger et al. 2005, section 3.2)
        or the hosts (needs the model's host-pair bandwidths).  The model's
        shared links come along (at the host level, over every host pair of
        their cluster pairs).
    unit : str, default "MiB/s"
        Any rate unit of :mod:`tomography.model.units`.  The default is den
        Burger's "MB/s" with MB = 2^20 bytes, which :mod:`tomography.model.units`
        spells ``MiB/s`` (its ``MB/s`` is 10^6 bytes).

    Returns
    -------
    tomography.planning.Network

    Raises
    ------
    TomographyError
        When a figure is unknown (fill them with
        :meth:`BandwidthModel.fill_missing`, e.g. 0 for dead links), or the
        model has no host-pair bandwidths for ``level="hosts"``.

    Examples
    --------
    >>> from tomography.export.bandwidth import from_topology
    >>> from tomography.model.topology import read_topology
    >>> topo = read_topology("two-sites-demo")
    >>> net = gauge_to_network(from_topology(topo, {"west": [f"w{i}-0{j}" for i in (1, 2)
    ...     for j in range(5)], "east": [f"e{i}-0{j}" for i in (1, 2) for j in range(5)]}),
    ...     unit="Mbit/s")
    >>> net.nodes, net.out_capacity.tolist(), net.bandwidth.tolist()
    (['west', 'east'], [10.0, 10.0], [[0.0, 10.0], [10.0, 0.0]])
    """
    if level not in ("clusters", "hosts"):
        raise TomographyError(f"level must be 'clusters' or 'hosts', got {level!r}")
    single = level[:-1]
    matrix = getattr(model, f"{single}_bandwidth")
    if matrix is None:
        raise TomographyError("the Gauge file has no host-pair bandwidths: export it with "
                              "--host-pairs (host_pairs=True from Python), or plan over its "
                              "clusters")
    model.require_complete(single)
    factor = bandwidth_unit(unit)
    bandwidth = matrix / factor
    np.fill_diagonal(bandwidth, 0.0)
    nodes = list(model.hosts if level == "hosts" else model.clusters)
    members = ({c: list(hs) for c, hs in model.clusters.items()} if level == "hosts"
               else {c: [c] for c in model.clusters})
    shared = tuple(SharedLink(link.name, link.capacity / factor,
                              tuple((x, y) for a, b in link.pairs
                                    for x in members[a] for y in members[b]))
                   for link in model.shared_links or ())
    return Network(nodes, getattr(model, f"{single}_out") / factor,
                   getattr(model, f"{single}_in") / factor, bandwidth, unit=unit, shared=shared)
