"""One BLAS thread for many small dense problems."""

from __future__ import annotations

from contextlib import AbstractContextManager

__all__ = ["one_blas_thread"]


def one_blas_thread() -> AbstractContextManager:
    """A context in which NumPy's and SciPy's BLAS run on one thread.

    Small dense problems (an eigensolver on a cluster of a few hundred hosts,
    a layout's distances) cost more to share between threads than they give,
    many times more on a machine whose cores are busy: a 128 x 128
    eigenvector took 14 ms on two threads of a loaded 2-core machine and
    1.3 ms on one (benchmarks/RESULTS.md).

    Returns
    -------
    context manager
        :func:`threadpoolctl.threadpool_limits` at one BLAS thread.

    Examples
    --------
    >>> import numpy as np
    >>> with one_blas_thread():
    ...     float(np.linalg.eigvalsh(np.eye(3)).sum())
    3.0
    """
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")
