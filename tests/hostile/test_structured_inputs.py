"""Hostile structured documents: topology files (YAML), Gauge files (XML), standard input.

By class, each against every command that reads that input:

* structure: nesting 100,000 deep, alias bombs and aliases without end, a key
  twice, two documents in one, a device or a directory for a file;
* sizes: counts and lengths beyond any network (10^12 hosts, 20,000 routers,
  a route of 300 links, a name of a megabyte), files beyond the byte limit
  (refused by their size before a byte is read), a Gauge document streamed
  without end on standard input (refused at the limit, not read to its end);
* quantities: capacities and latencies infinite, effectively zero or beyond
  any network, in a topology and in a Gauge file.

Each refusal is one line naming the file and the field or line, a nonzero
exit, no traceback, nothing written, within a time bound (tests/hostile/common.py).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.hostile.common import refused, refused_here
from tomography.model.safe_load import DocumentError, load_json, load_yaml, parse_xml

ROOT = Path(__file__).resolve().parents[2]
GAUGE = ROOT / "datasets" / "gauges" / "gridlab-8.gauge.xml"

BASE = """\
name: hostile
description: a topology with one thing wrong
host_defaults: {nic: 1Gbit/s, latency: 50us}
routers: [A, B]
links:
  - {between: [A, B], capacity: 100Mbit/s, latency: 1ms}
clusters:
  - {name: a, router: A, hosts: 2}
  - {name: b, router: B, hosts: 2}
"""


def _bomb(levels: int = 9) -> str:
    lines = ["description:", "  l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"  l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]"
              for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def _chain(n: int) -> str:
    routers = ", ".join(f"R{i}" for i in range(n))
    links = "".join(f"  - {{between: [R{i}, R{i + 1}], capacity: 1Gbit/s, latency: 1us}}\n"
                    for i in range(n - 1))
    return (f"name: chain\nrouters: [{routers}]\nlinks:\n{links}clusters:\n"
            f"  - {{name: a, router: R0, hosts: 2, nic: 1Gbit/s}}\n"
            f"  - {{name: b, router: R{n - 1}, hosts: 2, nic: 1Gbit/s}}\n")


# name -> (the file's text, or a callable of the directory giving its path; what the line says)
STRUCTURE = {
    "deep-flow-list": (BASE.replace("description: a topology with one thing wrong",
                                    "description: " + "[" * 100_000 + "]" * 100_000),
                       [r"line 2", "nested deeper"]),
    "deep-flow-mapping": ("name: " + "{a: " * 100_000 + "1" + "}" * 100_000 + "\n",
                          [r"line 1", "nested deeper"]),
    "deep-block": (BASE + "".join("  " * i + f"k{i}:\n" for i in range(3000)) + "  " * 3000
                   + "x\n", [r"line \d+", "nested deeper"]),
    "alias-bomb": (BASE.replace("description: a topology with one thing wrong\n", _bomb()),
                   [r"line \d+", "aliases expanded"]),
    "alias-cycle": (BASE.replace("description: a topology with one thing wrong",
                                 "description: &d [*d]"), [r"line 2", "without end"]),
    "key-twice": (BASE + "name: again\n", [r"line 10", "given twice"]),
    "two-documents": (BASE + "---\n" + BASE, [r"line 10", "more than one"]),
    "description-not-text": (BASE.replace("description: a topology with one thing wrong",
                                          "description: {a: [1, 2]}"),
                             [r"field 'description'", "must be text"]),
}

SIZES = {
    "hosts-1e12": (BASE.replace("hosts: 2}", "hosts: 1000000000000}", 1),
                   [r"field 'clusters\[0\]\.hosts'", "at most 100000"]),
    "hosts-summed": (BASE.replace("hosts: 2}", "hosts: 60000}"),
                     [r"field 'clusters\[1\]\.hosts'", "at most 100000 in all"]),
    "routers-20000": (_chain(20_000), [r"field 'routers'", "more than 1,000 entries"]),
    "route-300-hops": (_chain(300), [r"field 'links'", "at most 255"]),
    "name-1MB": (BASE.replace("name: hostile", "name: " + "x" * 2**20),
                 [r"field 'name'", "longer than 255"]),
    "prefix-1MB": (BASE.replace("{name: a, router: A,", "{name: a, host_prefix: "
                                + "p" * 2**20 + ", router: A,"),
                   [r"field 'clusters\[0\]\.host_prefix'", "longer than 255"]),
}

QUANTITIES = {
    "latency-1e400s": ("latency: 1ms}", "latency: 1e400s}", r"links\[0\]\.latency"),
    "latency-1e300s": ("latency: 1ms}", "latency: 1e300s}", r"links\[0\]\.latency"),
    "latency-11s": ("latency: 1ms}", "latency: 11s}", r"links\[0\]\.latency"),
    "host-latency-inf": ("latency: 50us}", "latency: 1e999ms}", r"host_defaults\.latency"),
    "capacity-1e-300": ("capacity: 100Mbit/s", "capacity: 1e-300bit/s", r"links\[0\]\.capacity"),
    "capacity-half-bit": ("capacity: 100Mbit/s", "capacity: 0.5bit/s", r"links\[0\]\.capacity"),
    "capacity-1e400": ("capacity: 100Mbit/s", "capacity: 1e400Gbit/s", r"links\[0\]\.capacity"),
    "nic-1e-300": ("{nic: 1Gbit/s,", "{nic: 1e-300Gbit/s,", r"host_defaults\.nic"),
    "directed-inf": ("capacity: 100Mbit/s", "capacity: {A: 1e999bit/s, B: 1Gbit/s}",
                     r"links\[0\]\.capacity\.A"),
}


@pytest.fixture(scope="module")
def place(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A small simulated dataset (for export) and an empty output directory."""
    from measure.simulator import simulate

    root = tmp_path_factory.mktemp("structured")
    dataset = simulate("tree-5", root / "dataset", iterations=2, file_size=2**20)
    out = root / "out"
    out.mkdir()
    return {"dataset": dataset, "out": out, "root": root}


