"""The measurement dataset held in memory: :class:`Measurement`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

import pandas as pd

from tomography.model.dataset.schema import ITERATIONS_COLUMNS, TRANSFERS_COLUMNS
from tomography.model.deprecation import renamed_parameter

__all__ = ["Measurement"]


@dataclass
class Measurement:
    """A measurement dataset held in memory.

    Attributes
    ----------
    meta : dict
        The content of ``meta.json``.
    hosts : pandas.DataFrame
        Columns ``host``, ``address``, ``label``, one row per host, sorted by
        host name.  ``label`` is ``""`` where unknown.
    transfers : pandas.DataFrame
        Columns ``iteration``, ``receiver``, ``sender`` and ``blocks``: the
        16 KiB blocks ``receiver`` got directly from ``sender``.
    iterations : pandas.DataFrame
        Columns ``iteration``, ``root``, ``bytes``, ``duration_s`` (NaN when
        unknown) and ``complete``, sorted by iteration.
    probes : pandas.DataFrame or None
        The pairwise probe runs, when the dataset has any.

    Examples
    --------
    >>> from tomography.model.synthetic import planted_partition
    >>> m = planted_partition(12, 3, iterations=2, seed=1)
    >>> m.n_hosts, m.iteration_ids
    (12, [0, 1])
    >>> m.host_names[:3]
    ['h000', 'h001', 'h002']
    """

    meta: dict[str, Any]
    hosts: pd.DataFrame
    transfers: pd.DataFrame = field(default_factory=lambda: empty_frame(TRANSFERS_COLUMNS))
    iterations: pd.DataFrame = field(default_factory=lambda: empty_frame(ITERATIONS_COLUMNS))
    probes: pd.DataFrame | None = None

    @property
    def host_names(self) -> list[str]:
        """Host names in sorted order: the row and column order of every matrix."""
        return list(self.hosts["host"])

    @property
    def n_hosts(self) -> int:
        """Number of hosts."""
        return len(self.hosts)

    @property
    def iteration_ids(self) -> list[int]:
        """Iteration numbers in increasing order."""
        return [int(i) for i in self.iterations["iteration"]]

    def __repr__(self) -> str:
        """One line whatever the size.

        Examples
        --------
        >>> from tomography.model.synthetic import planted_partition
        >>> planted_partition(12, 3, iterations=2, seed=1)
        Measurement(12 hosts: h000, h001, h002, ..., 2 iterations (synthetic), labelled)
        """
        return f"Measurement({', '.join(self._facts())})"

    def _facts(self) -> list[str]:
        from tomography.model.display import some
        from tomography.model.units import counted

        facts = [f"{counted(self.n_hosts, 'host')}: {some(self.host_names, count=False)}"]
        method = self.meta.get("method", "?")
        if self.iteration_ids:
            facts.append(f"{counted(len(self.iteration_ids), 'iteration')} ({method})")
        if self.probes is not None:
            facts.append(f"{counted(len(self.probes), 'probe')} ({method})")
        if self.meta.get("topology"):
            facts.append(f"topology {self.meta['topology']}")
        if self.labels:
            facts.append("labelled")
        return facts

    def _repr_html_(self) -> str:
        from tomography.model.display import html_view

        names = {"iteration": "measured", "probe": "measured", "topology": "topology",
                 "labelled": "truth"}
        facts = [("hosts", self._facts()[0])] + [
            (next((v for k, v in names.items() if k in f), "facts"),
             "hosts.csv has labels" if f == "labelled" else f) for f in self._facts()[1:]]
        if self.iteration_ids:
            facts.append(("blocks received", int(self.transfers["blocks"].sum())))
        return html_view("Measurement", facts, self.hosts)

    @property
    def labels(self) -> dict[str, str]:
        """Ground-truth label per host, for the hosts that have one."""
        return {h: lab for h, lab in zip(self.hosts["host"], self.hosts["label"]) if lab}

    @renamed_parameter("n", "iterations")
    def edges(self, iterations: int | None = None, *, per_iteration: bool = False
              ) -> pd.DataFrame:
        """The edges of ``w_n``: ``source, target, weight, iterations``, the unit in
        ``attrs["unit"]`` (see :func:`tomography.model.interop.edges_frame`).

        Examples
        --------
        >>> from tomography.model.synthetic import planted_partition
        >>> planted_partition(6, 2, iterations=2, seed=0).edges().columns.tolist()
        ['source', 'target', 'weight', 'iterations']
        """
        from tomography.model.edges import edges_frame

        return edges_frame(self, iterations, per_iteration=per_iteration)

    @renamed_parameter("n", "iterations")
    def weight_matrix(self, iterations: int | None = None):
        """``w_n`` (Eq 4.2) as a SciPy sparse matrix, and its host order.

        Examples
        --------
        >>> from tomography.model.synthetic import planted_partition
        >>> W, hosts = planted_partition(6, 2, iterations=2, seed=0).weight_matrix()
        >>> W.shape, hosts[0]
        ((6, 6), 'h000')
        """
        from tomography.model.weights import mean_weights

        return mean_weights(self, iterations), self.host_names


def empty_frame(columns: Iterable[str]) -> pd.DataFrame:
    """An empty table with these columns (a dataset without broadcasts)."""
    return pd.DataFrame({c: [] for c in columns})
