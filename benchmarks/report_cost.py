"""What ``tomography report`` costs: its time, page size and memory, small and large.

For each dataset, side by side in one run, as whole processes (reading,
analysis, output):

* ``tomography hierarchy DATASET`` (the Hasse diagram as text: the analysis
  a user runs without a page, the baseline of the ratio);
* ``tomography report DATASET -o page.html`` (the defaults: confidences from
  4 resamples, the stop rule replayed and the NMI after each iteration);
* ``tomography report --resamples 0`` (no confidence: the fast page).

Each is timed as wall time with its peak resident memory (the child's
``ru_maxrss``); the page's size is its bytes on disk.  With Debian's headless
chromium at hand (``/usr/bin/chromium`` and ``chromedriver``, selenium), the
time to open the page, lay it out and scroll to its end is measured too.

The datasets: the 20-host demo network simulated (``two-sites-demo``, 4
iterations of 8 MiB, about 5 s to make) and a planted hierarchy of 4096 hosts
(``tomography synthetic --branching 8,8 --hosts-per-group 64 --iterations 3``,
about 10 s), both made in a temporary directory.  Run::

    .venv/bin/python benchmarks/report_cost.py             # ~3 min on 2 cores
    .venv/bin/python benchmarks/report_cost.py --quick     # the 20-host demo only
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_support import command_line, machine_line

TOMOGRAPHY = str(Path(sys.executable).parent / "tomography")
CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")


def timed(args: list[str]) -> tuple[float, int]:
    """Run ``args`` to the end; its wall time in seconds and peak memory in bytes.

    Parameters
    ----------
    args : list of str
        The command.

    Returns
    -------
    seconds : float
    peak : int
        The child's largest resident set (``ru_maxrss``).

    Raises
    ------
    SystemExit
        When the command fails (its standard error is shown).
    """
    start = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    stderr = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({proc.returncode}):\n{stderr}")
    return seconds, usage.ru_maxrss * 1024


def browser_seconds(page: Path) -> float | None:
    """Seconds for headless chromium to open ``page`` and scroll to its end (None without it).

    Parameters
    ----------
    page : Path
        The HTML file.

    Returns
    -------
    float or None
    """
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        return None
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        return None
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1200,1600"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    try:
        start = time.perf_counter()
        driver.get(page.as_uri())
        driver.execute_script("window.scrollTo(0, document.body.scrollHeight);"
                              "return document.images.length;")
        return time.perf_counter() - start
    finally:
        driver.quit()


def datasets(where: Path, quick: bool) -> list[tuple[str, Path, float]]:
    """Make the benchmark's datasets; (name, path, seconds to make) each."""
    made = []
    start = time.perf_counter()
    demo = where / "demo"
    subprocess.run([TOMOGRAPHY, "simulate", "two-sites-demo", "-n", "4", "--size", "8MiB",
                    "--seed", "0", "-o", str(demo)], check=True, capture_output=True)
    made.append(("20 hosts, 4 iterations (two-sites-demo, simulated)", demo,
                 time.perf_counter() - start))
    if not quick:
        start = time.perf_counter()
        big = where / "big"
        subprocess.run([TOMOGRAPHY, "synthetic", "--branching", "8,8", "--hosts-per-group",
                        "64", "--iterations", "3", "--seed", "0", "-o", str(big)],
                       check=True, capture_output=True)
        made.append(("4096 hosts, 3 iterations (synthetic 8 x 8 x 64)", big,
                     time.perf_counter() - start))
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="the 20-host demo only")
    args = parser.parse_args()
    lines = [f"Command: `{command_line()}`", "", machine_line(["igraph", "numpy", "scipy"]), "",
             "| dataset | command | seconds | vs hierarchy | page | peak memory |",
             "|---|---|---|---|---|---|"]
    opened = []
    with tempfile.TemporaryDirectory(prefix="report-cost-") as tmp:
        for name, path, making in datasets(Path(tmp), args.quick):
            base, peak = timed([TOMOGRAPHY, "hierarchy", str(path)])
            lines.append(f"| {name} | `tomography hierarchy` | {base:.1f} | 1.00x | "
                         f"| {peak / 2**20:.0f} MiB |")
            for label, extra in (("`tomography report`", []),
                                 ("`tomography report --resamples 0`", ["--resamples", "0"])):
                page = Path(tmp) / f"{path.name}{len(extra)}.html"
                seconds, peak = timed([TOMOGRAPHY, "report", str(path), "-o", str(page),
                                       *extra])
                lines.append(f"| {name} | {label} | {seconds:.1f} | {seconds / base:.2f}x | "
                             f"{page.stat().st_size / 1024:.0f} KiB | {peak / 2**20:.0f} MiB |")
                if not extra:
                    shown = browser_seconds(page)
                    opened.append(f"- {name}: dataset made in {making:.0f} s; the page opened "
                                  f"and scrolled in headless chromium in "
                                  + (f"{shown:.1f} s." if shown is not None else
                                     "(no chromium/chromedriver/selenium here)."))
    lines += [""] + opened
    print("\n".join(lines))


if __name__ == "__main__":
    main()
