"""Run a rank's part of a segmented collective: many non-blocking steps, pipelined.

A message is cut into segments; each rank has a few *steps* (one
non-blocking collective on one communicator each, e.g. receive from the
level above, send to the level below) that every segment goes through.  A
step may start a segment once the step it depends on has finished that
segment, and at most ``window`` segments of a step are in flight, so
segment ``s`` crosses the wide-area link while segment ``s - 1`` spreads
inside the clusters.  Every communicator carries one step, so all ranks
start its collectives in segment order, as MPI requires.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

__all__ = ["Step", "run_steps"]


@dataclass(frozen=True)
class Step:
    """One non-blocking collective per segment.

    Attributes
    ----------
    start : callable
        ``start(segment) -> MPI.Request``.
    after : int or None
        The index of the step whose segment must be finished first, or None.
    """

    start: Callable[[int], Any]
    after: int | None = None


def run_steps(steps: Sequence[Step], segments: int, *, window: int = 2) -> None:
    """Run every step on every segment, in dependency and segment order.

    Parameters
    ----------
    steps : sequence of Step
        A step's ``after`` is the index of another step; no cycles.
    segments : int
    window : int, default 2
        Segments of one step in flight at once.
    """
    from mpi4py import MPI

    count = len(steps)
    posted = [0] * count
    done = [0] * count
    finished: list[set[int]] = [set() for _ in range(count)]
    active: list[tuple[Any, int, int]] = []
    while any(d < segments for d in done):
        for k, step in enumerate(steps):
            while (posted[k] < segments and posted[k] - done[k] < window
                   and (step.after is None or done[step.after] > posted[k])):
                active.append((step.start(posted[k]), k, posted[k]))
                posted[k] += 1
        indices = MPI.Request.Waitsome([request for request, _, _ in active]) or []
        for i in sorted(indices, reverse=True):
            _, k, s = active.pop(i)
            finished[k].add(s)
        for k in range(count):
            while done[k] in finished[k]:
                finished[k].discard(done[k])
                done[k] += 1
