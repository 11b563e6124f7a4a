"""Real files as a multicast's payload: the manifest, the root's bytes, the receivers' staging.

``tomography multicast --file PATH --dest DIR`` sends a file, or a
directory's regular files, instead of the synthetic payload.  The payload
is the files' bytes one after the other, in the order of the
:func:`manifest` (sorted relative paths), so every method moves one byte
range as before:

* the coordinator reads ``PATH`` to build the manifest: each file's
  relative path, size, mode and BLAKE2b digest, the digest of every piece
  and of the whole;
* the root reads the same ``PATH`` (:func:`source_bytes`) and refuses to
  send files that differ from the manifest;
* each receiver writes what arrives into one staging file,
  ``DIR/.NAME.part`` (:class:`Staging`), checks the free space before the
  first byte, and at the end splits it into the files, verifying each
  one's size and digest, setting its mode, and renaming it into place.  A
  staging file left by a killed receiver is kept: its pieces that match
  the manifest count as received by the next MOB or Robber multicast to
  the same place, which fetches only the rest.
"""

from __future__ import annotations

import gc
import hashlib
import mmap
import os
import shutil
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["manifest", "range_digest", "source_bytes", "Staging", "Files", "DIGEST_SIZE"]

DIGEST_SIZE = 16   # bytes of a piece's BLAKE2b digest
READ = 1 << 20


def _entries(path: Path) -> list[tuple[str, Path]]:
    """The regular files to send under ``path``: (relative path, path), sorted."""
    if path.is_file():
        return [(path.name, path)]
    if not path.is_dir():
        raise OSError(f"--file {path}: no such file or directory")
    found = []
    for item in sorted(path.rglob("*")):
        if item.is_symlink():
            raise OSError(f"--file {path}: {item.relative_to(path)} is a symbolic link; "
                          "the files are sent as they are, links are not followed")
        if item.is_file():
            found.append((str(Path(path.name) / item.relative_to(path)), item))
        elif not item.is_dir():
            raise OSError(f"--file {path}: {item.relative_to(path)} is not a regular file")
    if not found:
        raise OSError(f"--file {path}: the directory has no file to send")
    return found


def manifest(path: str | os.PathLike[str], piece: int) -> dict[str, Any]:
    """What a receiver must end up with: files, sizes, modes, digests (whole and per piece).

    Parameters
    ----------
    path : path
        A file, or a directory (its regular files, recursively).
    piece : int
        Bytes of a piece (the digests a resumed MOB or Robber receiver checks).

    Returns
    -------
    dict
        ``name``, ``files`` (``path`` relative to the destination, ``size``,
        ``mode``, ``digest``), ``size``, ``digest``, ``piece``, ``pieces``.

    Examples
    --------
    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp()) / "data"
    >>> (d / "sub").mkdir(parents=True)
    >>> _ = (d / "a.txt").write_bytes(b"hello"); _ = (d / "sub" / "b").write_bytes(b"!")
    >>> m = manifest(d, 4)
    >>> [f["path"] for f in m["files"]], m["size"], len(m["pieces"])
    (['data/a.txt', 'data/sub/b'], 6, 2)
    """
    path = Path(path)
    files, whole = [], hashlib.blake2b()
    pieces: list[str] = []
    current = hashlib.blake2b(digest_size=DIGEST_SIZE)
    filled = 0
    for relative, item in _entries(path):
        digest = hashlib.blake2b()
        size = 0
        with open(item, "rb") as fh:
            while block := fh.read(READ):
                digest.update(block)
                whole.update(block)
                size += len(block)
                view = memoryview(block)
                while len(view):
                    take = min(piece - filled, len(view))
                    current.update(view[:take])
                    filled += take
                    view = view[take:]
                    if filled == piece:
                        pieces.append(current.hexdigest())
                        current, filled = hashlib.blake2b(digest_size=DIGEST_SIZE), 0
        files.append({"path": relative, "size": size,
                      "mode": stat.S_IMODE(item.stat().st_mode), "digest": digest.hexdigest()})
    if filled:
        pieces.append(current.hexdigest())
    total = sum(f["size"] for f in files)
    if total == 0:
        raise OSError(f"--file {path}: nothing to send (every file is empty)")
    return {"name": path.name, "files": files, "size": total, "digest": whole.hexdigest(),
            "piece": piece, "pieces": pieces}


