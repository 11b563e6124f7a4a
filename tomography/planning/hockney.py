"""Model-based broadcast trees: Hockney's ``t(i, j, m) = alpha_ij + beta_ij m`` per pair.

The throughput planners (:mod:`~tomography.planning.balanced`) maximise a
stream's rate; a collective library sending one message wants the shortest
completion time, which depends on each pair's latency as much as on its
bandwidth.  NetPIPE measures both (``tomography measure netpipe``: ``alpha_s``
and ``beta_s_per_byte`` per ordered pair).

* :class:`HockneyModel`: alpha and beta per ordered pair, from a NetPIPE
  dataset (:meth:`HockneyModel.from_probes`) or from a planners' network
  (:meth:`HockneyModel.from_network`: beta = 1 / bandwidth, alpha = the
  Gauge file's one-way delays or 0);
* :func:`binomial_tree`: the binomial broadcast tree (each round, every node
  that holds the message sends it to one that does not, so the informed
  set doubles) with *minimum-first* mapping: in each round the pairs with
  the smallest predicted time are matched first, as CPM/MPIBlib's
  model-based collectives do;
* :func:`broadcast_time`: the predicted completion time of any tree for a
  message of ``m`` bytes, each node sending to its children one after the
  other, fastest first.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tomography.model.errors import TomographyError
from tomography.planning.network import Network
from tomography.planning.trees import Tree
from tomography.model.units import bandwidth_unit

__all__ = ["HockneyModel", "binomial_tree", "broadcast_time"]


@dataclass(frozen=True)
class HockneyModel:
    """Latency ``alpha`` (s) and inverse bandwidth ``beta`` (s/byte) per ordered pair.

    Unmeasured pairs are ``inf`` (never used).

    Examples
    --------
    >>> model = HockneyModel(["a", "b"], np.array([[0, 1e-4], [1e-4, 0]]),
    ...                      np.array([[0, 8e-9], [8e-9, 0]]))
    >>> float(model.time(1 << 20)[0, 1])   # 1 MiB over 1 Gbit/s after 100 us
    0.008488608
    """

    nodes: list[str]
    alpha: np.ndarray
    beta: np.ndarray

    def time(self, message: float) -> np.ndarray:
        """Predicted time of a ``message``-byte transfer per ordered pair, in s."""
        t = self.alpha + self.beta * float(message)
        np.fill_diagonal(t, 0.0)
        return t

    @classmethod
    def from_network(cls, network: Network, delays: np.ndarray | None = None
                     ) -> "HockneyModel":
        """beta = 1 / achievable bandwidth, alpha = the one-way ``delays`` (s) or 0.

        Examples
        --------
        >>> from tomography.planning.network import lp_example
        >>> m = HockneyModel.from_network(Network(["a", "b"], [1, 1], [1, 1], [[0, 8], [0, 0]],
        ...                                       unit="Mbit/s"))
        >>> float(m.beta[0, 1]), bool(np.isinf(m.beta[1, 0]))
        (1e-06, True)
        """
        rate = network.bandwidth * (bandwidth_unit(network.unit) / 8
                                    if network.unit else 1.0)  # bytes/s
        with np.errstate(divide="ignore"):
            beta = np.where(rate > 0, 1.0 / np.where(rate > 0, rate, 1.0), np.inf)
        alpha = np.zeros_like(beta) if delays is None else np.asarray(delays, dtype=float)
        return cls(list(network.nodes), alpha, beta)

    @classmethod
    def from_probes(cls, measurement) -> "HockneyModel":
        """Per ordered pair, the median alpha and beta of a NetPIPE dataset's tests.

        A pair measured one way only takes the other direction's figures.

        Raises
        ------
        TomographyError
            When the dataset has no NetPIPE fits.
        """
        probes = measurement.probes
        if probes is None or "alpha_s" not in probes or probes["alpha_s"].notna().sum() == 0:
            raise TomographyError("the dataset has no Hockney fits: measure with "
                                  "tomography measure netpipe")
        ok = probes[probes["alpha_s"].notna() & probes["beta_s_per_byte"].notna()]
        nodes = measurement.host_names
        index = {h: i for i, h in enumerate(nodes)}
        n = len(nodes)
        alpha, beta = np.full((n, n), np.inf), np.full((n, n), np.inf)
        for (src, dst), group in ok.groupby(["src", "dst"]):
            i, j = index[src], index[dst]
            alpha[i, j] = group["alpha_s"].median()
            beta[i, j] = group["beta_s_per_byte"].median()
        for a in (alpha, beta):
            missing = np.isinf(a) & ~np.isinf(a.T)
            a[missing] = a.T[missing]
            np.fill_diagonal(a, 0.0)
        return cls(list(nodes), alpha, beta)


def binomial_tree(model: HockneyModel, root: str, message: float) -> tuple[Tree, float]:
    """The binomial broadcast tree with minimum-first mapping, and its predicted time.

    Each round every informed node sends to one uninformed node; the
    round's pairs are matched smallest predicted time first; a round lasts
    as long as its slowest transfer.

    Parameters
    ----------
    model : HockneyModel
    root : str
    message : float
        Bytes broadcast.

    Returns
    -------
    tree : Tree
    seconds : float
        Predicted completion time (sum of the rounds).

    Raises
    ------
    TomographyError
        When some node cannot be reached (no measured pair leads to it).

    Examples
    --------
    >>> a = np.full((4, 4), 1e-3); b = np.full((4, 4), 1e-8)   # 1 ms, 800 Mbit/s...
    >>> b[0, 3] = b[3, 0] = 1e-9                              # ... but 8 Gbit/s from 0 to 3
    >>> tree, seconds = binomial_tree(HockneyModel(list("abcd"), a, b), "a", 1e6)
    >>> tree.parent, round(seconds, 4)   # a -> d first (fastest), then a -> b and d -> c
    ((-1, 0, 3, 0), 0.013)
    """
    r = _root_index_of(model, root)
    t = model.time(message)
    n = len(model.nodes)
    parent = [-1] * n
    informed = [r]
    left = set(range(n)) - {r}
    total = 0.0
    while left:
        pairs = sorted((t[i, j], i, j) for i in informed for j in left if np.isfinite(t[i, j]))
        busy: set[int] = set()
        taken: set[int] = set()
        longest = 0.0
        for cost, i, j in pairs:
            if i in busy or j in taken:
                continue
            parent[j] = i
            busy.add(i)
            taken.add(j)
            longest = max(longest, float(cost))
        if not taken:
            raise TomographyError(f"no spanning tree from {root!r} over live links: it cannot "
                                  f"reach {', '.join(model.nodes[v] for v in sorted(left))}")
        informed += sorted(taken)
        left -= taken
        total += longest
    return Tree(r, tuple(parent)), total


def broadcast_time(model: HockneyModel, tree: Tree, message: float) -> float:
    """Predicted time for ``tree`` to broadcast ``message`` bytes.

    Each node, once it holds the message, sends it to its children one
    after the other, the fastest transfer first.

    Examples
    --------
    >>> a, b = np.zeros((3, 3)), np.full((3, 3), 1e-6)
    >>> flat = Tree(0, (-1, 0, 0))
    >>> broadcast_time(HockneyModel(list("abc"), a, b), flat, 1000)   # two sends in a row
    0.002
    """
    t = model.time(message)
    children: dict[int, list[int]] = {}
    for v, p in enumerate(tree.parent):
        if p >= 0:
            children.setdefault(p, []).append(v)
    done = {tree.root: 0.0}
    stack = [tree.root]
    while stack:
        i = stack.pop()
        clock = done[i]
        for j in sorted(children.get(i, []), key=lambda c: t[i, c]):
            clock += t[i, j]
            done[j] = clock
            stack.append(j)
    return float(max(done.values()))


def _root_index_of(model: HockneyModel, root: str) -> int:
    try:
        return model.nodes.index(root)
    except ValueError:
        raise TomographyError(f"unknown node {root!r}; the nodes are "
                              f"{', '.join(model.nodes)}") from None
