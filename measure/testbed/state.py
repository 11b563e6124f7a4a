"""The state of raised testbeds: state files, :func:`load`, :func:`status`, :func:`raised_testbeds`.

:func:`measure.testbed.up` records each testbed in
``/run/tomography/testbed-NAME.json`` in two steps: a *building* record before
it makes anything, then the whole :class:`Testbed` once every command has
run.  Each is written to a temporary file and renamed over the last, so the
file is never seen half-written.  What :func:`status` calls a testbed:

* ``up``: a complete record, and every namespace it names is present;
* ``building``: a building record whose ``up`` still runs (it holds the
  testbed's claim, :mod:`measure.testbed.claims`);
* ``half-built``: namespaces or a record, but neither of the above: an ``up``
  killed midway, or namespaces removed by hand; ``down`` removes it;
* ``down``: nothing of it on the system.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, fields
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

import pandas as pd

from measure.testbed import claims, names
from measure.testbed.names import TestbedError, prefix
from measure.testbed.plan import ADDRESS_PLAN
from tomography.model.errors import DatasetError
from tomography.model.safe_load import load_json
from tomography.model.scaling import FirstHosts
from tomography.model.topology import HostGroup, Link, Topology
from tomography.model.units import listed

__all__ = ["Testbed", "STATE_FORMAT", "state_path", "write_state", "now", "building_record",
           "record", "load", "status", "raised_testbeds"]

STATE_FORMAT = "tomography-testbed/1"


@dataclass
class Testbed:
    """A testbed that is up (or was: see :func:`status`).

    Attributes
    ----------
    name : str
        Its name; its namespaces are ``tomo-<name>-*``.
    topology : Topology
        The topology emulated, already scaled.
    hosts : dict
        Host name to namespace.
    addresses : dict
        Host name to IPv4 address.
    subnets : dict
        Router name to the subnet of its hosts.
    latency_applied : bool
        Whether one-way latencies are emulated (needs ``netem``).
    latency_note : str
        Why or why not, for a person.
    scale : dict
        ``{"bandwidth": factor, "hosts_per_cluster": k or None}``.
    created : str
        ISO 8601 time of :func:`measure.testbed.up`.

    Examples
    --------
    What :func:`measure.testbed.up` returns and :func:`load` reads back; here
    made by hand from a plan:

    >>> from measure.testbed import plan
    >>> from tomography.model.topology import read_topology
    >>> p = plan(read_topology("bordeaux-2x2"), name="demo")
    >>> tb = Testbed(p.name, p.topology, p.hosts, p.addresses, p.subnets, False, "no netem",
    ...              {"bandwidth": 1.0, "hosts_per_cluster": None}, "2026-01-01T00:00:00+00:00")
    >>> tb.command("borderline-00", ["hostname", "-I"])
    ['ip', 'netns', 'exec', 'tomo-demo-borderline-00', 'hostname', '-I']
    >>> tb.host_table().head(2)
                host     address     label
    0  bordeplage-00  10.201.3.2  bordeaux
    1  bordeplage-01  10.201.3.3  bordeaux
    >>> tb.to_meta()["subnets"]
    {'bordeaux-nortel': '10.201.2.0/24', 'bordeaux-dell': '10.201.3.0/24'}
    """

    __test__ = False  # not a pytest test class, despite its name

    name: str
    topology: Topology
    hosts: dict[str, str]
    addresses: dict[str, str]
    subnets: dict[str, str]
    latency_applied: bool
    latency_note: str
    scale: dict[str, Any]
    created: str

    def command(self, host: str, argv: Sequence[str]) -> list[str]:
        """The command that runs ``argv`` on ``host``: a launcher for :mod:`measure.coordinator`.

        Raises
        ------
        TestbedError
            When the testbed has no such host.
        """
        if host not in self.hosts:
            raise TestbedError(f"testbed {self.name!r} has no host {host!r} "
                               f"(hosts: {listed(self.hosts)})")
        return ["ip", "netns", "exec", self.hosts[host], *argv]

    def host_table(self) -> pd.DataFrame:
        """``host,address,label`` rows for a measurement dataset, with the testbed's addresses."""
        table = self.topology.host_table()
        table["address"] = table["host"].map(self.addresses)
        return table

    def to_meta(self) -> dict[str, Any]:
        """What a dataset's ``meta.json`` records about the testbed."""
        return {"name": self.name, "topology": self.topology.name,
                "topology_source": self.topology.source, "scale": dict(self.scale),
                "latency_applied": self.latency_applied, "latency_note": self.latency_note,
                "address_plan": ADDRESS_PLAN, "subnets": dict(self.subnets),
                "created": self.created}


