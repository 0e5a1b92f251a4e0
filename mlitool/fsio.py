"""Atomic file output: all files of one command appear together, or none is created or replaced.

Each file's content comes as an iterable of byte chunks, so large outputs stream to disk without
being held in memory. Every file is first written to a temporary file in its target directory
and fsynced; only when all of them are complete are they moved into place with `os.replace`.
On any error the temporary files are removed and earlier outputs stay untouched.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

Content = bytes | str | Iterable[bytes]


def _chunks(content: Content) -> Iterable[bytes]:
    if isinstance(content, str):
        return (content.encode("utf-8"),)
    if isinstance(content, (bytes, bytearray, memoryview)):
        return (bytes(content),)
    return content


def write_files_atomically(files: Mapping[str | Path, Content]) -> list[Path]:
    """Write every `path -> content`; returns the final paths in the given order."""
    staged: list[tuple[Path, str]] = []
    try:
        for path, content in files.items():
            path = Path(path)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            staged.append((path, tmp))
            with os.fdopen(fd, "wb") as fh:
                for chunk in _chunks(content):
                    fh.write(chunk)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, 0o666 & ~_umask())
        for path, tmp in staged:
            os.replace(tmp, path)
        _fsync_dirs({path.parent for path, _ in staged})
    except BaseException:
        for _, tmp in staged:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
        raise
    return [path for path, _ in staged]


def write_file_atomically(path: str | Path, content: Content) -> Path:
    return write_files_atomically({path: content})[0]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _fsync_dirs(dirs: set[Path]) -> None:
    """Make the renames durable (best effort: not every platform can open a directory)."""
    for d in sorted(dirs):
        try:
            fd = os.open(d, os.O_RDONLY)
        except OSError:
            continue
        try:
            os.fsync(fd)
        except OSError:
            pass
        finally:
            os.close(fd)
