"""iperf3 3.x ``-J`` reports written to iperf3's schema, for the import's tests."""

from __future__ import annotations

import json
from pathlib import Path


def report(local: str, remote: str, rate: float, *, reverse: bool = False, udp: bool = False,
            streams: int = 1, server: bool = False) -> dict:
    """An iperf3 3.x ``-J`` report of a 10 s test, the client's (or the server's) side."""
    start = {"connected": [{"socket": 5 + i, "local_host": local, "local_port": 40000 + i,
                            "remote_host": remote, "remote_port": 5201}
                           for i in range(streams)],
             "version": "iperf 3.16", "system_info": f"Linux {local} 6.1.0 #1 SMP x86_64",
             "timestamp": {"time": "Mon, 23 Nov 2026 10:00:00 GMT", "timesecs": 1795428000},
             "test_start": {"protocol": "UDP" if udp else "TCP", "num_streams": streams,
                            "blksize": 131072, "omit": 0, "duration": 10, "bytes": 0,
                            "blocks": 0, "reverse": int(reverse), "tos": 0,
                            "target_bitrate": 50_000_000 if udp else 0}}
    if server:
        start["accepted_connection"] = {"host": remote, "port": 40000}
    else:
        start["connecting_to"] = {"host": remote, "port": 5201}
    moved = rate * 10 / 8
    if udp:
        end = {"streams": [{"udp": {"socket": 5, "start": 0, "end": 10, "seconds": 10,
                                    "bytes": moved, "bits_per_second": rate, "jitter_ms": 0.02,
                                    "lost_packets": 3, "packets": 4300, "lost_percent": 0.07}}],
               "sum": {"start": 0, "end": 10, "seconds": 10, "bytes": moved,
                       "bits_per_second": rate, "jitter_ms": 0.02, "lost_packets": 3,
                       "packets": 4300, "lost_percent": 0.07}}
    else:
        end = {"streams": [{"sender": {"socket": 5 + i, "bytes": moved / streams,
                                       "bits_per_second": rate / streams, "retransmits": 2,
                                       "max_rtt": 900, "min_rtt": 300,
                                       "mean_rtt": 400 + 100 * i},
                            "receiver": {"socket": 5 + i, "bytes": moved / streams * 0.99,
                                         "bits_per_second": rate / streams * 0.99}}
                           for i in range(streams)],
               "sum_sent": {"start": 0, "end": 10.0, "seconds": 10.0, "bytes": moved,
                            "bits_per_second": rate, "retransmits": 2 * streams},
               "sum_received": {"start": 0, "end": 10.04, "seconds": 10.04,
                                "bytes": moved * 0.99, "bits_per_second": rate * 0.99}}
    return {"start": start, "intervals": [], "end": end}


def write(directory: Path, name: str, doc: dict) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / name).write_text(json.dumps(doc, indent=4))
    return directory / name
