"""What `mlitool tune` shows and writes from its document: the verdict line, the Pareto table
(one row per search step), the chosen mix as a ready mlitool.toml, and an HTML page with the
Pareto front as a chart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mlitool.tune.mixes import RANK


def _snr(v) -> str:
    return v if isinstance(v, str) else f"{v:.2f}"


def _opt(v, fmt: str = "{}") -> str:
    return "-" if v is None else fmt.format(v)


def change_text(changes: list[dict]) -> str:
    if not changes:
        return "start: all sa8"
    c = changes[-1]
    down = "back to " if RANK[c["to"]] < RANK[c["from"]] else ""
    ops = (
        " + ".join(f"op {c['op']} {c['type']}" for c in changes)
        if len(changes) <= 2
        else f"{len(changes)} ops ({changes[0]['op']}..{changes[-1]['op']})"
    )
    return f"{ops}: {down}{c['to']}"


def summary_text(doc: dict[str, Any]) -> str:
    """One line: MET / NOT MET, the targets, the chosen mix's figures and formats."""
    t = doc["targets"]
    given = [
        f"{name} {t[key]:g}"
        for name, key in (
            ("--min-snr", "min_snr"),
            ("--max-lsb", "max_lsb"),
            ("--min-accuracy", "min_accuracy"),
            ("--ram-budget", "ram_budget"),
            ("--rom-budget", "rom_budget"),
        )
        if t[key] is not None
    ]
    c = doc["chosen"]
    verdict = "MET" if doc["met"] else "NOT MET (closest: step {})".format(c["step"])
    counts = ", ".join(f"{n} {f}" for f, n in c["formats"].items() if n)
    text = f"{verdict} ({', '.join(given)}): {figures_text(c)}; layers: {counts}"
    if doc["met"]:
        return text
    stopped = doc["search"].get("stopped")
    return text + f"; {'; '.join(doc['failed'])}" + (f" ({stopped})" if stopped else "")


def figures_text(f: dict) -> str:
    parts = [f"SNR {_snr(f['snr_db'])} dB"]
    if f["max_lsb"] is not None:
        parts.append(f"max {f['max_lsb']} LSB")
    if f["accuracy"] is not None:
        parts.append(f"top-1 {f['accuracy']:.2f}%")
    return ", ".join(parts + [f"RAM {f['ram_bytes']:,} B", f"ROM {f['rom_bytes']:,} B"])


def all_fx16_text(doc: dict[str, Any]) -> str:
    """The all-fx16 figures, or why there are none: lowering refuses the model in fx16 (its
    kernels, e.g. fallback C, take only sa8)."""
    fx = doc["all_fx16"]
    return "refused by lowering" if fx is None else figures_text(fx)


def render(doc: dict[str, Any], console=None) -> None:
    from mlitool.plumbing.console import stdout_console, table

    console = console or stdout_console()
    out = lambda s: console.print(s, markup=False, highlight=False)  # noqa: E731
    out(f"{Path(doc['model']).stem}: {summary_text(doc)}")
    inp = doc["inputs"]
    out(inp["note"] if inp.get("random") else f"inputs: {inp['source']} ({inp['samples']} samples)")
    out(f"MLI {doc['mli']}, {doc['arith']['build']}; config: {doc['config'] or 'none'}")
    rows = [
        [
            str(st["step"]),
            change_text(st["change"]),
            _snr(st["snr_db"]),
            _opt(st["max_lsb"]),
            _opt(st["accuracy"], "{:.2f}"),
            f"{st['ram_bytes']:,}",
            f"{st['rom_bytes']:,}",
            "yes" if st["met"] else "no",
        ]
        for st in doc["steps"]
    ]
    caption = f"chosen: step {doc['chosen']['step']}; all fx16: {all_fx16_text(doc)}"
    console.print(
        table(
            "search steps (Pareto table)",
            ("step", "change", "SNR dB", "max LSB", "top-1 %", "RAM B", "ROM B", "met"),
            rows,
            width=console.width,
            caption=caption,
        )
    )


def _comment(text: str) -> str:
    """A TOML comment line: a line break or other control character in a file or tensor name
    would end it (TOML forbids them in comments), so they become spaces."""
    return "# " + "".join(" " if ord(c) < 32 or ord(c) == 127 else c for c in text)


