"""Independent checks of report outputs: an HTML structure checker and a brute-force optimal
arena, used by the renderer, memory and end-to-end report tests."""

from __future__ import annotations

import itertools
from html.parser import HTMLParser

from mlitool.mli.memory.arena import Buffer

VOID = {
    "meta",
    "br",
    "img",
    "input",
    "link",
    "hr",
    "col",
    "wbr",
    "source",
    "area",
    "base",
    "embed",
    "param",
    "track",
}
SVG_VOID_OK = {"line", "rect", "circle", "path"}  # written as <x .../> (self-closing)


class HtmlChecker(HTMLParser):
    """Tag balance, every <svg>'s data-chart id, every table's data-table id, forbidden content."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.charts: list[str] = []
        self.tables: list[str] = []
        self.tags: set[str] = set()
        self.text: list[str] = []
        self.errors: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.add(tag)
        for k, v in attrs:
            if k in ("src", "href") and v and not v.startswith("#"):
                self.errors.append(f"external reference {k}={v}")
            if k.startswith("on"):
                self.errors.append(f"event handler {k}")
        if tag == "svg":
            self.charts.append(a.get("data-chart"))
        if tag == "table" and "data-table" in a:
            self.tables.append(a["data-table"])
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.add(tag)
        if tag not in SVG_VOID_OK and tag not in VOID:
            self.errors.append(f"self-closing <{tag}/>")

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"unbalanced </{tag}> (open: {self.stack[-3:]})")
        else:
            self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def parse_html(html: str) -> HtmlChecker:
    """The checked parse of a whole document: no errors, every tag closed."""
    p = HtmlChecker()
    p.feed(html)
    p.close()
    assert not p.errors, p.errors[:5]
    assert p.stack == [], p.stack
    return p


def brute_force_arena(buffers: list[Buffer], align: int = 1) -> int:
    """Optimal arena: the best lowest-fit over every order. (Lowest-fit in the offset order of any
    feasible placement never ends higher than it, so some order reaches the optimum.)"""

    def up(x):
        return -(-x // align) * align

    best = None
    for order in itertools.permutations(buffers):
        placed: list[tuple[Buffer, int]] = []
        for b in order:
            conflicts = [
                (o, o + up(c.size)) for c, o in placed if c.first <= b.last and b.first <= c.last
            ]
            candidates = sorted({0} | {hi for _, hi in conflicts})
            for off in candidates:
                if all(off + up(b.size) <= lo or off >= hi for lo, hi in conflicts):
                    placed.append((b, off))
                    break
        peak = max((o + up(c.size) for c, o in placed), default=0)
        best = peak if best is None else min(best, peak)
    return best or 0
