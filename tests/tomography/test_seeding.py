"""Seeds are checked in one place: the :func:`random_state` decorator."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from cluster import louvain
from tomography.model.errors import ParameterError
from tomography.model.seeding import Seeded, random_state

ROOT = Path(__file__).resolve().parents[2]


def test_a_bad_seed_is_refused_before_any_work() -> None:
    calls = []

    @random_state
    def work(*, seed=0):
        calls.append(seed)

    for bad in (-1, 1.5, "7", True):
        with pytest.raises(ParameterError, match="seed must be a non-negative integer"):
            work(seed=bad)
    assert calls == []


def test_the_function_receives_the_generator_and_the_integer_to_record() -> None:
    @random_state
    def work(n, seed=3):
        return seed

    assert work(1).recorded == 3 and work(1, 5).recorded == 5 and work(1, seed=6).recorded == 6
    rng = np.random.default_rng(0)
    assert work(1, seed=rng) == Seeded(rng, None)
    fresh = work(1, seed=None)
    assert isinstance(fresh.recorded, int)   # a fresh seed is recorded, so the run repeats
    assert work(1, seed=fresh) is fresh      # handed on unchanged


def test_a_function_without_a_seed_is_not_decorated() -> None:
    with pytest.raises(TypeError, match="takes no 'seed'"):
        random_state(lambda x: x)


def test_the_algorithms_record_the_seed_they_were_given() -> None:
    w = np.array([[0, 5, 1, 0], [5, 0, 0, 1], [1, 0, 0, 5], [0, 1, 5, 0]], float)
    assert louvain(w, seed=11).seed == 11
    with pytest.raises(ParameterError, match="seed"):
        louvain(w, seed=-3)


def test_no_module_checks_a_seed_by_hand() -> None:
    """``check_seed`` is called by the decorator only: every other seed goes through it."""
    by_hand = []
    for package in ("tomography", "cluster", "measure", "visualize"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if path.name == "seeding.py":
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "check_seed":
                    by_hand.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not by_hand, f"seeds checked by hand (decorate with @random_state): {by_hand}"
