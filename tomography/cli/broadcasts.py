"""What the BitTorrent broadcast commands share: ``simulate``, ``measure bittorrent``, ``demo``.

The option group of the BitTorrent settings and its parsing into
:class:`measure.swarm.SwarmParams`, the stop rule of ``--until-converged``,
the progress of simulated and real broadcasts, and the messages of
``--resume`` and Ctrl-C.
"""

from __future__ import annotations

import argparse
import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

from tomography.cli import common
from tomography.cli.common import Progress, positive_int, say
from tomography.model.errors import ParameterError, TomographyError

if TYPE_CHECKING:
    import pandas as pd

    from measure.coordinator import RunSummary
    from measure.swarm import SwarmParams
    from measure.transport import Launcher, Transport
    from tomography.model.dataset.lock import DatasetLock

__all__ = ["add_swarm_options", "parse_option", "swarm_params", "resuming", "stop_rule",
           "simulation_step", "measure_broadcasts", "interrupted", "terminate_as_interrupt",
           "say_stopped",
           "dataset_writer"]

def add_swarm_options(p: argparse.ArgumentParser, *, time_limit: str, size: str = "16MiB",
                      why_size: str = "", quota: str = "off", why_quota: str = "",
                      simulated: bool = False) -> None:
    """The group "BitTorrent settings": file size, seed and the swarm's settings.

    Parameters
    ----------
    p : ArgumentParser
        The command's parser.
    time_limit : str
        The default ``--time-limit`` (the simulator's broadcasts may take longer).
    size : str, default "16MiB"
        The default ``--size``.
    why_size : str, optional
        Why that size, appended to the default in ``--help``.
    quota, why_quota : str, default "off" and ""
        The default ``--block-quota``, and why, as for the size.
    simulated : bool, default False
        Whether the simulator runs the broadcasts (its optimistic unchoke is an
        extra slot; libtorrent's counts among the slots).
    """
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
    g.add_argument("--block-quota", default=quota, metavar="BLOCKS",
                   help="end each broadcast, complete, once every downloader holds this many "
                        "16 KiB blocks: the clusters settle long before a broadcast ends, and "
                        "a slow network simply takes longer to deliver the quota (default "
                        + (f"{quota}{why_quota}; off: " if quota != "off" else "off: ")
                        + "every broadcast runs to its end)")
    from measure.swarm import ROOT_CHOICES

    g.add_argument("--roots", choices=ROOT_CHOICES, default=ROOT_CHOICES[0],
                   help="where each broadcast starts: spread, each next root where the counts "
                        "so far have seen fewest roots (default; a quota's counts favour the "
                        "clusters that held the root), or random, a seeded rotation through "
                        "the hosts")
    g.add_argument("--time-box", default="off", metavar="TIME",
                   help="also end each broadcast after this time, complete (default off); "
                        "too short for the network, it leaves too few blocks to tell the "
                        "clusters apart")


def parse_option(option: str, text: str, parse: Callable[[str], Any]) -> Any:
    """``text``, the value of ``option``, read by ``parse``; a number must be positive.

    Parameters
    ----------
    option : str
        The option as the user writes it, e.g. ``"--size"``, for the error.
    text : str
        Its value.
    parse : callable
        Reads the value, raising ValueError on a bad one.

    Raises
    ------
    TomographyError
        A bad value or a number that is not positive, naming the option.

    Examples
    --------
    >>> from tomography.model.units import parse_size, parse_time
    >>> parse_option("--size", "1KiB", parse_size)
    1024
    >>> parse_option("--size", "1 pint", parse_size)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tomography.model.errors.TomographyError: --size: not a size: '1 pint' (expected a number and ...)
    >>> parse_option("--time-limit", "0s", parse_time)
    Traceback (most recent call last):
    ...
    tomography.model.errors.TomographyError: --time-limit must be positive, got '0s'
    """
    try:
        value = parse(text)
    except ValueError as e:
        raise TomographyError(f"{option}: {e}") from None
    if isinstance(value, (int, float)) and value <= 0:
        raise TomographyError(f"{option} must be positive, got {text!r}")
    return value


def swarm_params(args: argparse.Namespace) -> SwarmParams:
    """The swarm settings of the options :func:`add_swarm_options` declares.

    Raises
    ------
    TomographyError
        A bad value, naming its option.
    """
    from measure.swarm import SwarmParams
    from tomography.model.units import parse_size, parse_time

    try:
        return SwarmParams(
            piece_size=(parse_option("--piece-size", args.piece_size, parse_size)
                        if args.piece_size else None),
            upload_slots=args.upload_slots,
            unchoke_interval=parse_option("--unchoke-interval", args.unchoke_interval,
                                          parse_time),
            tit_for_tat=args.tit_for_tat == "on", peer_list=args.peer_list,
            time_limit=parse_option("--time-limit", args.time_limit, parse_time),
            time_box=(None if _off(args.time_box) else
                      parse_option("--time-box", args.time_box, parse_time)),
            block_quota=(None if _off(args.block_quota) else
                         parse_option("--block-quota", args.block_quota, _blocks)),
            roots=args.roots)
    except ValueError as e:         # what the options alone cannot say (piece size in blocks)
        raise TomographyError(str(e).replace("piece_size", "--piece-size")) from None


def _off(text: str) -> bool:
    return text.strip().lower() in ("off", "none")


