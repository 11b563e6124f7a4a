"""Piece selection of the simulated swarm: rarest first, request queues, end game.

What a libtorrent downloader asks an uploader for next (the rules are in
:mod:`measure.simulator`'s docstring), for a batch of connections at once.
The selection scans every piece of every connection that needs a new one,
thousands of times per broadcast, so it is compiled with Numba; the state
lives in NumPy arrays owned by the simulator and is updated in place.

The arrays (``E`` connections, ``n`` peers, ``P`` pieces):

* ``pu``, ``pd`` (E,): uploader and downloader of each connection;
* ``have`` (n, P) bool, ``count_have`` (n,): the pieces each peer holds;
  ``packed``: ``have`` as bits (:func:`pack`), kept in step with it;
* ``inflight`` (n, P) int16: transfers of piece ``p`` to peer ``d`` under way;
* ``avail`` (n, P) int32: neighbours of ``d`` holding ``p``, times ``P``;
* ``tie_order`` (n, P) int32: each downloader's own random order of the pieces;
* ``queue`` (E, Q) int64: the pieces a connection means to ask for (-1: none);
* ``current`` (E,) int64: the piece in transfer on a connection (-1: none).
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["assign_pieces", "complete_pieces", "interested_pairs", "pack", "seed_kernels"]

RANDOM_FIRST_PIECES = 4  # libtorrent's initial_picker_threshold


@numba.njit(cache=True)
def seed_kernels(seed: int) -> None:
    """Seed the random numbers drawn inside the compiled kernels (end-game picks).

    Examples
    --------
    >>> seed_kernels(7)
    """
    np.random.seed(seed)


@numba.njit(cache=True, nogil=True)
def _lacks(packed: np.ndarray, d: int, u: int) -> bool:
    """Whether peer ``d`` lacks a piece peer ``u`` has."""
    for w in range(packed.shape[1]):
        if packed[u, w] & ~packed[d, w]:
            return True
    return False


@numba.njit(cache=True, nogil=True)
def interested_pairs(pu: np.ndarray, pd: np.ndarray, packed: np.ndarray) -> np.ndarray:
    """Whether each downloader lacks a piece its uploader has (``packed``: ``have`` as bits).

    Examples
    --------
    >>> bits = pack(np.array([[True, True], [True, False]]))   # peer 0 has 2 pieces, 1 has one
    >>> interested_pairs(np.array([0, 1]), np.array([1, 0]), bits).tolist()
    [True, False]
    """
    out = np.zeros(pu.size, dtype=np.bool_)
    for e in range(pu.size):
        out[e] = _lacks(packed, pd[e], pu[e])
    return out


def pack(have: np.ndarray) -> np.ndarray:
    """``have`` (n, P) as bits, 64 pieces per word: piece ``p`` is bit ``p % 64`` of word ``p // 64``.

    Examples
    --------
    >>> pack(np.array([[True, False, True]])).tolist()
    [[5]]
    """
    n, n_pieces = have.shape
    bits = np.zeros((n, -(-n_pieces // 64) * 8), dtype=np.uint8)
    bits[:, :-(-n_pieces // 8)] = np.packbits(have, axis=1, bitorder="little")
    return bits.view(np.uint64)


@numba.njit(cache=True, nogil=True)
def _end_game(d: int, packed: np.ndarray, inflight: np.ndarray, n_pieces: int) -> bool:
    """Whether every piece ``d`` lacks is already in transfer to it."""
    for w in range(packed.shape[1]):
        missing = ~packed[d, w]
        if missing == 0:
            continue
        for b in range(64):
            p = 64 * w + b
            if p < n_pieces and (missing >> np.uint64(b)) & np.uint64(1) and inflight[d, p] == 0:
                return False
    return True


@numba.njit(cache=True, nogil=True)
def assign_pieces(pairs: np.ndarray, pu: np.ndarray, pd: np.ndarray, have: np.ndarray,
                  count_have: np.ndarray, inflight: np.ndarray, avail: np.ndarray,
                  tie_order: np.ndarray, queue: np.ndarray, current: np.ndarray,
                  packed: np.ndarray) -> None:
    """Give each connection of ``pairs`` (none in transfer) a piece to fetch, in order.

    A connection takes the first piece of its queue still useful (the
    uploader has it, the downloader does not, and nobody is bringing it to
    the downloader); with none left it refills the queue with the ``Q``
    rarest such pieces among the downloader's neighbours (ties broken by
    the downloader's own order; its first pieces at random) and takes the
    first.  A downloader whose every missing piece is already in transfer
    is in end-game mode: it asks this uploader for one of them at random as
    well (the first copy to arrive wins).  Connections are served in the
    order given, each seeing the choices of those before it.

    Examples
    --------
    Peer 0 seeds 3 pieces to peers 1 and 2; peer 1 already has piece 0.
    Piece 2 is the rarest around peer 1, but peers with fewer than 4
    pieces pick in their own random order (here 0, 1, 2):

    >>> have = np.array([[1, 1, 1], [1, 0, 0], [0, 0, 0]], dtype=bool)
    >>> avail = np.array([[0, 0, 0], [6, 6, 3], [3, 3, 3]], dtype=np.int32)
    >>> ties = np.tile(np.arange(3, dtype=np.int32), (3, 1))
    >>> queue, current = np.full((2, 4), -1), np.full(2, -1)
    >>> inflight = np.zeros((3, 3), dtype=np.int16)
    >>> pu, pd = np.array([0, 0]), np.array([1, 2])
    >>> bits = pack(have)
    >>> assign_pieces(np.array([0, 1]), pu, pd, have, have.sum(axis=1), inflight, avail,
    ...               ties, queue, current, bits)
    >>> current.tolist(), queue[0].tolist()        # the rest stays queued
    ([1, 0], [-1, 2, -1, -1])

    Past its first pieces, peer 1 takes the rarest:

    >>> current[:], queue[:], inflight[:] = -1, -1, 0
    >>> assign_pieces(np.array([0]), pu, pd, have, np.array([3, 4, 0]), inflight, avail,
    ...               ties, queue, current, bits)
    >>> int(current[0])
    2
    """
    n_pieces = have.shape[1]
    width = min(queue.shape[1], n_pieces)
    top = np.empty(width, dtype=np.int64)
    top_score = np.empty(width, dtype=np.int64)
    for e in pairs:
        if current[e] >= 0:
            continue
        u, d = pu[e], pd[e]
        best = -1
        for j in range(queue.shape[1]):       # the queue, consumed up to the piece taken
            p = queue[e, j]
            queue[e, j] = -1
            if p >= 0 and have[u, p] and not have[d, p] and inflight[d, p] == 0:
                best = p
                break
        if best < 0:                           # refill: the rarest candidates, best first
            starting = count_have[d] < RANDOM_FIRST_PIECES
            k = 0
            for w in range(packed.shape[1]):   # only the pieces u has and d lacks
                useful = packed[u, w] & ~packed[d, w]
                if useful == 0:
                    continue
                for b in range(64):
                    if not (useful >> np.uint64(b)) & np.uint64(1):
                        continue
                    p = 64 * w + b
                    if inflight[d, p] > 0:
                        continue
                    score = np.int64(tie_order[d, p]) + (0 if starting else np.int64(avail[d, p]))
                    if k < width:
                        k += 1
                    elif score >= top_score[k - 1]:
                        continue
                    i = k - 1                  # insertion into the sorted top list
                    while i > 0 and top_score[i - 1] > score:
                        top[i], top_score[i] = top[i - 1], top_score[i - 1]
                        i -= 1
                    top[i], top_score[i] = p, score
            for j in range(queue.shape[1]):
                queue[e, j] = top[j] if 0 < j < k else -1
            if k:
                best = top[0]
            elif _end_game(d, packed, inflight, n_pieces):   # a duplicate, at random
                seen = 0
                for p in range(n_pieces):
                    if have[u, p] and not have[d, p] and inflight[d, p] > 0:
                        seen += 1
                        if np.random.random() * seen < 1.0:   # reservoir sampling
                            best = p
        if best >= 0:
            current[e] = best
            inflight[d, best] += 1


@numba.njit(cache=True, nogil=True)
def complete_pieces(flowing: np.ndarray, pu: np.ndarray, pd: np.ndarray, have: np.ndarray,
                    count_have: np.ndarray, inflight: np.ndarray, avail: np.ndarray,
                    tie_order: np.ndarray, queue: np.ndarray, current: np.ndarray,
                    packed: np.ndarray, progress: np.ndarray, piece_bytes: np.ndarray,
                    piece_blocks: np.ndarray, counts: np.ndarray, incoming: np.ndarray,
                    incoming_ptr: np.ndarray) -> float:
    """Hand on the pieces the connections of ``flowing`` finished in a step.

    ``progress`` holds the bytes each connection received of its piece.
    A finished piece is counted for its connection (``counts[e]`` += its
    blocks), its copies in transfer from other uploaders (end game) are
    cancelled, and the connection goes on with its next piece, the bytes
    beyond the finished one carried over; until no connection has a whole
    piece.  The downloader's neighbours see its new pieces at the end (HAVE
    messages): ``avail`` is updated last.  ``incoming[incoming_ptr[d]:
    incoming_ptr[d + 1]]`` are the connections into ``d``.

    Returns
    -------
    float
        Bytes thrown away: cancelled end-game copies.

    Examples
    --------
    Peer 0 sends 2 pieces of 2 blocks to peer 1; 3 pieces' worth arrived:

    >>> have = np.array([[1, 1], [0, 0]], dtype=bool)
    >>> bits, counts = pack(have), np.zeros(2, dtype=np.int64)
    >>> current, progress = np.array([0, -1]), np.array([3 * 32768.0, 0.0])
    >>> inflight = np.array([[0, 0], [1, 0]], dtype=np.int16)
    >>> args = (np.array([0, 1]), np.array([1, 0]), have, have.sum(axis=1), inflight,
    ...         np.zeros((2, 2), dtype=np.int32), np.zeros((2, 2), dtype=np.int32),
    ...         np.full((2, 4), -1), current, bits, progress, np.array([32768, 32768]),
    ...         np.array([2, 2]), counts, np.array([1, 0]), np.array([0, 1, 2]))
    >>> complete_pieces(np.array([0]), *args)
    0.0
    >>> counts.tolist(), have[1].tolist(), float(progress[0])    # the rest is lost: no more
    ([4, 0], [True, True], 0.0)
    """
    n_pieces = have.shape[1]
    redundant = 0.0
    news_d = np.empty(max(flowing.size, 16), dtype=np.int64)
    news_p = np.empty(max(flowing.size, 16), dtype=np.int64)
    n_news = 0
    pending = flowing
    while pending.size:
        again = np.empty(pending.size, dtype=np.int64)
        n_again = 0
        for e in pending:
            p = current[e]
            if p < 0 or progress[e] < piece_bytes[p]:
                continue
            u, d = pu[e], pd[e]
            if inflight[d, p] > 1:             # end-game copies from other uploaders
                for k in range(incoming_ptr[d], incoming_ptr[d + 1]):
                    other = incoming[k]
                    if other != e and current[other] == p:
                        redundant += progress[other]
                        current[other] = -1
                        progress[other] = 0.0
            progress[e] -= piece_bytes[p]
            have[d, p] = True
            packed[d, p // 64] |= np.uint64(1) << np.uint64(p % 64)
            inflight[d, p] = 0
            count_have[d] += 1
            counts[e] += piece_blocks[p]
            current[e] = -1
            if n_news == news_d.size:
                news_d = np.concatenate((news_d, np.empty(news_d.size, dtype=np.int64)))
                news_p = np.concatenate((news_p, np.empty(news_p.size, dtype=np.int64)))
            news_d[n_news], news_p[n_news] = d, p
            n_news += 1
            if _lacks(packed, d, u):
                again[n_again] = e
                n_again += 1
            else:
                progress[e] = 0.0
        again = again[:n_again]
        assign_pieces(again, pu, pd, have, count_have, inflight, avail, tie_order, queue,
                      current, packed)
        pending = again[current[again] >= 0]
    for i in range(n_news):                    # HAVE messages: the neighbours see it now
        d, p = news_d[i], news_p[i]
        for k in range(incoming_ptr[d], incoming_ptr[d + 1]):
            avail[pu[incoming[k]], p] += n_pieces
    return redundant
