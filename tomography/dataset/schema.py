"""The format of a dataset: its version string, methods, block size and the columns of its files."""

from __future__ import annotations

__all__ = ["FORMAT", "BLOCK_SIZE", "BROADCAST_METHODS", "PROBE_METHODS", "HOSTS_COLUMNS",
           "TRANSFERS_COLUMNS", "ITERATIONS_COLUMNS", "PROBES_COLUMNS", "PROBES_EXTRA",
           "PROBE_NUMBERS", "PROBE_PROTOCOLS", "TRACE_COLUMNS"]

FORMAT = "tomography-measurement/1"
"""The ``format`` string of ``meta.json`` :mod:`tomography.dataset` reads and writes."""

BLOCK_SIZE = 16384
"""Bytes in one BitTorrent block (16 KiB), the unit of ``transfers.csv``."""

BROADCAST_METHODS = frozenset({"bittorrent", "simulated", "synthetic"})
PROBE_METHODS = frozenset({"iperf3", "netpipe"})

HOSTS_COLUMNS = ("host", "address", "label")
TRANSFERS_COLUMNS = ("iteration", "receiver", "sender", "blocks")
ITERATIONS_COLUMNS = ("iteration", "root", "bytes", "duration_s", "complete")
PROBES_COLUMNS = ("src", "dst", "tool", "bits_per_second", "streams", "concurrent", "duration_s")
# what the probe meshes write (measure.mesh): the format's columns, then these
PROBES_EXTRA = ("start", "bytes", "retransmits", "rtt_ms", "repeat", "error", "alpha_s",
                "beta_s_per_byte", "protocol")
PROBE_PROTOCOLS = ("tcp", "udp")
"""``protocol`` of a probe: TCP (the default, and what a file without the column holds) or
UDP (imported tests, kept out of the TCP weights)."""
PROBE_NUMBERS = ("start", "bytes", "retransmits", "rtt_ms", "alpha_s", "beta_s_per_byte")
TRACE_COLUMNS = ("iteration", "time_s", "sender", "receiver", "piece", "block")
