"""Who uploads to whom in a simulated swarm: libtorrent's fixed-slots choker, step by step.

A peer uploads to at most ``upload_slots`` interested neighbours plus one
optimistic unchoke.  What libtorrent does, and this module with it
(``src/choker.cpp``, ``src/session_impl.cpp``, ``src/peer_connection.cpp``):

* **Preemptive unchoke.**  A free slot goes at once to an interested
  neighbour (here a random one).
* **Choke rounds.**  A peer re-chooses its slots every ``unchoke_interval``,
  and at its next one-second tick (:data:`TICK`) whenever a neighbour it
  uploads to lost interest (``choke_this_peer`` calls ``trigger_unchoke``).
  Early in a broadcast interest comes and goes with nearly every piece, so
  rounds come far more often than every 15 s; a broadcast cut at the block
  quota lasts a few seconds and would otherwise see none.
* **The order of a round.**  Interested neighbours are ranked by what they
  sent the peer since its last round (reciprocation, with ``tit_for_tat``;
  else at random), then by what the peer sent them while unchoked, then the
  longest since their last unchoke first (libtorrent's round-robin
  comparison, which lets a seed serve its neighbours in turn).  The first
  ``upload_slots`` are unchoked, and one more as the optimistic unchoke,
  kept until ``optimistic_unchoke_interval`` rotates it.
"""

from __future__ import annotations

import numpy as np

from measure.swarm import SwarmParams
from tomography.model.errors import ParameterError

__all__ = ["Choker", "TICK"]

TICK = 1.0
"""Seconds between a peer's chances to run a choke round it was asked for (libtorrent's
one-second tick)."""


def _rank_in_group(group: np.ndarray) -> np.ndarray:
    """Position of each element within its run of equal values of the sorted ``group``."""
    return np.arange(group.size) - np.searchsorted(group, group, side="left")


