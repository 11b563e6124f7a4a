"""Constructed measurements shared by the cluster tests."""

from __future__ import annotations

import pandas as pd

from tomography.model.dataset import Measurement


def joined(first: Measurement, then: Measurement) -> Measurement:
    """``first``'s iterations, then ``then``'s (the same hosts), numbered on."""
    assert first.host_names == then.host_names
    shift = len(first.iteration_ids)
    return Measurement(meta=first.meta, hosts=first.hosts, transfers=pd.concat(
        [first.transfers, then.transfers.assign(iteration=then.transfers["iteration"] + shift)],
        ignore_index=True), iterations=pd.concat(
        [first.iterations, then.iterations.assign(iteration=then.iterations["iteration"] + shift)],
        ignore_index=True))
