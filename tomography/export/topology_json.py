"""One JSON file with the inferred topology: the hierarchy and the tree of clusters.

Format ``tomography-topology/1``::

    {
      "format": "tomography-topology/1",
      "created": "2026-05-01T12:00:00+00:00",
      "hosts": ["h000", "h001", ...],
      "params": {...},          # the run: dataset, iterations, seed, ... (free form)
      "hierarchy": {...},       # Hierarchy.to_dict(): levels of clusters with their
                                #   averaged weights; its own params (seed, linkage, ...)
      "tree": {...}             # ClusterTree.to_dict(): nodes, weighted edges, params
    }

Either ``hierarchy`` or ``tree`` may be ``null``, not both.  The two parts
have exactly the shapes the CLI prints for ``tomography hierarchy --format
json`` and ``tomography tree --format json``.  Readers accept extra keys; a
new version is a new ``format`` string.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any, NamedTuple

from tomography.model.errors import TomographyError
from tomography.model.hierarchy import ClusterTree, Hierarchy

__all__ = ["FORMAT", "TopologyResult", "topology_to_json", "topology_from_json"]

FORMAT = "tomography-topology/1"
"""The ``format`` string of the files this module reads and writes."""


class TopologyResult(NamedTuple):
    """The content of a topology JSON file."""

    hierarchy: Hierarchy | None
    tree: ClusterTree | None
    hosts: list[str]
    params: dict[str, Any]
    created: str


def _hosts(tree: ClusterTree) -> list[str]:
    return sorted(h for c in tree.clusters for h in c.hosts)


def topology_to_json(hierarchy: Hierarchy | None, tree: ClusterTree | None, *,
                     params: dict[str, Any] | None = None, indent: int | None = 2) -> str:
    """The hierarchy and the cluster tree as one JSON document.

    Parameters
    ----------
    hierarchy : Hierarchy or None
    tree : ClusterTree or None
        Over the same hosts as ``hierarchy``.
    params : dict, optional
        How the run was made (dataset, iterations, seed, ...); must be JSON-ready.
    indent : int or None, default 2

    Returns
    -------
    str

    Raises
    ------
    TomographyError
        When both parts are None, or they cover different hosts.

    Examples
    --------
    >>> from tomography.model.hierarchy import Cluster, TreeEdge
    >>> h = Hierarchy.from_partitions(["a", "b", "c"], [[0, 0, 1]], params={"seed": 1})
    >>> t = ClusterTree([Cluster("L1C0", 1, ("a", "b")), Cluster("L1C1", 1, ("c",))],
    ...                 [TreeEdge("L1C0", "L1C1", 2.5)])
    >>> back = topology_from_json(topology_to_json(h, t, params={"iterations": 4}))
    >>> back.hosts, back.params, back.tree.edges[0].weight, back.hierarchy.params["seed"]
    (['a', 'b', 'c'], {'iterations': 4}, 2.5, 1)
    """
    if hierarchy is None and tree is None:
        raise TomographyError("give a hierarchy, a tree or both")
    hosts = hierarchy.hosts if hierarchy is not None else _hosts(tree)
    if hierarchy is not None and tree is not None and _hosts(tree) != hosts:
        raise TomographyError("the hierarchy and the tree cover different hosts")
    document = {
        "format": FORMAT,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "hosts": hosts,
        "params": dict(params or {}),
        "hierarchy": None if hierarchy is None else hierarchy.to_dict(),
        "tree": None if tree is None else tree.to_dict(),
    }
    return json.dumps(document, indent=indent)


def topology_from_json(text: str) -> TopologyResult:
    """Read a document written by :func:`topology_to_json`.

    Raises
    ------
    TomographyError
        Naming the field at fault: not JSON, another format, a bad part, or
        parts that disagree with ``hosts``.

    Examples
    --------
    >>> topology_from_json('{"format": "tomography-topology/0"}')
    Traceback (most recent call last):
    ...
    tomography.model.errors.TomographyError: field 'format': unsupported 'tomography-topology/0'; \
this reader understands 'tomography-topology/1'
    """
    from tomography.model.safe_load import load_json

    data = load_json(text.encode("utf-8"), what="topology JSON")
    if not isinstance(data, dict):
        raise TomographyError("a topology JSON document is an object")
    if data.get("format") != FORMAT:
        raise TomographyError(f"field 'format': unsupported {data.get('format')!r}; this reader "
                              f"understands {FORMAT!r}")
    hierarchy = tree = None
    if data.get("hierarchy") is not None:
        try:
            hierarchy = Hierarchy.from_dict(data["hierarchy"])
        except TomographyError as exc:
            raise TomographyError(f"field 'hierarchy': {exc}") from None
    if data.get("tree") is not None:
        try:
            tree = ClusterTree.from_json(json.dumps(data["tree"]))
        except TomographyError as exc:
            raise TomographyError(f"field 'tree': {exc}") from None
    if hierarchy is None and tree is None:
        raise TomographyError("field 'hierarchy' and field 'tree': both missing or null")
    hosts = data.get("hosts")
    for name, part in (("hierarchy", hierarchy and hierarchy.hosts), ("tree", tree and _hosts(tree))):
        if part is not None and part != hosts:
            raise TomographyError(f"field {name!r} covers other hosts than field 'hosts'")
    params = data.get("params", {})
    if not isinstance(params, dict):
        raise TomographyError("field 'params': must be an object")
    return TopologyResult(hierarchy, tree, hosts, params, str(data.get("created", "")))
