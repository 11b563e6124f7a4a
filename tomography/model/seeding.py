"""Seeds: every random choice in the toolkit goes through :func:`check_seed`.

A public function that takes ``seed=`` is decorated with :func:`random_state`
(as networkx's ``py_random_state``): the seed is checked once, on entry and
before any work, and the function receives it as a :class:`Seeded`, the
generator to draw from and the integer to record in its output.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, NamedTuple, TypeVar

import numpy as np

from tomography.model.errors import ParameterError

__all__ = ["Seed", "Seeded", "check_seed", "random_state", "spawn_seeds"]

Seed = int | np.random.Generator | None

F = TypeVar("F", bound=Callable[..., Any])


class Seeded(NamedTuple):
    """A checked seed, as a function decorated with :func:`random_state` receives it."""

    rng: np.random.Generator
    """The generator every random choice of the call draws from."""
    recorded: int | None
    """The integer seed to record in outputs (None when a Generator was passed in)."""


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


def random_state(function: F) -> F:
    """Check the ``seed`` argument of ``function`` on entry and hand it over as a :class:`Seeded`.

    The one place a seed is validated: an int, a numpy Generator or None (a
    fresh seed, recorded) is accepted, anything else refused with a
    :class:`~tomography.model.errors.ParameterError` before the function runs.
    A :class:`Seeded` passes through unchanged, so that one decorated function
    can hand its seed to another.

    Examples
    --------
    >>> @random_state
    ... def draw(n, *, seed=0):
    ...     rng, recorded = seed
    ...     return rng.integers(100, size=n).tolist(), recorded
    >>> draw(2, seed=7) == draw(2, seed=7), draw(1, seed=7)[1]
    (True, 7)
    >>> draw(2, seed="x")
    Traceback (most recent call last):
    ...
    tomography.model.errors.ParameterError: seed must be a non-negative integer or a numpy Generator, got 'x'
    """
    signature = inspect.signature(function)
    parameter = signature.parameters.get("seed")
    if parameter is None:
        raise TypeError(f"{function.__qualname__} takes no 'seed' argument")
    default = parameter.default

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if "seed" in kwargs or parameter.kind is inspect.Parameter.KEYWORD_ONLY:
            value = kwargs.get("seed", default)
            if not isinstance(value, Seeded):
                kwargs["seed"] = Seeded(*check_seed(value))
            return function(*args, **kwargs)
        bound = signature.bind(*args, **kwargs)
        value = bound.arguments.get("seed", default)
        if not isinstance(value, Seeded):
            bound.arguments["seed"] = Seeded(*check_seed(value))
        return function(*bound.args, **bound.kwargs)

    return wrapper  # type: ignore[return-value]
