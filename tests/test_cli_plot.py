"""``tomography plot``: every kind from a small simulated dataset, a traced real run, errors."""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib.image
import pytest

from tomography.cli import build_parser, main
from tomography.cli.plot import _figure
from tomography.model.dataset import read_measurement, read_trace

from .visualize.helpers import assert_legible


def run(capsys, *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    """The simulator on two-sites-demo (20 hosts), 3 iterations of 4 MiB, written by the CLI."""
    out = tmp_path_factory.mktemp("plot") / "two-sites"
    assert main(["simulate", "two-sites-demo", "-n", "3", "--size", "4MiB", "-o", str(out)]) == 0
    return out


@pytest.mark.parametrize("kind, extra, words", [
    ("layout", (), ["Kamada-Kawai layout by networkx", "20 hosts"]),
    ("heatmap", ("--weights", "w", "--level", "2"), ["20 x 20 hosts"]),
    ("hasse", (), ["levels"]),
    ("tree", (), ["clusters"]),
    ("convergence", ("--bars",), ["NMI after 1..3 iterations"]),
    ("edge", ("--edge", "e1-00", "w1-00"), ["edge e1-00 - w1-00 over 3 iterations"]),
    ("distribution", (), ["1 dataset(s)"]),
])
def test_every_kind_writes_a_png(capsys, dataset: Path, tmp_path: Path, kind: str,
                                 extra: tuple, words: list[str]) -> None:
    out = tmp_path / f"{kind}.png"
    code, _, err = run(capsys, "plot", dataset, "--kind", kind, "-o", out, "--dpi", 100, *extra)
    assert code == 0, err
    assert f"-> {out}" in err and all(w in err for w in words), err
    image = matplotlib.image.imread(out)
    assert image.shape[1] > 300 and image.shape[0] > 100      # about 3.4 in wide at 100 dpi
    assert image[..., :3].std() > 0.05


def test_formats_from_the_suffix(capsys, dataset: Path, tmp_path: Path) -> None:
    code, _, err = run(capsys, "plot", dataset, "--kind", "hasse", "-o", tmp_path / "h.pdf")
    assert code == 0, err
    assert (tmp_path / "h.pdf").read_bytes().startswith(b"%PDF")
    code, _, err = run(capsys, "plot", dataset, "--kind", "tree", "--width", "double",
                       "-o", tmp_path / "sub" / "t.svg")
    assert code == 0, err
    svg = (tmp_path / "sub" / "t.svg").read_text()
    width = float(re.search(r'<svg[^>]*width="([0-9.]+)pt"', svg).group(1))
    assert 400 < width <= 504                               # 7 in = 504 pt, cropped tight
    code, _, err = run(capsys, "plot", dataset, "--kind", "tree", "-o", tmp_path / "t.jpg")
    assert code == 2 and "use .png, .svg or .pdf" in err


def test_distribution_and_convergence_compare(capsys, dataset: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    assert main(["simulate", "two-sites-demo", "-n", "3", "--size", "4MiB", "--seed", "1",
                 "-o", str(other)]) == 0
    code, _, err = run(capsys, "plot", dataset, "--kind", "distribution", "--compare", other,
                       "--names", "seed 0", "seed 1", "-o", tmp_path / "d.png")
    assert code == 0, err
    assert "2 dataset(s), Kolmogorov-Smirnov D = " in err
    code, _, err = run(capsys, "plot", dataset, "--kind", "convergence", "--compare", other,
                       "-o", tmp_path / "c.png")
    assert code == 0, err
    code, _, err = run(capsys, "plot", dataset, "--kind", "distribution", "--compare", other,
                       "--names", "just one", "-o", tmp_path / "d.png")
    assert code == 2 and "--names gives 1 names for 2 datasets" in err


@pytest.mark.slow  # real libtorrent peers
def test_timeline_from_a_traced_real_run(capsys, dataset: Path, tmp_path: Path) -> None:
    traced = tmp_path / "bt"
    code, _, err = run(capsys, "measure", "bittorrent", "--local", 4, "-n", 1, "--size", "1MiB",
                       "--trace", "-o", traced)
    assert code == 0, err
    out = tmp_path / "timeline.png"
    code, _, err = run(capsys, "plot", traced, "--kind", "timeline", "--iteration", 0, "-o", out)
    assert code == 0, err
    blocks = len(read_trace(traced))
    assert blocks > 0 and f"iteration 0, {blocks} blocks traced, 4 hosts" in err
    assert matplotlib.image.imread(out).shape[1] > 500
    # the simulator writes no trace: the error says how to get one
    code, _, err = run(capsys, "plot", dataset, "--kind", "timeline", "-o", out)
    assert code == 2 and "no trace" in err and "--trace" in err and "simulator" in err


def test_errors(capsys, dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "x.png"
    code, _, err = run(capsys, "plot", dataset, "--kind", "edge", "-o", out)
    assert code == 2 and "--kind edge needs --edge A B" in err
    code, _, err = run(capsys, "plot", dataset, "--kind", "edge", "--edge", "e1-00", "nope",
                       "-o", out)
    assert code == 2 and "no host 'nope'" in err
    code, _, err = run(capsys, "plot", dataset, "--kind", "heatmap", "--iteration", 9, "-o", out)
    assert code == 2 and "no iteration 9" in err
    code, _, err = run(capsys, "plot", tmp_path / "missing", "--kind", "hasse", "-o", out)
    assert code == 2 and "missing" in err
    assert not out.exists()


def test_help_lists_kinds_and_examples(capsys) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["plot", "--help"])
    text = capsys.readouterr().out
    for kind in ("layout", "heatmap", "timeline", "hasse", "tree", "convergence", "edge",
                 "distribution"):
        assert f"  {kind} " in text
    assert "examples:" in text and "tomography plot run --kind layout -o layout.png" in text


@pytest.mark.slow  # over 2 s
def test_hasse_of_n2_fits_the_page(capsys, tmp_path: Path) -> None:
    """The built-in N2 (576 hosts), 2 short broadcasts: --start finest finds tens of clusters.

    Before, the picture kept 7 in only by shrinking its font to 4 pt, boxes on
    each other; now it is at most a page wide, legible at 6 pt or more.
    """
    data = tmp_path / "n2"
    assert main(["simulate", "N2", "-n", "2", "--size", "1MiB", "--seed", "1",
                 "-o", str(data)]) == 0
    for start in ("refined", "finest"):
        out = tmp_path / f"hasse-{start}.png"
        argv = ["plot", str(data), "--kind", "hasse", "--start", start, "--all-levels",
                "-o", str(out)]
        code, _, err = run(capsys, *argv, "--dpi", 100)
        assert code == 0, err
        width = float(re.search(r"; ([0-9.]+) x [0-9.]+ in\)", err).group(1))
        assert width <= 7.0 and matplotlib.image.imread(out).shape[1] <= 7.5 * 100
        fig, _ = _figure(build_parser().parse_args(argv))      # the figure the file shows
        assert_legible(fig)
    assert fig.tomography_info["rows"] > 1                    # finest: level 1 wrapped
