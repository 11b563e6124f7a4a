"""An emulated testbed: a topology built on one Linux machine from network namespaces.

:func:`up` turns a :class:`~tomography.topology.Topology` into namespaces,
veth pairs, bridges, routes and ``tc`` shaping, so that real programs (the
BitTorrent peers of :mod:`measure.peer`) can measure it; :func:`down` removes
it again, also after a crash.  :func:`plan` computes everything without
touching the system, so the layout can be read and tested without root.

Layout
------
Every namespace is called ``tomo-<name>-<node>``: ``<name>`` is the
testbed's name (``[a-z0-9]{1,8}``, default ``tb``), ``<node>`` a host name or
``r-<router>``.  Nothing outside the prefix ``tomo-<name>-`` is ever touched.

* One namespace per host, with one interface ``eth0``.
* One namespace per router.  A Linux bridge ``br0`` joins the ports ``h<k>``
  of its hosts (the switch; never a bottleneck); one port ``l<j>`` per
  router-router link ``j`` (its index in the topology, so both ends share
  the name).  Routers forward IPv4.
* Each veth pair is made with its two ends directly in their namespaces under
  their final names (``ip link add eth0 netns A type veth peer name h0 netns
  B``): nothing is ever created in the root namespace, so a crash cannot leave
  anything there.

Address plan
------------
Private addresses, used only inside the namespaces; the root namespace gets
none and no namespace has a route out of the testbed.

* Hosts of router number ``r`` (0-based, in ``topology.routers`` order):
  ``10.201.<r>.<k + 2>/24``, ``k`` the host's 0-based index on its router
  (clusters in file order); the router's bridge is ``10.201.<r>.1``, each
  host's default gateway.  Up to 256 routers and 253 hosts per router.
* Router link ``j`` (0-based, in ``topology.links`` order): the ``j``-th
  ``/30`` of ``10.202.0.0/16``, ``.1`` at ``link.a`` and ``.2`` at
  ``link.b``.  Up to 16384 links.
* Routes: each router reaches every other router's host subnet through the
  next hop of :meth:`Topology.route`.  When hop-by-hop forwarding by
  destination would leave the topology's path (only possible when equal
  latencies tie), the routers concerned get a source-specific rule, so that
  every packet follows exactly the path the model gives.

Shaping
-------
Egress only, each capacity on the device that sends into it: a host's upload
on its ``eth0`` (``nic_up``), its download on the router's bridge port
(``nic_down``), each router link on the port at each end (the link's
capacity, per direction).  See :func:`_tbf` for the queue settings.  One-way
latency (the host's on both directions of its NIC, each link's on both
directions) is added with ``netem`` when the kernel has it; when it has not,
only bandwidth is shaped and the testbed says so (``latency_applied``,
``latency_note``).

Examples
--------
>>> from tomography.topology import read_topology
>>> p = plan(scaled(read_topology("emulated-4x16-fast"), hosts_per_cluster=2), name="demo")
>>> len(p.namespaces), p.addresses["cb-01"], p.hosts["cb-01"]
(12, '10.201.1.3', 'tomo-demo-cb-01')
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import signal
import subprocess
import time
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import datetime, timezone
from itertools import groupby
from pathlib import Path
from typing import Any, Iterable, Sequence

import networkx as nx
import pandas as pd

from tomography.errors import TomographyError
from tomography.topology import HostGroup, Link, Topology

__all__ = ["TestbedError", "TestbedPlan", "Testbed", "Veth", "Port", "Route", "Shaper",
           "scaled", "plan", "up", "down", "status", "raised_testbeds", "load", "ADDRESS_PLAN",
           "STATE_DIR"]

PREFIX = "tomo-"
STATE_DIR = Path("/run/tomography")
NETNS_DIR = Path("/run/netns")  # where iproute2 keeps named namespaces
ADDRESS_PLAN = ("hosts of router r (0-based, topology order): 10.201.<r>.<k+2>/24, k their "
                "index on the router, gateway (router bridge) 10.201.<r>.1; router link j: "
                "the j-th /30 of 10.202.0.0/16, .1 at link.a, .2 at link.b")
STATE_FORMAT = "tomography-testbed/1"

FRAME = 1514            # bytes of a full Ethernet frame on a veth (MTU 1500)
BURST_TIME = 1e-3       # s of tokens in a tbf bucket
BURST_FRAMES = 10       # and at least this many full frames
QUEUE_TIME = 0.1        # s of traffic a shaped queue holds before dropping
NETEM_MIN_LIMIT = 1000  # packets netem may hold (its default)
SOURCE_TABLE = 1000     # routing table of source router r: SOURCE_TABLE + r
KILL_WAIT = 2.0         # s to wait for killed processes to leave a namespace

# Routers forward; reverse-path filtering is off because the topology's routes
# between two routers may differ by direction (ties) and must not be dropped.
FORWARDING = ("echo 1 > /proc/sys/net/ipv4/ip_forward && "
              "for f in /proc/sys/net/ipv4/conf/*/rp_filter; do echo 0 > $f; done")

# IPv4 only: with IPv6 on, every link that comes up sends router solicitations and
# duplicate-address probes, traffic that is not the run's (set before any device exists).
NO_IPV6 = ("[ -d /proc/sys/net/ipv6 ] || exit 0; "
           "echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6 && "
           "echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6")

_NAME = re.compile(r"[a-z0-9]{1,8}")
_NODE = re.compile(r"[A-Za-z0-9_.-]+")


class TestbedError(TomographyError):
    """The testbed cannot be raised, found or taken down; says what and how to fix it."""

    __test__ = False  # not a pytest test class, despite its name


# --------------------------------------------------------------------------- scaling

@dataclass(frozen=True)
class _FirstHosts(HostGroup):
    """A cluster cut to its first hosts, named with the zero padding of the whole cluster."""

    width: int = 2

    @property
    def host_names(self) -> list[str]:
        """Names of its hosts: those of the first ``count`` hosts of the whole cluster."""
        return [f"{self.prefix}{i:0{self.width}d}" for i in range(self.count)]


def _padding(count: int) -> int:
    return max(2, len(str(count - 1)))


def scaled(topology: Topology, *, bandwidth: float = 1.0,
           hosts_per_cluster: int | None = None) -> Topology:
    """A copy of a topology with capacities scaled and clusters cut.

    Parameters
    ----------
    topology : Topology
        Left unchanged.
    bandwidth : float
        Factor on every capacity: links, ``nic_up`` and ``nic_down``.
    hosts_per_cluster : int, optional
        Keep at most this many hosts per cluster: the first ones, with their
        names unchanged.  None keeps them all.

    Returns
    -------
    Topology
        With the same name.

    Raises
    ------
    ValueError
        When ``bandwidth`` is not a positive number or ``hosts_per_cluster``
        not a positive integer.

    Examples
    --------
    >>> from tomography.topology import read_topology
    >>> t = scaled(read_topology("emulated-4x16-fast"), bandwidth=0.5, hosts_per_cluster=2)
    >>> t.name, [h.name for h in t.hosts][:3], t.links[0].capacity / 2**20 / 8
    ('emulated-4x16-fast', ['ca-00', 'ca-01', 'cb-00'], 5.0)
    """
    if isinstance(bandwidth, bool) or not isinstance(bandwidth, (int, float)) \
            or not math.isfinite(bandwidth) or bandwidth <= 0:
        raise ValueError(f"bandwidth: the factor on capacities must be a positive number, "
                         f"got {bandwidth!r}")
    if hosts_per_cluster is not None and (isinstance(hosts_per_cluster, bool)
                                          or not isinstance(hosts_per_cluster, int)
                                          or hosts_per_cluster < 1):
        raise ValueError(f"hosts_per_cluster: must be an integer >= 1 (or None for all), "
                         f"got {hosts_per_cluster!r}")
    return Topology(name=topology.name, routers=list(topology.routers),
                    links=[replace(link, capacity=link.capacity * bandwidth)
                           for link in topology.links],
                    clusters=[_scaled_group(c, bandwidth, hosts_per_cluster)
                              for c in topology.clusters],
                    description=topology.description, source=topology.source)


def _scaled_group(group: HostGroup, bandwidth: float, keep: int | None) -> HostGroup:
    count = group.count if keep is None else min(group.count, keep)
    width = len(group.host_names[0]) - len(group.prefix)
    group = replace(group, count=count, nic_up=group.nic_up * bandwidth,
                    nic_down=group.nic_down * bandwidth)
    if isinstance(group, _FirstHosts) or width == _padding(count):
        return group
    return _FirstHosts(**asdict(group), width=width)


# --------------------------------------------------------------------------- the plan

@dataclass(frozen=True)
class Veth:
    """A veth pair, each end made in its namespace under its final name."""

    namespace_a: str
    device_a: str
    namespace_b: str
    device_b: str


@dataclass(frozen=True)
class Port:
    """An interface to configure: a veth end, or a bridge (``kind="bridge"``) to create.

    ``address`` has its prefix length (``10.201.0.2/24``); ``master`` is the
    bridge a veth end joins.
    """

    namespace: str
    device: str
    address: str | None = None
    master: str | None = None
    kind: str = "veth"


@dataclass(frozen=True)
class Route:
    """A route in a namespace; with ``source``, only for packets from that subnet."""

    namespace: str
    destination: str
    via: str
    source: str | None = None
    table: int | None = None


@dataclass(frozen=True)
class Shaper:
    """Egress shaping of one device: ``rate`` in bit/s, one-way ``delay`` in seconds."""

    namespace: str
    device: str
    rate: float
    delay: float


@dataclass
class TestbedPlan:
    """Everything :func:`up` builds, computed by :func:`plan` without touching the system.

    Attributes
    ----------
    name : str
        The testbed's name.
    topology : Topology
        The topology built (already scaled).
    hosts, routers : dict
        Host (router) name to namespace.
    addresses : dict
        Host name to its IPv4 address (no prefix length).
    subnets : dict
        Router name to the subnet of its hosts (routers with hosts only).
    veths, ports, routes, shapers : list
        The pieces, in the order they are made.
    """

    __test__ = False  # not a pytest test class, despite its name

    name: str
    topology: Topology
    hosts: dict[str, str]
    routers: dict[str, str]
    addresses: dict[str, str]
    subnets: dict[str, str]
    veths: list[Veth] = field(default_factory=list)
    ports: list[Port] = field(default_factory=list)
    routes: list[Route] = field(default_factory=list)
    shapers: list[Shaper] = field(default_factory=list)

    @property
    def namespaces(self) -> list[str]:
        """Every namespace: routers first, then hosts, in topology order."""
        return [*self.routers.values(), *self.hosts.values()]

    def commands(self, *, netem: bool = False) -> list[list[str]]:
        """The commands :func:`up` runs, in order (it batches them per namespace).

        Parameters
        ----------
        netem : bool
            Whether the kernel has ``netem``: add the one-way delays.

        Examples
        --------
        >>> from tomography.topology import parse_topology
        >>> t = parse_topology({"name": "two", "routers": ["A"],
        ...                     "clusters": [{"name": "a", "router": "A", "hosts": 1,
        ...                                   "nic": "100Mbit/s", "latency": "1ms"}]})
        >>> for argv in plan(t, name="demo").commands():
        ...     print(" ".join(argv))  # doctest: +NORMALIZE_WHITESPACE
        ip netns add tomo-demo-r-A
        ip netns add tomo-demo-a-00
        ip link add eth0 netns tomo-demo-a-00 type veth peer name h0 netns tomo-demo-r-A
        ip netns exec tomo-demo-r-A sh -c [ -d /proc/sys/net/ipv6 ] || exit 0; echo 1 >
            /proc/sys/net/ipv6/conf/default/disable_ipv6 && echo 1 >
            /proc/sys/net/ipv6/conf/all/disable_ipv6
        ip netns exec tomo-demo-a-00 sh -c [ -d /proc/sys/net/ipv6 ] || exit 0; echo 1 >
            /proc/sys/net/ipv6/conf/default/disable_ipv6 && echo 1 >
            /proc/sys/net/ipv6/conf/all/disable_ipv6
        ip -n tomo-demo-r-A link set lo up
        ip -n tomo-demo-r-A link add br0 type bridge
        ip -n tomo-demo-r-A addr add 10.201.0.1/24 dev br0
        ip -n tomo-demo-r-A link set br0 up
        ip -n tomo-demo-r-A link set h0 master br0
        ip -n tomo-demo-r-A link set h0 up
        ip -n tomo-demo-a-00 link set lo up
        ip -n tomo-demo-a-00 addr add 10.201.0.2/24 dev eth0
        ip -n tomo-demo-a-00 link set eth0 up
        ip -n tomo-demo-a-00 route add default via 10.201.0.1
        ip netns exec tomo-demo-r-A sh -c echo 1 > /proc/sys/net/ipv4/ip_forward && for f in
            /proc/sys/net/ipv4/conf/*/rp_filter; do echo 0 > $f; done
        tc -n tomo-demo-r-A qdisc add dev h0 root tbf rate 100000000bit burst 15140 limit 1250000
        tc -n tomo-demo-a-00 qdisc add dev eth0 root tbf rate 100000000bit burst 15140
            limit 1250000
        """
        out = [["ip", "netns", "add", ns] for ns in self.namespaces]
        out += [["ip", "link", "add", v.device_a, "netns", v.namespace_a, "type", "veth",
                 "peer", "name", v.device_b, "netns", v.namespace_b] for v in self.veths]
        # before any link comes up ("all" reaches the devices made above)
        out += [["ip", "netns", "exec", ns, "sh", "-c", NO_IPV6] for ns in self.namespaces]
        for ns in self.namespaces:
            out.append(["ip", "-n", ns, "link", "set", "lo", "up"])
            out += [argv for p in self.ports if p.namespace == ns for argv in _port(p)]
            out += [argv for r in self.routes if r.namespace == ns for argv in _route(r)]
        out += [["ip", "netns", "exec", ns, "sh", "-c", FORWARDING]
                for ns in self.routers.values()]
        for ns in self.namespaces:
            out += [argv for s in self.shapers if s.namespace == ns for argv in _shape(s, netem)]
        return out


def _port(p: Port) -> list[list[str]]:
    ip = ["ip", "-n", p.namespace]
    out = [[*ip, "link", "add", p.device, "type", "bridge"]] if p.kind == "bridge" else []
    if p.master:
        out.append([*ip, "link", "set", p.device, "master", p.master])
    if p.address:
        out.append([*ip, "addr", "add", p.address, "dev", p.device])
    return [*out, [*ip, "link", "set", p.device, "up"]]


def _route(r: Route) -> list[list[str]]:
    ip = ["ip", "-n", r.namespace]
    if r.table is None:
        return [[*ip, "route", "add", r.destination, "via", r.via]]
    return [[*ip, "route", "add", r.destination, "via", r.via, "table", str(r.table)],
            [*ip, "rule", "add", "from", str(r.source), "to", r.destination,
             "table", str(r.table)]]


def _shape(s: Shaper, netem: bool) -> list[list[str]]:
    tc = ["tc", "-n", s.namespace, "qdisc", "add", "dev", s.device]
    if not (netem and s.delay > 0):
        return [[*tc, "root", *_tbf(s.rate)]]
    return [[*tc, "root", "handle", "1:", *_netem(s.rate, s.delay)],
            [*tc, "parent", "1:1", "handle", "10:", *_tbf(s.rate)]]


def _tbf(rate: float) -> list[str]:
    """A token bucket at ``rate`` bit/s.

    tbf rather than htb: each device has exactly one rate to enforce and no
    classes to share it among, and tbf takes netem's place as a child when a
    delay is added.  Its timers are high-resolution, so the bucket need not
    hold a jiffy of traffic: 1 ms of tokens (at least 10 full frames, so that
    slow links still pass full frames and segmented GSO packets without a
    wake-up per packet).  The queue holds about 100 ms of traffic, a
    bandwidth-delay product for the RTTs of the scenarios, then drops.
    """
    bytes_per_s = rate / 8
    burst = max(int(bytes_per_s * BURST_TIME), BURST_FRAMES * FRAME)
    limit = max(int(bytes_per_s * QUEUE_TIME), 2 * burst)
    return ["tbf", "rate", f"{round(rate)}bit", "burst", str(burst), "limit", str(limit)]


def _netem(rate: float, delay: float) -> list[str]:
    """A fixed delay, holding the packets in flight over it and the shaped queue behind it."""
    frames = math.ceil(rate / 8 * (delay + QUEUE_TIME) / FRAME)
    return ["netem", "delay", f"{round(delay * 1e6)}us", "limit",
            str(max(NETEM_MIN_LIMIT, 2 * frames))]


def plan(topology: Topology, *, name: str = "tb") -> TestbedPlan:
    """Compute the namespaces, addresses, links, shaping and routes of a testbed.

    Pure: touches nothing and needs no privilege.  Scale the topology first
    with :func:`scaled` if wanted.

    Parameters
    ----------
    topology : Topology
        What to emulate.
    name : str
        The testbed's name, ``[a-z0-9]{1,8}``; namespaces are ``tomo-<name>-*``.

    Returns
    -------
    TestbedPlan

    Raises
    ------
    TestbedError
        When the name is malformed, a host or router name cannot be part of a
        namespace name, two nodes would share a namespace, or the topology
        exceeds the address plan (256 routers, 253 hosts per router, 16384
        links).

    Examples
    --------
    >>> from tomography.topology import read_topology
    >>> p = plan(read_topology("bordeaux-2x2"), name="demo")
    >>> p.hosts["borderline-01"], p.addresses["borderline-01"]
    ('tomo-demo-borderline-01', '10.201.2.3')
    >>> p.subnets
    {'bordeaux-nortel': '10.201.2.0/24', 'bordeaux-dell': '10.201.3.0/24'}
    >>> [(r.destination, r.via) for r in p.routes if r.namespace == "tomo-demo-r-bordeaux-dell"]
    [('10.201.2.0/24', '10.202.0.9')]
    """
    prefix = _prefix(name)
    _check_size(topology)
    routers = {r: _namespace(prefix, f"r-{r}", f"router {r!r}") for r in topology.routers}
    hosts = {h.name: _namespace(prefix, h.name, f"host {h.name!r}") for h in topology.hosts}
    shared = sorted(set(routers.values()) & set(hosts.values()))
    if shared:
        raise TestbedError(f"a host and a router would share the namespace {shared[0]!r}; "
                           "rename the host (no host may be called r-<router>)")
    number = {r: i for i, r in enumerate(topology.routers)}
    subnets = {r: f"10.201.{number[r]}.0/24" for r in _hosted(topology)}
    out = TestbedPlan(name, topology, hosts, routers, {}, subnets)
    _plan_hosts(out, number)
    _plan_links(out)
    _plan_routes(out, number)
    return out


def _prefix(name: str) -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise TestbedError(f"testbed name must be 1 to 8 lowercase letters or digits, "
                           f"got {name!r}")
    return f"{PREFIX}{name}-"


def _namespace(prefix: str, node: str, what: str) -> str:
    if not _NODE.fullmatch(node):
        raise TestbedError(f"{what} cannot name a network namespace: use letters, digits, "
                           "'.', '_' and '-' only")
    return prefix + node


def _check_size(topology: Topology) -> None:
    per_router = {r: sum(h.router == r for h in topology.hosts) for r in topology.routers}
    crowded = max(per_router, key=per_router.get)
    limits = [(len(topology.routers), 256, "routers"), (len(topology.links), 16384, "links"),
              (per_router[crowded], 253, f"hosts on router {crowded!r}")]
    for have, most, what in limits:
        if have > most:
            raise TestbedError(f"topology {topology.name!r} has {have} {what}; the address "
                               f"plan allows at most {most}")


def _hosted(topology: Topology) -> list[str]:
    """Routers with hosts, in topology order."""
    used = {c.router for c in topology.clusters}
    return [r for r in topology.routers if r in used]


def _plan_hosts(p: TestbedPlan, number: dict[str, int]) -> None:
    """Each host: its address, its veth to the router's bridge, its NIC shaping."""
    for router in p.subnets:
        rns, r = p.routers[router], number[router]
        p.ports.append(Port(rns, "br0", f"10.201.{r}.1/24", kind="bridge"))
        on_router = [h for h in p.topology.hosts if h.router == router]
        for k, host in enumerate(on_router):
            hns, port = p.hosts[host.name], f"h{k}"
            p.addresses[host.name] = f"10.201.{r}.{k + 2}"
            p.veths.append(Veth(hns, "eth0", rns, port))
            p.ports += [Port(rns, port, master="br0"),
                        Port(hns, "eth0", f"{p.addresses[host.name]}/24")]
            p.routes.append(Route(hns, "default", f"10.201.{r}.1"))
            p.shapers += [Shaper(hns, "eth0", host.nic_up, host.latency),
                          Shaper(rns, port, host.nic_down, host.latency)]
    p.addresses = {h.name: p.addresses[h.name] for h in p.topology.hosts}


def _link_address(j: int, end: int) -> str:
    """Address of end 1 (``link.a``) or 2 (``link.b``) of router link ``j``."""
    return f"10.202.{j // 64}.{4 * (j % 64) + end}"


def _plan_links(p: TestbedPlan) -> None:
    """Each router link: a veth between the two routers, shaped both ways."""
    for j, link in enumerate(p.topology.links):
        ends = [(p.routers[link.a], 1), (p.routers[link.b], 2)]
        p.veths.append(Veth(ends[0][0], f"l{j}", ends[1][0], f"l{j}"))
        for ns, end in ends:
            p.ports.append(Port(ns, f"l{j}", f"{_link_address(j, end)}/30"))
            p.shapers.append(Shaper(ns, f"l{j}", link.capacity, link.latency))


def _plan_routes(p: TestbedPlan, number: dict[str, int]) -> None:
    """Routes by destination, and source-specific ones where those would leave the path."""
    topo = p.topology
    hosted = list(p.subnets)
    reach = nx.node_connected_component(topo.graph, hosted[0])
    main = {(u, d): topo.route(u, d)[0][1]
            for u in topo.routers if u in reach for d in hosted if d != u}
    for (u, d), v in main.items():
        p.routes.append(Route(p.routers[u], p.subnets[d], _next_hop(topo, u, v)))
    for s in hosted:
        for d in hosted:
            for u, v in topo.route(s, d) if s != d else []:
                if main[u, d] != v:
                    p.routes.append(Route(p.routers[u], p.subnets[d], _next_hop(topo, u, v),
                                          p.subnets[s], SOURCE_TABLE + number[s]))


def _next_hop(topology: Topology, u: str, v: str) -> str:
    """Address of router ``v`` on its link with ``u``."""
    j = topology.graph.edges[u, v]["index"]
    return _link_address(j, 1 if topology.links[j].a == v else 2)


# --------------------------------------------------------------------------- the testbed

@dataclass
class Testbed:
    """A testbed that is up (or was: see :func:`status`).

    Attributes
    ----------
    name : str
        Its name; its namespaces are ``tomo-<name>-*``.
    topology : Topology
        The topology emulated, already scaled.
    hosts : dict
        Host name to namespace.
    addresses : dict
        Host name to IPv4 address.
    subnets : dict
        Router name to the subnet of its hosts.
    latency_applied : bool
        Whether one-way latencies are emulated (needs ``netem``).
    latency_note : str
        Why or why not, for a person.
    scale : dict
        ``{"bandwidth": factor, "hosts_per_cluster": k or None}``.
    created : str
        ISO 8601 time of :func:`up`.
    """

    __test__ = False  # not a pytest test class, despite its name

    name: str
    topology: Topology
    hosts: dict[str, str]
    addresses: dict[str, str]
    subnets: dict[str, str]
    latency_applied: bool
    latency_note: str
    scale: dict[str, Any]
    created: str

    def command(self, host: str, argv: Sequence[str]) -> list[str]:
        """The command that runs ``argv`` on ``host``: a launcher for :mod:`measure.coordinator`.

        Raises
        ------
        TestbedError
            When the testbed has no such host.
        """
        if host not in self.hosts:
            raise TestbedError(f"testbed {self.name!r} has no host {host!r} "
                               f"(hosts: {', '.join(list(self.hosts)[:5])}, ...)")
        return ["ip", "netns", "exec", self.hosts[host], *argv]

    def host_table(self) -> pd.DataFrame:
        """``host,address,label`` rows for a measurement dataset, with the testbed's addresses."""
        table = self.topology.host_table()
        table["address"] = table["host"].map(self.addresses)
        return table

    def to_meta(self) -> dict[str, Any]:
        """What a dataset's ``meta.json`` records about the testbed."""
        return {"name": self.name, "topology": self.topology.name, "scale": dict(self.scale),
                "latency_applied": self.latency_applied, "latency_note": self.latency_note,
                "address_plan": ADDRESS_PLAN, "subnets": dict(self.subnets),
                "created": self.created}


def _state_path(name: str) -> Path:
    return STATE_DIR / f"testbed-{name}.json"


def _state(testbed: Testbed) -> dict[str, Any]:
    topo = testbed.topology
    model = {"name": topo.name, "description": topo.description, "source": topo.source,
             "routers": topo.routers, "links": [asdict(link) for link in topo.links],
             "clusters": [asdict(c) for c in topo.clusters]}
    return {"format": STATE_FORMAT, **{f.name: getattr(testbed, f.name)
                                       for f in fields(testbed) if f.name != "topology"},
            "topology_name": topo.name, "address_plan": ADDRESS_PLAN, "topology": model}


def _from_state(state: dict[str, Any]) -> Testbed:
    model = state["topology"]
    topo = Topology(name=model["name"], routers=model["routers"],
                    links=[Link(**link) for link in model["links"]],
                    clusters=[(_FirstHosts if "width" in c else HostGroup)(**c)
                              for c in model["clusters"]],
                    description=model["description"], source=model["source"])
    return Testbed(state["name"], topo, state["hosts"], state["addresses"], state["subnets"],
                   state["latency_applied"], state["latency_note"], state["scale"],
                   state["created"])


def load(name: str = "tb") -> Testbed:
    """The testbed raised earlier by :func:`up`, from its state file.

    Raises
    ------
    TestbedError
        When no testbed of that name is up, or its state file is unreadable.

    Examples
    --------
    >>> load("nosuch")
    Traceback (most recent call last):
    ...
    measure.testbed.TestbedError: no testbed 'nosuch' is up: no state file \
/run/tomography/testbed-nosuch.json; raise one with measure.testbed.up
    """
    _prefix(name)
    path = _state_path(name)
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TestbedError(f"no testbed {name!r} is up: no state file {path}; raise one "
                           "with measure.testbed.up") from None
    except (OSError, ValueError) as exc:
        raise TestbedError(f"{path}: cannot read the testbed's state: {exc}") from None
    if not isinstance(state, dict) or state.get("format") != STATE_FORMAT:
        raise TestbedError(f"{path}: not a testbed state file (format {STATE_FORMAT})")
    try:
        return _from_state(state)
    except (KeyError, TypeError) as exc:
        raise TestbedError(f"{path}: malformed testbed state ({exc!r})") from None


# --------------------------------------------------------------------------- the system

def _require(tools: Iterable[str]) -> None:
    """Refuse unless root with ``tools`` on PATH."""
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        raise TestbedError(f"the testbed needs {' and '.join(missing)} (iproute2), not found "
                           "on PATH; install it, e.g. `apt-get install iproute2`")
    if os.geteuid() != 0:
        raise TestbedError("the testbed needs root (it creates network namespaces and tc "
                           f"qdiscs) and this process runs as uid {os.geteuid()}; run it as "
                           "root, e.g. with sudo")


def _run(argv: list[str], lines: list[str] | None = None) -> None:
    """Run a command (a batch when ``lines`` are given); TestbedError naming what failed."""
    done = subprocess.run(argv, input=None if lines is None else "\n".join(lines) + "\n",
                          capture_output=True, text=True)
    if done.returncode == 0:
        return
    failed = argv
    at = re.search(r"Command failed -:(\d+)", done.stderr)
    if lines is not None and at and int(at.group(1)) <= len(lines):
        failed = [*argv[:-2], lines[int(at.group(1)) - 1]]
    detail = done.stderr.strip().replace("\n", "; ") or f"exit status {done.returncode}"
    raise TestbedError(f"`{' '.join(failed)}` failed: {detail}")


def _batch_key(argv: list[str]) -> tuple[str, ...]:
    if argv[:3] == ["ip", "netns", "exec"]:
        return ()
    return tuple(argv[:3]) if argv[1] == "-n" else (argv[0],)


def _batches(commands: list[list[str]]) -> list[tuple[list[str], list[str] | None]]:
    """Runs of consecutive ``ip``/``tc`` commands for one namespace as one ``-batch``."""
    out: list[tuple[list[str], list[str] | None]] = []
    for key, run in groupby(commands, key=_batch_key):
        run = list(run)
        if not key:
            out += [(argv, None) for argv in run]
        else:
            out.append(([*key, "-batch", "-"], [" ".join(a[len(key):]) for a in run]))
    return out


def _namespaces(prefix: str) -> list[str]:
    """Named namespaces with the prefix (what ``ip netns list`` shows)."""
    try:
        names = os.listdir(NETNS_DIR)
    except FileNotFoundError:
        return []
    return sorted(n for n in names if n.startswith(prefix))


def _probe_netem(prefix: str) -> tuple[bool, str]:
    """Whether the kernel has netem, tried on a scratch namespace, and a note for people."""
    scratch = prefix + "netem-probe"
    _run(["ip", "netns", "add", scratch])
    try:
        done = subprocess.run(["tc", "-n", scratch, "qdisc", "add", "dev", "lo", "root",
                               "netem", "delay", "1ms"], capture_output=True, text=True)
    finally:
        _run(["ip", "netns", "del", scratch])
    if done.returncode == 0:
        return True, "one-way latencies applied with netem on every shaped device"
    return False, ("latency not emulated, only bandwidth: this kernel has no netem qdisc "
                   f"(tc said: {done.stderr.strip() or done.returncode}); load sch_netem "
                   "(`modprobe sch_netem`) or use a kernel with CONFIG_NET_SCH_NETEM")


def up(topology: Topology, *, name: str = "tb", bandwidth: float = 1.0,
       hosts_per_cluster: int | None = None) -> Testbed:
    """Build a testbed emulating ``topology`` on this machine (needs root).

    Parameters
    ----------
    topology : Topology
        What to emulate.
    name : str
        The testbed's name, ``[a-z0-9]{1,8}``.
    bandwidth, hosts_per_cluster
        Scaling, as in :func:`scaled`.

    Returns
    -------
    Testbed
        Also recorded in ``/run/tomography/testbed-<name>.json`` for :func:`load`.

    Raises
    ------
    TestbedError
        When not root, ``ip`` or ``tc`` is missing, a testbed of that name is
        already up, or a command fails (naming it and its error; whatever was
        made is removed first).

    Examples
    --------
    >>> from tomography.topology import read_topology
    >>> tb = up(read_topology("bordeaux-2x2"), name="demo")  # doctest: +SKIP
    >>> tb.command("borderline-00", ["hostname", "-I"])  # doctest: +SKIP
    ['ip', 'netns', 'exec', 'tomo-demo-borderline-00', 'hostname', '-I']
    """
    prefix = _prefix(name)
    _require(("ip", "tc"))
    layout = plan(scaled(topology, bandwidth=bandwidth, hosts_per_cluster=hosts_per_cluster),
                  name=name)
    existing = _namespaces(prefix)
    if existing:
        raise TestbedError(f"testbed {name!r} is already up ({len(existing)} namespaces "
                           f"{prefix}*); take it down first with down({name!r})")
    netem, note = _probe_netem(prefix)
    try:
        for argv, lines in _batches(layout.commands(netem=netem)):
            _run(argv, lines)
        testbed = Testbed(name, layout.topology, layout.hosts, layout.addresses,
                          layout.subnets, netem, note,
                          {"bandwidth": bandwidth, "hosts_per_cluster": hosts_per_cluster},
                          datetime.now(timezone.utc).isoformat(timespec="seconds"))
        _write_state(testbed)
    except BaseException:
        down(name)
        raise
    return testbed


def _write_state(testbed: Testbed) -> None:
    path = _state_path(testbed.name)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(_state(testbed), indent=1) + "\n", encoding="utf-8")
    except OSError as exc:
        raise TestbedError(f"cannot write the testbed's state file {path}: {exc}") from None


def _identities(namespaces: list[str]) -> set[tuple[int, int]]:
    """Device and inode of each named namespace: how ``ip netns pids`` recognises it."""
    out: set[tuple[int, int]] = set()
    for ns in namespaces:
        try:
            st = os.stat(NETNS_DIR / ns)
        except OSError:
            continue
        out.add((st.st_dev, st.st_ino))
    return out


def _pids(wanted: set[tuple[int, int]]) -> list[int]:
    """Processes living in any of the namespaces identified by ``wanted``."""
    out: list[int] = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                st = os.stat(f"/proc/{entry}/ns/net")
            except OSError:
                continue  # gone, or a zombie that has left its namespaces
            if (st.st_dev, st.st_ino) in wanted:
                out.append(int(entry))
    return out


def _kill_inside(wanted: set[tuple[int, int]]) -> None:
    """Kill every process in the namespaces and wait until they have left them."""
    deadline = time.monotonic() + KILL_WAIT
    while pids := _pids(wanted):
        if os.getpid() in pids:
            raise TestbedError("cannot take a testbed down from inside one of its namespaces; "
                               "run down from the root namespace")
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if time.monotonic() > deadline:
            raise TestbedError(f"processes {pids[:10]} in testbed namespaces survived SIGKILL "
                               f"for {KILL_WAIT} s; the namespaces were left in place")
        time.sleep(0.02)


def down(name: str = "tb", *, all: bool = False) -> list[str]:
    """Take a testbed down: its processes, namespaces and state file (needs root).

    Works from what is on the system, not from the state file, so it also
    cleans up after a crash.  Touches only namespaces ``tomo-<name>-*`` (with
    ``all``, every ``tomo-*``) and the matching state files.

    Parameters
    ----------
    name : str
        The testbed's name.
    all : bool
        Take down every testbed.

    Returns
    -------
    list of str
        The namespaces and state files removed (empty when nothing was up).

    Examples
    --------
    >>> name = "demo"
    >>> down(name)  # doctest: +SKIP
    ['tomo-demo-r-R1', ..., '/run/tomography/testbed-demo.json']
    """
    prefix = PREFIX if all else _prefix(name)
    _require(("ip",))
    namespaces = _namespaces(prefix)
    identities = _identities(namespaces)
    _kill_inside(identities)
    if namespaces:
        _run(["ip", "-batch", "-"], [f"netns del {ns}" for ns in namespaces])
        _kill_inside(identities)  # any that entered while the first ones were killed
    files = sorted(STATE_DIR.glob("testbed-*.json")) if all else [_state_path(name)]
    removed = [str(f) for f in files if f.exists()]
    for f in removed:
        Path(f).unlink()
    return namespaces + removed


def raised_testbeds() -> list[dict[str, Any]]:
    """The :func:`status` of every testbed this tool raised, whole or half-built.

    Names come from the state files and from the namespaces (``tomo-NAME-*``)
    present, so a testbed whose ``up`` was killed before its state file was
    written is listed too (with ``up`` false and its namespaces).

    Examples
    --------
    >>> isinstance(raised_testbeds(), list)
    True
    """
    names = {f.name[len("testbed-"):-len(".json")] for f in STATE_DIR.glob("testbed-*.json")}
    names |= {ns[len(PREFIX):].split("-", 1)[0] for ns in _namespaces(PREFIX)}
    return [status(n) for n in sorted(names) if _NAME.fullmatch(n)]


def status(name: str = "tb") -> dict[str, Any]:
    """What is on the system of a testbed: its namespaces and its state file.

    Returns
    -------
    dict
        ``up`` (state file present and every namespace it names exists),
        ``namespaces`` (those present with the prefix), ``missing`` (named by
        the state file but absent) and ``state`` (the file's content or None).

    Examples
    --------
    >>> status("nosuch")
    {'name': 'nosuch', 'up': False, 'namespaces': [], 'missing': [], 'state': None}
    """
    prefix = _prefix(name)
    present = _namespaces(prefix)
    try:
        state = json.loads(_state_path(name).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        state = None
    expected: set[str] = set()
    if isinstance(state, dict):
        expected = {*state.get("hosts", {}).values(),
                    *(f"{prefix}r-{r}" for r in state.get("topology", {}).get("routers", []))}
    missing = sorted(expected - set(present))
    return {"name": name, "up": state is not None and not missing, "namespaces": present,
            "missing": missing, "state": state}
