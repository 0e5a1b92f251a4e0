"""Charts and cells as people read them (issue 25): axis ticks with thousands separators, SVGs
wide enough for their title, legend and axis label, weight histograms collapsed in the HTML,
and shares as percentages where verify prints percentages (the JSON and CSV keep the share)."""

from __future__ import annotations

import json
import re

import pytest

from mlitool.report.chart_pages import chart_svg
from mlitool.report.document import Chart, Column, Report, Section, Series, make_table
from mlitool.report.html import render_html
from mlitool.report.render import csv_files, render_json, render_markdown, terminal_text
from tests.support.paths import SAMPLES

# Plot area: x from 78, y from 64 to 284 (220 px); tick labels end at x = 72, 4 px below y.


def _bars(title: str, values, names=("n",), x_label: str = "", log_y: bool = False) -> Chart:
    series = tuple(Series(name, tuple(values)) for name in names)
    cats = tuple(f"c{i}" for i in range(len(values)))
    return Chart("c", title, "bars", cats, series, x_label=x_label, log_y=log_y)


def test_linear_ticks_have_thousands_separators():
    # 0..65,536 in steps of 20,000 up to 80,000: y(20,000) = 284 - 220 / 4 = 229.
    svg = chart_svg(_bars("T", (0, 65536)))
    assert '<text class="tick" x="72.00" y="233.00" text-anchor="end">20,000</text>' in svg
    assert '<text class="tick" x="72.00" y="68.00" text-anchor="end">80,000</text>' in svg
    assert ">20000<" not in svg


def test_log_ticks_have_thousands_separators():
    # Decades 1e0..1e4 over 220 px: y(1,000) = 284 - 220 * 3 / 4 = 119.
    svg = chart_svg(_bars("T", (1, 5000), log_y=True))
    assert '<text class="tick" x="72.00" y="123.00" text-anchor="end">1,000</text>' in svg


def test_title_sets_the_minimum_width():
    # One 64 px category: 78 + 64 + 24 = 166 px, too narrow for 60 characters of title at
    # 9 px each: 78 + 540 + 24 = 642.
    svg = chart_svg(_bars("x" * 60, (1,)))
    assert svg.startswith(
        '<svg xmlns="http://www.w3.org/2000/svg" class="chart" data-chart="c" data-kind="bars" '
        'width="642.00" height="410.00" viewBox="0 0 642.00 410.00"'
    )


def test_legend_and_x_label_set_the_minimum_width():
    # Legend: 30 characters at 7 px; the second entry at 78 + 24 + 210 = 312, its text ending
    # at 312 + 14 + 210 = 536: width 560.
    svg = chart_svg(_bars("T", (1,), names=("a" * 30, "b" * 30)))
    assert 'width="560.00"' in svg
    # x label of 40 characters at 7.5 px (300 px) centred at 154, not at the plot's centre 110
    # (its left end would be at -40); ends at 304: width 328.
    svg = chart_svg(_bars("T", (1,), x_label="y" * 40))
    assert 'width="328.00"' in svg
    assert (
        f'<text class="label" x="154.00" y="402.00" text-anchor="middle">{"y" * 40}</text>' in svg
    )


def _share_report() -> Report:
    cols = [Column("share", "Differing from tflite", precision=4, percent=True), ("n", "N")]
    table = make_table("t", "T", cols, [(0.09375, 1234)])
    return Report("r", (), (Section("s", "S", (), (table,)),))


def test_shares_are_percentages_for_people_and_shares_in_files():
    report = _share_report()
    assert '<td class="num">9.4%</td><td class="num">1,234</td>' in render_html(report)
    assert "| 9.4% | 1,234 |" in render_markdown(report)
    assert re.search(r"│ +9\.4% │ +1,234 │", terminal_text(report))
    assert json.loads(render_json(report))["sections"][0]["tables"][0]["rows"] == [
        {"share": 0.0938, "n": 1234}
    ]
    assert list(csv_files(report).values()) == ["share,n\n0.0938,1234\n"]


@pytest.fixture(scope="module")
def cnn_report_and_verify(tmp_path_factory):
    """report and verify of cnn_int8 on the same 4 random inputs, through the CLI."""
    from mlitool.cli.entry import main

    out = tmp_path_factory.mktemp("cnn")
    model = SAMPLES / "cnn_int8.tflite"
    for args in (
        ["verify", model, "-n", "4", "-q", "--json-out", out / "verify.json"],
        ["report", model, "-n", "4", "-q", "--html", out / "report.html"],
    ):
        with pytest.raises(SystemExit) as exc:
            main([str(a) for a in args])
        assert exc.value.code == 0
    return (out / "report.html").read_text(), json.loads((out / "verify.json").read_text())


def test_report_shows_verifys_percentages(cnn_report_and_verify):
    html, doc = cnn_report_and_verify
    (out,) = doc["outputs"]
    row = html[html.index('<table data-table="accuracy-outputs">') :]
    cells = re.findall(r'<td class="num">([^<]*)</td>', row[: row.index("</tbody>")])
    # verify prints a share as 100 * share with one decimal and "%" (9.4%, where it was 0.0938)
    shares = (
        out["vs_tflite"]["differing_share"],
        out["top1"]["vs_float"],
        out["top1"]["vs_tflite"],
    )
    assert [cells[4], cells[6], cells[7]] == [f"{100 * v:.1f}%" for v in shares]


def test_weight_histograms_are_collapsed(cnn_report_and_verify):
    html, _ = cnn_report_and_verify
    ids = re.findall(r'data-chart="(weights-hist-[^"]+)"', html)
    assert len(ids) == 5  # the five weighted layers of cnn_int8
    start = html.index("<details><summary>Weight histograms (5)</summary>")
    end = html.index("</details>", start)
    assert all(start < html.index(f'data-chart="{i}"') < end for i in ids)
    assert "<details open" not in html
