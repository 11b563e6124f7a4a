"""concurrency.csv, the concurrency test's verdicts, read through the same bounded and
checked reader as every dataset file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tomography.model.dataset.concurrency import (CONCURRENCY_COLUMNS, ConcurrencyWriter,
                                                  read_concurrency)
from tomography.model.errors import DatasetError

HEADER = ",".join(CONCURRENCY_COLUMNS)
ROW = "c1,c2,a,b,c,d,2e7,1e5,1e7,1e7,0.5,0.1,True,3"


def _file(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "concurrency.csv"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


CASES = {
    "binary": (b"\x00\xff\xfe" * 50, "not UTF-8|control character"),
    "UTF-16": (f"{HEADER}\n{ROW}\n".encode("utf-16"), "UTF-8|control character"),
    "a column missing": ("cluster_a,cluster_b,drop\nc1,c2,0.5\n", "threshold"),
    "a drop that is text": (f"{HEADER}\n{ROW.replace('0.5', 'half')}\n", "line 2.*drop.*number"),
    "an infinite rate": (f"{HEADER}\n{ROW.replace('2e7', 'inf')}\n", "a_alone_bps.*finite"),
    "a verdict maybe": (f"{HEADER}\n{ROW.replace('True', 'maybe')}\n", "shared.*true or false"),
    "a row too long": (f"{HEADER}\n{ROW},x\n", "line 2.*fields"),
}


@pytest.mark.parametrize("case", CASES)
def test_a_hostile_concurrency_file_is_refused_naming_the_file(tmp_path: Path, case) -> None:
    text, says = CASES[case]
    path = _file(tmp_path, text)
    with pytest.raises(DatasetError, match=says) as caught:
        read_concurrency(tmp_path)
    assert str(path) in str(caught.value)


def test_a_pipe_or_a_device_is_refused_unread(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo" / "concurrency.csv"
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    with pytest.raises(DatasetError, match="not a regular file"):
        read_concurrency(fifo.parent)       # a FIFO would block a plain open for ever
    device = tmp_path / "dev" / "concurrency.csv"
    device.parent.mkdir()
    device.symlink_to("/dev/zero")
    with pytest.raises(DatasetError, match="not a regular file"):
        read_concurrency(device.parent)


def test_what_the_writer_writes_the_reader_takes_back(tmp_path: Path) -> None:
    writer = ConcurrencyWriter(tmp_path)
    row = dict(zip(CONCURRENCY_COLUMNS, ROW.split(",")))
    writer.add({**row, "drop": float("nan"), "shared": False})
    writer.add(row)
    frame = read_concurrency(tmp_path / "concurrency.csv")
    assert frame["shared"].tolist() == [False, True]
    assert frame["drop"].isna().tolist() == [True, False]
    with pytest.raises(DatasetError, match="no concurrency results"):
        read_concurrency(tmp_path / "elsewhere")
