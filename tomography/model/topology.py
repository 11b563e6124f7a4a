"""Topology files: one description of a network that everything else reads.

The ground-truth model, the simulator, the emulated testbed and the exporters
all start from a topology file (YAML).  The schema, with every unit written
out::

    name: N1                                   # required
    description: free text                     # optional
    host_defaults:                             # optional; per-cluster keys override
      nic: 1Gbit/s                             # both directions, or nic_up / nic_down
      latency: 50us                            # one-way, host to its router
    routers: [R1, R2, R9]                      # routers or switches, by name
    links:                                     # full duplex
      - {between: [R1, R9], capacity: 1Gbit/s, latency: 100us}   # each direction
      - between: [R2, R9]                      # one capacity per direction, keyed
        capacity: {R2: 100Mbit/s, R9: 40Mbit/s}  # by the sending router: R2 -> R9
        latency: 1ms                           # at 100Mbit/s, R9 -> R2 at 40Mbit/s
    clusters:                                  # hosts attached to a router
      - name: R1                               # unique
        router: R1
        hosts: 64                              # how many
        label: left/R1R2                       # optional ground truth, top level first
        host_prefix: r1-                       # optional, default "<name>-"
        nic: 1Gbit/s                           # optional overrides of host_defaults
        latency: 50us
    unreachable: [[R1, R2]]                    # optional: routers whose hosts cannot
                                               # reach each other (a firewall between)

Units: see :mod:`tomography.model.units` (``1Gbit/s``, ``100Mbit/s``, ``20ms``,
``100us``); a bare number is an error.  Unknown keys are errors, so that a
typo does not pass silently.

A link's ``capacity`` is one bandwidth for both directions, or a mapping
from each of its two routers to the bandwidth it sends over the link (both
ends named, nothing else).  ``none`` for one end makes the link one-way:
nothing is routed from that end over it (a dead direction, as behind a
misconfigured firewall; traffic that way takes another route, and every
router with hosts must still reach every other).  A mapping with two equal
bandwidths is the same as one bandwidth.  :class:`Link` keeps both
(:meth:`Link.capacity_from`); its ``capacity`` is then the smaller
direction.

``unreachable`` lists pairs of routers with hosts whose hosts cannot reach
each other, either way, whatever the links (as behind a firewall that drops
their traffic): the testbed refuses it at the sender's router, the model
gives the pair no bandwidth, the simulator never connects such peers.  A
pair behind a one-way firewall (connections refused one way, the other way
live) cannot be written: make its link one-way instead.

Routing: between two routers, the unique path when the router graph is a
tree; when it has cycles, the shortest path by total latency (Dijkstra; ties
broken by the order of the links in the file), over the directions links
carry (a one-way link only the way it carries).  A host reaches its router
over its NIC; two hosts of one cluster share only their NICs (the switch is
not a bottleneck).
"""

from __future__ import annotations

import difflib
import math
import os
import re
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

import networkx as nx
import pandas as pd
import yaml

from tomography.model.errors import ParameterError, TomographyError
from tomography.model.safe_load import DocumentError, load_yaml, read_bounded
from tomography.model.scenarios import builtin_networks
from tomography.model.units import parse_bandwidth, parse_time

__all__ = ["Topology", "Link", "HostGroup", "Host", "TopologyError", "read_topology",
           "parse_topology", "scenario_path", "check_quantity", "SCENARIO_DIR", "MAX_HOSTS",
           "MAX_ROUTERS", "MAX_LINKS", "MAX_HOPS", "MIN_BANDWIDTH", "MAX_BANDWIDTH",
           "MAX_LATENCY"]

SCENARIO_DIR = Path(__file__).resolve().parent / "scenarios"   # shipped in the package


class TopologyError(TomographyError):
    """A topology file is missing, malformed or inconsistent; names file and field."""

    def __init__(self, message: str, *, path: str | os.PathLike[str] | None = None,
                 field: str | None = None, line: int | None = None) -> None:
        self.path = None if path is None else str(path)
        self.field = field
        self.line = line
        self.reason = message
        where = ", ".join(x for x in (self.path, f"line {line}" if line else None,
                                      f"field {field!r}" if field else None) if x)
        super().__init__(f"{where}: {message}" if where else message)


