"""Terminal output with one width rule for every command, and tables that never cut a value.

Width: the terminal's width; piped or redirected, `$COLUMNS` when set, else 80 (rich's own
rule, the same for every command). Tables: numbers keep their full width and text wraps between
words, never inside one; when that does not fit, the rightmost columns (the least useful: callers
order columns by importance) are left out and the caption says which (`--json` has everything).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

_NUMBER = re.compile(r"^[-+]?[\d.,]+(e[-+]?\d+)?\s*(%|dB|B|x|×)?$|^[-–…]?$|^(inf|-inf|nan)$")
_CELL_PAD = 3  # rich's padding and the separator of one column
_LONG_WORD = 42  # longer words (fused TFLite names) may wrap inside their cell
ALWAYS_SHOWN = 2  # the leftmost columns (index, name) are never left out


def stdout_console() -> Console:
    return Console(highlight=False)


def stderr_console() -> Console:
    return Console(stderr=True, highlight=False)


def is_number(cell: str) -> bool:
    return bool(_NUMBER.match(cell.strip()))


def table(
    title: str | None,
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    width: int,
    caption: str | None = None,
    right: Sequence[bool] | None = None,
) -> Table:
    """A rich table of plain-text cells (never read as markup) that fits `width` columns:
    no column gets narrower than its widest number or word, so none is cut."""
    numeric = [all(is_number(r[i]) for r in rows) and bool(rows) for i in range(len(headers))]
    floor = [
        max([_widest_word(r[i], numeric[i]) for r in rows] + [_widest_word(h, False), 1])
        for i, h in enumerate(headers)
    ]
    shown = list(range(len(headers)))
    while len(shown) > ALWAYS_SHOWN and sum(floor[i] + _CELL_PAD for i in shown) + 1 > width:
        shown.pop()
    dropped = [headers[i] for i in range(len(headers)) if i not in shown]
    notes = [caption] if caption else []
    if dropped:
        notes.append(f"left out at {width} columns: {', '.join(dropped)} (see --json)")
    t = Table(
        title=Text(title) if title else None,
        caption=Text("; ".join(notes)) if notes else None,
        title_justify="left",
    )
    widths = _widths(
        [max([len(r[i]) for r in rows] + [len(headers[i])]) for i in shown],
        [floor[i] for i in shown],
        width - 1 - _CELL_PAD * len(shown),
    )
    for i, w in zip(shown, widths):
        justify = "right" if (right[i] if right is not None else numeric[i]) else "left"
        t.add_column(Text(headers[i]), justify=justify, width=w, overflow="fold")
    for r in rows:
        t.add_row(*(Text(r[i]) for i in shown))
    return t


def _widths(natural: list[int], floor: list[int], room: int) -> list[int]:
    """Every column as wide as its widest cell, then the widest text columns narrowed (never
    below their widest word) until the table fits `room`, or cannot shrink further."""
    widths = list(natural)
    while sum(widths) > room:
        slack = [w - f for w, f in zip(widths, floor)]
        widest = max(range(len(widths)), key=lambda i: (slack[i] > 0, widths[i]))
        if slack[widest] <= 0:
            break
        widths[widest] -= 1
    return widths


def _widest_word(cell: str, whole: bool) -> int:
    if whole:
        return len(cell)
    return min(max((len(w) for w in cell.split()), default=0), _LONG_WORD)
