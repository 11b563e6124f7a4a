"""``tomography simulate``: simulated BitTorrent broadcasts over a topology, as a dataset."""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tomography.cli.broadcasts import (add_swarm_options, dataset_writer, parse_option,
                                       resuming, say_stopped, simulation_step,
                                       swarm_params, terminate_as_interrupt)
from tomography.cli.common import Progress, command, positive_int, say
from tomography.model.errors import TomographyError
from tomography.model.scenarios import network_help
from tomography.model.units import counted

if TYPE_CHECKING:
    from measure.tcp import TcpModel

__all__ = ["add_parser", "run", "TCP_SWITCHES", "TCP_FIGURES"]

TCP_SWITCHES = {"slow-start": ("slow_start", False),
                "restart-after-idle": ("restart_after_idle", False),
                "rtt-fair": ("rtt_fair", False), "receive-window": ("receive_window", None),
                "request-pipeline": ("request_pipeline", False)}
"""What ``simulate --tcp-off`` switches off: the :class:`measure.tcp.TcpModel` field and
its value when off."""

TCP_FIGURES = {"initial-window": ("initial_window", "size"),
               "receive-window": ("receive_window", "size"),
               "rto-min": ("rto_min", "time"),
               "queue-delay": ("queue_delay", "time"),
               "request-queue-time": ("request_queue_time", "time"),
               "min-requests": ("min_requests", "count"),
               "max-requests": ("max_requests", "count")}
"""What ``simulate --tcp NAME=VALUE`` sets: the :class:`measure.tcp.TcpModel` field and
the kind of value it takes."""


def add_parser(sub: Any) -> None:
    """Add ``simulate`` to the ``tomography`` sub-commands."""
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
    p.add_argument("topology", help=network_help())
    p.add_argument("-o", "--output", type=Path, required=True, help="dataset directory")
    p.add_argument("--iterations", "-n", type=positive_int, default=5,
                   help="broadcasts, each from the next root (--roots) (default 5)")
    p.add_argument("--resume", action="store_true",
                   help="continue a dataset this command started (same topology and options); "
                        "where there is none yet, start one")
    p.add_argument("--force", action="store_true", help="overwrite an existing dataset")
    add_swarm_options(p, time_limit="3600s", size="64MiB", simulated=True,
                      why_size=": the thesis's simulated broadcasts; from 32 MiB up "
                      "libtorrent cuts a file into 2048 pieces, so a simulation costs the "
                      "same for any larger size")
    g = p.add_argument_group(
        "TCP model (recorded in meta.json)", textwrap.fill(
            "Each connection's rate depends on its round-trip time through slow start (a new "
            "connection and again after idle: a choked connection is idle), sharing of a "
            "bottleneck in proportion to 1/RTT (plus a standing queue, if set), the receive "
            "window (3 MiB) and libtorrent's request pipeline; defaults are Linux's and "
            "libtorrent's own.",
            width=76, initial_indent="  ", subsequent_indent="  "))
    g.add_argument("--tcp-off", default="", metavar="MECHANISMS",
                   help="switch mechanisms off, comma-separated: " + ", ".join(TCP_SWITCHES)
                        + ", or all (plain max-min sharing of the capacities)")
    g.add_argument("--loss", type=float, default=0.0,
                   help="random packet loss rate on every path, capping each connection at "
                        "Mathis's MSS/RTT*sqrt(1.5/loss) (default 0: no loss)")
    g.add_argument("--tcp", action="append", default=[], metavar="NAME=VALUE",
                   help="set one of the model's figures, repeatable: initial-window=14480B "
                        "(10 segments), receive-window=3MiB, rto-min=200ms, "
                        "queue-delay=0s (50ms: as the testbed's shaped queues), "
                        "request-queue-time=3s, min-requests=2, max-requests=500 (the "
                        "defaults shown)")
    p.set_defaults(run=run)


def _tcp_figures(settings: list[str]) -> dict[str, Any]:
    """The ``--tcp NAME=VALUE`` settings as :class:`measure.tcp.TcpModel` fields."""
    from tomography.model.units import parse_size, parse_time

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
        may_be_zero = name in ("rto-min", "queue-delay")
        if fields[field] < 0 or (fields[field] == 0 and not may_be_zero):
            raise TomographyError(f"--tcp {setting!r}: {name} must be "
                                  f"{'zero or more' if may_be_zero else 'positive'}")
    low, high = fields.get("min_requests", 2), fields.get("max_requests", 500)
    if low > high:
        raise TomographyError(f"--tcp: min-requests ({low}) is above max-requests ({high})")
    return fields


def _tcp_model(args: argparse.Namespace) -> TcpModel:
    """The TCP model of ``--tcp-off``, ``--loss`` and ``--tcp``."""
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


def run(args: argparse.Namespace) -> int:
    """Simulate the broadcasts into ``args.output``, its one writer; say what was written."""
    terminate_as_interrupt(args.output)
    with dataset_writer(args.output):
        return _simulate(args)


def _simulate(args: argparse.Namespace) -> int:
    """:func:`run` with the dataset's lock held."""
    from measure.simulator import simulate
    from tomography.model.topology import read_topology
    from tomography.model.units import parse_size

    topo = read_topology(args.topology)
    params = swarm_params(args)
    tcp = _tcp_model(args)
    size = parse_option("--size", args.size, parse_size)
    bar = Progress(f"simulating {topo.name}", total=args.iterations)
    step = simulation_step(bar)
    added, incomplete = [], []

    def progress(i: int, result: Any) -> None:
        added.append(i)
        if not result.complete:
            incomplete.append(i)
        step(i, result)
    try:
        simulate(topo, args.output, iterations=args.iterations, file_size=size, seed=args.seed,
                 params=params, tcp=tcp, resume=resuming(args.resume, args.output),
                 overwrite=args.force, progress=progress)
    except KeyboardInterrupt:
        bar.close()
        say_stopped(f"interrupted; {counted(bar.done, 'iteration')} "
                    f"{'is' if bar.done == 1 else 'are'} in {args.output}; continue with the "
                    "same command and --resume")
        return 130
    bar.close()
    if not added:
        from tomography.model.dataset import read_measurement

        have = len(read_measurement(args.output).iteration_ids)
        print(f"{args.output} already has {counted(have, 'iteration')}: nothing to simulate "
              f"(-n {args.iterations} asks for {args.iterations} in all)")
        return 0
    print(f"wrote {counted(len(added), 'simulated iteration')} of {args.size} over {topo.name} "
          f"({counted(len(topo.hosts), 'host')}) to {args.output}"
          + (f" ({added[-1] + 1} in all)" if added[0] > 0 else ""))
    if incomplete:
        say(f"warning: {counted(len(incomplete), 'iteration')} of {len(added)} hit the time "
            f"limit ({args.time_limit}) before every peer had the file: marked incomplete, "
            "counts kept (tomography info lists them)")
    return 0
