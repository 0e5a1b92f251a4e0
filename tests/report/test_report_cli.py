"""`mlitool report` end to end: every shared int8 model (sa8, fx16 for some), the float models with
calibration data, all output forms; figures checked against independent computations (the
`convert` manifest, a brute-force arena, numpy SNR from the executors' outputs, one layer's
sensitivity recomputed by hand); byte-identical files across runs; exit codes."""

from __future__ import annotations

import csv
import io
import json
import math

import numpy as np
import pytest

from mlitool.pipeline import ModelOptions, load, settle
from mlitool.report.command import Outputs, Progress, ReportOptions, make_report, output_files
from mlitool.report.document import Report
from mlitool.report.html import render_html
from mlitool.report.render import csv_files, render_json, render_markdown, terminal_text
from tests.support.cli import run_main
from tests.support.paths import SAMPLES, shared_path
from tests.support.report_checks import brute_force_arena, parse_html
from tests.support.tflite_build import unsupported_op_model

CNN = SAMPLES / "cnn_int8.tflite"
CNN_FLOAT = SAMPLES / "cnn_float.tflite"
CNN_CALIB = SAMPLES / "cnn_calib.npy"
CNN_IN = SAMPLES / "cnn_input_int8.npy"

INT8 = [
    ("mlperf_tiny/vww_96_int8", "sa8", 4),
    ("embarc_mli/mobilenet_v1_int8", "sa8", 1),
    ("mlperf_tiny/resnet8_int8", "sa8", 4),
    ("mlperf_tiny/kws_ref_model_int8", "sa8", 4),
    ("mlperf_tiny/ad01_int8", "sa8", 4),
    ("tflm/hello_world_int8", "sa8", 8),
    ("tflm/micro_speech_int8", "sa8", 4),
    ("mlperf_tiny/kws_ref_model_int8", "fx16", 4),
    ("mlperf_tiny/ad01_int8", "fx16", 4),
]
FLOAT = [
    "mlperf_tiny/vww_96_float",
    "mlperf_tiny/resnet8_float",
    "mlperf_tiny/ad01_float",
    "tflm/hello_world_float",
    "mlperf_tiny/kws_ref_model_hybrid",
]

_CACHE: dict = {}


def report_of(path, **kw) -> Report:
    key = (str(path), tuple(sorted((k, str(v)) for k, v in kw.items())))
    if key not in _CACHE:
        model_kw = {k: kw.pop(k) for k in ("format", "mli", "calibration") if k in kw}
        _CACHE[key] = make_report(path, ModelOptions(**model_kw), ReportOptions(**kw))
    return _CACHE[key]


def _json(r: Report) -> dict:
    return json.loads(render_json(r))


def _rows(doc: dict, table_id: str) -> list[dict]:
    for s in doc["sections"]:
        for t in s["tables"]:
            if t["id"] == table_id:
                return t["rows"]
    raise KeyError(table_id)


def _number(v) -> float:
    return float(v) if isinstance(v, str) else v


def _check_all_forms(
    r: Report, mac_positions: list[int], executed: bool = True, lsb: bool = False
) -> None:
    """`lsb`: an int8 model, compared with tflite mode in LSB (a chart of it)."""
    html = render_html(r)
    p = parse_html(html)
    expected = ["arena-plan", "memory-breakdown", "scale-spread"] + [
        f"weights-hist-{i}" for i in mac_positions
    ]
    expected += ["snr-layers", *(["lsb-layers"] if lsb else []), "sensitivity"] if executed else []
    assert p.charts == expected
    assert p.tables == [t.id for _, t in r.tables() if t.rows]  # empty ones are a sentence
    doc = _json(r)
    assert doc["schema"] == "mlitool-report" and doc["schema_version"] == 1
    sections = [s["id"] for s in doc["sections"]]
    assert sections == ["summary", "findings", "memory", "quantization"] + (
        ["accuracy", "sensitivity"] if executed else []
    )
    files = csv_files(r)
    assert len(files) == sum(1 for _ in r.tables())
    for name, text in files.items():
        table = r.table(name.split("__", 1)[1][:-4])
        assert len(list(csv.DictReader(io.StringIO(text)))) == len(table.rows)
    md = render_markdown(r)
    assert all(f"## {s.title}" in md for s in r.sections)
    assert "Per-layer sensitivity" in terminal_text(r) if executed else True


