"""Throughput of multicast trees under the local-capacity model (den Burger et al. 2005, 3).

Every tree sends at one rate on all its links (a pipeline).  The resources
are those of :class:`tomography.planning.network.Network`: the outgoing
capacity of each node (a node with ``d`` children in a tree carries ``d``
flows of it), the incoming capacity of each node (one flow per tree, for
every node but the root) and the achievable bandwidth of each ordered pair
(one flow per tree that uses the link), and each shared link of the network
(one flow per tree edge over one of the pairs that cross it).
:func:`resources` writes this as a matrix, the constraints of the balanced
multicasting LP.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, Sequence

import numpy as np
from numpy.typing import ArrayLike
from scipy import sparse

from tomography.model.errors import TomographyError
from tomography.planning.network import Network
from tomography.planning.trees import Tree

__all__ = ["Resources", "Prediction", "resources", "edge_prices", "predict"]


@dataclass(frozen=True, eq=False)
class Resources:
    """The shared resources a set of trees uses, and how much of each.

    Attributes
    ----------
    names : list of str
        ``"out x"`` (outgoing capacity of ``x``), ``"in y"`` (incoming
        capacity of ``y``), ``"x -> y"`` (the link) or ``"shared NAME"``
        (a :class:`~tomography.planning.network.SharedLink`), for each
        resource used by at least one tree.
    capacity : array of float
        Its capacity.
    usage : scipy.sparse.csr_array, shape (resources, trees)
        Flows of each tree through each resource: the tree's out-degree
        at a node, 1 for a receiver or a link the tree uses.
    position : array of int
        Where each resource stands among all of the network's: ``x`` for
        ``"out x"``, ``n + y`` for ``"in y"``, ``2 n + x n + y`` for
        ``"x -> y"``, ``2 n + n^2 + s`` for the ``s``-th shared link
        (``n`` nodes, indices in the network's order).
    """

    names: list[str]
    capacity: np.ndarray
    usage: sparse.csr_array
    position: np.ndarray


class Prediction(NamedTuple):
    """Predicted rate of each tree and their sum, the multicast throughput."""

    throughput: float
    rates: np.ndarray


def resources(network: Network, trees: Sequence[Tree] | np.ndarray) -> Resources:
    """The resources used by ``trees``: the constraints ``usage @ rates <= capacity``.

    Parameters
    ----------
    network : Network
    trees : list of Tree, or array of int, shape (trees, n)
        Trees, or their parent rows (-1 at the root) as from
        :func:`tomography.planning.trees.arborescences`.

    Examples
    --------
    The LP of den Burger et al. 2005, Fig 3 over the three FPFR trees ``a``, ``b``, ``c``:

    >>> from tomography.planning.network import lp_example
    >>> from tomography.planning.trees import fpfr_trees
    >>> net = lp_example()
    >>> res = resources(net, fpfr_trees(net, "x")[0])
    >>> for name, row, cap in zip(res.names, res.usage.toarray(), res.capacity):
    ...     print(f"{name:7} {row.tolist()} <= {cap}")
    out x   [1.0, 2.0, 1.0] <= 10.0
    out y   [1.0, 0.0, 0.0] <= 10.0
    out z   [0.0, 0.0, 1.0] <= 10.0
    in y    [1.0, 1.0, 1.0] <= 10.0
    in z    [1.0, 1.0, 1.0] <= 10.0
    x -> y  [1.0, 1.0, 0.0] <= 10.0
    x -> z  [0.0, 1.0, 1.0] <= 8.0
    y -> z  [1.0, 0.0, 0.0] <= 4.0
    z -> y  [0.0, 0.0, 1.0] <= 4.0

    Two trees whose edges cross one shared link each use it:

    >>> from tomography.planning.network import Network, SharedLink
    >>> from tomography.planning.trees import Tree
    >>> net = Network(["w", "e1", "e2"], [9, 9, 9], [9, 9, 9], [[0, 5, 5], [5, 0, 9], [5, 9, 0]],
    ...               shared=(SharedLink("w -> e", 6, [("w", "e1"), ("w", "e2")]),))
    >>> res = resources(net, [Tree(0, (-1, 0, 1)), Tree(0, (-1, 2, 0))])
    >>> res.names[-1], res.usage.toarray()[-1].tolist(), float(res.capacity[-1])
    ('shared w -> e', [1.0, 1.0], 6.0)
    """
    parents = _parent_rows(network, trees)
    n = network.size
    tree_index, child = np.nonzero(parents >= 0)
    parent = parents[tree_index, child]
    rows = np.concatenate([parent, n + child, 2 * n + parent * n + child])
    cols = np.tile(tree_index, 3)
    usage = sparse.csr_array((np.ones(len(rows)), (rows, cols)), shape=(2 * n + n * n,
                                                                         len(parents)))
    names = ([f"out {x}" for x in network.nodes] + [f"in {x}" for x in network.nodes]
             + [f"{x} -> {y}" for x in network.nodes for y in network.nodes])
    capacity = np.concatenate([network.out_capacity, network.in_capacity,
                               network.bandwidth.ravel()])
    if network.shared:   # a tree uses a shared link once per edge over one of its pairs
        usage = sparse.vstack([usage, _crossing(network) @ usage]).tocsr()
        names += [f"shared {link.name}" for link in network.shared]
        capacity = np.concatenate([capacity, [link.capacity for link in network.shared]])
    used = np.flatnonzero(np.diff(usage.indptr))
    return Resources([names[i] for i in used], capacity[used], usage[used], used)


def edge_prices(network: Network, prices: np.ndarray) -> np.ndarray:
    """What a flow over each edge ``u -> v`` pays: the prices of the resources it uses.

    Parameters
    ----------
    network : Network
    prices : array of float
        A price for each of the network's resources, in the order of
        :attr:`Resources.position` (``2 n + n^2`` plus one per shared link).

    Returns
    -------
    array of float, shape (n, n)
        The price of ``u``'s capacity out, ``v``'s in, the link ``u -> v`` and
        every shared link the pair crosses; ``inf`` over a dead link.  A tree
        pays the sum of its edges'.

    Examples
    --------
    >>> from tomography.planning.network import lp_example
    >>> net = lp_example()
    >>> prices = np.zeros(2 * 3 + 9)
    >>> prices[0], prices[3 + 2], prices[6 + 0 * 3 + 2] = 1.0, 0.5, 0.25   # out x, in z, x -> z
    >>> edge_prices(net, prices)[0].tolist()
    [inf, 1.0, 1.75]
    """
    n = network.size
    edge = prices[:n, None] + prices[None, n:2 * n] + prices[2 * n:2 * n + n * n].reshape(n, n)
    if network.shared:
        edge = edge + (_crossing(network).T @ prices[2 * n + n * n:])[2 * n:].reshape(n, n)
    return np.where(network.live, edge, np.inf)


def predict(network: Network, trees: Sequence[Tree], rates: ArrayLike | None = None, *,
            coordinated: bool) -> Prediction:
    """Throughput the trees get together when they share the network.

    Parameters
    ----------
    network : Network
    trees : list of Tree
    rates : array of float, optional
        With ``coordinated=True`` (required): the rate of each tree.
    coordinated : bool
        True for trees whose rates are shaped at the root (balanced
        multicasting): the rates are taken as they are, once checked to fit
        every resource.  False for trees that each send as fast as they can
        (FPFR, or a single tree): the rates follow from fair sharing.

    Returns
    -------
    Prediction
        ``throughput`` (the sum of the rates) and ``rates``, per tree.

    Notes
    -----
    Uncoordinated trees share each resource equally per flow, as TCP
    streams do: max-min fairness, computed by progressive filling.  All
    trees start at rate 0 and speed up together, each flow of every tree
    at the same pace (a tree with ``d`` flows through a resource uses ``d``
    times its rate of it).  When a resource is full, every tree through it
    stops at its current rate; the others go on, sharing what is left,
    until every tree has stopped.  A tree's rate is thus an equal share
    ``capacity / flows`` of the first resource to fill, counting flows of
    trees stopped earlier at their smaller rate.

    One tree alone gets the minimum, over its links, of their bandwidth
    and, over its nodes, of their outgoing capacity divided by their number
    of children and of their incoming capacity.

    On the LP example (den Burger et al. 2005, section 2.3) the root's outgoing capacity of 10
    carries four flows (trees ``a`` and ``c`` have one child of the root,
    ``b`` two); every other resource allows more than 10/4 per flow, so
    it fills first and each tree gets 2.5: 7.5 instead of the 12 FPFR
    reserved.  On the four-host example (den Burger 2009, Fig 3.5) the root carries six
    flows of four trees: 10/6 each, 6.7 instead of 20.

    Examples
    --------
    >>> from tomography.planning.network import lp_example
    >>> from tomography.planning.trees import fpfr_trees
    >>> net = lp_example()
    >>> trees, reserved = fpfr_trees(net, "x")
    >>> predict(net, trees, coordinated=False).rates.tolist()
    [2.5, 2.5, 2.5]
    >>> predict(net, trees, [4, 1, 4], coordinated=True).throughput
    9.0
    >>> predict(net, trees, reserved, coordinated=True)
    Traceback (most recent call last):
    ...
    tomography.model.errors.TomographyError: the rates need 18 of out x, which has 10
    """
    res = resources(network, trees)
    if not coordinated:
        if rates is not None:
            raise TomographyError("uncoordinated trees are not shaped, their rates follow from "
                                  "sharing: give rates only with coordinated=True")
        shares = _max_min(res.usage.toarray(), res.capacity)
        return Prediction(float(shares.sum()), shares)
    if rates is None:
        raise TomographyError("coordinated trees need their rates")
    given = np.asarray(rates, dtype=float)
    if given.shape != (len(trees),):
        raise TomographyError(f"{given.size} rates for {len(trees)} trees")
    if not np.isfinite(given).all() or (given < 0).any():
        raise TomographyError(f"rates must be finite and non-negative, got {given.tolist()}")
    load = res.usage @ given
    excess = load - res.capacity * (1 + 1e-9) - 1e-12
    if (excess > 0).any():
        worst = int(np.argmax(excess))
        raise TomographyError(f"the rates need {load[worst]:.6g} of {res.names[worst]}, "
                              f"which has {res.capacity[worst]:.6g}")
    return Prediction(float(given.sum()), given)


def _crossing(network: Network) -> sparse.csr_array:
    """Which links each shared link carries: shape (shared links, ``2 n + n^2``), 1 at the
    position of each of its pairs' links."""
    n = network.size
    return sparse.csr_array(
        (np.ones(sum(len(link.pairs) for link in network.shared)),
         ([i for i, link in enumerate(network.shared) for _ in link.pairs],
          [2 * n + network.index(a) * n + network.index(b)
           for link in network.shared for a, b in link.pairs])),
        shape=(len(network.shared), 2 * n + n * n))


def _parent_rows(network: Network, trees: Sequence[Tree] | np.ndarray) -> np.ndarray:
    if network.size < 2:
        raise TomographyError("a multicast needs at least two nodes")
    if isinstance(trees, np.ndarray):
        parents = trees
    else:
        parents = np.array([t.parent for t in trees], dtype=int).reshape(len(trees), -1)
    if parents.shape[1] != network.size:
        raise TomographyError(f"trees over {parents.shape[1]} nodes for a network of "
                              f"{network.size}")
    return parents


def _max_min(usage: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """Max-min fair rates of the columns of ``usage`` under ``usage @ rates <= capacity``."""
    rates = np.zeros(usage.shape[1])
    active = np.ones(usage.shape[1], dtype=bool)
    left = capacity.astype(float)
    while active.any():
        load = usage[:, active].sum(axis=1)
        through = load > 0
        ratio = np.full(len(load), np.inf)
        ratio[through] = left[through] / load[through]
        step = ratio.min()
        rates[active] += step
        left = left - load * step
        full = through & (ratio <= step * (1 + 1e-12))
        left[full] = 0.0
        active &= ~(usage[full] > 0).any(axis=0)
    return rates
