"""Views of the results: text renderings for the terminal (plots come later)."""

from visualize.text import cluster_tree_text, hasse_text, hierarchy_text

__all__ = ["hasse_text", "hierarchy_text", "cluster_tree_text"]
