"""The probe grid: median bandwidth from each source (row) to each destination (column).

What perfSONAR's MaDDash grids show of a mesh of pairwise tests, drawn for
``tomography report`` of a probe dataset: each cell coloured by the median
Mbit/s of the pair's successful TCP tests, failed tests marked, pairs never
measured left grey.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from tomography.model.errors import ParameterError
from tomography.model.weights import tcp_probes
from visualize._common import dataset_of
from visualize.style import PALETTE, SEQUENTIAL, new_figure, paper_style

__all__ = ["probe_grid", "plot_probe_grid", "failed_tests"]


def failed_tests(probes: pd.DataFrame) -> np.ndarray:
    """Per test (row of ``probes.csv``), whether it failed: no rate, or an error.

    Examples
    --------
    >>> failed_tests(pd.DataFrame({"bits_per_second": [9e8, None], "error": ["", ""]})).tolist()
    [False, True]
    """
    bad = np.array(probes["bits_per_second"].isna(), dtype=bool)
    if "error" in probes:
        bad |= np.array(probes["error"].fillna("").astype(str).str.strip() != "", dtype=bool)
    return bad


def probe_grid(probes: pd.DataFrame, hosts: Sequence[str]
               ) -> tuple[np.ndarray, np.ndarray, int]:
    """The numbers of the probe grid: per ordered pair (row: source, column: destination) the
    median Mbit/s of its successful TCP tests (NaN: none), whether a test of it failed, and
    how many TCP tests failed.  UDP tests are left out: their rate is the rate asked for.

    Examples
    --------
    >>> import pandas as pd
    >>> probes = pd.DataFrame({"src": ["a", "a", "b"], "dst": ["b", "b", "a"],
    ...                        "bits_per_second": [9e8, 5e9, None], "error": ["", "", "refused"],
    ...                        "protocol": ["tcp", "udp", "tcp"]})
    >>> grid, failed, count = probe_grid(probes, ["a", "b"])
    >>> grid.tolist(), failed.tolist(), count
    ([[nan, 900.0], [nan, nan]], [[False, False], [True, False]], 1)
    """
    probes = tcp_probes(probes)
    index = {h: i for i, h in enumerate(hosts)}
    n = len(hosts)
    failed = failed_tests(probes)
    grid = np.full((n, n), np.nan)
    medians = probes[~failed].groupby(["src", "dst"])["bits_per_second"].median() / 1e6
    for (src, dst), value in medians.items():
        grid[index[src], index[dst]] = value
    some_failed = np.zeros((n, n), dtype=bool)
    for src, dst in probes.loc[failed, ["src", "dst"]].itertuples(index=False):
        some_failed[index[src], index[dst]] = True
    return grid, some_failed, int(failed.sum())


def plot_probe_grid(probes: Any, hosts: Sequence[str] | None = None) -> Figure:
    """The grid of :func:`probe_grid` as a figure: hosts named up to 40 of them, a test that
    failed marked with a cross, a pair whose every test failed in its own colour.

    Parameters
    ----------
    probes : DataFrame, Measurement or dataset directory
        A probe table (``src, dst, bits_per_second, error``), or a probe
        dataset (its probes and hosts).
    hosts : sequence of str, optional
        The hosts of the grid, in order; a dataset's own by default.

    Examples
    --------
    >>> probes = pd.DataFrame({"src": ["a", "b"], "dst": ["b", "a"], "bits_per_second": [9e8, 8e8],
    ...                        "error": ["", ""], "protocol": ["tcp", "tcp"]})
    >>> plot_probe_grid(probes, ["a", "b"]).axes[0].get_xlabel()
    'destination (2 hosts, sorted by name)'
    """
    import matplotlib
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    if not isinstance(probes, pd.DataFrame):
        m = dataset_of(probes, "plot_probe_grid")
        if m.probes is None:
            raise ParameterError("plot_probe_grid draws a probe dataset's tests (iperf3, "
                                 "NetPIPE); this dataset has none")
        probes, hosts = m.probes, m.host_names if hosts is None else hosts
    if hosts is None:
        raise ParameterError("plot_probe_grid(probes, hosts): a probe table needs the hosts "
                             "of its grid")
    n = len(hosts)
    grid, some_failed, _ = probe_grid(probes, hosts)
    only_failed = some_failed & np.isnan(grid)
    with paper_style():
        fig, ax = new_figure("double", aspect=0.8 if n > 2 else 0.5)
        cmap = matplotlib.colormaps[SEQUENTIAL].with_extremes(bad="#eeeeee")
        image = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, interpolation="nearest",
                          origin="upper", aspect="equal")
        if only_failed.any():
            ax.imshow(np.where(only_failed, 1.0, np.nan), interpolation="nearest",
                      cmap=ListedColormap([PALETTE[4]]), origin="upper", aspect="equal")
        if n <= 40:
            rows, cols = np.nonzero(some_failed)
            ax.scatter(cols, rows, marker="x", s=40, color="white", linewidths=2.0)
            ax.scatter(cols, rows, marker="x", s=30, color=PALETTE[4], linewidths=1.2)
            ax.set_xticks(range(n), hosts, rotation=90, fontsize=6)
            ax.set_yticks(range(n), hosts, fontsize=6)
        else:
            ax.set_xticks([])
            ax.set_yticks([])
        ax.set_xlabel(f"destination ({n} hosts, sorted by name)")
        ax.set_ylabel("source")
        bar = fig.colorbar(image, ax=ax, shrink=0.9, pad=0.02, aspect=30)
        bar.set_label("median bandwidth (Mbit/s)", fontsize=7)
        bar.ax.tick_params(labelsize=6)
        ax.legend(handles=[Patch(color=PALETTE[4], label="every test failed"),
                           Patch(color="#eeeeee", label="not measured")]
                  + ([] if n > 40 else [ax.collections[-1]]),
                  labels=["every test failed", "not measured"]
                  + ([] if n > 40 else ["a test failed"]),
                  loc="upper left", bbox_to_anchor=(0, -0.12 if n <= 40 else -0.05),
                  ncol=3, fontsize=6, frameon=False)
    return fig
