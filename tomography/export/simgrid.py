"""A SimGrid platform (XML, DTD version 4.1) of the inferred network.

With a :class:`~tomography.export.bandwidth.BandwidthModel` a user can
simulate applications on the network the tomography found.  The platform
reads::

    <platform version="4.1">
      <zone id="network" routing="Full">
        <zone id="zone:w1" routing="Full">          one zone per cluster
          <host id="w1-00" speed="1Gf"/> ...
          <router id="gw:w1"/>                      the cluster's gateway
          <link id="nic-out:w1-00" .../>            host out capacity (and nic-in:)
          <route src="w1-00" dst="w1-01" symmetrical="NO"> nic-out:w1-00, nic-in:w1-01
          <route src="w1-00" dst="gw:w1" ...> and back, over the NIC links
        </zone>
        <link id="cluster-out:w1" .../>             cluster out capacity (and cluster-in:)
        <link id="wan:w1:e1" .../>                  achievable bandwidth and delay w1 -> e1
        <zoneRoute src="zone:w1" dst="zone:e1" gw_src="gw:w1" gw_dst="gw:e1"
                   symmetrical="NO"> cluster-out:w1, wan:w1:e1, cluster-in:e1
      </zone>
    </platform>

Inside a cluster a route crosses only the two hosts' NIC links (switched
Ethernet is not a bottleneck, docs/method.md); each NIC link carries half
the model's delay within the cluster (nothing in a one-host cluster).  Between clusters the route adds the
sender cluster's out link, the pair's link and the receiver cluster's in
link; the pair link carries the rest of the delay.  Dead pairs (bandwidth 0)
get no route.  Host-pair figures of the model are not used, and host
speeds are not measured: ``speed`` is a parameter.  Bandwidths are written
in ``MBps`` (10^6 bytes/s, SimGrid's units), latencies in ``us``.

SimGrid's default network model (LV08) scales latencies and bandwidths to
mimic TCP; run with ``--cfg=network/model:CM02`` to use the figures as
written.
"""

from __future__ import annotations

import math

import numpy as np
from lxml import etree

from tomography.model.errors import TomographyError
from tomography.export.bandwidth import BandwidthModel

__all__ = ["simgrid_platform"]

_DOCTYPE = '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">'


def _link(parent: etree._Element, name: str, bps: float, seconds: float) -> None:
    etree.SubElement(parent, "link", id=name, bandwidth=f"{bps / 8e6:.12g}MBps",
                     latency=f"{seconds * 1e6:.12g}us")


def _route(parent: etree._Element, tag: str, links: list[str], **ends: str) -> None:
    route = etree.SubElement(parent, tag, **ends, symmetrical="NO")
    for name in links:
        etree.SubElement(route, "link_ctn", id=name)


def simgrid_platform(model: BandwidthModel, *, speed: str = "1Gf",
                     default_delay: float = 0.0) -> str:
    """The model as a SimGrid platform file (version 4.1).

    Parameters
    ----------
    model : BandwidthModel
        Every capacity and bandwidth known (see
        :meth:`~tomography.export.bandwidth.BandwidthModel.fill_missing`).
    speed : str, default "1Gf"
        Computing speed of every host, in SimGrid's units (not measured).
    default_delay : float, default 0.0
        One-way delay in seconds where the model has none (within a cluster
        of several hosts, or between two clusters).

    Returns
    -------
    str
        The XML document.

    Raises
    ------
    TomographyError
        When a capacity or bandwidth is unknown, or a host or cluster has a
        capacity of 0.

    Examples
    --------
    >>> from tomography.export.bandwidth import from_topology
    >>> from tomography.model.topology import read_topology
    >>> topo = read_topology("tree-5")
    >>> xml = simgrid_platform(from_topology(topo, {g.name: g.host_names for g in topo.clusters}))
    >>> xml.count("<host "), xml.count("<zoneRoute ")
    (5, 20)
    >>> [line.strip() for line in xml.splitlines() if '<link id="wan:h4:h5"' in line]
    ['<link id="wan:h4:h5" bandwidth="12.5MBps" latency="200us"/>']
    """
    model.require_complete()
    if not (math.isfinite(default_delay) and default_delay >= 0):
        raise TomographyError(f"default_delay must be finite and >= 0, got {default_delay}")
    for name, values, names in (("host_out", model.host_out, model.hosts),
                                ("host_in", model.host_in, model.hosts),
                                ("cluster_out", model.cluster_out, list(model.clusters)),
                                ("cluster_in", model.cluster_in, list(model.clusters))):
        zero = np.flatnonzero(values == 0)
        if zero.size:
            raise TomographyError(f"{name} {names[zero[0]]} is 0: a platform link needs a "
                                  "positive bandwidth")
    k = len(model.clusters)
    delay = (np.full((k, k), np.nan) if model.cluster_delay is None else model.cluster_delay)
    # within a one-host cluster there is no route: its NIC links carry no delay of their own,
    # so that the pair delays to other clusters stay as the model has them
    alone = np.array([len(members) == 1 for members in model.clusters.values()])
    within = np.where(np.isnan(delay.diagonal()) & alone, 0.0, delay.diagonal())
    delay = np.where(np.isnan(delay), default_delay, delay)
    half = np.where(np.isnan(within), default_delay, within) / 2
    index = {h: i for i, h in enumerate(model.hosts)}
    platform = etree.Element("platform", version="4.1")
    top = etree.SubElement(platform, "zone", id="network", routing="Full")
    for c, (cluster, members) in enumerate(model.clusters.items()):
        zone = etree.SubElement(top, "zone", id=f"zone:{cluster}", routing="Full")
        for host in members:
            etree.SubElement(zone, "host", id=host, speed=speed)
        gateway = f"gw:{cluster}"
        etree.SubElement(zone, "router", id=gateway)
        for host in members:
            _link(zone, f"nic-out:{host}", model.host_out[index[host]], half[c])
            _link(zone, f"nic-in:{host}", model.host_in[index[host]], half[c])
        for src in members:
            for dst in members:
                if src != dst:
                    _route(zone, "route", [f"nic-out:{src}", f"nic-in:{dst}"], src=src, dst=dst)
            _route(zone, "route", [f"nic-out:{src}"], src=src, dst=gateway)
            _route(zone, "route", [f"nic-in:{src}"], src=gateway, dst=src)
    names = list(model.clusters)
    for c, cluster in enumerate(names):
        _link(top, f"cluster-out:{cluster}", model.cluster_out[c], 0.0)
        _link(top, f"cluster-in:{cluster}", model.cluster_in[c], 0.0)
    alive = [(a, b) for a in range(k) for b in range(k)
             if a != b and model.cluster_bandwidth[a, b] > 0]
    for a, b in alive:  # the DTD wants every link declared before the first route
        _link(top, f"wan:{names[a]}:{names[b]}", model.cluster_bandwidth[a, b],
              max(0.0, delay[a, b] - half[a] - half[b]))
    for a, b in alive:
        src, dst = names[a], names[b]
        _route(top, "zoneRoute", [f"cluster-out:{src}", f"wan:{src}:{dst}", f"cluster-in:{dst}"],
               src=f"zone:{src}", dst=f"zone:{dst}", gw_src=f"gw:{src}", gw_dst=f"gw:{dst}")
    body = etree.tostring(platform, pretty_print=True, encoding="unicode")
    return f"<?xml version='1.0'?>\n{_DOCTYPE}\n{body}"
