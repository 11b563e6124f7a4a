"""A network that changes under a run: the testbed's links reshaped with ``tc`` at given times.

A schedule (YAML, ``--changes FILE`` of every command that runs on a
testbed) says which router links change, when, and to what:

.. code-block:: yaml

    changes:                      # at given times (seconds after the command starts)
      - {at: 30, link: [west, east], capacity: 0.8MB/s}
      - {at: 90, link: all, fraction: 1}        # every link back to its capacity
    random:                       # and/or every T seconds, each link at random
      every: 5
      fraction: [0.1, 1.0]        # of the link's capacity, drawn uniformly
      link: all                   # or a list of links, each [router, router]
      seed: 1

``capacity`` is the link's new rate in each direction, in the topology's
units (multiplied by the testbed's ``--bandwidth-scale``, as the topology's
capacities were); ``fraction`` a share of the link's capacity, each
direction's own.  The thesis's
scenarios (den Burger, ch. 4.6): static (no schedule); one WAN link falling
from 8 to 0.8 MB/s at 30 s (the example's first line); the reverse (a line
at 0 s at 0.8 MB/s, one at 30 s at 8 MB/s); mayhem (``random`` every 5 s,
every link at 10 to 100 %).

:class:`Reshaper` applies the schedule in a thread while the command runs:
each change is a ``tc qdisc change`` of the token bucket on the link's
device at both ends (one ``tc -batch`` per router namespace), which keeps
the queue and the connections that use it; when the command ends, every link
changed gets its topology's rate back.  Every change applied is kept,
and written to ``network_changes.csv`` in the run's output directory when
the command ends, if the run made a dataset there (appended: a resumed run
adds its own session): when each change was due, when it landed, the link,
the direction and the rate.
"""

from __future__ import annotations

import csv
import subprocess
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

from measure.testbed.names import TestbedError
from measure.testbed.plan import plan
from measure.testbed.shaping import Shaper, tbf
from tomography.model.safe_load import load_yaml
from tomography.model.topology import Topology
from tomography.model.units import parse_bandwidth

__all__ = ["Change", "RandomChanges", "Schedule", "read_schedule", "Reshaper",
           "CHANGES_FILE", "CHANGES_COLUMNS"]

CHANGES_FILE = "network_changes.csv"
"""The file of a run's output directory that records every change applied."""
CHANGES_COLUMNS = ("session", "due_s", "applied_s", "time", "link", "from_router", "rate_bps")
"""Each change applied: the session it belongs to (when its command started, UTC), when it
was due and when it landed (seconds after the start), the UTC time it landed, the link
(``A--B``), the router whose side sends at the new rate, and the rate in bit/s."""
MAX_CHANGES = 10_000
"""The most timed changes a schedule may list."""
MIN_EVERY = 0.5
"""The shortest period of random changes (s): ``tc`` takes a few milliseconds a device."""
MAX_SECONDS = 7 * 86400.0


@dataclass(frozen=True)
class Change:
    """One change at a given time: ``links`` (None: every router link) to ``capacity`` bit/s
    or to ``fraction`` of each direction's capacity."""

    at: float
    links: tuple[tuple[str, str], ...] | None
    capacity: float | None = None
    fraction: float | None = None


@dataclass(frozen=True)
class RandomChanges:
    """Every ``every`` seconds, each of ``links`` (None: all) at a fraction of its capacity
    drawn uniformly from ``low`` to ``high``, from ``seed``."""

    every: float
    low: float
    high: float
    links: tuple[tuple[str, str], ...] | None = None
    seed: int = 0


@dataclass(frozen=True)
class Schedule:
    """Timed changes and random ones; :meth:`to_meta` is what a dataset records of it."""

    changes: tuple[Change, ...] = ()
    random: RandomChanges | None = None
    source: dict[str, Any] = field(default_factory=dict)

    def to_meta(self) -> dict[str, Any]:
        """The schedule as its file gave it, for ``meta.json``."""
        return dict(self.source)

    def events(self, topology: Topology, scale: float = 1.0
               ) -> Iterator[tuple[float, int, str, float]]:
        """``(time, link index, from router, rate bit/s)`` in time order, for ever when
        random changes are scheduled; a link the topology lacks is refused before the first.

        ``topology`` is the testbed's, scaled by ``scale`` (its ``--bandwidth-scale``):
        absolute capacities are scaled alike.

        Examples
        --------
        >>> from tomography.model.topology import parse_topology
        >>> t = parse_topology({"name": "t", "routers": ["A", "B"],
        ...                     "host_defaults": {"nic": "1Gbit/s"},
        ...                     "links": [{"between": ["A", "B"], "capacity": "10Mbit/s",
        ...                                "latency": "1ms"}],
        ...                     "clusters": [{"name": "a", "router": "A", "hosts": 1},
        ...                                  {"name": "b", "router": "B", "hosts": 1}]})
        >>> s = read_schedule({"changes": [{"at": 2, "link": ["A", "B"], "fraction": 0.5}]})
        >>> list(s.events(t))
        [(2.0, 0, 'A', 5000000.0), (2.0, 0, 'B', 5000000.0)]
        """
        index = {frozenset((link.a, link.b)): j for j, link in enumerate(topology.links)}

        def chosen(links: tuple[tuple[str, str], ...] | None) -> list[int]:
            if links is None:
                return list(range(len(topology.links)))
            out = []
            for a, b in links:
                if frozenset((a, b)) not in index:
                    raise TestbedError(f"the schedule names a link {a} -- {b} that the "
                                       f"topology {topology.name!r} does not have")
                out.append(index[frozenset((a, b))])
            return out

        def directed(j: int, capacity: float | None, fraction: float | None
                     ) -> list[tuple[int, str, float]]:
            link = topology.links[j]
            out = []
            for router in (link.a, link.b):
                own = link.capacity_from(router) or link.capacity
                out.append((j, router, capacity * scale if capacity is not None
                            else own * fraction))
            return out

        timed = sorted(((c.at, n, d) for n, c in enumerate(self.changes)
                        for j in chosen(c.links)
                        for d in directed(j, c.capacity, c.fraction)),
                       key=lambda e: (e[0], e[1]))
        rand = self.random
        rng = np.random.default_rng(rand.seed if rand else 0)
        targets = chosen(rand.links) if rand else []

        def drawn(tick: int) -> Iterator[tuple[float, int, str, float]]:
            """Random changes number ``tick``: each target at a share drawn anew."""
            for j in targets:
                share = float(rng.uniform(rand.low, rand.high))
                for _, router, rate in directed(j, None, share):
                    yield tick * rand.every, j, router, rate

        tick = 0
        for at, _, (j, router, rate) in timed:
            while rand is not None and tick * rand.every < at:
                yield from drawn(tick)
                tick += 1
            yield at, j, router, rate
        while rand is not None:
            yield from drawn(tick)
            tick += 1


def _links(value: Any, where: str) -> tuple[tuple[str, str], ...] | None:
    if value == "all":
        return None
    if isinstance(value, list) and len(value) == 2 and all(isinstance(x, str) for x in value):
        value = [value]
    if not (isinstance(value, list) and value and all(
            isinstance(x, list) and len(x) == 2 and all(isinstance(y, str) for y in x)
            for x in value)):
        raise TestbedError(f"{where}: link must be 'all', [router, router] or a list of "
                           f"them, got {value!r}")
    return tuple((a, b) for a, b in value)


