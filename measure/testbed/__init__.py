"""An emulated testbed: a topology built on one Linux machine from network namespaces.

:func:`up` turns a :class:`~tomography.model.topology.Topology` into namespaces,
veth pairs, bridges, routes and ``tc`` shaping, so that real programs (the
BitTorrent peers of :mod:`measure.peer`) can measure it; :func:`down` removes
it again, also after a crash.  :func:`plan` computes everything without
touching the system, so the layout can be read and tested without root.

Everything is imported from here; the parts, each small enough to read at once:

* :mod:`measure.testbed.names`: testbed names, their namespaces
  (``tomo-NAME-*``) and files, :class:`TestbedError`;
* :func:`scaled` (from :mod:`tomography.model.scaling`): a topology shrunk to fit;
* :mod:`measure.testbed.plan`: :func:`plan`, the namespaces, veths,
  addresses and routes (the layout and the address plan are described there);
* :mod:`measure.testbed.shaping`: the ``tbf`` and ``netem`` commands;
* :mod:`measure.testbed.commands`: running ``ip`` and ``tc`` in batches;
* :mod:`measure.testbed.state`: :class:`Testbed`, the state files, :func:`load`,
  :func:`status`, :func:`raised_testbeds`;
* :mod:`measure.testbed.claims`: :func:`claim`, one user of a testbed at a time;
* :mod:`measure.testbed.resources`: :func:`estimate`, the cores and memory a
  testbed needs, against :func:`machine`;
* :mod:`measure.testbed.lifecycle`: :func:`up` and :func:`down`;
* :mod:`measure.testbed.schedule`: a network that changes under a run,
  :func:`read_schedule` and :class:`Reshaper` (links reshaped at given times).

Examples
--------
>>> from tomography.model.topology import read_topology
>>> p = plan(scaled(read_topology("emulated-4x16-fast"), hosts_per_cluster=2), name="demo")
>>> len(p.namespaces), p.addresses["cb-01"], p.hosts["cb-01"]
(12, '10.201.1.3', 'tomo-demo-cb-01')
>>> estimate(p.topology).peers
8
"""

from __future__ import annotations

from measure.testbed.claims import claim
from measure.testbed.lifecycle import down, up
from measure.testbed.names import STATE_DIR, TestbedError
from measure.testbed.plan import ADDRESS_PLAN, Port, Route, TestbedPlan, Veth, plan
from measure.testbed.resources import Estimate, Machine, estimate, machine
from measure.testbed.schedule import Reshaper, Schedule, read_schedule
from measure.testbed.shaping import Shaper
from measure.testbed.state import Testbed, load, raised_testbeds, status
from tomography.model.scaling import scaled

__all__ = ["TestbedError", "TestbedPlan", "Testbed", "Veth", "Port", "Route", "Shaper",
           "scaled", "plan", "up", "down", "status", "raised_testbeds", "load", "claim",
           "estimate", "machine", "Estimate", "Machine", "ADDRESS_PLAN", "STATE_DIR",
           "Schedule", "read_schedule", "Reshaper"]
