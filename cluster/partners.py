"""Steady partners: whether the hosts' strongest partners repeat from one half of the
iterations to the other.

A broadcast cut at the block quota sets a group of a few hosts (a rack of two
to four) apart only once one of its own hosts has been a root, so a data
centre of a dozen such racks can show no supported level for many
iterations.  Its data are not flat all the same: each host exchanges far
more with its rack-mates than with anyone else, in every iteration, so its
strongest partner in the even-numbered iterations is its strongest partner
in the odd-numbered ones too.  On a network without groups the strongest
partner is a draw of the noise and repeats by chance, about once in as
many hosts as it meets.  The stop rule's "no hierarchy"
(:class:`cluster.stability.StableHierarchy`) waits while they repeat.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import sparse

__all__ = ["steady_partners"]


def steady_partners(sampler: Any) -> float:
    """Share of the hosts whose strongest partner is the same in the even and the odd iterations.

    Parameters
    ----------
    sampler : IterationWeights
        The per-iteration weights
        (:meth:`tomography.model.weights.IterationWeights.from_measurement`,
        or a :class:`cluster.confidence.IterationSampler`).

    Returns
    -------
    float
        In [0, 1]; NaN with fewer than two iterations (no halves to compare).
        A host without a partner in one half does not count as steady.

    Examples
    --------
    Racks of two hosts, whose mates exchange the most in every iteration,
    against a network without groups:

    >>> from tomography.model.synthetic import planted_hierarchy, planted_partition
    >>> from tomography.model.weights import IterationWeights
    >>> racks = planted_hierarchy((8,), 2, iterations=4, seed=0)
    >>> steady_partners(IterationWeights.from_measurement(racks)) > 0.9
    True
    >>> flat = planted_partition(16, 1, iterations=4, seed=0)
    >>> steady_partners(IterationWeights.from_measurement(flat)) < 0.5
    True
    """
    if sampler.n_iterations < 2:
        return float("nan")
    parity = np.arange(sampler.n_iterations) % 2
    upper = sparse.triu(sampler.weights, format="coo")   # the sampler's edge order
    even, odd = (_strongest(sampler, upper, (parity == p).astype(float)) for p in (0, 1))
    return float(np.mean((even == odd) & (even >= 0)))


def _strongest(sampler: Any, upper: sparse.coo_array, multiplicity: np.ndarray) -> np.ndarray:
    """Per host, its partner of most weight in the iterations of ``multiplicity`` (-1: none;
    the lowest index among equals); ``upper`` holds the sampler's edges."""
    n = sampler.weights.shape[0]
    weights = np.bincount(sampler.edge, weights=sampler.blocks * multiplicity[sampler.iteration],
                          minlength=sampler.n_edges)
    half = sparse.coo_array((weights, (upper.row, upper.col)), shape=(n, n)).tocsr()
    both = sparse.csr_array(half + half.T)
    both.eliminate_zeros()
    best = np.asarray(both.argmax(axis=1)).ravel().astype(np.int64)
    best[np.diff(both.indptr) == 0] = -1
    return best