def _blocks(text: str) -> int:
    """A whole number of blocks (ValueError otherwise)."""
    if not text.strip().isdigit():
        raise ParameterError(f"expected a whole number of 16 KiB blocks or off, got {text!r}")
    return int(text)


def resuming(resume: bool, output: Path) -> bool:
    """``resume``, saying so on stderr when ``output`` holds no dataset to continue.

    Examples
    --------
    >>> resuming(False, Path("/nonexistent"))
    False
    """
    if resume and not (Path(output) / "meta.json").exists():
        say(f"note: no dataset in {output} to resume: starting a new one")
    return resume


def stop_rule(output: Path, k: int | None = None, *, seed: int = 0) -> Callable[[int], bool]:
    """:func:`cluster.stability.dataset_stop_rule`, saying its verdict on stderr beside the
    progress bar."""
    from tqdm import tqdm

    from cluster.stability import dataset_stop_rule

    return dataset_stop_rule(output, k, seed=seed,
                             say=lambda text: common.verbosity == common.QUIET
                             or tqdm.write(text, file=sys.stderr))


def simulation_step(bar: Progress) -> Callable[[int, Any], None]:
    """The simulator's progress callback, moving ``bar`` one iteration per broadcast."""
    def step(i: int, result: Any) -> None:
        bar.set(i + 1, note=f"{result.duration:.1f}s simulated"
                + ("" if result.complete else ", incomplete"))
    return step


def measure_broadcasts(hosts: pd.DataFrame, launch: Launcher | Transport, output: Path, *,
                       iterations: int, **options: Any) -> RunSummary:
    """:func:`measure.coordinator.run_broadcasts` with a progress bar on stderr.

    Parameters
    ----------
    hosts : DataFrame
        The hosts, as ``run_broadcasts`` takes them.
    launch : callable or transport
        How to run a peer on a host.
    output : path
        The dataset directory.
    iterations : int
        Iterations wanted (the most, with a stop rule).
    **options
        The other keyword arguments of ``run_broadcasts``.

    Returns
    -------
    RunSummary
    """
    from measure.coordinator import run_broadcasts

    bar = Progress("broadcasts", total=iterations)

    def step(result: Any) -> None:
        bar.set(bar.done + 1, note=f"last took {result.duration:.1f}s" + ("" if result.complete
                                                                else ", incomplete"))
    try:
        return run_broadcasts(hosts, output, iterations=iterations, launch=launch,
                              progress=step, **options)
    finally:
        bar.close()


def interrupted(output: Path) -> int:
    """Say how many iterations a run stopped by Ctrl-C kept in ``output``; the exit status."""
    from tomography.model.dataset import read_measurement

    try:
        kept = len(read_measurement(output).iteration_ids)
    except TomographyError:
        kept = 0
    say_stopped(f"interrupted; {kept} finished iteration(s) are in {output}; continue with "
                "the same command and --resume")
    return 130


_TERMINATED = {"said": False}
"""Whether SIGTERM's handler has told the user how to go on (:func:`terminate_as_interrupt`)."""


def say_stopped(text: str) -> None:
    """The line a run stopped by Ctrl-C ends with, unless SIGTERM's handler said it already
    (once is enough: the hint to resume is the same)."""
    if not _TERMINATED["said"]:
        print(f"tomography: {text}", file=sys.stderr)


def terminate_as_interrupt(output: Path | None, kept: str = "iterations") -> None:
    """Ctrl-C and SIGTERM stop a long-running command as KeyboardInterrupt; call it first.

    The handlers are :func:`tomography.model.interrupts.stop_as_interrupt`'s.
    On SIGTERM (a batch scheduler ending the allocation, ``kill``) the hint
    to resume is printed at once: under mpiexec the other ranks end too, and
    the launcher may kill this one before its clean-up is over.  ``kept``
    names what a run keeps (``"iterations"``, ``"multicasts"``).

    Examples
    --------
    >>> import signal
    >>> old = signal.signal(signal.SIGINT, signal.SIG_IGN), signal.getsignal(signal.SIGTERM)
    >>> terminate_as_interrupt(None)
    >>> signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    False
    >>> _ = signal.signal(signal.SIGINT, old[0]), signal.signal(signal.SIGTERM, old[1])
    """
    from tomography.model.interrupts import stop_as_interrupt

    def hint() -> None:
        if output is not None and not _TERMINATED["said"]:
            print(f"tomography: terminated; the finished {kept} stay in {output}; "
                  "continue with the same command and --resume", file=sys.stderr, flush=True)
            _TERMINATED["said"] = True

    stop_as_interrupt(hint)


@contextmanager
def dataset_writer(output: Path | str) -> Iterator[DatasetLock]:
    """The command's hold on its dataset directory, for as long as it runs.

    The directory's one-writer lock (:class:`tomography.model.dataset.lock.DatasetLock`:
    a second writer is refused at once, naming this one; a directory the
    command created and that holds no dataset when it ends is removed) and a
    umask without group and world write, so that nothing written there is
    group- or world-writable whatever the umask the command started with.

    Examples
    --------
    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp()) / "run"
    >>> with dataset_writer(d):
    ...     sorted(p.name for p in d.iterdir())
    ['.lock']
    >>> d.exists()
    False
    """
    from tomography.model.dataset.lock import DatasetLock

    old = os.umask(0o022)
    os.umask(old | 0o022)
    try:
        with DatasetLock(output) as lock:
            yield lock
    finally:
        os.umask(old)
