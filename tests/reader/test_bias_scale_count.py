"""A bias whose scale count differs from its weights' (found by fuzzing: an internal error in
lowering): TFLite runs such a file and reads the bias in input scale x weight scale units, so
the reader sets those scales, with a warning; float mode then equals LiteRT, and the model
converts in sa8 and fx16."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.execute.reference.graph import run_graph
from mlitool.pipeline import read
from tests.support import bias_models as B

KINDS = sorted(B.W_SCALES)


@pytest.mark.parametrize("kind", KINDS)
def test_bias_scales_become_input_times_weight_scales(kind, tmp_path):
    model = read(B.mismatched_bias_conv(tmp_path / f"{kind}.tflite", kind))
    bias = model.main.tensors[2]
    expected = [float(np.float32(B.IN_SCALE) * np.float32(s)) for s in B.W_SCALES[kind]]
    assert bias.quant.scale.tolist() == expected
    assert bias.quant.zero_point.tolist() == [0] * len(expected)
    assert bias.quant.axis == (0 if len(expected) > 1 else None)
    n_b = 3 if kind == "per_tensor_weights" else 1
    assert model.warnings == [
        (
            f"tensor 2 'b' of subgraph 0, the bias of op 0 (CONV_2D): {n_b} quantization scale(s) "
            f"for weights with {len(expected)}; scales set to input scale x weight scale, the units "
            "TFLite's kernels add it in"
        )
    ]


@pytest.mark.parametrize("kind", KINDS)
def test_float_mode_equals_litert(kind, tmp_path):
    pytest.importorskip("ai_edge_litert.interpreter", reason="needs ai-edge-litert")
    from mlitool.oracle import run_litert

    path = B.mismatched_bias_conv(tmp_path / f"{kind}.tflite", kind)
    g = read(path).main
    x = np.random.default_rng(2).integers(-128, 128, (8, 1, 5, 5, 2), dtype=np.int8)
    ref = run_litert(path, g, {0: x}, [3])[3]
    assert ref.dtype == np.int8
    real = run_graph(g, {0: (x.astype(np.float64) - 3) * B.IN_SCALE}, "float")[3]
    # TFLite's integer result is the real one rounded and saturated, within one output step
    np.testing.assert_allclose(np.clip(real / B.OUT_SCALE - 2, -128, 127), ref, atol=1.0)
    assert np.mean((ref > -128) & (ref < 127)) > 0.8  # mostly not saturated
    assert np.array_equal(run_graph(g, {0: x}, "tflite")[3], ref)


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
@pytest.mark.parametrize("kind", KINDS)
def test_converts(kind, fmt, tmp_path, capsys):
    from mlitool.cli.entry import main

    path = B.mismatched_bias_conv(tmp_path / f"{kind}.tflite", kind)
    with pytest.raises(SystemExit) as exc:
        main(["convert", str(path), "-o", str(tmp_path / "out"), "--format", fmt, "-q"])
    err = capsys.readouterr().err
    assert exc.value.code == 0, err
    assert err.count("scales set to input scale x weight scale") == 1