def source_bytes(path: str | os.PathLike[str], files: dict[str, Any]) -> Any:
    """The root's payload: the manifest's files under ``path``, checked against it.

    One file is mapped read-only (no copy in memory); a directory's files are
    read one after the other into one buffer.
    """
    path = Path(path)
    base = path.parent
    if len(files["files"]) == 1 and path.is_file():
        with open(path, "rb") as fh:
            data: Any = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        blocks = [memoryview(data)]
    else:
        data = bytearray()
        for f in files["files"]:
            with open(base / f["path"], "rb") as fh:
                data += fh.read()
        blocks, at = [], 0
        for f in files["files"]:
            blocks.append(memoryview(data)[at:at + f["size"]])
            at += f["size"]
    for f, block in zip(files["files"], blocks):
        ok = len(block) == f["size"] and hashlib.blake2b(block).hexdigest() == f["digest"]
        block.release()
        if not ok:
            raise OSError(f"{base / f['path']} on the root differs from the file the "
                          "coordinator read (size or digest)")
    return data


def range_digest(path: str | os.PathLike[str], files: dict[str, Any], offset: int,
                 length: int) -> str:
    """The BLAKE2b digest of the payload's bytes ``offset`` to ``offset + length``.

    Examples
    --------
    >>> import tempfile
    >>> f = Path(tempfile.mkdtemp()) / "x"
    >>> _ = f.write_bytes(b"abcdef")
    >>> range_digest(f, manifest(f, 4), 2, 3) == hashlib.blake2b(b"cde").hexdigest()
    True
    """
    base = Path(path).parent
    digest = hashlib.blake2b()
    at = 0
    for f in files["files"]:
        lo, hi = max(offset, at), min(offset + length, at + f["size"])
        if lo < hi:
            with open(base / f["path"], "rb") as fh:
                fh.seek(lo - at)
                left = hi - lo
                while left:
                    block = fh.read(min(READ, left))
                    digest.update(block)
                    left -= len(block)
        at += f["size"]
    return digest.hexdigest()


def _safe(relative: str) -> Path:
    rel = Path(relative)
    if rel.is_absolute() or ".." in rel.parts or not rel.parts:
        raise OSError(f"the manifest names {relative!r}, outside the destination")
    return rel


