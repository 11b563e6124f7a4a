"""Do two versions of the toolkit print the same analysis? A check for refactorings.

Runs ``tomography hierarchy``, ``tree``, ``cluster``, ``evaluate`` and
``export`` (every text format) with the code of a git revision and with the
working tree, on the same datasets (planted, simulated N1, simulated
two-sites-demo), and compares the outputs byte for byte, timestamps set
aside.  Prints one line per output: ``same`` or the lines that differ.

    .venv/bin/python benchmarks/same_outputs.py --base 1084760

Exit status 0 when every output is the same.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_support import ROOT, command_line, machine_line

DATASETS = {
    "planted": ["synthetic", "--branching", "2,3", "--hosts-per-group", "6", "--iterations", "6",
                "--seed", "3"],
    "sim-N1": ["simulate", "N1", "-n", "4", "--size", "8MiB", "--seed", "1"],
    "sim-demo": ["simulate", "two-sites-demo", "-n", "3", "--size", "8MiB", "--seed", "2"],
}
COMMANDS = {
    "hierarchy.json": ["hierarchy", "{d}", "--format", "json"],
    "hierarchy-all.json": ["hierarchy", "{d}", "--all-levels", "--format", "json"],
    "hasse.txt": ["hierarchy", "{d}"],
    "tree.json": ["tree", "{d}", "--format", "json"],
    "tree-level-2.json": ["tree", "{d}", "--level", "2", "-n", "3", "--format", "json"],
    "tree.txt": ["tree", "{d}"],
    "cluster.json": ["cluster", "{d}", "--format", "json"],
    "evaluate.json": ["evaluate", "{d}", "--until-converged", "2", "--format", "json"],
    "evaluate.txt": ["evaluate", "{d}"],
    **{f"export.{f}": ["export", "{d}", "--format", f, "-o", "-"]
       for f in ("json", "dot", "mpi", "hostfile", "gauge", "simgrid")},
}
TIMESTAMPS = re.compile(r'("created": |timestamp=)"[^"]*"')


def _run(code: Path, argv: list[str]) -> str:
    """The output (stdout, then the exit status) of ``tomography argv`` with ``code``'s sources."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    done = subprocess.run([sys.executable, "-m", "tomography", *argv], capture_output=True,
                          text=True, env=env, cwd=code)
    return TIMESTAMPS.sub(r'\1"..."', done.stdout) + f"\n[exit {done.returncode}]\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="git revision to compare with")
    args = parser.parse_args()
    print(command_line())
    print(machine_line())
    different = 0
    with tempfile.TemporaryDirectory(prefix="same-outputs-") as tmp:
        base = Path(tmp) / "base"
        subprocess.run(["git", "worktree", "add", "-q", "--detach", str(base), args.base],
                       cwd=ROOT, check=True)
        try:
            for name, make in DATASETS.items():
                data = Path(tmp) / name
                subprocess.run([sys.executable, "-m", "tomography", *make, "-o", str(data)],
                               cwd=ROOT, check=True, capture_output=True)
                for output, argv in COMMANDS.items():
                    argv = [a.format(d=data) for a in argv]
                    old, new = _run(base, argv), _run(ROOT, argv)
                    if old == new:
                        print(f"same       {name}/{output}")
                        continue
                    different += 1
                    print(f"DIFFERENT  {name}/{output}:")
                    for line in difflib.unified_diff(old.splitlines(), new.splitlines(),
                                                     "base", "working tree", n=1, lineterm=""):
                        print(f"    {line}")
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(base)], cwd=ROOT,
                           check=False)
    print(f"{different} of {len(DATASETS) * len(COMMANDS)} outputs differ")
    return 1 if different else 0


if __name__ == "__main__":
    sys.exit(main())
