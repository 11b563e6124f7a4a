"""``tomography measure``: BitTorrent broadcasts (``bittorrent``) or probes (``iperf3``,
``netpipe``) among real hosts, with a preflight of every host (``--check``) and the
concurrency test for shared bottlenecks (``iperf3 --concurrency``)."""

from __future__ import annotations

import argparse
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from measure.swarm import MEASURE_QUOTA, TRACE_HOSTS
from tomography.cli.broadcasts import (add_swarm_options, dataset_writer,
                                       interrupted, measure_broadcasts, parse_option, resuming,
                                       say_stopped, stop_rule, swarm_params,
                                       terminate_as_interrupt)
from tomography.cli.common import Progress, port_range, positive_int, say
from tomography.cli.launchers import add_launcher_options, mpi_world, open_launcher
from tomography.model.errors import TomographyError
from tomography.model.stop_rule import stop_rule_text

if TYPE_CHECKING:
    import pandas as pd

    from measure.coordinator import RunSummary
    from measure.mesh import MeshOptions
    from measure.transport import Transport

__all__ = ["add_parser", "run", "terminate_as_interrupt"]

MEASURE_EPILOG = """launchers (one peer per host; rank 0 or this machine coordinates):
  --local N      N peers on this machine, on loopback addresses
  --hosts FILE   peers on this machine, on the addresses of a hosts.csv
  --testbed T    peers inside the emulated network of topology T (root)
  --mpi          under mpiexec/srun: rank 0 coordinates, ranks 1..N run peers
  --ssh FILE     peers started over ssh from here (host,ssh,address[,label][,command])

examples:
  tomography measure bittorrent --testbed two-sites-demo --until-converged -o run
  tomography measure bittorrent --local 6 --upload-limit 4MiB/s -n 3 -o run
  mpiexec -n 33 tomography measure bittorrent --mpi --network 10.1.0.0/16 -n 10 -o run
  srun -N 16 --ntasks-per-node 1 tomography measure bittorrent --mpi -o run --resume
  tomography measure bittorrent --ssh hosts.csv --check
  tomography measure bittorrent --ssh hosts.csv --remote-python ~/venv/bin/python -o run

Every run starts with a preflight of every host: it answers, the toolkit and
libtorrent there agree with this one, the address is on the host, the port is
free; the clock offset of each host is measured and recorded. A host that fails
stops the run (one line each, exit 2) unless --skip-failed. Ctrl-C or SIGTERM
keeps every finished iteration; --resume continues. docs/clusters.md walks
through Slurm, Grid'5000, plain SSH machines and cloud VMs."""


PROBE_EPILOG = """schedules (N hosts, T seconds a test; --one-way halves each):
  exclusive  one test at a time in the whole mesh (perfSONAR's rule): N(N-1) T.
             Nothing disturbs a test: the numbers are each path's alone.
  rounds     a round-robin tournament, N-1 rounds of N/2 disjoint pairs, each
             pair both ways, a round's tests at once: 2(N-1) T. Disjoint pairs
             share no host but can share a link (two racks behind one uplink):
             then each reports its share, lower than the path alone; the
             concurrent column says how many ran at once.
  --pairs F  only the pairs of a CSV src,dst, one at a time (or packed into
             rounds of disjoint pairs with --schedule rounds).
A failed test is recorded with its error and tried once more at the end; the
mesh goes on. Ctrl-C keeps every finished test; --resume runs only the missing.

examples:
  tomography measure iperf3 --testbed two-sites-demo -o probes
  tomography measure iperf3 --local 6 --duration 2 --schedule rounds -o probes
  tomography measure iperf3 --ssh hosts.csv --one-way --repeats 3 -o probes
  mpiexec -n 17 tomography measure netpipe --mpi -o latency
  tomography export RUN --format gauge --bandwidth probes --probes probes -o g.xml"""