def _number(value: Any, where: str, low: float, high: float, *, above: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value \
            or not (low < value if above else low <= value) or value > high:
        raise TestbedError(f"{where}: expected a number {'above' if above else 'from'} {low:g} "
                           f"{'and at most' if above else 'to'} {high:g}, got {value!r}")
    return float(value)


def read_schedule(source: str | Path | dict[str, Any]) -> Schedule:
    """A schedule from a YAML file (or its parsed content), checked.

    Parameters
    ----------
    source : path or dict

    Raises
    ------
    TestbedError
        Naming the field that is wrong (an unknown key, a time that is no
        number, a capacity that is no bandwidth, a fraction outside 0-1).

    Examples
    --------
    >>> s = read_schedule({"changes": [{"at": 30, "link": ["W", "E"], "capacity": "0.8MB/s"}]})
    >>> s.changes[0].capacity
    6400000.0
    >>> read_schedule({"changes": [{"at": -1, "link": "all", "fraction": 1}]})
    Traceback (most recent call last):
    ...
    measure.testbed.TestbedError: changes[0].at: expected a number from 0 to 604800, got -1
    """
    if isinstance(source, dict):
        return _schedule(source)
    try:
        return _schedule(load_yaml(Path(source), kind="schedule of network changes"))
    except TestbedError as exc:
        raise TestbedError(f"{source}: {exc}") from None


def _schedule(doc: Any) -> Schedule:
    if not isinstance(doc, dict) or set(doc) - {"changes", "random"} or not doc:
        raise TestbedError("a schedule of network changes is a mapping with 'changes' and/or "
                           f"'random', got {str(doc)[:60]!r}")
    changes = []
    listed = doc.get("changes", [])
    if not isinstance(listed, list) or len(listed) > MAX_CHANGES:
        raise TestbedError(f"changes: expected a list of at most {MAX_CHANGES} changes")
    for n, item in enumerate(listed):
        where = f"changes[{n}]"
        if not isinstance(item, dict) or set(item) - {"at", "link", "capacity", "fraction"} \
                or ("capacity" in item) == ("fraction" in item) or "at" not in item:
            raise TestbedError(f"{where}: expected at, link and one of capacity or fraction, "
                               f"got {item!r}")
        capacity = fraction = None
        if "capacity" in item:
            try:
                capacity = parse_bandwidth(item["capacity"])
            except Exception as exc:
                raise TestbedError(f"{where}.capacity: {exc}") from None
        else:
            fraction = _number(item["fraction"], f"{where}.fraction", 0, 1, above=True)
        changes.append(Change(_number(item["at"], f"{where}.at", 0, MAX_SECONDS),
                              _links(item.get("link", "all"), f"{where}.link"), capacity,
                              fraction))
    rand = None
    if "random" in doc:
        r = doc["random"]
        if not isinstance(r, dict) or set(r) - {"every", "fraction", "link", "seed"} \
                or not {"every", "fraction"} <= set(r):
            raise TestbedError(f"random: expected every, fraction [low, high], link and seed, "
                               f"got {r!r}")
        span = r["fraction"]
        if not (isinstance(span, list) and len(span) == 2):
            raise TestbedError(f"random.fraction: expected [low, high], got {span!r}")
        low = _number(span[0], "random.fraction[0]", 0, 1, above=True)
        high = _number(span[1], "random.fraction[1]", low, 1)
        seed = r.get("seed", 0)
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise TestbedError(f"random.seed: expected a whole number >= 0, got {seed!r}")
        rand = RandomChanges(_number(r["every"], "random.every", MIN_EVERY, MAX_SECONDS), low,
                             high, _links(r.get("link", "all"), "random.link"), seed)
    return Schedule(tuple(changes), rand, doc)


class Reshaper:
    """Apply a schedule to a testbed that is up, in a thread, from :meth:`start` to :meth:`stop`.

    Parameters
    ----------
    testbed : measure.testbed.Testbed
    schedule : Schedule
    record : path, optional
        The dataset directory whose ``network_changes.csv`` gets the changes applied,
        when :meth:`stop` is called and a dataset is there.
    """

    def __init__(self, testbed: Any, schedule: Schedule, record: Path | None = None) -> None:
        self.testbed, self.schedule = testbed, schedule
        layout = plan(testbed.topology, name=testbed.name)
        self.shapers: dict[tuple[int, str], Shaper] = {}
        for j, link in enumerate(testbed.topology.links):
            for router in (link.a, link.b):
                ns = layout.routers[router]
                self.shapers[(j, router)] = next(s for s in layout.shapers
                                                 if s.namespace == ns and s.device == f"l{j}")
        self.netem = bool(testbed.latency_applied)
        self.record = Path(record) / CHANGES_FILE if record is not None else None
        self.applied: list[dict[str, Any]] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.error: BaseException | None = None
        self.started = 0.0
        self.scale = float(testbed.scale.get("bandwidth") or 1.0)
        next(schedule.events(testbed.topology, self.scale), None)   # unknown links refused now

    def start(self) -> "Reshaper":
        """Time 0 of the schedule is now."""
        self.started = time.monotonic()
        self.session = datetime.now(timezone.utc).isoformat(timespec="seconds")
        self._thread = threading.Thread(target=self._run, name="reshaper", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> BaseException | None:
        """Stop applying changes and give every link changed its topology's rate back (a
        testbed kept up serves the next command as it was); what stopped the changes
        early, if anything did (a ``tc`` that refused)."""
        self._stop.set()
        if self._thread is None:
            return self.error
        self._thread.join()
        self._thread = None
        self._write()
        changed = {(j, router) for j, router in self.shapers
                   if any(r["link_index"] == j and r["from_router"] == router
                          for r in self.applied)}
        if changed:
            try:
                self._tc([(j, router, self.shapers[(j, router)].rate) for j, router in changed])
            except TestbedError as exc:
                self.error = self.error or exc
        return self.error

    def _write(self) -> None:
        """Append the changes applied to the dataset's ``network_changes.csv``, if the run
        made a dataset there (a run refused before it began leaves nothing)."""
        if self.record is None or not self.applied or \
                not (self.record.parent / "meta.json").exists():
            return
        new = not self.record.exists()
        with open(self.record, "a", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh, lineterminator="\n")
            if new:
                writer.writerow(CHANGES_COLUMNS)
            for row in self.applied:
                writer.writerow([row[c] for c in CHANGES_COLUMNS])

    def __enter__(self) -> "Reshaper":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self) -> None:
        try:
            batch: list[tuple[float, int, str, float]] = []
            for event in self.schedule.events(self.testbed.topology, self.scale):
                if batch and event[0] != batch[0][0]:
                    if not self._apply(batch):
                        return
                    batch = []
                batch.append(event)
            if batch:
                self._apply(batch)
        except BaseException as exc:  # reported by whoever reads .error; the run goes on
            self.error = exc

    def _tc(self, changes: Sequence[tuple[int, str, float]]) -> None:
        """Each ``(link, from router, rate)``: the token bucket of that side changed in place,
        one ``tc -batch`` per router namespace."""
        commands: dict[str, list[str]] = {}
        for j, router, rate in changes:
            s = self.shapers[(j, router)]
            where = (["parent", "1:1", "handle", "10:"] if self.netem and s.delay > 0
                     else ["root"])
            commands.setdefault(s.namespace, []).append(
                " ".join(["qdisc", "change", "dev", s.device, *where, *tbf(max(rate, 8e3))]))
        for ns, lines in commands.items():
            done = subprocess.run(["tc", "-n", ns, "-batch", "-"], input="\n".join(lines) + "\n",
                                  capture_output=True, text=True)
            if done.returncode:
                raise TestbedError(f"tc in {ns} refused a change: {done.stderr.strip()}")

    def _apply(self, batch: Sequence[tuple[float, int, str, float]]) -> bool:
        due = batch[0][0]
        if self._stop.wait(max(0.0, self.started + due - time.monotonic())):
            return False
        self._tc([(j, router, rate) for _, j, router, rate in batch])
        applied = time.monotonic() - self.started
        stamp = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
        rows = [{"session": self.session, "due_s": round(due, 3),
                 "applied_s": round(applied, 3), "time": stamp,
                 "link": f"{self.testbed.topology.links[j].a}--"
                         f"{self.testbed.topology.links[j].b}",
                 "from_router": router, "rate_bps": round(rate), "link_index": j}
                for _, j, router, rate in batch]
        self.applied += rows
        return True