def topology_commands(path: Path, place: dict[str, Path]) -> dict[str, list[object]]:
    """Every command that reads a topology file, with ``path`` as the topology."""
    out, dataset = place["out"], place["dataset"]
    return {
        "simulate": ["simulate", path, "-o", out / "sim", "-n", "1"],
        "truth": ["truth", path],
        "export": ["export", dataset, "--format", "gauge", "-o", out / "g.xml",
                   "--bandwidth", "topology", "--topology", path],
        "testbed-up": ["testbed", "up", path, "--name", "hostile"],
        "measure-testbed": ["measure", "bittorrent", "--testbed", path, "-o", out / "m",
                            "--name", "hostile"],
    }


COMMANDS = ("simulate", "truth", "export", "testbed-up", "measure-testbed")
CHEAP = ("simulate", "truth", "testbed-up", "measure-testbed")
"""The commands that read the topology before any analysis: every case runs against them;
export (an analysis first, about a second) against a few cases per class."""


def _cases(table: dict, few: int = 2) -> list:
    out = []
    for i, case in enumerate(table):
        for command in COMMANDS:
            if command in CHEAP or i < few:
                out.append(pytest.param(case, command, id=f"{case}-{command}"))
    return out


def _write(place: dict[str, Path], name: str, text: str) -> Path:
    path = place["root"] / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _check_topology(place, name: str, text: str, says: list[str], command: str) -> None:
    path = _write(place, name, text)
    argv = topology_commands(path, place)[command]
    refused_here(argv, says=[re.escape(str(path)), *says], watch=[place["out"]], timeout=20)


# --------------------------------------------------------------------------- structure


@pytest.mark.parametrize("case, command", _cases(STRUCTURE))
def test_structure_of_a_topology_file_is_bounded(place, case: str, command: str) -> None:
    text, says = STRUCTURE[case]
    _check_topology(place, case, text, says, command)


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("target", ["/dev/zero", "directory"])
def test_a_device_or_a_directory_is_not_a_topology_file(place, target: str,
                                                       command: str) -> None:
    path = Path(target) if target.startswith("/") else place["root"]
    says = [re.escape(str(path)), "device|directory"]
    refused_here(topology_commands(path, place)[command], says=says, watch=[place["out"]],
                 timeout=20)


