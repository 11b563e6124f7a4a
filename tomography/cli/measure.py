"""Commands that make datasets: ``simulate``, ``measure``, ``testbed`` and ``demo``."""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from tomography.cli.common import Progress, command, positive_int
from tomography.errors import DatasetError, TomographyError
from tomography.units import counted

if TYPE_CHECKING:
    from tomography.topology import Topology

__all__ = ["add_commands", "COMMANDS"]

DEMO_TOPOLOGY = "two-sites-demo"
DEMO_SIZE = {"testbed": "8MiB", "simulated": "16MiB"}
"""The demo's broadcast size: real broadcasts of 8 MiB take about 20 s on the testbed; the
simulator needs 16 MiB (about 5 choke rounds) to show the clusters as real swarms do."""

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


def _wrapped(text: str) -> str:
    """``text`` folded for the raw-description help formatter."""
    return textwrap.fill(text, width=76, initial_indent="  ", subsequent_indent="  ")


def _add_swarm_options(p: argparse.ArgumentParser, *, time_limit: str,
                       size: str = "16MiB", why_size: str = "", simulated: bool = False) -> None:
    g = p.add_argument_group("BitTorrent settings (recorded in meta.json)")
    g.add_argument("--size", default=size,
                   help=f"file size, with its unit (default {size}{why_size})")
    g.add_argument("--seed", type=int, default=0,
                   help="random seed: roots, peer lists (default 0)")
    g.add_argument("--tit-for-tat", choices=("on", "off"), default="on",
                   help="unchoke the peers that sent most (on, default) or without preference")
    g.add_argument("--unchoke-interval", default="15s",
                   help="time between choking decisions (default 15s, libtorrent's)")
    g.add_argument("--upload-slots", type=positive_int, default=8,
                   help=("unchoked peers per uploader, plus one optimistic (default 8)"
                         if simulated else "unchoked peers per uploader, libtorrent's "
                         "unchoke_slots_limit: its optimistic unchoke counts among them "
                         "(default 8)"))
    g.add_argument("--peer-list", type=positive_int, default=35,
                   help="random peers given to each peer (default 35)")
    g.add_argument("--piece-size", default=None,
                   help="piece size (default: libtorrent's automatic choice, the file size "
                        "over 2048 rounded up to a power of two, at least 16KiB)")
    g.add_argument("--time-limit", default=time_limit,
                   help=f"time after which an iteration is incomplete (default {time_limit})")


def _option(args: argparse.Namespace, name: str, parse: Callable[[str], Any]) -> Any:
    """``args.<name>`` read by ``parse``; a bad value is an error naming the option."""
    try:
        value = parse(getattr(args, name))
    except ValueError as e:
        raise TomographyError(f"--{name.replace('_', '-')}: {e}") from None
    if isinstance(value, (int, float)) and value <= 0:
        raise TomographyError(f"--{name.replace('_', '-')} must be positive, got "
                              f"{getattr(args, name)!r}")
    return value


def _resume(args: argparse.Namespace) -> bool:
    """``--resume``, saying so when there is nothing to continue (a new dataset starts)."""
    resume = getattr(args, "resume", False)
    if resume and not (Path(args.output) / "meta.json").exists():
        print(f"note: no dataset in {args.output} to resume: starting a new one",
              file=sys.stderr)
    return resume


def _swarm_params(args: argparse.Namespace):
    from measure.swarm import SwarmParams
    from tomography.units import parse_size, parse_time

    try:
        return SwarmParams(
            piece_size=_option(args, "piece_size", parse_size) if args.piece_size else None,
            upload_slots=args.upload_slots,
            unchoke_interval=_option(args, "unchoke_interval", parse_time),
            tit_for_tat=args.tit_for_tat == "on", peer_list=args.peer_list,
            time_limit=_option(args, "time_limit", parse_time))
    except ValueError as e:         # what the options alone cannot say (piece size in blocks)
        raise TomographyError(str(e).replace("piece_size", "--piece-size")) from None


def _add_testbed_scale(p: argparse.ArgumentParser) -> None:
    p.add_argument("--bandwidth-scale", type=float, default=1.0, metavar="F",
                   help="multiply every capacity by F, so the emulation fits the CPU "
                        "(default 1; recorded)")
    p.add_argument("--hosts-per-cluster", type=positive_int, default=None, metavar="K",
                   help="keep at most K hosts of each cluster (recorded)")
    p.add_argument("--name", default=None,
                   help="testbed name; its namespaces are tomo-NAME-* (default tb; status "
                        "without it lists every testbed)")


