"""The measurement dataset, format version 1: read, validate, write.

A dataset is a directory (see ``docs/formats.md``)::

    meta.json        {"format": "tomography-measurement/1", "method": ..., ...}
    hosts.csv        host,address,label
    transfers.csv    iteration,receiver,sender,blocks
    iterations.csv   iteration,root,bytes,duration_s,complete
    probes.csv       src,dst,tool,bits_per_second,streams,concurrent,duration_s
                     (probe meshes add start,bytes,retransmits,rtt_ms,repeat,error,
                     alpha_s,beta_s_per_byte)

``transfers.csv`` and ``iterations.csv`` are required for broadcast methods
(``bittorrent``, ``simulated``, ``synthetic``); ``probes.csv`` for probe methods
(``iperf3``, ``netpipe``).  Readers accept extra columns and extra keys in
``meta.json``; a new format version is a new ``format`` string.

Iterations are appended one at a time by :class:`MeasurementWriter`, so that a
run that stops keeps every iteration it finished.

=================  ===================================================================
module             holds
=================  ===================================================================
``schema``         the format string, methods, block size and the columns of each file
``measurement``    :class:`Measurement`, the dataset in memory
``meta``           ``meta.json`` read and checked, or filled in; :func:`software_versions`
``meta_schema``    the types, ranges and sizes of every ``meta.json`` key the toolkit reads
``validation``     file, line and field checks shared by the readers; cut-line detection
``tables``         each file read on its own: hosts, iterations, transfers, probes, trace
``read``           :func:`read_measurement`: the files together, checked against each other
``incremental``    :class:`MeasurementWriter` (one iteration at a time), :func:`refuse_existing`,
                   :func:`csv_writer`
``write``          :func:`write_measurement`: a :class:`Measurement` written out whole
``lock``           one writer per dataset directory (``.lock``), atomic writes, file modes
``multicast``      the multicast dataset (``tomography-multicast/1``): its files read and
                   checked (:mod:`measure.multicast` runs the multicasts and writes them)
=================  ===================================================================

Every public name is importable from ``tomography.model.dataset`` itself.
"""

from __future__ import annotations

from tomography.model.errors import DatasetError  # noqa: F401
from tomography.model.lazy import lazy_attributes

# Names load from their modules on first use: a peer on a remote host reads the block size
# from here without importing pandas (a second of start-up per peer on a busy machine).
_NAMES = {
    "Measurement": "measurement", "software_versions": "meta", "META_LIMIT": "meta",
    "read_measurement": "read", "read_hosts_table": "tables", "read_trace": "tables",
    "write_measurement": "write", "MeasurementWriter": "incremental",
    "csv_writer": "incremental", "refuse_existing": "incremental",
    **{name: "schema" for name in (
        "BLOCK_SIZE", "BROADCAST_METHODS", "FORMAT", "PROBE_METHODS", "PROBES_EXTRA",
        # importable from here as well, as before the package was split (not in __all__)
        "HOSTS_COLUMNS", "ITERATIONS_COLUMNS", "PROBE_NUMBERS", "PROBES_COLUMNS",
        "TRACE_COLUMNS", "TRANSFERS_COLUMNS")},
}

__all__ = [
    "FORMAT",
    "read_hosts_table",
    "refuse_existing",
    "read_trace",
    "BLOCK_SIZE",
    "BROADCAST_METHODS",
    "PROBE_METHODS",
    "PROBES_EXTRA",
    "Measurement",
    "MeasurementWriter",
    "read_measurement",
    "write_measurement",
    "software_versions",
    "csv_writer",
]

__getattr__, __dir__ = lazy_attributes(__name__, _NAMES, globals())
