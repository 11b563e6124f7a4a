"""Planted-partition datasets: synthetic block counts with a known answer.

These are **not** measurements and not simulations of BitTorrent: they draw
block counts from a simple random model in which hosts of the same planted
group exchange more blocks than hosts of different groups.  They are labelled
``synthetic`` in ``meta.json`` and serve tests, benchmarks and the
demonstration until a real or simulated network is at hand.

The model, per iteration: a root (rotating through a seeded permutation of
the hosts) holds the file; every other host receives all
``ceil(file_size / 16 KiB)`` blocks, from a random peer list of ``peers``
other hosts, drawn by a multinomial with probabilities proportional to
``affinity(r, s) * noise``.  Affinity is ``ratio ** -k`` where ``k`` is the
number of hierarchy levels on which ``r`` and ``s`` differ (0 inside a leaf
group); noise is log-normal with standard deviation ``noise``.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pandas as pd

from tomography.model.dataset import BLOCK_SIZE, Measurement
from tomography.model.errors import ParameterError
from tomography.model.seeding import Seed, random_state

__all__ = ["planted_hierarchy", "planted_partition"]


@random_state
def planted_hierarchy(branching: Sequence[int], hosts_per_group: int | Sequence[int], *,
                      iterations: int = 3,
                      file_size: int = 4 * 2**20, ratio: float = 4.0, peers: int = 40,
                      noise: float = 0.5, seed: Seed = 0) -> Measurement:
    """A synthetic dataset over a planted hierarchy of host groups.

    Parameters
    ----------
    branching : sequence of int
        Groups per level, top first: ``(3, 3)`` is 3 super-groups of 3 leaf
        groups each; ``(8,)`` is 8 flat groups.
    hosts_per_group : int or sequence of int
        Hosts in each leaf group, or one count per leaf group (in the order
        of their paths), for groups of unequal size.
    iterations : int, default 3
        Broadcasts to draw.
    file_size : int, default 4 MiB
        Bytes of the broadcast file; each receiver gets all its blocks.
    ratio : float, default 4.0
        Affinity falls by this factor per level two hosts differ on.
    peers : int, default 40
        Size of each receiver's random peer list (capped at hosts - 1).
    noise : float, default 0.5
        Standard deviation of the log-normal noise on each peer's share.
    seed : int, Generator or None, default 0
        Randomness; the integer is recorded in ``meta["params"]["seed"]``.

    Returns
    -------
    Measurement
        Method ``synthetic``; host labels are the planted group paths, top
        level first, joined by ``/`` (``g1/g1.0``).

    Examples
    --------
    >>> m = planted_hierarchy((2, 2), 3, iterations=1, seed=0)
    >>> m.n_hosts, sorted(set(m.labels.values()))
    (12, ['g0/g0.0', 'g0/g0.1', 'g1/g1.0', 'g1/g1.1'])
    >>> planted_hierarchy((2,), [3, 5], iterations=1, seed=0).n_hosts
    8
    """
    branching = tuple(int(b) for b in branching)
    if not branching or min(branching) < 1:
        raise ParameterError(f"branching must be a non-empty sequence of positive integers, "
                             f"got {branching!r}")
    leaves = int(np.prod(branching))
    counts = ([int(hosts_per_group)] * leaves if np.isscalar(hosts_per_group)
              else [int(c) for c in hosts_per_group])
    if len(counts) != leaves:
        raise ParameterError(f"hosts_per_group has {len(counts)} counts for {leaves} leaf groups")
    if min(counts) < 1 or iterations < 1 or file_size < 1:
        raise ParameterError("hosts_per_group, iterations and file_size must be positive, got "
                             f"{min(counts)} (the smallest group), {iterations} and {file_size}")
    if ratio < 1 or noise < 0 or peers < 1:
        raise ParameterError(f"ratio must be >= 1, noise >= 0 and peers >= 1, got {ratio}, "
                             f"{noise} and {peers}")
    rng, recorded = seed
    paths = _group_paths(branching, counts)
    n = len(paths)
    width = len(str(n - 1))
    hosts = [f"h{i:0{max(3, width)}d}" for i in range(n)]
    labels = ["/".join(_path_names(p)) for p in paths]
    codes = np.array(paths, dtype=np.int64)
    blocks = math.ceil(file_size / BLOCK_SIZE)
    k = min(peers, n - 1)
    order = rng.permutation(n)
    frames, rows = [], []
    for it in range(iterations):
        root = int(order[it % n])
        receivers = np.array([r for r in range(n) if r != root])
        if k == 0:
            rows.append((it, hosts[root], file_size, float("nan"), True))
            continue
        senders = np.empty((receivers.size, k), dtype=np.int64)
        for row, r in enumerate(receivers):
            pick = rng.choice(n - 1, size=k, replace=False)
            senders[row] = pick + (pick >= r)
        same = codes[receivers][:, None, :] == codes[senders]
        common = np.cumprod(same, axis=2).sum(axis=2)
        weight = float(ratio) ** (common - len(branching)) * rng.lognormal(0.0, noise, size=senders.shape)
        counts = rng.multinomial(blocks, weight / weight.sum(axis=1, keepdims=True))
        keep = counts > 0
        frames.append(pd.DataFrame({
            "iteration": np.full(int(keep.sum()), it, dtype=np.int64),
            "receiver": np.asarray(hosts)[np.broadcast_to(receivers[:, None], senders.shape)[keep]],
            "sender": np.asarray(hosts)[senders[keep]],
            "blocks": counts[keep].astype(np.int64),
        }))
        rows.append((it, hosts[root], file_size, float("nan"), True))
    transfers = (pd.concat(frames, ignore_index=True) if frames else
                 pd.DataFrame({"iteration": [], "receiver": [], "sender": [], "blocks": []}))
    meta = {
        "method": "synthetic",
        "block_size": BLOCK_SIZE,
        "topology": None,
        "params": {"model": "planted_hierarchy", "branching": list(branching),
                   "hosts_per_group": hosts_per_group, "iterations": iterations,
                   "file_size": file_size, "ratio": ratio, "peers": peers, "noise": noise,
                   "seed": recorded},
    }
    host_frame = pd.DataFrame({"host": hosts, "address": [""] * n, "label": labels})
    iteration_frame = pd.DataFrame(rows, columns=["iteration", "root", "bytes", "duration_s",
                                                  "complete"])
    return Measurement(meta=meta, hosts=host_frame, transfers=transfers,
                       iterations=iteration_frame)


def planted_partition(n_hosts: int, n_groups: int, *, iterations: int = 3,
                      file_size: int = 4 * 2**20, ratio: float = 4.0, peers: int = 40,
                      noise: float = 0.5, seed: Seed = 0) -> Measurement:
    """A synthetic dataset over ``n_groups`` equal flat groups of hosts.

    Parameters
    ----------
    n_hosts : int
        Total hosts; must be a multiple of ``n_groups``.
    n_groups : int
        Planted groups; labels are ``g0``, ``g1``, ...
    iterations, file_size, ratio, peers, noise, seed
        As for :func:`planted_hierarchy`.

    Returns
    -------
    Measurement

    Examples
    --------
    >>> m = planted_partition(512, 8, iterations=1, seed=3)
    >>> m.meta["method"], len(set(m.labels.values()))
    ('synthetic', 8)
    """
    if n_groups < 1 or n_hosts < 1 or n_hosts % n_groups:
        raise ParameterError(f"n_hosts ({n_hosts}) must be a positive multiple of n_groups "
                             f"({n_groups})")
    if iterations < 1:
        raise ParameterError(f"iterations must be positive, got {iterations}")
    return planted_hierarchy((n_groups,), n_hosts // n_groups, iterations=iterations,
                             file_size=file_size, ratio=ratio, peers=peers, noise=noise,
                             seed=seed)


def _group_paths(branching: tuple[int, ...], counts: list[int]) -> list[tuple[int, ...]]:
    paths: list[tuple[int, ...]] = [()]
    for b in branching:
        paths = [p + (i,) for p in paths for i in range(b)]
    return [p for p, count in zip(paths, counts) for _ in range(count)]


def _path_names(path: tuple[int, ...]) -> list[str]:
    return ["g" + ".".join(str(i) for i in path[: d + 1]) for d in range(len(path))]
