"""Topology-aware MPI collectives that a program imports (mpi4py).

:class:`HierarchicalComm` wraps a communicator and runs broadcast, reduce,
allreduce and allgather over a measured hierarchy of bandwidth clusters,
with mpi4py's own signatures::

    from mpi4py import MPI
    from tomography.collectives import HierarchicalComm

    comm = HierarchicalComm(MPI.COMM_WORLD, "topo.mpi.json")   # or a dataset, a Hierarchy
    comm.Bcast(data, root=0)

=============  ====================================================================
module         holds
=============  ====================================================================
``comm``       :class:`HierarchicalComm`, the segment size and fallback thresholds
``layout``     :class:`Layout`: levels, leaders and stages for a root (no MPI)
``placement``  :func:`place`: which host of the hierarchy each rank runs on
``pipeline``   :func:`run_steps`: segments through non-blocking collectives
=============  ====================================================================

docs/mpi.md is the user's guide; benchmarks/collectives_mpi.py measures
these collectives against MPI's own on emulated networks.
"""

from __future__ import annotations

from tomography.collectives.comm import DEFAULT_SEGMENT, DEFAULT_THRESHOLDS, HierarchicalComm
from tomography.collectives.layout import Layout, Stage
from tomography.collectives.placement import place

__all__ = ["HierarchicalComm", "Layout", "Stage", "place", "DEFAULT_SEGMENT",
           "DEFAULT_THRESHOLDS"]
