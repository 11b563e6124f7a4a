"""The command line as a shell user expects: -q/-v everywhere, completion, the built-in
networks in --help, a topology file found again from anywhere."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.test_help import ALL
from tomography.cli import common, main
from tomography.model.scenarios import builtin_networks


def run(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        code = main([str(a) for a in argv])
    finally:
        common.verbosity = common.NORMAL
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("words,parser", ALL, ids=[" ".join(w) for w, _ in ALL])
def test_every_command_takes_quiet_and_verbose(words, parser) -> None:
    options = {o for a in parser._actions for o in a.option_strings}
    assert {"-q", "--quiet", "-v", "--verbose"} <= options, " ".join(words)


def test_quiet_keeps_results_and_errors_only_and_verbose_says_more(capsys,
                                                                   hierarchy_dataset) -> None:
    one = ("--iterations", "1")     # one iteration: a note that there is no confidence
    code, out, err = run(capsys, "hierarchy", hierarchy_dataset, *one)
    code_q, out_q, err_q = run(capsys, "hierarchy", hierarchy_dataset, *one, "--quiet")
    code_v, out_v, err_v = run(capsys, "-v", "hierarchy", hierarchy_dataset, *one)
    assert code == code_q == code_v == 0 and out == out_q == out_v
    assert err_q == "" and err.startswith("note: one iteration")   # notes go, results stay
    assert "read " in err_v and "Measurement(" in err_v and "tomography hierarchy:" in err_v
    code, _, err = run(capsys, "-q", "info", "/nonexistent")
    assert code == 2 and "no such dataset directory" in err      # errors stay
    code, _, err = run(capsys, "info", "/nonexistent", "--verbose")
    assert code == 2 and "Traceback" in err


def test_quiet_silences_progress(capsys, tmp_path: Path) -> None:
    code, _, err = run(capsys, "simulate", "tree-5", "-o", tmp_path / "s", "-n", "2",
                       "--size", "1MiB", "-q")
    assert code == 0 and err == ""
    code, _, err = run(capsys, "simulate", "tree-5", "-o", tmp_path / "t", "-n", "2",
                       "--size", "1MiB")
    assert code == 0 and "simulating tree-5: 2/2 iterations" in err


def test_completion_scripts_cover_every_command(capsys) -> None:
    commands = [w[0] for w, _ in ALL if len(w) == 1]
    for shell in ("bash", "zsh", "tcsh"):
        code, out, _ = run(capsys, "completion", shell)
        assert code == 0 and all(c in out for c in commands), shell
    if shutil.which("bash") is None:
        pytest.skip("no bash to run the script in")
    code, script, _ = run(capsys, "completion", "bash")
    words = ("source /dev/stdin; COMP_WORDS=(tomography measure bittorrent --until); "
             "COMP_CWORD=3; _shtab_tomography; echo ${COMPREPLY[@]}")
    done = subprocess.run(["bash", "-c", words], input=script, capture_output=True, text=True)
    assert done.stdout.split() == ["--until-converged"], done.stderr
    # a topology: the built-in networks by name (and files)
    words = ("source /dev/stdin; COMP_WORDS=(tomography simulate two-si); COMP_CWORD=2; "
             "_shtab_tomography; echo ${COMPREPLY[@]}")
    done = subprocess.run(["bash", "-c", words], input=script, capture_output=True, text=True,
                          cwd=Path(__file__).parent)
    assert set(done.stdout.split()) == {n for n in builtin_networks()
                                        if n.startswith("two-si")}, done.stderr


def test_simulate_help_lists_the_built_in_networks() -> None:
    simulate = dict((w, p) for w, p in ALL)[("simulate",)]
    text = " ".join(simulate.format_help().split())
    assert len(builtin_networks()) >= 10
    assert all(name in text for name in builtin_networks())


def test_a_topology_file_is_found_again_from_another_directory(capsys, tmp_path: Path,
                                                               monkeypatch) -> None:
    here = tmp_path / "here"
    here.mkdir()
    shutil.copy(Path(__file__).resolve().parents[1] / "tomography/model/scenarios/tree-5.yaml",
                here / "my-net.yaml")
    text = (here / "my-net.yaml").read_text().replace("name: tree-5", "name: my-net")
    (here / "my-net.yaml").write_text(text)
    monkeypatch.chdir(here)
    assert run(capsys, "simulate", "my-net.yaml", "-o", "run", "-n", "2", "--size",
               "1MiB")[0] == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    code, out, err = run(capsys, "export", here / "run", "--format", "gauge", "-o", "g.xml")
    assert code == 0, err
    assert (elsewhere / "g.xml").exists()
    from tomography.model.topology import read_topology

    assert os.path.isabs(read_topology(str(here / "my-net.yaml")).source)


def test_a_directory_that_is_no_dataset_is_called_so(capsys, tmp_path: Path) -> None:
    code, _, err = run(capsys, "hierarchy", tmp_path)
    assert code == 2 and "not a dataset directory: it has no meta.json and no hosts.csv" in err
