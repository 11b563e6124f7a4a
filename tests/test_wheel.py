"""A wheel, as a user installs it: it ships every data file the code reads."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

USE = """
import sys
import tomography
from tomography.cli import main
from tomography.export.gauge import SCHEMA_PATH
from tomography.model.topology import read_topology
assert tomography.__file__.startswith(sys.argv[1]), tomography.__file__
assert SCHEMA_PATH.is_file(), SCHEMA_PATH
print(len(read_topology("N2").hosts))
main(["truth", "tree-5"])
"""


@pytest.mark.slow
def test_a_wheel_installed_elsewhere_has_the_scenarios_and_the_schema(tmp_path: Path) -> None:
    # build from a copy, so that the checkout gets no build/ or egg-info
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, symlinks=True, ignore=shutil.ignore_patterns(
        ".venv", ".git", "out", "build", "*.egg-info", "__pycache__", ".pytest_cache"))
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                            str(tmp_path / "dist"), str(src)],
                           capture_output=True, text=True, timeout=900)
    if built.returncode != 0 and "No matching distribution" in built.stderr:
        pytest.skip("no package index to fetch the build backend (setuptools) from: "
                    + built.stderr.strip().splitlines()[-1])
    assert built.returncode == 0, built.stderr
    wheel = next((tmp_path / "dist").glob("*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "tomography/model/scenarios/N2.yaml" in names
    assert "tomography/export/gauge.xsd" in names
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target",
                    str(site), str(wheel)], check=True, timeout=300)
    # the installed copy, not the checkout: another directory, the target first on the path
    env = dict(os.environ, PYTHONPATH=str(site))
    used = subprocess.run([sys.executable, "-c", USE, str(site)], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=300)
    assert used.returncode == 0, used.stderr
    lines = used.stdout.splitlines()
    assert lines[0] == "576"
    assert any("partitions by threshold" in line for line in lines)