def _mac_positions(r: Report) -> list[int]:
    kinds = ("conv2d", "depthwise_conv2d", "group_conv2d", "transpose_conv2d", "fully_connected")
    rom = r.table("rom-layers")
    return [
        pos
        for pos, kind, w in zip(rom.column("position"), rom.column("kind"), rom.column("weights"))
        if kind in kinds and w
    ]


# --- every shared model, every form ------------------------------------------------------------


@pytest.mark.parametrize("name,fmt,n", INT8, ids=lambda v: str(v).split("/")[-1])
def test_int8_models_all_forms(name, fmt, n):
    path = shared_path("models", name + ".tflite")
    r = report_of(path, format=fmt, samples=n)
    _check_all_forms(r, _mac_positions(r), lsb=True)
    doc = _json(r)
    summary = {row["item"]: row["value"] for row in _rows(doc, "summary")}
    assert summary["format"] == fmt and summary["MLI target"] == "2.0"
    sens = _rows(doc, "sensitivity")
    assert len(sens) == len(_mac_positions(r))
    assert sorted(row["rank"] for row in sens) == list(range(1, len(sens) + 1))
    acc = _rows(doc, "accuracy-layers")
    assert acc and all(row["snr_chained_db"] is not None for row in acc)
    outputs = _rows(doc, "accuracy-outputs")
    assert outputs and all(row["tflite_max_lsb"] is not None for row in outputs)


@pytest.mark.parametrize("name", FLOAT, ids=lambda v: v.split("/")[-1])
def test_float_models_with_calibration(name, tmp_path):
    from mlitool.execute.reference.inputs import random_inputs
    from mlitool.tflite.reader import read_model

    path = shared_path("models", name + ".tflite")
    graph = read_model(path).main
    calib = tmp_path / "calib.npy"
    np.save(calib, next(iter(random_inputs(graph, 8, seed=1).values())))
    from mlitool.execute.mli.bridge import primary_tensors

    model_opts = ModelOptions(calibration=calib)
    r = make_report(path, model_opts, ReportOptions(samples=2))
    _check_all_forms(r, _mac_positions(r))
    quant = _rows(_json(r), "quant-tensors")
    # activations holding an IR tensor's value carry observed figures (the float model ran)
    primary = set(primary_tensors(*load(path, settle(model_opts))).values())
    acts = [
        row for row in quant if row["role"] in ("activation", "output") and row["tensor"] in primary
    ]
    assert acts and all(row["snr_db"] is not None and row["saturated"] is not None for row in acts)


def test_cnn_float_with_its_calibration_set():
    r = report_of(CNN_FLOAT, calibration=CNN_CALIB, input=CNN_CALIB)
    _check_all_forms(r, _mac_positions(r))
    doc = _json(r)
    # calibrated on exactly these inputs (min/max): no activation saturates (the softmax
    # kernel's own output, requantized right after it, holds no IR value: no figures)
    quant = [row for row in _rows(doc, "quant-tensors") if row["role"] in ("activation", "output")]
    assert [row["tensor"] for row in quant if row["saturated"] is None] == ["Identity_krn"]
    assert all(row["saturated"] == 0 for row in quant if row["saturated"] is not None)
    (out,) = _rows(doc, "accuracy-outputs")
    assert out["snr_db"] > 20 and out["top1_float"] >= 0.9


def test_mli_1x_target_reports_memory_and_quantization_only(tmp_path):
    path = shared_path("models", "mlperf_tiny", "ad01_int8.tflite")
    r = make_report(path, ModelOptions(mli="1.1"), ReportOptions(samples=2))
    _check_all_forms(r, _mac_positions(r), executed=False)
    assert any("MLI 1.1" in t for t in r.sections[0].text)
    _rom_against_manifest(path, r, tmp_path, mli="1.1")


# --- figures against independent computations --------------------------------------------------


