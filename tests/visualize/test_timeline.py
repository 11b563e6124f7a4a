"""plot_timeline: from the trace of a real broadcast; a clear error without one."""

from __future__ import annotations

import numpy as np
import pytest

from tomography.dataset import read_measurement, read_trace
from tomography.errors import TomographyError
from visualize import plot_timeline

from .helpers import points, saved


def test_timeline_of_a_real_broadcast(traced, tmp_path) -> None:
    fig = plot_timeline(traced, bins=50)
    saved(fig, tmp_path / "timeline.png")
    info = fig.tomography_info
    trace = read_trace(traced)
    m = read_measurement(traced)
    assert info["iteration"] == 0 and info["shape"] == (4, 50)
    assert info["blocks"] == len(trace) == m.transfers["blocks"].sum()
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
