"""Ctrl-C and SIGTERM in a long-running command (tomography.model.interrupts.stop_as_interrupt).

Each case runs in a Python of its own: the handlers are the process's.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PRELUDE = """\
import os, signal, sys, time
from tomography.model.interrupts import stop_as_interrupt
stop_as_interrupt()
"""


def _run(tmp_path: Path, body: str) -> subprocess.CompletedProcess:
    script = tmp_path / "case.py"
    script.write_text(PRELUDE + textwrap.dedent(body))
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)


@pytest.mark.parametrize("signum", ["SIGINT", "SIGTERM"])
def test_a_signal_during_an_import_is_raised_once_the_import_is_over(tmp_path: Path,
                                                                     signum: str) -> None:
    # the module asks to be stopped halfway through its body; it must still be imported whole
    (tmp_path / "slow_module.py").write_text(textwrap.dedent(f"""\
        import os, signal, time
        os.kill(os.getpid(), signal.{signum})
        deadline = time.monotonic() + 0.3
        while time.monotonic() < deadline:
            pass
        WHOLE = True
        """))
    done = _run(tmp_path, """\
        sys.path.insert(0, os.getcwd())
        try:
            import slow_module
            time.sleep(5)
            print("never stopped")
        except KeyboardInterrupt:
            print("stopped;", "whole" if getattr(sys.modules.get("slow_module"), "WHOLE",
                                                 False) else "half imported")
        """)
    assert done.stdout.strip() == "stopped; whole", done


def test_an_interrupt_python_drops_in_a_finaliser_comes_again(tmp_path: Path) -> None:
    # a KeyboardInterrupt raised inside __del__ is only printed as "Exception ignored"
    done = _run(tmp_path, """\
        class Slow:
            def __del__(self):
                os.kill(os.getpid(), signal.SIGINT)
                deadline = time.monotonic() + 0.3
                while time.monotonic() < deadline:
                    pass

        try:
            Slow()
            time.sleep(5)
            print("never stopped")
        except KeyboardInterrupt:
            print("stopped")
        """)
    assert done.stdout.strip() == "stopped", done
    assert "Exception ignored" not in done.stderr, done.stderr
