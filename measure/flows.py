"""Flow-level bandwidth sharing: weighted max-min fairness with per-flow caps.

The model of TCP the simulator uses (the same family as SimGrid's flow
models): every resource (a host's uplink, a host's downlink, each direction
of each router link) is shared by the flows crossing it; rates are the
weighted max-min fair allocation, found by progressive filling.  A flow's
weight is ``1 / RTT``, because TCP flows sharing a bottleneck get throughput
inversely proportional to their round-trip time, and its rate is capped at
``window / RTT``, the most a TCP window can carry per round trip.  So
throughput falls as RTT grows, both when flows compete and when they do not.
"""

from __future__ import annotations

import numpy as np

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
    rate = np.zeros(n_flows)
    if n_flows == 0:
        return rate
    w = np.ones(n_flows) if weights is None else np.asarray(weights, dtype=float)
    cap = np.full(n_flows, np.inf) if caps is None else np.asarray(caps, dtype=float)
    remaining = np.asarray(capacity, dtype=float).copy()
    active = np.ones(n_flows, dtype=bool)
    # a flow that crosses no resource is limited by its cap only
    crossing = np.bincount(flow_of, minlength=n_flows) > 0
    lone = ~crossing
    rate[lone] = np.where(np.isfinite(cap[lone]), cap[lone], 0.0)
    active &= crossing
    tol = 1e-12 * max(1.0, float(np.max(capacity, initial=1.0)))
    # only the incidences of flows still rising are kept: each round is cheaper than the last
    keep = active[flow_of]
    flow_of, resource_of = flow_of[keep], resource_of[keep]
    flows = np.flatnonzero(active)
    while flows.size:
        load = np.bincount(resource_of, weights=w[flow_of], minlength=len(remaining))
        used = load > 0
        step_res = np.min(remaining[used] / load[used]) if used.any() else np.inf
        headroom = (cap[flows] - rate[flows]) / w[flows]
        step = min(step_res, float(headroom.min()))
        if not np.isfinite(step):
            raise ValueError("a flow crosses no finite resource and has no cap")
        step = max(step, 0.0)
        rate[flows] += step * w[flows]
        remaining -= step * load
        full = remaining <= tol
        blocked = np.zeros(n_flows, dtype=bool)
        blocked[flow_of[full[resource_of]]] = True
        newly = blocked[flows] | (rate[flows] >= cap[flows] - tol)
        if not newly.any():  # numerical safety: freeze the tightest flow
            newly[np.argmin(headroom)] = True
        active[flows[newly]] = False
        flows = flows[~newly]
        keep = active[flow_of]
        flow_of, resource_of = flow_of[keep], resource_of[keep]
    return rate
