"""The weighted host graph as GraphML or GEXF, for networkx, Gephi, Cytoscape.

Nodes are the hosts (sorted), with the attributes

* ``truth``: the ground-truth label of ``hosts.csv`` (``""`` when unknown;
  not ``label``, which GEXF keeps for the node's display name),
* ``level_1``, ``level_2``, ...: the host's cluster id on each level of a
  hierarchy (``L1C0``, ``L2C1``, ...), when one is given.

Edges carry ``weight``: ``w_n`` of Eq 4.2, the mean blocks (16 KiB) the two
hosts exchanged per iteration.  GEXF is written as version 1.2 (namespace
``1.2draft``, as the format's published schema names it), which Gephi opens;
the files validate against that schema (networkx's own writer adds a
``name`` to ``<graph>`` that the schema does not allow: it is left out here).
"""

from __future__ import annotations

import os

import networkx as nx

from tomography.model.dataset import Measurement
from tomography.model.deprecation import renamed_parameter
from tomography.model.errors import TomographyError
from tomography.model.hierarchy import Hierarchy
from tomography.model.interop import to_networkx

__all__ = ["host_graph", "write_graphml", "write_gexf"]


@renamed_parameter("n", "iterations")
def host_graph(measurement: Measurement, *, hierarchy: Hierarchy | None = None,
               iterations: int | None = None) -> nx.Graph:
    """The host graph with ``w_n`` edge weights and cluster ids per level.

    Parameters
    ----------
    measurement : Measurement
    hierarchy : Hierarchy, optional
        Over the hosts of ``measurement``; adds ``level_<k>`` node attributes.
    iterations : int, optional
        Iterations averaged (Eq 4.2); all by default (``n=``, deprecated).

    Returns
    -------
    networkx.Graph

    Raises
    ------
    TomographyError
        When the hierarchy covers other hosts than the measurement.

    Examples
    --------
    >>> from tomography.model.synthetic import planted_partition
    >>> m = planted_partition(6, 2, iterations=2, seed=0)
    >>> h = Hierarchy.from_partitions(m.host_names, [[0, 0, 0, 1, 1, 1]])
    >>> host_graph(m, hierarchy=h).nodes["h004"]
    {'truth': 'g1', 'level_1': 'L1C1'}
    """
    hosts = measurement.host_names
    labels = measurement.labels
    graph = to_networkx(measurement, iterations=iterations, labels={})
    for host in hosts:
        graph.nodes[host]["truth"] = labels.get(host, "")
    if hierarchy is not None:
        if hierarchy.hosts != hosts:
            raise TomographyError("the hierarchy covers other hosts than the measurement")
        for number, level in enumerate(hierarchy.levels, start=1):
            for cluster in level:
                for host in cluster.hosts:
                    graph.nodes[host][f"level_{number}"] = cluster.id
    return graph


@renamed_parameter("n", "iterations")
def write_graphml(measurement: Measurement, path: str | os.PathLike[str], *,
                  hierarchy: Hierarchy | None = None, iterations: int | None = None) -> None:
    """Write :func:`host_graph` as GraphML.

    Examples
    --------
    >>> import tempfile
    >>> from tomography.model.synthetic import planted_partition
    >>> m = planted_partition(6, 2, iterations=2, seed=0)
    >>> path = tempfile.mkdtemp() + "/hosts.graphml"
    >>> write_graphml(m, path)
    >>> nx.read_graphml(path).nodes["h000"]["truth"]
    'g0'
    """
    nx.write_graphml(host_graph(measurement, hierarchy=hierarchy, iterations=iterations), path)


@renamed_parameter("n", "iterations")
def write_gexf(measurement: Measurement, path: str | os.PathLike[str], *,
               hierarchy: Hierarchy | None = None, iterations: int | None = None) -> None:
    """Write :func:`host_graph` as GEXF 1.2, for Gephi.

    GEXF has no attribute of a whole graph: the edge weights' unit goes in the
    file's ``meta/description`` (Gephi shows it with the workspace).

    Examples
    --------
    >>> import tempfile
    >>> from tomography.model.synthetic import planted_partition
    >>> m = planted_partition(6, 2, iterations=2, seed=0)
    >>> path = tempfile.mkdtemp() + "/hosts.gexf"
    >>> write_gexf(m, path)
    >>> nx.read_gexf(path).number_of_nodes()
    6
    >>> "name=" in open(path).read().split("<graph")[1].split(">")[0]   # not in GEXF 1.2
    False
    >>> "edge weight: w_n in blocks per iteration" in open(path).read()
    True
    """
    from xml.etree.ElementTree import SubElement

    from networkx.readwrite.gexf import GEXFWriter

    writer = GEXFWriter(version="1.2draft")
    hosts = host_graph(measurement, hierarchy=hierarchy, iterations=iterations)
    writer.add_graph(hosts)
    SubElement(writer.xml.find("meta"), "description").text = (
        f"bandwidth tomography: hosts, edge weight: w_n in {hosts.graph['unit']}")
    graph = writer.xml.find("graph")
    graph.attrib.pop("name", None)   # networkx writes name="", which GEXF 1.2 does not define
    creator = writer.xml.find("meta/creator")
    creator.text = f"bandwidth-tomography (networkx {nx.__version__})"
    with open(path, "wb") as out:
        writer.write(out)
