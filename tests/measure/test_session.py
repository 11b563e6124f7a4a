"""The one run skeleton (measure/session.py): lock, resume, meta, end, summary."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from measure.preflight import HostCheck
from measure.session import Run, Summary
from tomography.model.dataset import MeasurementWriter, read_measurement
from tomography.model.dataset.lock import lock_holder
from tomography.model.errors import DatasetError

ROOT = Path(__file__).resolve().parents[2]
HOSTS = [("a", "10.0.0.1", ""), ("b", "10.0.0.2", "")]


class Agents:
    """Stands in for an AgentGroup: only whether the run closed it counts here."""

    def __init__(self, fail: bool = False) -> None:
        self.closed, self.fail = False, fail

    def close(self) -> None:
        self.closed = True
        if self.fail:
            raise RuntimeError("agents would not stop")


def _checks() -> list[HostCheck]:
    return [HostCheck(host="a", address="10.0.0.1", ok=True),
            HostCheck(host="b", address="10.0.0.2", ok=False, reason="no answer")]


def _create(path: Path):
    return lambda records: MeasurementWriter(path, {"method": "synthetic", **records}, HOSTS)


def test_a_new_run_records_its_agents_and_ends_with_everything_closed(tmp_path: Path) -> None:
    out = tmp_path / "d"
    agents = Agents()
    with Run(out, resume=True, overwrite=False) as run:    # nothing there: a new dataset
        assert not run.resuming and lock_holder(out) is not None
        run.agents = agents
        writer = run.begin(_checks(), "local", _create(out))
        writer.add_iteration(0, root="a", transfers=[("b", "a", 1)], nbytes=1)
    assert agents.closed and lock_holder(out) is None
    meta = read_measurement(out).meta
    assert meta["launcher"] == "local" and list(meta["hosts"]) == ["a"]
    assert meta["skipped_hosts"] == {"b": "no answer"}


def test_a_resumed_run_appends_its_session_and_a_dataset_in_the_way_is_refused(
        tmp_path: Path) -> None:
    out = tmp_path / "d"
    with Run(out, resume=False, overwrite=False) as run:
        run.begin(_checks(), "local", _create(out)).add_iteration(0, root="a", transfers=[("b", "a", 1)],
                                                                  nbytes=1)
    with pytest.raises(DatasetError, match="continue it with --resume"):
        Run(out, resume=False, overwrite=False)
    assert lock_holder(out) is None               # the refusal let the lock go
    with Run(out, resume=True, overwrite=False) as run:
        assert run.resuming
        run.writer = MeasurementWriter.reopen(out)
        run.begin(_checks(), "ssh", _create(out), kept=1)
    resumes = read_measurement(out).meta["resumes"]
    assert [(r["kept"], r["launcher"], r["skipped_hosts"]) for r in resumes] == [
        (1, "ssh", {"b": "no answer"})]
    assert {"time", "hosts", "software"} <= set(resumes[0])


def test_the_lock_goes_even_when_the_agents_fail_to_stop(tmp_path: Path) -> None:
    out = tmp_path / "d"
    with pytest.raises(RuntimeError, match="would not stop"):
        with Run(out, resume=False, overwrite=False) as run:
            run.agents = Agents(fail=True)
            run.begin(_checks(), "local", _create(out))
    assert lock_holder(out) is None


def test_a_summary_says_what_was_left_out_kept_and_done(tmp_path: Path) -> None:
    class Tests(Summary):
        UNIT = "test"

        def count(self) -> int:
            return 4

        def details(self) -> list[str]:
            return ["a -> b failed twice"]

    text = Tests(path=tmp_path, checks=_checks(), kept=2, seconds=12.4).describe()
    assert text.splitlines() == [
        "left out after the preflight: b (no answer)",
        f"4 test(s) run in 12 s after 2 already on disk; dataset in {tmp_path}",
        "a -> b failed twice"]


def test_every_runner_goes_through_the_skeleton() -> None:
    """No runner takes a dataset's lock or refuses a dataset in the way by itself."""
    by_hand = []
    for path in sorted((ROOT / "measure").glob("*.py")):
        if path.name == "session.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") in (
                    "DatasetLock", "refuse_existing"):
                by_hand.append(f"{path.name}:{node.lineno} {node.func.id}")
    assert not by_hand, by_hand
    runners = {"coordinator.py": "run_broadcasts", "mesh.py": "run_mesh",
               "multicast.py": "run_multicasts"}
    for name, function in runners.items():
        tree = ast.parse((ROOT / "measure" / name).read_text(encoding="utf-8"))
        body = next(n for n in tree.body if getattr(n, "name", "") == function)
        assert any(getattr(c.func, "id", "") == "Run" for c in ast.walk(body)
                   if isinstance(c, ast.Call)), f"{function} does not use the run skeleton"
