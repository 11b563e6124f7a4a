"""A seeded family of random network topologies, and its simulation into a cache.

The scenarios of ``tomography/model/scenarios/`` are the ones the analysis was
tuned on.  To calibrate the confidence of the inferred hierarchy on networks
nobody tuned for, this module draws a *family* of topologies, one per seed,
in the project's topology format (docs/formats.md, "Topology files (YAML)"),
each cluster labelled with its designed hierarchy (``label``, top level
first, ``/``-separated, the same number of parts for every cluster of a
network; :func:`tomography.model.truth_labels.labels_at_depth` cuts it), and
simulates the family into a cache.

Network ``seed`` is drawn by :func:`random_network` from
``numpy.random.default_rng(seed)`` alone and named ``family-<seed:03d>``;
its ``description`` starts with its kind and states every parameter drawn.
The kinds, a quarter each (:data:`KIND_P`):

* **grid** (:data:`GRID_SITES` = 2-5 sites): a star of site routers around
  one core router, or (half of them, :data:`GRID_TREE_P`) a two-level tree
  core -> 2-3 regions -> 3-5 sites; each site has 1-3 clusters, each behind
  its own switch under the site router.  WAN links (core-site, core-region,
  region-site) :data:`WAN_CAPACITY` = 100 Mbit/s - 10 Gbit/s and
  :data:`WAN_LATENCY` = 1-30 ms, site-internal (switch-site router) links
  :data:`LAN_CAPACITY` = 1-10 Gbit/s and :data:`LAN_LATENCY` = 20-200 us.
  Labels ``s1/c0`` (star, 2 levels) or ``r0/s1/c0`` (tree, 3 levels).
* **datacentre**: a core router, :data:`DC_AGGREGATIONS` = 2-4 aggregation
  routers with :data:`DC_RACKS` = 2-4 racks each (a top-of-rack switch per
  rack, one cluster).  A rack's uplink carries ``rack hosts x NIC /
  oversubscription``, an aggregation router's uplink ``its hosts x NIC /
  oversubscription``, one factor per level per network, each in
  :data:`DC_OVERSUBSCRIPTION` = 1x-8x; every link :data:`LAN_LATENCY`.
  Labels ``a1/r2`` (2 levels).
* **chain**: :data:`CHAIN_SITES` = 3-5 site routers in a chain (site ``i``
  linked to site ``i+1``), each link drawn on its own in
  :data:`CHAIN_CAPACITY` = 50 Mbit/s - 5 Gbit/s and :data:`CHAIN_LATENCY`
  = 1-20 ms; each site has 1-2 clusters behind their switches (LAN as grid).
  The designed hierarchy cuts the weakest link first: depth 1 splits the
  chain at its weakest link, depth ``d`` splits every segment left at depth
  ``d-1`` at its own weakest link, until every site stands alone; then the
  clusters.  A segment already alone keeps its name (``s0-s2/s0-s1/s0/c1``,
  ``s3-s4/s3/s3/c0``).  3 or 4 levels; a chain whose cuts nest deeper
  (four levels of sites, only with 5 sites) has its links drawn again.
* **mesh**: :data:`MESH_SITES` = 3-5 site routers on a ring, with 4 or more
  sites plus one chord between two sites not adjacent on the ring (half of
  them, :data:`MESH_CHORD_P`): the router graph has cycles, and traffic
  between two routers takes the path of least total latency
  (:mod:`tomography.model.topology`; the simulator routes the same way).  WAN
  links as grid; sites as grid.  Labels ``s1/c0`` (2 levels).

Common to every kind: 4-24 hosts per cluster (:data:`CLUSTER_HOSTS`) and
16-96 per network (:data:`NETWORK_HOSTS`): a total drawn uniformly within
what the number of clusters allows, shared out with random weights; one NIC
per network (:data:`NICS`: 100 Mbit/s, 1 Gbit/s or 10 Gbit/s with
probabilities 0.15, 0.7, 0.15) and one host latency (:data:`HOST_LATENCY` =
20-100 us).  Capacities are drawn log-uniformly, latencies of WAN and chain
links log-uniformly, LAN and host latencies uniformly; quantities are
written with three significant digits.  So that every level is a level,
at least one site of a grid, chain or mesh has two clusters or more.

Hard levels are part of the design, not avoided: the ranges overlap (a WAN
link may be faster than the LAN behind it, an oversubscription near 1x
leaves a level to latency alone), and :data:`HARD_P` = 30% of the networks
get one explicit twist, named in the description: ``near`` makes one WAN
(chain, ring) link barely slower than the fastest LAN link at its ends (0.8
to 0.95 times it, :data:`NEAR_FACTOR`); ``latency-only`` makes it as fast as
everything its smaller side can send, so that the site(s) behind it differ
from the rest only in latency; in a datacentre, ``non-blocking racks`` or
``non-blocking aggregation`` sets that level's oversubscription to 1x.  A
twist may leave a link outside the ranges above.

:func:`simulate_family` simulates each network with
:func:`measure.simulator.simulate` (its defaults) for each simulator seed
into ``<root>/<name>/seed<s>`` (default root :data:`FAMILY_ROOT`,
``benchmarks/_data/family/``, ignored by git), reusing a complete dataset and
continuing a partial one as :func:`bench_support.simulated_dataset` does.
The default file size, :data:`DEFAULT_SIZE` = 16 MiB, was chosen by
measuring the simulator on this machine (2 cores, AMD EPYC, 23.5 GiB) over the
first 24 networks of the family (21-95 hosts, all four kinds), one
broadcast each in one process: 0.54 s per iteration at 16 MiB (1024
pieces), 1.17 s at 32 MiB and 1.12 s at 64 MiB (both 2048 pieces, the
simulator's cap, so 64 MiB costs what 32 MiB does).  The 5,400 iterations
of the default run (120 networks x 3 seeds x 15) are then about 24 min on 2
cores at 16 MiB and 50-53 min at 32 or 64 MiB: only 16 MiB fits the budget
of about 25 minutes (with a third busy process on the machine, two jobs at
once ran 0.85 s per iteration at 16 MiB and 1.8-1.9 s at 32 and 64 MiB).
Given about 55 minutes, take 64 MiB rather than 32.  The first full
default run (2026-11-26) took 50 min, not 24: one or two other CPU-bound
processes shared the 2 cores throughout, and each job took 1.11 s per
iteration on average.

Run::

    .venv/bin/python benchmarks/random_networks.py --list             # one line per network
    .venv/bin/python benchmarks/random_networks.py --write /tmp/fam   # only the YAML files
    .venv/bin/python benchmarks/random_networks.py                    # simulate 120 x 3 seeds x 15
    .venv/bin/python benchmarks/random_networks.py --count 10 --seeds 0 --iterations 5 --size 8MiB   # a smoke test
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import yaml

from bench_support import command_line, machine_line
from tomography.model.errors import TomographyError

FAMILY_ROOT = Path(__file__).resolve().parent / "_data" / "family"
"""Default cache of the simulated family (``benchmarks/_data/`` is ignored by git)."""
DEFAULT_COUNT = 120
DEFAULT_SEEDS = (0, 1, 2)
DEFAULT_ITERATIONS = 15
DEFAULT_SIZE = "16MiB"

KINDS = ("grid", "datacentre", "chain", "mesh")
KIND_P = (0.25, 0.25, 0.25, 0.25)

CLUSTER_HOSTS = (4, 24)            # hosts per cluster, inclusive
NETWORK_HOSTS = (16, 96)           # hosts per network, inclusive
NICS = ("100Mbit/s", "1Gbit/s", "10Gbit/s")
NIC_P = (0.15, 0.7, 0.15)
HOST_LATENCY = (20e-6, 100e-6)     # s, host to its switch, uniform

WAN_CAPACITY = (100e6, 10e9)       # bit/s, log-uniform (grid, mesh)
WAN_LATENCY = (1e-3, 30e-3)        # s, log-uniform
LAN_CAPACITY = (1e9, 10e9)         # bit/s, log-uniform (switch to site router)
LAN_LATENCY = (20e-6, 200e-6)      # s, uniform (also every datacentre link)

GRID_SITES = (2, 5)
GRID_TREE_P = 0.5                  # a tree of regions rather than a star
GRID_TREE_SITES = (3, 5)           # sites of a tree of regions
GRID_REGIONS = (2, 3)              # regions of a tree (fewer than its sites)
SITE_CLUSTERS = (1, 3)             # clusters per site (grid, mesh)

DC_AGGREGATIONS = (2, 4)
DC_RACKS = (2, 4)                  # racks per aggregation router
DC_OVERSUBSCRIPTION = (1.0, 8.0)   # log-uniform, one per level per network

CHAIN_SITES = (3, 5)
CHAIN_CLUSTERS = (1, 2)            # clusters per chain site
CHAIN_CAPACITY = (50e6, 5e9)       # bit/s, log-uniform, each link on its own
CHAIN_LATENCY = (1e-3, 20e-3)      # s, log-uniform

MESH_SITES = (3, 5)
MESH_CHORD_P = 0.5                 # one chord across the ring (4 or more sites)

HARD_P = 0.3                       # networks given one explicit hard twist
NEAR_FACTOR = (0.8, 0.95)          # a "near" link: this fraction of the LAN beside it
MAX_PARTS = 4                      # label parts (levels) at most

Topo = dict[str, Any]


# --------------------------------------------------------------------------- quantities


def _sig3(value: float) -> float:
    """``value`` rounded to three significant digits."""
    return float(f"{value:.3g}")


def bandwidth(bps: float) -> str:
    """A capacity as the topology file writes it, three significant digits.

    Examples
    --------
    >>> bandwidth(2.4567e9), bandwidth(123.45e6), bandwidth(240e9)
    ('2.46Gbit/s', '123Mbit/s', '240Gbit/s')
    """
    for unit, factor in (("Tbit/s", 1e12), ("Gbit/s", 1e9), ("Mbit/s", 1e6)):
        if _sig3(bps) >= factor:
            return f"{np.format_float_positional(_sig3(bps / factor), trim='-')}{unit}"
    return f"{np.format_float_positional(_sig3(bps / 1e3), trim='-')}kbit/s"


def duration(seconds: float) -> str:
    """A latency as the topology file writes it: ms (three digits) from 1 ms, else whole us.

    Examples
    --------
    >>> duration(0.012345), duration(87.4e-6)
    ('12.3ms', '87us')
    """
    if seconds >= 1e-3:
        return f"{np.format_float_positional(_sig3(seconds * 1e3), trim='-')}ms"
    return f"{max(1, round(seconds * 1e6))}us"


def _value(text: str) -> float:
    """Bit/s of a capacity written by :func:`bandwidth`."""
    from tomography.model.units import parse_bandwidth
    return parse_bandwidth(text)


def _loguniform(rng: np.random.Generator, bounds: tuple[float, float]) -> float:
    return float(np.exp(rng.uniform(np.log(bounds[0]), np.log(bounds[1]))))


def _uniform(rng: np.random.Generator, bounds: tuple[float, float]) -> float:
    return float(rng.uniform(*bounds))


def _integer(rng: np.random.Generator, bounds: tuple[int, int]) -> int:
    return int(rng.integers(bounds[0], bounds[1] + 1))


# --------------------------------------------------------------------------- building blocks


class _Net:
    """Routers, links and clusters of one network being drawn (clusters sized later)."""

    def __init__(self) -> None:
        self.routers: list[str] = []
        self.links: list[dict[str, Any]] = []
        self.clusters: list[dict[str, Any]] = []

    def router(self, name: str) -> str:
        self.routers.append(name)
        return name

    def link(self, a: str, b: str, capacity: float, latency: float) -> dict[str, Any]:
        link = {"between": [a, b], "capacity": bandwidth(capacity), "latency": duration(latency)}
        self.links.append(link)
        return link

    def cluster(self, name: str, label: str) -> dict[str, Any]:
        """A cluster behind its own switch (a router named like the cluster)."""
        item = {"name": name, "router": self.router(name), "hosts": 0, "label": label}
        self.clusters.append(item)
        return item


def _sizes(rng: np.random.Generator, n: int) -> list[int]:
    """Hosts of ``n`` clusters: a total uniform in what ``n`` allows, shared with random weights.

    Examples
    --------
    >>> sizes = _sizes(np.random.default_rng(0), 5)
    >>> len(sizes), 16 <= sum(sizes) <= 96, all(4 <= s <= 24 for s in sizes)
    (5, True, True)
    """
    low = max(NETWORK_HOSTS[0], n * CLUSTER_HOSTS[0])
    high = min(NETWORK_HOSTS[1], n * CLUSTER_HOSTS[1])
    if low > high:
        raise ValueError(f"{n} clusters cannot hold {NETWORK_HOSTS[0]}-{NETWORK_HOSTS[1]} hosts")
    total = _integer(rng, (low, high))
    weights = rng.dirichlet(np.full(n, 1.5))
    sizes = np.full(n, CLUSTER_HOSTS[0])
    for _ in range(total - int(sizes.sum())):
        p = weights * (sizes < CLUSTER_HOSTS[1])
        sizes[rng.choice(n, p=p / p.sum())] += 1
    return [int(s) for s in sizes]


def _site_clusters(rng: np.random.Generator, sites: int, bounds: tuple[int, int]) -> list[int]:
    """Clusters per site, at least one site with two (else site and cluster levels coincide)."""
    counts = [_integer(rng, bounds) for _ in range(sites)]
    if max(counts) < 2:
        counts[int(rng.integers(sites))] = 2
    return counts


def _lan_site(rng: np.random.Generator, net: _Net, site: str, clusters: int,
              label: str) -> list[dict[str, Any]]:
    """A site router's clusters, each behind its switch on a LAN link; returns the links."""
    links = []
    for j in range(clusters):
        item = net.cluster(f"{site}c{j}", f"{label}/c{j}")
        links.append(net.link(site, item["router"], _loguniform(rng, LAN_CAPACITY),
                              _uniform(rng, LAN_LATENCY)))
    return links


