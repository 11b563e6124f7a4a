"""The exporters' package: every name it lists resolves, and importing it stays cheap."""

from __future__ import annotations

import subprocess
import sys

import pytest

import tomography.export as export


@pytest.mark.parametrize("name", export.__all__)
def test_every_listed_name_resolves(name):
    value = getattr(export, name)
    assert value.__module__.startswith("tomography.export.")
    assert name in dir(export)


def test_unknown_name():
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        export.nope  # noqa: B018


@pytest.mark.slow  # over 2 s
def test_import_does_not_load_lxml():
    code = ("import sys, tomography.export as e; print('lxml' in sys.modules); "
            "e.read_gauge; print('lxml' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True"]
