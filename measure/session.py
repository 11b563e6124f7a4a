"""The skeleton every run of agents shares: broadcasts, probe meshes and multicasts.

A run goes through the same steps whatever it measures
(:func:`measure.coordinator.run_broadcasts`, :func:`measure.mesh.run_mesh`,
:func:`measure.multicast.run_multicasts`):

1. **The place** (:class:`Run`): the dataset directory's one-writer lock is
   taken before anything there is read, written or removed.  With
   ``resume`` and a dataset there, the runner reopens it (its writer drops
   what a stopped write cut short) and checks that the same run made it
   (:func:`tomography.model.dataset.meta.refuse_other_run`); otherwise a
   dataset in the way is refused unless ``overwrite``.
2. **The agents**: the runner starts and checks them (the preflight) and
   hands them to the run (:attr:`Run.agents`), which stops them at the end.
3. **meta.json** (:meth:`Run.begin`): a new dataset records what every run
   records (:func:`host_records`: the launcher, each host's facts, the
   hosts the preflight left out) beside the runner's own keys; a resumed
   one appends the session to ``resumes``, with how much was on disk.
4. **The work**: each finished unit (an iteration, a test, a multicast) is
   written at once, then handed to the caller's ``progress``.
5. **The end** (:meth:`Run.close`, on leaving the ``with`` block): the
   agents stop, the writer closes and the lock goes, whatever happened; the
   :class:`Summary` says what was done, in how long, after what was kept.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Protocol, Sequence

from tomography.model.dataset import refuse_existing
from tomography.model.dataset.lock import DatasetLock
from tomography.model.dataset.meta import software_versions

if TYPE_CHECKING:
    from measure.preflight import HostCheck

__all__ = ["Run", "Summary", "host_records"]


class Writer(Protocol):
    """What a run needs of a dataset writer (``MeasurementWriter``, ``MulticastWriter``)."""

    meta: dict[str, Any]

    def update_meta(self, **keys: Any) -> None: ...

    def close(self) -> None: ...


class Agents(Protocol):
    """What a run needs of its agents (:class:`measure.coordinator.AgentGroup`)."""

    def close(self) -> None: ...


def host_records(checks: Sequence["HostCheck"], launcher: str) -> dict[str, Any]:
    """What every dataset records of its agents: the launcher, each host's facts (versions,
    address, clock) and the hosts the preflight left out, with the reason."""
    return {"launcher": launcher, "hosts": {c.host: c.record() for c in checks if c.ok},
            "skipped_hosts": {c.host: c.reason for c in checks if not c.ok}}


class Run:
    """One run's dataset and agents, from the lock to the end (see the module docstring).

    Parameters
    ----------
    output : path
        The dataset directory.
    resume : bool
        Continue the dataset there, if there is one.
    overwrite : bool
        Replace a dataset there (without ``resume``).
    resumable : bool, default True
        Whether the refusal of a dataset in the way may suggest ``--resume``.

    Attributes
    ----------
    resuming : bool
        A dataset is there and is continued: the runner reopens it and sets
        :attr:`writer` before :meth:`begin`.
    writer, agents
        Closed by :meth:`close` (the runner sets them as it opens them).

    Examples
    --------
    >>> import tempfile
    >>> d = tempfile.mkdtemp() + "/run"
    >>> with Run(d, resume=True, overwrite=False) as run:
    ...     run.resuming
    False
    """

    def __init__(self, output: str | Path, *, resume: bool, overwrite: bool,
                 resumable: bool = True) -> None:
        self.path = Path(output)
        self.started = time.monotonic()
        self.writer: Writer | None = None
        self.agents: Agents | None = None
        self._lock = DatasetLock(self.path).acquire()   # before anything is read or removed
        try:
            self.resuming = resume and (self.path / "meta.json").exists()
            if not self.resuming:
                refuse_existing(self.path, overwrite=overwrite, resumable=resumable)
        except BaseException:
            self._lock.release()
            raise

    def begin(self, checks: Sequence["HostCheck"], launcher: str,
              create: Callable[[dict[str, Any]], Writer], *, kept: int = 0) -> Writer:
        """After the preflight: the new dataset written, or the resumed one's session noted.

        The runner has set :attr:`agents` as soon as they started (so that they
        are closed whatever fails next).

        Parameters
        ----------
        checks : sequence of HostCheck
            The preflight, host by host.
        launcher : str
            How the agents were started (``local``, ``testbed``, ``mpi``, ``ssh``).
        create : callable
            ``create(records)`` writes a new dataset whose ``meta.json`` holds
            ``records`` (:func:`host_records`) beside the runner's keys, and
            returns its writer.
        kept : int
            Units of work (iterations, tests, multicasts) already on disk.
        """
        records = host_records(checks, launcher)
        if not self.resuming:
            self.writer = create(records)
            return self.writer
        assert self.writer is not None, "a resumed run reopens its dataset first"
        session = {"time": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                   "kept": kept, **records, "software": software_versions()}
        self.writer.update_meta(resumes=[*self.writer.meta.get("resumes", []), session])
        return self.writer

    @property
    def seconds(self) -> float:
        """Seconds since the run began."""
        return time.monotonic() - self.started

    def close(self) -> None:
        """Stop the agents, close the writer and let the lock go, whatever failed."""
        agents, self.agents = self.agents, None
        writer, self.writer = self.writer, None
        try:
            if agents is not None:
                agents.close()
        finally:
            try:
                if writer is not None:
                    writer.close()
            finally:
                self._lock.release()

    def __enter__(self) -> "Run":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(kw_only=True)
class Summary(ABC):
    """What a run did: its dataset, what the preflight left out, what was kept, how long.

    A runner's summary adds its units of work (:meth:`count`) and the lines
    about them (:meth:`details`).
    """

    path: Path
    checks: list["HostCheck"] = field(default_factory=list)
    kept: int = 0                 # units of work already on disk when the run resumed
    seconds: float = 0.0
    UNIT: ClassVar[str] = "unit"

    @abstractmethod
    def count(self) -> int:
        """Units of work this run did (each runner's summary says how it counts them)."""

    def details(self) -> list[str]:
        """Lines about the units of work (failures, convergence)."""
        return []

    def describe(self) -> str:
        """A few lines for the operator."""
        lines = [f"left out after the preflight: {c.host} ({c.reason})"
                 for c in self.checks if not c.ok]
        lines.append(f"{self.count()} {self.UNIT}(s) run in {self.seconds:.0f} s"
                     + (f" after {self.kept} already on disk" if self.kept else "")
                     + f"; dataset in {self.path}")
        return "\n".join(lines + self.details())
