"""The main job end to end: ``tomography demo`` on the emulated testbed (root, about 2 min)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.mark.root
@pytest.mark.slow
def test_the_demo_plans_over_figures_it_measured_and_delivers_near_them(as_root, capsys,
                                                                        tmp_path: Path) -> None:
    """Real broadcasts until the stop rule holds, the figures of the clusters found
    measured, multicasts planned over them: every plan's prediction a forecast from
    measured figures, and the multicasts within a third of it (the demo's network: one
    10 Mbit/s link between the sites, which every plan crosses)."""
    from tomography.cli import main
    from tomography.model.dataset.multicast import read_summary

    out = tmp_path / "demo"
    assert main(["demo", "-o", str(out), "-n", "8"]) == 0
    said = capsys.readouterr().out
    assert "Hasse diagram" in said and "testbed removed" in said
    assert (out / "dataset" / "figures" / "figures.csv").is_file()
    table = read_summary(out / "multicast")[1].set_index("method")
    planned = table.drop(index="bittorrent")
    assert set(planned.index) == {"balanced", "chain-clusters", "chain-hosts"}
    assert (planned["basis"] == "measured").all() and (planned["complete"] == 1).all()
    assert planned["ratio"].between(0.67, 1.33).all(), planned[["predicted", "achieved"]]
    assert (out / "report.html").is_file()