def _send_rate(uplinks: list[dict[str, Any]], sizes: dict[str, int], nic: float) -> float:
    """What clusters can send at most over their uplinks: each min(uplink, hosts x NIC)."""
    return sum(min(_value(u["capacity"]), sizes[u["between"][1]] * nic) for u in uplinks)


def _twist_link(rng: np.random.Generator, link: dict[str, Any],
                beside: list[dict[str, Any]], side_rate: float) -> str:
    """Make a WAN link hard: barely slower than its LAN (near) or no bottleneck (latency-only)."""
    if rng.random() < 0.5:
        fastest = max(_value(u["capacity"]) for u in beside)
        factor = _uniform(rng, NEAR_FACTOR)
        link["capacity"] = bandwidth(factor * fastest)
        return (f"near: {link['between'][0]}-{link['between'][1]} at {factor:.2f} x the fastest "
                f"LAN link beside it ({link['capacity']})")
    link["capacity"] = bandwidth(side_rate)
    return (f"latency-only: {link['between'][0]}-{link['between'][1]} at {link['capacity']}, "
            "all its smaller side can send")


def _assign_sizes(rng: np.random.Generator, net: _Net) -> dict[str, int]:
    sizes = _sizes(rng, len(net.clusters))
    for item, n in zip(net.clusters, sizes):
        item["hosts"] = n
    return {item["name"]: item["hosts"] for item in net.clusters}


