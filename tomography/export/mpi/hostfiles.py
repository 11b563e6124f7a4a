"""Host files that make ``mpirun`` place ranks in :func:`~tomography.export.mpi.rank_order`.

A hostfile (machinefile) in Open MPI's or MPICH's syntax (:func:`hostfile`,
the syntax asked of the installed ``mpiexec`` by :func:`mpi_flavor`), or an
Open MPI rankfile (:func:`rankfile`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from tomography.model.errors import TomographyError
from tomography.export.mpi.ranks import Slots, rank_order, slot_counts
from tomography.model.hierarchy import Hierarchy

__all__ = ["mpi_flavor", "hostfile", "rankfile"]


def _host_names(hosts: list[str], forbidden: str, what: str) -> None:
    for h in hosts:
        if not h or any(ch.isspace() or ch in forbidden for ch in h):
            raise TomographyError(f"host name {h!r} cannot be written in {what} (it is empty "
                                  f"or holds whitespace or one of {forbidden!r})")


def mpi_flavor(mpiexec: str | None = None) -> Literal["openmpi", "mpich"] | None:
    """The hostfile syntax of an ``mpiexec``, read from ``mpiexec --version``.

    Parameters
    ----------
    mpiexec : str, optional
        The launcher to ask; default the ``mpiexec`` on ``PATH``, else the
        one beside this Python (the set-up's mpich wheel).

    Returns
    -------
    "openmpi", "mpich" or None
        ``openmpi`` for Open MPI; ``mpich`` for MPICH, Intel MPI, MVAPICH
        (Hydra); None when no launcher is found or it says neither.

    Examples
    --------
    >>> mpi_flavor("/nonexistent/mpiexec") is None
    True
    """
    import shutil
    import subprocess
    import sys

    candidates = [mpiexec] if mpiexec else [shutil.which("mpiexec"),
                                            str(Path(sys.executable).parent / "mpiexec")]
    for launcher in filter(None, candidates):
        try:
            out = subprocess.run([launcher, "--version"], capture_output=True, text=True,
                                 timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            continue
        text = out.stdout + out.stderr
        if "Open MPI" in text or "OpenRTE" in text or "Open RTE" in text:
            return "openmpi"
        if any(word in text for word in ("HYDRA", "MPICH", "Intel(R) MPI", "MVAPICH")):
            return "mpich"
    return None


def hostfile(hierarchy: Hierarchy, *, slots: Slots = 1,
             flavor: Literal["openmpi", "mpich", "auto"] = "auto") -> str:
    """The hosts in rank order, as a hostfile (machinefile).

    Launched with it, ``mpirun``/``mpiexec`` fill each host's slots before
    the next host (Open MPI's default ``--map-by slot``; MPICH's Hydra
    ``-f``), so ranks follow :func:`~tomography.export.mpi.rank_order` and the clusters of every
    level are contiguous.

    Parameters
    ----------
    hierarchy : Hierarchy
    slots : int or mapping of str to int, default 1
        Ranks per host (see :func:`~tomography.export.mpi.mpi_hierarchy`).
    flavor : {"auto", "openmpi", "mpich"}, default "auto"
        ``host slots=N`` (Open MPI) or ``host:N`` (MPICH, Intel MPI and
        MVAPICH's Hydra); ``auto`` asks the installed ``mpiexec``
        (:func:`mpi_flavor`) and writes Open MPI's syntax when there is none.

    Returns
    -------
    str
        One line per host, newline-terminated.

    Raises
    ------
    TomographyError
        On an unknown flavor, slots not matching the hosts, or a host name
        the syntax cannot hold.

    Examples
    --------
    >>> h = Hierarchy.from_partitions(["a", "b", "c"], [[0, 1, 0]])
    >>> print(hostfile(h, slots=2, flavor="openmpi"), end="")
    a slots=2
    c slots=2
    b slots=2
    >>> print(hostfile(h, slots={"a": 1, "b": 4, "c": 2}, flavor="mpich"), end="")
    a:1
    c:2
    b:4
    """
    if flavor == "auto":
        flavor = mpi_flavor() or "openmpi"
    if flavor not in ("openmpi", "mpich"):
        raise TomographyError(f"unknown hostfile flavor {flavor!r}; choose 'auto', 'openmpi' "
                              "or 'mpich'")
    counts = slot_counts(hierarchy, slots)
    hosts = rank_order(hierarchy)
    if flavor == "openmpi":
        _host_names(hosts, "#=", "an Open MPI hostfile")
        return "".join(f"{h} slots={counts[h]}\n" for h in hosts)
    _host_names(hosts, "#:", "an MPICH hostfile")
    return "".join(f"{h}:{counts[h]}\n" for h in hosts)


def rankfile(hierarchy: Hierarchy, *, slots: Slots = 1) -> str:
    """An Open MPI rankfile placing the ranks in :func:`~tomography.export.mpi.rank_order`.

    Each host's ranks are consecutive and bound to its logical slots 0, 1,
    ...  (``mpirun --rankfile FILE``; Open MPI 5 also spells it
    ``--map-by rankfile:file=FILE``).

    Parameters
    ----------
    hierarchy : Hierarchy
    slots : int or mapping of str to int, default 1
        Ranks per host (see :func:`~tomography.export.mpi.mpi_hierarchy`).

    Returns
    -------
    str

    Examples
    --------
    >>> h = Hierarchy.from_partitions(["a", "b", "c"], [[0, 1, 0]])
    >>> print(rankfile(h, slots={"a": 2, "b": 1, "c": 1}), end="")
    rank 0=a slot=0
    rank 1=a slot=1
    rank 2=c slot=0
    rank 3=b slot=0
    """
    counts = slot_counts(hierarchy, slots)
    hosts = rank_order(hierarchy)
    _host_names(hosts, "#=", "an Open MPI rankfile")
    lines, rank = [], 0
    for h in hosts:
        for slot in range(counts[h]):
            lines.append(f"rank {rank}={h} slot={slot}\n")
            rank += 1
    return "".join(lines)
