"""``tomography report``: the one-page HTML report, its content and how a real browser shows it."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tomography.cli import main
from tomography.model.dataset import write_measurement
from tomography.model.errors import TomographyError
from tomography.report import find_multicasts, report_html, write_report
from tomography.model.synthetic import planted_hierarchy

ROOT = Path(__file__).resolve().parents[1]
SCREENSHOTS = ROOT / "out" / "test-report"
"""Where the browser test copies its screenshots, to be looked at (``/out/`` is ignored by git)."""
CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")


def probe_dataset(path: Path, groups: int = 2, per_group: int = 5, udp: bool = False) -> Path:
    """An iperf3 mesh of ``groups`` x ``per_group`` hosts: 900 Mbit/s inside a group,
    100 across, two repeats, three failed tests (one pair with no success); with ``udp``,
    UDP tests of 5 Gbit/s (the rate asked for) between the groups as well."""
    m = planted_hierarchy((groups,), per_group, iterations=1, seed=0)
    hosts, labels = m.host_names, m.labels
    rng = np.random.default_rng(0)
    rows = []
    for repeat in range(2):
        for src in hosts:
            for dst in hosts:
                if src == dst:
                    continue
                rate = (900e6 if labels[src] == labels[dst] else 100e6) * rng.uniform(0.9, 1.1)
                rows.append({"src": src, "dst": dst, "tool": "iperf3", "bits_per_second": rate,
                             "streams": 1, "concurrent": 1, "duration_s": 2.0,
                             "repeat": repeat, "error": ""})
    for i, (src, dst, repeat) in enumerate([(hosts[0], hosts[1], 0), (hosts[0], hosts[1], 1),
                                            (hosts[2], hosts[-1], 1)]):
        for row in rows:
            if (row["src"], row["dst"], row["repeat"]) == (src, dst, repeat):
                row.update(bits_per_second=np.nan, error="connection refused")
    m.meta = {**m.meta, "method": "iperf3", "launcher": "local",
              "params": {"seed": 3, "duration_s": 2.0, "repeats": 2}}
    m.transfers, m.iterations = m.transfers.iloc[:0], m.iterations.iloc[:0]
    if udp:
        rows = [{**row, "protocol": "tcp"} for row in rows] + [
            {"src": src, "dst": dst, "tool": "iperf3", "protocol": "udp",
             "bits_per_second": 5e9, "streams": 1, "concurrent": 1, "duration_s": 2.0,
             "repeat": 0, "error": ""}
            for src in hosts for dst in hosts if labels[src] != labels[dst]]
    m.probes = pd.DataFrame(rows)
    write_measurement(m, path)
    return path


def multicast_run(path: Path) -> Path:
    """A multicast run's directory with two methods (as ``tomography multicast -o`` writes)."""
    from tomography.model.dataset.multicast import (FORMAT, MULTICAST_COLUMNS, RECEIVER_COLUMNS,
                                                    STREAM_COLUMNS)

    path.mkdir(parents=True)
    hosts = [f"h{i:03d}" for i in range(10)]
    methods = ["balanced", "chain-hosts"]
    (path / "meta.json").write_text(json.dumps({
        "format": FORMAT, "launcher": "local", "created": "2026-01-01T00:00:00+00:00",
        "hosts": {h: {} for h in hosts}, "methods": methods,
        "params": {"root": "h000", "bytes": 2**22}}))
    (path / "hosts.csv").write_text("host,address,label\n" + "".join(
        f"{h},127.0.0.{i + 1},\n" for i, h in enumerate(hosts)))
    runs = pd.DataFrame([{"run": f"{method}-0", "method": method, "repeat": 0, "root": "h000",
                          "bytes": 2**22, "streams": 1, "pacing": "kernel",
                          "predicted_Bps": 5e6, "achieved_Bps": rate, "completion_s": 1.0,
                          "complete": True, "receivers_complete": 9, "started": "", "note": ""}
                         for method, rate in zip(methods, (4.5e6, 2e6))],
                        columns=MULTICAST_COLUMNS)
    runs.to_csv(path / "multicasts.csv", index=False)
    (path / "receivers.csv").write_text(",".join(RECEIVER_COLUMNS) + "\n")
    (path / "streams.csv").write_text(",".join(STREAM_COLUMNS) + "\n")
    return path