class Staging:
    """A receiver's staging file for one payload of files, mapped into memory.

    Parameters
    ----------
    dest : path
        The destination directory on this host (created if missing).
    files : dict
        The :func:`manifest`.

    Raises
    ------
    OSError
        The destination cannot be created or written, or has too little
        free space for what is still missing.

    Examples
    --------
    >>> import tempfile
    >>> src = Path(tempfile.mkdtemp()) / "x.bin"
    >>> _ = src.write_bytes(b"0123456789"); src.chmod(0o640)
    >>> m = manifest(src, 4)
    >>> s = Staging(Path(tempfile.mkdtemp()), m)
    >>> s.buffer[:] = src.read_bytes()
    >>> report = s.finish()
    >>> report["ok"], (s.dest / "x.bin").read_bytes(), oct((s.dest / "x.bin").stat().st_mode & 0o777)
    (True, b'0123456789', '0o640')
    """

    def __init__(self, dest: str | os.PathLike[str], files: dict[str, Any]) -> None:
        self.dest, self.files = Path(dest), files
        for f in files["files"]:
            _safe(f["path"])
        if len(_safe(files["name"]).parts) != 1:
            raise OSError(f"the manifest's name {files['name']!r} is not a file name")
        self.dest.mkdir(parents=True, exist_ok=True)
        self.path = self.dest / f".{files['name']}.part"
        size = int(files["size"])
        self.kept = kept = min(self.path.stat().st_size, size) if self.path.exists() else 0
        free = shutil.disk_usage(self.dest).free
        if free + kept < 2 * size:   # the staging file, and the files split from it
            raise OSError(f"{self.dest} has {free} bytes free; the files need "
                          f"{2 * size - kept} (twice their size while they are put in place, "
                          "less what a stopped run left)")
        self.fh = open(self.path, "r+b" if kept else "w+b")
        self.fh.truncate(size)
        self.buffer = mmap.mmap(self.fh.fileno(), size)

    def pieces_held(self) -> np.ndarray:
        """Which pieces the staging file already holds, right (a killed receiver's work)."""
        piece = int(self.files["piece"])
        held = np.zeros(len(self.files["pieces"]), dtype=bool)
        if not self.kept:
            return held
        with memoryview(self.buffer) as view:
            for i, want in enumerate(self.files["pieces"]):
                with view[i * piece:(i + 1) * piece] as chunk:
                    held[i] = hashlib.blake2b(chunk, digest_size=DIGEST_SIZE).hexdigest() == want
        return held

    def close(self) -> None:
        """Unmap and close, keeping the staging file (for a later resume)."""
        if self.buffer.closed:
            return
        self.buffer.flush()
        for _ in range(50):   # a connection's thread may still be letting go of a view
            try:
                self.buffer.close()
                break
            except BufferError:
                gc.collect()
                time.sleep(0.05)
        self.fh.close()

    @staticmethod
    def _put(part: memoryview, f: dict[str, Any], target: Path) -> str:
        """Write one file's bytes to ``target`` if their digest is right; what went wrong."""
        if hashlib.blake2b(part).hexdigest() != f["digest"]:
            return "digest differs from the root's"
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(f".{target.name}.tmp")
            with open(tmp, "wb") as out:
                out.write(part)
                out.flush()
                os.fsync(out.fileno())
            os.chmod(tmp, f["mode"])
            os.replace(tmp, target)
        except OSError as exc:
            return f"cannot write {target}: {exc.strerror or exc}"
        size = target.stat().st_size
        return "" if size == f["size"] else f"{size} bytes written of {f['size']}"

    def finish(self) -> dict[str, Any]:
        """Split the staging file into the files, each verified, its mode set, renamed in place.

        Returns
        -------
        dict
            ``ok``, ``files`` (each ``path``, ``ok``, ``error``) and ``error``;
            the staging file is removed once every file is in place.
        """
        results, at = [], 0
        for f in self.files["files"]:
            target = self.dest / _safe(f["path"])
            with memoryview(self.buffer) as view, view[at:at + f["size"]] as part:
                error = self._put(part, f, target)
            at += f["size"]
            results.append({"path": f["path"], "ok": not error, "error": error})
        ok = all(r["ok"] for r in results)
        self.close()
        if ok:
            self.path.unlink(missing_ok=True)
        bad = [f"{r['path']}: {r['error']}" for r in results if not r["ok"]]
        return {"ok": ok, "files": results, "error": "; ".join(bad)}


@dataclass(frozen=True)
class Files:
    """Real files as a run's payload: where they come from on the root, where they go.

    Attributes
    ----------
    source : str
        The file or directory on the root (and on the coordinator's machine).
    dest : str
        The directory every receiver puts them in.
    manifest : dict
        :func:`manifest` of ``source``.
    """

    source: str
    dest: str
    manifest: dict[str, Any]

    def command(self, host: str, root: bool) -> dict[str, Any]:
        """The ``file`` part of ``host``'s ``prepare`` command (``{host}`` in ``dest`` is
        its name: one directory per host on a shared file system, or one machine)."""
        return ({"source": self.source, "manifest": self.manifest} if root
                else {"dest": self.dest.replace("{host}", host), "manifest": self.manifest})

    def digest(self, offset: int, length: int) -> str:
        """The digest a receiver of these bytes must report."""
        if offset == 0 and length == self.manifest["size"]:
            return str(self.manifest["digest"])
        return range_digest(self.source, self.manifest, offset, length)

    def to_meta(self) -> dict[str, Any]:
        """What ``meta.json`` records (the manifest without the pieces' digests)."""
        return {"source": self.source, "dest": self.dest,
                **{k: v for k, v in self.manifest.items() if k != "pieces"}}
