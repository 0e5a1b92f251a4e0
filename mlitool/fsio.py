"""Atomic file output: all files of one command appear together, or none is created or replaced.

Each file's content comes as an iterable of byte chunks, so large outputs stream to disk without
being held in memory (and a content may be produced lazily, when its file is written). Every
file is first written to a temporary file in its target directory and fsynced; only when all of
them are complete and on disk are they moved into place with `os.replace`, and the directories
are then fsynced so the renames are durable too. On any error the temporary files are removed
and earlier outputs stay untouched.

The fsync of each temporary file runs in a background thread as soon as the file is closed, so
the disk flush of a large file overlaps with producing the next one; no rename happens before
every fsync has succeeded, so a crash still leaves either the old files or the complete new ones.
"""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path

Content = bytes | str | Iterable[bytes]


def _chunks(content: Content) -> Iterable[bytes]:
    if isinstance(content, str):
        return (content.encode("utf-8"),)
    if isinstance(content, (bytes, bytearray, memoryview)):
        return (content,)
    return content


class _Fsync(threading.Thread):
    """fsync and close one file descriptor in the background; `wait` re-raises its error."""

    def __init__(self, fd: int):
        super().__init__(daemon=True)
        self.fd, self.error = fd, None
        self.start()

    def run(self) -> None:
        try:
            os.fsync(self.fd)
        except BaseException as exc:         # noqa: BLE001 - handed to the waiting thread
            self.error = exc
        finally:
            os.close(self.fd)

    def wait(self) -> None:
        self.join()
        if self.error is not None:
            raise self.error


def write_files_atomically(files: Mapping[str | Path, Content]) -> list[Path]:
    """Write every `path -> content`; returns the final paths in the given order."""
    staged: list[tuple[Path, str]] = []
    syncs: list[_Fsync] = []
    mode = 0o666 & ~_umask()
    try:
        for path, content in files.items():
            path = Path(path)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            staged.append((path, tmp))
            try:
                with os.fdopen(fd, "wb", closefd=False) as fh:
                    for chunk in _chunks(content):
                        fh.write(chunk)
                os.chmod(tmp, mode)
            except BaseException:
                os.close(fd)
                raise
            syncs.append(_Fsync(fd))         # closes fd
        for sync in syncs:
            sync.wait()
        for path, tmp in staged:
            os.replace(tmp, path)
        _fsync_dirs({path.parent for path, _ in staged})
    except BaseException:
        for sync in syncs:
            sync.join()
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