@dataclass(frozen=True)
class Link:
    """A full-duplex link between two routers.

    Attributes
    ----------
    a, b : str
        Its routers, in the order of ``between``.
    capacity : float
        Bit/s in each direction; for a link with one capacity per direction,
        the smaller of the two (0 for a one-way link): what the link carries
        both ways at once, the figure for consumers that treat a link as
        undirected (the ground-truth model).  Directed consumers (routes,
        the simulator, the testbed's shaping, the bandwidth model) use
        :meth:`capacity_from`.
    latency : float
        One-way seconds, the same both ways.
    capacity_ab, capacity_ba : float or None
        Bit/s from ``a`` to ``b`` and from ``b`` to ``a`` (0: nothing goes
        that way), for a link given one capacity per direction; None (both)
        for a link with one capacity.

    Examples
    --------
    >>> link = Link.directed("R1", "R2", 100e6, 40e6, 0.001)
    >>> link.capacity, link.capacity_from("R1"), link.capacity_from("R2"), link.symmetric
    (40000000.0, 100000000.0, 40000000.0, False)
    >>> Link("R1", "R2", 1e9, 0.001).capacity_from("R2")
    1000000000.0
    """

    a: str
    b: str
    capacity: float
    latency: float
    capacity_ab: float | None = None
    capacity_ba: float | None = None

    def __post_init__(self) -> None:
        ab, ba = self.capacity_ab, self.capacity_ba
        if (ab is None) != (ba is None):
            raise ParameterError("give both capacity_ab and capacity_ba, or neither")
        if ab is not None and (min(ab, ba) < 0 or max(ab, ba) <= 0
                               or self.capacity != min(ab, ba)):
            raise ParameterError(f"link {self.a}-{self.b}: capacity must be the smaller of "
                             f"capacity_ab and capacity_ba (>= 0, one > 0), got "
                             f"{self.capacity!r}, {ab!r}, {ba!r}")

    @classmethod
    def directed(cls, a: str, b: str, ab: float, ba: float, latency: float) -> "Link":
        """A link with ``ab`` bit/s from ``a`` to ``b`` and ``ba`` back; one capacity when equal."""
        if ab == ba:
            return cls(a, b, ab, latency)
        return cls(a, b, min(ab, ba), latency, ab, ba)

    @property
    def symmetric(self) -> bool:
        """True when both directions have the same capacity."""
        return self.capacity_ab is None

    def capacity_from(self, router: str) -> float:
        """Bit/s the link carries from ``router`` (one of its ends) to the other end."""
        if router == self.a:
            return self.capacity if self.capacity_ab is None else self.capacity_ab
        if router == self.b:
            return self.capacity if self.capacity_ba is None else self.capacity_ba
        raise TopologyError(f"{router!r} is not an end of link {self.a}-{self.b}")

    def scaled(self, factor: float) -> "Link":
        """The same link with every capacity multiplied by ``factor`` (> 0)."""
        if self.capacity_ab is None:
            return replace(self, capacity=self.capacity * factor)
        return replace(self, capacity=self.capacity * factor,
                       capacity_ab=self.capacity_ab * factor,
                       capacity_ba=self.capacity_ba * factor)


@dataclass(frozen=True)
class HostGroup:
    """A cluster of identical hosts attached to one router."""

    name: str
    router: str
    count: int
    nic_up: float
    nic_down: float
    latency: float
    label: str
    prefix: str

    @property
    def host_names(self) -> list[str]:
        """Names of its hosts: prefix and a zero-padded index."""
        width = max(2, len(str(self.count - 1)))
        return [f"{self.prefix}{i:0{width}d}" for i in range(self.count)]


@dataclass(frozen=True)
class Host:
    """One host of a topology."""

    name: str
    cluster: str
    router: str
    label: str
    nic_up: float
    nic_down: float
    latency: float


