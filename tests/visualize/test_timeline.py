"""plot_timeline: from the trace of a real broadcast; a clear error without one."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from tomography.model.dataset import MeasurementWriter, read_measurement, read_trace
from tomography.model.errors import TomographyError
from visualize import plot_timeline

from tests.conftest import assert_trace_within_counts

from .helpers import assert_legible, points, saved


@pytest.mark.slow  # the traced fixture runs real libtorrent peers
def test_timeline_of_a_real_broadcast(traced, tmp_path) -> None:
    fig = plot_timeline(traced, bins=50)
    saved(fig, tmp_path / "timeline.png")
    info = fig.tomography_info
    trace = read_trace(traced)
    m = read_measurement(traced)
    assert info["iteration"] == 0 and info["shape"] == (4, 50)
    # the trace holds blocks written, as each pair's counts do
    assert info["blocks"] == len(trace)
    assert_trace_within_counts(trace, m.transfers)
    (image,) = fig.axes[0].get_images()
    data = np.asarray(image.get_array())
    assert data.shape == (4, 50)
    # every block counts once for its sender and once for its receiver
    assert np.isclose(data.sum() * info["bin_s"], 2 * len(trace))
    # a finish mark for each downloader, at its last received block
    root = m.iterations["root"].iloc[0]
    assert info["root"] == root
    marks = points(fig.axes[0], "finish")
    assert len(marks) == 3
    assert sorted(marks[:, 0]) == sorted(trace.groupby("receiver")["time_s"].max())
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert f"{root} (root)" in labels and len(labels) == 4
    assert "16 KiB" in fig.axes[-1].get_ylabel()
    _check_axes(fig)


@pytest.mark.slow  # the traced fixture runs real libtorrent peers
def test_peers_metric_and_measurement_input(traced) -> None:
    m = read_measurement(traced)
    fig = plot_timeline(m, trace=read_trace(traced), metric="peers", bins=20)
    (image,) = fig.axes[0].get_images()
    data = np.asarray(image.get_array())
    assert data.max() <= 3 and data.min() >= 0          # at most the 3 other peers
    with pytest.raises(TomographyError, match="no trace"):
        plot_timeline(m)
    with pytest.raises(TomographyError, match="iteration 5 has no trace"):
        plot_timeline(traced, iteration=5)


def test_a_dataset_without_trace_says_how_to_get_one(two_sites_path) -> None:
    with pytest.raises(TomographyError) as error:
        plot_timeline(two_sites_path)
    message = str(error.value)
    assert str(two_sites_path) in message
    assert "tomography measure bittorrent" in message and "--trace" in message
    assert "simulator" in message and "does not write one" in message


def _synthetic_trace(path, hosts: int, labelled: bool):
    """A traced broadcast among ``hosts`` hosts: 20 blocks to each from random senders."""
    rng = np.random.default_rng(0)
    names = [f"h{i:03}" for i in range(hosts)]
    table = [(h, "", f"site{i * 2 // hosts}/c{i * 4 // hosts}" if labelled else "")
             for i, h in enumerate(names)]
    writer = MeasurementWriter(path, {"method": "bittorrent"}, table)
    rows = sorted((float(rng.uniform(0, 5 + i / 10)), names[int(rng.integers(0, i))],
                   names[i], b, 0) for i in range(1, hosts) for b in range(20))
    writer.add_trace(0, rows)
    pairs = Counter((r[2], r[1]) for r in rows)
    writer.add_iteration(0, root=names[0], transfers=[(r, s, k) for (r, s), k in pairs.items()],
                         nbytes=20 * 16384)
    return path


def _check_axes(fig) -> list[str]:
    """Labels with units on every axis, a key for the marks, no text on another; y tick texts."""
    ax = fig.axes[0]
    assert ax.get_xlabel() == "time since the broadcast started (s)"
    assert ax.get_ylabel().startswith(("host", "true label"))
    bar = fig.axes[-1]
    assert "per second" in bar.get_ylabel() and "blocks" in bar.get_ylabel()
    assert all(t.get_text() for t in ax.get_xticklabels())
    ticks = [t.get_text() for t in ax.get_yticklabels()]
    assert ticks and all(ticks)
    (legend,) = [x for x in fig.legends + [ax.get_legend()] if x is not None]
    assert [t.get_text() for t in legend.get_texts()] == ["the host's last block received"]
    assert_legible(fig)
    return ticks


@pytest.mark.slow  # over 2 s
@pytest.mark.parametrize("hosts, labelled", [(24, True), (64, True), (64, False)])
def test_every_axis_says_what_it_shows(tmp_path, hosts: int, labelled: bool) -> None:
    fig = plot_timeline(_synthetic_trace(tmp_path / "run", hosts, labelled), bins=40)
    saved(fig, tmp_path / "timeline.png")
    ticks = _check_axes(fig)
    order = fig.tomography_info["order"]
    ax = fig.axes[0]
    if hosts == 24:       # every host named, its true label on the right
        assert fig.get_size_inches()[1] > 2.55        # grown to name them at 6 pt
        assert ticks == ["h000 (root)"] + order[1:]
        (right,) = ax.child_axes
        assert right.get_ylabel() == "true label"
        assert [t.get_text() for t in right.get_yticklabels()] == [
            "site0/c0", "site0/c1", "site1/c2", "site1/c3"]
    elif labelled:        # too many to name: the groups
        assert ticks == ["site0/c0", "site0/c1", "site1/c2", "site1/c3"]
        assert ax.get_ylabel() == "true label (64 hosts)"
    else:                 # too many to name, no groups: one host in k, said in the label
        step = int(ax.get_ylabel().split("one in ")[1].split()[0])
        assert ticks == [f"{h} (root)" if h == "h000" else h for h in order[::step]]
        assert step > 1 and len(ticks) >= 10