def add_parser(sub: Any) -> None:
    """Add ``measure`` and its methods to the ``tomography`` sub-commands."""
    fmt = argparse.RawDescriptionHelpFormatter
    p = sub.add_parser(
        "measure", help="measure hosts: BitTorrent broadcasts, or iperf3 / NetPIPE probes",
        formatter_class=fmt, description="Measure the hosts and write a measurement dataset: "
        "instrumented BitTorrent broadcasts (bittorrent), or the pairwise reference probes "
        "(iperf3, netpipe); or, once broadcasts found the clusters, the figures a multicast "
        "planner needs (figures).",
        epilog=MEASURE_EPILOG)
    p.set_defaults(run=run)
    msub = p.add_subparsers(dest="method", metavar="METHOD", required=True)
    p = msub.add_parser("bittorrent", help="instrumented libtorrent broadcasts",
                        formatter_class=fmt, epilog=MEASURE_EPILOG,
                        description="Run instrumented BitTorrent broadcasts among the hosts "
                        "(one peer per host, the roots spread over the network) and write a "
                        "measurement dataset. Every launcher first checks every host (the "
                        "preflight).")
    add_launcher_options(p)
    p.add_argument("--iterations", "-n", type=positive_int, default=10,
                   help="iterations (the most, with --until-converged; default 10)")
    p.add_argument("--until-converged", nargs="?", type=positive_int, const=-1, metavar="K",
                   help="stop once the supported levels of the hierarchy have settled: "
                        f"{stop_rule_text()} (default K: 2); a level whose support comes and "
                        "goes is reported as unstable")
    p.add_argument("--trace", action=argparse.BooleanOptionalAction, default=None,
                   help="write trace.csv: every block's time (on this machine's clock, hosts' "
                        "clock offsets removed), sender and receiver; the timeline plot and "
                        "cheaper figures (measure figures) read it (default: runs of at most "
                        f"{TRACE_HOSTS} hosts)")
    p.add_argument("--upload-limit", default=None,
                   help="per-peer upload cap for local runs, e.g. 4MiB/s (default none)")
    p.add_argument("--resume", action="store_true",
                   help="continue a dataset this command started (same hosts and options; "
                        "a new allocation of the same hosts is fine); where there is none "
                        "yet, start one (so a requeued batch job can always pass it)")
    p.add_argument("--force", action="store_true", help="overwrite an existing dataset")
    add_swarm_options(p, time_limit="600s",
                      why_size=": enough blocks (1024) for stable counts on a 1 Gbit/s "
                      "cluster in a fraction of a second per broadcast; raise it on fast or "
                      "large networks", quota=str(MEASURE_QUOTA),
                      why_quota=", 2 MiB: the verdict of whole broadcasts at a fraction of "
                      "their cost")
    _add_probe_commands(msub, fmt)
    from tomography.cli import figures

    figures.add_parser(msub, fmt)


def _add_probe_commands(msub: Any, fmt: Any) -> None:
    """``measure iperf3`` and ``measure netpipe``: the launchers and the mesh's options."""
    from measure.probetools import IPERF3_DEFAULTS, NETPIPE_DEFAULTS

    for tool, help_text in (("iperf3", "pairwise iperf3 throughput tests (the reference mesh)"),
                            ("netpipe", "pairwise NetPIPE (NPtcp) curves and Hockney's "
                                        "latency and bandwidth per pair")):
        p = msub.add_parser(tool, help=help_text, formatter_class=fmt, epilog=PROBE_EPILOG,
                            description=f"Run {tool} between every ordered pair of hosts and "
                            "write a probe dataset (probes.csv, raw output in raw/), one test "
                            "at a time as it finishes.")
        add_launcher_options(p)
        g = p.add_argument_group("the mesh")
        g.add_argument("--schedule", choices=("exclusive", "rounds"), default="exclusive",
                       help="what runs at once (default exclusive; see below)")
        g.add_argument("--pairs", type=Path, metavar="FILE",
                       help="only these pairs: a CSV with src,dst")
        g.add_argument("--one-way", action="store_true",
                       help="one direction per pair (a < b): half the cost")
        g.add_argument("--repeats", type=positive_int, default=1,
                       help="tests per pair (default 1)")
        g.add_argument("--ports", type=port_range, default=None, metavar="LOW-HIGH",
                       help="the ports each test's own server is drawn from (default "
                            "10000-32767): the range a firewall between the hosts lets "
                            "through; one port will do (5201), as a host serves one test at "
                            "a time")
        g.add_argument("--resume", action="store_true",
                       help="run only the tests this dataset lacks (none there yet: start "
                            "one)")
        g.add_argument("--force", action="store_true", help="overwrite an existing dataset")
        if tool == "iperf3":
            g.add_argument("--duration", type=positive_int, default=IPERF3_DEFAULTS["duration"],
                           metavar="S", help="seconds per test, iperf3 -t (default 10, "
                                             "iperf3's; whole seconds)")
            g.add_argument("--parallel", type=positive_int,
                           default=IPERF3_DEFAULTS["parallel"], metavar="N",
                           help="parallel streams, iperf3 -P (default 1, iperf3's)")
            g.add_argument("--omit", type=int, default=IPERF3_DEFAULTS["omit"], metavar="S",
                           help="seconds left out at the start (TCP slow start), iperf3 -O "
                                "(default 0, iperf3's)")
            g.add_argument("--concurrency", nargs="?", const="labels", metavar="DATASET",
                           help="the concurrency test for shared bottlenecks instead of a "
                                "mesh: for every two clusters, a pair leaving each, alone "
                                "then together (--repeats times, default 3); clusters from "
                                "DATASET's flat clustering, or the hosts' labels")
        else:
            g.add_argument("--upper", default=f"{NETPIPE_DEFAULTS['upper'] // 1024}KiB",
                           help="largest message, NPtcp -u (default 128KiB)")
            g.add_argument("--samples", type=positive_int, default=NETPIPE_DEFAULTS["samples"],
                           help="round trips per message size, NPtcp -n (default 5; NetPIPE's "
                                "own timing takes 40 s a pair up to 1 MiB)")


