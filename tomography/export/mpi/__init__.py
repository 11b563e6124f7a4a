"""The hierarchy for topology-aware MPI collectives (docs/method.md, MPICH-G2 style).

MPICH-G2 (thesis 6.1) gives every bandwidth cluster of every level its own
communicator, led by the cluster's first rank, and runs a broadcast top
level first, the broadcasts of one level in parallel.  This package writes
what an MPI program needs to do the same over a
:class:`~tomography.model.hierarchy.Hierarchy`:

* a rank order that keeps the clusters of every level contiguous, as an
  Open MPI or MPICH hostfile (:func:`hostfile`) or an Open MPI rankfile
  (:func:`rankfile`);
* per level, the colour of every rank for ``MPI_Comm_split`` and the leader
  of every cluster, and the *leaders* communicators through which the
  leaders of the clusters of a level talk;
* the broadcast schedule (:func:`tomography.planning.broadcast_schedule`)
  in ranks.

Rank order
    Hosts are ordered by their top-level cluster, then by their cluster on
    the level below, ..., then by name; the clusters of a level are ordered
    by their first host (by name), so the first rank of every cluster is its
    first host, the leader :func:`~tomography.planning.broadcast_schedule`
    chooses.  With ``slots`` ranks per host, each host takes that many
    consecutive ranks (what ``mpirun --hostfile`` does by default, filling
    each host's slots before the next host).

JSON format ``tomography-mpi/1`` (:func:`mpi_hierarchy`), here for hosts
a to e in level-1 clusters {a, b}, {c}, {d, e} and level-2 clusters {a, b},
{c, d, e}, broadcast root d, one slot per host::

    {
      "format": "tomography-mpi/1",
      "size": 5,                              # ranks in MPI_COMM_WORLD
      "hosts": ["a", "b", "c", "d", "e"],     # rank order, clusters contiguous
      "slots": [1, 1, 1, 1, 1],               # ranks per host, in the order of "hosts"
      "ranks": {"a": 0, "b": 1, "c": 2, "d": 3, "e": 4},   # host -> its first rank
      "rank_hosts": ["a", "b", "c", "d", "e"],             # rank -> host
      "root": {"host": "d", "rank": 3},       # the broadcast root
      "levels": [                             # level 1 (finest) first
        {"level": 1,
         "colours": [0, 0, 1, 2, 2],          # per rank: its level-1 cluster
         "clusters": [{"id": "L1C0", "colour": 0, "hosts": ["a", "b"],
                       "ranks": [0, 1], "leader": 0},
                      {"id": "L1C1", "colour": 1, "hosts": ["c"], "ranks": [2, 2], "leader": 2},
                      {"id": "L1C2", "colour": 2, "hosts": ["d", "e"], "ranks": [3, 4],
                       "leader": 3}],
         "leaders": [0, null, 1, 1, null],    # per rank: its colour in the leaders
                                              #   communicators of level 1, or null
         "leaders_roots": [0, 3]},            # per leaders colour: the rank that sends
        {"level": 2,
         "colours": [0, 0, 1, 1, 1],
         "clusters": [{"id": "L2C0", ..., "leader": 0}, {"id": "L2C1", ..., "leader": 3}],
         "leaders": [0, null, null, 0, null],
         "leaders_roots": [3]}
      ],
      "schedule": [                           # broadcast steps, in order
        {"step": 1, "level": 2, "communicator": "leaders",
         "sends": [{"from": "d", "from_rank": 3, "to": ["a"], "to_ranks": [0]}]},
        {"step": 2, "level": 1, "communicator": "leaders",
         "sends": [{"from": "d", "from_rank": 3, "to": ["c"], "to_ranks": [2]}]},
        {"step": 3, "level": 1, "communicator": "cluster",
         "sends": [{"from": "a", "from_rank": 0, "to": ["b"], "to_ranks": [1]},
                   {"from": "d", "from_rank": 3, "to": ["e"], "to_ranks": [4]}]}
      ],
      "params": {"root_host": "d", "slots": 1, "hierarchy": {...}}
    }

* ``levels[k-1]["colours"]`` is the ``color`` of ``MPI_Comm_split`` for the
  communicator of each level-``k`` cluster; clusters are numbered in rank
  order.  A cluster's ``hosts`` are listed in rank order, its ``ranks`` are
  ``[first, last]``, inclusive.
* A cluster's leader is its lowest rank, except in the clusters holding the
  root host, which the root leads (as in the schedule).
* ``levels[k-1]["leaders"]``: the leaders of the level-``k`` clusters that
  lie in one level-``k+1`` cluster form one communicator, coloured by that
  level-``k+1`` cluster; on the top level all leaders form one (colour 0).
  ``null`` stands for ``MPI_UNDEFINED``: the rank leads no level-``k``
  cluster.  Its root (``leaders_roots``) is the leader of the level-``k+1``
  cluster, on the top level the root.
* The schedule runs in these communicators: a ``"leaders"`` step of level
  ``k`` is a broadcast in the leaders communicators of level ``k``, the last
  step (``"cluster"``, level 1) a broadcast in each level-1 cluster's
  communicator, which with several slots per host reaches every rank.  The
  sends of a step run in parallel; they are listed by sender rank.  Steps
  without a send are left out (a top level of one cluster, a hierarchy
  whose clusters hold one rank each).

``docs/mpi.md`` shows an mpi4py program that splits the communicators from
this file and broadcasts along the schedule.

=================  ================================================================
module             holds
=================  ================================================================
``ranks``          :func:`rank_order`; the hierarchy and the slots checked
``communicators``  :func:`mpi_hierarchy`, :func:`write_mpi_hierarchy`: the document
``validation``     :func:`check_mpi_hierarchy`, :func:`read_mpi_hierarchy`
``hostfiles``      :func:`hostfile`, :func:`rankfile`, :func:`mpi_flavor`
=================  ================================================================

Every public name is importable from ``tomography.export.mpi`` itself.
"""

from __future__ import annotations

from tomography.export.mpi.communicators import FORMAT, mpi_hierarchy, write_mpi_hierarchy
from tomography.export.mpi.hostfiles import hostfile, rankfile
from tomography.export.mpi.ranks import rank_order
from tomography.export.mpi.validation import check_mpi_hierarchy, read_mpi_hierarchy

# Importable from here as well, as before the package was split (not in __all__).
from tomography.export.mpi.hostfiles import mpi_flavor  # noqa: F401
from tomography.export.mpi.ranks import Slots  # noqa: F401

__all__ = ["FORMAT", "rank_order", "mpi_hierarchy", "write_mpi_hierarchy",
           "read_mpi_hierarchy", "check_mpi_hierarchy", "hostfile", "rankfile"]
