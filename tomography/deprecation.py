"""Renamed parameters: the old name keeps working, with a warning, for one release."""

from __future__ import annotations

import functools
import warnings
from typing import Any, Callable, TypeVar

from tomography.errors import ParameterError

__all__ = ["renamed_parameter"]

F = TypeVar("F", bound=Callable[..., Any])


def renamed_parameter(old: str, new: str, *, since: str = "0.1") -> Callable[[F], F]:
    """Accept keyword ``old`` as ``new``, with a :class:`DeprecationWarning`.

    Parameters
    ----------
    old, new : str
        The former and the current keyword.
    since : str, default "0.1"
        The release that renamed it; the old name goes in the next.

    Examples
    --------
    >>> import warnings
    >>> @renamed_parameter("n", "iterations")
    ... def first(values, iterations=None):
    ...     return values[:iterations]
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     first([1, 2, 3], n=2), str(caught[0].message)
    ([1, 2], 'first(n=...) is deprecated since 0.1: use iterations=...')
    >>> first([1, 2, 3], n=1, iterations=2)
    Traceback (most recent call last):
    ...
    tomography.errors.ParameterError: first() got both n= and iterations=; use iterations=
    """

    def decorate(function: F) -> F:
        name = function.__qualname__.rsplit(".", 1)[-1] if "<locals>" in \
            function.__qualname__ else function.__qualname__

        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if old in kwargs:
                if new in kwargs:
                    raise ParameterError(f"{name}() got both {old}= and {new}=; use {new}=")
                warnings.warn(f"{name}({old}=...) is deprecated since {since}: use {new}=...",
                              DeprecationWarning, stacklevel=2)
                kwargs[new] = kwargs.pop(old)
            return function(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate
