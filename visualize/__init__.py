"""Views of the results: text renderings for the terminal and matplotlib plots.

=====================================  ===========================================
text (imported with the package)
``hasse_text``, ``hierarchy_text``,    the Hasse diagram, the indented hierarchy,
``cluster_tree_text``                  the tree of clusters, for the terminal
plots (matplotlib, loaded on first use; each returns a ``Figure``)
``plot_layout``                        Kamada-Kawai view of the host graph (Figs 5.3-5.7)
``plot_heatmap``                       blocks received per host from each host (Fig 5.1)
``plot_probe_grid``                    median Mbit/s of each probed pair (MaDDash's grid)
``plot_timeline``                      blocks moved per host over a traced broadcast
                                       (Fig 5.2)
``plot_hasse``                         the hierarchy as a Hasse diagram (Figs 5.19, 5.20)
``plot_tree``                          the maximum spanning tree of clusters (Fig 5.23)
``plot_convergence``                   NMI per iteration, flat and per level (Figs 5.13,
                                       5.21)
``plot_edge_weight``                   w of one edge per iteration and its mean (Fig 4.5)
``plot_weight_distribution``           w_n over all edges, datasets overlaid (App. A Fig 2)
``paper_style``, ``new_figure``        the shared style (:mod:`visualize.style`)
=====================================  ===========================================

The plots never call ``show``: save a figure with ``fig.savefig("x.pdf")``, or
return it from a notebook cell.  Importing this package does not import
matplotlib.

Examples
--------
>>> import visualize
>>> visualize.plot_hasse.__module__
'visualize.hasse'
"""

from __future__ import annotations

from tomography.model.lazy import lazy_attributes
from visualize.text import cluster_tree_text, hasse_text, hierarchy_text

_LAZY = {
    "plot_layout": "layout", "layout_positions": "layout",
    "plot_heatmap": "heatmap", "plot_probe_grid": "probe_grid",
    "plot_timeline": "timeline",
    "plot_hasse": "hasse",
    "plot_tree": "tree",
    "plot_convergence": "convergence",
    "plot_edge_weight": "distribution", "plot_weight_distribution": "distribution",
    "edge_series": "distribution",
    "paper_style": "style", "new_figure": "style", "PALETTE": "style", "MARKERS": "style",
}

PLOTS = ("layout", "heatmap", "timeline", "hasse", "tree", "convergence", "edge",
         "distribution")
"""The plot kinds of ``tomography plot --kind``."""

__all__ = ["hasse_text", "hierarchy_text", "cluster_tree_text", "PLOTS", *_LAZY]


__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals())