def run(args: argparse.Namespace) -> int:
    """Measure with the launcher and method of ``args``, or only run the preflight."""
    comm, agent_status = mpi_world(args)
    if agent_status is not None:   # this rank ran an agent for rank 0
        return agent_status
    terminate_as_interrupt(args.output)
    with ExitStack() as held:  # the launcher's set-up, undone in reverse on the way out
        if args.output is not None and not args.check:   # one writer, before anything starts
            held.enter_context(dataset_writer(args.output))
        try:
            hosts, transport, meta = open_launcher(args, held, comm)
            if args.check:
                return _check(args, hosts, transport)
            if args.output is None:
                raise TomographyError("-o/--output DIR is needed (or --check for the "
                                      "preflight alone)")
            if args.method != "bittorrent":
                return _mesh(args, hosts, transport, meta)
            summary = _broadcasts(args, hosts, transport, meta)
        except KeyboardInterrupt:
            return interrupted(args.output) if args.output else 130
    print(summary.describe())
    print(f"analyse it: tomography hierarchy {args.output}; tomography tree {args.output}")
    return 0


def _check(args: argparse.Namespace, hosts: pd.DataFrame, transport: Transport) -> int:
    """``--check``: the preflight's table of the hosts; 2 if one failed."""
    from measure.coordinator import preflight
    from measure.preflight import format_checks

    if args.method == "bittorrent":
        checks = preflight(hosts, launch=transport, params=swarm_params(args), port=args.port)
    else:
        checks = preflight(hosts, launch=transport, port=args.port, role="probe",
                           tools=[args.method])
    print(format_checks(checks))
    return 0 if all(c.ok for c in checks) else 2


def _broadcasts(args: argparse.Namespace, hosts: pd.DataFrame, transport: Transport,
                meta: dict[str, Any]) -> RunSummary:
    """``measure bittorrent``: the broadcasts of the options, with a progress bar."""
    from cluster.stability import stop_rule_meta
    from tomography.model.units import parse_bandwidth, parse_size

    upload = int(parse_bandwidth(args.upload_limit) / 8) if args.upload_limit else 0
    return measure_broadcasts(hosts, transport, args.output, iterations=args.iterations,
                              file_size=parse_option("--size", args.size, parse_size),
                              seed=args.seed, params=swarm_params(args), upload_limit=upload,
                              trace=args.trace,
                              meta=meta if args.until_converged is None else {
                                  **meta, "stop_rule": stop_rule_meta(
                                      None if args.until_converged == -1
                                      else args.until_converged, seed=args.seed)},
                              resume=resuming(args.resume, args.output), overwrite=args.force,
                              skip_failed=args.skip_failed, port=args.port,
                              stop=_until_converged(args))


