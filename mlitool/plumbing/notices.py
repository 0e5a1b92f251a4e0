"""Warnings as people read them on stderr: one line per kind, however many tensors it concerns.

The reader and lowering word a warning about one tensor or op as `SUBJECT: TEXT`, where SUBJECT
is `tensor N 'NAME' of subgraph K` or `op N (TYPE)[ of subgraph K]` and TEXT does not depend on
the subject; warnings with the same TEXT are one kind. The JSON documents keep every warning
as it is; only the terminal groups them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

NAMED = 3  # subjects named on a grouped line; the rest are counted

_SUBJECT = re.compile(r"((tensor|op) \d+ (?:'.*'|\(.*?\)))( of subgraph \d+)?: (.+)", re.S)


def warning_lines(warnings: Iterable[str]) -> list[str]:
    """One line per kind of warning, in the order each kind first occurs: a warning alone as it
    is; a kind that concerns several subjects with their count and the first NAMED of them."""
    groups: dict[tuple[bool, str], list[tuple[str, str, str]]] = {}
    for w in warnings:
        m = _SUBJECT.fullmatch(w)
        if m is None:
            groups.setdefault((False, w), []).append(("", "", ""))
        else:
            subject, noun, where, text = m.groups()
            groups.setdefault((True, text), []).append((subject, noun, where or ""))
    lines = []
    for (has_subject, text), subjects in groups.items():
        first = subjects[0]
        if not has_subject:  # no subject: the same text repeated is said once
            lines.append(text if len(subjects) == 1 else f"{text} ({len(subjects)} times)")
        elif len(subjects) == 1:
            lines.append(f"{first[0]}{first[2]}: {text}")
        else:
            nouns = {s[1] for s in subjects}
            wheres = {s[2] for s in subjects}
            noun = f"{nouns.pop()}s" if len(nouns) == 1 else "tensors and ops"
            where = wheres.pop() if len(wheres) == 1 else ""
            named = [s[0] if where else s[0] + s[2] for s in subjects[:NAMED]]
            more = f" and {len(subjects) - NAMED} more" if len(subjects) > NAMED else ""
            lines.append(f"{len(subjects)} {noun}{where}: {text} ({', '.join(named)}{more})")
    return lines


def one_line(text: str) -> str:
    """Control characters (from names in a hostile file) escaped: the message stays one line."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
