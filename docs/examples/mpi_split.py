"""Hierarchical broadcast over the communicators of a ``tomography-mpi/1`` file.

Export the hierarchy and a hostfile, then launch one rank per slot::

    tomography export DATASET --format mpi --root HOST -o topo.mpi.json
    tomography export DATASET --format hostfile -o topo.hosts
    mpirun --hostfile topo.hosts -np N python mpi_split.py topo.mpi.json

Every rank splits ``MPI_COMM_WORLD`` once per level into the communicators
of its clusters, and once per level into the leaders communicators; the
broadcast then runs top level first (as MPICH-G2's topology-aware collectives), the
broadcasts of one level in parallel, and ends inside the level-1 clusters.
Needs mpi4py and numpy; :func:`stages` needs neither.
"""

from __future__ import annotations

import json
import sys


def stages(doc: dict) -> list[tuple[str, list, list[int]]]:
    """The broadcast stages in order: (name, colour of each rank, root rank of each colour).

    A colour of None is MPI_UNDEFINED: the rank takes no part in that stage.
    """
    out = [(f"leaders of level {lv['level']}", lv["leaders"], lv["leaders_roots"])
           for lv in reversed(doc["levels"])]
    finest = doc["levels"][0]
    out.append(("level-1 clusters", finest["colours"],
                [c["leader"] for c in finest["clusters"]]))
    return out


def main(path: str) -> int:
    import numpy as np
    from mpi4py import MPI

    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    world = MPI.COMM_WORLD
    rank = world.Get_rank()
    if world.Get_size() != doc["size"]:
        if rank == 0:
            print(f"{path} is for {doc['size']} ranks; run with -np {doc['size']}",
                  file=sys.stderr)
        return 2

    def undefined(colour):
        return MPI.UNDEFINED if colour is None else colour

    # One communicator per cluster per level, and the leaders communicators.
    clusters = [world.Split(lv["colours"][rank], key=rank) for lv in doc["levels"]]
    leaders = [world.Split(undefined(lv["leaders"][rank]), key=rank) for lv in doc["levels"]]

    data = np.zeros(1 << 16, dtype=np.uint8)
    root = doc["root"]["rank"]
    if rank == root:
        data[:] = np.arange(data.size) % 251
    world.Barrier()
    start = MPI.Wtime()
    for (name, colours, roots), comm in zip(stages(doc), [*reversed(leaders), clusters[0]]):
        colour = colours[rank]
        if colour is None:  # comm is MPI.COMM_NULL
            continue
        members = [r for r, c in enumerate(colours) if c == colour]  # key=rank keeps this order
        comm.Bcast(data, root=members.index(roots[colour]))
    elapsed = MPI.Wtime() - start

    ok = bool(np.array_equal(data, np.arange(data.size) % 251))
    everyone = world.gather((MPI.Get_processor_name(), ok, elapsed), root=root)
    if rank == root:
        bad = [r for r, (_, good, _) in enumerate(everyone) if not good]
        print(f"hierarchical broadcast of {data.nbytes} bytes from rank {root} "
              f"({doc['root']['host']}) to {doc['size']} ranks over {len(doc['levels'])} "
              f"levels: {max(t for *_, t in everyone) * 1e3:.2f} ms, "
              f"{'all ranks got the data' if not bad else f'ranks {bad} did NOT'}")
    for comm in clusters + leaders:
        if comm != MPI.COMM_NULL:
            comm.Free()
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} TOPO.mpi.json")
    sys.exit(main(sys.argv[1]))
