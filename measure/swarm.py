"""What real and simulated swarms share: the BitTorrent settings, who peers with whom, the roots.

The simulator (:mod:`measure.simulator`) and the libtorrent peers
(:mod:`measure.peer`, driven by :mod:`measure.coordinator`) take the same
:class:`SwarmParams`, draw their peer lists with :func:`peer_lists` and rotate
the root with :class:`measure.roots.RootChooser`, so that a simulated and a real run with one
seed differ only in the network they run on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tomography.model.dataset.schema import BLOCK_SIZE
from tomography.model.errors import ParameterError

if TYPE_CHECKING:   # every peer imports SwarmParams: numpy only where it is used
    import numpy as np

__all__ = ["MEASURE_QUOTA", "TRACE_HOSTS", "SwarmParams", "peer_lists", "root_order", "ROOT_CHOICES"]

MEASURE_QUOTA = 128
"""The ``--block-quota`` of ``tomography measure bittorrent`` and of the demo's real
broadcasts: on the testbed (20 and 32 hosts) it reached the verdict of whole 8 MiB
broadcasts at about a third of their cost, stop rule included
(``benchmarks/probes_cost.py``), and simulated at 512 hosts it stopped on the right
clusters where a 5 s time box did not (``benchmarks/broadcast_levers.py``).  Library
calls (:func:`measure.coordinator.run_broadcasts`) broadcast the whole file unless
:class:`measure.swarm.SwarmParams` sets ``block_quota``."""

TRACE_HOSTS = 128
"""Runs of at most this many hosts write ``trace.csv`` unless told not to: a few MB at 32
hosts (a row per block, about 40 bytes), from which ``measure figures`` reads the links the
broadcasts filled instead of testing them.  A larger run traces only when asked."""


ROOT_CHOICES = ("spread", "random")
"""The ways of choosing each broadcast's root (:class:`measure.roots.RootChooser`): spread
by the counts so far (the default), or the seeded rotation alone."""


@dataclass(frozen=True)
class SwarmParams:
    """BitTorrent settings that shape the metric (docs/method.md).

    Defaults follow libtorrent's settings where libtorrent has one
    (``unchoke_slots_limit`` 8, ``unchoke_interval`` 15 s,
    ``optimistic_unchoke_interval`` 30 s, fixed-slots choker, round-robin
    seed choker, 16 KiB blocks, and with ``piece_size=None`` libtorrent's
    automatic piece size: the file size over 2048, rounded up to a power of
    two, at least 16 KiB); the peer list of 35 is the thesis's.  The
    simulator's TCP model has its own parameters (:class:`measure.tcp.TcpModel`).

    With ``tit_for_tat`` a downloading peer unchokes the peers that sent it
    most (libtorrent's fixed-slots choker ranks by download rate).  Without
    it, the simulator unchokes at random; libtorrent has no random choker,
    so real peers then unchoke every interested peer (no choking at all),
    which removes the preference for fast peers the same way.

    A broadcast need not run to its end: the counts settle long before
    (docs/method.md, "What a run costs").  With ``block_quota`` an iteration
    ends once every downloader holds that many blocks (16 KiB) of the file,
    with ``time_box`` after that many seconds, whichever comes first; its
    counts are those of the blocks sent so far, and unlike ``time_limit``,
    which marks a stuck iteration incomplete, it is complete.  The quota
    adapts to the network (a slow one takes longer to deliver it); a time
    box alone, too short for a large or slow network, leaves too few blocks
    per host to tell the clusters apart.

    ``roots`` says where each broadcast starts: ``"spread"`` (default) puts
    each next root where the data so far have seen fewest roots
    (:class:`measure.roots.RootChooser`: the quota's counts favour the
    clusters that held the root), ``"random"`` rotates through a seeded
    permutation of the hosts (:func:`root_order`).
    """

    piece_size: int | None = None
    upload_slots: int = 8
    unchoke_interval: float = 15.0
    optimistic_unchoke_interval: float = 30.0
    tit_for_tat: bool = True
    peer_list: int = 35
    time_limit: float = 3600.0
    time_box: float | None = None
    block_quota: int | None = None
    roots: str = "spread"

    def __post_init__(self) -> None:
        if self.piece_size is not None and (self.piece_size <= 0
                                            or self.piece_size % BLOCK_SIZE):
            raise ParameterError(f"piece_size must be a positive multiple of {BLOCK_SIZE}, "
                                 f"got {self.piece_size}")
        if self.upload_slots < 1 or self.peer_list < 1:
            raise ParameterError(f"upload_slots and peer_list must be >= 1, got "
                                 f"{self.upload_slots} and {self.peer_list}")
        if min(self.unchoke_interval, self.optimistic_unchoke_interval, self.time_limit) <= 0:
            raise ParameterError(f"unchoke_interval, optimistic_unchoke_interval and "
                                 f"time_limit must be > 0, got {self.unchoke_interval}, "
                                 f"{self.optimistic_unchoke_interval} and {self.time_limit}")
        if self.block_quota is not None and (isinstance(self.block_quota, bool)
                                             or not isinstance(self.block_quota, int)
                                             or self.block_quota < 1):
            raise ParameterError(f"block_quota must be a positive number of blocks or None, "
                                 f"got {self.block_quota!r}")
        if self.roots not in ROOT_CHOICES:
            raise ParameterError(f"roots must be one of {', '.join(ROOT_CHOICES)}, got "
                                 f"{self.roots!r}")
        if self.time_box is not None and not 0 < self.time_box < float("inf"):
            raise ParameterError(f"time_box must be a positive number of seconds or None, got "
                                 f"{self.time_box}")

    def piece_bytes(self, file_size: int) -> int:
        """The piece size for a file: ``piece_size``, or libtorrent's automatic choice.

        Examples
        --------
        >>> SwarmParams().piece_bytes(64 * 2**20), SwarmParams().piece_bytes(239 * 10**6)
        (32768, 131072)
        """
        if self.piece_size is not None:
            return self.piece_size
        size = BLOCK_SIZE
        while size < file_size / 2048 and size < 2 * 2**20:
            size *= 2
        return size


def peer_lists(n: int, peer_list: int, rng: np.random.Generator) -> list[np.ndarray]:
    """The peers each of ``n`` peers is given: ``min(peer_list, n - 1)`` others at random.

    This is the list a tracker would hand out, capped; connections are
    two-way, so a peer's neighbours are those it lists and those listing it.

    Examples
    --------
    >>> import numpy as np
    >>> lists = peer_lists(5, 2, np.random.default_rng(0))
    >>> [len(x) for x in lists], any(i in x for i, x in enumerate(lists))
    ([2, 2, 2, 2, 2], False)
    """
    import numpy as np

    k = min(peer_list, n - 1)
    out = []
    for i in range(n):
        pick = rng.choice(n - 1, size=k, replace=False)
        out.append(np.sort(pick + (pick >= i)))
    return out


def root_order(hosts: list[str], seed: int) -> list[str]:
    """The rotation of roots: a seeded permutation of the hosts, repeated.

    Examples
    --------
    >>> root_order(["a", "b", "c"], 1) == root_order(["a", "b", "c"], 1)
    True
    """
    import numpy as np

    perm = np.random.default_rng([seed, 0x5EED]).permutation(len(hosts))
    return [hosts[i] for i in perm]
