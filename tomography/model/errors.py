"""Exceptions raised by the toolkit.

Every error a user can cause by what they give the toolkit (a malformed file,
an unknown host, a graph with nothing in it) is a subclass of
:class:`TomographyError` and of :class:`ValueError`, so that callers can catch
either.  The CLI prints the message of a :class:`TomographyError` as one line
and exits with status 2; any other exception is a bug and shows its traceback.

=========================  ===================================================
:class:`TomographyError`   the base class
:class:`ParameterError`    an argument or option has a value that cannot be
                           used (out of range, not one of the choices, the
                           wrong length)
:class:`GraphError`        a weight matrix or graph is not one the toolkit
                           can use (not square, not symmetric, negative or
                           missing weights)
:class:`EmptyGraphError`   a graph with nothing to cluster (a
                           :class:`GraphError`)
:class:`DatasetError`      a measurement dataset is missing, malformed or
                           inconsistent
:class:`ProbeError`        a probe tool's output cannot be read or fitted
=========================  ===================================================

Other modules add their own: ``TopologyError`` (:mod:`tomography.model.topology`),
``GaugeError`` (:mod:`tomography.export.gauge`), ``PreflightError``
(:mod:`measure.preflight`) and more, all subclasses of :class:`TomographyError`.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["TomographyError", "ParameterError", "GraphError", "EmptyGraphError",
           "DatasetError", "ProbeError"]


class TomographyError(ValueError):
    """Base class of the errors caused by bad input."""


class ParameterError(TomographyError):
    """An argument or option has a value that cannot be used.

    The value is out of range, not one of the choices, or does not fit the
    other arguments (say, one label per host of a graph).  The message names
    the argument and the value it got.

    Examples
    --------
    >>> from tomography.model.units import parse_size
    >>> parse_size("-1 MiB")
    Traceback (most recent call last):
    ...
    tomography.model.errors.ParameterError: a size cannot be negative: '-1 MiB'
    """


class GraphError(TomographyError):
    """A weight matrix or graph is not one the toolkit can use.

    The weights of a graph are symmetric, finite and non-negative, in a square
    matrix (or an undirected networkx graph, or a square DataFrame) whose rows
    name distinct hosts (:func:`cluster.adjacency.as_adjacency` checks them).
    """


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


class EmptyGraphError(GraphError):
    """A graph has nothing to cluster: no edge of positive weight, or too few hosts."""


class ProbeError(TomographyError):
    """A probe tool's output cannot be read, or its curve cannot be fitted.

    :mod:`measure.probetools` raises it on NetPIPE output that is not
    ``bytes Mbps seconds`` lines, or a curve Hockney's model cannot fit.
    """


def expect(value: object, kind: type, hint: str = "") -> None:
    """Refuse ``value`` unless it is a ``kind``, naming both (and how to get one).

    Examples
    --------
    >>> expect(3, int)
    >>> expect("3", int, "a level number")
    Traceback (most recent call last):
    ...
    tomography.model.errors.TomographyError: expected a int, got str (a level number)
    """
    if not isinstance(value, kind):
        raise TomographyError(f"expected a {kind.__name__}, got {type(value).__name__}"
                              + (f" ({hint})" if hint else ""))

