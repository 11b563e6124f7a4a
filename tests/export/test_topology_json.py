"""The topology JSON file: the hierarchy and the tree of clusters, round trip and errors."""

from __future__ import annotations

import json

import pytest

from tomography.model.errors import TomographyError
from tomography.export.topology_json import FORMAT, topology_from_json, topology_to_json
from tomography.model.hierarchy import Hierarchy


def test_round_trip(inferred, tree, planted):
    text = topology_to_json(inferred, tree, params={"dataset": "planted", "seed": 1})
    data = json.loads(text)
    assert data["format"] == FORMAT and data["hosts"] == planted.host_names
    assert data["created"].endswith("+00:00")
    back = topology_from_json(text)
    assert back.hosts == planted.host_names
    assert back.params == {"dataset": "planted", "seed": 1}
    assert back.hierarchy.to_dict() == inferred.to_dict()
    assert back.tree.to_dict() == tree.to_dict()
    assert [len(level) for level in back.hierarchy.levels] == [9, 3, 2]
    assert back.created == data["created"]


def test_one_part_only(inferred, tree):
    back = topology_from_json(topology_to_json(inferred, None, indent=None))
    assert back.tree is None and back.hierarchy.depth == inferred.depth
    back = topology_from_json(topology_to_json(None, tree))
    assert back.hierarchy is None and len(back.tree.edges) == len(tree.edges)
    assert back.hosts == sorted(h for c in tree.clusters for h in c.hosts)


def test_write_errors(inferred):
    with pytest.raises(TomographyError, match="give a hierarchy, a tree or both"):
        topology_to_json(None, None)
    other = Hierarchy.from_partitions(["x", "y"], [[0, 1]])
    from tomography.model.hierarchy import Cluster, ClusterTree
    tree = ClusterTree([Cluster("L1C0", 1, ("x", "y"))], [])
    with pytest.raises(TomographyError, match="cover different hosts"):
        topology_to_json(inferred, tree)
    assert topology_from_json(topology_to_json(other, tree)).hosts == ["x", "y"]


@pytest.fixture()
def document(inferred, tree) -> dict:
    return json.loads(topology_to_json(inferred, tree))


@pytest.mark.parametrize("change, message", [
    (lambda d: d.update(format="tomography-topology/2"),
     r"field 'format': unsupported 'tomography-topology/2'"),
    (lambda d: d.update(hierarchy=None, tree=None), r"field 'hierarchy' and field 'tree'"),
    (lambda d: d["hierarchy"].pop("levels"), r"field 'hierarchy': not a hierarchy.*'levels'"),
    (lambda d: d["tree"].pop("nodes"), r"field 'tree': not a cluster tree"),
    (lambda d: d["hosts"].pop(), r"field 'hierarchy' covers other hosts than field 'hosts'"),
    (lambda d: d.update(hierarchy=None, hosts=["a"]),
     r"field 'tree' covers other hosts than field 'hosts'"),
    (lambda d: d.update(params=[1]), r"field 'params': must be an object"),
])
def test_read_errors_name_the_field(document, change, message):
    change(document)
    with pytest.raises(TomographyError, match=message):
        topology_from_json(json.dumps(document))


def test_read_not_json():
    with pytest.raises(TomographyError, match="not valid JSON"):
        topology_from_json("{")
    with pytest.raises(TomographyError, match="is an object"):
        topology_from_json("[]")