# --------------------------------------------------------------------------- kinds


def _grid(rng: np.random.Generator, net: _Net, nic: float) -> tuple[str, list[str]]:
    tree = bool(rng.random() < GRID_TREE_P)
    sites = _integer(rng, GRID_TREE_SITES if tree else GRID_SITES)
    counts = _site_clusters(rng, sites, SITE_CLUSTERS)
    core = net.router("core")
    region_of = [0] * sites
    regions = 0
    if tree:
        regions = _integer(rng, (GRID_REGIONS[0], min(GRID_REGIONS[1], sites - 1)))
        order = rng.permutation(sites)
        for k, i in enumerate(order):
            region_of[int(i)] = k if k < regions else int(rng.integers(regions))
        region_of = sorted(region_of)        # sites numbered region by region
        for r in range(regions):
            net.link(core, net.router(f"r{r}"), _loguniform(rng, WAN_CAPACITY),
                     _loguniform(rng, WAN_LATENCY))
    wan: list[dict[str, Any]] = []
    lans: list[list[dict[str, Any]]] = []
    for i in range(sites):
        site = net.router(f"s{i}")
        up = f"r{region_of[i]}" if tree else core
        wan.append(net.link(up, site, _loguniform(rng, WAN_CAPACITY),
                            _loguniform(rng, WAN_LATENCY)))
        lans.append(_lan_site(rng, net, site, counts[i],
                              f"r{region_of[i]}/s{i}" if tree else f"s{i}"))
    sizes = _assign_sizes(rng, net)
    notes = []
    if rng.random() < HARD_P:
        i = int(rng.integers(sites))
        notes.append(_twist_link(rng, wan[i], lans[i], _send_rate(lans[i], sizes, nic)))
    per_region = Counter(region_of)
    shape = (f"tree of {regions} regions ({', '.join(str(per_region[r]) for r in range(regions))}"
             f" sites)" if tree else f"star of {sites} sites")
    return shape, [f"{sites} sites of {', '.join(map(str, counts))} clusters"] + notes


