"""Preflight: every host checked before the first broadcast, and its clock read.

The check starts the run's peers through the run's own transport, so it
tests exactly the path the measurement takes: the host answers (SSH
reaches it, its MPI rank runs), the toolkit and (for BitTorrent peers)
libtorrent are there in versions that agree with the coordinator's, the chosen address is on the
host and the port is free (the peer listens there).  Each peer's ``hello``
gives its hostname, CPU count and versions; a few ``clock`` exchanges give
its clock offset against the coordinator, NTP-style from the exchange with
the shortest round trip.

:func:`failure_reason` turns a peer that never said hello into one line,
:func:`version_mismatch` compares versions, :func:`format_checks` prints
the table of ``tomography measure ... --check``.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any, Iterable

from measure.agent import host_facts
from tomography.model.errors import TomographyError

__all__ = ["HostCheck", "failure_reason", "version_mismatch", "format_checks",
           "PreflightError"]


class PreflightError(TomographyError):
    """Hosts failed the preflight; the message has one line per host."""


@dataclass
class HostCheck:
    """What the preflight found on one host.

    Attributes
    ----------
    host, address : str
        The host's name in the run and the address it is measured on.
    ok : bool
    reason : str
        Why not, in one line ("" when ok).
    hostname : str
        The machine's own name (several run hosts may share one).
    cpus : int
    toolkit, libtorrent, python : str
        Versions on the host (``libtorrent`` "" for a probe agent, which
        runs without it).
    clock_offset_s : float or None
        Host clock minus coordinator clock, in seconds.
    clock_rtt_s : float or None
        Round trip of the exchange the offset comes from (its uncertainty
        is at most half of it).
    """

    host: str
    address: str
    ok: bool
    reason: str = ""
    hostname: str = ""
    cpus: int = 0
    toolkit: str = ""
    libtorrent: str = ""
    python: str = ""
    clock_offset_s: float | None = None
    clock_rtt_s: float | None = None

    def record(self) -> dict[str, Any]:
        """The entry of ``meta.json``'s ``hosts`` for this host."""
        return {k: v for k, v in asdict(self).items() if k not in ("host", "ok", "reason")}


_NO_MODULE = re.compile(r"No module named '?([\w.]+)'?")


def failure_reason(code: int | None, stderr: Iterable[str], error: str | None = None,
                   transport: str = "local") -> str:
    """One line saying why a peer never said hello.

    Parameters
    ----------
    code : int or None
        The exit status (None: still running, it did not answer in time).
    stderr : iterable of str
        The last lines of its standard error.
    error : str, optional
        The peer's own ``error`` event, when it got that far.
    transport : str
        ``ssh`` reads OpenSSH's exit status 255 as "unreachable".

    Examples
    --------
    >>> failure_reason(1, ["ModuleNotFoundError: No module named 'measure'"])
    'the toolkit is not installed there (python: No module named measure)'
    >>> failure_reason(255, ["ssh: connect to host n1 port 22: Connection refused"], transport="ssh")
    'unreachable over SSH: ssh: connect to host n1 port 22: Connection refused'
    >>> failure_reason(1, [], "address 10.9.9.9 is not on this host")
    'address 10.9.9.9 is not on this host'
    >>> failure_reason(None, [])
    'no answer: the peer did not start listening in time'
    """
    lines = [line.strip() for line in stderr if line.strip()]
    last = lines[-1] if lines else ""
    if error:
        return error
    if transport == "ssh" and code == 255:
        return f"unreachable over SSH: {last or 'ssh exited with status 255'}"
    for line in reversed(lines):
        missing = _NO_MODULE.search(line)
        if missing:
            module = missing.group(1).split(".")[0]
            if module in ("measure", "tomography", "cluster", "visualize"):
                return f"the toolkit is not installed there (python: No module named {module})"
            return f"{module} is not installed there (python: No module named {module})"
    if code == 127 or "command not found" in last or "No such file" in last:
        return f"the peer command was not found: {last or 'exit status 127'}"
    if code is None:
        return "no answer: the peer did not start listening in time"
    return f"the peer exited with status {code}" + (f": {last}" if last else "")


def version_mismatch(hello: dict[str, Any], here: dict[str, Any] | None = None) -> str | None:
    """Why a peer's versions do not fit the coordinator's, or None when they do.

    The toolkit must be the same version (it defines the protocol and the
    counting); libtorrent the same major and minor version (its alerts and
    settings change between minor versions), when ``here`` names one (the
    coordinator of BitTorrent peers; probe agents run without libtorrent).

    Examples
    --------
    >>> version_mismatch({"toolkit": "0.1.0"}, {"toolkit": "0.1.0"}) is None
    True
    >>> here = {"toolkit": "0.1.0", "libtorrent": "2.1.1.0"}
    >>> version_mismatch({"toolkit": "0.1.0", "libtorrent": "2.1.0.0"}, here) is None
    True
    >>> version_mismatch({"toolkit": "0.0.9", "libtorrent": "2.1.1.0"}, here)
    'toolkit 0.0.9 there, 0.1.0 here'
    >>> version_mismatch({"toolkit": "0.1.0", "libtorrent": "2.0.9.0"}, here)
    'libtorrent 2.0.9.0 there, 2.1.1.0 here (major.minor must agree)'
    """
    here = here or host_facts()
    if hello.get("toolkit") != here["toolkit"]:
        return f"toolkit {hello.get('toolkit', 'unknown')} there, {here['toolkit']} here"
    if "libtorrent" not in here:
        return None
    there_lt = str(hello.get("libtorrent", ""))
    if there_lt.split(".")[:2] != str(here["libtorrent"]).split(".")[:2]:
        return (f"libtorrent {there_lt or 'unknown'} there, {here['libtorrent']} here "
                "(major.minor must agree)")
    return None


def format_checks(checks: list[HostCheck]) -> str:
    """The preflight table, one host a line, failures last with their reasons.

    Examples
    --------
    >>> ok = HostCheck("h0", "127.0.0.2", True, hostname="vm", cpus=2, toolkit="0.1.0",
    ...                libtorrent="2.1.1.0", clock_offset_s=0.0004, clock_rtt_s=0.0002)
    >>> bad = HostCheck("h1", "10.9.9.9", False, "address 10.9.9.9 is not on this host")
    >>> print(format_checks([ok, bad]))  # doctest: +NORMALIZE_WHITESPACE
    host  address    hostname  cpus  toolkit  libtorrent  clock offset    status
    h0    127.0.0.2  vm        2     0.1.0    2.1.1.0     +0.4 ms ±0.1    ok
    h1    10.9.9.9   -         -     -        -           -               FAILED: address 10.9.9.9 is not on this host
    1 of 2 hosts ready
    """
    header = ["host", "address", "hostname", "cpus", "toolkit", "libtorrent", "clock offset",
              "status"]
    rows = []
    for c in sorted(checks, key=lambda c: (not c.ok, c.host)):
        offset = (f"{c.clock_offset_s * 1e3:+.1f} ms ±{c.clock_rtt_s * 5e2:.1f}"
                  if c.clock_offset_s is not None and c.clock_rtt_s is not None else "-")
        rows.append([c.host, c.address, c.hostname or "-", str(c.cpus) if c.cpus else "-",
                     c.toolkit or "-", c.libtorrent or "-", offset,
                     "ok" if c.ok else f"FAILED: {c.reason}"])
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header) - 1)]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r[:-1], widths)) + "  " + r[-1]
             for r in [header, *rows]]
    ready = sum(c.ok for c in checks)
    lines.append(f"{ready} of {len(checks)} hosts ready")
    return "\n".join(line.rstrip() for line in lines)
