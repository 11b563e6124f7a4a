"""Roots spread over the network by the data so far (measure.roots)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from measure.roots import RootChooser
from measure.simulator import simulate
from measure.swarm import SwarmParams, root_order
from tomography.model.dataset import read_measurement
from tomography.model.errors import ParameterError
from tomography.model.synthetic import planted_hierarchy


def _groups(m, depth: int) -> dict[str, str]:
    return {h: "/".join(m.labels[h].split("/")[:depth]) for h in m.host_names}


def _feed(chooser: RootChooser, m, iterations: int) -> list[str]:
    """Choose a root per iteration, feeding the planted counts of that iteration."""
    roots = []
    t = m.transfers
    for i in range(iterations):
        root = chooser.next()
        rows = t[t["iteration"] == i]
        chooser.add(root, rows["receiver"], rows["sender"], rows["blocks"])
        roots.append(root)
    return roots


def test_spread_roots_visit_every_group_before_any_twice() -> None:
    m = planted_hierarchy((2, 2), 6, iterations=8, seed=1)
    roots = _feed(RootChooser(m.host_names, seed=3), m, 8)
    sites, leaves = _groups(m, 1), _groups(m, 2)
    # the sites alternate: the second root is in the site the first was not
    assert [sites[r] for r in roots[0::2]] == [sites[roots[0]]] * 4
    assert {sites[r] for r in roots[1::2]} == set(sites.values()) - {sites[roots[0]]}
    # each of the four clusters holds one of the first four roots, two of the eight
    assert len({leaves[r] for r in roots[:4]}) == 4
    assert sorted(np.unique([leaves[r] for r in roots], return_counts=True)[1]) == [2] * 4
    assert len(set(roots)) == 8                      # no host twice while others wait


def test_random_roots_are_the_seeded_rotation() -> None:
    m = planted_hierarchy((2,), 3, iterations=8, seed=0)
    chooser = RootChooser(m.host_names, seed=5, how="random")
    assert _feed(chooser, m, 8) == (root_order(m.host_names, 5) * 2)[:8]


def test_the_same_seed_and_data_give_the_same_roots_and_a_replay_resumes() -> None:
    m = planted_hierarchy((3,), 5, iterations=6, seed=2)
    first = _feed(RootChooser(m.host_names, seed=7), m, 6)
    assert _feed(RootChooser(m.host_names, seed=7), m, 6) == first
    assert RootChooser(m.host_names, seed=7).next() == root_order(m.host_names, 7)[0]
    replayed = RootChooser(m.host_names, seed=7)
    part = m.transfers[m.transfers["iteration"] < 3]
    for i, root in enumerate(first[:3]):
        rows = part[part["iteration"] == i]
        replayed.add(root, rows["receiver"], rows["sender"], rows["blocks"])
    assert replayed.next() == first[3]


def test_a_host_no_one_heard_from_is_still_a_root_in_its_turn() -> None:
    chooser = RootChooser(["a", "b", "c"], seed=0)
    first = chooser.next()
    others = [h for h in "abc" if h != first]
    chooser.add(first, [others[0]], [first], [10])   # the third host exchanged nothing
    picks = {chooser.next()}
    assert picks <= set(others)


def test_a_bad_choice_is_refused() -> None:
    with pytest.raises(ParameterError, match="roots must be"):
        RootChooser(["a", "b"], seed=0, how="farthest")
    with pytest.raises(ParameterError, match="roots must be"):
        SwarmParams(roots="farthest")


def test_the_simulator_spreads_its_roots_over_the_sites(tmp_path: Path) -> None:
    params = SwarmParams(block_quota=32)
    simulate("two-sites-demo", tmp_path / "d", iterations=4, file_size=2**21, seed=1,
             params=params)
    m = read_measurement(tmp_path / "d")
    sites = [m.labels[r].split("/")[0] for r in m.iterations["root"]]
    assert sites[0] != sites[1] and sites[2] != sites[3]
    assert m.meta["params"]["roots"] == "spread"
    simulate("two-sites-demo", tmp_path / "r", iterations=2, file_size=2**21, seed=1,
             params=params, resume=True)
    simulate("two-sites-demo", tmp_path / "r", iterations=4, file_size=2**21, seed=1,
             params=params, resume=True)
    assert list(read_measurement(tmp_path / "r").iterations["root"]) == list(
        m.iterations["root"])