def config_toml(doc: dict[str, Any]) -> str:
    """The chosen mix as a mlitool.toml: the settings tune ran with, one [[layer]] per op not
    in sa8, each with a comment giving the gain measured when it was promoted."""
    c = doc["chosen"]
    inp = doc["inputs"]
    data = (
        inp["source"]
        if not inp.get("random")
        else f"{inp['samples']} random samples (seed {inp['seed']})"
    )
    lines = [
        _comment(f"Written by `mlitool tune` for {Path(doc['model']).name}: {summary_text(doc)}"),
        _comment(f"Measured on {data}, {doc['arith']['build']}."),
        'format = "sa8"',
        f'mli = "{doc["mli"]}"',
    ]
    if doc["fast_memory"] is not None:
        lines.append(f"fast_memory = {doc['fast_memory']}")
    for la in c["layers"]:
        g = la["gain"]
        lines += [
            "",
            "[[layer]]",
            _comment(
                f"{la['type']} {la['tensor']!r}: step {la['step']}, SNR {_signed(g['snr_db'])} "
                f"dB, RAM {g['ram_bytes']:+,} B, ROM {g['rom_bytes']:+,} B"
            ),
            f"index = {la['op']}",
            f'format = "{la["format"]}"',
        ]
    return "\n".join(lines) + "\n"


def _signed(v) -> str:
    return v if isinstance(v, str) else f"{v:+.2f}"


def html_page(doc: dict[str, Any]) -> str:
    """A self-contained page: the verdict and the Pareto front (output SNR against RAM + ROM,
    one point per step, the chosen one marked) as one SVG."""
    import html

    from mlitool.report.svg import escape

    steps = doc["steps"]
    pts = [(st["ram_bytes"] + st["rom_bytes"], _num(st["snr_db"])) for st in steps]
    fx = doc["all_fx16"]
    ref = None if fx is None else (fx["ram_bytes"] + fx["rom_bytes"], _num(fx["snr_db"]))
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    if ref is not None:
        xs.append(ref[0])
        ys.append(ref[1])
    snr_t = doc["targets"]["min_snr"]
    if snr_t is not None:
        ys.append(snr_t)
    w, h, left, bottom, top, right = 720, 380, 70, 50, 20, 20
    x0, x1 = min(xs), max(xs) if max(xs) > min(xs) else min(xs) + 1
    y0, y1 = min(ys), max(ys) if max(ys) > min(ys) else min(ys) + 1

    def sx(x):
        return left + (x - x0) / (x1 - x0) * (w - left - right)

    def sy(y):
        return h - bottom - (y - y0) / (y1 - y0) * (h - top - bottom)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
        f'viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">',
        f'<line x1="{left}" y1="{h - bottom}" x2="{w - right}" y2="{h - bottom}" stroke="#333"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{h - bottom}" stroke="#333"/>',
        f'<text x="{(w + left) / 2:.1f}" y="{h - 12}" text-anchor="middle">RAM + ROM (bytes): '
        f"{x0:,} .. {x1:,}</text>",
        f'<text x="14" y="{(h - bottom + top) / 2:.1f}" text-anchor="middle" '
        f'transform="rotate(-90 14 {(h - bottom + top) / 2:.1f})">output SNR (dB): '
        f"{y0:.1f} .. {y1:.1f}</text>",
    ]
    if snr_t is not None:
        parts.append(
            f'<line x1="{left}" y1="{sy(snr_t):.1f}" x2="{w - right}" y2="{sy(snr_t):.1f}" '
            f'stroke="#c00" stroke-dasharray="4 3"><title>--min-snr {snr_t:g}</title></line>'
        )
    path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in pts)
    parts.append(f'<polyline points="{path}" fill="none" stroke="#36c"/>')
    for st, (x, y) in zip(steps, pts):
        chosen = st["step"] == doc["chosen"]["step"]
        tip = escape(f"step {st['step']}: {change_text(st['change'])}; {figures_text(st)}")
        parts.append(
            f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="{6 if chosen else 4}" '
            f'fill="{"#c60" if chosen else "#36c"}"><title>{tip}</title></circle>'
        )
    if ref is not None:
        tip = escape(f"all fx16: {figures_text(fx)}")
        parts.append(
            f'<rect x="{sx(ref[0]) - 4:.1f}" y="{sy(ref[1]) - 4:.1f}" width="8" height="8" '
            f'fill="#999"><title>{tip}</title></rect>'
        )
    parts.append("</svg>")
    title = html.escape(f"mlitool tune: {Path(doc['model']).name}")
    return (
        f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{title}</title></head>'
        f"<body><h1>{title}</h1><p>{html.escape(summary_text(doc))}</p>"
        "<p>Each blue point is a step of the search (hover for the change); the orange point is "
        f"the chosen mix, the grey square all fx16 ({html.escape(all_fx16_text(doc))}), the "
        "dashed line --min-snr.</p>" + "".join(parts) + "</body></html>\n"
    )


def _num(v) -> float:
    from mlitool.tune.goal import SNR_CLAMP

    v = float(v) if isinstance(v, str) else v
    return max(-SNR_CLAMP, min(SNR_CLAMP, v))
