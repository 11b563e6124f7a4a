"""The hierarchical communicator: mpi4py's collectives over a measured hierarchy."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from tomography.collectives.layout import Layout, Stage
from tomography.collectives.pipeline import Step, run_steps
from tomography.collectives.placement import place, rank_facts
from tomography.model.errors import ParameterError, TomographyError
from tomography.model.hierarchy import Hierarchy

__all__ = ["HierarchicalComm", "DEFAULT_SEGMENT", "DEFAULT_THRESHOLDS"]

DEFAULT_SEGMENT = 256 * 1024
"""Bytes per segment of a pipelined collective: of 64 KiB to 4 MiB, the fastest for a
16 MiB allreduce and within 5 % of the fastest for a broadcast (benchmarks/RESULTS.md,
``collectives_mpi.py``)."""

DEFAULT_THRESHOLDS = {"Bcast": 64 * 1024, "Reduce": 4 << 20, "Allreduce": 4 << 20,
                      "Allgather": 64 * 1024}
"""Messages below these sizes (bytes; for Allgather, the whole result) go to the plain
collective of the communicator: where the hierarchical one, measured without the fallback
on two sites 10x slower than a NIC, stopped losing to MPICH's (benchmarks/RESULTS.md,
``collectives_mpi.py``).  Each further level costs a round of messages, so a reduction
gains only when the message takes far longer than those rounds."""

_SOURCE_KINDS = "a tomography-mpi/1 file or document, a Hierarchy, an analysis or a dataset"


class HierarchicalComm:
    """Topology-aware collectives over a communicator, with mpi4py's signatures.

    The ranks are placed on the hosts of a hierarchy of bandwidth clusters
    (:mod:`tomography.collectives.placement`), and the communicator is split
    once into one communicator per cluster and level and one per level's
    leaders (MPICH-G2's scheme, :mod:`tomography.collectives.layout`).  A
    broadcast then crosses the slowest links first and once, the levels
    below in parallel; a reduction runs the other way.  Messages are cut
    into ``segment``-byte pieces that flow through the levels as a
    pipeline; messages below ``threshold`` go to the plain collective,
    which is faster there, and so does every message when the ranks form
    one cluster (nothing to gain from a hierarchy).  Every other attribute is the communicator's
    own, so ``comm = HierarchicalComm(MPI.COMM_WORLD, "topo.mpi.json")``
    is the one line a program changes.

    Parameters
    ----------
    comm : mpi4py.MPI.Intracomm
        The communicator (``MPI.COMM_WORLD``); it is not modified.
    topology : str, path-like, dict, Hierarchy or Analysis
        A ``tomography-mpi/1`` file (``tomography export --format mpi``) or
        its parsed document, a dataset directory (analysed by rank 0 with
        the defaults of ``tomography hierarchy``), an
        :class:`~tomography.pipeline.Analysis` or a
        :class:`~tomography.model.hierarchy.Hierarchy`.  Paths are read by rank 0
        alone.  A file fixes the number of ranks and the ranks per host; a
        hierarchy or dataset takes any number of ranks on its hosts.
    host : str, optional
        The host of the hierarchy this rank runs on, when the rules of
        :mod:`~tomography.collectives.placement` cannot tell (also the
        environment variable ``TOMOGRAPHY_HOST``).
    addresses : mapping of str to str, optional
        Host -> its IPv4 address, for a hierarchy whose host names are not
        the nodes' names (a dataset brings its own from ``hosts.csv``).
    segment : int, default :data:`DEFAULT_SEGMENT`
        Bytes per pipelined segment.
    threshold : int or mapping of str to int, optional
        Messages smaller than this many bytes (Allgather: its result) go to
        the plain collective;
        one number for all, or per method name (``"Bcast"``, ...); default
        :data:`DEFAULT_THRESHOLDS`.  0 makes every message hierarchical.
    window : int, default 2
        Segments in flight per level.

    Raises
    ------
    TomographyError
        On every rank alike, without a deadlock: an unreadable or invalid
        file, a file for another number of ranks or other ranks per host, a
        rank whose host the hierarchy does not have, ranks that were given
        different hierarchies.

    Attributes
    ----------
    comm : mpi4py.MPI.Intracomm
    layout : Layout
        Every rank's host and cluster per level.
    hosts : list of str
        The host of each rank.

    Examples
    --------
    In a program started by ``mpiexec``::

        from mpi4py import MPI
        from tomography.collectives import HierarchicalComm

        comm = HierarchicalComm(MPI.COMM_WORLD, "topo.mpi.json")
        data = np.empty(1 << 24, dtype=np.uint8)
        comm.Bcast(data, root=0)                      # as MPI.COMM_WORLD.Bcast
        total = np.empty(1000)
        comm.Allreduce(np.ones(1000), total, op=MPI.SUM)
        names = comm.allgather(MPI.Get_processor_name())
    """

    def __init__(self, comm: Any, topology: Any, *, host: str | None = None,
                 addresses: Mapping[str, str] | None = None, segment: int = DEFAULT_SEGMENT, threshold: int | Mapping[str, int] | None = None,
                 window: int = 2) -> None:
        from mpi4py import MPI

        for name, value, low in (("segment", segment, 1), ("window", window, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ParameterError(f"{name}: must be an integer >= {low}, got {value!r}")
        self.thresholds = _thresholds(threshold)
        self.comm = comm
        self.rank, self.size = comm.Get_rank(), comm.Get_size()
        self.segment, self.window = segment, window
        self._small = {name: 0 if self.size == 1 else t for name, t in self.thresholds.items()}
        self._MPI = MPI
        source, error = None, None
        try:
            source = _read_source(topology, comm)
        except TomographyError as exc:
            error = str(exc)
        facts = rank_facts(host)
        reports = comm.allgather((error, facts, None if source is None else source["digest"]))
        failed = [(r, e) for r, (e, _, _) in enumerate(reports) if e]
        if failed:
            rank, message = failed[0]
            raise TomographyError(message if rank == 0 and _from_root(topology) else
                                  f"rank {rank}: {message}"
                                  + (f" (and {len(failed) - 1} more ranks)" if len(failed) > 1
                                     else ""))
        if len({d for _, _, d in reports}) > 1:
            raise TomographyError("the ranks were given different hierarchies (pass the same "
                                  "one on every rank, or a path, which rank 0 reads)")
        assert source is not None
        if source["size"] is not None and source["size"] != self.size:
            raise TomographyError(f"{source['description']} describes {source['size']} ranks; "
                                  f"this communicator has {self.size}")
        self.hosts = place([f for _, f, _ in reports], list(source["levels"]),
                           addresses={**source["addresses"], **dict(addresses or {})})
        _check_slots(source, self.hosts)
        self.layout = Layout.build(self.hosts, source["levels"])
        if len(self.layout.clusters) == 1:   # one level of all ranks: MPI's own collectives
            self._small = dict.fromkeys(self.thresholds, sys.maxsize)
        self.description = source["description"]
        self._splits: dict[tuple, Any] = {}
        self._stages: dict[tuple[int, bool], list[tuple[Stage, Any]]] = {}
        self._down: list[tuple[Stage, Any]] | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.comm, name)

    def __repr__(self) -> str:
        return (f"<HierarchicalComm rank {self.rank} of {self.size}, "
                f"{len(self.layout.clusters)} levels ({', '.join(self.layout.names)}), "
                f"from {self.description}>")

    # -- communicators -----------------------------------------------------------------------

    def stages(self, root: int = 0, *, relay: bool = False) -> list[tuple[Stage, Any]]:
        """The stages for ``root`` with this rank's communicator in each, top level first.

        Collective the first time for a root: every rank splits the
        communicator for the groups it has not split before.  The
        communicator is None where this rank is in no group of the stage,
        or alone in its group.  ``relay``: as :meth:`Layout.stages`.
        """
        MPI = self._MPI
        if not isinstance(root, int) or not 0 <= root < self.size:
            raise ParameterError(f"root: must be a rank 0..{self.size - 1}, got {root!r}")
        if (root, relay) not in self._stages:
            out = []
            for stage in self.layout.stages(root, relay=relay):
                key = (stage.level, tuple(map(tuple, stage.groups)))
                if all(len(g) == 1 for g in stage.groups):
                    out.append((stage, None))
                    continue
                if key not in self._splits:
                    group = stage.group_of(self.rank)
                    colour = stage.colour[self.rank] if group and len(group) > 1 \
                        else MPI.UNDEFINED
                    sub = self.comm.Split(colour, key=self.rank)
                    self._splits[key] = None if sub == MPI.COMM_NULL else sub
                out.append((stage, self._splits[key]))
            self._stages[root, relay] = out
        return self._stages[root, relay]

    def _downward(self) -> list[tuple[Stage, Any]]:
        """The stages of root 0 below the top on their own communicators (Allreduce's way down)."""
        if self._down is None:
            self._down = [(stage, None if sub is None else sub.Dup())
                          for stage, sub in self.stages(0)[1:]]
        return self._down

    def Free(self) -> None:
        """Free the communicators this object split (not the one it was given)."""
        for sub in [*self._splits.values(), *(s for _, s in self._down or [])]:
            if sub is not None:
                sub.Free()
        self._splits, self._stages, self._down = {}, {}, None

    # -- buffers -----------------------------------------------------------------------------

    def _plain(self, name: str, nbytes: int) -> bool:
        return nbytes < self._small[name] or self.size == 1

    def _segments(self, arr: np.ndarray) -> tuple[int, Any]:
        step = max(1, self.segment // max(arr.itemsize, 1))
        count = max(1, -(-arr.size // step))
        return count, lambda s: arr[s * step:(s + 1) * step]

    # -- broadcast ---------------------------------------------------------------------------

    def Bcast(self, buf: Any, root: int = 0) -> None:
        """Broadcast a buffer from ``root``, as :meth:`mpi4py.MPI.Comm.Bcast`.

        Examples
        --------
        ``comm.Bcast(array, root=3)``: after it, every rank's ``array``
        holds rank 3's.
        """
        if type(buf) is np.ndarray and buf.nbytes < self._small["Bcast"]:
            return self.comm.Bcast(buf, root=root)          # the fast path of small messages
        arr = _array(buf, self._MPI)
        if arr is None or self._plain("Bcast", arr.nbytes):
            return self.comm.Bcast(buf, root=root)
        self._bcast(arr, self.stages(root, relay=True))

    def _bcast(self, arr: np.ndarray, stages: list[tuple[Stage, Any]]) -> None:
        """Broadcast down ``stages``: this rank's one receive first, its sends after it."""
        count, segment = self._segments(arr)
        receive: list[Step] = []
        sends: list[Step] = []
        for stage, sub in stages:
            if sub is None:
                continue
            group = stage.group_of(self.rank)
            lead = stage.root_of(self.rank)
            start = (lambda s, c=sub, r=group.index(lead): c.Ibcast(segment(s), root=r))
            if lead == self.rank:
                sends.append(start)
            else:
                receive.append(start)
        after = 0 if receive else None
        run_steps([Step(start) for start in receive] + [Step(start, after=after)
                                                         for start in sends],
                  count, window=self.window)

    def bcast(self, obj: Any, root: int = 0) -> Any:
        """Broadcast a Python object from ``root``, as :meth:`mpi4py.MPI.Comm.bcast`.

        The object is pickled once; its bytes take :meth:`Bcast`'s way.
        """
        MPI = self._MPI
        data = MPI.pickle.dumps(obj) if self.rank == root else None
        length = self.comm.bcast(None if data is None else len(data), root=root)
        buf = np.frombuffer(bytearray(data), dtype=np.uint8) if data is not None \
            else np.empty(length, dtype=np.uint8)
        self.Bcast(buf, root=root)
        return obj if self.rank == root else MPI.pickle.loads(buf.tobytes())

    # -- reductions --------------------------------------------------------------------------

    def Reduce(self, sendbuf: Any, recvbuf: Any, op: Any = None, root: int = 0) -> None:
        """Reduce to ``root``, as :meth:`mpi4py.MPI.Comm.Reduce` (``MPI.IN_PLACE`` at the root).

        Non-commutative operations, and data types NumPy does not know, go
        to the plain ``Reduce`` (the hierarchy changes the order of the
        operands).
        """
        if type(sendbuf) is np.ndarray and sendbuf.nbytes < self._small["Reduce"]:
            return self.comm.Reduce(sendbuf, recvbuf, op=op or self._MPI.SUM, root=root)
        MPI = self._MPI
        op = MPI.SUM if op is None else op
        in_place = sendbuf is MPI.IN_PLACE
        mine = _array(recvbuf if in_place else sendbuf, MPI)
        if (mine is None or not op.Is_commutative() or self._plain("Reduce", mine.nbytes)):
            return self.comm.Reduce(sendbuf, recvbuf, op=op, root=root)
        stages = self.stages(root)
        leads = any(sub is not None and stage.root_of(self.rank) == self.rank
                    for stage, sub in stages)
        if self.rank == root:
            acc = _array(recvbuf, MPI)
            if not in_place:
                acc[...] = mine
        else:
            acc = mine.copy() if leads else mine
        count, segment = self._segments(acc)
        run_steps(self._reduce_steps(segment, op, stages[::-1]), count, window=self.window)

    def _reduce_steps(self, segment: Any, op: Any,
                      bottom_up: list[tuple[Stage, Any]]) -> list[Step]:
        """The steps of a reduction up ``bottom_up``, each after the one before; a rank
        that sends its share to its group's root is done."""
        MPI = self._MPI
        steps: list[Step] = []
        for stage, sub in bottom_up:
            if sub is None:
                continue
            lead = stage.root_of(self.rank)
            r = stage.group_of(self.rank).index(lead)
            start = ((lambda s, c=sub, r=r: c.Ireduce(MPI.IN_PLACE, segment(s), op=op, root=r))
                     if lead == self.rank else
                     (lambda s, c=sub, r=r: c.Ireduce(segment(s), None, op=op, root=r)))
            steps.append(Step(start, after=len(steps) - 1 if steps else None))
            if lead != self.rank:
                break
        return steps

    def reduce(self, sendobj: Any, op: Any = None, root: int = 0) -> Any:
        """Reduce Python objects to ``root``, as :meth:`mpi4py.MPI.Comm.reduce`.

        Over the hierarchy for MPI's predefined commutative operations;
        a Python function as ``op`` goes to the plain ``reduce``.
        """
        MPI = self._MPI
        op = MPI.SUM if op is None else op
        if not isinstance(op, MPI.Op) or not op.Is_commutative() or self.size == 1:
            return self.comm.reduce(sendobj, op=op, root=root)
        acc = sendobj
        for stage, sub in reversed(self.stages(root)):
            if sub is None:
                continue
            lead = stage.root_of(self.rank)
            acc = sub.reduce(acc, op=op, root=stage.group_of(self.rank).index(lead))
            if lead != self.rank:
                return None
        return acc if self.rank == root else None

    def Allreduce(self, sendbuf: Any, recvbuf: Any, op: Any = None) -> None:
        """Reduce and give every rank the result, as :meth:`mpi4py.MPI.Comm.Allreduce`.

        Up the levels to the leaders of the top clusters, an allreduce
        among them, and down again, all pipelined segment by segment.
        """
        if type(recvbuf) is np.ndarray and recvbuf.nbytes < self._small["Allreduce"]:
            return self.comm.Allreduce(sendbuf, recvbuf, op=op or self._MPI.SUM)
        MPI = self._MPI
        op = MPI.SUM if op is None else op
        in_place = sendbuf is MPI.IN_PLACE
        acc = _array(recvbuf, MPI)
        if (acc is None or not op.Is_commutative() or self._plain("Allreduce", acc.nbytes)):
            return self.comm.Allreduce(sendbuf, recvbuf, op=op)
        if not in_place:
            acc[...] = _array(sendbuf, MPI)
        stages = self.stages(0)
        count, segment = self._segments(acc)
        steps = self._reduce_steps(segment, op, stages[:0:-1])   # up, below the top
        sub = stages[0][1]
        if sub is not None:
            steps.append(Step(lambda s, c=sub: c.Iallreduce(MPI.IN_PLACE, segment(s), op=op),
                              after=len(steps) - 1 if steps else None))
        produced = len(steps) - 1 if steps else None
        for stage, down in self._downward():       # down again, on their own communicators
            if down is None:
                continue
            group, lead = stage.group_of(self.rank), stage.root_of(self.rank)
            steps.append(Step(lambda s, c=down, r=group.index(lead): c.Ibcast(segment(s), root=r),
                              after=produced))
            if lead != self.rank:
                produced = len(steps) - 1
        run_steps(steps, count, window=self.window)

    def allreduce(self, sendobj: Any, op: Any = None) -> Any:
        """Reduce Python objects and give every rank the result, as :meth:`mpi4py.MPI.Comm.allreduce`."""
        MPI = self._MPI
        op = MPI.SUM if op is None else op
        if not isinstance(op, MPI.Op) or not op.Is_commutative() or self.size == 1:
            return self.comm.allreduce(sendobj, op=op)
        stages = self.stages(0)
        acc, leading = sendobj, True
        for stage, sub in stages[:0:-1]:
            if sub is None:
                continue
            lead = stage.root_of(self.rank)
            acc = sub.reduce(acc, op=op, root=stage.group_of(self.rank).index(lead))
            if lead != self.rank:
                leading = False
                break
        if leading and stages[0][1] is not None:
            acc = stages[0][1].allreduce(acc, op=op)
        return self._objects_down(acc if leading else None)

    def _objects_down(self, obj: Any) -> Any:
        """Broadcast a Python object down the stages of root 0 below the top."""
        for stage, sub in self.stages(0)[1:]:
            if sub is not None:
                group = stage.group_of(self.rank)
                obj = sub.bcast(obj, root=group.index(stage.root_of(self.rank)))
        return obj

    # -- allgather ---------------------------------------------------------------------------

    def Allgather(self, sendbuf: Any, recvbuf: Any) -> None:
        """Gather every rank's block on every rank, as :meth:`mpi4py.MPI.Comm.Allgather`.

        ``sendbuf`` may be ``MPI.IN_PLACE`` (each rank's block already in its
        place in ``recvbuf``).  Blocks are gathered up the levels, exchanged
        among the leaders of the top clusters, and the whole result is
        broadcast down (pipelined).
        """
        if type(recvbuf) is np.ndarray and recvbuf.nbytes < self._small["Allgather"]:
            return self.comm.Allgather(sendbuf, recvbuf)
        MPI = self._MPI
        out = _array(recvbuf, MPI)
        if out is None or out.size % self.size:
            return self.comm.Allgather(sendbuf, recvbuf)
        n = out.size // self.size
        if self._plain("Allgather", out.nbytes):
            return self.comm.Allgather(sendbuf, recvbuf)
        blocks = out.reshape(self.size, n)
        if sendbuf is MPI.IN_PLACE:
            held = blocks[self.rank].copy()
        else:
            held = _array(sendbuf, MPI)
        stages = self.stages(0)
        holdings = self.layout.holdings(0)
        for i in range(len(stages) - 1, 0, -1):     # gather up, below the top
            stage, sub = stages[i]
            if sub is None:
                continue
            group, lead = stage.group_of(self.rank), stage.root_of(self.rank)
            r = group.index(lead)
            if lead == self.rank:
                counts = [len(holdings[i][m]) * n for m in group]
                gathered = np.empty(sum(counts), dtype=out.dtype)
                sub.Gatherv(held, [gathered, counts], root=r)
                held = gathered
            else:
                sub.Gatherv(held, None, root=r)
                held = None
                break
        top, sub = stages[0]
        if held is not None:
            order = self.layout.order(0)
            if sub is not None:
                group = top.group_of(self.rank)
                counts = [len(holdings[0][m]) * n for m in group]
                gathered = np.empty(sum(counts), dtype=out.dtype)
                sub.Allgatherv(held, [gathered, counts])
                held = gathered
            blocks[order] = held.reshape(len(order), n)
        self._bcast(out, stages[1:])

    def allgather(self, sendobj: Any) -> list[Any]:
        """Gather every rank's Python object on every rank, as :meth:`mpi4py.MPI.Comm.allgather`."""
        if self.size == 1:
            return self.comm.allgather(sendobj)
        stages = self.stages(0)
        held: list[Any] | None = [sendobj]
        for stage, sub in stages[:0:-1]:
            if sub is None:
                continue
            lead = stage.root_of(self.rank)
            parts = sub.gather(held, root=stage.group_of(self.rank).index(lead))
            if lead != self.rank:
                held = None
                break
            held = [x for part in parts for x in part]
        result = None
        if held is not None:
            if stages[0][1] is not None:
                held = [x for part in stages[0][1].allgather(held) for x in part]
            result = [None] * self.size
            for r, x in zip(self.layout.order(0), held):
                result[r] = x
        return self._objects_down(result)


# -- helpers ---------------------------------------------------------------------------------

def _thresholds(threshold: int | Mapping[str, int] | None) -> dict[str, int]:
    out = dict(DEFAULT_THRESHOLDS)
    if threshold is None:
        return out
    given = threshold if isinstance(threshold, Mapping) else dict.fromkeys(out, threshold)
    for name, value in given.items():
        if name not in out:
            raise ParameterError(f"threshold: unknown collective {name!r} (one of "
                                 f"{', '.join(out)})")
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ParameterError(f"threshold[{name!r}]: must be an integer >= 0 bytes, "
                                 f"got {value!r}")
        out[name] = value
    return out


def _array(buf: Any, MPI: Any) -> np.ndarray | None:
    """A flat NumPy view of a buffer, or None when the plain collective must take it."""
    if buf is None or buf is MPI.IN_PLACE:
        return None
    if isinstance(buf, (list, tuple)):
        if len(buf) != 2 or not isinstance(buf[1], MPI.Datatype):
            return None   # mpi4py's longer buffer specifications: the plain collective
        from mpi4py.util.dtlib import to_numpy_dtype

        try:
            return np.frombuffer(memoryview(buf[0]).cast("B"), dtype=to_numpy_dtype(buf[1]))
        except (TypeError, ValueError):
            return None
    try:
        arr = np.asarray(memoryview(buf)) if not isinstance(buf, np.ndarray) else buf
    except TypeError:
        return None
    if arr.dtype.kind not in "biufc" or not arr.dtype.isnative:
        return None
    if not arr.flags.c_contiguous:
        raise ParameterError("the buffer must be contiguous (as for every MPI collective)")
    return arr.reshape(-1)


def _from_root(topology: Any) -> bool:
    return isinstance(topology, (str, os.PathLike))


def _read_source(topology: Any, comm: Any) -> dict[str, Any]:
    """Hosts' clusters per level (and addresses, slots) from any kind of topology argument.

    Paths are read by rank 0 and the result broadcast (so every rank gets the
    same, or the same error).
    """
    if _from_root(topology):
        result: tuple[dict | None, str | None] = (None, None)
        if comm.Get_rank() == 0:
            try:
                result = (_read_path(Path(topology)), None)
            except TomographyError as exc:
                result = (None, str(exc))
            except Exception as exc:  # noqa: BLE001 - every rank must hear of it, or they wait
                result = (None, f"{topology}: {type(exc).__name__}: {exc}")
        arrived = comm.Ibarrier()   # waiting in bcast would spin a core while rank 0 analyses
        while not arrived.Test():
            time.sleep(0.01)
        source, error = comm.bcast(result, root=0)
        if error:
            raise TomographyError(error)
        return source
    return _from_object(topology)


def _read_path(path: Path) -> dict[str, Any]:
    if path.is_dir():
        from tomography.pipeline import analyze

        source = _from_object(analyze(path))
        source["description"] = f"the hierarchy of dataset {path}"
        return source
    if not path.exists():
        raise TomographyError(f"{path}: no such file or dataset")
    from tomography.export.mpi import read_mpi_hierarchy

    source = _from_object(read_mpi_hierarchy(path))
    source["description"] = str(path)
    return source


def _from_object(topology: Any) -> dict[str, Any]:
    from tomography.export.mpi import check_mpi_hierarchy

    addresses: dict[str, str] = {}
    size = slots = None
    if isinstance(topology, dict):
        doc = check_mpi_hierarchy(topology)
        levels = {h: [] for h in doc["hosts"]}
        for level in doc["levels"]:
            for cluster in level["clusters"]:
                for h in cluster["hosts"]:
                    levels[h].append(cluster["colour"])
        size, slots = doc["size"], dict(zip(doc["hosts"], doc["slots"]))
        description = "a tomography-mpi/1 document"
    else:
        hierarchy = topology
        if hasattr(topology, "hierarchy") and hasattr(topology, "measurement"):
            hierarchy = topology.hierarchy
            table = topology.measurement.hosts
            if "address" in table:
                addresses = {str(h): str(a) for h, a in zip(table["host"], table["address"])
                             if isinstance(a, str) and a}
            description = "an analysis"
        else:
            description = "a hierarchy"
        if not isinstance(hierarchy, Hierarchy):
            raise TomographyError(f"topology: expected {_SOURCE_KINDS}, got "
                                  f"{type(topology).__name__}")
        hosts = hierarchy.hosts
        labels = [hierarchy.labels(k + 1, hosts) for k in range(hierarchy.depth)]
        levels = {h: [int(level[i]) for level in labels] for i, h in enumerate(hosts)}
    digest = Layout.build(sorted(levels), levels).digest
    return {"levels": levels, "addresses": addresses, "size": size, "slots": slots,
            "description": description, "digest": digest}


def _check_slots(source: Mapping[str, Any], hosts: list[str]) -> None:
    """A file's ranks per host against the job's."""
    if source["slots"] is not None:
        counts = {h: hosts.count(h) for h in source["slots"]}
        wrong = [h for h, n in source["slots"].items() if counts[h] != n]
        if wrong:
            h = wrong[0]
            raise TomographyError(f"{source['description']} gives host {h!r} "
                                  f"{source['slots'][h]} ranks; this job runs {counts[h]} there")