@dataclass
class Topology:
    """A network: routers, links between them, clusters of hosts on routers.

    Build one with :func:`read_topology` or :func:`parse_topology`.

    Examples
    --------
    >>> t = parse_topology({
    ...     "name": "two", "routers": ["A", "B"],
    ...     "links": [{"between": ["A", "B"], "capacity": "100Mbit/s", "latency": "1ms"}],
    ...     "clusters": [{"name": "a", "router": "A", "hosts": 2, "nic": "1Gbit/s"},
    ...                  {"name": "b", "router": "B", "hosts": 1, "nic": "1Gbit/s"}]})
    >>> [h.name for h in t.hosts]
    ['a-00', 'a-01', 'b-00']
    >>> t.route("A", "B")
    [('A', 'B')]
    """

    name: str
    routers: list[str]
    links: list[Link]
    clusters: list[HostGroup]
    description: str = ""
    source: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)
    unreachable: tuple[tuple[str, str], ...] = ()

    def reaches(self, a: str, b: str) -> bool:
        """True unless routers ``a`` and ``b`` are a pair of :attr:`unreachable`.

        Examples
        --------
        >>> t = read_topology("gridlab-8")
        >>> t.reaches("n0", "cluster3"), t.reaches("cluster3", "n0"), t.reaches("n0", "fs0")
        (False, False, True)
        """
        return (a, b) not in self._refused

    @cached_property
    def _refused(self) -> frozenset[tuple[str, str]]:
        return frozenset(p for a, b in self.unreachable for p in ((a, b), (b, a)))

    @cached_property
    def graph(self) -> nx.Graph:
        """The router graph; edges carry ``capacity``, ``latency`` and ``index``.

        Undirected: ``capacity`` is :attr:`Link.capacity` (the smaller
        direction of a link with one per direction); the capacity of one
        direction is :meth:`link_capacity`.
        """
        g = nx.Graph()
        g.add_nodes_from(self.routers)
        for i, link in enumerate(self.links):
            g.add_edge(link.a, link.b, capacity=link.capacity, latency=link.latency, index=i)
        return g

    @property
    def is_tree(self) -> bool:
        """True when the routers form a tree (one path between any two)."""
        return nx.is_tree(self.graph)

    @cached_property
    def hosts(self) -> list[Host]:
        """Every host, cluster by cluster in file order."""
        return [Host(name, c.name, c.router, c.label, c.nic_up, c.nic_down, c.latency)
                for c in self.clusters for name in c.host_names]

    @cached_property
    def host_index(self) -> dict[str, Host]:
        """Host by name."""
        return {h.name: h for h in self.hosts}

    @property
    def symmetric(self) -> bool:
        """True when every link has one capacity for both directions."""
        return all(link.symmetric for link in self.links)

    def link_capacity(self, u: str, v: str) -> float:
        """Bit/s of the link between routers ``u`` and ``v`` in the direction ``u -> v``.

        Examples
        --------
        >>> t = read_topology("gridlab-8")
        >>> t.link_capacity("mike4", "helix") / 8 / 2**20, t.link_capacity("helix", "mike4") / 8 / 2**20
        (6.39, 4.76)
        """
        try:
            index = self.graph.edges[u, v]["index"]
        except KeyError:
            raise TopologyError(f"no link between {u!r} and {v!r}") from None
        return self.links[index].capacity_from(u)

    @cached_property
    def _live(self) -> nx.Graph | nx.DiGraph:
        """The graph routes follow: directed when a link is one-way (only the ways it carries)."""
        if not any(0 in (link.capacity_ab, link.capacity_ba) for link in self.links):
            return self.graph
        live = nx.DiGraph()
        live.add_nodes_from(self.routers)
        for link in self.links:
            for u, v in ((link.a, link.b), (link.b, link.a)):
                if link.capacity_from(u) > 0:
                    live.add_edge(u, v, latency=link.latency)
        return live

    @cached_property
    def _predecessors(self) -> dict[str, dict[str, str]]:
        """Router -> (router -> the router before it on the route from the first); lazy.

        One map per source router, made when a route from it is first asked
        for: memory in routers per source, not in routers squared times the
        length of the routes.  The predecessor kept is the one the first
        shortest path found goes through, so routes are those of
        :func:`networkx.single_source_dijkstra_path` (ties broken by the order
        of the links in the file).
        """
        return {}

    def _before(self, a: str) -> dict[str, str]:
        known = self._predecessors.get(a)
        if known is None:
            live = self._live
            if live is self.graph and self.is_tree:
                pred = dict(nx.bfs_predecessors(live, a))
            else:
                pred = {v: p[0] for v, p in
                        nx.dijkstra_predecessor_and_distance(live, a, weight="latency")[0].items()
                        if p}
            known = self._predecessors[a] = pred
        return known

    def route(self, a: str, b: str) -> list[tuple[str, str]]:
        """Directed router links from router ``a`` to router ``b``, in order."""
        for r in (a, b):
            if r not in self.graph:
                raise TopologyError(f"unknown router {r!r}")
        before = self._before(a)
        nodes = [b]
        while nodes[-1] != a:
            if nodes[-1] not in before:
                raise TopologyError(f"no route from {a!r} to {b!r}: the routers are not "
                                    "connected")
            nodes.append(before[nodes[-1]])
            if len(nodes) > MAX_HOPS + 1:
                raise TopologyError(f"the route from {a!r} to {b!r} crosses more than "
                                    f"{MAX_HOPS} links (IP's limit): not a network",
                                    path=self.source, field="links")
        nodes.reverse()
        return list(zip(nodes, nodes[1:]))

    def one_way_latency(self, src: str, dst: str) -> float:
        """Seconds from host ``src`` to host ``dst``: both host links plus the route."""
        hs, hd = self.host_index[src], self.host_index[dst]
        return hs.latency + hd.latency + sum(self.graph.edges[u, v]["latency"]
                                             for u, v in self.route(hs.router, hd.router))

    def host_table(self) -> pd.DataFrame:
        """``host,address,label`` rows for a measurement dataset (address empty)."""
        return pd.DataFrame({"host": [h.name for h in self.hosts],
                             "address": [""] * len(self.hosts),
                             "label": [h.label for h in self.hosts]})


