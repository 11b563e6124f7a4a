"""Raising a testbed and taking it down: :func:`up` and :func:`down` (root).

:func:`up` checks that nothing of that name is on the system and that the
machine can carry the testbed (:mod:`measure.testbed.resources`), records
that it is building (:mod:`measure.testbed.state`), runs the plan's commands
in batches, one ``ip``/``tc`` process per namespace
(:mod:`measure.testbed.commands`), and records the whole testbed.  All that
under the testbed's claim (:mod:`measure.testbed.claims`), so two ``up`` of
one name cannot mix.  :func:`down` kills the processes inside the
namespaces, deletes them and the state files; it works from what is on the
system, so it also cleans up after a crash or a half-built testbed.  It
leaves a testbed in use alone, unless forced.
"""

from __future__ import annotations

import os
import signal
import time
from contextlib import ExitStack

from measure.testbed import claims, names
from measure.testbed.commands import batches, require, run
from measure.testbed.names import TestbedError, prefix
from measure.testbed.plan import plan
from measure.testbed.resources import check
from tomography.model.scaling import scaled
from measure.testbed.shaping import probe_netem
from measure.testbed.state import Testbed, building_record, now, record, status, write_state
from tomography.model.topology import Topology

__all__ = ["up", "down"]

KILL_WAIT = 2.0   # s to wait for killed processes to leave a namespace
STOP_WAIT = 30.0  # s a process using a testbed has, after SIGTERM, to let it go (down --force)


def up(topology: Topology, *, name: str = "tb", bandwidth: float = 1.0,
       hosts_per_cluster: int | None = None, force: bool = False) -> Testbed:
    """Build a testbed emulating ``topology`` on this machine (needs root).

    Parameters
    ----------
    topology : Topology
        What to emulate.
    name : str
        The testbed's name, ``[a-z0-9]{1,8}``.
    bandwidth, hosts_per_cluster
        Scaling, as in :func:`measure.testbed.scaled`.
    force : bool
        Raise it even when the estimate says this machine cannot carry it
        (:func:`measure.testbed.resources.check`).

    Returns
    -------
    Testbed
        Also recorded in ``/run/tomography/testbed-<name>.json`` for
        :func:`measure.testbed.load`.

    Raises
    ------
    TestbedError
        When not root, ``ip`` or ``tc`` is missing, something of that name is
        on the system (up or half-built), another process holds its claim
        (raising or measuring), the machine cannot carry it (unless
        ``force``; the message says how to shrink it), or a command fails
        (naming it and its error; whatever was made is removed first).

    Examples
    --------
    As root:

    >>> from tomography.model.topology import read_topology
    >>> tb = up(read_topology("bordeaux-2x2"), name="demo")  # doctest: +SKIP
    >>> tb.command("borderline-00", ["hostname", "-I"])  # doctest: +SKIP
    ['ip', 'netns', 'exec', 'tomo-demo-borderline-00', 'hostname', '-I']

    Anywhere, what is wrong is said before anything is made:

    >>> up(read_topology("bordeaux-2x2"), name="Demo")
    Traceback (most recent call last):
    ...
    measure.testbed.TestbedError: testbed name must be 1 to 8 lowercase letters or digits, \
got 'Demo'
    """
    start = prefix(name)
    require(("ip", "tc"))
    layout = plan(scaled(topology, bandwidth=bandwidth, hosts_per_cluster=hosts_per_cluster),
                  name=name)
    with claims.claim(name):
        _refuse_existing(name)
        if not force:
            check(layout.topology, name=name, bandwidth=bandwidth)
        write_state(name, building_record(name, layout.topology))
        try:
            netem, note = probe_netem(start)
            for argv, lines in batches(layout.commands(netem=netem)):
                run(argv, lines)
            testbed = Testbed(name, layout.topology, layout.hosts, layout.addresses,
                              layout.subnets, netem, note,
                              {"bandwidth": bandwidth, "hosts_per_cluster": hosts_per_cluster},
                              now())
            write_state(name, record(testbed))
        except BaseException:
            down(name)
            raise
    return testbed


def _refuse_existing(name: str) -> None:
    """Refuse to raise ``name`` over anything of that name: it would mix with it."""
    there = status(name)
    if there["phase"] == "down":
        return
    found = f"{len(there['namespaces'])} namespaces {prefix(name)}*"
    if there["up"]:
        what = f"already up ({found}, {there['state'].get('topology_name')})"
    else:
        what = f"half-built ({found}, no complete state file: an up was interrupted)"
    raise TestbedError(f"testbed {name!r} is {what}; take it down first: "
                       f"tomography testbed down --name {name}")


