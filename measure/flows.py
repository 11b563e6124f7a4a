"""Flow-level bandwidth sharing: weighted max-min fairness with per-flow caps.

The model of TCP the simulator uses (the same family as SimGrid's flow
models): every resource (a host's uplink, a host's downlink, each direction
of each router link) is shared by the flows crossing it; rates are the
weighted max-min fair allocation, found by progressive filling.  A flow's
weight is ``1 / RTT``, because TCP flows sharing a bottleneck get throughput
inversely proportional to their round-trip time, and its rate is capped at
``window / RTT``, the most a TCP window can carry per round trip.  So
throughput falls as RTT grows, both when flows compete and when they do not.

The filling loop is compiled with Numba: a simulated broadcast calls it once
or twice per step, thousands of times, on a few thousand flows, where
NumPy's per-call overhead and full-array passes per round dominated.
"""

from __future__ import annotations

import numba
import numpy as np

from tomography.model.errors import ParameterError

__all__ = ["max_min_rates"]


def max_min_rates(capacity: np.ndarray, flow_of: np.ndarray, resource_of: np.ndarray,
                  n_flows: int, *, weights: np.ndarray | None = None,
                  caps: np.ndarray | None = None) -> np.ndarray:
    """Weighted max-min fair rates of flows over shared resources.

    Parameters
    ----------
    capacity : ndarray of float, shape (R,)
        Capacity of each resource.
    flow_of, resource_of : ndarray of int, shape (K,)
        The incidence: flow ``flow_of[k]`` crosses resource ``resource_of[k]``.
    n_flows : int
    weights : ndarray of float, shape (F,), optional
        Share weights (1 for all by default).
    caps : ndarray of float, shape (F,), optional
        Upper bound on each flow's rate (none by default).

    Returns
    -------
    ndarray of float, shape (F,)
        Rates: no resource is over capacity, and no flow can go faster
        without slowing a flow whose rate per weight is not higher.

    Examples
    --------
    Two flows on one link of 10 get 5 each; if one is held to 2 elsewhere,
    the other gets 8:

    >>> max_min_rates(np.array([10.0]), np.array([0, 1]), np.array([0, 0]), 2).tolist()
    [5.0, 5.0]
    >>> max_min_rates(np.array([10.0, 2.0]), np.array([0, 1, 1]), np.array([0, 0, 1]), 2).tolist()
    [8.0, 2.0]
    """
    if n_flows == 0:
        return np.zeros(0)
    w = np.ones(n_flows) if weights is None else np.asarray(weights, dtype=float)
    cap = np.full(n_flows, np.inf) if caps is None else np.asarray(caps, dtype=float)
    capacity = np.asarray(capacity, dtype=float)
    rate, ok = _fill(capacity, np.asarray(flow_of, dtype=np.int64),
                     np.asarray(resource_of, dtype=np.int64), w, cap)
    if not ok:
        raise ParameterError("a flow crosses no finite resource and has no cap")
    return rate


@numba.njit(cache=True, nogil=True)
def _fill(capacity: np.ndarray, flow_of: np.ndarray, resource_of: np.ndarray,
          w: np.ndarray, cap: np.ndarray) -> tuple[np.ndarray, bool]:
    """Progressive filling (compiled): raise every rising flow's rate by ``step * weight``
    until a resource fills or a flow meets its cap; freeze those flows; repeat.

    Each round costs the resources still loaded plus the flows still rising:
    the loads drop as flows freeze instead of being summed again.
    """
    n_flows, n_res = w.size, capacity.size
    rate = np.zeros(n_flows)
    remaining = capacity.copy()
    # the flows crossing each resource (CSR) and the resources of each flow (CSR)
    by_res = np.argsort(resource_of, kind="mergesort")
    res_ptr = np.zeros(n_res + 1, dtype=np.int64)
    flow_ptr = np.zeros(n_flows + 1, dtype=np.int64)
    for k in range(flow_of.size):
        res_ptr[resource_of[k] + 1] += 1
        flow_ptr[flow_of[k] + 1] += 1
    res_ptr = np.cumsum(res_ptr)
    flow_ptr = np.cumsum(flow_ptr)
    res_flows = flow_of[by_res]
    by_flow = np.argsort(flow_of, kind="mergesort")
    flow_res = resource_of[by_flow]
    active = np.zeros(n_flows, dtype=np.bool_)
    load = np.zeros(n_res)
    crossing = np.zeros(n_res, dtype=np.int64)       # rising flows on each resource
    for f in range(n_flows):
        if flow_ptr[f + 1] > flow_ptr[f]:
            active[f] = True
            for k in range(flow_ptr[f], flow_ptr[f + 1]):
                load[flow_res[k]] += w[f]
                crossing[flow_res[k]] += 1
        else:                  # a flow that crosses no resource is limited by its cap only
            rate[f] = cap[f] if np.isfinite(cap[f]) else 0.0
    rising = np.flatnonzero(active)
    loaded = np.flatnonzero(crossing > 0)
    tol = 1e-12 * max(1.0, capacity.max() if n_res else 1.0)
    level = 0.0                # rate per unit weight of every rising flow
    while rising.size:
        step, tight, tight_room = np.inf, -1, np.inf
        for r in loaded:
            step = min(step, remaining[r] / load[r])
        for f in rising:
            room = (cap[f] - rate[f]) / w[f]
            if room < tight_room:
                tight, tight_room = f, room
        step = max(min(step, tight_room), 0.0)
        if not np.isfinite(step):
            return rate, False
        level += step
        for f in rising:
            rate[f] = level * w[f]
        frozen = 0
        for r in loaded:
            remaining[r] -= step * load[r]
        for r in loaded:
            if remaining[r] <= tol:
                for k in range(res_ptr[r], res_ptr[r + 1]):
                    f = res_flows[k]
                    if active[f]:
                        active[f] = False
                        frozen += 1
        for f in rising:
            if active[f] and rate[f] >= cap[f] - tol:
                active[f] = False
                frozen += 1
        if frozen == 0:        # numerical safety: freeze the tightest flow
            active[tight if tight >= 0 else rising[0]] = False
        for f in rising:       # a frozen flow no longer loads its resources
            if not active[f]:
                for k in range(flow_ptr[f], flow_ptr[f + 1]):
                    load[flow_res[k]] -= w[f]
                    crossing[flow_res[k]] -= 1
        rising = rising[active[rising]]
        loaded = loaded[crossing[loaded] > 0]
    return rate, True
