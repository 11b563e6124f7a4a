"""Measurement dataset format 1: round trip, incremental writing, every validation error."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.conftest import SMALL, write_files
from tomography.model.dataset import (FORMAT, MeasurementWriter, read_measurement,
                                      write_measurement)
from tomography.model.errors import DatasetError
from tomography.model.synthetic import planted_hierarchy, planted_partition


def test_round_trip(tmp_path: Path) -> None:
    m = planted_hierarchy((2, 3), 5, iterations=3, seed=4)
    write_measurement(m, tmp_path / "d")
    back = read_measurement(tmp_path / "d")
    assert back.host_names == m.host_names
    pd.testing.assert_frame_equal(back.transfers, m.transfers)
    assert back.iteration_ids == [0, 1, 2]
    assert back.labels == m.labels
    assert back.meta["format"] == FORMAT and back.meta["method"] == "synthetic"
    assert back.meta["params"]["seed"] == 4
    assert "numpy" in back.meta["software"]
    for name in ("hosts.csv", "transfers.csv", "iterations.csv"):   # Unix line ends
        assert b"\r" not in (tmp_path / "d" / name).read_bytes(), name


def test_write_refuses_to_overwrite(tmp_path: Path) -> None:
    m = planted_partition(4, 2, iterations=1, seed=0)
    write_measurement(m, tmp_path)
    with pytest.raises(DatasetError, match="exists"):
        write_measurement(m, tmp_path)


def test_hosts_sorted_and_small_dataset_read(small_dataset: Path) -> None:
    m = read_measurement(small_dataset)
    assert m.host_names == ["a", "b", "c"]
    assert m.iterations["complete"].tolist() == [True, False]
    assert np.isnan(m.iterations["duration_s"][1])


def test_writer_keeps_finished_iterations(tmp_path: Path) -> None:
    w = MeasurementWriter(tmp_path, {"method": "bittorrent", "params": {"seed": 1}},
                          [("x", "10.1.0.1", ""), ("y", "10.1.0.2", ""), ("z", "10.1.0.3", "")])
    w.add_iteration(0, root="x", transfers=[("y", "x", 3), ("z", "y", 3)], nbytes=49152,
                    duration_s=0.2)
    w.add_iteration(1, root="y", transfers=[("x", "y", 2), ("z", "y", 0)], nbytes=49152,
                    complete=False)
    # the run "dies" here: what was written is a valid dataset
    m = read_measurement(tmp_path)
    assert m.iteration_ids == [0, 1]
    assert m.transfers["blocks"].sum() == 8
    assert m.iterations["complete"].tolist() == [True, False]
    with pytest.raises(DatasetError, match="unknown root"):
        w.add_iteration(2, root="nobody", transfers=[], nbytes=1)


def _broken(tmp_path: Path, **changes: str) -> Path:
    files = dict(SMALL)
    for name, text in changes.items():
        files[name.replace("_", ".")] = text
    return write_files(tmp_path / "broken", files)


def _error(path: Path) -> DatasetError:
    with pytest.raises(DatasetError) as info:
        read_measurement(path)
    return info.value


def test_unknown_host_in_transfers(tmp_path: Path) -> None:
    text = SMALL["transfers.csv"] + "1,zed,a,1\n"
    err = _error(_broken(tmp_path, transfers_csv=text))
    assert err.path.endswith("transfers.csv") and err.line == 9 and err.field == "receiver"
    assert "unknown host" in str(err) and "'zed'" in str(err)


def test_negative_block_count(tmp_path: Path) -> None:
    text = SMALL["transfers.csv"].replace("0,c,a,4", "0,c,a,-4")
    err = _error(_broken(tmp_path, transfers_csv=text))
    assert (err.line, err.field) == (3, "blocks") and ">= 0" in str(err)


def test_non_integer_block_count(tmp_path: Path) -> None:
    text = SMALL["transfers.csv"].replace("0,c,b,6", "0,c,b,6.5")
    err = _error(_broken(tmp_path, transfers_csv=text))
    assert (err.line, err.field) == (4, "blocks") and "not an integer" in str(err)


def test_duplicate_host(tmp_path: Path) -> None:
    text = SMALL["hosts.csv"] + "a,10.0.0.9,\n"
    err = _error(_broken(tmp_path, hosts_csv=text))
    assert err.path.endswith("hosts.csv") and (err.line, err.field) == (5, "host")
    assert "duplicate host" in str(err)


def test_missing_file(tmp_path: Path) -> None:
    path = _broken(tmp_path)
    (path / "iterations.csv").unlink()
    err = _error(path)
    assert err.path.endswith("iterations.csv") and "missing file" in str(err)


def test_missing_directory(tmp_path: Path) -> None:
    assert "no such dataset" in str(_error(tmp_path / "nowhere"))


def test_wrong_format_version(tmp_path: Path) -> None:
    meta = json.loads(SMALL["meta.json"]) | {"format": "tomography-measurement/2"}
    err = _error(_broken(tmp_path, meta_json=json.dumps(meta)))
    assert err.field == "format" and "unsupported format version" in str(err)


def test_malformed_meta(tmp_path: Path) -> None:
    err = _error(_broken(tmp_path, meta_json="{\n  \"format\": \n"))
    assert err.path.endswith("meta.json") and "not valid JSON" in str(err)


def test_iteration_only_in_transfers(tmp_path: Path) -> None:
    text = SMALL["transfers.csv"] + "7,a,b,1\n"
    err = _error(_broken(tmp_path, transfers_csv=text))
    assert err.path.endswith("transfers.csv") and (err.line, err.field) == (9, "iteration")
    assert "not listed in iterations.csv" in str(err)


def test_iteration_only_in_iterations(tmp_path: Path) -> None:
    text = SMALL["iterations.csv"] + "2,b,1,0.1,true\n"
    err = _error(_broken(tmp_path, iterations_csv=text))
    assert err.path.endswith("iterations.csv") and (err.line, err.field) == (4, "iteration")
    assert "no rows in transfers.csv" in str(err)


def test_an_incomplete_iteration_may_have_no_rows(tmp_path: Path) -> None:
    """A broadcast whose root was killed before it sent a block is kept, empty."""
    text = SMALL["iterations.csv"] + "2,b,1,0.1,false\n"
    m = read_measurement(_broken(tmp_path, iterations_csv=text))
    assert m.iteration_ids[-1] == 2 and not m.iterations["complete"].iloc[-1]


@pytest.mark.parametrize("change, field", [
    ({"iterations_csv": SMALL["iterations.csv"].replace("true", "maybe")}, "complete"),
    ({"iterations_csv": SMALL["iterations.csv"].replace("0,a,", "0,q,")}, "root"),
    ({"transfers_csv": SMALL["transfers.csv"].replace("0,c,b,6", "0,c,c,6")}, "sender"),
    ({"transfers_csv": "iteration,receiver,blocks\n"}, "sender"),
])
def test_other_field_errors(tmp_path: Path, change: dict[str, str], field: str) -> None:
    assert _error(_broken(tmp_path, **change)).field == field


def test_extra_iteration_columns_read_as_numbers_when_they_are(tmp_path) -> None:
    from tomography.model.dataset import MeasurementWriter, read_measurement

    writer = MeasurementWriter(tmp_path / "d", {"method": "bittorrent"},
                               [("a", "10.0.0.1", ""), ("b", "10.0.0.2", "")],
                               iteration_columns=["redundant_bytes", "failed_peers", "note"])
    writer.add_iteration(0, root="a", transfers=[("b", "a", 3)], nbytes=49152,
                         extra={"redundant_bytes": 16384, "failed_peers": "", "note": "x"})
    writer.add_iteration(1, root="b", transfers=[("a", "b", 3)], nbytes=49152,
                         extra={"redundant_bytes": "", "failed_peers": "", "note": "2"})
    it = read_measurement(tmp_path / "d").iterations
    assert it["redundant_bytes"].iloc[0] == 16384 and it["redundant_bytes"].isna().iloc[1]
    assert it["failed_peers"].tolist() == ["", ""]      # all empty: text, not NaN
    assert it["note"].tolist() == ["x", "2"]             # not all numbers: text


# bad input found by the independent probe of issue 16: each a one-line error naming where

def test_a_huge_block_count_is_an_error_not_an_overflow(tmp_path: Path) -> None:
    huge = SMALL["transfers.csv"].replace("0,b,a,10", "0,b,a," + "9" * 31)
    with pytest.raises(DatasetError, match="too large") as err:
        read_measurement(write_files(tmp_path / "d", SMALL | {"transfers.csv": huge}))
    assert err.value.line == 2 and err.value.field == "blocks"


def test_more_blocks_than_the_file_has(tmp_path: Path) -> None:
    # iteration 0 broadcast 163840 bytes: 10 blocks of 16 KiB; b claims 99,999,999 (at most
    # 20 even if both other hosts sent it everything, redundant blocks included)
    many = SMALL["transfers.csv"].replace("0,b,a,10", "0,b,a,99999999")
    with pytest.raises(DatasetError, match="all 2 other hosts sending it the whole 10-block"
                       ) as err:
        read_measurement(write_files(tmp_path / "d", SMALL | {"transfers.csv": many}))
    assert "transfers.csv" in str(err.value) and err.value.line == 2


def test_a_directory_or_a_device_where_a_file_should_be(tmp_path: Path) -> None:
    d = write_files(tmp_path / "d", SMALL)
    (d / "transfers.csv").unlink()
    (d / "transfers.csv").mkdir()
    with pytest.raises(DatasetError, match="is a directory, expected a file"):
        read_measurement(d)
    e = write_files(tmp_path / "e", SMALL)
    (e / "meta.json").unlink()
    (e / "meta.json").symlink_to("/dev/zero")    # never ends: refused before reading
    with pytest.raises(DatasetError, match="not a regular file"):
        read_measurement(e)


def test_a_cut_last_line_is_refused_and_resume_repairs_it(tmp_path: Path) -> None:
    cut = SMALL["transfers.csv"][:-2]            # "1,b,a,5\n" became "1,b,a,"
    d = write_files(tmp_path / "d", SMALL | {"transfers.csv": SMALL["transfers.csv"][:-1]})
    with pytest.raises(DatasetError, match="no line end") as err:
        read_measurement(d)                      # "5" without its line end: maybe "55..."
    assert err.value.line == 8
    d = write_files(tmp_path / "e", SMALL | {"iterations.csv": SMALL["iterations.csv"][:-6]})
    (d / "transfers.csv").write_text(cut + "\n")  # whatever: iteration 1 is not listed
    MeasurementWriter.reopen(d)                   # drops the cut row and iteration 1's rows
    assert read_measurement(d).iteration_ids == [0]


def test_byte_order_marks_and_undecodable_bytes(tmp_path: Path) -> None:
    d = write_files(tmp_path / "d", SMALL)
    (d / "meta.json").write_bytes(b"\xef\xbb\xbf" + SMALL["meta.json"].encode())
    (d / "hosts.csv").write_bytes(b"\xef\xbb\xbf" + SMALL["hosts.csv"].encode())
    assert read_measurement(d).n_hosts == 3     # a BOM is accepted in every file
    (d / "hosts.csv").write_bytes(b"host,address,label\n\xff\xfe\x00garbage\n")
    with pytest.raises(DatasetError, match="hosts.csv.*not UTF-8"):
        read_measurement(d)


def test_write_measurement_writes_only_what_reads_back(tmp_path: Path) -> None:
    from tomography.model.synthetic import planted_partition

    m = planted_partition(8, 2, iterations=2, seed=0)
    write_measurement(m, tmp_path / "ok")
    m.hosts = m.hosts.iloc[1:]                          # a host the transfers still name
    with pytest.raises(DatasetError, match="not written: unknown host") as info:
        write_measurement(m, tmp_path / "ok", overwrite=True)
    assert info.value.path == str(tmp_path / "ok" / "transfers.csv")
    assert read_measurement(tmp_path / "ok").n_hosts == 8         # the old dataset is intact
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ok"]   # no staging left behind
    with pytest.raises(DatasetError, match="resume=True|overwrite=True"):
        write_measurement(planted_partition(8, 2, iterations=1, seed=0), tmp_path / "ok")


def test_writer_holds_the_dataset_lock_until_closed(tmp_path):
    """A MeasurementWriter is the dataset's writer: its lock until close(), re-entrant here."""
    import os

    from tomography.model.dataset import MeasurementWriter
    from tomography.model.dataset.lock import LOCK_NAME, lock_holder

    hosts = [("a", "", ""), ("b", "", "")]
    w = MeasurementWriter(tmp_path / "d", {"method": "synthetic"}, hosts)
    assert lock_holder(tmp_path / "d")["pid"] == os.getpid()
    w.add_iteration(0, root="a", transfers=[("b", "a", 4)], nbytes=65536)
    w.close()
    assert not (tmp_path / "d" / LOCK_NAME).exists()
    with MeasurementWriter.reopen(tmp_path / "d") as again:
        again.add_iteration(1, root="b", transfers=[("a", "b", 4)], nbytes=65536)
    assert not (tmp_path / "d" / LOCK_NAME).exists()


