"""Flow-level bandwidth sharing: weighted max-min fairness with per-flow caps.

The model of TCP the simulator uses (the same family as SimGrid's flow
models): every resource (a host's uplink, a host's downlink, each direction
of each router link) is shared by the flows crossing it; rates are the
weighted max-min fair allocation, found by progressive filling.  A flow's
weight is ``1 / RTT``, because TCP flows sharing a bottleneck get throughput
inversely proportional to their round-trip time, and its rate is capped at
``window / RTT``, the most a TCP window can carry per round trip.  So
throughput falls as RTT grows, both when flows compete and when they do not.

The filling is compiled with Numba and goes event by event (a resource
fills, or flows meet their caps) with the resources in a heap: a simulated
broadcast calls it once or twice per step, thousands of times, on thousands
of flows, and filling round by round, every round over all the rising flows
and loaded resources, cost 4-6 times more a call at a few hundred hosts
(``benchmarks/flow_filling.py``).
"""

from __future__ import annotations

import heapq

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
    """Progressive filling (compiled), event by event: every rising flow's rate is ``level *
    weight``; the next event is the lowest level at which a resource fills (its flows freeze
    there) or a flow meets its cap (it freezes at its cap).

    A resource fills at ``(capacity - used) / load`` (``used``: the frozen flows' rates on
    it; ``load``: the rising flows' weights).  Freezing a flow at a level no higher than a
    resource's can only raise that resource's, so the resources wait in a heap whose
    outdated entries are skipped, and each flow is touched once when it freezes: the cost
    grows with the incidence times the logarithm of the resources, not with the number of
    events times the flows.
    """
    n_flows, n_res = w.size, capacity.size
    rate = np.zeros(n_flows)
    # the flows crossing each resource (CSR) and the resources of each flow (CSR)
    res_ptr = np.zeros(n_res + 1, dtype=np.int64)
    flow_ptr = np.zeros(n_flows + 1, dtype=np.int64)
    for k in range(flow_of.size):
        res_ptr[resource_of[k] + 1] += 1
        flow_ptr[flow_of[k] + 1] += 1
    res_ptr = np.cumsum(res_ptr)
    flow_ptr = np.cumsum(flow_ptr)
    res_flows = np.empty(flow_of.size, dtype=np.int64)     # a counting sort each way
    flow_res = np.empty(flow_of.size, dtype=np.int64)
    res_at, flow_at = res_ptr[:-1].copy(), flow_ptr[:-1].copy()
    for k in range(flow_of.size):
        res_flows[res_at[resource_of[k]]] = flow_of[k]
        res_at[resource_of[k]] += 1
        flow_res[flow_at[flow_of[k]]] = resource_of[k]
        flow_at[flow_of[k]] += 1
    active = np.zeros(n_flows, dtype=np.bool_)
    load = np.zeros(n_res)                           # weight of the rising flows on each
    used = np.zeros(n_res)                           # rate of the frozen flows on each
    crossing = np.zeros(n_res, dtype=np.int64)       # rising flows on each resource
    rising = 0
    for f in range(n_flows):
        if flow_ptr[f + 1] > flow_ptr[f]:
            active[f] = True
            rising += 1
            for k in range(flow_ptr[f], flow_ptr[f + 1]):
                load[flow_res[k]] += w[f]
                crossing[flow_res[k]] += 1
        else:                  # a flow that crosses no resource is limited by its cap only
            rate[f] = cap[f] if np.isfinite(cap[f]) else 0.0
    version = np.zeros(n_res, dtype=np.int64)        # a heap entry of another is outdated
    heap = [(capacity[r] / load[r], r, np.int64(0)) for r in range(n_res) if crossing[r] > 0]
    heapq.heapify(heap)
    by_cap = np.argsort(cap / w)                     # the flows in the order they meet caps
    next_cap = 0
    frozen = np.empty(n_flows, dtype=np.int64)
    changed = np.empty(n_res, dtype=np.int64)        # the resources an event touched
    stamp = np.zeros(n_res, dtype=np.int64)
    events = 0
    while rising > 0:
        while heap and (crossing[heap[0][1]] == 0 or heap[0][2] != version[heap[0][1]]):
            heapq.heappop(heap)
        while next_cap < n_flows and not active[by_cap[next_cap]]:
            next_cap += 1
        at_resource = heap[0][0] if heap else np.inf
        at_cap = (cap[by_cap[next_cap]] / w[by_cap[next_cap]] if next_cap < n_flows
                  else np.inf)
        level = min(at_resource, at_cap)
        if not np.isfinite(level):
            return rate, False
        count = 0
        capped = at_cap <= at_resource
        if capped:                  # every flow that meets its cap before a resource fills:
            while next_cap < n_flows:   # freezing them only raises the resources' levels
                f = by_cap[next_cap]
                if active[f]:
                    if cap[f] / w[f] > at_resource:
                        break
                    frozen[count] = f
                    count += 1
                next_cap += 1
        else:
            r = heapq.heappop(heap)[1]
            for k in range(res_ptr[r], res_ptr[r + 1]):
                if active[res_flows[k]]:
                    frozen[count] = res_flows[k]
                    count += 1
        events += 1
        touched = 0
        for i in range(count):
            f = frozen[i]
            active[f] = False
            rising -= 1
            rate[f] = cap[f] if capped else min(level * w[f], cap[f])
            for k in range(flow_ptr[f], flow_ptr[f + 1]):
                r = flow_res[k]
                load[r] -= w[f]
                used[r] += rate[f]
                crossing[r] -= 1
                if stamp[r] != events:
                    stamp[r] = events
                    changed[touched] = r
                    touched += 1
        for i in range(touched):      # each resource's new level once per event
            r = changed[i]
            version[r] += 1
            if crossing[r] > 0:
                heapq.heappush(heap, (max(capacity[r] - used[r], 0.0) / load[r], r,
                                      version[r]))
    return rate, True
