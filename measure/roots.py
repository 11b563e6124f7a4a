"""Where each broadcast starts: roots spread over the network by the data so far.

A broadcast favours the root's neighbourhood: the hosts near the root get
the file first and exchange it among themselves while the far hosts are
still waiting for it.  A broadcast cut at a block quota
(:class:`measure.swarm.SwarmParams`) makes this a bias: it ends once the far
hosts hold the quota, when the root's cluster already holds the whole file,
so the clusters that held the most roots weigh more in ``w_n`` and come
apart first.  Rotating the root through a random permutation of the hosts
spreads the roots over the clusters only on average: six roots drawn from
two sites of ten hosts fall 4-2 or worse in two runs of three.

:class:`RootChooser` spreads them by what the iterations so far measured,
at every scale.  The first root is the first host of the seeded permutation
(:func:`measure.swarm.root_order`).  For each next one, the hosts are cut in
two where the summed counts so far are weakest (the sign of the Fiedler
vector of their normalised Laplacian: the two sites, once one broadcast
has run), and the side with fewer roots per host is kept; it is cut in two
again, and so on, until a part that has had no root yet (or whose hosts
have all been roots equally often): its host first in the permutation among
those used least often is the root.  The second root therefore lands in
the other site, the next ones in the clusters that have had fewest, and
after ``k`` iterations every group the data can tell apart has held about
its share, in proportion to its hosts.  The cuts are deterministic, so a
seed gives one sequence of roots for the same data.  ``roots="random"``
keeps the plain rotation through the permutation.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from scipy import sparse
from scipy.linalg import eigh
from scipy.sparse.csgraph import connected_components
from scipy.sparse.linalg import eigsh

from measure.swarm import ROOT_CHOICES, root_order
from tomography.model.errors import ParameterError

__all__ = ["RootChooser"]

DENSE = 512
"""Largest graph cut with a dense eigensolver; above, Lanczos iterations on the sparse counts."""


class RootChooser:
    """The root of each broadcast of a run, chosen from the counts of the broadcasts before it.

    Parameters
    ----------
    hosts : sequence of str
        The run's hosts.
    seed : int
        The run's seed: the first root, and the order among equal candidates.
    how : {"spread", "random"}, default "spread"
        Spread the roots by the data so far, or rotate through the seeded
        permutation of the hosts.

    Examples
    --------
    Two groups of three hosts; the first broadcast, from ``a0``, showed them:

    >>> chooser = RootChooser(["a0", "a1", "a2", "b0", "b1", "b2"], seed=0)
    >>> first = chooser.next()
    >>> receivers = ["a1", "a2", "a0", "a2", "b0", "b1", "b2", "b0"]
    >>> senders = ["a0", "a1", "a2", "a0", "b1", "b2", "b0", "a1"]
    >>> chooser.add(first, receivers, senders, [90, 80, 70, 85, 40, 45, 50, 10])
    >>> first[0] != chooser.next()[0]          # the second root is in the other group
    True
    """

    def __init__(self, hosts: Sequence[str], seed: int, how: str = "spread") -> None:
        if how not in ROOT_CHOICES:
            raise ParameterError(f"roots must be one of {', '.join(ROOT_CHOICES)}, got {how!r}")
        self.hosts = list(hosts)
        self.how = how
        self.order = root_order(self.hosts, seed)
        self.index = {h: i for i, h in enumerate(self.hosts)}
        self.rank = np.empty(len(self.hosts), dtype=np.int64)
        self.rank[[self.index[h] for h in self.order]] = np.arange(len(self.hosts))
        self.roots: list[int] = []
        self._rows: list[np.ndarray] = []
        self._cols: list[np.ndarray] = []
        self._blocks: list[np.ndarray] = []

    def add(self, root: str, receivers: Sequence[str] | np.ndarray,
            senders: Sequence[str] | np.ndarray, blocks: Sequence[int] | np.ndarray) -> None:
        """Record a finished broadcast: its root and its counts (host names or indices).

        Counts between hosts outside the run are left out.
        """
        self.roots.append(self.index[root])
        r, s = self._indices(receivers), self._indices(senders)
        b = np.asarray(blocks, dtype=float)
        keep = (r >= 0) & (s >= 0) & (r != s)
        self._rows.append(r[keep])
        self._cols.append(s[keep])
        self._blocks.append(b[keep])

    def replay(self, measurement: Any) -> None:
        """Record the broadcasts of a dataset being resumed (a
        :class:`tomography.model.dataset.Measurement`), in order."""
        transfers = measurement.transfers
        for i, root in zip(measurement.iterations["iteration"], measurement.iterations["root"]):
            rows = transfers[transfers["iteration"] == i]
            self.add(str(root), rows["receiver"].to_numpy(), rows["sender"].to_numpy(),
                     rows["blocks"].to_numpy())

    def _indices(self, names: Sequence[str] | np.ndarray) -> np.ndarray:
        names = np.asarray(names)
        if names.dtype.kind in "iu":
            return names.astype(np.int64)
        return np.array([self.index.get(str(h), -1) for h in names], dtype=np.int64)

    def next(self) -> str:
        """The root of the next broadcast."""
        n, done = len(self.hosts), len(self.roots)
        if self.how == "random" or done == 0:
            return self.order[done % n]
        uses = np.bincount(self.roots, minlength=n)
        rows, cols = np.concatenate(self._rows), np.concatenate(self._cols)
        counts = sparse.coo_array((np.concatenate(self._blocks), (rows, cols)),
                                  shape=(n, n)).tocsr()
        counts = sparse.csr_array(counts + counts.T)
        part = np.arange(n)
        while len(part) > 1 and uses[part].min() != uses[part].max():
            side = _halves(counts[part][:, part])
            if side.all() or not side.any():
                break
            halves = [part[side], part[~side]]
            share = [uses[h].sum() / len(h) for h in halves]
            part = halves[int(np.argmin(share))] if share[0] != share[1] else \
                min(halves, key=lambda h: (-len(h), self.rank[h].min()))
        least = part[uses[part] == uses[part].min()]
        return self.hosts[int(least[np.argmin(self.rank[least])])]


def _halves(w: sparse.csr_array) -> np.ndarray:
    """The two sides of the weakest cut of a weighted graph (True: one side).

    Unconnected groups: the largest against the rest; else the sign of the
    Fiedler vector of the normalised Laplacian (deterministic: a fixed start
    vector for the sparse solver).
    """
    n = w.shape[0]
    parts, comp = connected_components(w, directed=False)
    if parts > 1:
        return comp == np.bincount(comp).argmax()
    degree = np.asarray(w.sum(axis=1)).ravel()
    scale = 1.0 / np.sqrt(degree)
    normalised = sparse.diags_array(scale) @ w @ sparse.diags_array(scale)
    if n <= DENSE:
        values, vectors = eigh(normalised.toarray())
        fiedler = vectors[:, -2]
    else:
        values, vectors = eigsh(normalised, k=2, which="LA", v0=np.linspace(1.0, 2.0, n))
        fiedler = vectors[:, int(np.argmin(values))]
    fiedler = fiedler * scale
    if fiedler[np.argmax(np.abs(fiedler))] < 0:   # the sign of an eigenvector is arbitrary
        fiedler = -fiedler
    return fiedler > 0

