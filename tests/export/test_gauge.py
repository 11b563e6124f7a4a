"""Gauge XML: round trip, schema validation on write and read, errors naming the element."""

from __future__ import annotations

import math
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest
from lxml import etree

from tests.export.conftest import topology_clusters
from tomography.model.errors import TomographyError
from tomography.export.bandwidth import FIGURES, BandwidthModel, Source, from_topology
from tomography.export.gauge import (FORMAT, RATE_UNITS, SCHEMA_PATH, TIME_UNITS, GaugeError,
                                     gauge_schema,
                                     gauge_to_network, gauge_to_xml, read_gauge, write_gauge)
from tomography.planning import balanced_multicast

STAMP = datetime(2026, 5, 1, 12, 30, 15, 250000, tzinfo=timezone(timedelta(hours=2)))


@pytest.fixture(scope="module")
def full_model(two_sites) -> BandwidthModel:
    """Every figure, delays and host pairs included, with notes and unknowns."""
    m = from_topology(two_sites, topology_clusters(two_sites), host_pairs=True)
    m.cluster_bandwidth[1, 3] = 0.0                 # a dead link
    m.host_in[2] = np.nan                           # an unknown figure
    m.notes = ["first caveat", "second: <&> \"quoted\""]
    m.timestamp = STAMP
    return m


def assert_same(a: BandwidthModel, b: BandwidthModel) -> None:
    assert dict(a.clusters) == dict(b.clusters) and list(a.clusters) == list(b.clusters)
    for name in ("host_out", "host_in", "cluster_out", "cluster_in", "cluster_bandwidth",
                 "host_bandwidth", "cluster_delay", "host_delay"):
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None) == (y is None), name
        if x is not None:
            np.testing.assert_allclose(x, y, rtol=1e-11, err_msg=name)    # NaN == NaN
    assert a.sources == b.sources and a.notes == b.notes and a.timestamp == b.timestamp


def test_round_trip(full_model, tmp_path):
    path = tmp_path / "two-sites.gauge.xml"
    write_gauge(full_model, path)
    back = read_gauge(path)
    assert_same(full_model, back)
    assert np.isnan(back.host_in[2]) and back.cluster_bandwidth[1, 3] == 0.0
    # the file states its units, format and timestamp, and validates against the schema
    doc = etree.parse(str(path))
    assert gauge_schema().validate(doc)
    root = doc.getroot()
    assert root.get("format") == FORMAT and root.get("timestamp") == STAMP.isoformat()
    assert root.find("gauge/clusterDelays").get("unit") == "ms"
    assert root.find("gauge/hostBandwidths").get("unit") == "Mbit/s"
    assert root.find("gauge/clusterBandwidths/pair[@from='w1'][@to='e1']").get("value") == "10"
    assert root.find("gauge/clusterDelays/pair[@from='w1'][@to='e1']").get("value") == "5.3"


@pytest.mark.parametrize("unit, delay_unit", [("bit/s", "s"), ("GiB/s", "ns"), ("KiB/s", "us")])
def test_round_trip_in_other_units(full_model, tmp_path, unit, delay_unit):
    path = tmp_path / "g.xml"
    write_gauge(full_model, path, unit=unit, delay_unit=delay_unit)
    assert f'unit="{unit}"' in path.read_text()
    assert_same(full_model, read_gauge(path))


def test_round_trip_minimal_model(tmp_path):
    m = BandwidthModel({"a": ["a1"]}, [1.0], [2.0], [3.0], [4.0], [[np.nan]],
                       {f: Source("probes", "by hand") for f in FIGURES[:3]})
    write_gauge(m, tmp_path / "g.xml")
    back = read_gauge(tmp_path / "g.xml")
    assert_same(m, back)
    assert back.host_bandwidth is None and back.cluster_delay is None


