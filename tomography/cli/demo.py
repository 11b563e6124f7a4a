"""``tomography demo``: the whole method on a built-in network, measured and analysed.

Real BitTorrent broadcasts in an emulated testbed of ``two-sites-demo`` when
this machine can raise one (root, iproute2, enough cores and memory), the
flow-level simulator otherwise, until the stop rule says the hierarchy is
stable; then the report of :func:`tomography.pipeline.analyze`.  On the
testbed the demo closes the loop: it measures the figures a planner needs
between the clusters found (:mod:`measure.figures`), plans a multicast over
them and runs it beside the topology-oblivious host-order chain and
BitTorrent (:mod:`measure.multicast`), as ``tomography multicast --dataset``
does by default.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from measure.swarm import MEASURE_QUOTA
from tomography.cli.broadcasts import (dataset_writer, interrupted,
                                       measure_broadcasts, parse_option, simulation_step,
                                       stop_rule, terminate_as_interrupt)
from tomography.cli.common import Progress, command, positive_int, say
from tomography.model.units import counted

if TYPE_CHECKING:
    from measure.swarm import SwarmParams
    from tomography.model.topology import Topology

__all__ = ["add_parser", "run", "DEMO_TOPOLOGY", "DEMO_SIZE"]

DEMO_TOPOLOGY = "two-sites-demo"
DEMO_SIZE = "8MiB"
"""The demo's broadcast size, on the testbed and in the simulator."""
DEMO_MULTICAST = ("balanced", "chain-clusters", "chain-hosts")
"""The static methods the demo runs over its measured plan, beside BitTorrent."""
DEMO_MULTICAST_SIZE = 4 * 2**20
"""Bytes of the demo's multicasts: about 4 s across the demo's slowest link."""
DEMO_TIME_LIMIT = 120.0
"""Seconds after which a demo iteration is incomplete; real broadcasts end at the block
quota of ``measure bittorrent`` (:data:`measure.swarm.MEASURE_QUOTA`),
simulated ones run whole; the other swarm settings are :class:`measure.swarm.SwarmParams`'s
defaults."""