def _rom_against_manifest(path, r: Report, tmp_path, **kw) -> None:
    from mlitool.convert import EmitOptions, convert

    convert(path, ModelOptions(**kw), EmitOptions(out=tmp_path, name="net"))
    manifest = json.loads((tmp_path / "net.json").read_text())
    totals = {row["item"]: row["bytes"] for row in _rows(_json(r), "rom-totals")}
    assert totals["weights"] == manifest["totals"]["weight_bytes"]
    assert totals["bias"] == manifest["totals"]["bias_bytes"]
    assert (
        totals["other constants"] + totals["per-axis arrays"] == manifest["totals"]["param_bytes"]
    )
    # per layer: the bytes of each layer's weight tensor, first use only
    nbytes = {t["c_name"]: t["bytes"] for t in manifest["tensors"]}
    seen, expected = set(), []
    for layer in manifest["layers"]:
        w = layer["weights"]
        expected.append(nbytes[w] if w and w not in seen else 0)
        seen.add(w)
    assert r.table("rom-layers").column("weights") == expected
    ram = {row["item"]: row["bytes"] for row in _rows(_json(r), "ram-totals")}
    assert ram["no sharing (sum of buffers)"] == manifest["totals"]["activation_bytes"]


@pytest.mark.parametrize("name,fmt,n", [INT8[0], INT8[7]], ids=["vww-sa8", "kws-fx16"])
def test_rom_against_convert_manifest(name, fmt, n, tmp_path):
    path = shared_path("models", name + ".tflite")
    _rom_against_manifest(path, report_of(path, format=fmt, samples=n), tmp_path, format=fmt)


@pytest.mark.parametrize(
    "path",
    [
        SAMPLES / "fc_int8.tflite",
        ("tflm", "hello_world_int8.tflite"),
        ("tflm", "micro_speech_int8.tflite"),
    ],
    ids=["fc_int8", "hello_world", "micro_speech"],
)
def test_arena_against_brute_force(path):
    from mlitool.mli.memory.arena import Buffer

    path = shared_path("models", *path) if isinstance(path, tuple) else path
    r = report_of(path, samples=2)
    arena = r.table("arena")
    bufs = [
        Buffer(n, b, f, la)
        for n, b, f, la in zip(
            arena.column("buffer"),
            arena.column("bytes"),
            arena.column("first"),
            arena.column("last"),
        )
    ]
    assert len(bufs) <= 7
    ram = {row["item"]: row["bytes"] for row in _rows(_json(r), "ram-totals")}
    assert ram["arena (shared placement)"] == brute_force_arena(bufs)
    # placements never overlap while both buffers are alive
    rows = list(
        zip(
            arena.column("first"), arena.column("last"), arena.column("offset"), arena.column("end")
        )
    )
    for i, a in enumerate(rows):
        for b in rows[i + 1 :]:
            if a[0] <= b[1] and b[0] <= a[1]:
                assert a[3] <= b[2] or b[3] <= a[2]


def _snr(ref, test) -> float:
    ref = np.asarray(ref, np.float64)
    err = ref - np.asarray(test, np.float64)
    return 10 * math.log10(float(np.sum(ref * ref)) / float(np.sum(err * err)))


def test_output_snr_and_activation_figures_against_numpy():
    from mlitool.execute.mli import bridge as B
    from mlitool.execute.mli.presets import arith_for
    from mlitool.execute.reference.graph import run_graph

    r = report_of(CNN, input=CNN_IN)
    graph, mli = load(CNN, settle(ModelOptions()))
    x = {0: np.load(CNN_IN)}
    fl = run_graph(graph, x, "float", keep=True)
    _, raw = B.run_mli(graph, mli, x, arith_for(), keep=True)
    primary = B.primary_tensors(graph, mli)
    o = graph.outputs[0]
    real = B.decode(mli.tensor(primary[o]), raw[primary[o]]).reshape(fl[o].shape)
    (row,) = _rows(_json(r), "accuracy-outputs")
    assert row["snr_db"] == pytest.approx(_snr(fl[o], real), abs=0.006)
    top1 = float(np.mean(np.argmax(fl[o].reshape(4, -1), 1) == np.argmax(real.reshape(4, -1), 1)))
    assert row["top1_float"] == top1
    # chained SNR of the first op's output
    first = graph.ops[0].outputs[0]
    chained = B.decode(mli.tensor(primary[first]), raw[primary[first]]).reshape(fl[first].shape)
    acc = _rows(_json(r), "accuracy-layers")
    assert acc[0]["snr_chained_db"] == pytest.approx(_snr(fl[first], chained), abs=0.006)
    # an activation's observed range and saturation, from its own parameters
    t = mli.tensor(primary[first])
    v = fl[first].astype(np.float64)
    step = float(t.real_scale()[0])
    zp = float(t.zero_point[0])
    ideal = v / step + zp
    q = np.clip(np.round(ideal), -128, 127)
    quant = [row for row in _rows(_json(r), "quant-tensors") if row["tensor"] == t.name]
    assert quant[0]["real_min"] == pytest.approx(v.min(), abs=1e-6)
    assert quant[0]["real_max"] == pytest.approx(v.max(), abs=1e-6)
    assert quant[0]["saturated"] == int(np.count_nonzero((ideal > 127.5) | (ideal < -128.5)))
    assert _number(quant[0]["snr_db"]) == pytest.approx(_snr(v, (q - zp) * step), abs=0.006)