class Choker:
    """The unchoke state of every connection of one simulated broadcast.

    Parameters
    ----------
    uploader, downloader : ndarray of int, shape (E,)
        The two ends of each one-way connection, sorted by uploader; each
        connection's way back must be among them.
    n : int
        Peers.
    params : SwarmParams
        ``upload_slots``, ``tit_for_tat`` and the two intervals.
    rng : numpy.random.Generator

    Attributes
    ----------
    unchoked : ndarray of bool, shape (E,)
        Whether the uploader of each connection lets its downloader fetch.

    Examples
    --------
    A seed (peer 0) with one slot and three interested peers serves them in
    turn: each round unchokes the one unchoked longest ago.

    >>> import numpy as np
    >>> from measure.swarm import SwarmParams
    >>> up = np.array([0, 0, 0, 1, 2, 3]); down = np.array([1, 2, 3, 0, 0, 0])
    >>> c = Choker(up, down, 4, SwarmParams(upload_slots=1, optimistic_unchoke_interval=1e9),
    ...            np.random.default_rng(0))
    >>> wants = np.array([True, True, True, False, False, False])
    >>> served = set()
    >>> for t in range(0, 60, 15):
    ...     _ = c.step(float(t), wants)
    ...     served |= set(down[c.unchoked & (up == 0)].tolist())
    >>> sorted(served)
    [1, 2, 3]
    """

    def __init__(self, uploader: np.ndarray, downloader: np.ndarray, n: int,
                 params: SwarmParams, rng: np.random.Generator) -> None:
        if np.any(np.diff(uploader) < 0):
            raise ParameterError("connections must be sorted by uploader")
        self.uploader = uploader
        self.n = n
        self.params = params
        self.rng = rng
        code = uploader * n + downloader
        order = np.argsort(code)
        back = np.searchsorted(code[order], downloader * n + uploader)
        self.reverse = order[np.minimum(back, code.size - 1)]
        if not np.array_equal(code[self.reverse], downloader * n + uploader):
            raise ParameterError("every connection needs its way back among the connections")
        E = uploader.size
        self.unchoked = np.zeros(E, dtype=bool)
        self.sent = np.zeros(E)           # bytes each uploader sent on it since its last round
        self.got = np.zeros(E)            # bytes it got back on it since then
        self.last_unchoke = np.full(E, -np.inf)
        self.optimistic = np.full(n, -1, dtype=np.int64)
        self.triggered = np.zeros(n, dtype=bool)
        self.next_tick = TICK
        self.next_round = params.unchoke_interval
        self.next_rotation = params.optimistic_unchoke_interval

    def moved(self, connections: np.ndarray, sent: np.ndarray) -> None:
        """Record ``sent`` bytes moved on ``connections`` (for reciprocation)."""
        self.sent[connections] += sent
        self.got[self.reverse[connections]] += sent

    def step(self, t: float, interested: np.ndarray) -> np.ndarray:
        """Update the unchoke state at time ``t``; the connections choked by it.

        A connection whose downloader lost interest is choked and asks its
        uploader for a round at the next tick; the rounds due run; free slots
        are filled.
        """
        lost = self.unchoked & ~interested
        self.unchoked &= interested
        self.triggered[self.uploader[lost]] = True
        choked = lost
        if t >= self.next_tick:
            periodic = t >= self.next_round
            rotate = t >= self.next_rotation
            everyone = periodic or rotate
            due = np.ones(self.n, dtype=bool) if everyone else self.triggered.copy()
            if due.any():
                choked = choked | self._round(t, due, interested, rotate)
            self.triggered[due] = False
            self.next_round += self.params.unchoke_interval if periodic else 0.0
            self.next_rotation += self.params.optimistic_unchoke_interval if rotate else 0.0
            while self.next_tick <= t:
                self.next_tick += TICK
        self._fill(t, interested)
        return choked

    def _round(self, t: float, due: np.ndarray, interested: np.ndarray,
               rotate: bool) -> np.ndarray:
        """The choke round of every peer in ``due``; the connections it chokes."""
        pu, slots = self.uploader, self.params.upload_slots
        mine = due[pu]
        new = self.unchoked & ~mine
        cand = np.flatnonzero(mine & interested)
        noise = self.rng.random(cand.size)
        if self.params.tit_for_tat:
            keys = (noise, self.last_unchoke[cand],
                    -np.where(self.unchoked[cand], self.sent[cand], 0.0), -self.got[cand],
                    pu[cand])
        else:
            keys = (noise, pu[cand])
        cand = cand[np.lexsort(keys)]
        new[cand[_rank_in_group(pu[cand]) < slots]] = True
        keep = self.optimistic
        valid = (keep >= 0) & ~rotate
        valid[valid] = interested[keep[valid]] & ~new[keep[valid]]
        self.optimistic[due & ~valid] = -1
        rest = cand[~new[cand] & (self.optimistic[pu[cand]] < 0)]
        rest = rest[np.lexsort((self.rng.random(rest.size), pu[rest]))]
        rest = rest[_rank_in_group(pu[rest]) == 0]
        self.optimistic[pu[rest]] = rest
        new[self.optimistic[due & (self.optimistic >= 0)]] = True
        self.sent[mine] = 0.0
        self.got[mine] = 0.0
        self.last_unchoke[new & ~self.unchoked] = t
        choked = self.unchoked & ~new
        self.unchoked = new
        return choked

    def _fill(self, t: float, interested: np.ndarray) -> None:
        """Unchoke random interested neighbours into every free slot (preemptive unchoke)."""
        pu = self.uploader
        free = self.params.upload_slots + 1 - np.bincount(pu[self.unchoked], minlength=self.n)
        cand = np.flatnonzero(interested & ~self.unchoked & (free[pu] > 0))
        if cand.size == 0:
            return
        cand = cand[np.lexsort((self.rng.random(cand.size), pu[cand]))]
        opened = cand[_rank_in_group(pu[cand]) < free[pu[cand]]]
        self.unchoked[opened] = True
        self.last_unchoke[opened] = t