def test_the_topology_model_of_gridlab_8_plans_as_den_burgers_gauge(tmp_path):
    # the built-in topology, exported, gives the planners the Gauge file's network
    # wherever a site's NIC does not bind and the pair is live
    from tomography.planning import gridlab8
    from tomography.model.topology import read_topology
    t = read_topology("gridlab-8")
    path = tmp_path / "gridlab.gauge.xml"
    write_gauge(from_topology(t, topology_clusters(t)), path, unit="MiB/s")
    net, table = gauge_to_network(read_gauge(path), "clusters", unit="MiB/s"), gridlab8()
    assert net.nodes == table.nodes
    expected = np.minimum(np.minimum.outer(table.out_capacity, table.in_capacity),
                          table.bandwidth)
    live = table.live & ~np.eye(table.size, dtype=bool)
    np.testing.assert_allclose(net.bandwidth[live], expected[live], rtol=1e-9)
    # a site's local capacity, or all its live links out (in) when they carry less
    np.testing.assert_allclose(net.out_capacity, np.minimum(table.out_capacity,
                                                            table.bandwidth.sum(axis=1)))
    np.testing.assert_allclose(net.in_capacity, np.minimum(table.in_capacity,
                                                           table.bandwidth.sum(axis=0)))


def test_schema_file_is_in_the_package():
    assert SCHEMA_PATH.name == "gauge.xsd" and SCHEMA_PATH.parent.name == "export"
    assert isinstance(gauge_schema(), etree.XMLSchema)


def test_units_are_the_schemas():
    xsd = etree.parse(str(SCHEMA_PATH))
    ns = {"xs": "http://www.w3.org/2001/XMLSchema"}
    for name, units in (("RateUnit", RATE_UNITS), ("TimeUnit", TIME_UNITS)):
        values = xsd.xpath(f"//xs:simpleType[@name='{name}']//xs:enumeration/@value",
                           namespaces=ns)
        assert tuple(values) == units


def test_validation_on_write(full_model):
    with pytest.raises(GaugeError, match="cannot state rates in 'MB/s'.*MiB/s"):
        gauge_to_xml(full_model, unit="MB/s")     # 10^6 bytes: ambiguous, not allowed
    with pytest.raises(GaugeError, match="cannot state delays in 'min'"):
        gauge_to_xml(full_model, delay_unit="min")
    # the schema itself is checked on write: a name that is blank once collapsed
    bad = BandwidthModel({"a": [" \t"]}, [1.0], [1.0], [1.0], [1.0], [[np.nan]],
                         {f: Source("probes", "by hand") for f in FIGURES[:3]})
    with pytest.raises(GaugeError, match=r"element /environment/pool/cluster/host: .*'name'"):
        gauge_to_xml(bad)


def test_real_gauge_file_reads_and_plans():
    path = Path(__file__).parents[2] / "datasets" / "gauges" / "gridlab-8.gauge.xml"
    model = read_gauge(path)
    assert len(model.clusters) == 8 and model.sources["cluster_bandwidth"].kind == "probes"
    net = gauge_to_network(model, unit="MiB/s")
    assert balanced_multicast(net, "n0").throughput > 0


def test_gauge_to_planner_network(full_model, tmp_path):
    write_gauge(full_model, tmp_path / "g.xml")
    model = read_gauge(tmp_path / "g.xml")
    net = gauge_to_network(model, unit="Mbit/s")
    assert net.nodes == ["w1", "w2", "e1", "e2"] and net.unit == "Mbit/s"
    assert net.out_capacity.tolist() == [40.0] * 4
    assert net.bandwidth[1, 3] == 0.0 and net.bandwidth[0, 2] == pytest.approx(10.0)
    plan = balanced_multicast(net, "w1")
    assert math.isfinite(plan.throughput) and 0 < plan.throughput <= 40.0 + 1e-9
    # hosts: the unknown host_in must be filled first
    with pytest.raises(TomographyError, match=r"unknown figure\(s\), e.g. host_in e1-02"):
        gauge_to_network(model, "hosts")
    hosts = gauge_to_network(model.fill_missing(0.0), "hosts", unit="Mbit/s")
    assert hosts.size == 20 and hosts.bandwidth[0, 1] == pytest.approx(100.0)
    with pytest.raises(TomographyError, match="level must be"):
        gauge_to_network(model, "sites")


# --------------------------------------------------------------------------- bad files


@pytest.fixture(scope="module")
def good_text(full_model) -> str:
    return gauge_to_xml(full_model)


