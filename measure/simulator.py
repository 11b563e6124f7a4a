"""Flow-level simulation of instrumented BitTorrent broadcasts over a topology.

Real and simulated tomography differ only in how the dataset is measured
(docs/method.md): :func:`simulate` writes a measurement dataset (format 1,
method ``simulated``) exactly as a real run would, one iteration at a time.

The model of one broadcast (one iteration), stepped in simulated time:

* **Peers.**  Every host runs one peer.  The root starts with the whole file
  (a seed); the others start empty.  Each peer is given ``peer_list`` other
  peers at random (the list a tracker would return, capped); connections are
  two-way, so a peer's neighbours are those it lists and those listing it
  (peers of an unreachable pair of the topology never connect).
* **Pieces and blocks.**  The file is cut into pieces of ``piece_size``
  bytes, each made of 16 KiB blocks.  A downloader fetches a piece whole from
  one uploader (libtorrent's piece affinity), choosing the **rarest** piece
  among its neighbours that the uploader has and nobody else is bringing it
  (ties broken at random by each downloader on its own; its first 4 pieces
  at random, as libtorrent's ``initial_picker_threshold``).  Like a request
  queue, a connection picks its ``QUEUE`` rarest candidates at once and
  takes them in turn while they stay useful; availability seen by a peer is
  updated at the end of each step (HAVE messages).  When every missing piece
  is already in transfer, a downloader enters end-game mode and asks other
  uploaders for the same pieces; the first copy wins, the others are
  cancelled and counted as redundant bytes.  When a piece completes, its blocks are counted for the
  uploader: the counts of ``transfers.csv``.
* **Choking.**  A peer uploads to at most ``upload_slots`` interested
  neighbours plus one optimistic unchoke (libtorrent counts its optimistic
  unchoke among its ``unchoke_slots_limit``), chosen as libtorrent's
  fixed-slots choker chooses them (:class:`measure.choker.Choker`: free
  slots filled at once, choke rounds every ``unchoke_interval`` and within a
  second of a neighbour losing interest, reciprocation first).  A choke drops
  the piece in transfer; it is fetched again later (libtorrent keeps the
  blocks already received; the difference is at most one piece per choke).
* **Bandwidth.**  Each transfer is a TCP flow from the uploader's NIC,
  along the routers' path, into the downloader's NIC; each direction of a
  router link is a resource of its own, with its own capacity
  (:meth:`tomography.model.topology.Link.capacity_from`).  Rates are weighted
  max-min fair on every resource of the path (:mod:`measure.flows`), with
  the weights and caps of the connection model (:mod:`measure.tcp`): slow
  start for a new connection and again after idle (a choked connection is
  idle), sharing in proportion to ``1/RTT``, the receive window and
  libtorrent's request pipeline per round trip; each a parameter of
  :class:`measure.tcp.TcpModel`, recorded in the dataset.  RTT is twice the
  one-way latency of the path.
* **Time.**  A step lasts as long as one of the fastest tenth of the flows
  takes to move one piece; bytes beyond a finished piece carry over to the
  next one, and finished pieces are handed on within the step.  An
  iteration ends when every peer has the file, or after ``time_limit``
  simulated seconds (then it is marked incomplete and its counts kept), or
  complete at ``time_box`` seconds or once every peer holds ``block_quota``
  blocks, when the swarm settings set them.

The work of a step over pieces (selection, completion) and the max-min
filling run as compiled kernels (:mod:`measure.pieces`,
:mod:`measure.flows`, with Numba); this module keeps the loop over steps,
the choker's steps and the connection model.

Not modelled: queueing delay in routers (beyond the standing queue that
:class:`measure.tcp.TcpModel` adds to the round trips of its 1/RTT
weights), TCP's congestion-avoidance dynamics after a share changes (a flow
follows its share at once), piece hashing and disk.
"""

from __future__ import annotations

import functools
import math
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from measure.choker import Choker
from measure.flows import max_min_rates
from measure.pieces import (assign_pieces, complete_pieces, interested_pairs, pack,
                            seed_kernels)
from measure.roots import RootChooser
from measure.swarm import SwarmParams, peer_lists
from measure.tcp import Connections, TcpModel
from tomography.model.dataset import BLOCK_SIZE, MeasurementWriter, read_measurement
from tomography.model.dataset.meta import refuse_other_params
from tomography.model.errors import DatasetError, ParameterError, TomographyError
from tomography.model.seeding import Seed, random_state
from tomography.model.topology import Topology, check_quantity, read_topology
from tomography.model.units import parse_size