def test_sensitivity_of_one_layer_recomputed():
    """The residual CNN: the depthwise layer's output feeds the block whose ADD also reads an
    earlier tensor. Recompute: float run, that layer alone through the MLI kernels (input
    encoded with the helper's FP32 conversion), then every later op in float again."""
    from mlitool.execute.mli import bridge as B
    from mlitool.execute.mli.presets import arith_for
    from mlitool.execute.mli.walker import run_layers
    from mlitool.execute.reference.call import Call
    from mlitool.execute.reference.graph import kernels, run_graph

    r = report_of(CNN, input=CNN_IN)
    graph, mli = load(CNN, settle(ModelOptions()))
    x = {0: np.load(CNN_IN)}
    fl = run_graph(graph, x, "float", keep=True)
    pos = next(p for p, op in enumerate(graph.ops) if op.type == "DEPTHWISE_CONV_2D")
    op = graph.ops[pos]
    (layer,) = [la for la in mli.layers if la.index == op.index]
    xin = mli.tensor(layer.inputs[0])
    values = {xin.name: B.encode(xin, fl[op.inputs[0]].reshape((4,) + xin.shape))}
    run_layers(mli, [layer], values, arith_for(), 4)
    out = mli.tensor(layer.outputs[0])
    vals = dict(fl)
    vals[op.outputs[0]] = B.decode(out, values[out.name]).reshape(fl[op.outputs[0]].shape)
    consts: dict = {}
    for later in graph.ops[pos + 1 :]:
        call = Call(later, graph, "float", vals, 4, consts)
        for t, v in zip(later.outputs, kernels("float")[later.type](call)):
            vals[t] = v.reshape(call.out_shape())
    o = graph.outputs[0]
    expected = _snr(fl[o], vals[o])
    sens = {row["op_index"]: row for row in _rows(_json(r), "sensitivity")}
    assert sens[op.index]["output_snr_db"] == pytest.approx(expected, abs=0.006)


def test_reduced_accumulator_column_names_vww_layers():
    path = shared_path("models", "mlperf_tiny", "vww_96_int8.tflite")
    doc = _json(report_of(path, format="sa8", samples=4))
    named = _rows(doc, "reduced-accumulator")
    assert named and all(row["cost_lsb"] > 1 and "fx16" in row["remedy"] for row in named)
    layers = {row["op_index"]: row for row in _rows(doc, "accuracy-layers")}
    for row in named:
        assert layers[row["op_index"]]["reduced_accu_lsb"] == row["cost_lsb"]
        assert layers[row["op_index"]]["remedy"]
    assert all(not row["remedy"] for row in layers.values() if (row["reduced_accu_lsb"] or 0) <= 1)


def test_progress_stages_reach_their_totals():
    class Counting(Progress):
        def __init__(self):
            self.stages = {}

        def stage(self, label, total):
            self.stages[label] = [total, 0]

            def advance(k):
                self.stages[label][1] += k

            return advance

    p = Counting()
    make_report(SAMPLES / "fc_int8.tflite", ModelOptions(), ReportOptions(samples=20), p)
    assert set(p.stages) == {"verify (samples)", "activation ranges", "sensitivity"}
    assert all(total == done > 0 for total, done in p.stages.values())
    assert p.stages["verify (samples)"] == [20, 20]
    assert p.stages["sensitivity"][0] == 3 * 2  # 3 FULLY_CONNECTED ops x 2 batches of 16


# --- the command line --------------------------------------------------------------------------