def _datacentre(rng: np.random.Generator, net: _Net, nic: float) -> tuple[str, list[str]]:
    aggs = _integer(rng, DC_AGGREGATIONS)
    racks = [_integer(rng, DC_RACKS) for _ in range(aggs)]
    rack_over = _loguniform(rng, DC_OVERSUBSCRIPTION)
    agg_over = _loguniform(rng, DC_OVERSUBSCRIPTION)
    notes = []
    if rng.random() < HARD_P:
        if rng.random() < 0.5:
            rack_over, what = 1.0, "non-blocking racks (rack uplinks 1x)"
        else:
            agg_over, what = 1.0, "non-blocking aggregation (aggregation uplinks 1x)"
        notes.append(what)
    core = net.router("core")
    uplinks: list[tuple[str, str, list[dict[str, Any]]]] = []
    for a in range(aggs):
        agg = net.router(f"a{a}")
        members = [net.cluster(f"a{a}r{r}", f"a{a}/r{r}") for r in range(racks[a])]
        uplinks.append((core, agg, members))
    sizes = _assign_sizes(rng, net)
    for core_, agg, members in uplinks:
        hosts = sum(sizes[m["name"]] for m in members)
        net.link(core_, agg, hosts * nic / agg_over, _uniform(rng, LAN_LATENCY))
        for m in members:
            net.link(agg, m["router"], sizes[m["name"]] * nic / rack_over,
                     _uniform(rng, LAN_LATENCY))
    shape = f"{aggs} aggregation routers of {', '.join(map(str, racks))} racks"
    return shape, [f"oversubscription racks {rack_over:.2f}x, aggregation {agg_over:.2f}x"] + notes