def state_path(name: str) -> Path:
    """The state file of testbed ``name``.

    Examples
    --------
    >>> str(state_path("demo"))
    '/run/tomography/testbed-demo.json'
    """
    prefix(name)
    return names.STATE_DIR / f"testbed-{name}.json"


def write_state(name: str, content: dict[str, Any]) -> None:
    """Replace testbed ``name``'s state file at once: a reader sees the old or the new one.

    Raises
    ------
    TestbedError
        When the file cannot be written, naming it.

    Examples
    --------
    >>> import tempfile
    >>> from tomography.model.topology import read_topology
    >>> saved, names.STATE_DIR = names.STATE_DIR, Path(tempfile.mkdtemp())  # a scratch place
    >>> write_state("demo", building_record("demo", read_topology("two-sites-demo")))
    >>> status("demo")["phase"], sorted(p.name for p in names.STATE_DIR.iterdir())
    ('half-built', ['testbed-demo.json'])
    >>> names.STATE_DIR = saved
    """
    path = state_path(name)
    scratch = path.with_name(path.name + ".tmp")
    names.state_dir()                                  # 0700, whatever the umask
    try:
        scratch.unlink(missing_ok=True)                # so that O_EXCL makes it afresh, 0600
        fd = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC,
                     names.STATE_FILE_MODE)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(content, indent=1) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(scratch, path)
    except OSError as exc:
        try:
            scratch.unlink(missing_ok=True)
        except OSError:
            pass
        raise TestbedError(f"cannot write the testbed's state file {path}: {exc}") from None


def now() -> str:
    """The time now, as the state files record it (ISO 8601, UTC, seconds)."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def building_record(name: str, topology: Topology) -> dict[str, Any]:
    """The state of a testbed whose ``up`` has begun: who builds what, since when.

    Examples
    --------
    >>> from tomography.model.topology import read_topology
    >>> r = building_record("demo", read_topology("two-sites-demo"))
    >>> r["phase"], r["topology_name"], r["pid"] == os.getpid()
    ('building', 'two-sites-demo', True)
    """
    return {"format": STATE_FORMAT, "phase": "building", "name": name,
            "topology_name": topology.name, "pid": os.getpid(), "created": now()}


def record(testbed: Testbed) -> dict[str, Any]:
    """The state of a complete testbed: everything :func:`load` needs to rebuild it.

    Examples
    --------
    >>> from measure.testbed import plan
    >>> from tomography.model.topology import read_topology
    >>> p = plan(read_topology("bordeaux-2x2"), name="demo")
    >>> tb = Testbed(p.name, p.topology, p.hosts, p.addresses, p.subnets, False, "no netem",
    ...              {"bandwidth": 1.0, "hosts_per_cluster": None}, "2026-01-01T00:00:00+00:00")
    >>> r = record(tb)
    >>> r["phase"], r["topology_name"], r["hosts"]["borderline-00"]
    ('up', 'bordeaux-2x2', 'tomo-demo-borderline-00')
    """
    topo = testbed.topology
    model = {"name": topo.name, "description": topo.description, "source": topo.source,
             "routers": topo.routers, "links": [asdict(link) for link in topo.links],
             "clusters": [asdict(c) for c in topo.clusters],
             "unreachable": [list(pair) for pair in topo.unreachable]}
    return {"format": STATE_FORMAT, "phase": "up",
            **{f.name: getattr(testbed, f.name) for f in fields(testbed) if f.name != "topology"},
            "topology_name": topo.name, "address_plan": ADDRESS_PLAN, "topology": model}


def _from_record(state: dict[str, Any]) -> Testbed:
    model = state["topology"]
    topo = Topology(name=model["name"], routers=model["routers"],
                    links=[Link(**link) for link in model["links"]],
                    clusters=[(FirstHosts if "width" in c else HostGroup)(**c)
                              for c in model["clusters"]],
                    description=model["description"], source=model["source"],
                    unreachable=tuple(tuple(p) for p in model.get("unreachable", ())))
    return Testbed(state["name"], topo, state["hosts"], state["addresses"], state["subnets"],
                   state["latency_applied"], state["latency_note"], state["scale"],
                   state["created"])


def _complete(state: Any) -> bool:
    # files written before the building phase existed have no "phase": complete ones
    return isinstance(state, dict) and state.get("phase", "up") == "up"


def load(name: str = "tb") -> Testbed:
    """The testbed raised earlier by :func:`measure.testbed.up`, from its state file.

    Raises
    ------
    TestbedError
        When no testbed of that name is up, its ``up`` has not finished, or its
        state file is unreadable.

    Examples
    --------
    >>> load("nosuch")
    Traceback (most recent call last):
    ...
    measure.testbed.TestbedError: no testbed 'nosuch' is up: no state file \