@pytest.mark.parametrize("text, says", [
    (b"[" * 100_000 + b"]" * 100_000, "nested deeper than 100"),
    (b'{"a":' * 100_000 + b"1" + b"}" * 100_000, "nested deeper than 100"),
    (b"[" + b"0," * 1_100_000 + b"0]", "more than 1,000,000 values"),
    (b"[" + b"1" * 5000 + b"]", "not valid JSON"),
    (b'{"a": 1', "not valid JSON"),
], ids=["list", "object", "values", "long-int", "cut"])
def test_json_documents_are_bounded(tmp_path: Path, text: bytes, says: str) -> None:
    """meta.json, pScheduler results: the loader their readers call refuses in one line."""
    path = tmp_path / "meta.json"
    path.write_bytes(text)
    with pytest.raises(DocumentError, match=f"^{re.escape(str(path))}.*{says}") as err:
        load_json(path)
    assert "\n" not in str(err.value)


def test_yaml_and_xml_loaders_name_the_document(tmp_path: Path) -> None:
    with pytest.raises(DocumentError, match=r"^t\.yaml, line \d+: .*aliases expanded"):
        load_yaml(_bomb(9).encode(), what="t.yaml")
    with pytest.raises(DocumentError, match=r"^t\.yaml, line 1, field 'routers': more than "
                                            r"3 entries"):
        load_yaml(b"routers: [a, b, c, d]", what="t.yaml", max_items={"routers": 3})
    with pytest.raises(DocumentError, match=r"^g\.xml, line 1: nested deeper"):
        parse_xml(b"<a>" * 100_000, what="g.xml")
    with pytest.raises(DocumentError, match=r"^g\.xml.*more than 10 elements"):
        parse_xml(b"<a>" + b"<b/>" * 20 + b"</a>", what="g.xml", max_nodes=10)
    with pytest.raises(DocumentError, match=r"^g\.xml, line 1: a DOCTYPE is not allowed"):
        parse_xml(b'<!DOCTYPE a [<!ENTITY x "xx">]><a>&x;</a>', what="g.xml")
    sparse = tmp_path / "big.json"
    with open(sparse, "wb") as fh:
        fh.truncate(65 * 2**20)
    with pytest.raises(DocumentError, match="more than the 64 MiB"):
        load_json(sparse)


# --------------------------------------------------------------------------- sizes


@pytest.mark.parametrize("case, command", _cases(SIZES))
def test_sizes_of_a_topology_are_bounded_before_expansion(place, case: str,
                                                         command: str) -> None:
    text, says = SIZES[case]
    _check_topology(place, case, text, says, command)


@pytest.mark.parametrize("command", COMMANDS)
def test_a_topology_file_beyond_the_byte_limit_is_refused_unread(place, command: str) -> None:
    path = place["root"] / "sparse.yaml"
    with open(path, "wb") as fh:          # 17 MiB of nothing, no disk used
        fh.truncate(17 * 2**20)
    refused_here(topology_commands(path, place)[command],
                 says=[re.escape(str(path)), "more than the 16 MiB"], watch=[place["out"]],
                 timeout=20)


def _gauge_variant(tmp_path: Path, name: str, old: str, new: str, count: int = 1) -> Path:
    text = GAUGE.read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / f"{name}.gauge.xml"
    path.write_text(text.replace(old, new, count), encoding="utf-8")
    return path


GAUGE_SIZES = {
    "deep": ('<host name="fs0"/>', '<host name="fs0"/>' + "<x>" * 100_000,
             [r"line \d+", "nested deeper"]),
    "doctype": ("?>\n", '?>\n<!DOCTYPE environment [<!ENTITY a "aaaaaaaaaa">]>\n',
                [r"line 1", "DOCTYPE"]),
}


@pytest.mark.parametrize("stdin", [False, pytest.param(True, marks=pytest.mark.slow)],
                         ids=["file", "stdin"])
@pytest.mark.parametrize("case", GAUGE_SIZES)
def test_gauge_structure_is_bounded(tmp_path: Path, case: str, stdin: bool) -> None:
    old, new, says = GAUGE_SIZES[case]
    path = _gauge_variant(tmp_path, case, old, new)
    if stdin:
        refused(["plan", "-", "--root", "fs0"], stdin=path.read_bytes(),
                says=["standard input", *says], watch=[tmp_path], timeout=30)
    else:
        refused_here(["plan", path, "--root", "fs0"], says=[re.escape(str(path)), *says],
                     watch=[tmp_path])