def _add_launcher_options(p: argparse.ArgumentParser) -> None:
    """Where the peers run, and the preflight: shared by every ``measure`` method."""
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--testbed", metavar="TOPOLOGY",
                       help="run inside the emulated network of a topology (needs root); "
                            "raised for the run unless already up")
    where.add_argument("--hosts", type=Path, metavar="FILE",
                       help="hosts.csv-style file: a local peer on each address")
    where.add_argument("--local", type=positive_int, metavar="N",
                       help="N local peers on loopback addresses 127.0.0.2...")
    where.add_argument("--mpi", action="store_true",
                       help="run under mpiexec/srun: rank 0 coordinates and writes the "
                            "dataset, every other rank runs one peer on its node")
    where.add_argument("--ssh", type=Path, metavar="FILE",
                       help="CSV host,ssh,address[,label][,command]: a peer on each host, "
                            "started with ssh from this machine")
    p.add_argument("-o", "--output", type=Path,
                   help="dataset directory (required unless --check)")
    p.add_argument("--check", action="store_true",
                   help="only run the preflight: print a table of the hosts (reachable, "
                        "versions, address, port, clock offset) and exit (2 if one failed)")
    p.add_argument("--skip-failed", action="store_true",
                   help="leave out the hosts that fail the preflight (recorded in meta.json) "
                        "instead of refusing to start")
    p.add_argument("--port", type=int, default=0,
                   help="the peers' listening port (default 0: any free port)")
    g = p.add_argument_group("MPI (--mpi)")
    g.add_argument("--network", metavar="CIDR|IFACE",
                   help="the network to measure on multi-homed nodes, e.g. 10.1.0.0/16 or "
                        "ib0 (default: the address of the node's host name, else its first "
                        "non-loopback address)")
    g = p.add_argument_group("SSH (--ssh)")
    g.add_argument("--remote-python", metavar="PATH", default="python3",
                   help="the Python on the hosts that has the toolkit (default python3)")
    g.add_argument("--remote-command", metavar="CMD",
                   help="the command that runs a peer on a host, the peer's arguments "
                        "appended (default: REMOTE_PYTHON -m measure.peer); a command "
                        "column in the hosts file overrides it per host")
    g.add_argument("--ssh-port", type=int, help="ssh -p")
    g.add_argument("--ssh-identity", metavar="FILE", help="ssh -i")
    g.add_argument("--ssh-config", metavar="FILE", help="ssh -F")
    g.add_argument("--ssh-option", action="append", default=[], metavar="OPT",
                   help="an ssh -o option, repeatable (e.g. StrictHostKeyChecking=accept-new)")
    g.add_argument("--ssh-connections", type=positive_int, default=10, metavar="K",
                   help="SSH handshakes at once (default 10, sshd's MaxStartups)")
    _add_testbed_scale(p)


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


def _add_probe_commands(msub: Any, fmt: Any) -> None:
    from measure.probetools import IPERF3_DEFAULTS, NETPIPE_DEFAULTS

    for tool, help_text in (("iperf3", "pairwise iperf3 throughput tests (the reference mesh)"),
                            ("netpipe", "pairwise NetPIPE (NPtcp) curves and Hockney's "
                                        "latency and bandwidth per pair")):
        p = msub.add_parser(tool, help=help_text, formatter_class=fmt, epilog=PROBE_EPILOG,
                            description=f"Run {tool} between every ordered pair of hosts and "
                            "write a probe dataset (probes.csv, raw output in raw/), one test "
                            "at a time as it finishes.")
        _add_launcher_options(p)
        g = p.add_argument_group("the mesh")
        g.add_argument("--schedule", choices=("exclusive", "rounds"), default="exclusive",
                       help="what runs at once (default exclusive; see below)")
        g.add_argument("--pairs", type=Path, metavar="FILE",
                       help="only these pairs: a CSV with src,dst")
        g.add_argument("--one-way", action="store_true",
                       help="one direction per pair (a < b): half the cost")
        g.add_argument("--repeats", type=positive_int, default=1,
                       help="tests per pair (default 1)")
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


