"""Simulated against real tomography on one scenario (docs/method.md, the thesis's App. A).

Runs the same scenario, scale and seed twice: real libtorrent broadcasts on
the emulated testbed, and the flow-level simulator.  Compares

* the flat partitions (NMI between them and against the truth);
* the NMI convergence curves (flat and per hierarchy level);
* the distributions of ``w_n`` over all edges, each normalized by its mean
  (blocks are 16 KiB in both, but the swarms differ in speed), with the
  two-sample Kolmogorov-Smirnov statistic.

The partitions and the curves are :func:`tomography.analyze`'s (seed 0, no
confidence), as ``tomography cluster`` and ``tomography evaluate`` report them.

Needs root.  Run::

    sudo .venv/bin/python benchmarks/sim_vs_real.py             # ~6 min on 2 cores
    sudo .venv/bin/python benchmarks/sim_vs_real.py --keep out/svr   # keep both datasets
    sudo .venv/bin/python benchmarks/sim_vs_real.py --block-quota 128 --size 8MiB
    .venv/bin/python benchmarks/sim_vs_real.py --real out/svr/real   # simulate again only
    .venv/bin/python benchmarks/sim_vs_real.py --family benchmarks/_data/real-family
    .venv/bin/python benchmarks/sim_vs_real.py --family benchmarks/_data/real-family --queue-delay 0

With ``--real`` the simulation takes the real dataset's settings (size,
iterations, seed, block quota, roots) from its ``meta.json``.  With
``--family DIR`` (the real part of the calibration family,
``benchmarks/real_family.py``) every real dataset under ``DIR`` is simulated
so, from the topology file beside it, into ``DIR-sim`` (``DIR-sim-queue<Q>ms`` with another
``--queue-delay``; reused when there, refused when another simulator made it),
and one row per network and seed compares them: the correlation of ``w_n``
over the pairs, the flat partitions, the contrast and the quota's skew.  It also
prints the mean ``w_n`` of the pairs within a cluster, within a site (other
cluster) and across sites, relative to the mean over all pairs: the contrast
the clustering feeds on; and what a block quota does to each iteration: the
blocks a host of the root's site and a host of another site received, and
their ratio (1 for whole broadcasts).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np
from scipy import stats

from bench_support import machine_line, require_root
from cluster.accuracy import nmi
from measure import testbed
from measure.coordinator import run_broadcasts
from measure.simulator import simulate
from measure.swarm import SwarmParams
from measure.tcp import TcpModel
from tomography import analyze
from tomography.model.dataset import read_measurement
from tomography.model.topology import read_topology
from tomography.model.truth_labels import labels_at_depth, truth_depth
from tomography.model.units import parse_size
from tomography.model.weights import mean_weights


def edge_weights(m) -> np.ndarray:
    W = mean_weights(m).toarray()
    w = W[np.triu_indices_from(W, 1)]
    return w / w.mean()


def pair_contrast(m) -> dict[str, tuple[float, float]]:
    """Mean w_n (relative to all pairs) and its coefficient of variation, per kind of pair.

    Kinds: same label (``cluster``), same top label (``site``, other cluster),
    and ``across`` top labels.
    """
    W = mean_weights(m).toarray()
    labels = [m.labels[h] for h in m.host_names]
    top = [label.split("/")[0] for label in labels]
    i, j = np.triu_indices_from(W, 1)
    kind = np.where([labels[a] == labels[b] for a, b in zip(i, j)], "cluster",
                    np.where([top[a] == top[b] for a, b in zip(i, j)], "site", "across"))
    w = W[i, j]
    return {k: (float(w[kind == k].mean() / w.mean()),
                float(w[kind == k].std() / w[kind == k].mean()))
            for k in ("cluster", "site", "across") if (kind == k).any()}


def quota_skew(m) -> tuple[float, float]:
    """Mean blocks a host received per iteration in the root's site, and in another site."""
    site = {h: m.labels[h].split("/")[0] for h in m.host_names}
    roots = dict(zip(m.iterations["iteration"], m.iterations["root"]))
    got = m.transfers.groupby(["iteration", "receiver"])["blocks"].sum().reset_index()
    home = [site[r] == site[roots[i]] for i, r in zip(got["iteration"], got["receiver"])]
    home = np.asarray(home) & (got["receiver"] != got["iteration"].map(roots)).to_numpy()
    return float(got["blocks"][home].mean()), float(got["blocks"][~home].mean())