def test_a_gauge_file_beyond_the_byte_limit_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "sparse.gauge.xml"
    with open(path, "wb") as fh:
        fh.truncate(65 * 2**20)
    refused_here(["plan", path, "--root", "fs0"],
                 says=[re.escape(str(path)), "more than the 64 MiB"], watch=[tmp_path])


@pytest.mark.slow
@pytest.mark.parametrize("chunk", [b"<a>", b"\0", b"<environment>"], ids=["tags", "nul", "root"])
def test_an_endless_gauge_on_standard_input_is_refused_at_the_limit(tmp_path: Path,
                                                                   chunk: bytes) -> None:
    """More than the limit on standard input: refused at 64 MiB, fast, nothing written."""
    data = chunk * (70 * 2**20 // len(chunk))
    refused(["plan", "-", "--root", "fs0"], stdin=data,
            says=["standard input", "larger than 64 MiB"], watch=[tmp_path], timeout=30)


def test_a_gauge_with_too_many_hosts_for_its_pairs_is_refused(tmp_path: Path) -> None:
    hosts = "".join(f'<host name="z{i}"/>' for i in range(5001))
    path = _gauge_variant(tmp_path, "pairs", '<host name="fs0"/>', '<host name="fs0"/>' + hosts)
    text = path.read_text(encoding="utf-8")
    if "<hostBandwidths" not in text:
        text = text.replace("</clusterBandwidths>", '</clusterBandwidths>\n<hostBandwidths '
                            'unit="MiB/s" source="probes" method="x"/>')
        path.write_text(text, encoding="utf-8")
    refused_here(["plan", path, "--root", "fs0"],
                 says=[re.escape(str(path)), "hostBandwidths|at most 5000"], watch=[tmp_path])


# --------------------------------------------------------------------------- quantities


def _quantity_cases() -> list:
    out = []
    for i, case in enumerate(QUANTITIES):
        for command in COMMANDS:
            if command in CHEAP or i in (0, 4):
                out.append(pytest.param(case, command, id=f"{case}-{command}"))
    return out


@pytest.mark.parametrize("case, command", _quantity_cases())
def test_topology_quantities_out_of_range_are_refused_alike(place, case: str,
                                                           command: str) -> None:
    old, new, field = QUANTITIES[case]
    assert old in BASE
    _check_topology(place, case, BASE.replace(old, new, 1),
                    [f"field '{field}'", "beyond any network"], command)


GAUGE_FIGURES = {
    "rate-1e300": ('to="n0" value="1.03"', 'to="n0" value="1e300"'),
    "rate-1e-300": ('to="n0" value="1.03"', 'to="n0" value="1e-300"'),
    "rate-inf": ('to="n0" value="1.03"', 'to="n0" value="INF"'),
}


@pytest.mark.parametrize("case", GAUGE_FIGURES)
def test_gauge_figures_out_of_range_are_refused(tmp_path: Path, case: str) -> None:
    path = _gauge_variant(tmp_path, case, *GAUGE_FIGURES[case])
    refused_here(["plan", path, "--root", "fs0"],
                 says=[re.escape(str(path)), r"line \d+", "element",
                       "beyond any network|must be less than 'INF'"],
                 watch=[tmp_path])


def test_gauge_delays_out_of_range_are_refused(tmp_path: Path) -> None:
    from tomography.export.bandwidth import from_topology
    from tomography.export.gauge import GaugeError, read_gauge, write_gauge
    from tomography.model.topology import read_topology

    topo = read_topology("tree-5")
    path = tmp_path / "tree-5.gauge.xml"
    write_gauge(from_topology(topo, {g.name: g.host_names for g in topo.clusters}), path)
    text = path.read_text(encoding="utf-8")
    assert "<clusterDelays" in text
    bad = re.sub(r'(<clusterDelays[^>]*>\s*<pair [^>]*value=")[^"]*"', r'\g<1>1e7"', text, 1)
    path.write_text(bad, encoding="utf-8")
    with pytest.raises(GaugeError, match=r"line \d+, element .*pair.*beyond any network"):
        read_gauge(path)