def test_failed_append_leaves_no_cut_line(tmp_path, monkeypatch):
    """A write failing half-way (injected ENOSPC at fsync) cuts the file back: the dataset
    reads as before the iteration, and the iteration's transfers are gone too."""
    import errno
    import os

    from tomography.model.dataset import MeasurementWriter, read_measurement

    w = MeasurementWriter(tmp_path / "d", {"method": "synthetic"}, [("a", "", ""),
                                                                     ("b", "", "")])
    w.add_iteration(0, root="a", transfers=[("b", "a", 4)], nbytes=65536)
    before = {p.name: p.read_bytes() for p in (tmp_path / "d").glob("*.csv")}
    real = os.fsync
    calls = []

    def fsync(fd):
        calls.append(fd)
        if len(calls) == 2:          # transfers.csv written, iterations.csv fails
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(DatasetError, match=r"iterations\.csv.*No space left.*--resume"):
        w.add_iteration(1, root="b", transfers=[("a", "b", 4)], nbytes=65536)
    monkeypatch.setattr(os, "fsync", real)
    assert {p.name: p.read_bytes() for p in (tmp_path / "d").glob("*.csv")} == before
    assert read_measurement(tmp_path / "d").iteration_ids == [0]


@pytest.mark.parametrize("signum", ["SIGINT", "SIGTERM"])
def test_a_signal_while_an_iteration_is_written_waits_until_it_is_whole(tmp_path: Path,
                                                                     signum: str) -> None:
    """Ctrl-C (or SIGTERM turned into it) between the rows of transfers.csv and the line of
    iterations.csv would leave rows of an unlisted iteration, which readers refuse: the
    signal is held back until both are written."""
    import os
    import signal

    def interrupt(*_: object) -> None:
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGTERM, interrupt)
    w = MeasurementWriter(tmp_path / "d", {"method": "simulated"},
                          [("a", "", ""), ("b", "", ""), ("c", "", "")])
    w.add_iteration(0, root="a", transfers=[("b", "a", 4), ("c", "a", 2)], nbytes=2**16)

    def rows():
        yield ("b", "c", 3)
        os.kill(os.getpid(), getattr(signal, signum))   # arrives mid-iteration
        yield ("c", "b", 5)

    try:
        with pytest.raises(KeyboardInterrupt):
            w.add_iteration(1, root="b", transfers=rows(), nbytes=2**16)
    finally:
        signal.signal(signal.SIGTERM, old)
        w.close()
    m = read_measurement(tmp_path / "d")
    assert m.iteration_ids == [0, 1] and len(m.transfers) == 4
