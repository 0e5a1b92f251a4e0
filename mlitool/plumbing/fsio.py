"""Atomic file output: all files of one command appear together, or none is created or replaced.

Each file's content comes as an iterable of byte chunks, so large outputs stream to disk without
being held in memory (and a content may be produced lazily, when its file is written). Every
file is first written to a temporary file in its target directory and fsynced; only when all of
them are complete and on disk are they moved into place with `os.replace`, and the directories
are then fsynced so the renames are durable too. On any error the temporary files are removed
and earlier outputs stay untouched; an OSError becomes an OutputError (exit 5) naming the file.

Temporary files are named `.NAME.PID.XXXX.tmp`: a run killed before it could remove its own
leaves them behind, and the next write of NAME removes those whose process is gone.

The fsync of each temporary file runs in a background thread as soon as the file is closed, so
the disk flush of a large file overlaps with producing the next one; no rename happens before
every fsync has succeeded, so a crash still leaves either the old files or the complete new ones.
"""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Iterable, Mapping
from glob import escape as glob_escape
from pathlib import Path

from mlitool.errors import OutputError

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
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            self.error = exc
        finally:
            os.close(self.fd)

    def wait(self) -> None:
        self.join()
        if self.error is not None:
            raise self.error


def make_dirs(path: str | Path) -> Path:
    """Create a directory and its parents (OutputError when the system refuses)."""
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot create the directory: {_reason(exc)}", str(path)) from None
    return path


def write_files_atomically(files: Mapping[str | Path, Content]) -> list[Path]:
    """Write every `path -> content`; returns the final paths in the given order."""
    staged: list[tuple[Path, str]] = []
    syncs: list[_Fsync] = []
    mode = 0o666 & ~_umask()
    path = None  # the file being worked on, for the error message
    try:
        for path, content in files.items():
            path = Path(path)
            remove_stale_temporaries(path)
            fd, tmp = tempfile.mkstemp(
                prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=path.parent
            )
            staged.append((path, tmp))
            try:
                with os.fdopen(fd, "wb", closefd=False) as fh:
                    for chunk in _chunks(content):
                        fh.write(chunk)
                os.chmod(tmp, mode)
            except BaseException:
                os.close(fd)
                raise
            syncs.append(_Fsync(fd))  # closes fd
        for (path, _), sync in zip(staged, syncs):  # noqa: B007 - `path` names a failing file
            sync.wait()
        for path, tmp in staged:
            os.replace(tmp, path)
        _fsync_dirs({path.parent for path, _ in staged})
    except BaseException as exc:
        for sync in syncs:
            sync.join()
        for _, tmp in staged:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
        if isinstance(exc, OSError):
            raise OutputError(f"cannot write: {_reason(exc)}", str(path)) from None
        raise
    return [path for path, _ in staged]


def remove_stale_temporaries(path: Path) -> None:
    """Remove the temporary files of `path` that a killed run left (their process is gone)."""
    try:
        leftovers = list(path.parent.glob(f".{glob_escape(path.name)}.*.*.tmp"))
    except OSError:
        return
    for tmp in leftovers:
        pid = tmp.name[len(path.name) + 2 :].split(".", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            try:
                os.unlink(tmp)
            except OSError:
                pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True


def _reason(exc: OSError) -> str:
    """The operating system's message ("No space left on device"), without the Python wrapping."""
    return exc.strerror or str(exc)


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
