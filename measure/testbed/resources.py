"""What a testbed costs this machine, estimated before it is raised: cores and memory.

The namespaces, veths and queues of a testbed cost little memory and no CPU
at rest.  What costs is measuring in it: one libtorrent peer per host, and
every bit the peers exchange crossing veths, bridges, routers and ``tbf``
queues, all on this machine's cores.  So::

    cores  = peers x PEER_CPU + rate x CPU_PER_GBIT
    memory = namespaces x NAMESPACE_MEMORY + peers x PEER_MEMORY

``rate`` (:func:`broadcast_rate`) is the most a broadcast moves at once
through the shapers: for each host, the lower of its download capacity and
the narrowest cut between the root and it (the root's upload, the minimum cut
of the link capacities from the root's router to its router: each direction
of a link at its own capacity), summed over the hosts, for the root whose
broadcast moves most.  A host cannot go on receiving faster than the file crosses every
cut between it and the root, so this bounds a broadcast's sustained rate;
the shapers' own sum (every NIC at full speed at once) is never reached
behind slower links.  A measurement also keeps one copy of the broadcast
file per host in ``/dev/shm`` (memory), which the testbed cannot know.

The constants were measured on this project's 2-core test machine (AMD EPYC
VM, Linux 6.18, libtorrent 2.1) with ``benchmarks/testbed_cost.py``
(``benchmarks/RESULTS.md`` has the runs):

* ``NAMESPACE_MEMORY``: N1 raised whole (527 namespaces with their veth
  ends and qdiscs) took 0.40 and 0.61 MiB of MemAvailable per namespace in
  two raises (other workers share the machine), 0.29-0.30 MiB of it
  unreclaimable slab;
* ``PEER_MEMORY``: the proportional set size of the peers during broadcasts
  (their copy of the file apart), 58-60 MiB per peer at ``two-sites-demo``'s
  capacities and 105 MiB at 100 times them, the larger kept;
* ``PEER_CPU`` and ``CPU_PER_GBIT``: real broadcasts in ``two-sites-demo`` at
  its capacities (8 MiB) and at 100 times them (128 MiB), with 20 and 8 peers:
  the CPU time of the coordinator and the peers, plus softirq time, fitted by
  least squares as peers x seconds x ``PEER_CPU`` + Gbit received x
  ``CPU_PER_GBIT`` (0.050 and 0.74: one core moves 1.36 Gbit/s; the fit is
  within 16% of every run).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Callable

import networkx as nx

from measure.testbed.names import TestbedError
from tomography.model.scaling import scaled
from tomography.model.topology import Topology

__all__ = ["Estimate", "Machine", "estimate", "machine", "broadcast_rate", "check",
           "NAMESPACE_MEMORY", "PEER_MEMORY", "PEER_CPU", "CPU_PER_GBIT"]

MiB = 2**20
NAMESPACE_MEMORY = 0.6 * MiB  # bytes per namespace, with its veth ends and qdiscs
PEER_MEMORY = 105 * MiB       # bytes per libtorrent peer, without the file's copy
PEER_CPU = 0.05               # cores per running peer, apart from the data it moves
CPU_PER_GBIT = 0.74           # core-seconds per Gbit received through the testbed


@dataclass(frozen=True)
class Machine:
    """What this machine offers: ``cores`` this process may use, ``memory`` available (bytes)."""

    cores: int
    memory: float


@dataclass(frozen=True)
class Estimate:
    """What a testbed needs while measured: see the module's description.

    Attributes
    ----------
    namespaces, peers : int
        Namespaces (hosts and routers) and peers (one per host).
    rate : float
        The most a broadcast moves at once, bit/s (:func:`broadcast_rate`).
    cores : float
        Cores busy at that rate.
    memory : float
        Bytes, without the broadcast file's copies.
    """

    namespaces: int
    peers: int
    rate: float
    cores: float
    memory: float

    def fits(self, m: Machine) -> bool:
        """Whether machine ``m`` can carry it.

        Examples
        --------
        >>> e = Estimate(26, 20, 7e8, 1.4, 1.3 * 2**30)
        >>> e.fits(Machine(2, 8 * 2**30)), e.fits(Machine(1, 8 * 2**30))
        (True, False)
        """
        return self.cores <= m.cores and self.memory <= m.memory

    def describe(self, m: Machine) -> str:
        """The estimate against machine ``m``, for people.

        Examples
        --------
        >>> print(Estimate(26, 20, 7e8, 1.4, 1.3 * 2**30).describe(Machine(2, 8 * 2**30)))
        26 namespaces, 20 peers, at most 0.70 Gbit/s through the shapers: about 1.4 cores \
