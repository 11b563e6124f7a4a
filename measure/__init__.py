"""Phase 1, measurement: BitTorrent swarms, the emulated testbed and the simulator.

* :mod:`measure.agent`: the process on each host (``python -m measure.agent --role
  ROLE``), its JSON-lines protocol and host facts; it imports only its role's module;
* :mod:`measure.peer`: the ``bittorrent`` role, one instrumented libtorrent peer,
  closed to the run;
* :mod:`measure.coordinator`: broadcasts with a rotating root, written as they end;
  :class:`~measure.coordinator.AgentGroup`, a run's agents;
* :mod:`measure.transport`: how the coordinator reaches its agents (processes);
* :mod:`measure.mpi`: peers beside the ranks of an MPI job, rank 0 coordinating;
* :mod:`measure.ssh`: peers on remote machines started over SSH;
* :mod:`measure.preflight`: every host checked (versions, address, clock) before a run;
* :mod:`measure.mesh`: iperf3 and NetPIPE meshes, and the concurrency test, on any launcher;
* :mod:`measure.multicast`: planned trees, chains and BitTorrent executed as multicasts
  (their datasets are read by :mod:`tomography.model.dataset.multicast`);
* :mod:`measure.prober`: the ``probe`` role (iperf3, NetPIPE; no libtorrent);
  :mod:`measure.probetools`: the tools' command lines and outputs, Hockney's fit;
* :mod:`measure.concurrency`: choosing and judging the shared-bottleneck tests;
* :mod:`measure.testbed`: a topology emulated in network namespaces with ``tc``;
* :mod:`measure.swarm`: the BitTorrent settings real and simulated swarms share;
* :mod:`measure.simulator`: the flow-level model for networks too big to emulate.
"""
