"""The answer first (issue 25): RAM, ROM and MACs on convert's first line and in its --json, a
refusal under --json as a JSON document, verify's verdict line, report's summary everywhere."""

from __future__ import annotations

import json
import re

import pytest

from tests.support import c_image
from tests.support.paths import SAMPLES, shared_path


def run_main(args, capsys, monkeypatch=None):
    from mlitool.cli.entry import main

    with pytest.raises(SystemExit) as exc:
        main([str(a) for a in args])
    out, err = capsys.readouterr()
    return exc.value.code, out, err


def test_convert_first_line_and_json_give_arena_rom_macs(tmp_path, capsys, monkeypatch):
    model = shared_path("models", "mlperf_tiny", "vww_96_int8.tflite")
    code, out, err = run_main(["convert", model, "-o", tmp_path, "--json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    fp = doc["footprint"]
    # RAM: read from the emitted files (arena 64,512 B + 32 activation mli_tensor x 80 B + the
    # ready flag 4 B; the softmax table is const).
    ram = c_image.ram(tmp_path, "vww_96_int8")
    assert ram == {"arena_bytes": 64512, "writable_structs": 2560, "bss": 4}
    assert fp["ram"] == ram and fp["ram_bytes"] == 67076
    # ROM: report's constants (data 219,064 B + per-axis arrays + const structs and configs: 251,244
    # B with a zero-point array per constant, less the 10,944 B of all-zero ones, plus the one
    # shared array of 256 zeros, 512 B),
    # the const softmax table (358 x 2 B + its mli_lut 32 B), the runtime's code (estimated;
    # 1,564 B cross-linked for ARC HS), the struct image, and the MLI code of the functions the
    # C calls, kernel-size specializations (19,516 B cross-linked: tools/link_image.py).
    c_text = (tmp_path / "vww_96_int8.c").read_text()
    assert fp["mli_functions"] == sorted(set(re.findall(r"\b(mli_\w+)\(", c_text)))
    assert fp["rom"] == {
        "constants": 240812,
        "lut_tables": 748,
        "model_code": 1582,
        "writable_structs": 2560,
        "mli_code": 19516,
    }
    assert fp["rom_bytes"] == 265218 and fp["macs"] == 7489664
    assert fp["arena"] == {"arena_bytes": 64512} and doc["constant_bytes"] == 219064
    manifest = json.loads((tmp_path / "vww_96_int8.json").read_text())
    assert manifest["footprint"] == {k: fp[k] for k in manifest["footprint"]}
    assert set(manifest["footprint"]) == {"rom", "ram", "arena", "mli_functions", "mli_code_table"}
    monkeypatch.setenv("COLUMNS", "200")
    code, out, err = run_main(["convert", model, "-o", tmp_path], capsys)
    assert out.splitlines()[0] == (
        "vww_96_int8: RAM 67,076 B (arena 64,512 + structs 2,560 + bss 4), ROM 265,218 B "
        "(constants 240,812 + tables 748 + code 1,582 + structs 2,560 + MLI 19,516), "
        "7,489,664 MACs"
    )


def test_convert_rom_is_report_rom_total(tmp_path, capsys):
    code, out, err = run_main(
        ["convert", SAMPLES / "cnn_int8.tflite", "-o", tmp_path, "--json"], capsys
    )
    assert code == 0, err
    fp = json.loads(out)["footprint"]
    code, out, err = run_main(
        ["report", SAMPLES / "cnn_int8.tflite", "--no-accuracy", "--json"], capsys
    )
    tables = {t["id"]: t for s in json.loads(out)["sections"] for t in s["tables"]}
    rom = {r["item"]: r["bytes"] for r in tables["rom-totals"]["rows"]}
    image = {r["item"]: r["bytes"] for r in tables["image"]["rows"]}
    assert rom["ROM total"] == fp["rom"]["constants"] == image["ROM: constants"]
    assert image["ROM total (the footprint)"] == fp["rom_bytes"]
    assert image["RAM total (the footprint)"] == fp["ram_bytes"]
    assert image["ROM: MLI kernel code"] == fp["rom"]["mli_code"] > 0


def test_refusal_under_json_is_a_document_with_grouped_reasons(tmp_path, capsys):
    model = shared_path("models", "mlperf_tiny", "vww_96_int8.tflite")
    code, out, err = run_main(["convert", model, "--mli", "1.0", "-o", tmp_path, "--json"], capsys)
    assert code == 4
    doc = json.loads(out)
    assert doc["converted"] is False and len(doc["refusals"]) == 1
    refusal = doc["refusals"][0]
    assert refusal["reason"].startswith("MLI 1.0 has no sa8 kernel for CHW layout")
    assert [o["index"] for o in refusal["ops"]] == list(range(31))
    # stderr: the head and one line per reason (it was one 4,909-character line, the reason 31x)
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].count("has no sa8 kernel") == 1
    assert lines[0].startswith("mlitool: error: 31 op(s) have no kernel on MLI 1.0: MLI 1.0 ")
    assert "CONV_2D (ops 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26)" in lines[0]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("extra", "code", "verdict"),
    [((), 0, "UNCHECKED"), (("--min-snr", "10"), 0, "PASS"), (("--min-snr", "99"), 3, "FAIL")],
)
def test_verify_answers_first_with_a_verdict(capsys, extra, code, verdict):
    args = ["verify", SAMPLES / "cnn_int8.tflite", "-n", "4", *extra]
    got, out, err = run_main([*args, "--json"], capsys)
    assert got == code, err
    doc = json.loads(out)
    o = doc["outputs"][0]
    assert doc["summary"]["verdict"] == verdict
    snr = f"output SNR {o['vs_float']['snr_db']:.2f} dB vs float"
    assert snr in doc["summary"]["text"]
    assert f"max {o['vs_tflite']['max_lsb']} LSB vs tflite" in doc["summary"]["text"]
    got, out, err = run_main(args, capsys)
    # FAIL names what failed first; PASS / UNCHECKED the thresholds checked
    head = "FAIL: output 'Identity' SNR" if verdict == "FAIL" else f"{verdict} ("
    assert out.splitlines()[0].startswith(f"cnn_int8: {head}")