# --------------------------------------------------------------------------- parsing

_TOP_KEYS = {"name", "description", "host_defaults", "routers", "links", "clusters",
             "unreachable"}
_LINK_KEYS = {"between", "capacity", "latency"}
_CLUSTER_KEYS = {"name", "router", "hosts", "label", "host_prefix", "nic", "nic_up",
                 "nic_down", "latency"}
_DEFAULT_KEYS = {"nic", "nic_up", "nic_down", "latency"}


def read_topology(path: str | os.PathLike[str]) -> Topology:
    """Read and validate a topology file.

    Parameters
    ----------
    path : str or path-like
        A YAML file, or the name of a built-in scenario (``N1``,
        ``bordeaux-64``, ...; see :func:`scenario_path`).

    Returns
    -------
    Topology

    Raises
    ------
    TopologyError
        Naming the file and the field at fault.

    Examples
    --------
    >>> t = read_topology("N1")
    >>> len(t.hosts), len(t.routers), t.is_tree
    (512, 15, True)
    """
    file = Path(path)
    # a directory is never a topology: a name like "two-sites-demo" is the built-in one even
    # where a directory of that name (a demo's output) sits in the working directory
    shadowed = file.is_dir() and scenario_path(str(path)) is not None
    if shadowed or (not file.exists() and not file.is_symlink()):
        builtin = scenario_path(str(path))
        if builtin is None:
            names = sorted(_scenarios())
            lower = {n.lower(): n for n in names}
            near = [lower[n] for n in difflib.get_close_matches(str(path).lower(), lower, 1)]
            raise TopologyError("no such topology file or built-in scenario"
                                + (f"; did you mean {near[0]}?" if near else "")
                                + f" (built-in: {', '.join(names)})", path=path)
        file = builtin
    try:
        raw, _ = read_bounded(file, max_bytes=TOPOLOGY_LIMIT, kind="topology file")
        data = load_yaml(raw, what=str(file), max_bytes=TOPOLOGY_LIMIT,
                         max_nodes=TOPOLOGY_VALUES, kind="topology file",
                         max_items={"routers": MAX_ROUTERS, "links": MAX_LINKS,
                                    "clusters": MAX_HOSTS})
    except DocumentError as exc:
        raise TopologyError(exc.reason, path=exc.path, line=exc.line, field=exc.field) from None
    try:
        return parse_topology(data, source=str(Path(file).resolve()))   # found from anywhere
    except TopologyError as exc:
        if exc.field is None or exc.line is not None:
            raise
        line = _line_of(yaml.compose(raw.decode("utf-8-sig"), Loader=_COMPOSER), exc.field)
        raise TopologyError(exc.reason, path=exc.path, field=exc.field, line=line) from None