/run/tomography/testbed-nosuch.json; raise one with measure.testbed.up
    """
    path = state_path(name)
    if not path.exists():
        raise TestbedError(f"no testbed {name!r} is up: no state file {path}; raise one "
                           "with measure.testbed.up")
    try:
        state = _read(path)
    except (OSError, DatasetError) as exc:
        raise TestbedError(f"{path}: cannot read the testbed's state: {exc}") from None
    if not isinstance(state, dict) or state.get("format") != STATE_FORMAT:
        raise TestbedError(f"{path}: not a testbed state file (format {STATE_FORMAT})")
    if not _complete(state):
        raise TestbedError(f"testbed {name!r} is not complete: its up began at "
                           f"{state.get('created')} and has not finished (it runs, or was "
                           f"killed); remove it with `tomography testbed down --name {name}`")
    try:
        return _from_record(state)
    except (KeyError, TypeError) as exc:
        raise TestbedError(f"{path}: malformed testbed state ({exc!r})") from None


def _read(path: Path) -> Any:
    """A state file through the toolkit's one strict JSON loader (bounded, no pipe)."""
    return load_json(path, kind="testbed state file", strict=True, pipes=False)


def status(name: str = "tb") -> dict[str, Any]:
    """What is on the system of a testbed: its phase, namespaces, state file and user.

    Returns
    -------
    dict
        ``phase`` (``up``, ``building``, ``half-built`` or ``down``, see the
        module's description), ``up`` (phase is ``up``), ``namespaces``
        (those present with the prefix), ``missing`` (named by a complete
        state file but absent), ``state`` (the file's content, or None when
        absent or unreadable) and ``holder`` (the process holding its claim,
        :func:`measure.testbed.claims.holder`, or None).

    Examples
    --------
    >>> status("nosuch")  # doctest: +NORMALIZE_WHITESPACE
    {'name': 'nosuch', 'phase': 'down', 'up': False, 'namespaces': [], 'missing': [],
     'state': None, 'holder': None}
    """
    start = prefix(name)
    present = names.namespaces(start)
    path = state_path(name)
    try:
        state = _read(path)
    except (OSError, DatasetError):
        state = None
    holder = claims.holder(name)
    missing: list[str] = []
    if _complete(state):
        expected = {*state.get("hosts", {}).values(),
                    *(f"{start}r-{r}" for r in state.get("topology", {}).get("routers", []))}
        missing = sorted(expected - set(present))
    if _complete(state) and not missing:
        phase = "up"
    elif isinstance(state, dict) and holder and holder["pid"] == state.get("pid"):
        phase = "building"
    elif present or path.exists():
        phase = "half-built"
    else:
        phase = "down"
    return {"name": name, "phase": phase, "up": phase == "up", "namespaces": present,
            "missing": missing, "state": state, "holder": holder}


def raised_testbeds() -> list[dict[str, Any]]:
    """The :func:`status` of every testbed on the system, whole or half-built.

    Names come from the state files and from the namespaces (``tomo-NAME-*``)
    present, so a testbed whose ``up`` was killed before its state file was
    written is listed too.

    Examples
    --------
    >>> isinstance(raised_testbeds(), list)
    True
    """
    return [status(n) for n in names.present()]
