"""The built-in reference scenarios: topology files shipped with the package (``read_topology("N2")``).

This module imports nothing heavy: the command line lists the names in its ``--help``.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["builtin_networks", "network_help"]


def builtin_networks() -> list[str]:
    """The names of the built-in networks (``tomography simulate NAME``, ``testbed up NAME``).

    Examples
    --------
    >>> "two-sites-demo" in builtin_networks()
    True
    """
    return sorted(p.stem for p in Path(__file__).resolve().parent.glob("*.yaml"))


def network_help() -> str:
    """The help of a command's topology argument, the built-in networks named.

    Examples
    --------
    >>> network_help().startswith("a topology file (YAML) or a built-in network: N1, N2, ")
    True
    """
    return f"a topology file (YAML) or a built-in network: {', '.join(builtin_networks())}"