(this machine has 2) and 1.3 GiB of memory (8.0 GiB available)
        """
        return (f"{self.namespaces} namespaces, {self.peers} peers, at most "
                f"{self.rate / 1e9:.2f} Gbit/s through the shapers: about {self.cores:.1f} "
                f"cores (this machine has {m.cores}) and {self.memory / 2**30:.1f} GiB of "
                f"memory ({m.memory / 2**30:.1f} GiB available)")


def machine() -> Machine:
    """This machine: the cores this process may run on, and MemAvailable of /proc/meminfo.

    Examples
    --------
    >>> m = machine()
    >>> m.cores >= 1 and m.memory > 0
    True
    """
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    memory = math.inf
    try:
        with open("/proc/meminfo", encoding="ascii") as info:
            for line in info:
                if line.startswith("MemAvailable:"):
                    memory = int(line.split()[1]) * 1024
    except OSError:
        pass
    return Machine(cores, memory)


def _cuts(topology: Topology) -> Callable[[str, str], float]:
    """The minimum cut of link capacities from one router to another.

    A Gomory-Hu tree of the undirected router graph when every link has one
    capacity for both directions.  Otherwise the cut from ``a`` to ``b``
    depends on the direction: the maximum flow from ``a`` to ``b`` over each
    direction's own capacity (:func:`_directed_cuts`); neither direction
    alone, nor the undirected graph at either, would bound it right.
    """
    if not topology.symmetric:
        return _directed_cuts(topology)
    graph = topology.graph
    narrowest: dict[str, dict[str, float]] = {}
    for part in nx.connected_components(graph):
        if len(part) == 1:
            continue
        tree = nx.gomory_hu_tree(graph.subgraph(part), capacity="capacity")
        for source in part:
            along = narrowest[source] = {source: math.inf}
            for u, v in nx.bfs_edges(tree, source):
                along[v] = min(along[u], tree[u][v]["weight"])
    return lambda a, b: math.inf if a == b else narrowest.get(a, {}).get(b, 0.0)


def _directed_cuts(topology: Topology) -> Callable[[str, str], float]:
    """The minimum cut from router ``a`` to router ``b`` (a maximum flow), each pair once."""
    graph = nx.DiGraph()
    graph.add_nodes_from(topology.routers)
    for link in topology.links:
        for u, v in ((link.a, link.b), (link.b, link.a)):
            if link.capacity_from(u) > 0:
                graph.add_edge(u, v, capacity=link.capacity_from(u))
    known: dict[tuple[str, str], float] = {}

    def cut(a: str, b: str) -> float:
        if a == b:
            return math.inf
        if (a, b) not in known:
            known[a, b] = float(nx.maximum_flow_value(graph, a, b))
        return known[a, b]
    return cut


def broadcast_rate(topology: Topology, cut: Callable[[str, str], float] | None = None
                   ) -> float:
    """The most a broadcast moves at once through the testbed's shapers, bit/s.

    For each root cluster, every other host's download capacity or the
    narrowest cut between the root and it (the root's upload, the minimum cut
    of the links), whichever is lower, summed over the hosts; the largest sum.

    Examples
    --------
    Two sites of two 5-host clusters (100 Mbit/s NICs, 40 Mbit/s uplinks, 10
    Mbit/s between the sites): from a root in w1, its 4 neighbours take 100,
    the 5 hosts of w2 40 and the 10 across 10 Mbit/s.

    >>> from tomography.model.topology import read_topology
    >>> broadcast_rate(read_topology("two-sites-demo")) / 1e6
    700.0
    """
    cut = cut or _cuts(topology)
    best = 0.0
    for root in (c for c in topology.clusters if c.count):
        total = 0.0
        for c in topology.clusters:
            receivers = c.count - (c is root)
            total += receivers * min(c.nic_down, root.nic_up, cut(root.router, c.router))
        best = max(best, total)
    return best


def estimate(topology: Topology, cut: Callable[[str, str], float] | None = None) -> Estimate:
    """What measuring ``topology`` (already scaled) in a testbed needs.

    Parameters
    ----------
    topology : Topology
        As it will be raised.
    cut : callable, optional
        The router cuts, when known already (the same routers and links).

    Examples
    --------
    >>> from tomography.model.topology import read_topology
    >>> e = estimate(read_topology("two-sites-demo"))
    >>> e.namespaces, e.peers, round(e.cores, 2), round(e.memory / 2**30, 2)
    (26, 20, 1.52, 2.07)
    >>> e.fits(Machine(2, 4 * 2**30))
    True
    """
    peers = len(topology.hosts)
    namespaces = peers + len(topology.routers)
    rate = broadcast_rate(topology, cut)
    return Estimate(namespaces, peers, rate, peers * PEER_CPU + rate / 1e9 * CPU_PER_GBIT,
                    namespaces * NAMESPACE_MEMORY + peers * PEER_MEMORY)


def check(topology: Topology, *, name: str = "tb", bandwidth: float = 1.0,
          m: Machine | None = None) -> Estimate:
    """Refuse a testbed this machine cannot carry, saying how to shrink it.

    Parameters
    ----------
    topology : Topology
        As it will be raised (already scaled).
    name : str
        The testbed's name, for the message.
    bandwidth : float
        The factor already applied to its capacities: the ``--bandwidth-scale``
        the advice starts from.
    m : Machine, optional
        Default: this machine.

    Returns
    -------
    Estimate
        When it fits.

    Raises
    ------
    TestbedError
        With the estimate, the machine, and the ``--hosts-per-cluster`` and
        ``--bandwidth-scale`` that would fit.

    Examples
    --------
    >>> from tomography.model.topology import read_topology
    >>> check(read_topology("two-sites-demo"), m=Machine(2, 4 * 2**30)).peers
    20
    >>> check(read_topology("N1"), m=Machine(2, 16 * 2**30))
    Traceback (most recent call last):
    ...
    measure.testbed.TestbedError: testbed 'tb' is more than this machine can carry: 527 \