def test_report_summary_leads_terminal_markdown_html(tmp_path, capsys):
    code, out, err = run_main(
        ["report", SAMPLES / "cnn_int8.tflite", "-n", "2", "-o", tmp_path, "--json"], capsys
    )
    assert code in (0, 3), err
    meta = json.loads(out)["meta"]
    rom = json.loads(
        run_main(["convert", SAMPLES / "cnn_int8.tflite", "-o", tmp_path, "--json"], capsys)[1]
    )["footprint"]
    line = meta["summary"]
    assert line.startswith(f"{meta['verdict']}: RAM {rom['ram_bytes']:,} B (arena ")
    assert f"ROM {rom['rom_bytes']:,} B" in line and "output SNR" in line
    md = (tmp_path / "cnn_int8.report.md").read_text().splitlines()
    assert md[2] == f"- **summary**: {line}"
    html = (tmp_path / "cnn_int8.report.html").read_text()
    assert f'<p class="summary">{line}</p>' in html


def test_refusals_with_two_reasons_are_one_line_each():
    from mlitool.errors import RefusedOps

    exc = RefusedOps(
        "cannot be lowered for MLI 2.0",
        [(0, "COS", "no kernel"), (1, "SIN", "no kernel"), (2, "COS", "no kernel"), (3, "X", "y")],
    )
    assert exc.lines() == [
        "4 op(s) cannot be lowered for MLI 2.0, for 2 reasons:",
        "no kernel: 3 ops: COS (ops 0, 2), SIN (op 1)",
        "op 3 (X): y",
    ]
    assert exc.exit_code == 4


def test_input_that_is_not_a_regular_file_says_so(capsys):
    code, _, err = run_main(["verify", SAMPLES / "cnn_int8.tflite", "-i", "/dev/null"], capsys)
    assert code == 2
    assert err.strip() == (
        "mlitool: error: /dev/null: is not a regular file; give a .npy or .npz file"
    )
