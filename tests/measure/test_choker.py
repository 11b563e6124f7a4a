"""The simulator's choker against libtorrent's rules: slots, rounds, their order."""

from __future__ import annotations

import numpy as np
import pytest

from measure.choker import TICK, Choker
from tomography.model.errors import ParameterError
from measure.swarm import SwarmParams


def star(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Peer 0 connected to peers 1..n-1, both ways, sorted by uploader."""
    others = np.arange(1, n)
    up = np.concatenate([np.zeros(n - 1, dtype=np.int64), others])
    down = np.concatenate([others, np.zeros(n - 1, dtype=np.int64)])
    return up, down


def served_by_0(c: Choker, up: np.ndarray, down: np.ndarray) -> set[int]:
    return set(down[c.unchoked & (up == 0)].tolist())


def test_free_slots_fill_at_once_and_never_beyond_the_slots() -> None:
    up, down = star(12)
    c = Choker(up, down, 12, SwarmParams(upload_slots=4), np.random.default_rng(0))
    c.step(0.0, up == 0)                       # peers 1..11 want what 0 has
    assert len(served_by_0(c, up, down)) == 5  # 4 slots and the optimistic unchoke
    assert not c.unchoked[up != 0].any()       # 0 wants nothing from them


def one_slot_with_a_generous_peer(seed: int) -> tuple[Choker, np.ndarray, np.ndarray,
                                                     np.ndarray, set[int], int]:
    """Peer 0 with one slot (and no optimistic rotation) among 5 interested peers, after its
    first step; one peer it does not serve has just sent it a lot."""
    up, down = star(6)
    c = Choker(up, down, 6, SwarmParams(upload_slots=1, optimistic_unchoke_interval=1e9),
               np.random.default_rng(seed))
    wants = np.ones(up.size, dtype=bool)
    c.step(0.0, wants)
    first = served_by_0(c, up, down)
    generous = next(p for p in range(1, 6) if p not in first)
    c.moved(np.flatnonzero((up == generous) & (down == 0)), np.array([1e6]))
    return c, up, down, wants, first, generous


def test_a_round_unchokes_those_that_sent_most() -> None:
    c, up, down, wants, _, generous = one_slot_with_a_generous_peer(0)
    c.step(15.0, wants)                        # the periodic round
    assert generous in served_by_0(c, up, down)


def test_lost_interest_brings_the_round_to_the_next_tick() -> None:
    c, up, down, wants, first, generous = one_slot_with_a_generous_peer(1)
    leaving = min(first)
    wants[(up == 0) & (down == leaving)] = False
    choked = c.step(0.5, wants)                # before the tick: only the lost one is choked
    assert set(down[choked].tolist()) == {leaving}
    assert c.got[(up == 0) & (down == generous)].item() == 1e6   # and no round ran yet
    c.step(TICK, wants)                        # the tick runs the round asked for
    assert generous in served_by_0(c, up, down)
    assert leaving not in served_by_0(c, up, down)


def test_without_lost_interest_no_round_before_the_interval() -> None:
    c, up, down, wants, first, generous = one_slot_with_a_generous_peer(2)
    for t in np.arange(1.0, 15.0, 0.5):
        c.step(float(t), wants)
        assert served_by_0(c, up, down) == first
    c.step(15.0, wants)
    assert generous in served_by_0(c, up, down)


def test_a_seed_serves_every_peer_in_turn() -> None:
    up, down = star(9)
    c = Choker(up, down, 9, SwarmParams(upload_slots=2, optimistic_unchoke_interval=1e9),
               np.random.default_rng(3))
    wants = up == 0                            # nobody sends the seed anything
    served: set[int] = set()
    for t in range(0, 15 * 4, 15):
        c.step(float(t), wants)
        served |= served_by_0(c, up, down)
    assert served == set(range(1, 9))


def test_connections_are_checked() -> None:
    up, down = star(4)
    with pytest.raises(ParameterError, match="sorted by uploader"):
        Choker(up[::-1].copy(), down[::-1].copy(), 4, SwarmParams(), np.random.default_rng(0))
    with pytest.raises(ParameterError, match="way back"):
        Choker(up[:3], down[:3], 4, SwarmParams(), np.random.default_rng(0))
