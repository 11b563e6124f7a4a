"""Shrinking a topology to fit one machine: capacities scaled, clusters cut (the testbed's
scale, and what the figures of a dataset it measured are read against)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace

from tomography.model.errors import ParameterError
from tomography.model.topology import HostGroup, Topology

__all__ = ["scaled", "FirstHosts"]


@dataclass(frozen=True)
class FirstHosts(HostGroup):
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
        Factor on every capacity: links (each direction), ``nic_up`` and
        ``nic_down``.
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
    >>> from tomography.model.topology import read_topology
    >>> t = scaled(read_topology("emulated-4x16-fast"), bandwidth=0.5, hosts_per_cluster=2)
    >>> t.name, [h.name for h in t.hosts][:3], t.links[0].capacity / 2**20 / 8
    ('emulated-4x16-fast', ['ca-00', 'ca-01', 'cb-00'], 5.0)
    """
    if isinstance(bandwidth, bool) or not isinstance(bandwidth, (int, float)) \
            or not math.isfinite(bandwidth) or bandwidth <= 0:
        raise ParameterError(f"bandwidth: the factor on capacities must be a positive number, "
                             f"got {bandwidth!r}")
    if hosts_per_cluster is not None and (isinstance(hosts_per_cluster, bool)
                                          or not isinstance(hosts_per_cluster, int)
                                          or hosts_per_cluster < 1):
        raise ParameterError(f"hosts_per_cluster: must be an integer >= 1 (or None for all), "
                             f"got {hosts_per_cluster!r}")
    return Topology(name=topology.name, routers=list(topology.routers),
                    links=[link.scaled(bandwidth) for link in topology.links],
                    clusters=[_scaled_group(c, bandwidth, hosts_per_cluster)
                              for c in topology.clusters],
                    description=topology.description, source=topology.source,
                    unreachable=topology.unreachable)


def _scaled_group(group: HostGroup, bandwidth: float, keep: int | None) -> HostGroup:
    count = group.count if keep is None else min(group.count, keep)
    width = len(group.host_names[0]) - len(group.prefix)
    group = replace(group, count=count, nic_up=group.nic_up * bandwidth,
                    nic_down=group.nic_down * bandwidth)
    if isinstance(group, FirstHosts) or width == _padding(count):
        return group
    return FirstHosts(**asdict(group), width=width)
