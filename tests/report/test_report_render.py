"""Report renderers: HTML structure and charts, JSON / CSV / Markdown content, determinism,
escaping of hostile text, non-finite values, atomic files."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest

from mlitool.report.build import LayerAccuracy, build_report
from mlitool.report.document import Chart, Report, Section, Series, make_table
from mlitool.report.html import render_html
from mlitool.report.render import (
    csv_files,
    render_csv,
    render_json,
    render_markdown,
    terminal_text,
    write_html,
    write_json,
)
from tests.support.paths import shared_path
from tests.support.report_checks import parse_html

EVIL = "<script>alert(\"x\")</script> & 'q' | *b* `c`"


def _small_report() -> Report:
    t = make_table(
        "layers",
        "Layers " + EVIL,
        [("name", "Name"), ("snr", "SNR", "dB", 2), ("bytes", "Bytes", "B"), ("ok", "OK")],
        [
            (EVIL, 12.3456, 100, True),
            ("b", float("inf"), np.int64(7), False),
            ("c", float("nan"), None, True),
            ("d", -0.0001, 0, False),
            ("e", float("-inf"), 3, True),
        ],
        note="note " + EVIL,
    )
    charts = (
        Chart(
            "snr",
            "SNR " + EVIL,
            "bars",
            (EVIL, "b", "c", "d"),
            (
                Series("chained", (10.0, float("inf"), None, -5.0)),
                Series("isolated", (12.0, 30.0, float("nan"), float("-inf"))),
            ),
            x_label="layer",
            y_label="dB",
        ),
        Chart(
            "mem",
            "Memory",
            "stacked",
            ("a", "b"),
            (Series("weights", (100, 50)), Series("bias", (10, 0))),
        ),
        Chart(
            "spread",
            "Scales",
            "range",
            ("a", "b"),
            (
                Series("min", (1e-4, 1e-3)),
                Series("median", (2e-4, 5e-3)),
                Series("max", (5e-4, 1e-2)),
            ),
            log_y=True,
            precision=6,
        ),
        Chart(
            "hist",
            "Weights",
            "histogram",
            ("b0", "b1", "b2"),
            (Series("count", (3, 0, 9)),),
            bin_edges=(-1.0, 0.0, 1.0, 2.0),
        ),
    )
    return Report(
        "Report " + EVIL,
        {"model": EVIL, "n": 3},
        (Section("main", "Main " + EVIL, ("para " + EVIL,), (t,), charts),),
    )


def test_html_parses_has_every_chart_and_escapes():
    r = _small_report()
    html = render_html(r)
    p = parse_html(html)
    assert p.charts == ["snr", "mem", "spread", "hist"]
    assert p.tables == ["layers"]
    assert "script" not in p.tags and "link" not in p.tags and "img" not in p.tags
    assert "<script>" not in html  # only the escaped form
    assert "&lt;script&gt;" in html and "&amp;" in html and "&quot;x&quot;" in html
    assert EVIL in "".join(p.text)  # the text survives, as text
    assert "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "@import" not in html and "url(" not in html
    # non-finite values: marked on the chart, spelled out in the table
    assert ">inf</text>" in html and ">-inf</text>" in html and ">n/a<" in html
    assert '<td class="num">inf</td>' in html and '<td class="num">nan</td>' in html


def test_renders_are_byte_identical():
    a, b = _small_report(), _small_report()
    assert render_html(a) == render_html(b)
    assert render_json(a) == render_json(b)
    assert render_markdown(a) == render_markdown(b)
    assert csv_files(a) == csv_files(b)
    assert terminal_text(a) == terminal_text(b)


def test_json_values_and_schema():
    doc = json.loads(render_json(_small_report()))
    assert doc["schema"] == "mlitool-report" and doc["schema_version"] == 1
    assert doc["meta"] == {"model": EVIL, "n": 3}
    tab = doc["sections"][0]["tables"][0]
    assert [c["key"] for c in tab["columns"]] == ["name", "snr", "bytes", "ok"]
    assert tab["rows"][0] == {"name": EVIL, "snr": 12.35, "bytes": 100, "ok": True}
    assert [r["snr"] for r in tab["rows"]] == [12.35, "inf", "nan", 0.0, "-inf"]
    assert tab["rows"][2]["bytes"] is None
    ch = {c["id"]: c for c in doc["sections"][0]["charts"]}
    assert ch["snr"]["series"][0]["values"] == [10.0, "inf", None, -5.0]
    assert ch["hist"]["bin_edges"] == [-1.0, 0.0, 1.0, 2.0]
    assert ch["spread"]["log_y"] is True


def test_csv_and_markdown_content(tmp_path):
    r = _small_report()
    paths = render_csv(r, tmp_path / "csv")
    assert [p.name for p in paths] == ["main__layers.csv"]
    rows = list(csv.reader(io.StringIO(paths[0].read_text())))
    assert rows[0] == ["name", "snr", "bytes", "ok"]
    assert rows[1] == [EVIL, "12.35", "100", "yes"]
    assert [row[1] for row in rows[1:]] == ["12.35", "inf", "nan", "0.00", "-inf"]
    assert rows[3][2] == ""
    md = render_markdown(r)
    assert "<script>" not in md and "&lt;script&gt;" in md
    line = [ln for ln in md.splitlines() if ln.startswith("| ") and "12.35" in ln][0]
    cells = [c.strip() for c in line.strip("|").split(" | ")]
    assert cells[1:] == ["12.35", "100", "yes"]  # the escaped | did not split the row
    assert "| SNR \\[dB\\] |" in md or "SNR \\[dB\\]" in md
    text = terminal_text(r)
    assert "12.35" in text and "inf" in text and "[script]" not in text


def test_atomic_writes_replace_whole_files(tmp_path):
    r = _small_report()
    p = write_html(r, tmp_path / "r.html")
    assert p.read_text() == render_html(r)
    q = write_json(r, tmp_path / "r.json")
    assert q.read_text() == render_json(r)
    assert sorted(x.name for x in tmp_path.iterdir()) == ["r.html", "r.json"]  # no temp files


def test_document_rejects_bad_input():
    with pytest.raises(ValueError):
        make_table("Bad Id", "t", [("a", "A")], [])
    with pytest.raises(ValueError):
        make_table("t", "t", [("a", "A")], [(1, 2)])
    with pytest.raises(ValueError):
        Chart("c", "c", "range", ("a",), (Series("lo", (1,)),))
    t = make_table("t", "t", [("a", "A")], [(1,)])
    with pytest.raises(ValueError):
        Report("r", (), (Section("s", "s", (), (t,)), Section("s2", "s", (), (t,))))


# --- a real model ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def resnet_report():
    from mlitool.mli.lower.driver import lower
    from mlitool.tflite.reader import read_model

    path = shared_path("models", "mlperf_tiny", "resnet8_int8.tflite")
    graph = read_model(path).main
    model = lower(graph, format="sa8", mli_version="2.0", source=str(path))
    acc = [
        LayerAccuracy(
            i, layer.kind, 40.0 - i, float("inf") if i == 0 else 50.0 - i, 1, 31 if i == 9 else 1
        )
        for i, layer in enumerate(model.layers)
    ]
    return model, build_report(model, graph, accuracy=acc)


def test_real_report_all_forms_agree(resnet_report, tmp_path):
    model, r = resnet_report
    html = render_html(r)
    p = parse_html(html)
    mac = [i for i, layer in enumerate(model.layers) if layer.kind in ("conv2d", "fully_connected")]
    expected = (
        ["arena-plan", "memory-breakdown", "scale-spread"]
        + [f"weights-hist-{i}" for i in mac]
        + ["snr-layers", "lsb-layers"]
    )
    assert p.charts == expected
    doc = json.loads(render_json(r))
    sections = {s["id"]: s for s in doc["sections"]}
    rom = {t["id"]: t for t in sections["memory"]["tables"]}["rom-totals"]["rows"]
    rom = {row["item"]: row["bytes"] for row in rom}
    assert rom["weights"] == sum(
        t.nbytes for t in model.tensors.values() if t.role.value == "weights"
    )
    assert rom["ROM total"] == r.table("rom-totals").column("bytes")[6]
    files = csv_files(r)
    assert "memory__arena.csv" in files and "quantization__quant-tensors.csv" in files
    arena_csv = list(csv.DictReader(io.StringIO(files["memory__arena.csv"])))
    arena = r.table("arena")
    assert [int(row["offset"]) for row in arena_csv] == arena.column("offset")
    acc = {t["id"]: t for t in sections["accuracy"]["tables"]}["accuracy-layers"]["rows"]
    assert [row["layer"] for row in acc if row["remedy"]] == [9]
    assert acc[0]["snr_isolated_db"] == "inf"
    md = render_markdown(r)
    assert "## Memory" in md and "## Quantization" in md
    assert (
        render_html(r) == html
        and render_json(r) == json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=True) + "\n"
    )
