"""Ctrl-C and SIGTERM as KeyboardInterrupt, raised only where a clean-up can follow.

A long run (a measurement, multicasts, a benchmark) stops on Ctrl-C or on
SIGTERM (``kill``, a batch scheduler ending the allocation) by unwinding:
its ``finally`` clauses end the agents, take a testbed down and leave every
finished iteration on disk.  Python raises the KeyboardInterrupt wherever
the main thread happens to be, and two places go wrong:

- inside an ``import``: the module (and the package above it) is left half
  initialised, the clean-up that follows fails to import what it needs,
  and a C extension cut midway makes the interpreter end by SIGINT whatever
  exit status was asked;
- where Python ignores exceptions (a finaliser, a function run at
  ``fork`` such as logging's lock release): the interrupt is dropped and the
  run goes on as if never asked to stop.

:func:`stop_as_interrupt` handles the signal once an import under way is
over, and sends it again when Python dropped it.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from types import FrameType
from typing import Any, Callable

__all__ = ["stop_as_interrupt", "importing"]

RESEND_AFTER = 0.05
"""s after which a signal that could not be raised as KeyboardInterrupt comes again."""

_RAISED = {"signal": 0}
"""The signal last raised as KeyboardInterrupt."""


def importing(frame: FrameType | None) -> bool:
    """Whether ``frame`` (a signal handler's) runs inside an ``import``.

    Examples
    --------
    >>> import sys
    >>> importing(sys._getframe())
    False
    """
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib._bootstrap"):
            return True
        frame = frame.f_back
    return False


def _send_again(signum: int) -> None:
    timer = threading.Timer(RESEND_AFTER, os.kill, (os.getpid(), signum))
    timer.daemon = True
    timer.start()


def _may_raise(signum: int, frame: FrameType | None) -> bool:
    """Whether a handler may raise KeyboardInterrupt here; if not, the signal comes again."""
    if importing(frame):
        _send_again(signum)
        return False
    _RAISED["signal"] = signum
    return True


def _resend_dropped(previous: Callable[[Any], None]) -> Callable[[Any], None]:
    """A ``sys.unraisablehook`` that sends an interrupt Python dropped again."""
    def hook(unraisable: Any) -> None:
        if unraisable.exc_type is KeyboardInterrupt and _RAISED["signal"]:
            _send_again(_RAISED["signal"])
        else:
            previous(unraisable)
    hook.resends = True   # type: ignore[attr-defined]
    return hook


def stop_as_interrupt(on_terminate: Callable[[], None] | None = None) -> None:
    """Make SIGINT and SIGTERM raise KeyboardInterrupt in the main thread; call it first.

    SIGINT raises it even when the process inherited it ignored (a
    background job of a non-interactive shell, ``cmd &`` in a script, starts
    with SIGINT ignored).  Either signal is handled once an import under way
    is over, and sent again when Python drops the KeyboardInterrupt.
    Outside the main thread (a program embedding the toolkit) nothing is
    changed: the signals are the program's.

    Parameters
    ----------
    on_terminate : callable, optional
        Called on SIGTERM just before the KeyboardInterrupt is raised (to
        tell the user at once how to go on: under mpiexec the launcher may
        kill the process before its clean-up is over).

    Examples
    --------
    >>> import signal
    >>> old = signal.signal(signal.SIGINT, signal.SIG_IGN), signal.getsignal(signal.SIGTERM)
    >>> stop_as_interrupt()
    >>> signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    False
    >>> _ = signal.signal(signal.SIGINT, old[0]), signal.signal(signal.SIGTERM, old[1])
    """
    def interrupt(signum: int, frame: FrameType | None) -> None:
        if _may_raise(signum, frame):
            raise KeyboardInterrupt

    def terminate(signum: int, frame: FrameType | None) -> None:
        if not _may_raise(signum, frame):
            return
        if on_terminate is not None:
            on_terminate()
        raise KeyboardInterrupt

    try:
        signal.signal(signal.SIGINT, interrupt)
        signal.signal(signal.SIGTERM, terminate)
    except ValueError:     # not the main thread
        return
    if not getattr(sys.unraisablehook, "resends", False):
        sys.unraisablehook = _resend_dropped(sys.unraisablehook)