def _identities(namespaces: list[str]) -> set[tuple[int, int]]:
    """Device and inode of each named namespace: how ``ip netns pids`` recognises it."""
    out: set[tuple[int, int]] = set()
    for ns in namespaces:
        try:
            st = os.stat(names.NETNS_DIR / ns)
        except OSError:
            continue
        out.add((st.st_dev, st.st_ino))
    return out


def _pids(wanted: set[tuple[int, int]]) -> list[int]:
    """Processes living in any of the namespaces identified by ``wanted``."""
    out: list[int] = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                st = os.stat(f"/proc/{entry}/ns/net")
            except OSError:
                continue  # gone, or a zombie that has left its namespaces
            if (st.st_dev, st.st_ino) in wanted:
                out.append(int(entry))
    return out


def _kill_inside(wanted: set[tuple[int, int]]) -> None:
    """Kill every process in the namespaces and wait until they have left them."""
    deadline = time.monotonic() + KILL_WAIT
    while pids := _pids(wanted):
        if os.getpid() in pids:
            raise TestbedError("cannot take a testbed down from inside one of its namespaces; "
                               "run down from the root namespace")
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if time.monotonic() > deadline:
            raise TestbedError(f"processes {pids[:10]} in testbed namespaces survived SIGKILL "
                               f"for {KILL_WAIT} s; the namespaces were left in place")
        time.sleep(0.02)


def _take_for_down(name: str, force: bool) -> None:
    """Take ``name``'s claim to remove it; with ``force``, stop the process holding it first."""
    if claims.acquire(name):
        return
    who = claims.holder(name)
    if not force:
        raise TestbedError(f"testbed {name!r} is in use by {claims.describe(who)}; take it "
                           "down when that ends, or now with --force, which stops that "
                           "process first (SIGTERM, as Ctrl-C: a measurement keeps its "
                           "finished iterations and exits with status 130)")
    if who is None or who["pid"] is None:
        raise TestbedError(f"testbed {name!r} is in use by a process this one cannot see; "
                           "stop it, then take the testbed down")
    try:
        os.kill(who["pid"], signal.SIGTERM)
    except ProcessLookupError:
        pass  # ended meanwhile
    deadline = time.monotonic() + STOP_WAIT
    while not claims.acquire(name):
        if time.monotonic() > deadline:
            raise TestbedError(f"{claims.describe(who)} still holds testbed {name!r} "
                               f"{STOP_WAIT:g} s after SIGTERM; stop it (kill {who['pid']}) "
                               "and take the testbed down again")
        time.sleep(0.1)


def down(name: str = "tb", *, all: bool = False, force: bool = False) -> list[str]:
    """Take a testbed down: its processes, namespaces and state file (needs root).

    Works from what is on the system, not from the state file, so it also
    cleans up after a crash or a half-built testbed.  Touches only namespaces
    ``tomo-<name>-*`` (with ``all``, every ``tomo-*``) and the matching state
    files.  A testbed in use (another process holds its claim: a measurement
    runs in it) is left alone unless ``force``.

    Parameters
    ----------
    name : str
        The testbed's name.
    all : bool
        Take down every testbed.
    force : bool
        Also a testbed in use: its user is sent SIGTERM (a measurement stops
        as on Ctrl-C, keeping its finished iterations, and exits with status
        130) and given 30 s to let it go before its namespaces are removed.

    Returns
    -------
    list of str
        The namespaces and state files removed (empty when nothing was up).

    Raises
    ------
    TestbedError
        When a testbed is in use and not ``force``, its user does not let go,
        or a process in it survives SIGKILL.

    Examples
    --------
    As root:

    >>> down("demo")  # doctest: +SKIP
    ['tomo-demo-r-R1', ..., '/run/tomography/testbed-demo.json']
    >>> down("demo")  # nothing left  # doctest: +SKIP
    []
    """
    start = names.PREFIX if all else prefix(name)
    require(("ip",))
    with ExitStack() as held:
        for each in names.present("testbed-*.*") if all else [name]:  # locks too
            _take_for_down(each, force)
            held.callback(claims.release, each)
        namespaces = names.namespaces(start)
        identities = _identities(namespaces)
        _kill_inside(identities)
        if namespaces:
            try:
                run(["ip", "-force", "-batch", "-"], [f"netns del {ns}" for ns in namespaces])
            except TestbedError:
                # one removed meanwhile (the scratch namespace of an up stopped midway) is gone
                if set(names.namespaces(start)) & set(namespaces):
                    raise
            _kill_inside(identities)  # any that entered while the first ones were killed
        # the state file, and the scratch copy of one being written when up was killed
        removed = [str(f) for f in sorted(names.STATE_DIR.glob(
            f"testbed-{'*' if all else name}.json*"))]
        for f in removed:
            os.unlink(f)
    return namespaces + removed