__all__ = ["BroadcastResult", "simulate_broadcast", "simulate"]

STEP_QUANTILE = 0.9  # a step moves one piece at this quantile of the flow rates
QUEUE = 16  # pieces a connection picks at once, like libtorrent's request queue


@dataclass
class BroadcastResult:
    """One simulated broadcast.

    The blocks are kept per connection, so memory grows with the
    connections, not with the square of the hosts; :attr:`counts` gives
    the dense matrix.

    Attributes
    ----------
    n_hosts : int
    receiver, sender : ndarray of int, shape (E,)
        The hosts of each connection (row indices of the hosts given).
    blocks : ndarray of int, shape (E,)
        Blocks ``receiver[e]`` received from ``sender[e]``.
    duration : float
        Simulated seconds until every peer had the file (or the time limit).
    complete : bool
    steps : int
        Simulation steps taken.
    redundant_bytes : float
        Bytes received and thrown away: pieces cancelled by a choke or
        because an end-game duplicate arrived first.
    """

    n_hosts: int
    receiver: np.ndarray
    sender: np.ndarray
    blocks: np.ndarray
    duration: float
    complete: bool
    steps: int
    redundant_bytes: float

    @property
    def counts(self) -> np.ndarray:
        """``counts[r, s]`` = blocks host ``r`` received from host ``s`` (dense, N x N)."""
        out = np.zeros((self.n_hosts, self.n_hosts), dtype=np.int64)
        out[self.receiver, self.sender] = self.blocks
        return out

    def transfers(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Receiver, sender and blocks of every pair that exchanged, by receiver then sender."""
        moved = np.flatnonzero(self.blocks)
        order = moved[np.lexsort((self.sender[moved], self.receiver[moved]))]
        return self.receiver[order], self.sender[order], self.blocks[order]


class _Network:
    """Resources and paths of a topology, for hosts in a given order."""

    def __init__(self, topology: Topology, hosts: list[str]) -> None:
        index = topology.host_index
        n = len(hosts)
        self.n = n
        links = topology.links
        directed = {}
        for i, link in enumerate(links):
            directed[(link.a, link.b)] = 2 * n + 2 * i
            directed[(link.b, link.a)] = 2 * n + 2 * i + 1
        # each direction of a link its own capacity (0 for the dead way of a one-way
        # link, which no route takes)
        self.capacity = np.concatenate([
            [index[h].nic_up for h in hosts], [index[h].nic_down for h in hosts],
            [link.capacity_from(end) for link in links for end in (link.a, link.b)]]
        ).astype(float)
        routers = sorted({index[h].router for h in hosts})
        self.router_of = np.array([routers.index(index[h].router) for h in hosts])
        host_lat = np.array([index[h].latency for h in hosts])
        k = len(routers)
        self.k = k
        # the directed links of the route between routers a and b:
        # route_flat[route_start[a * k + b]:][:route_len[a * k + b]]
        paths, route_lat = [], np.zeros((k, k))
        for a in range(k):
            for b in range(k):
                path = topology.route(routers[a], routers[b])
                paths.append([directed[e] for e in path])
                route_lat[a, b] = sum(topology.graph.edges[e]["latency"] for e in path)
        # router pairs whose hosts can connect (not a pair of topology.unreachable)
        self.reaches = np.array([[topology.reaches(a, b) for b in routers] for a in routers])
        self.route_len = np.array([len(p) for p in paths], dtype=np.int64)
        self.route_start = np.cumsum(self.route_len) - self.route_len
        self.route_flat = np.array([x for p in paths for x in p], dtype=np.int64)
        self.host_latency = host_lat
        self.route_latency = route_lat

    def rtt(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        one_way = (self.host_latency[src] + self.host_latency[dst]
                   + self.route_latency[self.router_of[src], self.router_of[dst]])
        return np.maximum(2.0 * one_way, 1e-6)

    def incidence(self, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Flow ``k`` of ``(src[k], dst[k])`` against every resource it crosses.

        Its uploader's NIC, its downloader's NIC and the directed links of the
        route between their routers, in one pass over the flows.
        """
        flows = np.arange(len(src))
        key = self.router_of[src] * self.k + self.router_of[dst]
        lens = self.route_len[key]
        on_links = np.repeat(flows, lens)
        # entry j of flow f's route is route_flat[route_start[key[f]] + j]
        before = np.cumsum(lens) - lens
        links = self.route_flat[np.repeat(self.route_start[key] - before, lens)
                                + np.arange(len(on_links))]
        return (np.concatenate([flows, flows, on_links]),
                np.concatenate([src, self.n + dst, links]))


def _interrupts_pass_through_kernels(function: Callable[..., Any]) -> Callable[..., Any]:
    """Ctrl-C inside a compiled kernel reaches the caller as ``KeyboardInterrupt``.

    Numba's dispatcher turns an interrupt that arrives while a kernel runs into
    ``SystemError: ... returned a result with an exception set``, chained to the
    ``KeyboardInterrupt``; callers (the CLI, the demo, a notebook) expect the
    latter.
    """
    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except SystemError as exc:
            if isinstance(exc.__cause__ or exc.__context__, KeyboardInterrupt):
                raise KeyboardInterrupt from None
            raise
    return wrapper


@_interrupts_pass_through_kernels
@random_state
def simulate_broadcast(topology: Topology, hosts: list[str], root: str, file_size: int, *,
                       params: SwarmParams = SwarmParams(), tcp: TcpModel = TcpModel(),
                       seed: Seed = 0, network: _Network | None = None) -> BroadcastResult:
    """Simulate one BitTorrent broadcast from ``root`` to every other host.

    Parameters
    ----------
    topology : Topology
    hosts : list of str
        The hosts taking part, in the row order of the result.
    root : str
        The host that seeds the file.
    file_size : int
        Bytes.
    params : SwarmParams
    tcp : TcpModel
        The connection model; ``TcpModel.off()`` for plain max-min shares.
    seed : int, Generator or None, default 0
        The same seed gives the same result; None draws a fresh one.

    Returns
    -------
    BroadcastResult

    Examples
    --------
    >>> from tomography.model.topology import read_topology
    >>> t = read_topology("tree-5")
    >>> hosts = [h.name for h in t.hosts]
    >>> r = simulate_broadcast(t, hosts, "h1-00", 2 * 2**20, seed=0)
    >>> r.complete, r.counts.sum(axis=1).tolist()    # 128 blocks to each non-root
    (True, [0, 128, 128, 128, 128])
    """
    if root not in hosts:
        raise TomographyError(f"root {root!r} is not one of the hosts")
    if file_size <= 0:
        raise ParameterError(f"file_size must be positive, got {file_size}")
    rng = seed.rng
    seed_kernels(int(rng.integers(2**32)))
    net = network or _Network(topology, hosts)
    n = len(hosts)
    r0 = hosts.index(root)
    piece = params.piece_bytes(file_size)
    n_pieces = math.ceil(file_size / piece)
    piece_bytes = np.full(n_pieces, piece, dtype=np.int64)
    piece_bytes[-1] = file_size - piece * (n_pieces - 1)
    piece_blocks = -(-piece_bytes // BLOCK_SIZE)

    have = np.zeros((n, n_pieces), dtype=bool)
    have[r0] = True
    count_have = have.sum(axis=1)
    packed = pack(have)                                   # ``have`` as bits
    inflight = np.zeros((n, n_pieces), dtype=np.int16)   # transfers of piece p to d
    if n == 1:
        none = np.zeros(0, dtype=np.int64)
        return BroadcastResult(1, none, none, none, 0.0, True, 0, 0.0)

    lists = peer_lists(n, params.peer_list, rng)
    listing = np.repeat(np.arange(n), [len(x) for x in lists])
    listed = np.concatenate(lists).astype(np.int64)
    # connections are two-way: each listed pair in both directions, once, by uploader
    pairs = np.unique(np.concatenate([listing * n + listed, listed * n + listing]))
    pairs = pairs[net.reaches[net.router_of[pairs // n], net.router_of[pairs % n]]]
    pu, pd = pairs // n, pairs % n                       # uploader, downloader per pair
    E = len(pu)
    counts = np.zeros(E, dtype=np.int64)                  # blocks per pair
    incoming = np.argsort(pd, kind="stable")             # the pairs into each downloader
    incoming_ptr = np.searchsorted(pd[incoming], np.arange(n + 1))
    # neighbours of d holding p, times n_pieces: rarest-first scores are avail + a tie-break
    avail = np.zeros((n, n_pieces), dtype=np.int32)
    np.add.at(avail, pd[pu == r0], n_pieces)
    # each downloader's own random order of the pieces breaks the ties of rarest-first
    tie_order = rng.permuted(np.broadcast_to(np.arange(n_pieces, dtype=np.int32),
                                             (n, n_pieces)), axis=1)
    connections = Connections(tcp, net.rtt(pu, pd))
    weight = connections.weights
    choker = Choker(pu, pd, n, params, rng)
    current = np.full(E, -1, dtype=np.int64)              # piece in transfer per pair
    progress = np.zeros(E)                                # bytes of it received
    queue = np.full((E, QUEUE), -1, dtype=np.int64)       # pieces each pair means to ask for
    t = 0.0
    steps = 0
    redundant = 0.0

    def drop(mask: np.ndarray) -> None:
        """Abandon the pieces in transfer on the pairs of ``mask``."""
        nonlocal redundant
        sel = np.flatnonzero(mask & (current >= 0))
        np.add.at(inflight.reshape(-1), pd[sel] * n_pieces + current[sel], -1)
        redundant += float(progress[sel].sum())
        current[sel] = -1
        progress[sel] = 0.0

    box = params.time_box if params.time_box is not None else math.inf
    # the quota in pieces: every downloader holding it ends the broadcast, complete
    quota = (n_pieces if params.block_quota is None else
             min(n_pieces, -(-params.block_quota // int(piece_blocks[0]))))
    while True:
        done = count_have == n_pieces
        if done.all() or t >= box or (count_have >= quota).all():
            return BroadcastResult(n, pd, pu, counts, t, True, steps, redundant)
        if t >= params.time_limit:
            return BroadcastResult(n, pd, pu, counts, t, False, steps, redundant)
        interested = interested_pairs(pu, pd, packed)
        drop(choker.step(t, interested))
        active = np.flatnonzero(choker.unchoked)
        assign_pieces(active[current[active] < 0], pu, pd, have, count_have, inflight, avail,
                      tie_order, queue, current, packed)
        flowing = active[current[active] >= 0]
        if flowing.size == 0:
            raise TomographyError("the swarm stalled: no peer can upload to another (is the "
                                  "peer graph disconnected?)")
        f_idx, r_idx = net.incidence(pu[flowing], pd[flowing])
        rates = max_min_rates(net.capacity, f_idx, r_idx, flowing.size,
                              weights=weight[flowing],
                              caps=connections.caps(flowing, t) * 8.0) / 8.0   # bytes/s
        ceiling = None
        if connections.held(flowing, rates).any():   # what they would get without the window
            ceiling = max_min_rates(net.capacity, f_idx, r_idx, flowing.size,
                                    weights=weight[flowing],
                                    caps=connections.other_caps(flowing) * 8.0) / 8.0
        moving = rates > 0
        typical = np.quantile(rates[moving], STEP_QUANTILE) if moving.any() else 1.0
        dt = float(np.clip(piece / typical, 1e-4, 1.0))
        dt = min(dt, min(params.time_limit, box) - t + 1e-9)
        got = connections.advance(flowing, rates, dt, t, ceiling)
        progress[flowing] += got
        choker.moved(flowing, got)
        t += dt
        steps += 1
        redundant += complete_pieces(flowing, pu, pd, have, count_have, inflight, avail,
                                     tie_order, queue, current, packed, progress, piece_bytes,
                                     piece_blocks, counts, incoming, incoming_ptr)


def _check_ranges(topology: Topology) -> None:
    """Refuse a topology built in Python with a quantity a file could not give.

    A topology read from a file is checked as it is parsed; one made or scaled
    in Python is checked here, before anything is simulated or written (a
    capacity of 1e-300 bit/s or an infinite latency would divide by zero).
    """
    where = topology.source or topology.name
    for link in topology.links:
        for end in (link.a, link.b):
            capacity = link.capacity_from(end)
            if capacity != 0 or link.symmetric:
                _within(capacity, "bandwidth", f"{where}: link {link.a}-{link.b} capacity")
        _within(link.latency, "time", f"{where}: link {link.a}-{link.b} latency")
    for group in topology.clusters:
        for value, kind, name in ((group.nic_up, "bandwidth", "nic_up"),
                                  (group.nic_down, "bandwidth", "nic_down"),
                                  (group.latency, "time", "latency")):
            _within(value, kind, f"{where}: cluster {group.name} {name}")


def _within(value: float, kind: str, what: str) -> None:
    try:
        check_quantity(value, kind)
    except ParameterError as exc:
        raise ParameterError(f"{what}: {exc}") from None


def simulate(topology: Topology | str | os.PathLike[str], output: str | os.PathLike[str], *,
             iterations: int, file_size: int | str, seed: int = 0, params: SwarmParams = SwarmParams(),
             tcp: TcpModel = TcpModel(), resume: bool = False, overwrite: bool = False,
             progress: Callable[[int, BroadcastResult], None] | None = None) -> Path:
    """Simulate ``iterations`` broadcasts with rotating roots and write the dataset.

    Each iteration is written when it completes; with ``resume`` a dataset
    made by the same command continues where it stopped.  Iteration ``i``
    draws its randomness from ``(seed, i)``, so a resumed run gives the same
    dataset as an uninterrupted one.

    Parameters
    ----------
    topology : Topology, or a topology file or built-in scenario name
    output : path
        The dataset directory.
    iterations : int
        Total iterations wanted (including those already there with ``resume``).
    file_size : int or str
        Bytes broadcast per iteration, or a size with its unit (``"16MiB"``).
    seed : int
    params : SwarmParams
    tcp : TcpModel
        The connection model, recorded under ``params["tcp"]``.
    resume : bool
        Continue an existing dataset made with the same topology, size, seed
        and parameters.
    overwrite : bool
        Replace an existing dataset.
    progress : callable, optional
        Called with ``(iteration, result)`` after each iteration.

    Returns
    -------
    Path
        The dataset directory.

    Examples
    --------
    >>> import tempfile
    >>> from tomography.model.topology import read_topology
    >>> d = simulate(read_topology("tree-5"), tempfile.mkdtemp() + "/sim", iterations=2,
    ...              file_size=2**20, seed=3)
    >>> read_measurement(d).iteration_ids
    [0, 1]
    """
    if not isinstance(topology, Topology):
        topology = read_topology(topology)
    _check_ranges(topology)
    if isinstance(file_size, str):
        file_size = parse_size(file_size)
    if iterations < 1:
        raise ParameterError(f"iterations must be >= 1, got {iterations}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ParameterError(f"seed must be a non-negative integer, got {seed!r}")
    hosts = sorted(h.name for h in topology.hosts)
    sim_params = {"model": "flow-level-tcp", "file_size": file_size, "seed": seed,
                  **asdict(params), "piece_bytes": params.piece_bytes(file_size),
                  "choker": "triggered-rounds", "tcp": asdict(tcp)}
    out = Path(output)
    if resume and (out / "meta.json").exists():
        writer = MeasurementWriter.reopen(out)
        existing = read_measurement(out)
        if existing.meta.get("topology") != topology.name:
            raise DatasetError(f"cannot resume: the dataset was made with another topology "
                               f"({existing.meta.get('topology')!r}, not {topology.name!r})",
                               path=out / "meta.json", field="topology")
        refuse_other_params(existing.meta, sim_params, out / "meta.json")
        start = len(existing.iteration_ids)
    else:
        writer = MeasurementWriter(out, {"method": "simulated", "topology": topology.name,
                                         "topology_model": topology.raw, "params": sim_params},
                                   topology.host_table(), overwrite=overwrite)
        start = 0
    roots = RootChooser(hosts, seed, params.roots)
    if start:
        roots.replay(existing)
    net = _Network(topology, hosts)
    for i in range(start, iterations):
        root = roots.next()
        result = simulate_broadcast(topology, hosts, root, file_size, params=params, tcp=tcp,
                                    seed=np.random.default_rng([seed, i]), network=net)
        r, s, blocks = result.transfers()
        roots.add(root, r, s, blocks)
        writer.add_iteration(i, root=root, nbytes=file_size, duration_s=result.duration,
                             complete=result.complete,
                             transfers=[(hosts[a], hosts[b], k) for a, b, k in
                                        zip(r.tolist(), s.tolist(), blocks.tolist())])
        if progress is not None:
            progress(i, result)
    return out