def _line_of(node: yaml.Node | None, field: str) -> int | None:
    """The 1-based line of ``field`` (``clusters[1].nic``) in a composed YAML document.

    The line of the value where it is given, else of the closest enclosing
    item that is (a missing key: the line of its mapping).

    Examples
    --------
    >>> doc = yaml.compose("name: x\\nlinks:\\n- between: [a, b]\\n  capacity: 1\\n")
    >>> _line_of(doc, "links[0].capacity"), _line_of(doc, "links[0].latency"), _line_of(doc, "routers")
    (4, 3, 1)
    """
    line = None if node is None else node.start_mark.line + 1
    for part in re.findall(r"[^.\[\]]+|\[\d+\]", field):
        if isinstance(node, yaml.SequenceNode) and part.startswith("["):
            index = int(part[1:-1])
            node = node.value[index] if index < len(node.value) else None
        elif isinstance(node, yaml.MappingNode):
            node = next((v for k, v in node.value if k.value == part), None)
        else:
            node = None
        if node is None:
            return line
        line = node.start_mark.line + 1
    return line


_COMPOSER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _scenarios() -> dict[str, Path]:
    return {name: SCENARIO_DIR / f"{name}.yaml" for name in builtin_networks()}


def scenario_path(name: str) -> Path | None:
    """The file of a built-in scenario, or None.

    Examples
    --------
    >>> scenario_path("N2").name
    'N2.yaml'
    """
    return _scenarios().get(name)


