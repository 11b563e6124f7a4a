"""What every hostile-input case asserts: one clear line, a nonzero exit, no traceback,
nothing written, within a time bound.

``refused(argv, says=..., timeout=...)`` runs ``tomography ARGV`` in a subprocess (so that a
hang is caught by the bound, not by the test runner, and a runaway read by its memory cap,
:data:`MEMORY`, not by the machine) and checks the answer; ``refused_here``
does the same in this process through :func:`tomography.cli.main`, for the many cases that
cannot hang (faster: no interpreter start).  Each class of hostile input has its own test
module beside this one (docs/reliability.md lists them).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterable, Sequence

ROOT = Path(__file__).resolve().parents[2]
TOMOGRAPHY = [sys.executable, "-m", "tomography"]
BOUND = 30.0
"""Seconds a refusal may take, interpreter start included (a real one takes about 2 s)."""
MEMORY = 3 * 2**30
"""Address space of a refusal's process (bytes): a read that runs away fails the case with a
MemoryError instead of filling the machine."""


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def snapshot(*dirs: Path) -> dict[str, tuple[int, float]]:
    """Every file under ``dirs`` with its size and modification time."""
    out = {}
    for d in dirs:
        for path in Path(d).rglob("*"):
            if path.is_file() and not path.is_symlink():
                st = path.stat()
                out[str(path)] = (st.st_size, st.st_mtime)
    return out


def _check(code: int, err: str, elapsed: float, says: Iterable[str], timeout: float,
           before: dict, after: dict, argv: Sequence[object]) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    where = f"tomography {' '.join(map(str, argv))}"
    assert code != 0, f"{where}: exit 0, expected a refusal; stderr: {err!r}"
    assert "Traceback" not in err, f"{where}: a traceback:\n{err}"
    assert len(lines) == 1, f"{where}: expected one line on stderr, got:\n{err}"
    for text in says:
        assert re.search(text, lines[0]), f"{where}: {lines[0]!r} does not say {text!r}"
    assert elapsed < timeout, f"{where}: took {elapsed:.1f} s (bound {timeout} s)"
    assert before == after, f"{where}: files changed: " + ", ".join(
        sorted(set(before.items()) ^ set(after.items()), key=str)[:5].__repr__())
    return lines[0]


def refused(argv: Sequence[object], *, says: Iterable[str] = (), timeout: float = BOUND,
            watch: Sequence[Path] = (), stdin: bytes | None = None,
            env: dict[str, str] | None = None) -> str:
    """Run ``tomography ARGV`` in a subprocess and assert a clean refusal; returns the line.

    ``says`` are regular expressions the line must match (the file, the field); ``watch`` the
    directories in which nothing may be written or changed.
    """
    before = snapshot(*watch)
    start = time.monotonic()
    try:
        done = subprocess.run([*TOMOGRAPHY, *map(str, argv)], cwd=ROOT, input=stdin,
                              capture_output=True, timeout=timeout, preexec_fn=_capped,
                              env={**os.environ, **(env or {})})
    except subprocess.TimeoutExpired:
        raise AssertionError(f"tomography {' '.join(map(str, argv))}: no answer within "
                             f"{timeout} s") from None
    elapsed = time.monotonic() - start
    return _check(done.returncode, done.stderr.decode("utf-8", "replace"), elapsed, says,
                  timeout, before, snapshot(*watch), argv)


def refused_here(argv: Sequence[object], *, says: Iterable[str] = (), timeout: float = 10.0,
                 watch: Sequence[Path] = ()) -> str:
    """:func:`refused` in this process (no hang protection: for inputs that cannot block)."""
    from tomography.cli import main

    before = snapshot(*watch)
    err, out = io.StringIO(), io.StringIO()
    start = time.monotonic()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exc:   # argparse
            code = int(exc.code or 0)
    elapsed = time.monotonic() - start
    return _check(code, err.getvalue(), elapsed, says, timeout, before, snapshot(*watch), argv)
