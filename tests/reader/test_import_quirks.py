"""Models people have, as published: TFLite Micro's 1-D biases quantized along axis 3, and
float16 weights behind DEQUANTIZE. Each converts, and tflite / float mode equals LiteRT."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mlitool.execute.reference.graph import run_graph
from mlitool.pipeline import read
from tests.support.cli import run_main
from tests.support.tflite_build import T, build, fc_spec, graph_model, options

litert = pytest.importorskip("ai_edge_litert.interpreter", reason="needs ai-edge-litert")


def _litert(path, x: np.ndarray) -> np.ndarray:
    from mlitool.oracle import run_litert

    g = read(path).main
    return run_litert(path, g, {g.inputs[0]: x}, [g.outputs[0]])[g.outputs[0]]


def test_bias_quantized_along_axis_3_reads_as_per_axis(tmp_path, capsys):
    spec = fc_spec()
    spec.tensors[2].axis = 3  # as TFLite Micro's person_detect.tflite has it
    path = tmp_path / "tflm_bias.tflite"
    path.write_bytes(build(spec))
    model = read(path)
    bias = model.main.tensors[2]
    assert bias.quant.axis == 0 and bias.quant.scale.tolist() == pytest.approx([0.05, 0.1, 0.15])
    assert any("quantized_dimension 3" in w and "axis 0" in w for w in model.warnings)
    for command in (["inspect", path], ["convert", path, "-o", tmp_path / "out"]):
        code, out, err = run_main([*command, "--json"], capsys)
        assert code == 0, err
        assert "quantized_dimension 3" in err  # the warning, on every command
    # LiteRT refuses the file ("quantized_dimension must be in range [0, 1)"; TFLite Micro runs
    # it): compare with LiteRT on the same model with the axis TFLite Micro reads.
    spec.tensors[2].axis = 0
    tidy = tmp_path / "tidy_bias.tflite"
    tidy.write_bytes(build(spec))
    x = np.random.default_rng(0).integers(-128, 128, (16, 1, 4), dtype=np.int8)
    g = model.main
    ours = run_graph(g, {g.inputs[0]: x}, "tflite")[g.outputs[0]]
    np.testing.assert_array_equal(ours, _litert(tidy, x))


def _tflm_fc_chain(path, layers: int) -> list[str]:
    """`layers` int8 FULLY_CONNECTED [1,4] -> [1,4], each bias quantized per element along axis 3
    as in TFLite Micro's person detection; returns the bias names."""
    rng = np.random.default_rng(4)
    tensors, ops, biases = [T([1, 4], scale=[0.5], zero_point=[0], name="x")], [], []
    for k in range(layers):
        w_scale = [0.01, 0.02, 0.03, 0.04]
        biases.append(f"layer{k}/bias")
        x = len(tensors) - 1
        tensors += [
            T(
                [4, 4],
                scale=w_scale,
                zero_point=[0] * 4,
                name=f"layer{k}/weights",
                data=rng.integers(-127, 128, (4, 4), dtype=np.int8),
            ),
            T(
                [4],
                dtype="int32",
                scale=[0.5 * s for s in w_scale],
                zero_point=[0] * 4,
                axis=3,
                name=biases[-1],
                data=rng.integers(-500, 500, 4, dtype=np.int32),
            ),
            T([1, 4], scale=[0.5], zero_point=[0], name=f"layer{k}/out"),
        ]
        ops.append(
            ("FULLY_CONNECTED", [x, x + 1, x + 2], [x + 3], options("FullyConnectedOptions"))
        )
    path.write_bytes(graph_model(tensors, ops, [0], [len(tensors) - 1]))
    return biases


