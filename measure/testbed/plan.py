"""The plan of a testbed: namespaces, veth pairs, bridges, addresses and routes.

:func:`plan` turns a :class:`~tomography.model.topology.Topology` into everything
:func:`measure.testbed.up` builds, without touching the system, so the layout
can be read and tested without root.

Layout
------
Every namespace is called ``tomo-<name>-<node>`` (:mod:`measure.testbed.names`).

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
* Unreachable pairs (:attr:`Topology.unreachable <tomography.model.topology.Topology>`):
  each router refuses what its hosts send to the other router's hosts (a
  ``prohibit`` rule ahead of every table, :data:`REFUSAL_PREFERENCE`), as a
  firewall would: a connection between them fails at once ("no route to
  host").

Shaping is :mod:`measure.testbed.shaping`'s.

Examples
--------
>>> from measure.testbed import scaled
>>> from tomography.model.topology import read_topology
>>> p = plan(scaled(read_topology("emulated-4x16-fast"), hosts_per_cluster=2), name="demo")
>>> len(p.namespaces), p.addresses["cb-01"], p.hosts["cb-01"]
(12, '10.201.1.3', 'tomo-demo-cb-01')
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import networkx as nx

from measure.testbed.names import TestbedError, prefix
from measure.testbed.shaping import Shaper, shape
from tomography.model.topology import Topology

__all__ = ["Veth", "Port", "Route", "Refusal", "TestbedPlan", "plan", "ADDRESS_PLAN"]

ADDRESS_PLAN = ("hosts of router r (0-based, topology order): 10.201.<r>.<k+2>/24, k their "
                "index on the router, gateway (router bridge) 10.201.<r>.1; router link j: "
                "the j-th /30 of 10.202.0.0/16, .1 at link.a, .2 at link.b")
SOURCE_TABLE = 1000     # routing table of source router r: SOURCE_TABLE + r
REFUSAL_PREFERENCE = 100
"""Preference of the rules refusing unreachable pairs: before the source tables' rules and
the main table (32766)."""

# Routers forward; reverse-path filtering is off because the topology's routes
# between two routers may differ by direction (ties) and must not be dropped.
FORWARDING = ("echo 1 > /proc/sys/net/ipv4/ip_forward && "
              "echo 0 > /proc/sys/net/ipv4/icmp_ratelimit && "
              "for f in /proc/sys/net/ipv4/conf/*/rp_filter; do echo 0 > $f; done")
# A router refusing an unreachable pair answers each packet at once: with ICMP's rate limit
# the refusals of several connections at once were dropped, and each waited for its SYN to
# be sent again (seconds).

# IPv4 only: with IPv6 on, every link that comes up sends router solicitations and
# duplicate-address probes, traffic that is not the run's (set before any device exists).
NO_IPV6 = ("[ -d /proc/sys/net/ipv6 ] || exit 0; "
           "echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6 && "
           "echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6")

_NODE = re.compile(r"[A-Za-z0-9_.-]+")


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
class Refusal:
    """A router's rule refusing packets from one subnet to another (an unreachable pair)."""

    namespace: str
    source: str
    destination: str

    def command(self) -> list[str]:
        """The ``ip rule`` that makes it.

        Examples
        --------
        >>> Refusal("tomo-gl-r-n0", "10.201.1.0/24", "10.201.2.0/24").command()
        ... # doctest: +NORMALIZE_WHITESPACE
        ['ip', '-n', 'tomo-gl-r-n0', 'rule', 'add', 'pref', '100', 'from', '10.201.1.0/24',
         'to', '10.201.2.0/24', 'prohibit']
        """
        return ["ip", "-n", self.namespace, "rule", "add", "pref", str(REFUSAL_PREFERENCE),
                "from", self.source, "to", self.destination, "prohibit"]


@dataclass
class TestbedPlan:
    """Everything :func:`measure.testbed.up` builds, computed by :func:`plan` without root.

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
    veths, ports, routes, shapers, refusals : list
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
    refusals: list[Refusal] = field(default_factory=list)

    @property
    def namespaces(self) -> list[str]:
        """Every namespace: routers first, then hosts, in topology order."""
        return [*self.routers.values(), *self.hosts.values()]

    def commands(self, *, netem: bool = False) -> list[list[str]]:
        """The commands :func:`measure.testbed.up` runs, in order (batched per namespace).

        Parameters
        ----------
        netem : bool
            Whether the kernel has ``netem``: add the one-way delays.

        Examples
        --------
        >>> from tomography.model.topology import parse_topology
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
        ip netns exec tomo-demo-r-A sh -c echo 1 > /proc/sys/net/ipv4/ip_forward && echo 0 >
            /proc/sys/net/ipv4/icmp_ratelimit && for f in /proc/sys/net/ipv4/conf/*/rp_filter;
            do echo 0 > $f; done
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
            out += [r.command() for r in self.refusals if r.namespace == ns]
        out += [["ip", "netns", "exec", ns, "sh", "-c", FORWARDING]
                for ns in self.routers.values()]
        for ns in self.namespaces:
            out += [argv for s in self.shapers if s.namespace == ns for argv in shape(s, netem)]
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


def plan(topology: Topology, *, name: str = "tb") -> TestbedPlan:
    """Compute the namespaces, addresses, links, shaping and routes of a testbed.

    Pure: touches nothing and needs no privilege.  Scale the topology first
    with :func:`measure.testbed.scaled` if wanted.

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
    >>> from tomography.model.topology import read_topology
    >>> p = plan(read_topology("bordeaux-2x2"), name="demo")
    >>> p.hosts["borderline-01"], p.addresses["borderline-01"]
    ('tomo-demo-borderline-01', '10.201.2.3')
    >>> p.subnets
    {'bordeaux-nortel': '10.201.2.0/24', 'bordeaux-dell': '10.201.3.0/24'}
    >>> [(r.destination, r.via) for r in p.routes if r.namespace == "tomo-demo-r-bordeaux-dell"]
    [('10.201.2.0/24', '10.202.0.9')]
    """
    start = prefix(name)
    _check_size(topology)
    routers = {r: _namespace(start, f"r-{r}", f"router {r!r}") for r in topology.routers}
    hosts = {h.name: _namespace(start, h.name, f"host {h.name!r}") for h in topology.hosts}
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
    out.refusals = [Refusal(routers[s], subnets[s], subnets[d])
                    for a, b in topology.unreachable for s, d in ((a, b), (b, a))]
    return out


def _namespace(start: str, node: str, what: str) -> str:
    if not _NODE.fullmatch(node):
        raise TestbedError(f"{what} cannot name a network namespace: use letters, digits, "
                           "'.', '_' and '-' only")
    return start + node


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
    """Each router link: a veth between the two routers, shaped both ways.

    Each end's egress at the capacity of the direction it sends into
    (:meth:`~tomography.model.topology.Link.capacity_from`).  The dead way of a
    one-way link carries no route, only ARP: it is shaped at the other way's
    rate (tbf needs a rate).
    """
    for j, link in enumerate(p.topology.links):
        ends = [(p.routers[link.a], 1, link.a), (p.routers[link.b], 2, link.b)]
        p.veths.append(Veth(ends[0][0], f"l{j}", ends[1][0], f"l{j}"))
        for ns, end, router in ends:
            p.ports.append(Port(ns, f"l{j}", f"{_link_address(j, end)}/30"))
            rate = link.capacity_from(router) or max(link.capacity_from(link.a),
                                                     link.capacity_from(link.b))
            p.shapers.append(Shaper(ns, f"l{j}", rate, link.latency))


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