namespaces, 512 peers, at most 165.40 Gbit/s through the shapers: about 148.0 cores (this machine \
has 2) and 52.8 GiB of memory (16.0 GiB available); it would fit with --hosts-per-cluster 2 \
--bandwidth-scale 0.38; or simulate it (tomography simulate N1); or raise it anyway with \
`tomography testbed up ... --force`
    """
    m = m or machine()
    cut = _cuts(topology)
    need = estimate(topology, cut)
    if need.fits(m):
        return need
    raise TestbedError(f"testbed {name!r} is more than this machine can carry: "
                       f"{need.describe(m)}; {_advice(topology, cut, bandwidth, m)}; or "
                       f"simulate it (tomography simulate {topology.name}); or raise it anyway "
                       "with `tomography testbed up ... --force`")


def _advice(topology: Topology, cut: Callable[[str, str], float], bandwidth: float,
            m: Machine) -> str:
    """The ``--hosts-per-cluster`` and ``--bandwidth-scale`` that make a testbed fit.

    Fewer hosts first, down to 2 per cluster (with one, a cluster cannot be
    found), then slower links at these hosts, then both: 2 hosts per cluster
    (or 1) and the capacities that fit with them.
    """
    def shrunk(k: int | None) -> Estimate:
        return estimate(topology if k is None else scaled(topology, hosts_per_cluster=k), cut)

    def factor(e: Estimate) -> float | None:
        """The --bandwidth-scale at which ``e``'s traffic fits beside its peers."""
        spare = m.cores - e.peers * PEER_CPU
        if e.memory > m.memory or spare <= 0 or e.rate <= 0:
            return None
        return _round_down(bandwidth * spare / (e.rate / 1e9 * CPU_PER_GBIT))

    largest = max((c.count for c in topology.clusters), default=0)
    advice = []
    k = next((k for k in range(largest - 1, 1, -1) if shrunk(k).fits(m)), None)
    if k:
        advice.append(f"--hosts-per-cluster {k}")
    if f := factor(shrunk(None)):
        advice.append(f"--bandwidth-scale {f:g}")
    for k in (2, 1) if not advice else ():
        if k < largest and (f := factor(shrunk(k))):
            advice.append(f"--hosts-per-cluster {k} --bandwidth-scale {f:g}")
            break
    if not advice:
        return "--hosts-per-cluster and --bandwidth-scale cannot shrink it enough"
    return "it would fit with " + ", or ".join(advice)


def _round_down(x: float) -> float:
    """``x`` rounded down to two significant digits.

    Examples
    --------
    >>> _round_down(0.4178), _round_down(12.9)
    (0.41, 12.0)
    """
    step = 10 ** (math.floor(math.log10(x)) - 1)
    return float(round(math.floor(x / step) * step, 12))
