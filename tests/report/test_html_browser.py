"""The HTML report as a person sees it: rendered by headless Chromium at 1280 px, the page does not
scroll sideways, no table needs scrolling, every chart is drawn, and the arena plan draws one
rectangle per buffer exactly where the runtime's planner puts it. Also the parts that need no
browser: headline, separators, empty tables."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from mlitool.mli.memory.arena import model_arena
from mlitool.mli.memory.placement import plan_model
from mlitool.pipeline import ModelOptions, load, settle
from mlitool.report.command import ReportOptions, make_report
from mlitool.report.document import Report, Section, make_table
from mlitool.report.html import render_html
from tests.support.paths import SAMPLES, shared_path

CORPUS = Path(__file__).parents[1] / "corpus"

BROWSERS = ("chromium-headless-shell", "chromium", "chromium-browser", "google-chrome")
BROWSER = next((b for b in BROWSERS if shutil.which(b)), None)
needs_browser = pytest.mark.skipif(
    BROWSER is None,
    reason="no headless Chromium on PATH (Debian: apt-get install chromium-headless-shell)",
)

# Test-only probe: measures the laid-out page and writes the figures into the DOM.
PROBE = """<script>
window.addEventListener("load", function () {
  var all = function (q) { return Array.prototype.slice.call(document.querySelectorAll(q)); };
  var out = document.createElement("pre");
  out.id = "measure";
  out.textContent = JSON.stringify({
    page: document.documentElement.scrollWidth,
    charts: all("svg.chart").map(function (svg) {
      var r = svg.getBoundingClientRect();
      return {id: svg.getAttribute("data-chart"), w: r.width, h: r.height,
              drawn: all("svg.chart[data-chart='" + svg.getAttribute("data-chart") +
                         "'] rect, svg.chart[data-chart='" + svg.getAttribute("data-chart") +
                         "'] line").length,
              buffers: svg.querySelectorAll("rect.buffer").length};
    }),
    tables: all("div.scroll").map(function (d) {
      return {id: d.firstElementChild.getAttribute("data-table"), scroll: d.scrollWidth,
              client: d.clientWidth};
    })});
  document.body.appendChild(out);
});
</script>"""


# Test-only probe: every SVG text (as laid out, rotation included) that reaches outside its
# chart, with the overshoot in px; the collapsed histograms opened first, as a reader would.
CLIPPED = """<script>
window.addEventListener("load", function () {
  var out = [];
  document.querySelectorAll("details").forEach(function (d) { d.open = true; });
  document.querySelectorAll("svg.chart").forEach(function (svg) {
    var b = svg.getBoundingClientRect();
    svg.querySelectorAll("text").forEach(function (t) {
      var r = t.getBoundingClientRect();
      var over = Math.max(b.left - r.left, r.right - b.right, b.top - r.top, r.bottom - b.bottom);
      if (over > 0.5) out.push([svg.getAttribute("data-chart"), t.textContent, over]);
    });
  });
  var pre = document.createElement("pre");
  pre.id = "measure";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


def _measure(html: str, tmp_path, probe: str = PROBE, width: int = 1280):
    page = tmp_path / "report.html"
    page.write_text(html.replace("</body>", probe + "</body>"))
    r = subprocess.run(
        [
            BROWSER,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            f"--window-size={width},900",
            "--virtual-time-budget=3000",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    found = re.search(r'<pre id="measure">(.*?)</pre>', r.stdout, re.S)
    assert found, r.stderr[-2000:]
    return json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))


def _report(model) -> tuple[Report, int]:
    report = make_report(model, ModelOptions(), ReportOptions(samples=2))
    _, mli = load(model, settle(ModelOptions()))
    return report, len(model_arena(mli).placements)


@needs_browser
@pytest.mark.parametrize("model", ["cnn_int8", "mobilenet_v1_int8"])
def test_report_fits_1280_px_and_draws_every_chart(model, tmp_path):
    path = (
        SAMPLES / "cnn_int8.tflite"
        if model == "cnn_int8"
        else shared_path("models/embarc_mli/mobilenet_v1_int8.tflite")
    )
    report, buffers = _report(path)
    m = _measure(render_html(report), tmp_path)
    assert m["page"] <= 1280
    assert m["tables"] and all(t["scroll"] <= t["client"] for t in m["tables"]), m["tables"]
    charts = {c["id"]: c for c in m["charts"]}
    assert set(charts) == {c.id for _, c in report.charts()}
    for c in charts.values():
        assert c["w"] > 100 and c["h"] > 100 and c["drawn"] > 3, c
    assert charts["arena-plan"]["buffers"] == buffers > 0


@needs_browser
def test_fast_memory_charts_fit_1280_px(tmp_path):
    path = shared_path("models/mlperf_tiny/vww_96_int8.tflite")
    report = make_report(path, ModelOptions(fast_memory="32K"), ReportOptions(accuracy=False))
    m = _measure(render_html(report), tmp_path)
    assert m["page"] <= 1280
    charts = {c["id"]: c for c in m["charts"]}
    _, mli = load(path, settle(ModelOptions()))
    plan = plan_model(mli, 32 * 1024)
    assert charts["arena-plan-slow"]["buffers"] == len(plan.slow.placements) > 0
    assert charts["arena-plan"]["buffers"] > len(plan.resident.placements)  # + staging, tables
    assert all(c["w"] <= 1200 for c in charts.values()), charts


@needs_browser
@pytest.mark.parametrize("model,fast", [("fc_int8", None), ("cnn_int8", None), ("cnn_int8", "8K")])
def test_no_chart_text_is_clipped_at_800_px(model, fast, tmp_path):
    """Small models made narrow charts whose titles, legends and axis labels were cut
    ("Activation arena: :", "Per-channne", "Output SNF"); with --fast-memory, the fast
    buffer's and the slow arena's charts, their legends of layer kinds and lower bounds."""
    opts = ReportOptions(samples=2) if fast is None else ReportOptions(accuracy=False)
    report = make_report(SAMPLES / f"{model}.tflite", ModelOptions(fast_memory=fast), opts)
    if fast:
        assert {"arena-plan", "arena-plan-slow"} <= {c.id for _, c in report.charts()}
    assert _measure(render_html(report), tmp_path, CLIPPED, width=800) == []


# Test-only probe: per chart part, how far it reaches outside its figure or the page's column
# (px) and whether its figure scrolls, and the smallest zoom a chart is drawn at (a chart wider
# than the column shrinks to fit); every SVG text reaching outside its SVG; the category labels
# drawn per chart (over all its parts). Histograms opened first.
FITS = """<script>
window.addEventListener("load", function () {
  document.querySelectorAll("details").forEach(function (d) { d.open = true; });
  var body = document.body.getBoundingClientRect();
  var right = body.right - parseFloat(getComputedStyle(document.body).paddingRight);
  var out = {page: document.documentElement.scrollWidth, over: [], clipped: [], cats: {}, zoom: 1};
  document.querySelectorAll("svg.chart").forEach(function (svg) {
    var id = svg.getAttribute("data-chart"), b = svg.getBoundingClientRect();
    var fig = svg.parentElement, box = fig.getBoundingClientRect();
    var over = Math.max(b.right - box.right, b.right - right, box.left - b.left);
    if (over > 0.5 || fig.scrollWidth > fig.clientWidth) out.over.push([id, over]);
    out.zoom = Math.min(out.zoom, b.width / svg.width.baseVal.value);
    svg.querySelectorAll("text").forEach(function (t) {
      var r = t.getBoundingClientRect();
      var o = Math.max(b.left - r.left, r.right - b.right, b.top - r.top, r.bottom - b.bottom);
      if (o > 0.5) out.clipped.push([id, t.textContent, o]);
    });
    out.cats[id] = (out.cats[id] || 0) + svg.querySelectorAll("text.cat").length;
  });
  var pre = document.createElement("pre");
  pre.id = "measure";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""

# A tiny model, a 31-op one and a 65-op MobileNetV2 (two parts per per-layer chart).
FIT_MODELS = {
    "cnn_int8": lambda: SAMPLES / "cnn_int8.tflite",
    "vww_96_int8": lambda: shared_path("models/mlperf_tiny/vww_96_int8.tflite"),
    "mobilenet_v2_int8": lambda: CORPUS / "mobilenet_v2_int8.tflite",
}
_html: dict[str, tuple[Report, str]] = {}


def _fit_report(model: str) -> tuple[Report, str]:
    if model not in _html:
        report = make_report(FIT_MODELS[model](), ModelOptions(), ReportOptions(samples=1, jobs=1))
        _html[model] = report, render_html(report)
    return _html[model]


@needs_browser
@pytest.mark.parametrize("width", [800, 1280])
@pytest.mark.parametrize("model", list(FIT_MODELS))
def test_charts_fit_their_box_show_every_layer_and_clip_no_text(model, width, tmp_path):
    """On a 65-layer model four per-layer charts were 1,532 px in a 1,200 px box, hiding the
    last 13 layers; long first category labels were cut at the chart's left edge."""
    report, html = _fit_report(model)
    m = _measure(html, tmp_path, FITS, width=width)
    assert m["page"] <= width
    assert m["over"] == [] and m["clipped"] == []
    if width == 1280:  # full size: paged at ~50 layers, not shrunk into the column
        assert m["zoom"] > 0.99
    for _, c in report.charts():
        if c.kind in ("bars", "stacked", "range"):
            assert m["cats"][c.id] == len(c.categories), c.id


# --- without a browser -------------------------------------------------------------------------


def test_arena_rectangles_sit_at_the_planners_offsets():
    path = SAMPLES / "cnn_int8.tflite"
    _, mli = load(path, settle(ModelOptions()))
    plan = model_arena(mli)
    report = make_report(path, ModelOptions(), ReportOptions(accuracy=False))
    html = render_html(report)
    svg = html[html.index('data-chart="arena-plan"') :]
    svg = svg[: svg.index("</svg>")]
    rects = re.findall(
        r'<rect class="buffer" x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" '
        r'height="([\d.]+)"[^>]*><title>([^<]*)</title>',
        svg,
    )
    assert len(rects) == len(plan.placements)
    per_byte = per_layer = None
    for (_x, _y, w, h, tip), p in zip(rects, plan.placements):
        assert tip.startswith(p.buffer.name.replace("&", "&amp;")[:20])
        assert (
            f"{p.buffer.size:,} B at offset {p.offset:,}, layers {p.buffer.first}\u2013"
            f"{p.buffer.last}" in tip
        )
        # Heights proportional to bytes, widths to layers lived, bottoms to offsets.
        per_byte = per_byte or float(h) / p.buffer.size
        per_layer = per_layer or (float(w) + 1) / (p.buffer.last - p.buffer.first + 1)
        assert float(h) == pytest.approx(max(p.buffer.size * per_byte, 0.5), abs=0.02)
        assert float(w) + 1 == pytest.approx(
            (p.buffer.last - p.buffer.first + 1) * per_layer, abs=0.02
        )
    tops = {
        p.offset + p.buffer.size: float(y) for (_, y, _, _, _), p in zip(rects, plan.placements)
    }
    base = max(tops.values()) + min(tops) * per_byte  # the y of offset 0
    for end, top in tops.items():
        assert top == pytest.approx(base - end * per_byte, abs=0.03)


def test_headline_separators_and_no_empty_tables():
    path = SAMPLES / "cnn_int8.tflite"
    report = make_report(path, ModelOptions(), ReportOptions(samples=2, min_snr=99.0))
    meta = dict(report.meta)
    assert meta["verdict"] == "FAIL" and "--min-snr 99" in meta["checks"]
    html = render_html(report)
    head = html[html.index('<div class="headline') :]
    assert head.startswith('<div class="headline fail" data-verdict="FAIL">')
    assert "cnn_int8.tflite \u00b7 MLI 2.0 \u00b7 sa8 \u00b7 ROUND_MODE=UP FULL_ACCU=OFF" in head
    macs = dict(
        make_report(path, ModelOptions(), ReportOptions(accuracy=False)).table("summary").rows
    )["MACs"]
    assert macs > 1000 and f">{macs:,}<" in html and f">{macs}<" not in html
    empty = Report(
        "t",
        (),
        (Section("s", "S", (), (make_table("nothing", "Nothing here", [("a", "A")], []),)),),
    )
    out = render_html(empty)
    assert "<table" not in out.split("</style>")[1] and "Nothing here</strong>: none." in out
    ok = make_report(path, ModelOptions(), ReportOptions(accuracy=False))
    assert dict(ok.meta)["verdict"] in ("PASS", "REVIEW")
