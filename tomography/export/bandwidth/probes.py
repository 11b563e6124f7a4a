"""Figures from pairwise probe runs (``probes.csv``, iperf3 or NetPIPE): :func:`from_probes`."""

from __future__ import annotations

from typing import Iterable, Mapping

import numpy as np
import pandas as pd

from tomography.model.dataset import Measurement
from tomography.model.dataset.iperf3 import unreachable
from tomography.model.errors import TomographyError
from tomography.export.bandwidth.clusters import indices, known_clusters, pair_medians
from tomography.export.bandwidth.model import BandwidthModel, Source
from tomography.model.weights import tcp_probes

__all__ = ["from_probes"]

_SOLO = {"", "0", "false", "no", "none"}


def from_probes(measurement: Measurement, clusters: Mapping[str, Iterable[str]], *,
                host_pairs: bool = False) -> BandwidthModel:
    """Achievable bandwidths and capacities from pairwise probe runs (``probes.csv``).

    Only solo runs count: rows whose ``concurrent`` field is empty (or
    missing, NaN), ``0``, ``false``, ``no`` or ``none``.  A run beside another probe measures the
    sharing of a link, not the pair's achievable bandwidth.

    Parameters
    ----------
    measurement : Measurement
        A dataset with probes.
    clusters : mapping of str to iterable of str
        Cluster name to hosts of the dataset.
    host_pairs : bool, default False
        Also fill the host-to-host bandwidth matrix.

    Returns
    -------
    BandwidthModel
        Every figure labelled ``"probes"``:

        * host out (in): the largest ``bits_per_second`` of the probes the
          host sent (received); unknown for a host never probed;
        * cluster out (in): the sum of its hosts' figures, a host never
          probed counted at the median of the cluster's probed hosts (the
          hosts of a bandwidth cluster are alike).  Solo probes do not see a
          shared access link, so this is an upper bound;
        * pair bandwidth A -> B: median over host pairs (a host of A sending
          to a host of B) of each pair's median probe; on the diagonal,
          pairs within the cluster.  A host pair whose probes the network
          refused or left unanswered ("No route to host", "Connection timed
          out"), and that no probe measured, counts as 0 (a dead link).  Pairs
          never probed are unknown and listed in the notes;
        * no delays (``probes.csv`` holds none).

    Raises
    ------
    TomographyError
        When the dataset has no solo probes, or a cluster names an unknown host.

    Examples
    --------
    >>> import pandas as pd
    >>> from tomography.export.bandwidth import clusters_from
    >>> from tomography.model.synthetic import planted_partition
    >>> m = planted_partition(4, 2, iterations=1, seed=0)
    >>> m.probes = pd.DataFrame({"src": ["h000", "h000", "h002"], "dst": ["h001", "h002", "h000"],
    ...     "tool": "iperf3", "bits_per_second": [9e8, 1e8, 2e8], "streams": 1,
    ...     "concurrent": "", "duration_s": 10.0})
    >>> g = from_probes(m, clusters_from(m.labels))
    >>> (g.cluster_bandwidth / 1e6).tolist()
    [[900.0, 100.0], [200.0, nan]]
    >>> g.notes[0]
    'no probe within cluster g1'
    """
    pool = known_clusters(clusters, measurement.host_names, "dataset")
    probes = measurement.probes
    if probes is None or probes.empty:
        raise TomographyError("the dataset has no probes (probes.csv); measure with iperf3 "
                              "or NetPIPE first")
    udp = len(probes) - len(tcp_probes(probes))
    probes = tcp_probes(probes).reset_index(drop=True)   # UDP rates are targets, not bandwidth
    concurrent = probes["concurrent"]
    text = concurrent.astype(str).str.strip().str.lower()
    count = pd.to_numeric(text, errors="coerce").to_numpy()  # tests at once: 1 is solo
    solo = concurrent.isna().to_numpy() | text.isin(_SOLO).to_numpy() | (count <= 1)
    if "error" in probes:  # failed tests carry no rate
        solo &= (probes["error"].astype(str).str.strip() == "").to_numpy()
    solo &= probes["bits_per_second"].notna().to_numpy()
    notes = [f"{udp} UDP probe runs left out (a UDP rate is the rate asked for)"] if udp else []
    if not solo.all():
        notes.append(f"{int((~solo).sum())} concurrent probe runs left out")
    hosts = sorted(h for members in pool.values() for h in members)
    index = {h: i for i, h in enumerate(hosts)}
    runs = probes[solo & probes["src"].isin(index).to_numpy() & probes["dst"].isin(index).to_numpy()]
    if runs.empty:
        raise TomographyError("no solo probe run between the hosts of the clusters")
    n = len(hosts)
    per_pair = runs.groupby(["src", "dst"])["bits_per_second"].median()
    pair = np.full((n, n), np.nan)
    pair[[index[s] for s, _ in per_pair.index], [index[d] for _, d in per_pair.index]] = \
        per_pair.to_numpy()
    if "error" in probes:   # a pair the network refused, never measured otherwise: dead
        refused = probes[probes["error"].map(unreachable) & probes["src"].isin(index)
                         & probes["dst"].isin(index)]
        dead = {(index[a], index[b]) for a, b in zip(refused["src"], refused["dst"])
                if np.isnan(pair[index[a], index[b]])}
        for a, b in dead:
            pair[a, b] = 0.0
        if dead:
            notes.append(f"{len(dead)} host pair(s) the network refused, dead links: "
                         + "; ".join(f"{hosts[a]} -> {hosts[b]}" for a, b in sorted(dead)[:3]))
    host_out = _by_host(runs.groupby("src")["bits_per_second"].max(), index)
    host_in = _by_host(runs.groupby("dst")["bits_per_second"].max(), index)
    groups = indices(hosts, pool)
    names = list(pool)
    bandwidth = pair_medians(pair, groups)
    for a, b in np.argwhere(np.isnan(bandwidth)):
        if a != b:
            notes.append(f"no probe from cluster {names[a]} to cluster {names[b]}")
        elif len(groups[a]) > 1:
            notes.append(f"no probe within cluster {names[a]}")
    unprobed = [h for h in hosts if np.isnan(host_out[index[h]]) and np.isnan(host_in[index[h]])]
    if unprobed:
        notes.append(f"{len(unprobed)} hosts never probed: {', '.join(unprobed[:10])}"
                     + (" ..." if len(unprobed) > 10 else ""))
    tools = ", ".join(sorted(set(runs["tool"].astype(str))))
    sources = {
        "host_capacity": Source("probes", f"largest solo probe ({tools}) the host sent (out) or "
                                "received (in)"),
        "cluster_capacity": Source("probes", "sum of the hosts' probe capacities, unprobed hosts "
                                   "at the cluster's median; an upper bound, solo probes do not "
                                   "see a shared access link"),
        "cluster_bandwidth": Source("probes", f"median over host pairs of the median solo probe "
                                    f"({tools}) of each pair"),
    }
    if host_pairs:
        sources["host_bandwidth"] = Source("probes", f"median of the solo probes ({tools}) of "
                                           "the pair")
    return BandwidthModel(
        pool, host_out=host_out, host_in=host_in,
        cluster_out=np.array([_extrapolated_sum(host_out[g]) for g in groups]),
        cluster_in=np.array([_extrapolated_sum(host_in[g]) for g in groups]),
        cluster_bandwidth=bandwidth, sources=sources,
        host_bandwidth=pair if host_pairs else None, notes=notes)


def _by_host(series, index: dict[str, int]) -> np.ndarray:
    out = np.full(len(index), np.nan)
    out[[index[h] for h in series.index]] = series.to_numpy()
    return out


def _extrapolated_sum(values: np.ndarray) -> float:
    """Sum of ``values``, each NaN counted at the median of the others (NaN if all are)."""
    known = values[~np.isnan(values)]
    if not known.size:
        return float("nan")
    return float(known.sum() + np.median(known) * (values.size - known.size))
