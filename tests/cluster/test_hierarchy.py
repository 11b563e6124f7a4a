"""Averaged-edge hierarchy: Eq 5.4/5.5 by hand, planted hierarchies, the Hierarchy object."""

from __future__ import annotations

import numpy as np
import pytest

from cluster.accuracy import hierarchy_nmi
from cluster.averaged_edge import averaged_edge_hierarchy, collapse, with_self_loops
from tomography.model.errors import TomographyError
from tomography.model.hierarchy import Hierarchy
from tomography.model.synthetic import planted_hierarchy
from tomography.model.weights import mean_weights


def hand_graph() -> np.ndarray:
    """Hosts 0,1 (cluster A, 2 hosts) and 2,3,4 (cluster B, 3 hosts)."""
    w = np.zeros((5, 5))
    edges = {(0, 1): 9, (2, 3): 7, (2, 4): 5, (3, 4): 3,
             (0, 2): 1, (0, 3): 2, (1, 4): 3}
    for (i, j), x in edges.items():
        w[i, j] = w[j, i] = x
    return w


def test_eq_5_4_and_5_5_by_hand() -> None:
    W, sizes = collapse(hand_graph(), [0, 0, 1, 1, 1], linkage="thesis")
    # sum between = 1 + 2 + 3 = 6; conn_h = min(2,3)/max(2,3) = 2/3; 6 / (2/3) = 9
    assert sizes.tolist() == [2, 3]
    assert W[0, 1] == pytest.approx(9.0) and W[1, 0] == pytest.approx(9.0)
    # internal weights kept as loops: A = 9, B = 7 + 5 + 3 = 15
    assert W[0, 0] == pytest.approx(9.0) and W[1, 1] == pytest.approx(15.0)
    looped = with_self_loops(W, 0.5)
    assert looped[0, 0] == pytest.approx(4.5) and looped[0, 1] == pytest.approx(9.0)


def test_mean_linkage_by_hand() -> None:
    W, _ = collapse(hand_graph(), [0, 0, 1, 1, 1], linkage="mean")
    assert W[0, 1] == pytest.approx(6 / (2 * 3))
    assert W[0, 0] == pytest.approx(9 / 2**2) and W[1, 1] == pytest.approx(15 / 3**2)


def test_collapse_is_recursive_on_host_sums_for_mean() -> None:
    # collapsing in two steps with the mean linkage equals collapsing at once
    w = np.random.default_rng(1).random((6, 6))
    w = np.triu(w, 1)
    w = w + w.T
    once, _ = collapse(w, [0, 0, 0, 1, 1, 1], linkage="mean")
    step, sizes = collapse(w, [0, 0, 1, 2, 2, 3], linkage="mean")
    twice, _ = collapse(step, [0, 0, 1, 1], sizes, linkage="mean")
    np.testing.assert_allclose(twice.toarray(), once.toarray())


def test_thesis_linkage_scales_by_size_ratio() -> None:
    w = np.zeros((4, 4))
    w[0, 3] = w[3, 0] = 4.0
    W, _ = collapse(w, [0, 0, 0, 1], linkage="thesis")
    # one host against three: conn_h = 1/3, so 4 / (1/3) = 12
    assert W[0, 1] == pytest.approx(12.0)


def test_planted_two_level_hierarchy_recovered_at_both_levels() -> None:
    m = planted_hierarchy((3, 3), 16, iterations=4, seed=3)
    for linkage in ("thesis", "mean"):
        h = averaged_edge_hierarchy(mean_weights(m), m.host_names, linkage=linkage, seed=2)
        # the 9 leaves, the 3 sites, then (thesis 5.10: repeat until at most two
        # remain) a post-optimal merge of two of the equally separated sites
        assert [len(level) for level in h.levels] == [9, 3, 2]
        table = hierarchy_nmi(h, m.labels)
        assert table["nmi"].tolist()[:2] == [1.0, 1.0]
        assert table["truth_depth"].tolist()[:2] == [2, 1]


