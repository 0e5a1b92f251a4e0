"""What a long command shows while it runs: a rich progress bar on stderr (done / total,
elapsed, time left; the finished bar stays on screen with the total time). Shown only when stderr
is a terminal, never with --json or --quiet."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator


class Progress:
    """Named stages with a known number of steps; this one shows nothing."""

    def stage(self, label: str, total: int) -> Callable[[int], None]:
        return lambda k: None

    def close(self) -> None:
        pass


class RichProgress(Progress):
    """A rich progress bar on stderr, one line per stage."""

    def __init__(self, console=None):
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.progress import (
            Progress as _P,
        )

        self._p = _P(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("left"),
            TimeRemainingColumn(),
            console=console or Console(stderr=True),
        )
        self._p.start()

    def stage(self, label: str, total: int) -> Callable[[int], None]:
        task = self._p.add_task(label, total=max(total, 1))
        return lambda k: self._p.advance(task, k)

    def close(self) -> None:
        self._p.stop()


def wanted(*, as_json: bool = False, quiet: bool = False) -> bool:
    return sys.stderr.isatty() and not as_json and not quiet


@contextlib.contextmanager
def progress_for(show: bool) -> Iterator[Progress]:
    p = RichProgress() if show else Progress()
    try:
        yield p
    finally:
        p.close()
