"""The multicast planners' network model (docs/method.md section 2.2).

Every node (a host, or a cluster modelled as one host) has a local capacity
for outgoing and for incoming data: its network card or the access link of
its site.  Every ordered pair of nodes has an achievable bandwidth over the
wide area.  Data sent from ``x`` to ``y`` goes through the outgoing capacity
of ``x``, the link ``x -> y`` and the incoming capacity of ``y``; the two
directions are independent.  An achievable bandwidth of 0 is a dead link
(den Burger et al. 2005, section 4.1: firewalls), never used by any planner.

Links that several pairs cross (the uplink of a site, the link between two
regions) are :class:`SharedLink` entries: one capacity for all the pairs
whose traffic crosses it, so that every planner's prediction counts the
flows that share it.

Three fixtures: :func:`lp_example` (den Burger et al. 2005, Fig 2/3), :func:`four_host_example`
(den Burger 2009, Fig 3.5) and :func:`gridlab8` (den Burger 2009, Tables 3.1 and 3.2).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
from numpy.typing import ArrayLike

from tomography.model.errors import TomographyError
from tomography.model.units import bandwidth_unit

__all__ = ["Network", "SharedLink", "checked_links", "lp_example", "four_host_example", "gridlab8"]


@dataclass(frozen=True)
class SharedLink:
    """A link that the traffic of several node pairs crosses, with one capacity for all.

    Attributes
    ----------
    name : str
        What the link is, in words (``"west -> east"``, ``"uplink of site w"``).
    capacity : float
        What the link carries for all its pairs together, in the network's unit.
    pairs : tuple of (str, str)
        The ordered node pairs ``(from, to)`` whose traffic crosses it.

    Examples
    --------
    >>> SharedLink("w -> e", 10.0, (("w1", "e1"), ("w2", "e1"))).pairs[1]
    ('w2', 'e1')
    """

    name: str
    capacity: float
    pairs: tuple[tuple[str, str], ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "pairs", tuple((str(a), str(b)) for a, b in self.pairs))
        object.__setattr__(self, "capacity", float(self.capacity))


@dataclass(frozen=True, eq=False)
class Network:
    """Nodes with local capacities and achievable bandwidth between them.

    Parameters
    ----------
    nodes : list of str
        Unique names, in the order of the arrays.
    out_capacity, in_capacity : array of float, shape (n,)
        Local capacity of each node for outgoing and incoming data.
    bandwidth : array of float, shape (n, n)
        Achievable bandwidth from row to column; 0 is a dead link.  The
        diagonal is ignored (stored as 0).
    unit : str, default "MiB/s"
        Unit of every number, as :func:`tomography.model.units.bandwidth_unit`
        reads it (``"MiB/s"`` is the thesis' MB/s of 2^20 bytes,
        ``"Mbit/s"`` is 10^6 bits/s), or ``""`` for the unitless examples
        of the papers.
    shared : tuple of SharedLink, default ()
        Links that several pairs cross: every tree edge over one of its
        pairs uses its capacity too.

    Raises
    ------
    TomographyError
        (a ValueError) naming the field, and the node or pair, at fault:
        wrong shapes, negative, NaN or infinite values, duplicate names,
        unknown unit.

    Examples
    --------
    >>> net = Network(["a", "b"], [10, 10], [10, 10], [[0, 4], [3, 0]], unit="Mbit/s")
    >>> net.size, net.index("b"), float(net.bandwidth[0, 1])
    (2, 1, 4.0)
    >>> Network(["a", "b"], [10, 10], [10, 10], [[0, -4], [3, 0]])
    Traceback (most recent call last):
    ...
    tomography.model.errors.TomographyError: bandwidth a -> b is negative: -4.0
    >>> Network(["a", "b"], [10, 10], [10, 10], [[0, 4], [3, 0]],
    ...         shared=(SharedLink("x", 2, [("a", "c")]),))
    Traceback (most recent call last):
    ...
    tomography.model.errors.TomographyError: shared link 'x': pair a -> c names an unknown node
    """

    nodes: list[str]
    out_capacity: np.ndarray
    in_capacity: np.ndarray
    bandwidth: np.ndarray
    unit: str = "MiB/s"
    shared: tuple[SharedLink, ...] = ()

    def __post_init__(self) -> None:
        nodes = [str(x) for x in self.nodes]
        if not nodes:
            raise TomographyError("a network needs at least one node")
        seen: set[str] = set()
        for name in nodes:
            if name in seen:
                raise TomographyError(f"node {name!r} is listed twice")
            seen.add(name)
        n = len(nodes)
        out_cap = _values("out_capacity", self.out_capacity, (n,), nodes)
        in_cap = _values("in_capacity", self.in_capacity, (n,), nodes)
        bandwidth = _values("bandwidth", self.bandwidth, (n, n), nodes)
        if self.unit:
            try:
                bandwidth_unit(self.unit)
            except ValueError as exc:
                raise TomographyError(f"{exc}, or '' for none") from None
        for array in (out_cap, in_cap, bandwidth):
            array.flags.writeable = False
        object.__setattr__(self, "shared", checked_links(self.shared, seen))
        object.__setattr__(self, "nodes", nodes)
        object.__setattr__(self, "out_capacity", out_cap)
        object.__setattr__(self, "in_capacity", in_cap)
        object.__setattr__(self, "bandwidth", bandwidth)

    @classmethod
    def from_arrays(cls, bandwidth: ArrayLike, *, capacity: ArrayLike | float | None = None,
                    out_capacity: ArrayLike | float | None = None,
                    in_capacity: ArrayLike | float | None = None,
                    nodes: Sequence[str] | None = None, unit: str = "MiB/s") -> "Network":
        """A network from a bandwidth matrix, with defaults for the rest.

        Parameters
        ----------
        bandwidth : array of float, shape (n, n)
            Achievable bandwidth, row = from, column = to.
        capacity : float or array, optional
            Both local capacities, unless ``out_capacity`` or
            ``in_capacity`` is given; a number applies to every node.
        out_capacity, in_capacity : float or array, optional
        nodes : list of str, optional
            Default ``h0, h1, ...``.
        unit : str, default "MiB/s"

        Examples
        --------
        >>> net = Network.from_arrays([[0, 5], [5, 0]], capacity=10, unit="")
        >>> net.nodes, net.out_capacity.tolist()
        (['h0', 'h1'], [10.0, 10.0])
        >>> Network.from_arrays([[0, 5], [5, 0]])
        Traceback (most recent call last):
        ...
        tomography.model.errors.TomographyError: out_capacity is missing: give capacity= or out_capacity=
        """
        matrix = np.asarray(bandwidth, dtype=float)
        n = matrix.shape[0] if matrix.ndim else 0
        names = list(nodes) if nodes is not None else [f"h{i}" for i in range(n)]

        def per_node(value: ArrayLike | float | None, field: str) -> np.ndarray:
            value = capacity if value is None else value
            if value is None:
                raise TomographyError(f"{field} is missing: give capacity= or {field}=")
            array = np.asarray(value, dtype=float)
            return np.full(len(names), float(array)) if array.ndim == 0 else array

        return cls(names, per_node(out_capacity, "out_capacity"),
                   per_node(in_capacity, "in_capacity"), matrix, unit=unit)

    @property
    def size(self) -> int:
        """Number of nodes."""
        return len(self.nodes)

    @property
    def live(self) -> np.ndarray:
        """Boolean matrix: True where the link row -> column can carry data.

        Examples
        --------
        >>> gridlab8().live[1].sum()   # n0 reaches only 3 of the 7 others
        np.int64(3)
        """
        return self.bandwidth > 0

    def index(self, node: str) -> int:
        """Position of ``node`` in :attr:`nodes`.

        Examples
        --------
        >>> lp_example().index("z")
        2
        >>> lp_example().index("w")
        Traceback (most recent call last):
        ...
        tomography.model.errors.TomographyError: unknown node 'w'; the nodes are x, y, z
        """
        try:
            return self.nodes.index(node)
        except ValueError:
            raise TomographyError(f"unknown node {node!r}; the nodes are "
                                  f"{', '.join(self.nodes)}") from None


def checked_links(links: Sequence[SharedLink], nodes: set[str], what: str = "node"
                  ) -> tuple[SharedLink, ...]:
    """The shared links, each checked: a finite capacity >= 0, pairs of two known ``what``s.

    Examples
    --------
    >>> checked_links([SharedLink("x", 1, [("a", "a")])], {"a", "b"}, "cluster")
    Traceback (most recent call last):
    ...
    tomography.model.errors.TomographyError: shared link 'x': pair a -> a names one cluster twice
    """
    out = []
    for link in links:
        if not isinstance(link, SharedLink):
            raise TomographyError(f"shared links must be SharedLink, got {link!r}")
        if not np.isfinite(link.capacity) or link.capacity < 0:
            raise TomographyError(f"shared link {link.name!r}: capacity must be finite and "
                                  f">= 0, got {link.capacity}")
        for a, b in link.pairs:
            if a not in nodes or b not in nodes or a == b:
                raise TomographyError(f"shared link {link.name!r}: pair {a} -> {b} names "
                                      + (f"one {what} twice" if a == b else f"an unknown {what}"))
        out.append(link)
    return tuple(out)


def _values(field: str, value: ArrayLike, shape: tuple[int, ...], nodes: list[str]) -> np.ndarray:
    """``value`` as a float array of ``shape``, finite and non-negative, else an error."""
    try:
        array = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise TomographyError(f"{field} is not an array of numbers") from None
    if array.shape != shape:
        what = "one per node" if len(shape) == 1 else "one row and column per node"
        raise TomographyError(f"{field} has shape {array.shape}, expected {shape} ({what})")
    if len(shape) == 2:
        np.fill_diagonal(array, 0.0)
    for problem, bad in (("NaN", np.isnan(array)), ("infinite", np.isinf(array)),
                         ("negative", array < 0)):
        if bad.any():
            where = tuple(int(i) for i in np.argwhere(bad)[0])
            name = " -> ".join(nodes[i] for i in where)
            detail = "" if problem == "NaN" else f": {array[where]}"
            raise TomographyError(f"{field} {name} is {problem}{detail}")
    return array


def lp_example() -> Network:
    """The three-host network of den Burger et al. 2005, Fig 2 (den Burger 2009, Figs 3.2-3.3).

    The root is ``x``.  The text gives the capacities (10 in and out everywhere) and the LP of
    Fig 3; the links are reconstructed from it: ``x <-> y`` 10, ``x <-> z``
    8, ``y <-> z`` 4, symmetric, as the text says.  They reproduce every
    number in the text: the maximum bottleneck tree (``x -> y``, ``x -> z``)
    gets 8 (den Burger 2009, Fig 3.2b); FPFR finds ``x -> y -> z`` at 4, the flat tree at
    6 and ``x -> z -> y`` at 2, 12 in all, and the LP over those trees has
    the constraints ``a + 2b + c <= 10`` (root), ``a + b <= 10``,
    ``b + c <= 8``, ``a <= 4``, ``c <= 4`` (links), ``a <= 10``, ``c <= 10``
    (forwarders) of Fig 3, optimum ``a = 4, b = 1, c = 4``.

    Fig 3 also lists ``a + c <= 10`` and ``b + c <= 10``; in the model as
    stated, the incoming capacity of ``y`` and of ``z`` gives
    ``a + b + c <= 10`` instead.  Neither binds: the optimum is 9 either way.

    Examples
    --------
    >>> net = lp_example()
    >>> net.nodes, net.bandwidth.tolist()
    (['x', 'y', 'z'], [[0.0, 10.0, 8.0], [10.0, 0.0, 4.0], [8.0, 4.0, 0.0]])
    """
    return Network.from_arrays([[0, 10, 8], [10, 0, 4], [8, 4, 0]], capacity=10,
                               nodes=["x", "y", "z"], unit="")


def four_host_example() -> Network:
    """A four-host network where FPFR builds too many trees (den Burger 2009, Fig 3.5), root ``A``.

    The text of den Burger 2009, section 3.2.1 (the example is not in 002) gives: four
    hosts, capacity 10 in and out; FPFR finds four trees of 5 each (20 in
    all) that put six flows on the root's outgoing capacity, so each tree
    gets 10/6 and FPFR 6.7; the LP keeps two of the trees for 10.  The link
    bandwidths are only in the figure, so they are chosen here: ``A`` to
    each other host 10, between the others 5, symmetric.  With them,
    FPFR's depth-first search in node order finds exactly that: the chains
    ``A-B-C-D`` and ``A-B-D-C`` and the trees ``A->C->B, A->D`` and
    ``A->C, A->D->B``, 5 each, root out-degrees 1, 1, 2, 2.

    Examples
    --------
    >>> four_host_example().bandwidth[0].tolist()
    [0.0, 10.0, 10.0, 10.0]
    """
    bandwidth = np.full((4, 4), 5.0)
    bandwidth[0, :] = bandwidth[:, 0] = 10.0
    return Network.from_arrays(bandwidth, capacity=10, nodes=["A", "B", "C", "D"], unit="")


_GRIDLAB_NODES = ["fs0", "n0", "cluster3", "helix", "eltoro", "ia64", "mike4", "pegasos"]
_GRIDLAB_IN = [10.54, 1.36, 1.23, 10.60, 1.18, 1.20, 11.00, 1.20]
_GRIDLAB_OUT = [9.32, 1.20, 1.47, 11.00, 0.95, 1.20, 10.60, 1.20]
_GRIDLAB_BANDWIDTH = [
    [0.00, 1.03, 1.06, 0.45, 1.02, 1.15, 0.51, 1.15],
    [1.11, 0.00, 0.00, 0.37, 0.92, 0.00, 0.00, 0.00],
    [1.19, 0.00, 0.00, 0.36, 0.92, 1.08, 0.37, 1.09],
    [0.80, 0.62, 0.52, 0.00, 0.57, 0.65, 4.76, 0.65],
    [1.01, 0.92, 0.84, 0.38, 0.00, 1.15, 0.36, 1.15],
    [1.15, 0.00, 0.94, 0.35, 1.10, 0.00, 0.41, 0.00],
    [0.86, 0.93, 0.57, 6.39, 0.61, 0.63, 0.00, 0.63],
    [1.15, 0.00, 0.94, 0.35, 1.10, 0.00, 0.41, 0.00],
]


def gridlab8() -> Network:
    """Eight GridLab sites as emulated in den Burger 2009, section 3.2.3 (Tables 3.1 and 3.2).

    Local capacities and achievable bandwidth in MB/s of 2^20 bytes
    (``"MiB/s"``), already scaled to 10% of Delphoi's values as in the
    emulation; 0 marks the dead links behind misconfigured firewalls.

    Examples
    --------
    >>> net = gridlab8()
    >>> net.nodes[:3], net.unit, float(net.bandwidth[6, 3])
    (['fs0', 'n0', 'cluster3'], 'MiB/s', 6.39)
    >>> int((~net.live).sum() - net.size)   # dead links, the diagonal aside
    9
    """
    return Network(list(_GRIDLAB_NODES), _GRIDLAB_OUT, _GRIDLAB_IN, _GRIDLAB_BANDWIDTH,
                   unit="MiB/s")