def _until_converged(args: argparse.Namespace) -> Callable[[int], bool] | None:
    """The stop rule of ``--until-converged [K]`` (-1: given without K), or None."""
    if args.until_converged is None:
        return None
    return stop_rule(args.output, None if args.until_converged == -1 else args.until_converged,
                     seed=args.seed)


def _mesh(args: argparse.Namespace, hosts: pd.DataFrame, transport: Transport,
          meta: dict[str, Any]) -> int:
    """Run an iperf3 or NetPIPE mesh with a progress bar; print the summary."""
    from measure.mesh import MeshOptions, read_pairs, run_mesh
    from tomography.model.units import parse_size

    tool = ({"duration": args.duration, "parallel": args.parallel, "omit": args.omit}
            if args.method == "iperf3" else
            {"upper": int(parse_option("--upper", args.upper, parse_size)),
             "samples": args.samples})
    options = MeshOptions(tool=args.method, schedule=args.schedule, one_way=args.one_way,
                          repeats=args.repeats, **tool,
                          **({"ports": args.ports} if args.ports else {}))
    pairs = read_pairs(args.pairs, list(hosts["host"])) if args.pairs else None
    if getattr(args, "concurrency", None):
        return _concurrency(args, hosts, transport, meta, options)
    bar = Progress(f"{args.method} tests", unit="test")

    def step(done: int, total: int) -> None:
        bar.set(done, total=total)

    try:
        summary = run_mesh(hosts, args.output, options=options, pairs=pairs, launch=transport,
                           meta=meta, resume=resuming(args.resume, args.output),
                           overwrite=args.force, skip_failed=args.skip_failed, progress=step)
    except KeyboardInterrupt:
        bar.close()
        say_stopped(f"interrupted; every finished test is in {args.output}/probes.csv; "
                    "continue with the same command and --resume")
        return 130
    bar.close()
    print(summary.describe())
    print(f"analyse it: tomography hierarchy {args.output}; tomography info {args.output}")
    return 0


def _concurrency(args: argparse.Namespace, hosts: pd.DataFrame, transport: Transport,
                 meta: dict[str, Any], options: MeshOptions) -> int:
    """``measure iperf3 --concurrency``: which clusters share a bottleneck.

    The clusters are the hosts' labels, or the flat clustering of a dataset
    (:func:`tomography.pipeline.analyze`), whose mean weights between clusters
    choose the destinations best connected to the sources.
    """
    from measure.concurrency import (choose_tests, cluster_bandwidths, clusters_of,
                                     format_bottlenecks)
    from measure.mesh import run_concurrency

    bandwidth = None
    if args.concurrency == "labels":
        labels = {h: str(label).split("/")[-1] for h, label in zip(hosts["host"], hosts["label"])
                  if str(label)}
        if len(labels) < len(hosts):
            raise TomographyError("--concurrency without a DATASET clusters the hosts by their "
                                  "labels, and some hosts have none: give a DATASET to cluster")
        source = "the hosts' labels"
    else:
        from tomography.pipeline import analyze

        a = analyze(args.concurrency, seed=0, resamples=0)   # the clusters, no confidence
        labels = {h: f"C{c}" for h, c in zip(a.hosts, a.flat.clustering.labels)}
        bandwidth = cluster_bandwidths(a.graph.matrix, a.hosts, labels)
        source = f"the flat clustering of {args.concurrency}"
    tests = choose_tests(clusters_of(labels), bandwidth)
    repeats = args.repeats if args.repeats > 1 else 3
    say(f"concurrency test: {len(tests)} pairs of pairs from {source}, {repeats} repeats "
        "alone and together")
    bar = Progress("concurrency", total=len(tests), unit="test")

    def step(done: int, total: int) -> None:
        bar.set(done, total=total)

    try:
        frame = run_concurrency(hosts, args.output, tests, options=options, repeats=repeats,
                                launch=transport, meta=meta, overwrite=args.force,
                                skip_failed=args.skip_failed, progress=step)
    finally:
        bar.close()
    print(format_bottlenecks(frame))
    print(f"wrote {args.output}/concurrency.csv and probes.csv")
    return 0
