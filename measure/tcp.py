"""What TCP and libtorrent do to a connection's rate as its round-trip time grows.

The flow-level simulator (:mod:`measure.simulator`) shares each resource
among the flows crossing it (:func:`measure.flows.max_min_rates`).  A flow
of a real broadcast is a TCP connection carrying libtorrent's block
requests, and on a long path it gets less than that share, through five
mechanisms, each a field of :class:`TcpModel` that can be switched off:

* **Slow start** (``slow_start``, ``initial_window``).  A new connection
  sends ``initial_window`` bytes in its first round trip and doubles its
  window every round trip until the path limits it (Linux: an initial
  window of 10 segments, RFC 6928).  Bytes sent by time ``t``:
  ``IW * (2**(t / RTT) - 1)`` (:func:`slow_start_bytes`).
* **Restart after idle** (``restart_after_idle``, ``rto_min``).  A
  connection idle for longer than its retransmission timeout halves its
  window once per timeout elapsed, down to the initial window, and slow
  starts again (Linux's ``net.ipv4.tcp_slow_start_after_idle = 1``, the
  default; RFC 2861).  A BitTorrent connection is idle while it is choked.
  The timeout is ``RTT + rto_min`` (Linux: smoothed RTT plus a variance
  term of at least ``TCP_RTO_MIN``, 200 ms; :func:`restart_window`).
* **Sharing in proportion to 1/RTT** (``rtt_fair``, ``queue_delay``).
  TCP flows in congestion avoidance through one bottleneck get throughput
  inversely proportional to their round-trip times (their windows grow by
  one segment per round trip alike): the weights of the max-min sharing.
  ``queue_delay`` adds a standing queue to every round trip: a FIFO that
  loss-based TCP keeps filled, such as the testbed's shaped queues (100 ms
  long), makes a flow across a LAN and one across a WAN share more evenly
  than their paths' round trips say.  Off by default (0 s): with it, sites
  that real grids set apart by their round trips alone look alike
  (``benchmarks/RESULTS.md``).
* **Receive window** (``receive_window``).  At most one receive window in
  flight: a rate of at most ``receive_window / RTT``.  Linux autotunes the
  receive buffer up to ``net.ipv4.tcp_rmem``'s maximum, 6 MiB, and
  advertises half of it as window (``tcp_adv_win_scale = 1``): 3 MiB.
* **Request pipeline** (``request_pipeline``, ``request_queue_time``,
  ``min_requests``, ``max_requests``).  A libtorrent downloader keeps
  ``request_queue_time * download_rate / 16 KiB`` block requests
  outstanding on a connection, at least ``min_requests`` (2) and at most
  ``max_requests`` (``max_out_request_queue``, 500): at most that many
  blocks per round trip, so a connection that has not yet measured a rate
  starts at 2 blocks per round trip (:func:`pipeline_rate`).
* **Random loss** (``loss``, off by default).  With a packet loss rate
  ``p`` on a path, TCP Reno's throughput is at most
  ``MSS / RTT * sqrt(3 / 2) / sqrt(p)`` (Mathis et al., 1997;
  :func:`mathis_rate`).

:class:`Connections` keeps the state of every connection of a broadcast
and gives each flow its cap and weight for the next step.  The model stays
a fluid one: within a step a slow-starting flow's window grows smoothly,
and a flow limited by a shared resource is taken to have left slow start
(the loss that ends slow start there) and to follow its share from then on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tomography.model.dataset import BLOCK_SIZE
from tomography.model.errors import ParameterError

__all__ = ["TcpModel", "Connections", "slow_start_bytes", "restart_window", "pipeline_rate",
           "mathis_rate", "MSS"]

MSS = 1448
"""Bytes of payload per TCP segment on Ethernet with timestamps (1500 - 52)."""


@dataclass(frozen=True)
class TcpModel:
    """The TCP and libtorrent mechanisms of the simulator's connections.

    Every default is the Linux kernel's or libtorrent's own (see
    :mod:`measure.tcp`); :meth:`off` switches every mechanism off (the
    plain max-min sharing of capacities).

    Examples
    --------
    >>> TcpModel().initial_window, TcpModel().receive_window
    (14480, 3145728)
    >>> TcpModel.off().slow_start
    False
    """

    slow_start: bool = True
    initial_window: int = 10 * MSS
    restart_after_idle: bool = True
    rto_min: float = 0.2
    rtt_fair: bool = True
    queue_delay: float = 0.0
    receive_window: int | None = 3 * 2**20
    request_pipeline: bool = True
    request_queue_time: float = 3.0
    min_requests: int = 2
    max_requests: int = 500
    loss: float = 0.0

    def __post_init__(self) -> None:
        if self.initial_window < 1:
            raise ParameterError(f"initial_window must be >= 1 byte, got {self.initial_window}")
        if self.queue_delay < 0:
            raise ParameterError(f"queue_delay must be >= 0 s, got {self.queue_delay}")
        if self.rto_min < 0 or self.request_queue_time <= 0:
            raise ParameterError(f"rto_min must be >= 0 and request_queue_time > 0, got "
                                 f"{self.rto_min} and {self.request_queue_time}")
        if self.receive_window is not None and self.receive_window < 1:
            raise ParameterError(f"receive_window must be >= 1 byte or None, got "
                                 f"{self.receive_window}")
        if not 1 <= self.min_requests <= self.max_requests:
            raise ParameterError(f"requests: need 1 <= min_requests <= max_requests, got "
                                 f"{self.min_requests} and {self.max_requests}")
        if not 0 <= self.loss < 1:
            raise ParameterError(f"loss must be in [0, 1), got {self.loss}")

    @classmethod
    def off(cls) -> "TcpModel":
        """Every mechanism off: rates are the max-min shares of the capacities."""
        return cls(slow_start=False, restart_after_idle=False, rtt_fair=False,
                   receive_window=None, request_pipeline=False, loss=0.0)


def slow_start_bytes(window: np.ndarray | float, rtt: np.ndarray | float,
                     seconds: np.ndarray | float) -> np.ndarray | float:
    """Bytes a slow-starting connection sends in ``seconds``, from ``window`` bytes.

    The window doubles every round trip, and a round trip carries the
    window: ``window * (2**(t / rtt) - 1)`` bytes by time ``t``, the
    discrete count ``window * (1 + 2 + ... + 2**(k - 1))`` at whole round
    trips, smoothly in between (a rate of ``ln 2 * window / rtt`` at the
    start).

    Examples
    --------
    >>> round(slow_start_bytes(14480, 0.04, 0.04))    # one round trip: one window
    14480
    >>> round(slow_start_bytes(14480, 0.04, 0.4) / 14480)   # ten: 2**10 - 1 windows
    1023
    """
    return np.asarray(window) * np.expm1(np.asarray(seconds) / rtt * math.log(2))


def restart_window(window: np.ndarray, idle: np.ndarray, rto: np.ndarray,
                   initial: int) -> np.ndarray:
    """The window after an idle period (Linux ``tcp_cwnd_restart``).

    Halved once per retransmission timeout elapsed, never below the
    initial window (nor above the window it had).

    Examples
    --------
    >>> restart_window(np.array([800e3, 800e3, 800e3]), np.array([0.1, 0.5, 60.0]),
    ...                np.array([0.24, 0.24, 0.24]), 14480).tolist()
    [800000.0, 200000.0, 14480.0]
    """
    halvings = np.floor(np.asarray(idle) / np.asarray(rto))
    shrunk = np.asarray(window) / np.exp2(np.minimum(halvings, 60))
    return np.where(halvings >= 1, np.maximum(shrunk, np.minimum(initial, window)), window)


def pipeline_rate(download_rate: np.ndarray, rtt: np.ndarray, model: TcpModel) -> np.ndarray:
    """The most libtorrent's outstanding block requests can carry, in bytes per second.

    Examples
    --------
    >>> m = TcpModel()
    >>> pipeline_rate(np.array([0.0, 1e6]), np.array([0.04, 0.04]), m).tolist()
    [819200.0, 74956800.0]
    """
    queue = np.clip(np.floor(model.request_queue_time * np.asarray(download_rate) / BLOCK_SIZE),
                    model.min_requests, model.max_requests)
    return queue * BLOCK_SIZE / rtt


def mathis_rate(rtt: np.ndarray | float, loss: float) -> np.ndarray | float:
    """TCP throughput under random loss (Mathis et al. 1997), bytes per second.

    Examples
    --------
    >>> round(float(mathis_rate(0.04, 1e-4)) * 8 / 1e6, 1)   # Mbit/s at 40 ms, 0.01 % loss
    35.5
    """
    return MSS / np.asarray(rtt) * math.sqrt(1.5) / math.sqrt(loss)


class Connections:
    """The TCP state of every connection (uploader-downloader pair) of one broadcast.

    Parameters
    ----------
    model : TcpModel
    rtt : ndarray of float
        Round-trip time of each connection, seconds.

    Examples
    --------
    One connection at 40 ms, alone on a 1 Gbit/s path, in its first 0.28 s
    (seven round trips), in steps of 10 ms; in initial windows sent:

    >>> def first_round_trips(model):
    ...     c, sent, t = Connections(model, np.array([0.04])), 0.0, 0.0
    ...     for _ in range(28):
    ...         rate = min(c.caps(np.array([0]), t)[0], 125e6)
    ...         sent += c.advance(np.array([0]), np.array([rate]), 0.01, t)[0]
    ...         t += 0.01
    ...     return round(sent / 14480)
    >>> first_round_trips(TcpModel(request_pipeline=False))   # slow start: 2**7 - 1
    127
    >>> first_round_trips(TcpModel())   # the request pipeline opens as fast here
    127
    >>> first_round_trips(TcpModel.off()) == round(125e6 * 0.28 / 14480)
    True
    """

    def __init__(self, model: TcpModel, rtt: np.ndarray) -> None:
        self.model = model
        self.rtt = np.asarray(rtt, dtype=float)
        n = self.rtt.size
        self.window = np.full(n, float(model.initial_window))
        self.starting = np.full(n, model.slow_start)       # in slow start
        self.idle_since = np.full(n, np.nan)               # when it last sent (nan: never)
        self.download_rate = np.zeros(n)                   # libtorrent's rate estimate
        self._limit = np.full(n, np.inf)                   # the caps of the last call
        self._window_cap = np.zeros(n, dtype=bool)
        self._other = np.full(n, np.inf)

    @property
    def weights(self) -> np.ndarray:
        """Share weight of every connection: ``1 / (RTT + queue_delay)``, or 1 without
        ``rtt_fair``."""
        if not self.model.rtt_fair:
            return np.ones_like(self.rtt)
        return 1.0 / (self.rtt + self.model.queue_delay)

    def caps(self, pairs: np.ndarray, now: float) -> np.ndarray:
        """Rate caps (bytes per second) of the connections about to send.

        Connections idle since before ``now`` restart (``restart_after_idle``).
        """
        m = self.model
        rtt = self.rtt[pairs]
        idle = now - self.idle_since[pairs]
        waking = np.flatnonzero(idle > 0)           # nan (never sent) compares false
        if waking.size and m.request_pipeline:      # the rate estimate decayed meanwhile
            self.download_rate[pairs[waking]] *= np.exp(-idle[waking])
        if waking.size and m.slow_start and m.restart_after_idle:
            p = pairs[waking]
            old = self.window[p]
            new = restart_window(old, idle[waking], rtt[waking] + m.rto_min, m.initial_window)
            self.window[p] = new
            self.starting[p[new < old]] = True
        cap = np.full(pairs.size, np.inf)
        if m.receive_window is not None:
            cap = np.minimum(cap, m.receive_window / rtt)
        if m.request_pipeline:
            cap = np.minimum(cap, pipeline_rate(self.download_rate[pairs], rtt, m))
        if m.loss > 0:
            cap = np.minimum(cap, mathis_rate(rtt, m.loss))
        self._other[pairs] = cap
        window_cap = np.where(self.starting[pairs], math.log(2) * self.window[pairs] / rtt,
                              np.inf)
        self._window_cap[pairs] = window_cap < cap
        cap = np.minimum(cap, window_cap)
        self._limit[pairs] = cap
        return cap

    def other_caps(self, pairs: np.ndarray) -> np.ndarray:
        """The caps of the last :meth:`caps` call without the slow-start windows."""
        return self._other[pairs]

    def held(self, pairs: np.ndarray, rates: np.ndarray) -> np.ndarray:
        """Which connections the slow-start window holds at these rates."""
        return self.starting[pairs] & self._window_cap[pairs] & (rates >= self._limit[pairs]
                                                                 * (1 - 1e-9))

    def advance(self, pairs: np.ndarray, rates: np.ndarray, seconds: float, now: float,
                ceiling: np.ndarray | None = None) -> np.ndarray:
        """Bytes each connection sends in a step of ``seconds`` at its allocated rate.

        A connection held by its slow-start window sends what the growing
        window carries (:func:`slow_start_bytes`) until it reaches its
        ``ceiling`` (the rate it would get without that window: the share
        computed with :meth:`other_caps`; none by default), then the
        ceiling, and slow start is over.  One held below its cap by a
        shared resource leaves slow start too.  The windows, rate estimates
        and idle clocks are updated.
        """
        rtt = self.rtt[pairs]
        sent = rates * seconds
        held = self.held(pairs, rates)
        if held.any():
            p, r = pairs[held], rtt[held]
            top = np.full(p.size, np.inf) if ceiling is None else ceiling[held]
            start = math.log(2) * self.window[p] / r
            # when the growing window reaches the ceiling (inf: not in this step)
            reach = np.where(top > start, r * np.log2(np.maximum(top, start) / start), 0.0)
            ramp = np.minimum(reach, seconds)
            sent[held] = slow_start_bytes(self.window[p], r, ramp) + np.where(
                reach < seconds, top * (seconds - reach), 0.0)
            self.window[p] *= np.exp2(ramp / r)
            self.starting[p[reach < seconds]] = False
        shared = self.starting[pairs] & ~held & (rates < self._limit[pairs] * (1 - 1e-9))
        if shared.any():   # the path, not the window, limits it: slow start is over
            self.starting[pairs[shared]] = False
        settled = ~self.starting[pairs]
        self.window[pairs[settled]] = np.maximum(
            np.where(held[settled], self.window[pairs[settled]], 0.0),
            np.maximum(sent[settled] / max(seconds, 1e-12) * rtt[settled],
                       self.model.initial_window))
        if self.model.receive_window is not None:
            np.minimum(self.window, self.model.receive_window, out=self.window)
        # libtorrent's rate estimate: a moving average over about one second
        keep = math.exp(-seconds)
        self.download_rate[pairs] = (keep * self.download_rate[pairs]
                                     + (1 - keep) * sent / max(seconds, 1e-12))
        self.idle_since[pairs] = now + seconds
        return sent