def parse_topology(data: Any, *, source: str | None = None) -> Topology:
    """Validate a topology given as parsed YAML (a dict); see the module docstring.

    Counts and sizes are checked before anything is built from them (at most
    :data:`MAX_HOSTS` hosts, :data:`MAX_ROUTERS` routers, :data:`MAX_LINKS`
    links, names of :data:`MAX_NAME` characters), and every quantity is
    checked against its range (:func:`check_quantity`).

    Raises
    ------
    TopologyError
        Naming ``source`` and the field at fault, e.g. ``links[2].capacity``.

    Examples
    --------
    >>> parse_topology({"name": "x", "routers": ["A"], "clusters": [
    ...     {"name": "a", "router": "A", "hosts": 10**12, "nic": "1Gbit/s"}]})
    Traceback (most recent call last):
    ...
    tomography.model.topology.TopologyError: field 'clusters[0].hosts': 1000000000000 hosts: more than any network this toolkit measures (at most 100000 in all)
    """
    def fail(message: str, where: str | None = None) -> TopologyError:
        return TopologyError(message, path=source, field=where)

    def text(value: Any, where: str, most: int = MAX_NAME, empty: bool = False) -> str:
        if isinstance(value, bool) or not isinstance(value, (str, int)) or (
                not empty and str(value) == ""):
            raise fail(f"must be a{'' if empty else ' non-empty'} string, got "
                       f"{_short(value)}", where)
        if len(str(value)) > most:
            raise fail(f"longer than {most} characters", where)
        return str(value)

    if not isinstance(data, dict):
        raise fail("a topology must be a mapping with name, routers, links and clusters")
    _no_unknown(data, _TOP_KEYS, "", fail)
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise fail("missing or empty", "name")
    text(name, "name")
    description = data.get("description", "")
    if description is None:
        description = ""
    if isinstance(description, (dict, list)):
        raise fail("must be text, got a " + type(description).__name__, "description")
    defaults = data.get("host_defaults", {}) or {}
    if not isinstance(defaults, dict):
        raise fail("must be a mapping", "host_defaults")
    _no_unknown(defaults, _DEFAULT_KEYS, "host_defaults", fail)

    routers = data.get("routers")
    if not isinstance(routers, list) or not routers:
        raise fail("must be a non-empty list of router names", "routers")
    if len(routers) > MAX_ROUTERS:
        raise fail(f"{len(routers)} routers: more than any network this toolkit measures "
                   f"(at most {MAX_ROUTERS})", "routers")
    names: list[str] = []
    known: set[str] = set()
    for i, r in enumerate(routers):
        if not isinstance(r, (str, int)) or isinstance(r, bool) or str(r) == "":
            raise fail(f"router names are strings, got {_short(r)}", f"routers[{i}]")
        text(r, f"routers[{i}]")
        if str(r) in known:
            raise fail(f"duplicate router {r!r}", f"routers[{i}]")
        names.append(str(r))
        known.add(str(r))

    links: list[Link] = []
    seen: set[frozenset[str]] = set()
    if not isinstance(data.get("links") or [], list):
        raise fail("must be a list of links", "links")
    if len(data.get("links") or []) > MAX_LINKS:
        raise fail(f"{len(data['links'])} links: more than any network this toolkit measures "
                   f"(at most {MAX_LINKS})", "links")
    for i, item in enumerate(data.get("links") or []):
        where = f"links[{i}]"
        if not isinstance(item, dict):
            raise fail("must be a mapping with between, capacity, latency", where)
        _no_unknown(item, _LINK_KEYS, where, fail)
        ends = item.get("between")
        if not isinstance(ends, list) or len(ends) != 2:
            raise fail("must list exactly two routers", f"{where}.between")
        if not all(isinstance(x, (str, int)) and not isinstance(x, bool) for x in ends):
            raise fail(f"router names are strings, got {_short(ends)}", f"{where}.between")
        a, b = (str(x) for x in ends)
        for r in (a, b):
            if r not in known:
                raise fail(f"unknown router {_short(r)}", f"{where}.between")
        if a == b:
            raise fail(f"a link joins two different routers, got {a!r} twice", f"{where}.between")
        if frozenset((a, b)) in seen:
            raise fail(f"duplicate link {a}-{b}", f"{where}.between")
        seen.add(frozenset((a, b)))
        if isinstance(item.get("capacity"), dict):
            ab, ba = _capacities(item["capacity"], a, b, where, fail)
            links.append(Link.directed(a, b, ab, ba,
                                       _quantity(item, "latency", parse_time, where, fail)))
        else:
            links.append(Link(a, b, _quantity(item, "capacity", parse_bandwidth, where, fail),
                              _quantity(item, "latency", parse_time, where, fail)))

    clusters: list[HostGroup] = []
    cluster_names: set[str] = set()
    hosts_seen: set[str] = set()
    total = 0
    items = data.get("clusters")
    if not isinstance(items, list) or not items:
        raise fail("must be a non-empty list of host clusters", "clusters")
    if len(items) > MAX_HOSTS:
        raise fail(f"{len(items)} clusters: more than any network this toolkit measures "
                   f"(at most {MAX_HOSTS} hosts in all)", "clusters")
    for i, item in enumerate(items):
        where = f"clusters[{i}]"
        if not isinstance(item, dict):
            raise fail("must be a mapping", where)
        _no_unknown(item, _CLUSTER_KEYS, where, fail)
        cname = item.get("name")
        if not isinstance(cname, str) or not cname:
            raise fail("missing or empty", f"{where}.name")
        text(cname, f"{where}.name")
        if cname in cluster_names:
            raise fail(f"duplicate cluster {cname!r}", f"{where}.name")
        cluster_names.add(cname)
        router = item.get("router", "")
        if not isinstance(router, (str, int)) or isinstance(router, bool) \
                or str(router) not in known:
            raise fail(f"unknown router {_short(router)}", f"{where}.router")
        router = str(router)
        count = item.get("hosts")
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise fail(f"must be a positive integer, got {_short(count)}", f"{where}.hosts")
        total += count
        if total > MAX_HOSTS:      # before a single host name is made
            raise fail(f"{count} hosts: more than any network this toolkit measures (at most "
                       f"{MAX_HOSTS} in all)", f"{where}.hosts")
        label = item.get("label", "")
        if not isinstance(label, str):
            raise fail(f"must be a string, got {_short(label)}", f"{where}.label")
        text(label, f"{where}.label", most=MAX_LABEL, empty=True)
        prefix = text(item.get("host_prefix", f"{cname}-"), f"{where}.host_prefix",
                      empty=True)
        for block, place in ((defaults, "host_defaults"), (item, where)):
            if "nic" in block and ({"nic_up", "nic_down"} & set(block)):
                raise fail("give nic (both directions) or nic_up and nic_down, not both",
                           f"{place}.nic")

        def quantity(*keys: str, parse: Any = parse_bandwidth) -> float | None:
            """The first of ``keys`` given, the cluster's own before host_defaults."""
            for block, place in ((item, where), (defaults, "host_defaults")):
                for key in keys:
                    if key in block:
                        return _quantity(block, key, parse, place, fail)
            return None
        nic_up, nic_down = quantity("nic_up", "nic"), quantity("nic_down", "nic")
        if nic_up is None or nic_down is None:
            raise fail("no NIC capacity: give nic (or nic_up and nic_down) here or in "
                       "host_defaults", f"{where}.nic")
        latency = quantity("latency", parse=parse_time) or 0.0
        group = HostGroup(cname, router, count, nic_up, nic_down, latency, label, prefix)
        for h in group.host_names:
            if h in hosts_seen:
                raise fail(f"host name {h!r} made twice; give distinct host_prefix values",
                           f"{where}.host_prefix")
            hosts_seen.add(h)
        clusters.append(group)

    used = {c.router for c in clusters}
    topo = Topology(name=name, routers=names, links=links, clusters=clusters,
                    description=str(description), source=source, raw=data,
                    unreachable=_unreachable(data.get("unreachable"), used, fail))
    component = nx.node_connected_component(topo.graph, clusters[0].router)
    stranded = sorted(used - component)
    if stranded:
        raise fail(f"router {stranded[0]!r} has hosts but no path to {clusters[0].router!r}",
                   "links")
    unlinked = [r for r in names if r not in component]
    if unlinked:
        raise fail(f"router {unlinked[0]!r} has no path to the routers with hosts: link it "
                   "or leave it out", "routers")
    hosted = [r for r in names if r in used]
    hops = nx.single_source_shortest_path_length(topo.graph, clusters[0].router)
    far = max(hosted, key=lambda r: hops[r])
    if hops[far] > MAX_HOPS:
        raise fail(f"routers {clusters[0].router!r} and {far!r} are {hops[far]} links apart: "
                   f"more than any route crosses (at most {MAX_HOPS}, IP's limit)", "links")
    live = topo._live
    if live is not topo.graph and not all(
            len(c & used) in (0, len(used)) for c in nx.strongly_connected_components(live)):
        for r in hosted:             # the first router that cannot reach another one
            reach = nx.descendants(live, r)
            cut_off = [d for d in hosted if d != r and d not in reach]
            if cut_off:
                raise fail(f"router {r!r} cannot reach router {cut_off[0]!r}: the one-way "
                           "links (a capacity of none) leave no route that way", "links")
    return topo