def add_parser(sub: Any) -> None:
    """Add ``demo`` to the ``tomography`` sub-commands."""
    p = command(sub, "demo", "measure a built-in emulated network with real BitTorrent "
                "broadcasts and show what was found",
                "The whole method on a built-in network (two-sites-demo: 2 sites x 2 clusters "
                "x 5 hosts): real libtorrent broadcasts inside an emulated testbed (needs root; "
                "the simulator otherwise) until the clusters are stable, then the hierarchy, "
                "the tree and the accuracy against the truth, and on the testbed multicasts "
                "planned over what was measured, run beside a host-order chain and BitTorrent; "
                "the dataset, hierarchy.json, tree.json, report.html (one page of it all) and "
                "the multicasts under -o (an earlier demo there is replaced). docs/guide.md "
                "goes on from there: exports, plans, pictures.",
                ["sudo tomography demo                # ~2 min; results in out/demo",
                 "tomography demo --simulate -o sim   # the simulator, no root needed"])
    p.add_argument("-o", "--output", type=Path, default=Path("out/demo"),
                   help="where to write the dataset and results (default out/demo)")
    p.add_argument("--seed", type=int, default=0,
                   help="random seed: roots, peer lists (default 0)")
    p.add_argument("--size", default=DEMO_SIZE,
                   help=f"file size per broadcast (default {DEMO_SIZE})")
    p.add_argument("--iterations", "-n", type=positive_int, default=12,
                   help="most iterations before giving up on convergence (default 12)")
    p.add_argument("--simulate", action="store_true",
                   help="use the flow-level simulator instead of the testbed (what the demo "
                        "does anyway without root)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Measure (or simulate) the demo network until stable, then print the report.

    The dataset directory is held for the whole run (one writer at a time), and Ctrl-C or
    SIGTERM stop it keeping the finished iterations, as for ``measure``.
    """
    data = args.output / "dataset"
    terminate_as_interrupt(data)
    with dataset_writer(data):
        return _demo(args)


def _demo(args: argparse.Namespace) -> int:
    from measure.swarm import SwarmParams
    from tomography.model.topology import read_topology
    from tomography.model.units import parse_size

    out = args.output
    data = out / "dataset"
    topo = read_topology(DEMO_TOPOLOGY)
    print(f"demonstration network {topo.name}: {topo.description}")
    if (data / "meta.json").exists():
        print(f"replacing the earlier demo's dataset in {data}")
    why_not = "--simulate was given" if args.simulate else _can_emulate(topo)
    size = args.size
    file_size = parse_option("--size", size, parse_size)
    params = SwarmParams(time_limit=DEMO_TIME_LIMIT,
                         block_quota=None if why_not else MEASURE_QUOTA)
    stop = stop_rule(data, seed=args.seed)
    if why_not:
        print(f"not emulating it: {why_not}.\nSIMULATING it instead with the flow-level "
              "model (measure/simulator.py); run as root for real BitTorrent broadcasts.")
        print(f"simulated broadcasts of {size} until the supported levels of the hierarchy "
              f"have settled, as --until-converged decides (at most {args.iterations}):")
        _simulate(topo, data, iterations=args.iterations, file_size=file_size, seed=args.seed,
                  params=params, stop=stop)
    else:
        return _emulate(topo, data, size, iterations=args.iterations, file_size=file_size,
                        seed=args.seed, params=params, stop=stop,
                        then=lambda bed: _report_and_deliver(bed, data, out, args.seed))
    _summary(data)
    _report(data, out, args.seed)
    print("\nno multicasts: they need the emulated network (run as root without --simulate); "
          "tomography multicast --help says how to run them on real hosts")
    _page(data, out, args.seed, multicast=None)
    return 0


def _summary(data: Path) -> None:
    from tomography.model.dataset import read_measurement

    m = read_measurement(data)
    print(f"\ndataset: {m.n_hosts} hosts, {len(m.iteration_ids)} iterations -> {data}")


def _simulate(topo: Topology, data: Path, *, iterations: int, file_size: int, seed: int,
              params: SwarmParams, stop: Callable[[int], bool]) -> None:
    """Simulated broadcasts into ``data``, one at a time, until ``stop`` or ``iterations``."""
    from measure.simulator import simulate

    bar = Progress(f"simulating {topo.name}", total=iterations)
    step = simulation_step(bar)
    for n in range(1, iterations + 1):
        simulate(topo, data, iterations=n, file_size=file_size, seed=seed, params=params,
                 overwrite=n == 1, resume=n > 1, progress=step)
        if stop(n):
            break
    bar.close()


def _emulate(topo: Topology, data: Path, size: str, *, iterations: int, file_size: int,
             seed: int, params: SwarmParams, stop: Callable[[int], bool],
             then: Callable[[Any], None]) -> int:
    """Real broadcasts into ``data`` in a testbed ``demo`` raised for them, then ``then(bed)``
    (the report and the multicasts), then the testbed removed; the exit status (130 when
    interrupted)."""
    from cluster.stability import stop_rule_meta
    from measure import testbed

    with testbed.claim("demo"):  # refused while another demo runs
        testbed.down("demo")  # leftovers of an interrupted demo
        print("raising it in network namespaces (testbed 'demo') ...")
        bed = testbed.up(topo, name="demo")
        try:
            if not bed.latency_applied:
                print(f"note: {bed.latency_note}")
            print(f"real BitTorrent broadcasts of {size}, each ended once every host holds "
                  f"{params.block_quota} blocks of it (measure bittorrent's --block-quota), "
                  "until the supported levels of the hierarchy have settled, as "
                  f"--until-converged decides (at most {iterations}):")
            summary = measure_broadcasts(bed.host_table(), bed.command, data,
                                         iterations=iterations, file_size=file_size, seed=seed,
                                         params=params, trace=True, overwrite=True, stop=stop,
                                         meta={"topology": topo.name, "testbed": bed.to_meta(),
                                               "stop_rule": stop_rule_meta(seed=seed)})
            print(summary.describe())
            then(bed)
        except KeyboardInterrupt:
            return interrupted(data)
        finally:
            testbed.down("demo")
    print("testbed removed")
    return 0


def _report_and_deliver(bed: Any, data: Path, out: Path, seed: int) -> None:
    """The report, then multicasts over the measured plan in the testbed that measured it.

    As ``tomography multicast --dataset`` does by default: the figures of the
    finest level's clusters measured (``tomography measure figures``: a few
    iperf3 tests between their representatives, the links they share
    included), then balanced multicasting and the chains planned over them;
    nothing comes from the topology.
    """
    from measure.multicast import run_multicasts
    from measure.transport import ProcessTransport
    from tomography.cli.export import gauge_model
    from tomography.cli.figures import measure_figures
    from tomography.cli.multicast import multicast_table
    from tomography.planning.deliveries import deliveries
    from tomography.model.errors import TomographyError

    _summary(data)
    a = _report(data, out, seed)
    hosts = bed.host_table()
    names = sorted(hosts["host"])
    transport = ProcessTransport(bed.command, name="testbed")
    print(f"\nclosing the loop: the figures a planner needs between the "
          f"{len(a.hierarchy.levels[0])} clusters (iperf3 tests between their representatives, "
          "as tomography measure figures runs them):")
    try:
        with dataset_writer(data / "figures"):
            measure_figures(hosts, transport, data, a.hierarchy, 1, force=True,
                            keep_transport=True)
        model = gauge_model(a, level=1, source="figures", dataset=data)
        plans = deliveries(list(DEMO_MULTICAST), names, names[0], DEMO_MULTICAST_SIZE, model)
    except TomographyError as exc:
        transport.close()
        print(f"no multicast: {exc}")
        _page(data, out, seed, multicast=None)
        return
    print(f"multicasts of {DEMO_MULTICAST_SIZE // 2**20} MiB from {names[0]} planned over "
          "them, beside the host-order chain and BitTorrent:")
    run_multicasts(hosts, plans, out / "multicast", launch=transport, repeats=1,
                   bittorrent=True, overwrite=True, time_limit=DEMO_TIME_LIMIT,
                   meta={"topology": bed.topology.name, "testbed": bed.to_meta(),
                         "measured_with": str(data)})
    print(multicast_table(out / "multicast"))
    print(f"(tomography multicast runs these and every planner; docs/multicast.md; "
          f"the multicasts are in {out / 'multicast'})")
    _page(data, out, seed, multicast=out / "multicast")


def _page(data: Path, out: Path, seed: int, *, multicast: Path | None) -> None:
    """Write ``out/report.html`` (:func:`tomography.report.write_report`, the analysis of
    :func:`_report` with the dataset's labels as truth) and say where, in one line; the
    multicasts of this demo only, not an earlier demo's."""
    from tomography.report import write_report

    r = write_report(data, out / "report.html", seed=seed, multicast=multicast or False)
    print(f"report: {r.path} (one self-contained page; open it in a browser)")


def _can_emulate(topology: Topology) -> str | None:
    """Why the demo cannot raise a testbed of ``topology`` here, or None when it can."""
    import shutil

    from measure import testbed

    if os.geteuid() != 0:
        return "not root (network namespaces and tc need root)"
    missing = [tool for tool in ("ip", "tc") if shutil.which(tool) is None]
    if missing:
        return f"missing {' and '.join(missing)} (apt-get install iproute2)"
    need, here = testbed.estimate(topology), testbed.machine()
    return None if need.fits(here) else f"more than this machine can carry: {need.describe(here)}"


def _report(data: Path, out: Path, seed: int) -> Any:
    """Print the flat clusters, the Hasse diagram, the tree and NMIs; write the JSON files.

    The analysis is that of ``tomography cluster``, ``hierarchy`` and ``tree``
    with their defaults (confidence, unsupported levels left out), so the JSON
    files and ids are those the commands give on the dataset.
    """
    from cluster.accuracy import hierarchy_nmi, nmi
    from tomography.pipeline import analyze
    from tomography.model.truth_labels import labels_at_depth, truth_depth
    from visualize.text import cluster_tree_text, hasse_text

    a = analyze(data, seed=seed)
    for note in a.notes:
        say(f"note: {note}")
    truth, hosts = a.measurement.labels, a.hosts
    flat = a.flat.clustering
    print(f"\nflat clustering (Louvain): {counted(flat.n_clusters, 'cluster')}, modularity "
          f"{flat.modularity:.3f}")
    if truth:
        for depth in range(1, truth_depth(truth) + 1):
            cut = labels_at_depth(truth, depth, hosts)
            print(f"  NMI against the truth cut to depth {depth} "
                  f"({counted(len(set(cut)), 'group')}): {nmi(cut, flat.labels):.3f}")
    h = a.hierarchy
    print("\naveraged-edge hierarchy (Hasse diagram; lower = more bandwidth)\n")
    print(hasse_text(h, truth=truth))
    if truth:
        print("\n  NMI per level (level 1 is the finest; truth depth 1 the coarsest):")
        for r in hierarchy_nmi(h, truth).itertuples():
            print(f"    level {int(r.level)} ({counted(int(r.clusters), 'cluster')}) against "
                  f"truth depth {int(r.truth_depth)} ({counted(int(r.truth_clusters), 'group')})"
                  f": {r.nmi:.3f}" + (f"; best against depth {int(r.best_depth)}: {r.best_nmi:.3f}"
                                      if r.best_depth != r.truth_depth else ""))
        print("  (tomography evaluate also says which truth levels bandwidth cannot reveal)")
    t = a.tree
    print(f"\ntopology as a tree (maximum spanning tree of the level-"
          f"{t.params['hierarchy_level']} clusters; {t.weight_caption})\n")
    print(cluster_tree_text(t, truth=truth))
    (out / "hierarchy.json").write_text(h.to_json(indent=2) + "\n", encoding="utf-8")
    (out / "tree.json").write_text(t.to_json(indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {out / 'hierarchy.json'} and {out / 'tree.json'}\n"
          f"next: docs/guide.md from section 3 on this dataset, e.g. "
          f"{Path(sys.executable).parent / 'tomography'} hierarchy {data}")
    return a
