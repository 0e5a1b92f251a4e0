"""At 80 columns (a pipe, a CI log, a narrow terminal) no table cuts a number or an identifier:
every value shown appears whole, no line is wider than 80, and left-out columns are named."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys

import pytest
from rich.console import Console

from mlitool.plumbing.console import table
from tests.support.paths import SAMPLES, shared_path

MOBILENET = "models/embarc_mli/mobilenet_v1_int8.tflite"


def _cli(*args, columns: int = 80) -> str:
    r = subprocess.run(
        [sys.executable, "-m", "mlitool", *map(str, args)],
        capture_output=True,
        text=True,
        env={"COLUMNS": str(columns), "PATH": "/usr/bin:/bin"},
    )
    assert r.returncode == 0, r.stderr
    return r.stdout


def _words(text: str) -> set[str]:
    return {w for line in text.splitlines() for w in re.split(r"[\s│┃]+", line) if w}


def _fits(text: str, width: int = 80) -> None:
    assert max(len(line) for line in text.splitlines()) <= width


def test_inspect_keeps_every_op_name_shape_and_count_whole():
    model = shared_path(MOBILENET)
    doc = json.loads(_cli("inspect", model, "--json"))
    text = _cli("inspect", model)
    _fits(text)
    words = _words(text)
    for op in doc["ops"]:
        assert op["type"] in words
        assert f"{op['macs']:,}" in words and f"{op['params']:,}" in words
        assert "[" + ",".join(map(str, op["output_shapes"][0])) + "]" in words
    assert "left out at 80 columns: weights, quant" in " ".join(text.split())


def test_convert_table_keeps_kernel_names_whole(tmp_path):
    model = shared_path(MOBILENET)
    doc = json.loads(_cli("convert", model, "-o", tmp_path, "--json"))
    text = _cli("convert", model, "-o", tmp_path)
    _fits(text)
    words = _words(text)
    for layer in doc["layers"]:
        assert (layer["kernel"] or "(view)") in words and layer["op"] in words


def test_verify_and_report_keep_numbers_whole():
    text = _cli("verify", SAMPLES / "cnn_int8.tflite", "-n", 4)
    _fits(text)
    doc = json.loads(_cli("verify", SAMPLES / "cnn_int8.tflite", "-n", 4, "--json"))
    words = _words(text)
    for row in doc["layers"]:
        assert f"{row['chained']['snr_db']:.2f}" in words
    report = _cli("report", SAMPLES / "cnn_int8.tflite", "-n", 2)
    _fits(report)
    assert "…" not in report


def test_report_tables_show_every_value_of_the_columns_they_keep():
    from mlitool.pipeline import ModelOptions
    from mlitool.report.command import ReportOptions, make_report
    from mlitool.report.render import terminal_text

    report = make_report(shared_path(MOBILENET), ModelOptions(), ReportOptions(samples=2))
    text = terminal_text(report, width=80)
    _fits(text)
    tables = [t for section in report.sections for t in section.tables]
    checked = 0
    for n, t in enumerate(tables):  # each table's text: from its title to the next
        start = text.index(t.title)
        end = text.index(tables[n + 1].title, start) if n + 1 < len(tables) else len(text)
        chunk = text[start:end]
        flat, words = " ".join(chunk.split()), _words(chunk)
        left_out = flat.split("left out at 80 columns:")[1] if "left out at" in flat else ""
        for i, col in enumerate(t.columns):
            if not col.terminal or col.header() in left_out:
                continue
            for row in t.rows:
                value = col.text(row[i])  # as people read it: separators, percentages
                if len(value) > 40 and " " in value:  # free text wraps between words
                    assert all(w in words for w in value.split()[:3]), value
                elif len(value) > 40:  # a fused TFLite name wraps inside its cell
                    assert any(w.startswith(value[:20]) for w in words), value
                elif " " not in value:
                    assert value in words, (t.title, col.header(), value)
                    checked += 1
    assert checked > 500


@pytest.mark.parametrize("width", [40, 60, 80, 120])
def test_table_drops_rightmost_columns_and_says_so(width):
    rows = [
        [str(i), f"layer_{i}_with_a_long_identifier", f"{i * 123456789:,}", "x" * 30, f"{i * 7:,}"]
        for i in range(5)
    ]
    buf = io.StringIO()
    Console(file=buf, width=width).print(
        table("t", ("#", "name", "MACs", "notes", "bytes"), rows, width=width)
    )
    text = buf.getvalue()
    _fits(text, width)
    words = _words(text)
    flat = " ".join(text.split())
    for r in rows:
        assert r[0] in words and r[1] in words  # the first two are always shown
        for value, header in ((r[2], "MACs"), (r[3], "notes"), (r[4], "bytes")):
            assert (
                value in words
                or f"left out at {width} columns:" in flat
                and header in flat.split("left out")[-1]
            )
