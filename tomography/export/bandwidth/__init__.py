"""Absolute bandwidth figures for a topology of clusters, and where they come from.

BitTorrent block counts give the *structure* of a network (which hosts share
bandwidth clusters), not absolute rates.  The consumers of a topology (the
Gauge of a multicast planner, a SimGrid platform) need rates in bit/s, so a
:class:`BandwidthModel` holds them together with the source of every figure.
Three estimators fill one, each saying what its figures mean:

:func:`from_topology` (source ``"topology-model"``)
    Model values of a simulated or emulated network, read off the topology
    file: NIC capacities, link capacities on the routes, route latencies.
:func:`from_probes` (source ``"probes"``)
    Pairwise probe runs (``probes.csv``, iperf3 or NetPIPE): medians of the
    achievable bandwidths measured one pair at a time.
:func:`from_figures` (source ``"probes"``)
    The figures ``tomography measure figures`` measured once the clusters
    were known: a few iperf3 tests between representatives of the clusters,
    alone and side by side, with the links several cluster pairs share.
:func:`from_broadcasts` (source ``"broadcast-throughput"``)
    Bytes actually moved during the BitTorrent broadcasts divided by the
    broadcasts' durations: observed aggregate rates, lower bounds on what the
    paths can carry.

All rates are stored in bit/s and delays in seconds; the exporters state the
unit they write.  ``NaN`` means unknown; ``0`` means a dead link.

==================  ===============================================================
module              holds
==================  ===============================================================
``model``           :class:`BandwidthModel`, :class:`Source`, the kinds of figure
``clusters``        :func:`clusters_from` a result; :func:`figure_groups` the clusters and
                    groups the figures are measured for; cluster figures from host pairs
``topology_model``  :func:`from_topology`
``probes``          :func:`from_probes`
``figures``         :func:`from_figures`
``broadcasts``      :func:`from_broadcasts`
``analysis``        :func:`analysis_model`: an analysis's clusters at a level, from a source
==================  ===============================================================

Every public name is importable from ``tomography.export.bandwidth`` itself.
"""

from __future__ import annotations

from tomography.export.bandwidth.broadcasts import from_broadcasts
from tomography.export.bandwidth.clusters import clusters_from, figure_groups
from tomography.export.bandwidth.model import BASIS, FIGURES, SOURCE_KINDS, BandwidthModel, Source
from tomography.export.bandwidth.probes import from_probes
from tomography.export.bandwidth.figures import from_figures
from tomography.export.bandwidth.topology_model import from_topology
from tomography.export.bandwidth.analysis import (analysis_model, has_figures,  # noqa: E402
                                                  shared_links)

__all__ = ["SOURCE_KINDS", "FIGURES", "BASIS", "Source", "BandwidthModel", "clusters_from",
           "figure_groups",
           "from_topology", "from_probes", "from_broadcasts", "from_figures", "analysis_model",
           "has_figures", "shared_links"]
