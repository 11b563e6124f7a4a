"""Which host of a hierarchy each MPI rank runs on.

The hierarchy names hosts as the measurement did; an MPI job knows its
ranks by processor name and address.  :func:`place` matches them, the same
way on every rank (it reads the facts of all ranks, gathered once), so all
ranks agree on the answer or on the error.  Rules, first that applies:

1. the rank says which host it is: ``host=`` or the environment variable
   ``TOMOGRAPHY_HOST`` (what a launcher line can set per rank);
2. one of the rank's addresses (loopback left out) is the address the
   dataset records for a host;
3. the rank's processor name or host name (with or without its domain) is
   a host;
4. the hosts ``NODE-1``, ``NODE-2``, ... that ``measure --mpi`` names for
   ranks sharing node ``NODE``: as many ranks on ``NODE`` as such hosts take
   them in rank order.
"""

from __future__ import annotations

import ipaddress
import os
import re
import socket
from typing import Any, Mapping, Sequence

from tomography.model.errors import TomographyError
from tomography.model.units import listed

__all__ = ["ENVIRONMENT", "rank_facts", "place"]

ENVIRONMENT = "TOMOGRAPHY_HOST"
"""The environment variable that tells a rank which host of the hierarchy it is."""


def rank_facts(host: str | None = None) -> dict[str, Any]:
    """What this process knows about where it runs, for :func:`place`.

    Parameters
    ----------
    host : str, optional
        The host this rank is, if the caller knows; else ``TOMOGRAPHY_HOST``.

    Returns
    -------
    dict
        ``host`` (or None), ``processor`` (MPI's processor name, when MPI is
        loaded), ``hostname`` and ``addresses`` (IPv4, loopback left out).
    """
    from measure.mpi import local_addresses

    processor = None
    try:
        from mpi4py import MPI

        processor = MPI.Get_processor_name()
    except ImportError:  # pragma: no cover - the callers run under MPI
        pass
    addresses = sorted({a for addrs in local_addresses().values() for a in addrs
                        if not ipaddress.ip_address(a).is_loopback})
    return {"host": host or os.environ.get(ENVIRONMENT) or None, "processor": processor,
            "hostname": socket.gethostname(), "addresses": addresses}


def place(facts: Sequence[Mapping[str, Any]], hosts: Sequence[str], *,
          addresses: Mapping[str, str] | None = None) -> list[str]:
    """The host of every rank, by the rules of this module.

    Parameters
    ----------
    facts : sequence of dict
        :func:`rank_facts` of each rank, rank 0 first.
    hosts : sequence of str
        The hosts of the hierarchy.
    addresses : mapping of str to str, optional
        Host -> its address (a dataset's ``hosts.csv``).

    Returns
    -------
    list of str
        The host of each rank.

    Raises
    ------
    TomographyError
        Naming the ranks that match no host, or more than one.

    Examples
    --------
    >>> facts = [{"host": None, "processor": "n1", "hostname": "n1", "addresses": []}] * 2
    >>> place(facts, ["n1-1", "n1-2", "n2"])
    ['n1-1', 'n1-2']
    >>> place([{"host": None, "processor": "vm", "hostname": "vm",
    ...         "addresses": ["10.0.0.7"]}], ["a", "b"], addresses={"a": "10.0.0.5",
    ...                                                           "b": "10.0.0.7"})
    ['b']
    >>> place(facts, ["a", "b"])
    Traceback (most recent call last):
    ...
    tomography.model.errors.TomographyError: ranks 0, 1 (on n1) match no host of the hierarchy (a, b): \
set TOMOGRAPHY_HOST for each rank, or pass host=
    """
    known = set(hosts)
    by_address = {a: h for h, a in (addresses or {}).items() if a}
    out: list[str | None] = []
    for rank, fact in enumerate(facts):
        given = fact.get("host")
        if given:
            if given not in known:
                raise TomographyError(f"rank {rank} says it is host {given!r} "
                                      f"({ENVIRONMENT} or host=), which the hierarchy does not "
                                      f"have ({listed(hosts)})")
            out.append(given)
            continue
        matched = sorted({by_address[a] for a in fact.get("addresses", ()) if a in by_address})
        if len(matched) == 1:
            out.append(matched[0])
            continue
        names = [fact.get("processor"), fact.get("hostname")]
        names += [n.split(".")[0] for n in names if n]
        out.append(next((n for n in names if n and n in known), None))
    unresolved: dict[str, list[int]] = {}
    for rank, host in enumerate(out):
        if host is None:
            node = facts[rank].get("processor") or facts[rank].get("hostname") or "?"
            unresolved.setdefault(node, []).append(rank)
    for node, ranks in unresolved.items():
        pattern = re.compile(re.escape(node.split(".")[0]) + r"-(\d+)$")
        numbered = sorted((int(m.group(1)), h) for h in hosts if (m := pattern.match(h)))
        taken = set(out)
        numbered = [(k, h) for k, h in numbered if h not in taken]
        if len(numbered) != len(ranks):
            ranks_text = ", ".join(map(str, ranks))
            raise TomographyError(f"rank{'s' if len(ranks) > 1 else ''} {ranks_text} (on "
                                  f"{node}) match no host of the hierarchy ({listed(hosts)}): "
                                  f"set {ENVIRONMENT} for each rank, or pass host=")
        for rank, (_, host) in zip(ranks, numbered):
            out[rank] = host
    return [h for h in out if h is not None]

