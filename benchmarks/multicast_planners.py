"""The multicast planners side by side on gridlab-8 (docs/method.md section 3.2.3).

Reads ``datasets/gauges/gridlab-8.gauge.xml`` (the eight GridLab sites of
den Burger 2009, Tables 3.1 and 3.2, as a Gauge file), and for each of the eight roots
plans a multicast with every method of :data:`tomography.planning.METHODS`
(the exact optimum over all spanning trees with ``max_nodes=8``).  Prints,
as Markdown for ``benchmarks/RESULTS.md``:

1. the predicted throughput of each method per root (MB/s of 2^20 bytes,
   local capacities taken into account), with what FPFR promised (the sum
   of its reserved bottlenecks) next to what it gets once its trees share
   the network, the LP over FPFR's trees alone (balanced multicasting as
   den Burger et al. 2005 planned it, ``priced=False``) beside balanced
   multicasting with its priced trees, and a dash with the reason where a
   method cannot plan;
2. the time each method took per root, best of ``--repeat`` runs, and how
   many spanning trees the exact optimum chose among;
3. the same for the two worked examples of the papers: the LP example
   (den Burger et al. 2005, Fig 2/3) and the four-host example (den Burger 2009, Fig 3.5);
4. the machine and the command.

Run::

    .venv/bin/python benchmarks/multicast_planners.py      # about 10 s
    .venv/bin/python benchmarks/multicast_planners.py --write-gauge datasets/gauges/gridlab-8.gauge.xml

The second form (re)writes the Gauge file from the planners' ``gridlab8()``
fixture and exits; see ``datasets/gauges/README.md``.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from tomography.export.bandwidth import BandwidthModel, Source
from tomography.export.gauge import gauge_to_network, read_gauge, write_gauge
from tomography.planning import (METHODS, MethodUnavailable, Network, arborescences,
                                 balanced_multicast, four_host_example, fpfr_trees, gridlab8,
                                 lp_example, plan)
from tomography.model.units import bandwidth_unit

ROOT = Path(__file__).resolve().parents[1]
GAUGE = ROOT / "datasets" / "gauges" / "gridlab-8.gauge.xml"

GRIDLAB_SOURCE = ("Delphoi measurements as emulated in den Burger 2009, section 3.2.3 "
                  "(Tables 3.1, 3.2), scaled to 10%; MB/s of 2^20 bytes")
GRIDLAB_TIMESTAMP = datetime(2026, 11, 21, tzinfo=timezone.utc)
GRIDLAB_NOTE = ("Eight single-host GridLab sites (cluster name = host name = site name); "
                "a bandwidth of 0 is a dead link (misconfigured firewalls).  The timestamp "
                "is when this file was made, not when Delphoi measured.")


def gridlab8_model() -> BandwidthModel:
    """The planners' ``gridlab8()`` fixture as a BandwidthModel of eight one-host clusters.

    Host and cluster capacities are both the local capacities of Table 3.1,
    the cluster bandwidths the achievable bandwidths of Table 3.2 (NaN on
    the diagonal: no figure within a one-host cluster).  The model keeps
    its figures in bit/s; host arrays are in sorted host order.
    """
    net = gridlab8()
    factor = bandwidth_unit(net.unit)                  # MiB/s in bit/s
    order = [net.index(h) for h in sorted(net.nodes)]
    bandwidth = net.bandwidth * factor
    np.fill_diagonal(bandwidth, np.nan)
    source = Source("probes", GRIDLAB_SOURCE)
    return BandwidthModel(
        {name: [name] for name in net.nodes},
        host_out=net.out_capacity[order] * factor, host_in=net.in_capacity[order] * factor,
        cluster_out=net.out_capacity * factor, cluster_in=net.in_capacity * factor,
        cluster_bandwidth=bandwidth,
        sources={"host_capacity": source, "cluster_capacity": source,
                 "cluster_bandwidth": source},
        timestamp=GRIDLAB_TIMESTAMP, notes=[GRIDLAB_NOTE])


def write_gridlab_gauge(path: str | os.PathLike[str]) -> None:
    """Write :func:`gridlab8_model` as a Gauge file in MiB/s (the thesis' MB/s)."""
    write_gauge(gridlab8_model(), path, unit="MiB/s")


FPFR_ONLY = "balanced over fpfr's trees"
"""The column of balanced multicasting without its priced trees (den Burger et al. 2005)."""


def timed(network: Network, root: str, method: str, repeat: int) -> tuple[object, float]:
    """The plan (or the MethodUnavailable it raised) and the best wall time of ``repeat`` runs."""
    best, result = math.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        try:
            if method == FPFR_ONLY:
                result = balanced_multicast(network, root, priced=False)
            else:
                result = plan(network, root, method, max_nodes=8)
        except MethodUnavailable as exc:
            result = exc
        best = min(best, time.perf_counter() - start)
    return result, best


def promised(network: Network, root: str) -> float:
    """What FPFR expects: the sum of the bottlenecks its trees reserve."""
    return float(fpfr_trees(network, root)[1].sum())


def table(network: Network, roots: list[str], repeat: int) -> tuple[list[str], list[str], dict]:
    """Markdown rows of throughput and of time per root, and the raw numbers."""
    columns = [*METHODS[:4], FPFR_ONLY, *METHODS[4:]]
    head = "| root | " + " | ".join(METHODS[:3]) + " | fpfr promised | " + \
        " | ".join(columns[3:]) + " |"
    rule = "|---" * (len(columns) + 2) + "|"
    through, raw, reasons = [head, rule], {}, {}
    times = ["| root | " + " | ".join(columns) + " | spanning trees |",
             "|---" * (len(columns) + 2) + "|"]
    for root in roots:
        cells, secs = [], []
        raw[root] = {"fpfr promised": promised(network, root)}
        for method in columns:
            if method == "fpfr":
                cells.append(f"{raw[root]['fpfr promised']:.4g}")
            result, best = timed(network, root, method, repeat)
            if isinstance(result, MethodUnavailable):
                mark = reasons.setdefault(str(result).split(";")[0], len(reasons) + 1)
                cells.append(f"— [{mark}]")
                raw[root][method] = math.nan
                secs.append("—")
                continue
            cells.append(f"{result.throughput:.4g} ({len(result.trees)})")
            raw[root][method] = result.throughput
            secs.append(f"{best * 1e3:.2g}" if best < 1e-3 else f"{best * 1e3:.1f}")
        through.append(f"| {root} | " + " | ".join(cells) + " |")
        trees = len(arborescences(network, root, max_nodes=network.size))
        times.append(f"| {root} | " + " | ".join(secs) + f" | {trees:,} |")
    notes = [f"[{n}] {text}" for text, n in reasons.items()]
    return through + [""] + notes if notes else through, times, raw


def summary(raw: dict) -> list[str]:
    """A few ratios over the roots, to read the table by."""
    lines = []
    gains, gaps, alone, over = [], [], [], []
    for root, row in raw.items():
        single = max(v for m, v in row.items() if m in METHODS[:3] and not math.isnan(v))
        gains.append(row["balanced"] / single)
        gaps.append(row["balanced"] / row["exact"])
        alone.append(row[FPFR_ONLY] / row["exact"])
        over.append(row["fpfr promised"] / row["fpfr"])
        lines.append(f"- {root}: balanced / best single tree {gains[-1]:.2f}, "
                     f"balanced / fpfr {row['balanced'] / row['fpfr']:.2f}, "
                     f"balanced / exact {gaps[-1]:.3f}, "
                     f"over fpfr's trees alone / exact {alone[-1]:.3f}, "
                     f"fpfr promised / fpfr predicted {over[-1]:.2f}")
    lines.append(f"- over the roots: balanced / best single tree {min(gains):.2f} to "
                 f"{max(gains):.2f} (geometric mean {math.exp(np.mean(np.log(gains))):.2f}); "
                 f"balanced reaches the exact optimum at {sum(g > 1 - 1e-9 for g in gaps)} of "
                 f"{len(gaps)} roots (worst {min(gaps):.3f}), over FPFR's trees alone at "
                 f"{sum(g > 1 - 1e-9 for g in alone)} (worst {min(alone):.3f}); FPFR promises "
                 f"{min(over):.2f} to {max(over):.2f} times what it gets")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gauge", type=Path, default=GAUGE, help="Gauge file to plan on")
    parser.add_argument("--repeat", type=int, default=3, help="runs per timing (best of)")
    parser.add_argument("--write-gauge", type=Path, metavar="PATH",
                        help="write the gridlab-8 Gauge file to PATH and exit")
    args = parser.parse_args(argv)
    if args.write_gauge:
        write_gridlab_gauge(args.write_gauge)
        print(f"wrote {args.write_gauge}")
        return 0

    # imported here: tests load this file by its path, without benchmarks/ on sys.path
    from bench_support import command_line, machine_line

    network = gauge_to_network(read_gauge(args.gauge), "clusters", unit="MiB/s")
    print(f"Command: `{command_line(argv)}`\n")
    print(machine_line(("numpy", "scipy"), extra=["linear programs by SciPy's HiGHS"]) + "\n")
    gauge = args.gauge.resolve()
    shown = gauge.relative_to(ROOT) if gauge.is_relative_to(ROOT) else gauge
    print(f"### gridlab-8 ({shown}), throughput in MB/s (2^20 bytes), number of trees in "
          "parentheses\n")
    through, times, raw = table(network, network.nodes, args.repeat)
    print("\n".join(through))
    print(f"\n### gridlab-8, time to plan in ms (best of {args.repeat})\n")
    print("\n".join(times))
    print("\n### Ratios\n")
    print("\n".join(summary(raw)))
    for name, example in (("LP example (den Burger et al. 2005, Fig 2/3), root x",
                           lp_example()),
                          ("four-host example (den Burger 2009, Fig 3.5), root A",
                           four_host_example())):
        print(f"\n### {name}, unitless\n")
        through, times, _ = table(example, [example.nodes[0]], args.repeat)
        print("\n".join(through))
        print(f"\ntime to plan in ms (best of {args.repeat}):\n")
        print("\n".join(times))
    return 0


if __name__ == "__main__":
    sys.exit(main())