@pytest.mark.parametrize("seed", [0, 1])
def test_uneven_groups_noise_cuts_merged_back(seed: int) -> None:
    # A 96-host group next to a 16-host one: the real boundary made the split of
    # their site significant as a whole, and Louvain's cut inside the 96 hosts came
    # along (7 leaf clusters, NMI 0.974) until the split's parts were merged back.
    m = planted_hierarchy((2, 3), [16, 96, 40, 64, 24, 80], iterations=10, noise=0.5, seed=seed)
    h = averaged_edge_hierarchy(mean_weights(m), m.host_names, seed=0)
    assert [len(level) for level in h.levels][:2] == [6, 4]
    assert hierarchy_nmi(h, m.labels)["nmi"][0] == pytest.approx(1.0)


def chain_of_sites(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Five sites of 4, 6, 4, 2 and 6 hosts in a chain behind slow links, as a real swarm
    sees them (family-045 of the calibration's real part): 200 blocks per pair inside a site,
    13 to 38 between neighbours, 3 otherwise, gamma noise."""
    rng = np.random.default_rng(seed)
    site = np.repeat(np.arange(5), [4, 6, 4, 2, 6])
    link = {(0, 1): 14, (1, 2): 34, (2, 3): 13, (3, 4): 38}
    w = np.zeros((len(site), len(site)))
    for i, j in zip(*np.triu_indices(len(site), 1)):
        a, b = sorted((site[i], site[j]))
        w[i, j] = w[j, i] = rng.gamma(8, (200 if a == b else link.get((a, b), 3)) / 8)
    return w, site


@pytest.mark.parametrize("seed", [0, 1, 3])
def test_a_site_of_two_hosts_that_louvain_joins_to_its_neighbour_is_cut_out(seed: int) -> None:
    # Louvain's best partition joins the site of two hosts to the next one (the resolution
    # limit) and the permutation test cannot judge a cluster of 8 hosts; the cut can.
    w, site = chain_of_sites(seed)
    h = averaged_edge_hierarchy(w, seed=0)
    origins = h.params["origins"]
    assert len(h.levels[origins.index("louvain")]) == 4
    assert origins[0] == "cut"
    sites = [sorted(np.flatnonzero(site == s).tolist()) for s in range(5)]
    assert sorted(sorted(int(x[1:]) for x in c.hosts) for c in h.levels[0]) == sites


def test_a_homogeneous_cluster_is_not_cut() -> None:
    from cluster.refine import separated_cuts

    rng = np.random.default_rng(0)
    noise = np.triu(rng.gamma(8, 25.0, (12, 12)), 1)
    assert separated_cuts(noise + noise.T, np.zeros(12, dtype=int)) == []


def test_the_clearest_cut_comes_first() -> None:
    from cluster.refine import separated_cuts

    # two clusters, each two groups of four: one pair of groups ties at 1, the other at 3
    w = np.full((16, 16), 0.5)
    for g in range(4):
        w[4 * g:4 * g + 4, 4 * g:4 * g + 4] = 12.0
    w[:8, :8] = np.maximum(w[:8, :8], 1.0)
    w[8:, 8:] = np.maximum(w[8:, 8:], 3.0)
    np.fill_diagonal(w, 0)
    levels = separated_cuts(w, np.repeat([0, 1], 8))
    assert [len(set(level)) for level in levels] == [3, 4]
    first = levels[0]
    assert len(set(first[:8])) == 2 and len(set(first[8:])) == 1


def test_best_start_skips_the_leaf_level() -> None:
    m = planted_hierarchy((3, 3), 16, iterations=4, seed=3)
    h = averaged_edge_hierarchy(mean_weights(m), m.host_names, start="best", seed=2)
    assert len(h.levels[0]) == 3  # the 9 leaves are lost, as documented


def test_two_by_two_needs_post_optimal_merge() -> None:
    # 4 leaves in 2 halves: modularity prefers the 4 leaves, so the second level
    # exists only because the loops of collapsed clusters are weaker than Louvain's own.
    m = planted_hierarchy((2, 2), 16, iterations=4, seed=0)
    W = mean_weights(m)
    assert [len(lv) for lv in averaged_edge_hierarchy(W, m.host_names, seed=0).levels] == [4, 2]
    heavy = averaged_edge_hierarchy(W, m.host_names, loops=3.0, seed=0)
    assert [len(lv) for lv in heavy.levels] == [4]


def test_weak_cluster_stays_alone() -> None:
    # B1, B2 close (1/4), T far from both (1/64): level 2 must be {B1+B2}, {T}.
    rng = np.random.default_rng(0)
    lab = np.repeat([0, 1, 2], 16)
    aff = np.array([[1, 0.25, 1 / 64], [0.25, 1, 1 / 64], [1 / 64, 1 / 64, 1]])
    w = aff[lab][:, lab] * rng.lognormal(0, 0.3, (48, 48))
    w = np.triu(w, 1)
    w = w + w.T
    h = averaged_edge_hierarchy(w, seed=0)
    assert [len(lv) for lv in h.levels] == [3, 2]
    assert sorted(len(c.hosts) for c in h.levels[1]) == [16, 32]
    # with no loop at all, T cannot stay alone and everything merges
    assert averaged_edge_hierarchy(w, seed=0, loops=0.0).depth == 1


def test_hierarchy_structure_and_json_round_trip() -> None:
    m = planted_hierarchy((2, 3), 10, iterations=3, seed=1)
    h = averaged_edge_hierarchy(mean_weights(m), m.host_names, seed=1)
    for lower, upper in zip(h.levels, h.levels[1:]):
        for c in lower:
            parent = h.cluster(c.parent)
            assert set(c.hosts) <= set(parent.hosts) and c.id in parent.children
    for c in h.levels[-1]:
        assert c.parent is None
    assert all(c.weights for c in h.levels[0])
    back = Hierarchy.from_json(h.to_json())
    assert back.to_dict() == h.to_dict()
    assert back.params["linkage"] == "mean" and back.params["seed"] == 1   # the default


def test_hierarchy_rejects_inconsistent_levels() -> None:
    with pytest.raises(TomographyError, match="splits"):
        Hierarchy.from_partitions(["a", "b", "c"], [[0, 0, 1], [0, 1, 1]])
    with pytest.raises(TomographyError, match="not a hierarchy"):
        Hierarchy.from_json('{"levels": [{"clusters": []}]}')


def test_uneven_groups_merged_back_at_three_iterations() -> None:
    # At 3 iterations the noise cuts of the 96-host group are about as separate as
    # the shuffled copies' most mixed parts; their unions do not split, so they merge.
    m = planted_hierarchy((2, 3), [16, 96, 40, 64, 24, 80], iterations=3, noise=0.5, seed=0)
    h = averaged_edge_hierarchy(mean_weights(m), m.host_names, seed=0)
    assert len(h.levels[0]) == 6
    assert hierarchy_nmi(h, m.labels)["nmi"][0] == pytest.approx(1.0)


def test_clusters_that_exchanged_nothing_with_each_other_end_the_hierarchy() -> None:
    """Groups with no weight between them are the top level: nothing to merge them by."""
    import numpy as np

    from cluster.averaged_edge import averaged_edge_hierarchy

    W = np.zeros((9, 9))
    for g in range(3):
        W[3 * g:3 * g + 3, 3 * g:3 * g + 3] = 5.0
    np.fill_diagonal(W, 0)
    h = averaged_edge_hierarchy(W, seed=0)
    assert [len(level) for level in h.levels] == [3]
    assert sorted(map(len, (c.hosts for c in h.levels[0]))) == [3, 3, 3]
