"""Exporters: the topology in the formats its consumers read.

=====================  ==============================================================
module                 writes
=====================  ==============================================================
``bandwidth``          :class:`BandwidthModel`: absolute figures with their source
``gauge``              Gauge XML (Pool + Gauge) for multicast planners, schema-checked
``topology_json``      the hierarchy and the tree of clusters (``tomography-topology/1``)
``graph``              the weighted host graph as GraphML / GEXF
``dot``                Graphviz DOT of the Hasse diagram and of the tree
``simgrid``            a SimGrid platform (XML v4.1)
``mpi``                communicators, leaders, rank order, broadcast schedule; hostfiles
=====================  ==============================================================

The light modules (``dot``, ``mpi``) are imported with the package, the
others (which load lxml and the planners) on first use of one of their names.

Examples
--------
>>> import tomography.export as export
>>> export.hostfile.__module__, export.write_gauge.__module__
('tomography.export.mpi.hostfiles', 'tomography.export.gauge')
"""

from __future__ import annotations

from tomography.model.lazy import lazy_attributes
from tomography.export.dot import cluster_tree_to_dot, hierarchy_to_dot
from tomography.export.mpi import (check_mpi_hierarchy, hostfile, mpi_hierarchy, rank_order,
                                   rankfile, read_mpi_hierarchy, write_mpi_hierarchy)

_LAZY = {
    "BandwidthModel": "bandwidth", "Source": "bandwidth", "clusters_from": "bandwidth",
    "from_topology": "bandwidth", "from_probes": "bandwidth", "from_broadcasts": "bandwidth",
    "GaugeError": "gauge", "gauge_to_xml": "gauge", "write_gauge": "gauge",
    "read_gauge": "gauge", "gauge_to_network": "gauge",
    "topology_to_json": "topology_json", "topology_from_json": "topology_json",
    "host_graph": "graph", "write_graphml": "graph", "write_gexf": "graph",
    "simgrid_platform": "simgrid",
}

__all__ = ["hierarchy_to_dot", "cluster_tree_to_dot",
           "mpi_hierarchy", "write_mpi_hierarchy", "read_mpi_hierarchy", "check_mpi_hierarchy",
           "rank_order", "hostfile", "rankfile", *_LAZY]


__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals())
