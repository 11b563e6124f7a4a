"""Run under mpiexec: every hierarchical collective against the plain mpi4py one.

``python collectives_check.py SOURCE [SEGMENT]``: SOURCE is a
tomography-mpi/1 file, a dataset directory or ``hierarchy:JSON`` (a
Hierarchy's JSON file, built into a Hierarchy on every rank).  Every root,
op, dtype and size below is compared with the result of the communicator's
own collective; rank 0 prints ``checked N cases`` and the exit status is 0
only if all ranks agree everywhere.  A construction error is printed as
``error: ...`` on every rank (exit 3), for the tests of mismatched inputs.
"""

from __future__ import annotations

import sys

import numpy as np
from mpi4py import MPI

from tomography.collectives import HierarchicalComm
from tomography.model.errors import TomographyError
from tomography.model.hierarchy import Hierarchy

SIZES = [0, 1, 7, 1000, 4099]                         # elements; segments of 1000 bytes
DTYPES = [np.uint8, np.int32, np.int64, np.float64, np.complex128]


def build(source: str, segment: int) -> HierarchicalComm:
    world = MPI.COMM_WORLD
    if source.startswith("hierarchy:"):
        with open(source.split(":", 1)[1], encoding="utf-8") as f:
            topology = Hierarchy.from_json(f.read())
    else:
        topology = source
    return HierarchicalComm(world, topology, segment=segment, threshold=0)


def data(dtype, n: int, rank: int, salt: int, top: int = 40) -> np.ndarray:
    """Small integers: exact in floats, and sums that do not overflow uint8 on six ranks
    (Open MPI 4.1's AVX reductions saturate where others wrap, open-mpi/ompi#8045)."""
    x = (np.arange(n) * (rank + 3) + salt) % top + 1
    if np.dtype(dtype).kind == "c":
        return (x + 1j * (x % 5)).astype(dtype)
    return x.astype(dtype)


def main() -> int:
    world = MPI.COMM_WORLD
    rank, size = world.Get_rank(), world.Get_size()
    segment = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    try:
        comm = build(sys.argv[1], segment)
    except TomographyError as exc:
        print(f"error: {exc}", flush=True)
        world.Barrier()   # every rank has raised: all print before the first exits
        return 3
    bad: list[str] = []
    cases = 0

    def check(name: str, got, want) -> None:
        nonlocal cases
        cases += 1
        same = (np.array_equal(got, want) if isinstance(want, np.ndarray) else got == want)
        if not same:
            bad.append(name)

    reduce_roots = {0, size // 2, size - 1}   # a root in each part of the test hierarchies
    ops = {"sum": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN, "prod": MPI.PROD}
    for dtype in DTYPES:
        kind = np.dtype(dtype).kind
        for n in SIZES:
            for root in range(size):
                mine = data(dtype, n, rank, root)
                buf = mine.copy() if rank == root else np.zeros(n, dtype)
                comm.Bcast(buf, root=root)
                check(f"Bcast {dtype.__name__} n={n} root={root}", buf, data(dtype, n, root, root))
                for name, op in ops.items():
                    if (kind == "c" and name in ("max", "min")) or root not in reduce_roots:
                        continue
                    mine = data(dtype, n, rank, root, 2 if name == "prod" else 40)
                    want = np.zeros(n, dtype)
                    world.Reduce(mine, want, op=op, root=root)
                    got = np.zeros(n, dtype)
                    if rank == root and root % 2:          # in place at odd roots
                        got[...] = mine
                        comm.Reduce(MPI.IN_PLACE, got, op=op, root=root)
                    else:
                        comm.Reduce(mine, got, op=op, root=root)
                    if rank == root:
                        check(f"Reduce {name} {dtype.__name__} n={n} root={root}", got, want)
            for name, op in ops.items():
                if kind == "c" and name in ("max", "min"):
                    continue
                mine = data(dtype, n, rank, 5, 2 if name == "prod" else 40)
                want = np.empty(n, dtype)
                world.Allreduce(mine, want, op=op)
                got = np.empty(n, dtype)
                comm.Allreduce(mine, got, op=op)
                check(f"Allreduce {name} {dtype.__name__} n={n}", got, want)
                inplace = mine.copy()
                comm.Allreduce(MPI.IN_PLACE, inplace, op=op)
                check(f"Allreduce in place {name} {dtype.__name__} n={n}", inplace, want)
            mine = data(dtype, n, rank, 11)
            want = np.empty(n * size, dtype)
            world.Allgather(mine, want)
            got = np.empty(n * size, dtype)
            comm.Allgather(mine, got)
            check(f"Allgather {dtype.__name__} n={n}", got, want)
            got = np.zeros(n * size, dtype)
            got[rank * n:(rank + 1) * n] = mine
            comm.Allgather(MPI.IN_PLACE, got)
            check(f"Allgather in place {dtype.__name__} n={n}", got, want)
    # buffers that are not NumPy arrays, and buffer specifications
    for root in range(size):
        raw = bytearray(b"x%d" % root * 3000) if rank == root else bytearray(len(b"x%d" % root)
                                                                            * 3000)
        comm.Bcast(raw, root=root)
        check(f"Bcast bytearray root={root}", bytes(raw), b"x%d" % root * 3000)
        spec = np.arange(999, dtype=np.int32) * (rank == root)
        comm.Bcast([spec, MPI.INT], root=root)
        check(f"Bcast [buf, MPI.INT] root={root}", spec, np.arange(999, dtype=np.int32))
    # a non-commutative operation goes to the plain collective: the canonical order
    def first(invec, inoutvec, datatype) -> None:
        np.frombuffer(inoutvec, dtype=np.int32)[:] = np.frombuffer(invec, dtype=np.int32)

    keep_first = MPI.Op.Create(first, commute=False)
    mine = np.full(3000, rank, dtype=np.int32)
    want, got = np.empty_like(mine), np.empty_like(mine)
    world.Allreduce(mine, want, op=keep_first)
    comm.Allreduce(mine, got, op=keep_first)
    check("Allreduce non-commutative", got, want)
    keep_first.Free()
    # Python objects
    for root in range(size):
        obj = {"root": root, "payload": list(range(root * 500))} if rank == root else None
        check(f"bcast root={root}", comm.bcast(obj, root=root),
              {"root": root, "payload": list(range(root * 500))})
        check(f"reduce sum root={root}", comm.reduce(rank + 1, op=MPI.SUM, root=root),
              world.reduce(rank + 1, op=MPI.SUM, root=root))
        check(f"reduce max root={root}", comm.reduce([rank], op=MPI.MAX, root=root),
              world.reduce([rank], op=MPI.MAX, root=root))
    check("allreduce sum", comm.allreduce(rank * 2), world.allreduce(rank * 2))
    check("allreduce lambda", comm.allreduce(rank, op=lambda a, b: a + b),
          world.allreduce(rank, op=lambda a, b: a + b))
    check("allgather", comm.allgather(("r", rank)), world.allgather(("r", rank)))
    everyone = world.gather(bad, root=0)
    if rank == 0:
        failures = [f"rank {r}: {b}" for r, bs in enumerate(everyone) for b in bs]
        print(f"checked {cases} cases on {size} ranks over {len(comm.layout.clusters)} levels "
              f"({', '.join(comm.layout.names)})"
              + (f"; {len(failures)} FAILED: " + "; ".join(failures[:10]) if failures else ""),
              flush=True)
    ok = world.allreduce(not bad, op=MPI.LAND)
    comm.Free()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
