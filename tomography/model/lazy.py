"""Names of a package loaded from its modules on first use, so that importing it stays cheap."""

from __future__ import annotations

from importlib import import_module
from typing import Any, Callable

__all__ = ["lazy_attributes"]


def lazy_attributes(package: str, table: dict[str, str], namespace: dict[str, Any]
                    ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for a package whose names load on first use.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    table : dict of str to str
        Public name to the submodule (relative to ``package``) that defines it.
    namespace : dict
        The package's ``globals()``; a name, once loaded, is kept there.

    Examples
    --------
    >>> ns = {}
    >>> getattr_, dir_ = lazy_attributes("tomography.model", {"parse_size": "units"}, ns)
    >>> getattr_("parse_size")("2KiB"), "parse_size" in ns, dir_()
    (2048, True, ['parse_size'])
    >>> getattr_("nothing")
    Traceback (most recent call last):
    ...
    AttributeError: module 'tomography.model' has no attribute 'nothing'
    """

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(f"{package}.{module}"), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(table))

    return __getattr__, __dir__
