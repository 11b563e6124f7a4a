"""Seeds: every random choice in the toolkit goes through :func:`check_seed`."""

from __future__ import annotations

import numpy as np

from tomography.model.errors import ParameterError

__all__ = ["Seed", "check_seed", "spawn_seeds"]

Seed = int | np.random.Generator | None


def check_seed(seed: Seed) -> tuple[np.random.Generator, int | None]:
    """A random generator for ``seed``, and the integer to record in outputs.

    Parameters
    ----------
    seed : int, numpy.random.Generator or None
        ``None`` draws a fresh seed from the operating system and returns it,
        so that the run can be repeated.

    Returns
    -------
    rng : numpy.random.Generator
    recorded : int or None
        The integer seed, or None when a Generator was passed in.

    Examples
    --------
    >>> rng, recorded = check_seed(7)
    >>> recorded, bool(rng.integers(100) == check_seed(7)[0].integers(100))
    (7, True)
    """
    if isinstance(seed, np.random.Generator):
        return seed, None
    if seed is None:
        seed = int(np.random.SeedSequence().entropy % (2**32))
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ParameterError(f"seed must be a non-negative integer or a numpy Generator, "
                             f"got {seed!r}")
    return np.random.default_rng(int(seed)), int(seed)


def spawn_seeds(rng: np.random.Generator, count: int) -> list[int]:
    """``count`` integer seeds drawn from ``rng``, for libraries that take an int.

    Examples
    --------
    >>> spawn_seeds(np.random.default_rng(0), 2) == spawn_seeds(np.random.default_rng(0), 2)
    True
    """
    return [int(s) for s in rng.integers(0, 2**31 - 1, size=count)]
