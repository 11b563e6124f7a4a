"""What every benchmark script shares: the machine line, the command line and the dataset cache.

The scripts of ``benchmarks/`` import it by name (``from bench_support import
machine_line``): a script run as ``.venv/bin/python benchmarks/<script>.py``
has ``benchmarks/`` first on its path.

* :func:`machine_line` is the one line that says where a result was
  measured (host, cores, CPU model, memory, system, Python and the library
  versions that shape the numbers); :func:`command_line` the command that
  produced it, as typed from the repository's root.
* :func:`simulated_dataset` simulates a built-in scenario once into
  :data:`CACHE` and continues or reuses it afterwards, so that scripts
  analysing the same scenario, size and seed share one dataset.
* :func:`require_root` stops a testbed script early when it is not root.
"""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import Iterable, Sequence
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
"""The repository's root (commands are shown relative to it)."""
CACHE = Path(__file__).resolve().parent / "_data" / "simulated"
"""Cache of the simulated datasets (``benchmarks/_data/`` is ignored by git)."""


def cpu_model() -> str:
    """The CPU's model name.

    Returns
    -------
    str
        The ``model name`` of ``/proc/cpuinfo``; elsewhere
        ``platform.processor()``, or ``"unknown CPU"``.
    """
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def meminfo() -> dict[str, int]:
    """``/proc/meminfo`` in bytes.

    Returns
    -------
    dict of str to int
        Each field (``MemTotal``, ``MemAvailable``, ``SUnreclaim``, ...) in
        bytes; empty where the file does not exist.
    """
    out: dict[str, int] = {}
    try:
        with open("/proc/meminfo", encoding="ascii") as info:
            for line in info:
                key, value = line.split(":")
                out[key] = int(value.split()[0]) * 1024
    except OSError:
        pass
    return out


def package_versions(packages: Iterable[str]) -> dict[str, str]:
    """The installed version of each distribution.

    Parameters
    ----------
    packages : iterable of str
        Distribution names, as pip knows them (``python-louvain``,
        ``scikit-network``).

    Returns
    -------
    dict of str to str
        Name to version, ``"not installed"`` for those that are not.

    Examples
    --------
    >>> package_versions(["no-such-distribution"])
    {'no-such-distribution': 'not installed'}
    """
    out = {}
    for name in packages:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def machine_line(packages: Sequence[str] = (), *, extra: Sequence[str] = (),
                 load: bool = False) -> str:
    """The one line that says where a benchmark ran.

    Parameters
    ----------
    packages : sequence of str
        Distributions whose versions shape the script's numbers, in the
        order shown (Python's version is always there).
    extra : sequence of str
        Further items for the end of the line (a solver, an external tool).
    load : bool
        Also the load average of the last 1, 5 and 15 minutes.

    Returns
    -------
    str
        ``Machine: vm, 2 cores (AMD EPYC 7B13), 15.6 GiB memory, Linux 6.18
        x86_64; Python 3.11.7, numpy 2.4.6.``
    """
    memory = meminfo().get("MemTotal")
    parts = [platform.node() or "unknown host", f"{os.cpu_count()} cores ({cpu_model()})"]
    if memory:
        parts.append(f"{memory / 2**30:.1f} GiB memory")
    parts.append(f"{platform.system()} {platform.release()} {platform.machine()}")
    if load and hasattr(os, "getloadavg"):
        parts.append("load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    software = [f"Python {platform.python_version()}"]
    software += [f"{name} {version}" for name, version in package_versions(packages).items()]
    software += list(extra)
    return f"Machine: {', '.join(parts)}; {', '.join(software)}."


def command_line(argv: Sequence[str] | None = None) -> str:
    """The command that runs this script, as typed from the repository's root.

    Parameters
    ----------
    argv : sequence of str, optional
        The script's arguments (``sys.argv[1:]`` by default).

    Returns
    -------
    str
        ``.venv/bin/python benchmarks/simulator_speed.py --quick``: the
        interpreter and the script relative to :data:`ROOT` when they lie
        under it.
    """
    def shown(path: str) -> str:
        full = Path(path).absolute()
        return str(full.relative_to(ROOT)) if full.is_relative_to(ROOT) else path

    args = sys.argv[1:] if argv is None else list(argv)
    return " ".join([shown(sys.executable), shown(sys.argv[0]), *args])


def require_root(alternative: str | None = None) -> None:
    """Stop with a one-line message unless the process is root.

    Parameters
    ----------
    alternative : str, optional
        What the user may do instead, appended to the message
        (``"or give --real DATASET"``).

    Raises
    ------
    SystemExit
        ``benchmarks/<script>.py needs root (network namespaces, tc)``.
    """
    if os.geteuid() != 0:
        script = Path(sys.argv[0]).absolute()
        name = script.relative_to(ROOT) if script.is_relative_to(ROOT) else script
        raise SystemExit(f"{name} needs root (network namespaces, tc)"
                         + (f"; {alternative}" if alternative else ""))


def dataset_path(name: str, iterations: int, size: str, *, seed: int = 0,
                 root: Path | None = None) -> Path:
    """Where the cache keeps one simulated dataset.

    Parameters
    ----------
    name : str
        Built-in scenario (``N1``, ``bordeaux-64``).
    iterations : int
    size : str
        File size per broadcast with its unit (``32MiB``).
    seed : int, default 0
        Simulator seed.
    root : Path, optional
        Cache directory (:data:`CACHE` by default).

    Returns
    -------
    Path

    Examples
    --------
    >>> dataset_path("N1", 10, "32MiB", root=Path("/c")).as_posix()
    '/c/N1-10x32MiB-seed0'
    """
    return (CACHE if root is None else root) / f"{name}-{iterations}x{size}-seed{seed}"


def _iterations_listed(path: Path) -> int:
    """Iterations a dataset lists already (0 when it has none)."""
    try:
        with (path / "iterations.csv").open(encoding="utf-8") as listed:
            return max(sum(1 for _ in listed) - 1, 0)
    except OSError:
        return 0


def simulated_dataset(name: str, iterations: int, size: str, *, seed: int = 0,
                      root: Path | None = None) -> Path:
    """A built-in scenario simulated once into the cache, continued or reused afterwards.

    The simulator's defaults; :func:`measure.simulator.simulate` with
    ``resume``, so an interrupted dataset is finished, a complete one is
    reused as it is, and one made with other simulator settings is refused
    (delete it to simulate again).

    Parameters
    ----------
    name : str
        Built-in scenario.
    iterations : int
    size : str
        File size per broadcast with its unit.
    seed : int, default 0
    root : Path, optional
        Cache directory (:data:`CACHE` by default).

    Returns
    -------
    Path
        The dataset's directory, :func:`dataset_path`.
    """
    from measure.simulator import simulate

    path = dataset_path(name, iterations, size, seed=seed, root=root)
    done = _iterations_listed(path)
    if done < iterations:
        print(f"<!-- simulating {name}: {iterations} x {size}, seed {seed}"
              f"{f', {done} cached' if done else ''}, into {path} -->",
              file=sys.stderr, flush=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    simulate(name, path, iterations=iterations, file_size=size, seed=seed, resume=True)
    return path

