"""Shaping: the ``tc`` commands that give each device its capacity and latency.

Egress only, each capacity on the device that sends into it: a host's upload
on its ``eth0`` (``nic_up``), its download on the router's bridge port
(``nic_down``), each router link on the port at each end (the capacity of
the direction that end sends into, which may differ from the other's).  See :func:`tbf` for the queue settings.  One-way
latency (the host's on both directions of its NIC, each link's on both
directions) is added with ``netem`` when the kernel has it (:func:`probe_netem`);
when it has not, only bandwidth is shaped and the testbed says so
(``latency_applied``, ``latency_note``).
"""

from __future__ import annotations

import math
import subprocess
from dataclasses import dataclass

from measure.testbed.commands import run

__all__ = ["Shaper", "shape", "tbf", "netem", "probe_netem"]

FRAME = 1514            # bytes of a full Ethernet frame on a veth (MTU 1500)
BURST_TIME = 1e-3       # s of tokens in a tbf bucket
BURST_FRAMES = 10       # and at least this many full frames
QUEUE_TIME = 0.1        # s of traffic a shaped queue holds before dropping
NETEM_MIN_LIMIT = 1000  # packets netem may hold (its default)


@dataclass(frozen=True)
class Shaper:
    """Egress shaping of one device: ``rate`` in bit/s, one-way ``delay`` in seconds."""

    namespace: str
    device: str
    rate: float
    delay: float


def shape(s: Shaper, netem_ok: bool) -> list[list[str]]:
    """The ``tc`` commands shaping one device: tbf alone, or netem with tbf below it.

    Parameters
    ----------
    s : Shaper
        The device and its rate and delay.
    netem_ok : bool
        Whether the kernel has ``netem``; without it the delay is left out.

    Examples
    --------
    >>> for argv in shape(Shaper("ns", "eth0", 1e7, 0.001), netem_ok=True):
    ...     print(" ".join(argv))
    tc -n ns qdisc add dev eth0 root handle 1: netem delay 1000us limit 1000
    tc -n ns qdisc add dev eth0 parent 1:1 handle 10: tbf rate 10000000bit burst 15140 limit 125000
    """
    tc = ["tc", "-n", s.namespace, "qdisc", "add", "dev", s.device]
    if not (netem_ok and s.delay > 0):
        return [[*tc, "root", *tbf(s.rate)]]
    return [[*tc, "root", "handle", "1:", *netem(s.rate, s.delay)],
            [*tc, "parent", "1:1", "handle", "10:", *tbf(s.rate)]]


def tbf(rate: float) -> list[str]:
    """A token bucket at ``rate`` bit/s.

    tbf rather than htb: each device has exactly one rate to enforce and no
    classes to share it among, and tbf takes netem's place as a child when a
    delay is added.  Its timers are high-resolution, so the bucket need not
    hold a jiffy of traffic: 1 ms of tokens (at least 10 full frames, so that
    slow links still pass full frames and segmented GSO packets without a
    wake-up per packet).  The queue holds about 100 ms of traffic, a
    bandwidth-delay product for the RTTs of the scenarios, then drops.

    Examples
    --------
    >>> tbf(1e9)
    ['tbf', 'rate', '1000000000bit', 'burst', '125000', 'limit', '12500000']
    """
    bytes_per_s = rate / 8
    burst = max(int(bytes_per_s * BURST_TIME), BURST_FRAMES * FRAME)
    limit = max(int(bytes_per_s * QUEUE_TIME), 2 * burst)
    return ["tbf", "rate", f"{round(rate)}bit", "burst", str(burst), "limit", str(limit)]


def netem(rate: float, delay: float) -> list[str]:
    """A fixed delay, holding the packets in flight over it and the shaped queue behind it.

    Examples
    --------
    >>> netem(1e9, 0.005)
    ['netem', 'delay', '5000us', 'limit', '17340']
    """
    frames = math.ceil(rate / 8 * (delay + QUEUE_TIME) / FRAME)
    return ["netem", "delay", f"{round(delay * 1e6)}us", "limit",
            str(max(NETEM_MIN_LIMIT, 2 * frames))]


def probe_netem(prefix: str) -> tuple[bool, str]:
    """Whether the kernel has netem, tried on a scratch namespace, and a note for people.

    Needs root; the scratch namespace ``<prefix>netem-probe`` is removed again.

    Examples
    --------
    >>> probe_netem("tomo-demo-")  # doctest: +SKIP
    (False, 'latency not emulated, only bandwidth: this kernel has no netem qdisc ...')
    """
    scratch = prefix + "netem-probe"
    run(["ip", "netns", "add", scratch])
    try:
        done = subprocess.run(["tc", "-n", scratch, "qdisc", "add", "dev", "lo", "root",
                               "netem", "delay", "1ms"], capture_output=True, text=True)
    finally:
        run(["ip", "netns", "del", scratch])
    if done.returncode == 0:
        return True, "one-way latencies applied with netem on every shaped device"
    return False, ("latency not emulated, only bandwidth: this kernel has no netem qdisc "
                   f"(tc said: {done.stderr.strip() or done.returncode}); load sch_netem "
                   "(`modprobe sch_netem`) or use a kernel with CONFIG_NET_SCH_NETEM")