def _unreachable(value: Any, hosted: set[str], fail) -> tuple[tuple[str, str], ...]:
    """The ``unreachable`` pairs, checked: two distinct routers with hosts each, once."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise fail("must be a list of pairs of routers, [[R1, R2], ...]", "unreachable")
    pairs: list[tuple[str, str]] = []
    seen: set[frozenset[str | None]] = set()
    for i, item in enumerate(value):
        where = f"unreachable[{i}]"
        if not isinstance(item, list) or len(item) != 2:
            raise fail(f"must be a pair of routers [R1, R2], got {_short(item)}", where)
        a, b = (str(r) if isinstance(r, (str, int)) and not isinstance(r, bool) else None
                for r in item)
        for r, raw in zip((a, b), item):
            if r not in hosted:
                raise fail(f"{_short(raw)} is not a router with hosts: only hosts can be "
                           "unreachable", where)
        if a == b:
            raise fail(f"a router's hosts always reach each other: {a!r} twice", where)
        if frozenset((a, b)) in seen:
            raise fail(f"the pair {a!r}, {b!r} is listed twice", where)
        seen.add(frozenset((a, b)))
        pairs.append((a, b))
    return tuple(pairs)


def _short(value: Any, most: int = 40) -> str:
    """``repr(value)``, cut to ``most`` characters: a hostile value is not echoed whole."""
    text = repr(value)
    return text if len(text) <= most else text[:most - 3] + "..."


def _capacities(capacity: dict, a: str, b: str, where: str, fail) -> tuple[float, float]:
    """Bit/s from ``a`` to ``b`` and back, of ``capacity: {a: ..., b: ...}`` (0 for none)."""
    place = f"{where}.capacity"
    given = {str(k): v for k, v in capacity.items()}
    for key in given:
        if key not in (a, b):
            raise fail(f"{key!r} is not an end of this link ({a}, {b}): key each capacity by "
                       "the router that sends", f"{place}.{key}")
    missing = [r for r in (a, b) if r not in given]
    if missing:
        raise fail(f"give the capacity from each end of the link: {missing[0]!r} is missing "
                   f"(a one-way link gives it as none)", place)
    dead = [r for r in (a, b) if given[r] == "none"]
    if len(dead) == 2:
        raise fail("a link carries traffic at least one way: both directions are none", place)
    ab, ba = (0.0 if r in dead else _quantity(given, r, parse_bandwidth, place, fail)
              for r in (a, b))
    return ab, ba


def _no_unknown(item: dict, allowed: set[str], where: str, fail) -> None:
    unknown = sorted(set(map(str, item)) - allowed)
    if unknown:
        prefix = f"{where}." if where else ""
        raise fail(f"unknown key (allowed: {', '.join(sorted(allowed))})", f"{prefix}{unknown[0]}")


TOPOLOGY_LIMIT = 16 * 2**20
"""The largest topology file read (bytes): clusters are counted, not listed host by host."""

TOPOLOGY_VALUES = 2_000_000
"""The most YAML values a topology file may hold, aliases expanded (a link holds about 8)."""

MAX_HOSTS = 100_000
"""The most hosts a topology may have, all clusters together."""

MAX_ROUTERS = 1_000
"""The most routers a topology may have."""

MAX_LINKS = 100_000
"""The most links between routers a topology may have."""

MAX_HOPS = 255
"""The most links a route may cross: IP's time to live cannot count more."""