def line_of(text: str, needle: str) -> int:
    return text[:text.index(needle)].count("\n") + 1


def path_of(text: str, xpath: str) -> str:
    """The path libxml2 gives the element ``xpath`` finds in ``text``."""
    doc = etree.fromstring(text.encode("utf-8")).getroottree()
    (element,) = doc.xpath(xpath)
    return doc.getpath(element)


def read_text(tmp_path: Path, text: str) -> BandwidthModel:
    path = tmp_path / "bad.gauge.xml"
    path.write_text(text, encoding="utf-8")
    return read_gauge(path)


def test_bad_file_not_well_formed(tmp_path, good_text):
    text = good_text.replace("</pool>", "", 1)
    with pytest.raises(GaugeError, match=r"bad\.gauge\.xml, line \d+: not well-formed XML: "
                                         r"Opening and ending tag mismatch: pool"):
        read_text(tmp_path, text)


def test_bad_file_unknown_host_in_a_pair(tmp_path, good_text):
    needle = '<pair from="w1-00" to="w1-01"'
    text = good_text.replace(needle, '<pair from="zz-99" to="w1-01"', 1)
    with pytest.raises(GaugeError) as info:
        read_text(tmp_path, text)
    message = str(info.value)
    assert f"line {line_of(good_text, needle)}" in message
    where = path_of(good_text, "//hostBandwidths/pair[@from='w1-00'][@to='w1-01']")
    assert re.fullmatch(r"/environment/gauge/hostBandwidths/pair\[\d+\]", where)
    assert f"element {where}:" in message
    assert "['zz-99']" in message and "pairFromPoolHost" in message
    assert info.value.element == where and info.value.line == line_of(good_text, needle)


def test_bad_file_unknown_cluster_capacity(tmp_path, good_text):
    text = good_text.replace('<cluster name="e2" in', '<cluster name="e9" in', 1)
    with pytest.raises(GaugeError, match=r"element /environment/gauge/clusterCapacities/"
                                         r"cluster\[4\].*'e9'"):
        read_text(tmp_path, text)


def test_bad_file_negative_bandwidth(tmp_path, good_text):
    needle = '<pair from="w1" to="e1" value="10"/>'
    text = good_text.replace(needle, '<pair from="w1" to="e1" value="-10"/>')
    with pytest.raises(GaugeError) as info:
        read_text(tmp_path, text)
    assert f"line {line_of(good_text, needle)}" in str(info.value)
    assert "element /environment/gauge/clusterBandwidths/pair[3]" in str(info.value)
    assert "'-10' is less than the minimum value allowed ('0')" in str(info.value)


@pytest.mark.parametrize("value", ["NaN", "INF", "ten"])
def test_bad_file_not_a_figure(tmp_path, good_text, value):
    text = good_text.replace('value="10"/>', f'value="{value}"/>', 1)
    with pytest.raises(GaugeError, match=r"element /environment/gauge/clusterBandwidths/pair"):
        read_text(tmp_path, text)


def test_bad_file_missing_unit_attribute(tmp_path, good_text):
    text = re.sub(r'<clusterDelays unit="ms"', "<clusterDelays", good_text)
    with pytest.raises(GaugeError, match=r"element /environment/gauge/clusterDelays: Element "
                                         r"'clusterDelays': The attribute 'unit' is required"):
        read_text(tmp_path, text)


def test_bad_file_unknown_unit(tmp_path, good_text):
    text = good_text.replace('<hostCapacities unit="Mbit/s"', '<hostCapacities unit="Mbps"')
    with pytest.raises(GaugeError, match=r"element /environment/gauge/hostCapacities: .*"
                                         r"'Mbps' is not an element of the set"):
        read_text(tmp_path, text)


def test_bad_file_missing_source(tmp_path, good_text):
    text = re.sub(r'(<clusterBandwidths unit="Mbit/s") source="topology-model"', r"\1",
                  good_text)
    with pytest.raises(GaugeError, match=r"element /environment/gauge/clusterBandwidths: .*"
                                         r"attribute 'source' is required but missing"):
        read_text(tmp_path, text)