def add_commands(sub: Any) -> None:
    """Add the dataset-making commands to the ``tomography`` sub-parsers."""
    fmt = argparse.RawDescriptionHelpFormatter
    p = command(sub, "simulate", "simulate BitTorrent broadcasts over a topology and write a "
                "measurement dataset",
                "Simulate instrumented BitTorrent broadcasts over a topology with a flow-level "
                "model (libtorrent's choking and piece picking, TCP connections sharing every "
                "link of their path) and write a measurement dataset exactly as a real run "
                "would: for networks too big to emulate.",
                ["tomography simulate N2 -n 15 -o n2           # the thesis's N2, 576 hosts, "
                 "~4 s an iteration",
                 "tomography simulate N2 -n 30 -o n2 --resume  # 15 more, same dataset",
                 "tomography simulate two-sites-rtt -o rtt --tcp-off all   # plain max-min "
                 "sharing",
                 "tomography evaluate n2                        # NMI against the topology's "
                 "labels"])
    p.add_argument("topology", help="a topology file or a built-in scenario name (N1, ...)")
    p.add_argument("-o", "--output", type=Path, required=True, help="dataset directory")
    p.add_argument("--iterations", "-n", type=positive_int, default=5,
                   help="broadcasts, each from the next root in a seeded rotation (default 5)")
    p.add_argument("--resume", action="store_true",
                   help="continue a dataset this command started (same topology and options); "
                        "where there is none yet, start one")
    p.add_argument("--force", action="store_true", help="overwrite an existing dataset")
    _add_swarm_options(p, time_limit="3600s", size="64MiB", simulated=True,
                       why_size=": the thesis's simulated broadcasts; from 32 MiB up "
                       "libtorrent cuts a file into 2048 pieces, so a simulation costs the "
                       "same for any larger size")
    g = p.add_argument_group(
        "TCP model (recorded in meta.json)", _wrapped(
        "Each connection's rate depends on its round-trip time through slow start (a new "
        "connection and again after idle: a choked connection is idle), sharing of a "
        "bottleneck in proportion to 1/RTT, the receive window (3 MiB) and libtorrent's "
        "request pipeline; defaults are Linux's and libtorrent's own."))
    g.add_argument("--tcp-off", default="", metavar="MECHANISMS",
                   help="switch mechanisms off, comma-separated: " + ", ".join(TCP_SWITCHES)
                        + ", or all (plain max-min sharing of the capacities)")
    g.add_argument("--loss", type=float, default=0.0,
                   help="random packet loss rate on every path, capping each connection at "
                        "Mathis's MSS/RTT*sqrt(1.5/loss) (default 0: no loss)")
    g.add_argument("--tcp", action="append", default=[], metavar="NAME=VALUE",
                   help="set one of the model's figures, repeatable: initial-window=14480B "
                        "(10 segments), receive-window=3MiB, rto-min=200ms, "
                        "request-queue-time=3s, min-requests=2, max-requests=500 (the "
                        "defaults shown)")

    p = sub.add_parser(
        "measure", help="measure hosts: BitTorrent broadcasts, or iperf3 / NetPIPE probes",
        formatter_class=fmt, description="Measure the hosts and write a measurement dataset: "
        "instrumented BitTorrent broadcasts (bittorrent), or the pairwise reference probes "
        "(iperf3, netpipe).",
        epilog=MEASURE_EPILOG)
    msub = p.add_subparsers(dest="method", metavar="METHOD", required=True)
    p = msub.add_parser("bittorrent", help="instrumented libtorrent broadcasts",
                        formatter_class=fmt, epilog=MEASURE_EPILOG,
                        description="Run instrumented BitTorrent broadcasts among the hosts "
                        "(one peer per host, a rotating root) and write a measurement dataset. "
                        "Every launcher first checks every host (the preflight).")
    _add_launcher_options(p)
    p.add_argument("--iterations", "-n", type=positive_int, default=10,
                   help="iterations (the most, with --until-converged; default 10)")
    p.add_argument("--until-converged", nargs="?", type=positive_int, const=-1, metavar="K",
                   help="stop once every supported level of the hierarchy has not changed "
                        "for K iterations (default K: 3)")
    p.add_argument("--trace", action="store_true",
                   help="also write trace.csv: every block's time (on this machine's clock, "
                        "hosts' clock offsets removed), sender and receiver")
    p.add_argument("--upload-limit", default=None,
                   help="per-peer upload cap for local runs, e.g. 4MiB/s (default none)")
    p.add_argument("--resume", action="store_true",
                   help="continue a dataset this command started (same hosts and options; "
                        "a new allocation of the same hosts is fine); where there is none "
                        "yet, start one (so a requeued batch job can always pass it)")
    p.add_argument("--force", action="store_true", help="overwrite an existing dataset")
    _add_swarm_options(p, time_limit="600s",
                       why_size=": enough blocks (1024) for stable counts on a 1 Gbit/s "
                       "cluster in a fraction of a second per broadcast; raise it on fast or "
                       "large networks")
    _add_probe_commands(msub, fmt)

    p = command(sub, "testbed", "raise, inspect or remove an emulated network (network "
                "namespaces + tc; needs root)",
                "Raise a topology as an emulated network on this machine: one network "
                "namespace per host and router, veth links shaped by tc to the topology's "
                "capacities. measure bittorrent --testbed raises and removes one by itself; "
                "this command keeps one up between runs. up estimates the cores and memory "
                "a measurement in it needs and refuses more than this machine can carry, "
                "saying which --hosts-per-cluster and --bandwidth-scale fit (--force raises "
                "it anyway). One measurement at a time uses a testbed: a second one with the "
                "same --name is refused, and down refuses a testbed in use unless --force.",
                ["sudo tomography testbed up two-sites-demo",
                 "sudo tomography testbed up N1 --hosts-per-cluster 2 --bandwidth-scale 0.38",
                 "sudo tomography testbed status",
                 "sudo tomography testbed down --all",
                 "sudo tomography testbed down --name tb --force   # stops the measurement "
                 "in it first"])
    p.add_argument("action", choices=("up", "down", "status"),
                   help="up: raise the topology; down: remove it; status: what is up")
    p.add_argument("topology", nargs="?",
                   help="topology file or scenario name (for up)")
    p.add_argument("--all", action="store_true",
                   help="with down: remove every testbed this tool made (tomo-*)")
    p.add_argument("--force", action="store_true",
                   help="with up: raise it even when its estimate (cores, memory) is more "
                        "than this machine can carry; with down: also a testbed a "
                        "measurement is using, which is stopped first (SIGTERM, as Ctrl-C: it "
                        "keeps its finished iterations and exits 130); without it, down "
                        "refuses a testbed in use")
    _add_testbed_scale(p)

    p = command(sub, "demo", "measure a built-in emulated network with real BitTorrent "
                "broadcasts and show what was found",
                "The whole method on a built-in network (two-sites-demo: 2 sites x 2 clusters "
                "x 5 hosts): real libtorrent broadcasts inside an emulated testbed (needs root; "
                "the simulator otherwise) until the clusters are stable, then the hierarchy, "
                "the tree and the accuracy against the truth; the dataset, hierarchy.json and "
                "tree.json under -o (an earlier demo there is replaced). docs/guide.md goes on "
                "from there: exports, a multicast plan, pictures.",
                ["sudo tomography demo                # ~3 min; results in out/demo",
                 "tomography demo --simulate -o sim   # the simulator, no root needed"])
    p.add_argument("-o", "--output", type=Path, default=Path("out/demo"),
                   help="where to write the dataset and results (default out/demo)")
    p.add_argument("--seed", type=int, default=0,
                   help="random seed: roots, peer lists (default 0)")
    p.add_argument("--size", help=f"file size per broadcast (default {DEMO_SIZE['testbed']} on "
                   f"the testbed, {DEMO_SIZE['simulated']} simulated: the model's choke rounds "
                   "need longer broadcasts to concentrate exchanges inside the clusters)")
    p.add_argument("--iterations", "-n", type=positive_int, default=12,
                   help="most iterations before giving up on convergence (default 12)")
    p.add_argument("--simulate", action="store_true",
                   help="use the flow-level simulator instead of the testbed (what the demo "
                        "does anyway without root)")


