"""Renamed parameters: the old name keeps working, with a warning, for one release."""

from __future__ import annotations

import functools
import inspect
import sys
import warnings
from typing import Any, Callable, TypeVar

from tomography.model.errors import ParameterError

__all__ = ["renamed_parameter", "keyword_only"]

F = TypeVar("F", bound=Callable[..., Any])


def _caller() -> int:
    """The ``stacklevel`` of the first frame outside this module: the user's call, however
    many of these wrappers a function wears."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename == __file__:
        frame, level = frame.f_back, level + 1
    return level


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
    tomography.model.errors.ParameterError: first() got both n= and iterations=; use iterations=
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
                              DeprecationWarning, stacklevel=_caller())
                kwargs[new] = kwargs.pop(old)
            return function(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate


def keyword_only(*names: str, since: str = "0.1") -> Callable[[F], F]:
    """Accept the arguments ``names``, now keyword-only, in their former positions, with a warning.

    Parameters
    ----------
    *names : str
        The parameters that used to follow the first one positionally, in order.
    since : str, default "0.1"

    Examples
    --------
    >>> import warnings
    >>> @keyword_only("truth")
    ... def show(hierarchy, *, truth=None):
    ...     return hierarchy, truth
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     show("h", {"a": "x"}), str(caught[0].message)
    (('h', {'a': 'x'}), 'show(hierarchy, truth) is deprecated since 0.1: give truth=... by keyword')
    """

    def decorate(function: F) -> F:
        first = next(iter(inspect.signature(function).parameters))

        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            extra = args[1:]
            if extra:
                if len(extra) > len(names):
                    raise ParameterError(f"{function.__name__}() takes one positional argument; "
                                         f"give {', '.join(n + '=' for n in names)} by keyword")
                moved = names[:len(extra)]
                for name, value in zip(moved, extra):
                    if name in kwargs:
                        raise ParameterError(f"{function.__name__}() got {name} twice")
                    kwargs[name] = value
                warnings.warn(f"{function.__name__}({first}, {', '.join(moved)}) is deprecated "
                              f"since {since}: give {', '.join(n + '=...' for n in moved)} by "
                              "keyword", DeprecationWarning, stacklevel=_caller())
            return function(*args[:1], **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate
