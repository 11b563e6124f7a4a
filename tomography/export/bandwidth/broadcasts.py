"""Rates the BitTorrent broadcasts reached, bytes moved over durations: :func:`from_broadcasts`."""

from __future__ import annotations

from typing import Iterable, Mapping

import numpy as np

from tomography.model.dataset import Measurement
from tomography.model.errors import TomographyError
from tomography.export.bandwidth.clusters import known_clusters
from tomography.export.bandwidth.model import BandwidthModel, Source
from tomography.model.weights import directed_counts

__all__ = ["from_broadcasts"]


def from_broadcasts(measurement: Measurement, clusters: Mapping[str, Iterable[str]], *,
                    iterations: Iterable[int] | None = None,
                    host_pairs: bool = False) -> BandwidthModel:
    """Observed aggregate rates of the BitTorrent broadcasts.

    Each iteration moved ``blocks x block_size`` bytes between every two
    hosts in ``duration_s`` seconds (``iterations.csv``); dividing one by the
    other gives rates actually reached while the swarm shared the network.
    They are lower bounds: the swarm did not keep every path busy for the
    whole broadcast.  (Bytes count whole blocks; a file's last block may be
    shorter.)

    Parameters
    ----------
    measurement : Measurement
        A broadcast dataset whose iterations record their duration.
    clusters : mapping of str to iterable of str
        Cluster name to hosts of the dataset.
    iterations : iterable of int, optional
        The iterations to average; all by default.
    host_pairs : bool, default False
        Also fill the host-to-host rate matrix.

    Returns
    -------
    BandwidthModel
        Every figure labelled ``"broadcast-throughput"``, a mean over iterations:

        * pair A -> B: bytes sent directly from A's hosts to B's hosts in
          the iteration over its duration (on the diagonal: within A);
        * host out: bytes the host sent (to any host) over the duration;
          host in: bytes it received, over the iterations it was not the root;
        * cluster out: bytes its hosts sent to hosts outside it; cluster in:
          bytes they received from outside, over the iterations whose root
          was outside it;
        * no delays.

    Raises
    ------
    TomographyError
        When an iteration has no ``duration_s`` (synthetic datasets have
        none) or a cluster names an unknown host.

    Examples
    --------
    >>> from tomography.export.bandwidth import clusters_from
    >>> from tomography.model.synthetic import planted_partition
    >>> m = planted_partition(6, 2, iterations=2, seed=0, file_size=16 * 16384)
    >>> from_broadcasts(m, clusters_from(m.labels))
    Traceback (most recent call last):
    ...
    tomography.model.errors.TomographyError: iterations.csv has no duration_s for iteration(s) 0, 1: \
broadcast throughput needs the duration of each broadcast (synthetic datasets have none)
    >>> m.iterations["duration_s"] = 2.0
    >>> g = from_broadcasts(m, clusters_from(m.labels))
    >>> (g.host_in * 2 / (8 * 16384)).tolist()      # each receiver got 16 blocks in 2 s
    [16.0, 16.0, 16.0, 16.0, 16.0, 16.0]
    """
    pool = known_clusters(clusters, measurement.host_names, "dataset")
    table = measurement.iterations.set_index("iteration")
    ids = measurement.iteration_ids if iterations is None else list(iterations)
    unknown = sorted(set(ids) - set(table.index))
    if not ids or unknown:
        raise TomographyError(f"no iteration {unknown[0] if unknown else '(none chosen)'} in "
                              "the dataset")
    duration = table.loc[ids, "duration_s"].to_numpy(dtype=float)
    lacking = [str(i) for i, d in zip(ids, duration) if np.isnan(d)]
    if lacking:
        raise TomographyError(f"iterations.csv has no duration_s for iteration(s) "
                              f"{', '.join(lacking)}: broadcast throughput needs the duration "
                              "of each broadcast (synthetic datasets have none)")
    zero = [str(i) for i, d in zip(ids, duration) if d <= 0]
    if zero:
        raise TomographyError(f"iteration {zero[0]} has duration_s 0; no rate can be derived")
    everyone = {h: i for i, h in enumerate(measurement.host_names)}
    hosts = sorted(h for members in pool.values() for h in members)
    rows = np.array([everyone[h] for h in hosts])
    member = np.zeros((len(everyone), len(pool)))
    for c, members in enumerate(pool.values()):
        member[[everyone[h] for h in members], c] = 1.0
    roots = [everyone[r] for r in table.loc[ids, "root"]]
    bits = 8.0 * int(measurement.meta.get("block_size", 16384))
    rates = [bits * directed_counts(measurement, [i]).T.toarray() / d  # [sender, receiver]
             for i, d in zip(ids, duration)]
    inner = [member.T @ r @ member for r in rates]
    host_out = np.mean([r.sum(axis=1)[rows] for r in rates], axis=0)
    host_in = _mean_where([r.sum(axis=0)[rows] for r in rates],
                          [rows != root for root in roots])
    # all minus within: a cluster that sent nothing outside comes out as -1e-9, not 0
    cluster_out = np.maximum(np.mean([member.T @ r.sum(axis=1) - np.diag(m)
                                      for r, m in zip(rates, inner)], axis=0), 0.0)
    cluster_in = np.maximum(_mean_where([r.sum(axis=0) @ member - np.diag(m)
                                         for r, m in zip(rates, inner)],
                                        [member[root] == 0 for root in roots]), 0.0)
    what = f"mean over {len(ids)} iterations of bytes"
    bound = "over the broadcast's duration_s; an observed rate, a lower bound on"
    sources = {
        "host_capacity": Source("broadcast-throughput", f"{what} the host sent (received, when "
                                f"not the root) {bound} the local capacity"),
        "cluster_capacity": Source("broadcast-throughput", f"{what} the cluster's hosts sent to "
                                   f"(received from) hosts outside it {bound} the local capacity"),
        "cluster_bandwidth": Source("broadcast-throughput", f"{what} sent directly from A's hosts "
                                    f"to B's hosts {bound} the achievable bandwidth"),
    }
    if host_pairs:
        sources["host_bandwidth"] = Source("broadcast-throughput", f"{what} sent directly from "
                                           f"host to host {bound} the achievable bandwidth")
    host_rates = np.mean([r[np.ix_(rows, rows)] for r in rates], axis=0)
    np.fill_diagonal(host_rates, np.nan)
    return BandwidthModel(
        pool, host_out=host_out, host_in=host_in, cluster_out=cluster_out,
        cluster_in=cluster_in, cluster_bandwidth=np.mean(inner, axis=0), sources=sources,
        host_bandwidth=host_rates if host_pairs else None,
        notes=[f"rates from the broadcasts of iterations {', '.join(map(str, ids))}"])


def _mean_where(values: list[np.ndarray], masks: list[np.ndarray]) -> np.ndarray:
    """Element-wise mean of ``values`` over the entries whose mask is true (NaN if none)."""
    stacked = np.where(np.array(masks), np.array(values), np.nan)
    counts = (~np.isnan(stacked)).sum(axis=0)
    return np.where(counts > 0, np.nansum(stacked, axis=0) / np.maximum(counts, 1), np.nan)