# --------------------------------------------------------------------------- commands


def _progress_bar(total: int, desc: str) -> tuple[Any, Callable[[Any], None]]:
    bar = Progress(desc, total=total)

    def step(result: Any) -> None:
        bar.set(bar.done + 1, note=f"last took {result.duration:.1f}s" + ("" if result.complete
                                                                else ", incomplete"))
    return bar, step


TCP_SWITCHES = {"slow-start": ("slow_start", False),
                "restart-after-idle": ("restart_after_idle", False),
                "rtt-fair": ("rtt_fair", False), "receive-window": ("receive_window", None),
                "request-pipeline": ("request_pipeline", False)}
"""What ``simulate --tcp-off`` switches off: the :class:`measure.tcp.TcpModel` field and
its value when off."""


TCP_FIGURES = {"initial-window": ("initial_window", "size"),
               "receive-window": ("receive_window", "size"),
               "rto-min": ("rto_min", "time"),
               "request-queue-time": ("request_queue_time", "time"),
               "min-requests": ("min_requests", "count"),
               "max-requests": ("max_requests", "count")}
"""What ``simulate --tcp NAME=VALUE`` sets: the :class:`measure.tcp.TcpModel` field and
the kind of value it takes."""


def _tcp_figures(settings: list[str]) -> dict[str, Any]:
    """The ``--tcp NAME=VALUE`` settings as :class:`measure.tcp.TcpModel` fields."""
    from tomography.units import parse_size, parse_time

    fields: dict[str, Any] = {}
    for setting in settings:
        name, sep, value = setting.partition("=")
        name = name.strip()
        if not sep or name not in TCP_FIGURES:
            raise TomographyError(f"--tcp {setting!r}: expected NAME=VALUE with NAME one of "
                                  f"{', '.join(TCP_FIGURES)}")
        field, kind = TCP_FIGURES[name]
        unit = {"size": "a size such as 64KiB", "time": "a time such as 200ms",
                "count": "a whole number"}[kind]
        try:
            fields[field] = (parse_size(value) if kind == "size" else
                             parse_time(value) if kind == "time" else int(value))
        except ValueError as e:
            why = "" if kind == "count" else f" ({e})"
            raise TomographyError(f"--tcp {setting!r}: {name} takes {unit}{why}") from None
        if fields[field] < 0 or (fields[field] == 0 and name != "rto-min"):
            raise TomographyError(f"--tcp {setting!r}: {name} must be "
                                  f"{'zero or more' if name == 'rto-min' else 'positive'}")
    low, high = fields.get("min_requests", 2), fields.get("max_requests", 500)
    if low > high:
        raise TomographyError(f"--tcp: min-requests ({low}) is above max-requests ({high})")
    return fields


def _tcp_model(args: argparse.Namespace):
    from measure.tcp import TcpModel

    off = {x.strip() for x in args.tcp_off.split(",") if x.strip()}
    unknown = off - set(TCP_SWITCHES) - {"all"}
    if unknown:
        raise TomographyError(f"--tcp-off: unknown mechanism {sorted(unknown)[0]!r}; choose from "
                              f"{', '.join(TCP_SWITCHES)} or all")
    if not 0 <= args.loss < 1:
        raise TomographyError(f"--loss must be in [0, 1), got {args.loss}")
    if "all" in off:
        off = set(TCP_SWITCHES)
    fields = _tcp_figures(args.tcp)
    both = [x for x in off if TCP_SWITCHES[x][0] in fields]
    if both:
        raise TomographyError(f"--tcp sets {both[0]}, which --tcp-off switches off: keep one")
    fields |= dict(TCP_SWITCHES[x] for x in off)
    try:
        return TcpModel(**fields, loss=args.loss)
    except ValueError as e:
        raise TomographyError(f"--tcp: {e}") from None


def cmd_simulate(args: argparse.Namespace) -> int:
    from measure.simulator import simulate
    from tomography.topology import read_topology
    from tomography.units import parse_size

    topo = read_topology(args.topology)
    params = _swarm_params(args)
    tcp = _tcp_model(args)
    size = _option(args, "size", parse_size)
    bar = Progress(f"simulating {topo.name}", total=args.iterations)
    step = _simulation_step(bar)
    added, incomplete = [], []

    def progress(i: int, result: Any) -> None:
        added.append(i)
        if not result.complete:
            incomplete.append(i)
        step(i, result)
    try:
        simulate(topo, args.output, iterations=args.iterations, file_size=size, seed=args.seed,
                 params=params, tcp=tcp, resume=_resume(args), overwrite=args.force,
                 progress=progress)
    except KeyboardInterrupt:
        bar.close()
        print(f"tomography: interrupted; {counted(bar.done, 'iteration')} "
              f"{'is' if bar.done == 1 else 'are'} in {args.output}; continue with the same "
              "command and --resume", file=sys.stderr)
        return 130
    bar.close()
    if not added:
        from tomography.dataset import read_measurement

        have = len(read_measurement(args.output).iteration_ids)
        print(f"{args.output} already has {counted(have, 'iteration')}: nothing to simulate "
              f"(-n {args.iterations} asks for {args.iterations} in all)")
        return 0
    print(f"wrote {counted(len(added), 'simulated iteration')} of {args.size} over {topo.name} "
          f"({counted(len(topo.hosts), 'host')}) to {args.output}"
          + (f" ({added[-1] + 1} in all)" if added[0] > 0 else ""))
    if incomplete:
        print(f"warning: {counted(len(incomplete), 'iteration')} of {len(added)} hit the time "
              f"limit ({args.time_limit}) before every peer had the file: marked incomplete, "
              "counts kept (tomography info lists them)", file=sys.stderr)
    return 0


