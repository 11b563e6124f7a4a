"""Real files as a payload: manifests, staging, verification, refusals (no agent, no network)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from measure.fileset import Staging, manifest, source_bytes


def _dir(root: Path) -> Path:
    (root / "d" / "s").mkdir(parents=True)
    (root / "d" / "a").write_bytes(bytes(range(256)) * 40)
    (root / "d" / "s" / "b").write_bytes(b"tail")
    return root / "d"


def test_the_manifest_covers_every_byte_in_pieces(tmp_path: Path) -> None:
    d = _dir(tmp_path)
    m = manifest(d, 1000)
    whole = source_bytes(d, m)
    assert len(whole) == m["size"] == 10244 and hashlib.blake2b(whole).hexdigest() == m["digest"]
    assert m["pieces"] == [hashlib.blake2b(whole[i:i + 1000], digest_size=16).hexdigest()
                           for i in range(0, len(whole), 1000)]


def test_a_staging_file_keeps_right_pieces_and_refuses_wrong_files(tmp_path: Path) -> None:
    d = _dir(tmp_path)
    m = manifest(d, 1000)
    whole = source_bytes(d, m)
    s = Staging(tmp_path / "dest", m)
    s.buffer[:3000] = whole[:3000]
    s.buffer[5000:6000] = whole[5000:6000]
    s.close()
    again = Staging(tmp_path / "dest", m)   # what a killed receiver left
    assert list(again.pieces_held().nonzero()[0]) == [0, 1, 2, 5]
    again.buffer[:] = whole
    again.buffer[20] ^= 1   # one flipped bit in the first file
    report = again.finish()
    assert not report["ok"] and "d/a: digest differs" in report["error"]
    assert not (tmp_path / "dest" / "d" / "a").exists()   # nothing wrong is put in place
    assert (tmp_path / "dest" / "d" / "s" / "b").read_bytes() == b"tail"
    assert (tmp_path / "dest" / ".d.part").exists()       # kept for another try


def test_links_and_paths_outside_the_destination_are_refused(tmp_path: Path) -> None:
    d = _dir(tmp_path)
    (d / "link").symlink_to(d / "a")
    with pytest.raises(OSError, match="symbolic link"):
        manifest(d, 1000)
    m = manifest(tmp_path / "d" / "a", 1000)
    m["files"][0]["path"] = "../../etc/evil"
    with pytest.raises(OSError, match="outside the destination"):
        Staging(tmp_path / "dest", m)


def test_the_root_refuses_files_that_changed_since_the_manifest(tmp_path: Path) -> None:
    d = _dir(tmp_path)
    m = manifest(d, 1000)
    (d / "s" / "b").write_bytes(b"TAIL")
    with pytest.raises(OSError, match="differs from the file the coordinator read"):
        source_bytes(d, m)