def simulated_like(m, real: Path, out: Path, tcp: TcpModel = TcpModel()) -> Path:
    """The real dataset ``m`` (read from ``real``) simulated with its settings and ``tcp``, from
    the topology file beside its seeds (``real_family.py``), into ``out``: a simulation already
    there is continued or reused, and refused if another simulator made it (delete it)."""
    import yaml

    from tomography.model.topology import parse_topology

    recorded = m.meta["params"]
    topo = parse_topology(yaml.safe_load((real.parent / "topology.yaml").read_text()))
    simulate(topo, out, iterations=len(m.iteration_ids), file_size=int(recorded["file_size"]),
             seed=int(recorded["seed"]), resume=True, tcp=tcp,
             params=SwarmParams(block_quota=recorded.get("block_quota"),
                                roots=recorded.get("roots", "random")))
    return out


def family_rows(root: Path, tcp: TcpModel = TcpModel()) -> None:
    """One row per real dataset under ``root`` against its simulation with ``tcp`` (see the
    module text)."""
    sims = root.parent / (f"{root.name}-sim" if tcp == TcpModel() else
                          f"{root.name}-sim-queue{tcp.queue_delay * 1e3:g}ms")
    print(machine_line(("libtorrent",)))
    print("\n| network | seed | hosts | w_n correlation (Pearson, Spearman) | flat NMI real vs "
          "sim | clusters real / sim | within cluster, real / sim | root's site / other site, "
          "real / sim |\n|---|---|---|---|---|---|---|---|")
    pearson, spearman, agree, skew = [], [], [], []
    for real in sorted(root.glob("*/seed*")):
        if not (real / "meta.json").exists():
            continue
        r = read_measurement(real)
        s = read_measurement(simulated_like(r, real, sims / real.parent.name / real.name, tcp))
        wr, ws = edge_weights(r), edge_weights(s)
        p, rho = stats.pearsonr(wr, ws)[0], stats.spearmanr(wr, ws)[0]
        fr = analyze(r, seed=0, resamples=0).flat.clustering
        fs = analyze(s, seed=0, resamples=0).flat.clustering
        both = nmi(fr.labels, fs.labels)
        pearson.append(p)
        spearman.append(rho)
        agree.append(both)
        cr, cs = pair_contrast(r), pair_contrast(s)
        (nr, far_r), (ns, far_s) = quota_skew(r), quota_skew(s)
        skew.append((ns / far_s) / (nr / far_r) if far_r and far_s else float("nan"))
        print(f"| {real.parent.name} | {real.name[4:]} | {r.n_hosts} | {p:.2f}, {rho:.2f} | "
              f"{both:.2f} | {fr.n_clusters} / {fs.n_clusters} | "
              f"{cr['cluster'][0]:.2f} / {cs['cluster'][0]:.2f} | "
              f"{nr / far_r if far_r else float('nan'):.2f} / "
              f"{ns / far_s if far_s else float('nan'):.2f} |", flush=True)
    print(f"\n{len(pearson)} datasets: median Pearson {np.median(pearson):.2f} (quartiles "
          f"{np.percentile(pearson, 25):.2f}-{np.percentile(pearson, 75):.2f}), median Spearman "
          f"{np.median(spearman):.2f}; flat partitions the same (NMI 1) in "
          f"{sum(a >= 0.999 for a in agree)}, median NMI {np.median(agree):.2f}; quota skew "
          f"(simulated over real) within 20 % in {sum(abs(x - 1) <= 0.2 for x in skew)}, "
          f"weaker simulated in {sum(x < 0.8 for x in skew)}, stronger in "
          f"{sum(x > 1.2 for x in skew)}; simulated with queue_delay {tcp.queue_delay:g} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--topology", default="two-sites-demo")
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--size", default="16MiB")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--block-quota", type=int, default=None, metavar="BLOCKS",
                        help="end each broadcast once every host holds BLOCKS (default: whole)")
    parser.add_argument("--keep", type=Path, help="keep the two datasets here")
    parser.add_argument("--family", type=Path, metavar="DIR",
                        help="every real dataset under DIR against its simulation, one row each")
    parser.add_argument("--queue-delay", type=float, default=TcpModel().queue_delay,
                        metavar="SECONDS", help="the simulator's standing queue (default "
                        f"{TcpModel().queue_delay:g}; measure.tcp.TcpModel)")
    parser.add_argument("--real", type=Path,
                        help="reuse this real dataset (same topology, size and iterations); "
                             "only the simulation runs, no root needed")
    args = parser.parse_args()
    tcp = TcpModel(queue_delay=args.queue_delay)
    if args.family:
        family_rows(args.family, tcp)
        return
    topo = read_topology(args.topology)
    root = args.keep or Path(tempfile.mkdtemp())
    size = parse_size(args.size)
    params = SwarmParams(block_quota=args.block_quota)
    real_path = args.real or root / "real"
    if args.real is not None:   # the real run's settings
        recorded = read_measurement(args.real).meta["params"]
        size, args.seed = int(recorded["file_size"]), int(recorded["seed"])
        args.size = f"{size / 2**20:g}MiB"
        args.iterations = len(read_measurement(args.real).iteration_ids)
        params = SwarmParams(block_quota=recorded.get("block_quota"),
                             roots=recorded.get("roots", "random"))
    else:
        require_root("or give --real DATASET")
        testbed.down("svr")
        bed = testbed.up(topo, name="svr")
        try:
            run_broadcasts(bed.host_table(), real_path, iterations=args.iterations,
                           file_size=size, launch=bed.command, seed=args.seed, overwrite=True,
                           params=params,
                           meta={"topology": topo.name, "testbed": bed.to_meta()})
        finally:
            testbed.down("svr")
    simulate(topo, root / "sim", iterations=args.iterations, file_size=size, seed=args.seed,
             params=params, overwrite=True, tcp=tcp)
    real, sim = read_measurement(real_path), read_measurement(root / "sim")
    latency = real.meta.get("testbed", {}).get("latency_applied")
    truth = real.labels
    hosts = real.host_names
    deep = labels_at_depth(truth, truth_depth(truth), hosts)
    a_real = analyze(real, seed=0, resamples=0, truth=truth)   # no confidence: not shown
    a_sim = analyze(sim, seed=0, resamples=0, truth=truth)
    flat_real, flat_sim = a_real.flat.clustering, a_sim.flat.clustering
    print(machine_line(("libtorrent",)))
    print(f"{topo.name}, {len(hosts)} hosts, {args.iterations} iterations of {args.size}, "
          f"seed {args.seed}, block quota {params.block_quota}, roots {params.roots}; latency "
          f"applied on the testbed: {latency}\n")
    print(f"flat partition: real {flat_real.n_clusters} clusters (NMI vs truth "
          f"{nmi(deep, flat_real.labels):.2f}), simulated {flat_sim.n_clusters} "
          f"(NMI {nmi(deep, flat_sim.labels):.2f}); NMI real vs simulated "
          f"{nmi(flat_real.labels, flat_sim.labels):.2f}\n")
    cr, cs = a_real.convergence(), a_sim.convergence()
    levels = [c for c in cr.columns if c.startswith("level_") and c in cs.columns]
    print("| n | real flat NMI | sim flat NMI | " + " | ".join(
        f"real {c} | sim {c}" for c in levels) + " |")
    print("|---|---|---|" + "---|---|" * len(levels))
    for (_, a), (_, b) in zip(cr.iterrows(), cs.iterrows()):
        print(f"| {int(a.n)} | {a.nmi:.2f} | {b.nmi:.2f} | " + " | ".join(
            f"{a[c]:.2f} | {b[c]:.2f}" for c in levels) + " |")
    wr, ws = edge_weights(real), edge_weights(sim)
    ks = stats.ks_2samp(wr, ws)
    print(f"\nw_{args.iterations} over {len(wr)} edges, each normalized by its mean: "
          f"KS statistic {ks.statistic:.3f} (p = {ks.pvalue:.2g}); coefficient of variation "
          f"real {wr.std():.2f}, simulated {ws.std():.2f}; share of edges with w = 0 real "
          f"{(wr == 0).mean():.2f}, simulated {(ws == 0).mean():.2f}")
    for name, w in (("real", wr), ("sim", ws)):
        q = np.quantile(w, [0.1, 0.25, 0.5, 0.75, 0.9])
        print(f"  {name} quantiles 10/25/50/75/90 %: " + " ".join(f"{x:.2f}" for x in q))
    print("\nmean w_n of the pairs, relative to the mean over all pairs (coefficient of "
          "variation in brackets):")
    for name, m in (("real", real), ("sim", sim)):
        parts = []
        for kind, (mean, cv) in pair_contrast(m).items():
            parts.append(f"{kind} {mean:.2f} ({cv:.2f})")
        print(f"  {name}: " + ", ".join(parts))
    print("\nblocks a host received per iteration, in the root's site / in another site "
          "(their ratio):")
    for name, m in (("real", real), ("sim", sim)):
        near, far = quota_skew(m)
        print(f"  {name}: {near:.0f} / {far:.0f} ({near / far:.2f})")
    r_dur = real.iterations["duration_s"].mean()
    s_dur = sim.iterations["duration_s"].mean()
    print(f"\nmean broadcast time: real {r_dur:.1f} s, simulated {s_dur:.1f} s")
    print(f"datasets in {root}")


if __name__ == "__main__":
    main()