def _stop_rule(args: argparse.Namespace, output: Path):
    if args.until_converged is None:
        return None
    from tqdm import tqdm

    from cluster.stability import DEFAULT_STABLE, StableHierarchy
    from tomography.dataset import read_measurement

    rule = StableHierarchy(DEFAULT_STABLE if args.until_converged == -1 else args.until_converged,
                           seed=args.seed)

    def stop(iteration: int) -> bool:
        m = read_measurement(output)
        while len(rule.history) < len(m.iteration_ids) - 1:  # resumed: catch up
            rule.update(m, len(rule.history) + 1)
        done = rule.update(m)
        tqdm.write(f"stop rule after {counted(len(m.iteration_ids), 'iteration')}: "
                   + (f"converged, {rule.levels[-1]} supported level(s) unchanged for "
                      f"{rule.k} iterations" if done else f"not yet: {rule.held_back}"),
                   file=sys.stderr)
        return done
    return stop


def _measure(args: argparse.Namespace, hosts, launch, meta: dict[str, Any]):
    """Run the broadcasts of ``measure``/``demo`` with a progress bar; the summary."""
    from measure.coordinator import run_broadcasts
    from tomography.units import parse_bandwidth, parse_size

    limit = getattr(args, "upload_limit", None)
    upload = int(parse_bandwidth(limit) / 8) if limit else 0
    bar, step = _progress_bar(args.iterations, "broadcasts")
    try:
        return run_broadcasts(hosts, args.output, iterations=args.iterations,
                              file_size=_option(args, "size", parse_size), launch=launch, seed=args.seed,
                              params=_swarm_params(args), upload_limit=upload,
                              trace=getattr(args, "trace", False), meta=meta,
                              resume=_resume(args),
                              overwrite=getattr(args, "force", False),
                              skip_failed=getattr(args, "skip_failed", False),
                              port=getattr(args, "port", 0),
                              stop=_stop_rule(args, args.output), progress=step)
    finally:
        bar.close()


def _interrupted(output: Path) -> int:
    from tomography.dataset import read_measurement

    try:
        kept = len(read_measurement(output).iteration_ids)
    except TomographyError:
        kept = 0
    print(f"tomography: interrupted; {kept} finished iteration(s) are in {output}; continue "
          "with the same command and --resume", file=sys.stderr)
    return 130


DEFAULT_TESTBED = "tb"
"""The testbed name when ``--name`` is not given."""


def _testbed_for(args: argparse.Namespace, held: ExitStack):
    """The testbed to measure on: the one already up under ``--name``, or a new one.

    Its claim is held in ``held`` (refused when another run holds it): two
    measurements in one testbed would disturb each other.
    """
    from measure import testbed
    from tomography.topology import read_topology

    topo = read_topology(args.testbed)
    name = args.name or DEFAULT_TESTBED
    held.enter_context(testbed.claim(name))
    if testbed.status(name).get("up"):
        bed = testbed.load(name)
        if bed.topology.name != topo.name:
            raise TomographyError(f"testbed {name!r} runs {bed.topology.name}, not "
                                  f"{topo.name}; use another --name or take it down")
        return bed, False
    return testbed.up(topo, name=name, bandwidth=args.bandwidth_scale,
                      hosts_per_cluster=args.hosts_per_cluster), True


def _terminate_as_interrupt(output: Path | None) -> None:
    """SIGTERM (a batch scheduler ending the allocation) stops a run as Ctrl-C does.

    The hint to resume is printed at once: under mpiexec the other ranks end
    too, and the launcher may kill this one before its clean-up is over.
    """
    import signal

    def handler(signum: int, frame: Any) -> None:
        if output is not None:
            print(f"tomography: terminated; the finished iterations stay in {output}; "
                  "continue with the same command and --resume", file=sys.stderr, flush=True)
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, handler)


def _ssh_setup(args: argparse.Namespace):
    from measure.ssh import SshOptions, read_ssh_hosts, ssh_transport

    hosts = read_ssh_hosts(args.ssh)
    options = SshOptions(remote_command=args.remote_command
                         or f"{args.remote_python} -m measure.peer",
                         port=args.ssh_port, identity=args.ssh_identity, config=args.ssh_config,
                         options=list(args.ssh_option), connections=args.ssh_connections)
    meta = {"ssh": {"targets": dict(zip(hosts["host"], hosts["ssh"])),
                    "remote_command": options.remote_command}}
    return hosts, ssh_transport(hosts, options), meta