def test_verify_litert_oracle_says_why_litert_cannot_load_and_goes_on(tmp_path, capsys):
    # LiteRT refuses biases quantized along axis 3 (TFLite Micro runs them): verify says so on
    # one stderr line and in the JSON document, and compares with float and tflite mode.
    path = tmp_path / "tflm_chain.tflite"
    _tflm_fc_chain(path, 2)
    code, out, err = run_main(["verify", path, "-n", 3, "--oracle", "litert", "--json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    oracle = doc["references"]["oracle"]
    assert oracle["available"] is False and doc["references"]["tflite"] is True
    assert oracle["message"].startswith(
        "LiteRT cannot load tflm_chain.tflite: quantized_dimension must be in range [0, 1). Was 3. "
    )
    assert oracle["message"].endswith("(2 such errors)")  # one per bias, said once
    assert doc["warnings"][-1] == f"--oracle litert not used: {oracle['message']}"
    line = [x for x in err.splitlines() if "--oracle litert" in x]
    assert line == [f"warning: --oracle litert not used: {oracle['message']}"]
    o = doc["outputs"][0]
    assert o["vs_tflite"]["max_lsb"] >= 0 and "vs_litert" not in o
    code, out, err = run_main(["verify", path, "-n", 3, "--oracle", "litert"], capsys)
    assert code == 0 and "oracle litert not used: LiteRT cannot load" in " ".join(out.split())


def test_warnings_of_one_kind_are_one_line_on_stderr_on_every_command(tmp_path, capsys):
    path = tmp_path / "tflm_chain.tflite"
    biases = _tflm_fc_chain(path, 5)
    np.save(tmp_path / "x.npy", np.zeros((2, 1, 4), np.int8))
    want = (
        "warning: 5 tensors of subgraph 0: one quantization scale per element with "
        "quantized_dimension 3 on a 1-D tensor; read as per-axis along axis 0 (tensor 2 "
        "'layer0/bias', tensor 5 'layer1/bias', tensor 8 'layer2/bias' and 2 more)"
    )
    for command in (
        ["inspect", path],
        ["convert", path, "-o", tmp_path / "o"],
        ["run", path, "-i", tmp_path / "x.npy", "-o", tmp_path / "o"],
        ["run", path, "-i", tmp_path / "x.npy", "-o", tmp_path / "o", "-m", "tflite"],
        ["verify", path, "-n", 2],
        ["report", path, "-n", 2, "--no-accuracy"],
    ):
        for as_json in (False, True):
            code, out, err = run_main([*command, *(["--json"] if as_json else [])], capsys)
            assert code == 0, err
            assert [x for x in err.splitlines() if x.startswith("warning:")] == [want], command
            if as_json and command[0] != "report":  # the document keeps every warning
                warned = [w for w in json.loads(out)["warnings"] if "quantized_dimension" in w]
                assert [w.split("'")[1] for w in warned] == biases
            if not as_json:
                assert "quantized_dimension" not in out, command


def _float16_fc(tmp_path):
    rng = np.random.default_rng(3)
    w16 = rng.normal(0, 0.5, (3, 4)).astype(np.float16)
    tensors = [
        T([1, 4], dtype="float32", name="input"),
        T([3, 4], dtype="float16", data=w16, name="w16"),
        T([3, 4], dtype="float32", name="w"),
        T([3], dtype="float32", data=np.float32([0.1, -0.2, 0.3]), name="b"),
        T([1, 3], dtype="float32", name="output"),
    ]
    path = tmp_path / "fp16.tflite"
    path.write_bytes(
        graph_model(
            tensors,
            [("DEQUANTIZE", [1], [2], None), ("FULLY_CONNECTED", [0, 2, 3], [4], None)],
            [0],
            [4],
        )
    )
    return path, w16


def test_float16_weights_are_folded_into_constants(tmp_path):
    path, w16 = _float16_fc(tmp_path)
    g = read(path).main
    assert [op.type for op in g.ops] == ["FULLY_CONNECTED"] and g.ops[0].index == 1
    w = g.tensors[g.ops[0].inputs[1]]
    assert w.dtype == "float32" and np.array_equal(w.data, w16.astype(np.float32))
    x = np.random.default_rng(1).uniform(-1, 1, (8, 1, 4)).astype(np.float32)
    ours = run_graph(g, {g.inputs[0]: x}, "float")[g.outputs[0]]
    np.testing.assert_allclose(ours, _litert(path, x), rtol=1e-6, atol=1e-6)


def test_float16_weight_model_converts_with_calibration_and_weights_only(tmp_path, capsys):
    path, _ = _float16_fc(tmp_path)
    np.save(
        tmp_path / "calib.npy",
        np.random.default_rng(2).uniform(-1, 1, (16, 1, 4)).astype(np.float32),
    )
    code, out, err = run_main(
        ["convert", path, "-o", tmp_path / "a", "--calibration", tmp_path / "calib.npy", "--json"],
        capsys,
    )
    assert code == 0, err
    assert [layer["kernel"] for layer in json.loads(out)["layers"]][
        -1
    ] == "mli_krn_fully_connected_sa8_sa8_sa32"
    code, out, err = run_main(
        ["convert", path, "-o", tmp_path / "b", "--weights-only", "--json"], capsys
    )
    assert code == 0, err
    manifest = json.loads((tmp_path / "b" / "fp16.json").read_text())
    assert any(t["role"] == "weights" for t in manifest["tensors"])
    # The config names ops by the file's indices: the FULLY_CONNECTED stays op 1.
    (tmp_path / "mlitool.toml").write_text('[[layer]]\nindex = 1\nformat = "fx16"\n')
    code, out, err = run_main(
        [
            "convert",
            path,
            "-o",
            tmp_path / "c",
            "--calibration",
            tmp_path / "calib.npy",
            "--config",
            tmp_path / "mlitool.toml",
            "--json",
        ],
        capsys,
    )
    assert code == 0, err
    assert "mli_krn_fully_connected_fx16" in [
        layer["kernel"] for layer in json.loads(out)["layers"]
    ]


def test_int8_to_int16_softmax_is_valid_but_unsupported(tmp_path, capsys):
    # TFLite Micro's keyword models: SOFTMAX from int8 to int16. Valid (exit 4 names the op, not
    # exit 2 "malformed"); tflite mode and MLI do not run it.
    path = tmp_path / "softmax16.tflite"
    from tests.support.tflite_build import single_op_model

    path.write_bytes(
        single_op_model(
            "SOFTMAX",
            [T([1, 10], scale=[0.1], zero_point=[-128])],
            [T([1, 10], dtype="int16", scale=[1 / 32768], zero_point=[0])],
        )
    )
    code, _, err = run_main(["convert", path, "-o", tmp_path / "o"], capsys)
    assert code == 4 and "op 0 (SOFTMAX)" in err and "malformed" not in err


def test_a_custom_ops_own_buffers_are_not_malformed(tmp_path, capsys):
    # Vela's Ethos-U models: a CUSTOM op reading scratch tensors no op writes.
    from tests.support.tflite_build import Code, Op, Spec

    spec = Spec(
        tensors=[T([1, 4], name="x"), T([16], dtype="uint8", name="scratch"), T([1, 4], name="y")],
        ops=[Op(0, [0, 1], [2])],
        codes=[Code(builtin=32, custom="ethos-u")],
        inputs=[0],
        outputs=[2],
    )
    path = tmp_path / "vela.tflite"
    path.write_bytes(build(spec))
    code, _, err = run_main(["convert", path, "-o", tmp_path / "o"], capsys)
    assert code == 4 and "op 0 (ethos-u): no MLI kernel for this op" in err
