"""Exceptions raised by the toolkit.

Every error a user can cause by what they give the toolkit (a malformed file,
an unknown host, a graph with nothing in it) is a subclass of
:class:`TomographyError` and of :class:`ValueError`, so that callers can catch
either.  The CLI prints the message of a :class:`TomographyError` as one line
and exits with status 2.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["TomographyError", "DatasetError", "EmptyGraphError"]


class TomographyError(ValueError):
    """Base class of the errors caused by bad input."""


class DatasetError(TomographyError):
    """A measurement dataset is missing, malformed or inconsistent.

    Parameters
    ----------
    message : str
        What is wrong.
    path : str or Path, optional
        The file the problem is in.
    line : int, optional
        The 1-based line of ``path`` (the CSV header is line 1).
    field : str, optional
        The column or key at fault.

    Examples
    --------
    >>> str(DatasetError("not an integer: 'x'", path="d/transfers.csv", line=3, field="blocks"))
    "d/transfers.csv, line 3, field 'blocks': not an integer: 'x'"
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.path = None if path is None else str(path)
        self.line = line
        self.field = field
        self.reason = message
        where = []
        if self.path is not None:
            where.append(self.path)
        if line is not None:
            where.append(f"line {line}")
        if field is not None:
            where.append(f"field {field!r}")
        super().__init__(f"{', '.join(where)}: {message}" if where else message)


class EmptyGraphError(TomographyError):
    """A graph has no edge of positive weight, so there is nothing to cluster."""


def expect(value: object, kind: type, hint: str = "") -> None:
    """Refuse ``value`` unless it is a ``kind``, naming both (and how to get one).

    Examples
    --------
    >>> expect(3, int)
    >>> expect("3", int, "a level number")
    Traceback (most recent call last):
    ...
    tomography.errors.TomographyError: expected a int, got str (a level number)
    """
    if not isinstance(value, kind):
        raise TomographyError(f"expected a {kind.__name__}, got {type(value).__name__}"
                              + (f" ({hint})" if hint else ""))