def _mpi_setup(args: argparse.Namespace, comm: Any):
    """Rank 0's hosts, transport and records for an MPI run; agents are released on error."""
    from mpi4py import MPI

    from measure import mpi
    from measure.preflight import PreflightError

    reports = mpi.gather_hosts(comm, args.network)
    try:
        if comm.Get_size() < 3:
            raise TomographyError(f"--mpi needs at least 3 ranks, got {comm.Get_size()}: rank "
                                  "0 coordinates and every other rank runs a peer (mpiexec -n "
                                  "N+1 for N peers)")
        bad = [r for r in reports if "error" in r]
        if bad and not args.skip_failed:
            raise PreflightError("\n".join(f"rank {r['rank']} on {r['hostname']}: {r['error']}"
                                           for r in bad))
        hosts, warnings = mpi.rank_table([r for r in reports if "error" not in r], args.port)
        for warning in warnings:
            print(f"warning: {warning}", file=sys.stderr)
        transport = mpi.MpiTransport(comm, dict(zip(hosts["host"], hosts["rank"])))
    except BaseException:
        mpi.MpiTransport.release(comm)
        raise
    how = {r["hostname"]: r["how"] for r in reports if "how" in r}
    meta = {"mpi": {"library": MPI.Get_library_version().splitlines()[0].strip(),
                    "ranks": dict(zip(hosts["host"], map(int, hosts["rank"]))),
                    "network": args.network or "default", "address_chosen_by": how,
                    "failed_ranks": {int(r["rank"]): r["error"] for r in bad}}}
    return hosts, transport, meta


def cmd_measure(args: argparse.Namespace) -> int:
    from measure.coordinator import local_hosts
    from measure.transport import ProcessTransport, local

    if args.mpi:
        from measure import mpi

        comm = mpi.world()
        if comm.Get_rank() != 0:
            mpi.gather_hosts(comm, args.network)
            return mpi.serve_agent(comm)
    _terminate_as_interrupt(args.output)
    bed, raised, transport = None, False, None
    with ExitStack() as held:  # the testbed's claim, released once it is taken down
        try:
            if args.testbed:
                bed, raised = _testbed_for(args, held)
                hosts = bed.host_table()
                transport = ProcessTransport(bed.command, name="testbed")
                meta = {"topology": bed.topology.name, "testbed": bed.to_meta()}
                if not bed.latency_applied:
                    print(f"note: {bed.latency_note}", file=sys.stderr)
            elif args.mpi:
                hosts, transport, meta = _mpi_setup(args, comm)
            elif args.ssh:
                hosts, transport, meta = _ssh_setup(args)
            else:
                hosts = local_hosts(args.local) if args.local else _read_hosts_file(args.hosts)
                transport, meta = ProcessTransport(local), {}
            if args.check:
                return _check(hosts, transport, args)
            if args.output is None:
                raise TomographyError("-o/--output DIR is needed (or --check for the "
                                      "preflight alone)")
            if args.method != "bittorrent":
                return _mesh(args, hosts, transport, meta)
            summary = _measure(args, hosts, transport, meta)
        except KeyboardInterrupt:
            return _interrupted(args.output) if args.output else 130
        finally:
            if transport is not None:
                transport.close()
            if raised:
                from measure import testbed
                testbed.down(args.name or DEFAULT_TESTBED)
    print(summary.describe())
    print(f"analyse it: tomography hierarchy {args.output}; tomography tree {args.output}")
    return 0


def _mesh(args: argparse.Namespace, hosts, transport, meta: dict[str, Any]) -> int:
    """Run an iperf3 or NetPIPE mesh with a progress bar; print the summary."""
    from measure.mesh import MeshOptions, read_pairs, run_mesh
    from tomography.units import parse_size

    options = MeshOptions(tool=args.method, schedule=args.schedule, one_way=args.one_way,
                          repeats=args.repeats)
    if args.method == "iperf3":
        options.duration, options.parallel, options.omit = args.duration, args.parallel, args.omit
    else:
        options.upper, options.samples = int(_option(args, "upper", parse_size)), args.samples
    pairs = read_pairs(args.pairs, list(hosts["host"])) if args.pairs else None
    if getattr(args, "concurrency", None):
        return _concurrency(args, hosts, transport, meta, options)
    bar = Progress(f"{args.method} tests", unit="test")

    def step(done: int, total: int) -> None:
        bar.set(done, total=total)

    try:
        summary = run_mesh(hosts, args.output, options=options, pairs=pairs, launch=transport,
                           meta=meta, resume=_resume(args), overwrite=args.force,
                           skip_failed=args.skip_failed, progress=step)
    except KeyboardInterrupt:
        bar.close()
        print(f"tomography: interrupted; every finished test is in {args.output}/probes.csv; "
              "continue with the same command and --resume", file=sys.stderr)
        return 130
    bar.close()
    print(summary.describe())
    print(f"analyse it: tomography hierarchy {args.output}; tomography info {args.output}")
    return 0


def _concurrency(args: argparse.Namespace, hosts, transport, meta: dict[str, Any],
                 options: Any) -> int:
    """``measure iperf3 --concurrency``: which clusters share a bottleneck."""
    import numpy as np

    from measure.concurrency import choose_tests, clusters_of, format_bottlenecks
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
        from cluster.louvain import louvain
        from tomography.dataset import read_measurement
        from tomography.weights import mean_weights

        m = read_measurement(args.concurrency)
        W = mean_weights(m)
        flat = louvain(W, seed=0)
        labels = {h: f"C{c}" for h, c in zip(m.host_names, flat.labels)}
        dense = W.toarray()
        groups = clusters_of(labels)
        index = {h: i for i, h in enumerate(m.host_names)}
        bandwidth = {(a, b): float(np.mean(dense[np.ix_([index[h] for h in ha],
                                                         [index[h] for h in hb])]))
                     for a, ha in groups.items() for b, hb in groups.items() if a != b}
        source = f"the flat clustering of {args.concurrency}"
    tests = choose_tests(clusters_of(labels), bandwidth)
    repeats = args.repeats if args.repeats > 1 else 3
    print(f"concurrency test: {len(tests)} pairs of pairs from {source}, {repeats} repeats "
          "alone and together", file=sys.stderr)
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


def _check(hosts, transport, args: argparse.Namespace) -> int:
    from measure.coordinator import preflight
    from measure.preflight import format_checks

    if args.method != "bittorrent":
        checks = preflight(hosts, launch=transport, port=args.port, role="probe",
                           tools=[args.method])
        print(format_checks(checks))
        return 0 if all(c.ok for c in checks) else 2
    checks = preflight(hosts, launch=transport, params=_swarm_params(args), port=args.port)
    print(format_checks(checks))
    return 0 if all(c.ok for c in checks) else 2


def _read_hosts_file(path: Path):
    from tomography.dataset import read_hosts_table

    try:
        return read_hosts_table(path)
    except FileNotFoundError:
        raise DatasetError("no such hosts file", path=path) from None


def cmd_testbed(args: argparse.Namespace) -> int:
    from measure import testbed
    from tomography.topology import read_topology

    if args.action == "up":
        if not args.topology:
            raise TomographyError("testbed up needs a TOPOLOGY (file or scenario name)")
        bed = testbed.up(read_topology(args.topology), name=args.name or DEFAULT_TESTBED,
                         bandwidth=args.bandwidth_scale, hosts_per_cluster=args.hosts_per_cluster,
                         force=args.force)
        need, here = testbed.estimate(bed.topology), testbed.machine()
        print(f"testbed {bed.name} up: {bed.topology.name}, {len(bed.hosts)} hosts in "
              f"namespaces tomo-{bed.name}-*; bandwidth x{bed.scale['bandwidth']:g}"
              + (f", {bed.scale['hosts_per_cluster']} hosts per cluster"
                 if bed.scale.get("hosts_per_cluster") else ""))
        print(f"estimate: {need.describe(here)}; a measurement adds one copy of its file per "
              "host in /dev/shm" + ("" if need.fits(here) else
                                    "\nMORE than this machine can carry (raised with --force): "
                                    "measured bandwidths will show the CPU, not the topology"))
        if not bed.latency_applied:
            print(f"note: {bed.latency_note}")
        print(f"run a command on a host: ip netns exec {next(iter(bed.hosts.values()))} ...")
    elif args.action == "down":
        from measure.testbed.claims import describe

        name = args.name or DEFAULT_TESTBED
        users = [b for b in (testbed.raised_testbeds() if args.all else [testbed.status(name)])
                 if b["holder"]] if args.force else []
        removed = testbed.down(name, all=args.all, force=args.force)
        for b in users:
            print(f"stopped {describe(b['holder'])}, which was using testbed {b['name']}")
        print(f"removed {len(removed)} item(s)" + (": " + ", ".join(removed[:6])
                                                   + (" ..." if len(removed) > 6 else "")
                                                   if removed else ""))
    else:
        beds = [testbed.status(args.name)] if args.name else testbed.raised_testbeds()
        print(format_testbeds(beds))
        return 0 if any(b["up"] for b in beds) else 1
    return 0


def format_testbeds(beds: list[dict[str, Any]]) -> str:
    """The testbeds as a table: name, state, topology, hosts, namespaces, since when; who uses them.

    Examples
    --------
    >>> print(format_testbeds([{"name": "tb", "phase": "down", "up": False, "namespaces": [],
    ...                         "missing": [], "state": None, "holder": None}]))
    name      state        topology              hosts  namespaces  since
    tb        down         -                         -           0  -
    >>> print(format_testbeds([]))
    no testbed raised by this tool (tomography testbed up TOPOLOGY raises one)
    """
    from measure.testbed.claims import describe

    if not beds:
        return "no testbed raised by this tool (tomography testbed up TOPOLOGY raises one)"
    lines = [f"{'name':<9} {'state':<12} {'topology':<20} {'hosts':>6} {'namespaces':>11}  since"]
    for b in beds:
        state = b["state"] if isinstance(b["state"], dict) else {}
        topo = state.get("topology_name") or "-"
        hosts = len(state["hosts"]) if "hosts" in state else "-"
        lines.append(f"{b['name']:<9} {b['phase']:<12} {topo:<20} {hosts:>6} "
                     f"{len(b['namespaces']):>11}  {state.get('created', '-')}")
    if any(b["phase"] == "half-built" for b in beds):
        lines.append("half-built: an up was interrupted; remove it with tomography testbed down "
                     "--name NAME (or --all)")
    lines += [f"{b['name']}: in use by {describe(b['holder'])}" for b in beds if b["holder"]]
    return "\n".join(lines)


def _report(data: Path, out: Path, seed: int) -> None:
    """Print the flat clusters, the Hasse diagram, the tree and NMIs; write the JSON files.

    The analysis is that of ``tomography cluster``, ``hierarchy`` and ``tree``
    with their defaults (confidence, unsupported levels left out), so the JSON
    files and ids are those the commands give on the dataset.
    """
    from cluster.accuracy import hierarchy_nmi, nmi
    from cluster.louvain import louvain
    from tomography.cli import build_parser
    from tomography.cli.common import hierarchy, load_shared, tree_of, weight_unit
    from tomography.truth import labels_at_depth, truth_depth
    from visualize.text import cluster_tree_text, hasse_text

    args = build_parser().parse_args(["tree", str(data), "--seed", str(seed)])
    m, W, sampler = load_shared(args)
    truth, hosts = m.labels, m.host_names
    flat = louvain(W, seed=seed)
    print(f"\nflat clustering (Louvain): {counted(flat.n_clusters, 'cluster')}, modularity "
          f"{flat.modularity:.3f}")
    if truth:
        for depth in range(1, truth_depth(truth) + 1):
            cut = labels_at_depth(truth, depth, hosts)
            print(f"  NMI against the truth cut to depth {depth} "
                  f"({counted(len(set(cut)), 'group')}): {nmi(cut, flat.labels):.3f}")
    h = hierarchy(args, W, hosts, sampler)
    h.params.update(weight_unit=weight_unit(m))
    print("\naveraged-edge hierarchy (Hasse diagram; lower = more bandwidth)\n")
    print(hasse_text(h, truth))
    if truth:
        print("\n  NMI per level (level 1 is the finest; truth depth 1 the coarsest):")
        for r in hierarchy_nmi(h, truth).itertuples():
            print(f"    level {int(r.level)} ({counted(int(r.clusters), 'cluster')}) against "
                  f"truth depth {int(r.truth_depth)} ({counted(int(r.truth_clusters), 'group')})"
                  f": {r.nmi:.3f}" + (f"; best against depth {int(r.best_depth)}: {r.best_nmi:.3f}"
                                      if r.best_depth != r.truth_depth else ""))
        print("  (tomography evaluate also says which truth levels bandwidth cannot reveal)")
    t = tree_of(args, m, W, h, sampler)
    print(f"\ntopology as a tree (maximum spanning tree of the level-"
          f"{t.params['hierarchy_level']} clusters; {t.weight_caption})\n")
    print(cluster_tree_text(t, truth))
    (out / "hierarchy.json").write_text(h.to_json(indent=2) + "\n", encoding="utf-8")
    (out / "tree.json").write_text(t.to_json(indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {out / 'hierarchy.json'} and {out / 'tree.json'}\n"
          f"next: docs/guide.md from section 3 on this dataset, e.g. "
          f"{Path(sys.executable).parent / 'tomography'} hierarchy {data}")


def _demo_can_emulate(topology: Topology) -> str | None:
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


def _simulation_step(bar: Progress) -> Callable[[int, Any], None]:
    """The simulator's progress callback, moving ``bar`` one iteration per broadcast."""
    def step(i: int, result: Any) -> None:
        bar.set(i + 1, note=f"{result.duration:.1f}s simulated"
                + ("" if result.complete else ", incomplete"))
    return step


def cmd_demo(args: argparse.Namespace) -> int:
    from measure import testbed
    from measure.simulator import simulate
    from tomography.dataset import read_measurement
    from tomography.topology import read_topology
    from tomography.units import parse_size

    out = args.output
    data = out / "dataset"
    topo = read_topology(DEMO_TOPOLOGY)
    print(f"demonstration network {topo.name}: {topo.description}")
    if (data / "meta.json").exists():
        print(f"replacing the earlier demo's dataset in {data}")
    why_not = "--simulate was given" if args.simulate else _demo_can_emulate(topo)
    size = args.size or DEMO_SIZE["simulated" if why_not else "testbed"]
    ns = argparse.Namespace(output=data, iterations=args.iterations, size=size,
                            seed=args.seed, until_converged=-1, force=True, resume=False,
                            trace=True, piece_size=None, upload_slots=8,
                            unchoke_interval="15s", tit_for_tat="on", peer_list=35,
                            time_limit="120s")
    file_size = _option(ns, "size", parse_size)
    if why_not:
        print(f"not emulating it: {why_not}.\nSIMULATING it instead with the flow-level "
              "model (measure/simulator.py); run as root for real BitTorrent broadcasts.")
        print(f"simulated broadcasts of {size} until every supported level of the hierarchy "
              f"is stable for 3 iterations (at most {args.iterations}):")
        bar = Progress(f"simulating {topo.name}", total=args.iterations)
        stop, params, step = _stop_rule(ns, data), _swarm_params(ns), _simulation_step(bar)
        for n in range(1, args.iterations + 1):
            simulate(topo, data, iterations=n, file_size=file_size, seed=args.seed,
                     params=params, overwrite=n == 1, resume=n > 1, progress=step)
            if stop(n):
                break
        bar.close()
    else:
        with testbed.claim("demo"):  # refused while another demo runs
            testbed.down("demo")  # leftovers of an interrupted demo
            print("raising it in network namespaces (testbed 'demo') ...")
            bed = testbed.up(topo, name="demo")
            try:
                if not bed.latency_applied:
                    print(f"note: {bed.latency_note}")
                print(f"real BitTorrent broadcasts of {size} until every supported level "
                      f"of the hierarchy is stable for 3 iterations (at most {args.iterations}):")
                summary = _measure(ns, bed.host_table(), bed.command,
                                   {"topology": topo.name, "testbed": bed.to_meta()})
            except KeyboardInterrupt:
                return _interrupted(data)
            finally:
                testbed.down("demo")
        print(summary.describe())
        print("testbed removed")
    m = read_measurement(data)
    print(f"\ndataset: {m.n_hosts} hosts, {len(m.iteration_ids)} iterations -> {data}")
    _report(data, out, args.seed)
    return 0


COMMANDS = {"simulate": cmd_simulate, "measure": cmd_measure, "testbed": cmd_testbed,
            "demo": cmd_demo}
