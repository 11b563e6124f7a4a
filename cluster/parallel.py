"""Independent analyses (resamples) in forked worker processes.

The resamples of :mod:`cluster.confidence` each run Leiden on a graph of
millions of edges; they are independent, and igraph holds Python's global
lock, so they run in processes.  Forked workers inherit the graph already
built (copy-on-write): only the task's index goes to a worker and only its
small result (labels) comes back.  Where ``fork`` is not available
(Windows) or one job is asked for, the tasks run in this process; the
results are the same in every case, in the order of the tasks.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Callable, Sequence, TypeVar

from tomography.model.errors import ParameterError

__all__ = ["PARALLEL_MIN_EDGES", "available_cores", "effective_jobs", "fork_map"]

T = TypeVar("T")
R = TypeVar("R")

#: Below this many edges a resample takes less time (about 20 ms) than
#: starting a worker, so ``n_jobs=None`` runs in this process.
PARALLEL_MIN_EDGES = 50_000

_WORK: tuple[Callable[[Any], Any], Sequence[Any]] | None = None
_IN_WORKER = False   # set in a worker: work inside a task runs there, not in more processes


def available_cores() -> int:
    """CPU cores this process may run on (its affinity, where the system says)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:   # not Linux
        return os.cpu_count() or 1


def effective_jobs(n_jobs: int | None, tasks: int, edges: int = 0) -> int:
    """How many processes to run ``tasks`` on.

    Parameters
    ----------
    n_jobs : int or None
        ``None``: every core when the graph has at least
        :data:`PARALLEL_MIN_EDGES` edges, else 1; a positive number: that
        many; ``-1``: every core, ``-2`` all but one (scikit-learn's
        convention).
    tasks : int
        Independent tasks; never more processes than tasks.
    edges : int, default 0
        Size of each task's graph, for ``n_jobs=None``.

    Examples
    --------
    >>> effective_jobs(1, 8), effective_jobs(None, 8, edges=10)
    (1, 1)
    >>> effective_jobs(4, 2) <= 2
    True
    """
    if n_jobs == 0:
        raise ParameterError("n_jobs must not be 0 (1 runs in this process, -1 on every core)")
    if _IN_WORKER:   # the cores are taken by the workers already
        return 1
    if n_jobs is None:
        n_jobs = -1 if edges >= PARALLEL_MIN_EDGES else 1
    if n_jobs < 0:
        n_jobs = max(1, available_cores() + 1 + n_jobs)
    if "fork" not in multiprocessing.get_all_start_methods():
        return 1
    return max(1, min(n_jobs, tasks))


def _run(index: int) -> Any:
    global _IN_WORKER
    assert _WORK is not None, "a worker forked without its work"
    _IN_WORKER = True
    work, tasks = _WORK
    return work(tasks[index])


def fork_map(work: Callable[[T], R], tasks: Sequence[T], jobs: int,
             meanwhile: Callable[[], Any] | None = None,
             done: Callable[[R], None] | None = None) -> tuple[list[R], Any]:
    """``[work(t) for t in tasks]`` on ``jobs`` forked processes.

    Parameters
    ----------
    work : callable
        Any callable (a closure is fine: it is inherited, not pickled); its
        results must pickle.
    tasks : sequence
    jobs : int
        Processes (:func:`effective_jobs`); 1 runs everything here.
    meanwhile : callable, optional
        Run in this process while the workers run.
    done : callable, optional
        Called here with each result, in the order of the tasks, as soon as
        it is there (a progress bar's update).

    Returns
    -------
    results : list
        One per task, in order.
    other : object
        What ``meanwhile`` returned (None without it).

    Examples
    --------
    >>> base = 10
    >>> fork_map(lambda x: x + base, [1, 2, 3], jobs=2, meanwhile=lambda: "done")
    ([11, 12, 13], 'done')
    """
    global _WORK
    if jobs <= 1 or len(tasks) <= 1 or _IN_WORKER:
        results = []
        for t in tasks:
            results.append(work(t))
            if done is not None:
                done(results[-1])
        return results, meanwhile() if meanwhile is not None else None
    outer, _WORK = _WORK, (work, tasks)
    try:
        with ProcessPoolExecutor(max_workers=jobs,
                                 mp_context=multiprocessing.get_context("fork")) as pool:
            futures = [pool.submit(_run, i) for i in range(len(tasks))]
            try:
                other = meanwhile() if meanwhile is not None else None
                results = []
                for f in futures:
                    results.append(f.result())
                    if done is not None:
                        done(results[-1])
            except BaseException:   # Ctrl-C or a failed task: stop the others
                pool.shutdown(wait=True, cancel_futures=True)
                raise
    finally:
        _WORK = outer
    return results, other