def chain_labels(capacities: Sequence[float]) -> list[list[str]]:
    """The designed hierarchy of a chain of sites: the weakest link cuts first.

    Parameters
    ----------
    capacities : sequence of float
        Capacity of the link between site ``i`` and site ``i+1``.

    Returns
    -------
    list of list of str
        For each site, its group at depth 1, 2, ...: depth 1 splits the chain
        at its weakest link, each further depth splits every segment of two
        or more sites at its own weakest link, until every site is alone
        (``s2``); a segment is named by its first and last site (``s0-s2``).

    Examples
    --------
    >>> for path in chain_labels([5.0, 1.0, 3.0, 4.0]):
    ...     print("/".join(path))
    s0-s1/s0/s0
    s0-s1/s1/s1
    s2-s4/s2/s2
    s2-s4/s3-s4/s3
    s2-s4/s3-s4/s4
    """
    n = len(capacities) + 1
    paths: list[list[str]] = [[] for _ in range(n)]
    segments = [(0, n - 1)]
    while any(first < last for first, last in segments):
        cut = []
        for first, last in segments:
            if first == last:
                cut.append((first, last))
                continue
            k = min(range(first, last), key=lambda i: capacities[i])
            cut += [(first, k), (k + 1, last)]
        segments = cut
        for first, last in segments:
            name = f"s{first}" if first == last else f"s{first}-s{last}"
            for i in range(first, last + 1):
                paths[i].append(name)
    return paths


def _chain(rng: np.random.Generator, net: _Net, nic: float) -> tuple[str, list[str]]:
    sites = _integer(rng, CHAIN_SITES)
    counts = _site_clusters(rng, sites, CHAIN_CLUSTERS)
    hard = bool(rng.random() < HARD_P)
    draws = 0
    while True:                      # drawn again while the cuts nest too deep
        draws += 1
        trial = _Net()
        for i in range(sites):
            trial.router(f"s{i}")
        chain = [trial.link(f"s{i}", f"s{i + 1}", _loguniform(rng, CHAIN_CAPACITY),
                            _loguniform(rng, CHAIN_LATENCY)) for i in range(sites - 1)]
        lans = [_lan_site(rng, trial, f"s{i}", counts[i], f"s{i}") for i in range(sites)]
        sizes = _assign_sizes(rng, trial)
        notes = []
        if hard:
            k = int(rng.integers(sites - 1))
            rate = min(sum(_send_rate(lans[i], sizes, nic) for i in range(k + 1)),
                       sum(_send_rate(lans[i], sizes, nic) for i in range(k + 1, sites)))
            notes.append(_twist_link(rng, chain[k], lans[k] + lans[k + 1], rate))
        paths = chain_labels([_value(link["capacity"]) for link in chain])
        if len(paths[0]) + 1 <= MAX_PARTS:
            break
    for item in trial.clusters:      # the site part becomes the cut path
        site, cluster = item["label"].split("/")
        item["label"] = "/".join(paths[int(site[1:])] + [cluster])
    net.routers, net.links, net.clusters = trial.routers, trial.links, trial.clusters
    weakest = min(range(sites - 1), key=lambda i: _value(chain[i]["capacity"]))
    shape = f"chain of {sites} sites"
    detail = [f"{', '.join(map(str, counts))} clusters per site",
              f"links {', '.join(link['capacity'] for link in chain)} "
              f"(weakest s{weakest}-s{weakest + 1})"]
    if draws > 1:
        detail.append(f"links drawn {draws} times (cuts nested too deep)")
    return shape, detail + notes


def _mesh(rng: np.random.Generator, net: _Net, nic: float) -> tuple[str, list[str]]:
    sites = _integer(rng, MESH_SITES)
    counts = _site_clusters(rng, sites, SITE_CLUSTERS)
    names = [net.router(f"s{i}") for i in range(sites)]
    wan = [net.link(names[i], names[(i + 1) % sites], _loguniform(rng, WAN_CAPACITY),
                    _loguniform(rng, WAN_LATENCY)) for i in range(sites)]
    chord = None
    if sites >= 4 and rng.random() < MESH_CHORD_P:
        pairs = [(i, j) for i in range(sites) for j in range(i + 2, sites)
                 if (j - i) % sites not in (1, sites - 1)]
        i, j = pairs[int(rng.integers(len(pairs)))]
        chord = (i, j)
        wan.append(net.link(names[i], names[j], _loguniform(rng, WAN_CAPACITY),
                            _loguniform(rng, WAN_LATENCY)))
    lans = [_lan_site(rng, net, names[i], counts[i], f"s{i}") for i in range(sites)]
    sizes = _assign_sizes(rng, net)
    notes = []
    if rng.random() < HARD_P:
        k = int(rng.integers(len(wan)))
        a, b = (int(x[1:]) for x in wan[k]["between"])
        rate = min(_send_rate(lans[a], sizes, nic), _send_rate(lans[b], sizes, nic))
        notes.append(_twist_link(rng, wan[k], lans[a] + lans[b], rate))
    shape = f"ring of {sites} sites" + (f" plus chord s{chord[0]}-s{chord[1]}" if chord else "")
    return shape, [f"{', '.join(map(str, counts))} clusters per site"] + notes


