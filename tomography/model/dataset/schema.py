"""The format of a dataset: its version string, methods, block size and the columns of its files."""

from __future__ import annotations

__all__ = ["FORMAT", "BLOCK_SIZE", "BROADCAST_METHODS", "PROBE_METHODS", "HOSTS_COLUMNS",
           "TRANSFERS_COLUMNS", "ITERATIONS_COLUMNS", "PROBES_COLUMNS", "PROBES_EXTRA",
           "PROBE_NUMBERS", "PROBE_PROTOCOLS", "TRACE_COLUMNS", "FILE_LIMITS", "MAX_HOSTS",
           "MAX_BLOCKS", "MAX_TOTAL_BLOCKS", "MAX_FILE_BYTES", "MAX_BLOCK_SIZE", "MAX_DEPTH"]

FORMAT = "tomography-measurement/1"
"""The ``format`` string of ``meta.json`` :mod:`tomography.model.dataset` reads and writes."""

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

# Limits no real dataset reaches, checked before the work starts (a larger value is a
# corrupt or hostile file, refused in one line naming the file and the field).
FILE_LIMITS = {"meta.json": 16 * 2**20, "hosts.csv": 64 * 2**20, "iterations.csv": 64 * 2**20,
               "transfers.csv": 4 * 2**30, "probes.csv": 4 * 2**30, "trace.csv": 16 * 2**30}
"""The largest size of each file of a dataset (bytes), checked with ``stat`` before reading."""
MAX_HOSTS = 2**18
"""The most hosts a dataset (or the topology model of its ``meta.json``) may have: 262,144."""
MAX_BLOCKS = 2**40
"""The largest block count of one ``transfers.csv`` row (16 PiB of 16 KiB blocks)."""
MAX_TOTAL_BLOCKS = 2**62
"""The largest sum of a dataset's block counts: every sum of them fits a 64-bit integer."""
MAX_FILE_BYTES = 2**50
"""The largest ``bytes`` of one broadcast in ``iterations.csv`` (1 PiB)."""
MAX_BLOCK_SIZE = 2**30
"""The largest ``block_size`` of ``meta.json`` (1 GiB; BitTorrent's is 16 KiB)."""
MAX_DEPTH = 64
"""The deepest nesting of arrays and objects read in ``meta.json``."""
