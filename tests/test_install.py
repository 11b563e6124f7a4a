"""The analysis installs without the measurement's and the simulator's libraries.

``pip install bandwidth-tomography`` (no extras) into a fresh virtual environment: no
libtorrent, no numba, and yet cluster, hierarchy and report run on a dataset; the commands
that need an extra say which one.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def test_the_analysis_only_install_runs_cluster_hierarchy_and_report(tmp_path: Path) -> None:
    source = tmp_path / "source"   # a copy: building writes build/ beside the sources
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".venv", ".git", "out", "build", "*.egg-info", "__pycache__", ".hypothesis",
        ".pytest_cache", "notebooks", "benchmarks", "tests", "datasets"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    pip = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q",
                          "--disable-pip-version-check", str(source)],
                         capture_output=True, text=True, timeout=900)
    offline = ("Could not find a version", "No matching distribution", "NewConnectionError",
               "Temporary failure in name resolution", "Network is unreachable")
    if pip.returncode and any(text in pip.stderr for text in offline):
        pytest.skip(f"no package index to install from: {pip.stderr.strip()[-200:]}")
    assert pip.returncode == 0, pip.stderr[-2000:]
    python, tomography = venv / "bin" / "python", venv / "bin" / "tomography"
    for library in ("libtorrent", "numba"):
        missing = subprocess.run([str(python), "-c", f"import {library}"],
                                 capture_output=True, text=True)
        assert missing.returncode != 0, f"{library} came with the analysis-only install"

    def run(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(tomography), *argv], capture_output=True, text=True,
                              timeout=300, cwd=tmp_path)

    assert run("synthetic", "-o", "d", "--branching", "2,3").returncode == 0
    for command in (["cluster", "d"], ["hierarchy", "d"], ["report", "d", "-o", "d.html"]):
        done = run(*command)
        assert done.returncode == 0, (command, done.stderr)
    assert (tmp_path / "d.html").stat().st_size > 10_000
    for command, extra in ((["simulate", "tree-5", "-o", "s"], "simulate"),
                           (["measure", "bittorrent", "--local", "3", "-o", "b"], "measure")):
        done = run(*command)
        assert done.returncode == 2
        assert f"pip install 'bandwidth-tomography[{extra}]'" in done.stderr, done.stderr