_BUILDERS = {"grid": _grid, "datacentre": _datacentre, "chain": _chain, "mesh": _mesh}


# --------------------------------------------------------------------------- the family


def random_network(seed: int) -> Topo:
    """Network ``seed`` of the family, as the dict
    :func:`tomography.model.topology.parse_topology` takes.

    Parameters
    ----------
    seed : int
        Non-negative; the network depends on it alone
        (``numpy.random.default_rng(seed)``).

    Returns
    -------
    dict
        ``name`` (``family-<seed:03d>``), ``description`` (the kind first,
        then every parameter drawn), ``host_defaults``, ``routers``,
        ``links`` and ``clusters``, each cluster with its ``label`` (the
        designed hierarchy, the same number of parts for every cluster).

    Examples
    --------
    >>> from tomography.model.topology import parse_topology
    >>> topo = parse_topology(random_network(7))
    >>> topo.name, 16 <= len(topo.hosts) <= 96, random_network(7) == random_network(7)
    ('family-007', True, True)
    >>> len({len(c.label.split("/")) for c in topo.clusters})
    1
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    rng = np.random.default_rng(int(seed))
    kind = KINDS[int(rng.choice(len(KINDS), p=KIND_P))]
    nic_text = NICS[int(rng.choice(len(NICS), p=NIC_P))]
    host_latency = duration(_uniform(rng, HOST_LATENCY))
    net = _Net()
    shape, details = _BUILDERS[kind](rng, net, _value(nic_text))
    hosts = sum(c["hosts"] for c in net.clusters)
    levels = len(net.clusters[0]["label"].split("/"))
    description = (f"{kind} ({shape}): {'; '.join(details)}; {len(net.clusters)} clusters, "
                   f"{hosts} hosts, NIC {nic_text}, host latency {host_latency}; "
                   f"{levels} levels; random_networks.py seed {int(seed)}")
    return {"name": f"family-{int(seed):03d}", "description": description,
            "host_defaults": {"nic": nic_text, "latency": host_latency},
            "routers": net.routers, "links": net.links, "clusters": net.clusters}


def resized(topology: Topo, hosts: int, *, smallest: int = 2) -> Topo:
    """A copy of a family network with about ``hosts`` hosts, each host's share of every link
    kept: each cluster's hosts and each link's capacity times ``hosts / total``.

    Every cluster keeps at least ``smallest`` hosts (a cluster of one cannot be
    found), so the total may exceed ``hosts``; latencies and NICs are kept.  The
    description ends with what was done.

    Examples
    --------
    >>> t = resized(random_network(3), 600)
    >>> [c["hosts"] for c in t["clusters"]], [link["capacity"] for link in t["links"]][:2]
    ([160, 200, 240], ['9.08Gbit/s', '54.3Gbit/s'])
    """
    out = json.loads(json.dumps(topology))
    total = sum(c["hosts"] for c in out["clusters"])
    for c in out["clusters"]:
        c["hosts"] = max(smallest, round(c["hosts"] * hosts / total))
    factor = sum(c["hosts"] for c in out["clusters"]) / total
    for link in out["links"]:
        link["capacity"] = bandwidth(_value(link["capacity"]) * factor)
    out["description"] += (f"; resized: {sum(c['hosts'] for c in out['clusters'])} of {total} "
                           f"hosts, links x {factor:.3g} with them")
    return out


def family(count: int = DEFAULT_COUNT, start: int = 0) -> list[Topo]:
    """The networks of seeds ``start`` .. ``start + count - 1``.

    Examples
    --------
    >>> [t["name"] for t in family(2, start=5)]
    ['family-005', 'family-006']
    """
    return [random_network(seed) for seed in range(start, start + count)]


def summary(topology: Topo) -> dict[str, Any]:
    """Name, kind, hosts, levels and clusters of a network of the family.

    Examples
    --------
    >>> s = summary(random_network(0))
    >>> sorted(s), s["kind"] in KINDS
    (['clusters', 'hard', 'hosts', 'kind', 'levels', 'name', 'shape'], True)
    """
    description = topology["description"]
    kind, rest = description.split(" (", 1)
    return {"name": topology["name"], "kind": kind, "shape": rest.split("):", 1)[0],
            "hosts": sum(c["hosts"] for c in topology["clusters"]),
            "levels": len(topology["clusters"][0]["label"].split("/")),
            "clusters": len(topology["clusters"]),
            "hard": next((part.split(":")[0] for part in description.split("; ")
                          if part.startswith(("near:", "latency-only:", "non-blocking"))), "")}


def write_family(directory: str | os.PathLike[str], count: int = DEFAULT_COUNT,
                 start: int = 0) -> list[Path]:
    """Write the networks of seeds ``start`` .. ``start + count - 1`` as ``<name>.yaml``.

    Parameters
    ----------
    directory : path
        Made if missing; files there of the same names are replaced.
    count, start : int

    Returns
    -------
    list of Path
        The files written, in seed order.
    """
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for topology in family(count, start):
        path = out / f"{topology['name']}.yaml"
        path.write_text(yaml.safe_dump(topology, sort_keys=False), encoding="utf-8")
        paths.append(path)
    return paths


# --------------------------------------------------------------------------- simulation


def dataset_dir(root: Path, name: str, seed: int) -> Path:
    """Where the cache keeps network ``name`` simulated with simulator seed ``seed``.

    Examples
    --------
    >>> dataset_dir(Path("/c"), "family-004", 2).as_posix()
    '/c/family-004/seed2'
    """
    return Path(root) / name / f"seed{seed}"


def iterations_done(path: Path) -> int:
    """Iterations a dataset lists already (0 when it has none)."""
    try:
        with (Path(path) / "iterations.csv").open(encoding="utf-8") as listed:
            return max(sum(1 for _ in listed) - 1, 0)
    except OSError:
        return 0


def _check_complete(path: Path, topology: Topo, size: str, seed: int,
                    block_quota: int | None = None) -> None:
    """Refuse a complete cached dataset made from another topology, size, seed or quota."""
    from tomography.model.errors import DatasetError
    from tomography.model.units import parse_size

    meta = path / "meta.json"
    try:
        recorded = json.loads(meta.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DatasetError(f"cannot reuse: unreadable ({exc}); delete {path}", path=meta) from None
    params = recorded.get("params") or {}
    wanted = {"topology_model": (recorded.get("topology_model"), topology),
              "params.file_size": (params.get("file_size"), parse_size(size)),
              "params.seed": (params.get("seed"), seed),
              "params.block_quota": (params.get("block_quota"), block_quota)}
    for field, (theirs, ours) in wanted.items():
        if theirs != ours:
            shown = "another topology of that name (the generator changed?)" \
                if field == "topology_model" else f"{field} {theirs!r} (this command: {ours!r})"
            raise DatasetError(f"cannot reuse: the dataset was made with {shown}; delete {path} "
                               "or give another --root", path=meta, field=field)


def _simulate_one(topology: Topo, path: str, iterations: int, size: str,
                  seed: int, block_quota: int | None = None) -> tuple[str, int, float]:
    """Simulate (or continue, or reuse) one dataset; (path, iterations simulated, seconds)."""
    from measure.simulator import simulate
    from measure.swarm import SwarmParams
    from tomography.model.errors import DatasetError
    from tomography.model.topology import parse_topology

    out = Path(path)
    meta = out / "meta.json"
    if meta.exists():
        recorded = json.loads(meta.read_text(encoding="utf-8")).get("topology_model")
        if recorded != topology:
            raise DatasetError(f"cannot reuse: the dataset was simulated from another "
                               f"{topology['name']} (the generator changed?); delete {out}",
                               path=meta, field="topology_model")
    done = iterations_done(out)
    t0 = time.perf_counter()
    out.parent.mkdir(parents=True, exist_ok=True)
    simulate(parse_topology(topology, source=topology["name"]), out, iterations=iterations,
             file_size=size, seed=seed, resume=True,
             params=SwarmParams(block_quota=block_quota))
    return path, max(iterations - done, 0), time.perf_counter() - t0


def simulate_family(root: Path = FAMILY_ROOT, count: int = DEFAULT_COUNT,
                    seeds: Sequence[int] = DEFAULT_SEEDS, iterations: int = DEFAULT_ITERATIONS,
                    size: str = DEFAULT_SIZE, jobs: int = 2, start: int = 0,
                    topologies: Sequence[Topo] | None = None,
                    block_quota: int | None = None) -> list[Path]:
    """Simulate every network of the family with every simulator seed into the cache.

    :func:`measure.simulator.simulate` with its defaults and ``resume``: a
    complete dataset is reused as it is, a partial one continued, one made
    with another size is refused by the simulator, one made from another
    topology of the same name here (delete it to simulate again).

    Parameters
    ----------
    root : Path
        Cache directory; dataset ``<root>/<name>/seed<s>``.
    count : int
        Networks, seeds ``start`` .. ``start + count - 1``.
    seeds : sequence of int
        Simulator seeds.
    iterations : int
        Broadcasts per dataset.
    size : str
        File size per broadcast with its unit.
    jobs : int
        Simulations at once (processes).
    start : int
        First network seed.
    topologies : sequence of dict, optional
        Other networks than ``family(count, start)`` (``count`` and ``start`` unused).
    block_quota : int, optional
        End each broadcast once every host holds this many blocks
        (:class:`measure.swarm.SwarmParams`); default whole broadcasts.

    Returns
    -------
    list of Path
        The datasets, network by network, seed by seed.
    """
    root = Path(root)
    topologies = family(count, start) if topologies is None else list(topologies)
    tasks = [(topology, str(dataset_dir(root, topology["name"], s)), s)
             for topology in topologies for s in seeds]
    todo = []
    for topology, path, s in tasks:
        if iterations_done(Path(path)) < iterations:
            todo.append((topology, path, s))   # the simulator checks what it continues
        else:
            _check_complete(Path(path), topology, size, s, block_quota)
    print(f"{len(tasks)} datasets ({len(topologies)} networks x {len(seeds)} seeds, "
          f"{iterations} x {size}) "
          f"in {root}: {len(tasks) - len(todo)} complete, {len(todo)} to simulate with "
          f"{jobs} jobs", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    simulated = 0
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(_simulate_one, topology, path, iterations, size, s, block_quota)
                   for topology, path, s in todo]
        try:
            for k, future in enumerate(as_completed(futures), 1):
                path, n, seconds = future.result()
                simulated += n
                elapsed = time.perf_counter() - t0
                left = elapsed / k * (len(todo) - k)
                rel = Path(path).relative_to(root)
                print(f"[{k}/{len(todo)}] {rel}: {n} iterations in {seconds:.1f} s "
                      f"({seconds / max(n, 1):.2f} s each); {elapsed / 60:.1f} min so far, "
                      f"~{left / 60:.1f} min left", file=sys.stderr, flush=True)
        except BaseException:        # a failure or Ctrl-C: stop now, not after every task
            for future in futures:
                future.cancel()
            raise
    if todo:
        print(f"{simulated} iterations simulated in {(time.perf_counter() - t0) / 60:.1f} min",
              file=sys.stderr, flush=True)
    return [Path(path) for _, path, _ in tasks]


# --------------------------------------------------------------------------- command line


def _list(topologies: list[Topo]) -> None:
    """One line per network, then the spread of kinds, hosts and levels."""
    rows = [summary(t) for t in topologies]
    for r in rows:
        print(f"{r['name']}  {r['kind']:<10} hosts {r['hosts']:>2}  levels {r['levels']}  "
              f"clusters {r['clusters']:>2}  {r['shape']}"
              + (f"  [hard: {r['hard']}]" if r["hard"] else ""))
    if not rows:
        return
    hosts = np.array([r["hosts"] for r in rows])
    print(f"# {len(rows)} networks; kinds "
          + ", ".join(f"{k} {n}" for k, n in sorted(Counter(r['kind'] for r in rows).items()))
          + "; levels " + ", ".join(f"{k}: {n}" for k, n in
                                     sorted(Counter(r['levels'] for r in rows).items()))
          + f"; hosts {hosts.min()}-{hosts.max()} (median {np.median(hosts):g}, "
          f"quartiles {np.percentile(hosts, 25):g}-{np.percentile(hosts, 75):g}); "
          f"hard twists {sum(bool(r['hard']) for r in rows)}", flush=True)


def main(argv: Sequence[str] | None = None) -> None:
    """List, write or simulate the family (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=DEFAULT_COUNT, help="networks")
    parser.add_argument("--start", type=int, default=0, help="first network seed")
    parser.add_argument("--seeds", type=int, nargs="+", default=list(DEFAULT_SEEDS),
                        help="simulator seeds (default: 0 1 2)")
    parser.add_argument("--iterations", type=int, default=DEFAULT_ITERATIONS)
    parser.add_argument("--size", default=DEFAULT_SIZE, help="file size per broadcast")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--root", type=Path, default=FAMILY_ROOT, help="cache directory")
    parser.add_argument("--write", type=Path, metavar="DIR", help="only write the YAML files")
    parser.add_argument("--list", action="store_true", help="only list the networks")
    args = parser.parse_args(argv)
    if args.count < 0 or args.start < 0:
        parser.error("--count and --start must be non-negative")
    if args.list:
        _list(family(args.count, args.start))
        return
    if args.write is not None:
        paths = write_family(args.write, args.count, args.start)
        print(f"{len(paths)} topologies written to {args.write}")
        return
    t0 = time.perf_counter()
    try:
        paths = simulate_family(args.root, args.count, args.seeds, args.iterations, args.size,
                                args.jobs, start=args.start)
    except TomographyError as exc:
        raise SystemExit(f"random_networks.py: {exc}") from None
    print(f"Command: `{command_line(argv)}`; {len(paths)} datasets in {args.root}, "
          f"{(time.perf_counter() - t0) / 60:.1f} min. {machine_line(('numpy', 'numba'))}")


if __name__ == "__main__":
    main()