MAX_NAME = 255
"""The longest name (of the topology, a router, a cluster, a host prefix), in characters."""

MAX_LABEL = 4096
"""The longest ground-truth label of a cluster, in characters."""

MIN_BANDWIDTH = 1.0
"""The smallest capacity a topology may give (bit/s); a one-way link's dead way is ``none``."""

MAX_BANDWIDTH = 1e14
"""The largest capacity a topology may give (bit/s): 100 Tbit/s, beyond any link or NIC."""

MAX_LATENCY = 10.0
"""The longest one-way latency a topology may give (seconds): a geostationary hop is 0.25 s."""

_RANGES = {"bandwidth": (MIN_BANDWIDTH, MAX_BANDWIDTH, "1 bit/s", "100 Tbit/s"),
           "time": (0.0, MAX_LATENCY, "0 s", "10 s")}


def check_quantity(value: float, kind: str, text: object = None) -> float:
    """``value`` when it is within the range of a topology's quantities, else a ParameterError.

    The one range check of every capacity (``kind="bandwidth"``, bit/s,
    within [:data:`MIN_BANDWIDTH`, :data:`MAX_BANDWIDTH`]) and latency
    (``kind="time"``, seconds, within [0, :data:`MAX_LATENCY`]) of a
    topology, and of a Gauge file's figures.

    Parameters
    ----------
    value : float
        In bit/s or seconds.
    kind : {"bandwidth", "time"}
    text : object, optional
        The value as written, for the message.

    Returns
    -------
    float

    Raises
    ------
    ParameterError
        On a value not finite or out of range.

    Examples
    --------
    >>> check_quantity(1e9, "bandwidth")
    1000000000.0
    >>> check_quantity(float("inf"), "time", "1e400s")
    Traceback (most recent call last):
    ...
    tomography.model.errors.ParameterError: '1e400s' is beyond any network (a time within 0 s and 10 s): a unit mistaken?
    """
    low, high, low_text, high_text = _RANGES[kind]
    if not (isinstance(value, (int, float)) and math.isfinite(value) and low <= value <= high):
        shown = _short(text if text is not None else value)
        raise ParameterError(f"{shown} is beyond any network (a {kind} within {low_text} and "
                             f"{high_text}): a unit mistaken?")
    return float(value)


def _quantity(item: dict, key: str, parse, where: str, fail) -> float:
    if key not in item:
        raise fail("missing", f"{where}.{key}")
    try:
        value = parse(item[key])
        return check_quantity(value, "bandwidth" if parse is parse_bandwidth else "time",
                              item[key])
    except ValueError as exc:
        raise fail(str(exc), f"{where}.{key}") from None
