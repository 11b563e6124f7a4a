"""MPI's broadcast and the hierarchical one, side by side: the one line a program changes.

Export the hierarchy (or pass the dataset directory itself), then run::

    tomography export DATASET --format mpi -o topo.mpi.json
    mpiexec -n N python hierarchical_bcast.py topo.mpi.json [MIB]

``comm = HierarchicalComm(MPI.COMM_WORLD, path)`` splits the communicators
once; ``comm.Bcast`` then has the signature and the result of
``MPI.COMM_WORLD.Bcast``.  The program broadcasts MIB MiB (default 16) both
ways, checks that every rank got the data and prints both times.
"""

from __future__ import annotations

import sys


def main(path: str, mib: int) -> int:
    import numpy as np
    from mpi4py import MPI

    from tomography.collectives import HierarchicalComm
    from tomography.model.errors import TomographyError

    world = MPI.COMM_WORLD
    try:
        comm = HierarchicalComm(world, path)          # instead of comm = MPI.COMM_WORLD
    except TomographyError as exc:                    # raised on every rank alike
        if world.Get_rank() == 0:
            print(f"error: {exc}", file=sys.stderr)
        return 2
    data = np.empty(mib << 20, dtype=np.uint8)
    expected = np.arange(data.size) % 251
    times = {}
    for name, c in (("MPI_Bcast", world), ("hierarchical", comm)):
        data[:] = expected if world.Get_rank() == 0 else 0
        world.Barrier()
        start = MPI.Wtime()
        c.Bcast(data, root=0)
        times[name] = world.allreduce(MPI.Wtime() - start, op=MPI.MAX)
        if not world.allreduce(bool(np.array_equal(data, expected)), op=MPI.LAND):
            print(f"{name}: some rank did NOT get the data", file=sys.stderr)
            return 1
    if world.Get_rank() == 0:
        levels = len(comm.layout.clusters)
        print(f"{mib} MiB from rank 0 to {world.Get_size()} ranks "
              f"({levels} level{'s' if levels > 1 else ''}: {', '.join(comm.layout.names)}): "
              + ", ".join(f"{n} {t:.3f} s" for n, t in times.items())
              + "; all ranks got the data")
    comm.Free()
    return 0


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(f"usage: {sys.argv[0]} TOPO.mpi.json|DATASET [MIB]")
    sys.exit(main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) == 3 else 16))