def test_bad_file_blank_method(tmp_path, good_text):
    text = re.sub(r'(<hostDelays [^>]*method=)"[^"]*"', r'\1"   "', good_text)
    with pytest.raises(GaugeError, match=r"element /environment/gauge/hostDelays: the "
                                         r"topology-model source needs a method"):
        read_text(tmp_path, text)


def test_bad_file_element_not_in_schema(tmp_path, good_text):
    text = good_text.replace("<note>", "<comment>x</comment><note>", 1)
    with pytest.raises(GaugeError, match=r"element /environment/comment: Element 'comment': "
                                         r"This element is not expected"):
        read_text(tmp_path, text)
    text = good_text.replace("clusterCapacities>", "clusterCapacity>")
    text = text.replace("<clusterCapacities ", "<clusterCapacity ")
    with pytest.raises(GaugeError, match=r"element /environment/gauge/clusterCapacity"):
        read_text(tmp_path, text)


def test_bad_file_missing_required_group(tmp_path, good_text):
    text = re.sub(r"<clusterCapacities.*?</clusterCapacities>", "", good_text, flags=re.S)
    with pytest.raises(GaugeError, match=r"element /environment/gauge/clusterBandwidths: .*"
                                         r"Expected is \( clusterCapacities \)"):
        read_text(tmp_path, text)


def test_bad_file_timestamps(tmp_path, good_text):
    stamp = STAMP.isoformat()
    with pytest.raises(GaugeError, match=r"element /environment: .*timestamp.*pattern"):
        read_text(tmp_path, good_text.replace(stamp, "2026-05-01T12:00:00"))    # no zone
    with pytest.raises(GaugeError, match=r"line 2, element /environment: timestamp "
                                         r"'2026-05-01T24:00:00Z'"):
        read_text(tmp_path, good_text.replace(stamp, "2026-05-01T24:00:00Z"))
    back = read_text(tmp_path, good_text.replace(stamp, "2026-05-01T12:00:00Z"))
    assert back.timestamp == datetime(2026, 5, 1, 12, tzinfo=timezone.utc)


def test_bad_file_host_paired_with_itself_and_duplicates(tmp_path, good_text):
    text = good_text.replace('<pair from="w1-00" to="w1-01"', '<pair from="w1-00" to="w1-00"', 1)
    where = path_of(good_text, "//hostBandwidths/pair[@from='w1-00'][@to='w1-01']")
    with pytest.raises(GaugeError, match=re.escape(f"element {where}: host 'w1-00' paired "
                                                   "with itself")):
        read_text(tmp_path, text)
    text = good_text.replace('<host name="w1-01"/>', '<host name="w1-00"/>', 1)
    with pytest.raises(GaugeError, match=r"element /environment/pool/cluster\[1\]/host\[2\]: "
                                         r".*'poolHost'"):
        read_text(tmp_path, text)


def test_bad_file_wrong_format_and_missing_file(tmp_path, good_text):
    with pytest.raises(GaugeError, match=r"attribute 'format'"):
        read_text(tmp_path, good_text.replace(FORMAT, "tomography-gauge/2"))
    with pytest.raises(GaugeError, match="missing file"):
        read_gauge(tmp_path / "absent.xml")


def test_a_doctype_and_an_implausible_figure_are_refused(tmp_path) -> None:
    gauge = Path(__file__).parents[2] / "datasets" / "gauges" / "gridlab-8.gauge.xml"
    text = gauge.read_text()
    xxe = text.replace("?>\n", '?>\n<!DOCTYPE environment [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n', 1)
    (tmp_path / "xxe.xml").write_text(xxe.replace('<host name="fs0"/>', '<host name="fs0"/>&x;', 1))
    with pytest.raises(GaugeError, match="DOCTYPE is not allowed.*nothing outside the file"):
        read_gauge(tmp_path / "xxe.xml")
    (tmp_path / "big.xml").write_text(text.replace('to="n0" value="1.03"', 'to="n0" value="1e300"'))
    with pytest.raises(GaugeError, match="beyond any network") as err:
        read_gauge(tmp_path / "big.xml")
    assert err.value.line == 51