def _cli_files(tmp_path, capsys, tag: str) -> dict[str, bytes]:
    d = tmp_path / tag
    d.mkdir()
    code, out, err = run_main(
        [
            "report",
            CNN,
            "--samples",
            6,
            "--seed",
            3,
            "--json-out",
            d / "r.json",
            "--csv",
            d / "csv",
            "--markdown",
            d / "r.md",
            "--html",
            d / "r.html",
            "-q",
        ],
        capsys,
    )
    assert code == 0, err
    assert out == ""
    assert err == ""  # -q: no progress, no 'wrote' lines
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def test_cli_files_byte_identical_across_runs(tmp_path, capsys):
    a = _cli_files(tmp_path, capsys, "a")
    b = _cli_files(tmp_path, capsys, "b")
    assert a == b
    assert {
        "r.json",
        "r.md",
        "r.html",
        "csv/sensitivity__sensitivity.csv",
        "csv/memory__arena.csv",
        "csv/accuracy__accuracy-outputs.csv",
    } <= set(a)
    doc = json.loads(a["r.json"])
    assert dict(doc["meta"])["inputs"] == "random, seed 3" and dict(doc["meta"])["samples"] == 6
    # the files are the renderings of one report
    r = make_report(CNN, ModelOptions(), ReportOptions(samples=6, seed=3))
    files = output_files(r, Outputs(json=("r.json",), markdown="r.md", html="r.html", csv="csv"))
    assert {str(k): v.encode() for k, v in files.items()} == a


def test_cli_json_to_stdout_and_terminal(tmp_path, capsys):
    code, out, err = run_main(["report", CNN, "--samples", 2, "--json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert [s["id"] for s in doc["sections"]][-1] == "sensitivity"
    code, out, err = run_main(["report", CNN, "--samples", 2, "--no-accuracy"], capsys)
    assert code == 0, err
    assert "Activation arena placement" in out and "Per-layer sensitivity" not in out


def test_cli_names_every_file_it_writes_on_stderr(tmp_path, capsys):
    """Without -q report ends as every command does: the tables on stdout, one `wrote PATH`
    line per file on stderr."""
    args = ["report", SAMPLES / "fc_int8.tflite", "--no-accuracy", "-o", tmp_path]
    code, out, err = run_main(args, capsys)
    assert code == 0, err
    wrote = [line.removeprefix("wrote ") for line in err.splitlines() if line.startswith("wrote ")]
    assert sorted(wrote) == sorted(str(p) for p in tmp_path.rglob("*") if p.is_file())
    assert wrote[:3] == [str(tmp_path / f"fc_int8.report.{x}") for x in ("json", "md", "html")]
    assert "Activation arena placement" in out


@pytest.mark.parametrize(
    "args,code",
    [
        (["--format", "fx9"], 2),
        (["--samples", "0"], 2),
        (["--target", "arm"], 2),
        (["--input", "missing.npy"], 2),
    ],
)
def test_cli_bad_options(args, code, capsys):
    got, out, err = run_main(["report", CNN, *args], capsys)
    assert got == code and "error" in err


def test_cli_bad_and_unsupported_models(tmp_path, capsys):
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"not a model")
    assert run_main(["report", bad], capsys)[0] == 2
    code, _, err = run_main(["report", CNN_FLOAT, "--samples", 1], capsys)  # no calibration
    assert code == 2 and "calibrat" in err
    unsupported = tmp_path / "cos.tflite"
    unsupported.write_bytes(unsupported_op_model())
    assert run_main(["report", unsupported, "--samples", 1], capsys)[0] == 4


def test_report_lists_lowering_decisions_with_reasons(tmp_path):
    """Issue 7 / 6: where lowering inserted a copy, a convert or rewrote a pooling window, the
    report says which layer and why (the same notes the manifest carries)."""
    from mlitool.mli.lower.driver import lower
    from mlitool.report.sections import decisions_table
    from mlitool.tflite.reader import read_model

    model = lower(read_model(SAMPLES / "ops" / "avg_pool_global_same.tflite").main, format="sa8")
    table = decisions_table(model)
    notes = [row[-1] for row in table.rows]
    expected = [note for layer in model.layers for note in layer.notes]
    assert notes == expected
    assert any("outside its output" in n for n in notes)
    model = lower(read_model(SAMPLES / "ops" / "split.tflite").main, format="sa8")
    rows = decisions_table(model).rows
    assert any(row[3] == "copy" and row[-1] for row in rows)
