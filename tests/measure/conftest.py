"""Shared by the measure tests: the reason root-only tests skip."""

from __future__ import annotations

import os
import shutil

import pytest


def root_reason() -> str | None:
    """Why the root tests cannot run here, or None."""
    missing = [tool for tool in ("ip", "tc") if shutil.which(tool) is None]
    if missing:
        return f"needs {' and '.join(missing)} from iproute2 (apt-get install iproute2)"
    if os.geteuid() != 0:
        return "needs root: network namespaces and tc (run the tests as root)"
    return None


@pytest.fixture(scope="module")
def as_root() -> None:
    reason = root_reason()
    if reason:
        pytest.skip(reason)