@pytest.fixture(scope="module")
def planted(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("report") / "planted"
    write_measurement(planted_hierarchy((2, 2), 4, iterations=3, seed=1), path)
    return path


@pytest.fixture(scope="module")
def probes(tmp_path_factory) -> Path:
    return probe_dataset(tmp_path_factory.mktemp("report") / "mesh")


def _self_contained(page: str) -> None:
    loads = re.findall(r'(?:src|href)\s*=\s*"([^"]*)"', page)
    assert loads, "the page loads nothing?"
    remote = [x for x in loads if not (x.startswith("data:") or x.startswith("#"))]
    assert remote == []
    assert "@import" not in page and "url(" not in page
    # its scripts are inline and fetch nothing
    assert not re.search(r"<script[^>]*\bsrc\s*=", page)
    for call in ("fetch(", "XMLHttpRequest", "import(", "http://", "https://"):
        assert call not in page, call


# --------------------------------------------------------------------------- content, no browser

@pytest.mark.slow   # 4 s: the stop rule replayed, the convergence, the figures
def test_broadcast_report_sections(planted, tmp_path):
    r = write_report(planted, tmp_path / "run.html", resamples=2, seed=0)
    page = r.path.read_text(encoding="utf-8")
    assert r.sections == ["measured", "heatmap", "hosts", "clusters", "hierarchy", "tree",
                          "convergence", "accuracy"]
    for sid in r.sections:
        assert f'<section id="{sid}">' in page and f'href="#{sid}"' in page
    _self_contained(page)
    assert page.count('<canvas id="heatmap-canvas"') == 1        # the heat map, drawn in place
    assert page.count("data:image/png;base64,") == 0
    assert page.count("data:image/svg+xml;base64,") == 3        # Hasse, tree, convergence
    assert "Verdict: the stop rule" in page and "synthetic" in page
    assert "confidence" in page and 'id="probes"' not in page and 'id="multicast"' not in page
    assert "apart (a separation of at least 1.4)" in page     # synthetic data: not a swarm's line


@pytest.mark.slow
def test_truth_only_when_there_is_one(planted, tmp_path):
    page = write_report(planted, tmp_path / "a.html", truth=None, resamples=0).path.read_text()
    assert 'id="accuracy"' not in page and "no ground truth" in page
    # --resamples 0: no confidence, so no stop rule (it decides on confidences), said once
    assert 'id="convergence"' in page and "Verdict" not in page
    assert page.count("The stop rule is not replayed") == 1 and "settled" not in page


def test_probe_report(probes, tmp_path):
    r = write_report(probes, tmp_path / "mesh.html")
    page = r.path.read_text(encoding="utf-8")
    assert "probes" in r.sections and "heatmap" in r.sections and "accuracy" in r.sections
    _self_contained(page)
    assert "iperf3" in page and "connection refused" in page and 'class="bad"' in page
    assert "1 pair(s) with no successful test" in page and "3 failed test(s)" in page
    assert "no stop rule to replay" in page
    assert "Heat map of w_n" not in page and "Bandwidth between hosts" in page


NO_CONFIDENCE = ("no confidence: a probe dataset's repeats are not resampled (confidence "
                 "needs two or more broadcast iterations)")


def _section(page: str, sid: str) -> str:
    return re.search(rf'<section id="{sid}">.*?</section>', page, re.S).group(0)


@pytest.mark.slow   # 2 s
def test_probe_report_says_once_why_there_is_no_confidence(probes, tmp_path):
    page = write_report(probes, tmp_path / "mesh.html").path.read_text(encoding="utf-8")
    assert page.count(html_text(NO_CONFIDENCE)) == 1
    assert ">None<" not in page and "n/a" not in page
    clusters, hierarchy, tree = (_section(page, s) for s in ("clusters", "hierarchy", "tree"))
    assert '<th class="num">confidence</th>' in clusters         # the column stays, dashed
    assert clusters.count('<td class="num">\u2013</td>') == 2    # one per cluster
    assert re.search(r"<td class=\"num\">\u2013</td><td>\u2013</td>"   # confidence, supported,
                     r"<td class=\"num\">\u2013</td></tr>", hierarchy)    # separation
    assert "w_n" not in tree and "the measured bandwidth summed over the host pairs" in tree
    assert tree.endswith('<td class="num">\u2013</td></tr>\n</tbody></table></div>\n</section>')


def test_probe_report_meta_leaves_out_empty_values_and_summarises_hosts(tmp_path):
    data = probe_dataset(tmp_path / "mesh")
    meta = json.loads((data / "meta.json").read_text())
    hosts = sorted(pd.read_csv(data / "hosts.csv")["host"])
    meta.update(topology=None, skipped_hosts={}, hosts={
        h: {"address": "127.0.0.1", "hostname": "box", "cpus": 2, "toolkit": "0.1.0",
            "libtorrent": "", "python": "3.11.7", "clock_offset_s": -2.07e-05 * (i % 2),
            "clock_rtt_s": 1e-4} for i, h in enumerate(hosts)},
        tools={h: {"iperf3": "3.12"} for h in hosts})
    (data / "meta.json").write_text(json.dumps(meta))
    probes = pd.read_csv(data / "probes.csv")
    probes["retransmits"] = [np.nan if i == 0 else 2 for i in range(len(probes))]
    probes.to_csv(data / "probes.csv", index=False)
    page = write_report(data, tmp_path / "mesh.html").path.read_text(encoding="utf-8")
    measured = _section(page, "measured")
    for gone in ("block_size", ">topology<", "skipped", "clock_offset_s", "h000.", "libtorrent:",
                 "None", "null"):
        assert gone not in measured, gone
    assert "clock offsets: max |offset| 21 \u00b5s over 10 hosts" in measured
    assert "python 3.11.7 on every host" in measured and "iperf3 3.12 on every host" in measured
    table = _section(page, "probes")
    assert '<th class="num">retransmits</th>' in table
    assert '<td class="num">2</td>' in table and "2.000</td>" not in table.split("<tbody>")[0]
    assert re.search(r'<td class="num">2</td><td>(connection refused)?</td></tr>', table)


def test_one_cluster_has_no_tree_to_draw(tmp_path):
    data = probe_dataset(tmp_path / "one", groups=1, per_group=4)
    page = write_report(data, tmp_path / "one.html").path.read_text(encoding="utf-8")
    tree = _section(page, "tree")
    assert "one cluster (4 hosts, level 1 of the hierarchy): no tree to draw" in tree
    assert "maximum spanning tree" not in tree and "<table" not in tree


@pytest.mark.slow   # 5 s: four iterations, the stop rule and the convergence
def test_convergence_numbers_the_levels_as_found_and_maps_the_last_row(tmp_path):
    import base64

    from tomography.pipeline import analyze

    a = analyze(planted_hierarchy((3, 3), 4, iterations=4, seed=0), truth="labels", seed=0)
    assert [len(level) for level in a.hierarchy.levels] == [9, 3]      # 2 of 4 levels found
    page = report_html(a)
    section = _section(page, "convergence")
    assert "levels as found at each n, unsupported ones included" in section
    assert "<th class=\"num\">levels found</th>" in section
    assert "found level 4 NMI" in section and "level_4_nmi" not in section
    assert ("last row, n = 4: found level 1 is level 1 (9 clusters); found level 3 is level 2 "
            "(3 clusters) of the Hasse diagram and the Accuracy table; found level 2 "
            "(8 clusters), found level 4 (2 clusters) are unsupported") in section
    svg = base64.b64decode(re.search(r'data:image/svg\+xml;base64,([^"]+)" alt="convergence"',
                                     section).group(1)).decode()
    assert "<!-- found level 4 -->" in svg and "<!-- hierarchy level" not in svg   # the legend
    accuracy = _section(page, "accuracy")
    assert "<th class=\"num\">truth_<wbr>depth</th>" in accuracy


def html_text(text: str) -> str:
    import html

    return html.escape(text, quote=True)


@pytest.mark.slow   # 3 s: two datasets, two reports
def test_udp_tests_are_listed_but_never_coloured_as_bandwidth(tmp_path):
    tcp = write_report(probe_dataset(tmp_path / "tcp"), tmp_path / "tcp.html").path.read_text()
    page = write_report(probe_dataset(tmp_path / "udp", udp=True),
                        tmp_path / "udp.html").path.read_text()
    assert "50 UDP tests kept apart (not bandwidths)" in page
    assert "<th>protocol</th>" in page and "<td>udp</td>" in page
    caption = re.compile(r'data-figure="probe grid".*?<figcaption>([^<]+)</figcaption>', re.S)
    assert caption.search(page).group(1) == caption.search(tcp).group(1)
    assert "90 ordered pairs measured" in caption.search(page).group(1)
    clusters = re.compile(r'<section id="clusters">.*?</section>', re.S)
    assert clusters.search(page).group(0) == clusters.search(tcp).group(0)
    from tomography.model.dataset import read_measurement
    from visualize.probe_grid import probe_grid

    hosts = read_measurement(tmp_path / "udp").host_names
    with_udp = probe_grid(read_measurement(tmp_path / "udp").probes, hosts)
    without = probe_grid(read_measurement(tmp_path / "tcp").probes, hosts)
    assert np.nanmax(with_udp[0]) < 1000   # no cell shows the 5 Gbit/s asked of UDP
    np.testing.assert_array_equal(with_udp[0], without[0])


@pytest.mark.slow
def test_multicast_table_beside_the_dataset(tmp_path):
    data = tmp_path / "demo" / "dataset"
    write_measurement(planted_hierarchy((2,), 4, iterations=2, seed=0), data)
    assert find_multicasts(data) is None
    multicast_run(tmp_path / "demo" / "multicast")
    assert find_multicasts(data) == (tmp_path / "demo" / "multicast").resolve()
    r = write_report(data, tmp_path / "r.html", resamples=0)
    page = r.path.read_text()
    assert r.sections[-1] == "multicast" and "chain-hosts" in page and "balanced" in page
    assert "<title>demo:" in main_title(tmp_path, data)
    page = write_report(data, tmp_path / "r2.html", multicast=False, resamples=0).path.read_text()
    assert 'id="multicast"' not in page


def main_title(tmp_path: Path, data: Path) -> str:
    """The page of ``tomography report`` (titled after ``demo`` for ``demo/dataset``)."""
    assert main(["report", str(data), "-o", str(tmp_path / "cli.html"), "--resamples", "0",
                 "--max-rows", "1"]) == 0
    page = (tmp_path / "cli.html").read_text()
    assert "the first 1 of 2 methods are shown" in page
    return page


def test_bad_input_one_line(tmp_path, capsys):
    assert main(["report", str(tmp_path), "-o", str(tmp_path / "x.html")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "meta.json" in err[0]
    data = tmp_path / "d"
    write_measurement(planted_hierarchy((2,), 4, iterations=2, seed=0), data)
    bad = tmp_path / "mc"
    bad.mkdir()
    (bad / "meta.json").write_text('{"format": "tomography-multicast/1"}')
    (bad / "multicasts.csv").write_text("run,method\nx,y\n")
    assert main(["report", str(data), "-o", str(tmp_path / "x.html"), "--multicast",
                 str(bad), "--resamples", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "mc/meta.json" in err[0] and "params" in err[0]
    with pytest.raises(TomographyError, match="max_rows"):
        report_html(__import__("tomography.pipeline").pipeline.analyze(data, resamples=0),
                    max_rows=0)


# --------------------------------------------------------------------------- a real browser

def _browser():
    """A headless Debian chromium driven by selenium, or a skip saying what is missing."""
    missing = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not p.exists()]
    if missing:
        pytest.skip(f"no headless browser: {', '.join(missing)} missing (scripts/setup.sh "
                    "installs Debian's chromium and chromium-driver)")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip("selenium is not installed (pip install -e '.[test]')")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--hide-scrollbars", "--window-size=1200,1600"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)


FIGURES_JS = """
return Array.from(document.images).map(img => {
  const r = img.getBoundingClientRect();
  return {name: img.dataset.figure, complete: img.complete, natural: img.naturalWidth,
          naturalHeight: img.naturalHeight, width: r.width, height: r.height,
          bytes: img.src.length};
});"""


HEATMAP_JS = """
const c = document.getElementById('heatmap-canvas');
const r = c.getBoundingClientRect();
const pixel = c.getContext('2d').getImageData(c.width - 20, c.height - 20, 1, 1).data;
return {figure: c.closest('figure').dataset.figure, width: r.width, height: r.height,
        painted: pixel[3] === 255};"""


OVERFLOW_JS = """
return {page: Math.max(0, document.documentElement.scrollWidth - window.innerWidth),
        boxes: Array.from(document.querySelectorAll('div.wide'))
                    .filter(d => d.scrollWidth > d.clientWidth + 1)
                    .map(d => d.closest('section').id)};"""


@pytest.fixture(scope="module")
def simulated(tmp_path_factory) -> Path:
    from measure.simulator import simulate

    path = tmp_path_factory.mktemp("report") / "sim"
    simulate("two-sites-demo", path, iterations=4, file_size="8MiB", seed=0)
    return path


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["bittorrent", "probes"])
def test_report_in_headless_chromium(kind, simulated, probes, tmp_path):
    driver = _browser()
    data = simulated if kind == "bittorrent" else probes
    page = tmp_path / f"{kind}.html"
    assert main(["report", str(data), "-o", str(page)]) == 0
    try:
        driver.get(page.as_uri())
        assert driver.title.endswith("bandwidth tomography report")
        figures = driver.execute_script(FIGURES_JS)
        heatmap = driver.execute_script(HEATMAP_JS)
        sections = driver.execute_script(
            "return Array.from(document.querySelectorAll('section')).map(s => s.id)")
        overflow = driver.execute_script(OVERFLOW_JS)
        shot = tmp_path / f"{kind}.png"
        driver.save_screenshot(str(shot))
        log = driver.get_log("browser")
    finally:
        driver.quit()
    errors = [e for e in log if e["level"] in ("SEVERE", "ERROR")]
    assert errors == [], errors
    expected = {"hasse", "tree", *(["convergence"] if kind == "bittorrent" else [])}
    assert {f["name"] for f in figures} == expected
    assert heatmap["figure"] == ("heatmap" if kind == "bittorrent" else "probe grid")
    assert heatmap["width"] > 400 and heatmap["height"] > 400 and heatmap["painted"], heatmap
    for f in figures:
        assert f["complete"] and f["natural"] > 50 and f["naturalHeight"] > 50, f
        assert f["width"] > 100 and f["height"] > 50 and f["bytes"] > 1000, f
    # at 1200 px every table fits (no column hidden behind a scroll bar), nor does the page scroll
    assert overflow == {"page": 0, "boxes": []}, overflow
    assert "measured" in sections and "tree" in sections
    assert ("probes" in sections) == (kind == "probes")
    assert shot.stat().st_size > 10_000
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    shutil.copy(shot, SCREENSHOTS / shot.name)
    print(f"screenshot: {SCREENSHOTS / shot.name}")


FIND_JS = """
const box = document.getElementById('host-search');
box.value = arguments[0];
box.dispatchEvent(new Event('input'));
const shown = Array.from(document.querySelectorAll('#host-table tbody tr'))
                   .filter(r => !r.hidden);
return {count: document.getElementById('host-count').textContent,
        shown: shown.map(r => r.cells[0].textContent),
        cells: shown.map(r => Array.from(r.cells).map(c => c.textContent))};"""

POINT_JS = """
const c = document.getElementById('heatmap-canvas'), spec = JSON.parse(
    document.getElementById('heatmap-data').textContent);
const row = window.tomographyMark(arguments[0]);
const r = c.getBoundingClientRect(), scale = c.width / r.width;
const margin = Number(c.dataset.margin), cell = Number(c.dataset.cell);
const x = r.left + (margin + (spec.n - 0.5) * cell) / scale;
const y = r.top + (margin + (row + 0.5) * cell) / scale;
c.dispatchEvent(new MouseEvent('mousemove', {clientX: x, clientY: y, bubbles: true}));
const tip = document.getElementById('heatmap-tip');
return {row: row, tip: tip.textContent, hidden: tip.hidden, unit: spec.unit, block: spec.block};"""


@pytest.mark.slow   # a 1024-host analysis and a browser
@pytest.mark.parametrize("hosts", [128, 1024])
def test_a_named_host_is_found_on_a_large_report(hosts, tmp_path):
    driver = _browser()
    branching, size = ((2, 4), 16) if hosts == 128 else ((4, 4), 64)
    m = planted_hierarchy(branching, size, iterations=4, seed=5)
    m.iterations["duration_s"] = 10.0          # durations: the heat map in Mbit/s
    write_measurement(m, tmp_path / "data")
    page = tmp_path / f"hosts-{hosts}.html"
    assert main(["report", str(tmp_path / "data"), "-o", str(page), "-q"]) == 0
    text = page.read_text(encoding="utf-8")
    assert all(f"<td>{h}</td>" in text for h in m.host_names)   # every host is on the page
    _self_contained(text)
    wanted = m.host_names[hosts // 2 + 3]
    try:
        driver.get(page.as_uri())
        by_cluster = driver.execute_script(FIND_JS, "L1C1")   # a cluster id: its cells alone
        found = driver.execute_script(FIND_JS, wanted)
        pointed = driver.execute_script(POINT_JS, wanted)
        driver.execute_script("document.getElementById('heatmap').scrollIntoView()")
        shot = tmp_path / f"hosts-{hosts}.png"
        driver.save_screenshot(str(shot))
        log = driver.get_log("browser")
    finally:
        driver.quit()
    assert [e for e in log if e["level"] in ("SEVERE", "ERROR")] == []
    assert found["count"] == f"1 of {hosts} hosts match" and found["shown"] == [wanted], found
    assert by_cluster["cells"] and all("L1C1" in row for row in by_cluster["cells"])
    assert pointed["row"] is not None and not pointed["hidden"] and pointed["unit"] == "Mbit/s"
    if hosts == 128:   # cells of 6 px: the pointer is on the host's own row
        assert pointed["tip"].startswith(wanted) and "Mbit/s" in pointed["tip"], pointed
    else:              # cells under a pixel: on its row or the next (the mark finds it)
        order = sorted(m.host_names)
        near = order[max(0, order.index(wanted) - 1):order.index(wanted) + 2]
        assert any(pointed["tip"].startswith(h + " (") for h in near), pointed
        assert " \u2194 " in pointed["tip"], pointed
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    shutil.copy(shot, SCREENSHOTS / shot.name)
    print(f"screenshot: {SCREENSHOTS / shot.name}")
