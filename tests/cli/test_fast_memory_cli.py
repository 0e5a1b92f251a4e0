"""`convert --fast-memory SIZE` and the config key `fast_memory`: sizes, refusals, exit codes."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mlitool.errors import OptionError
from mlitool.mli.memory.placement import parse_size
from tests.support.cli import run_main
from tests.support.paths import SAMPLES, shared_path
from tests.support.tflite_build import T, graph_model

CNN = SAMPLES / "cnn_int8.tflite"


@pytest.mark.parametrize(
    "text,size", [("65536", 65536), ("64K", 65536), ("64k", 65536), ("1M", 1 << 20), (512, 512)]
)
def test_sizes(text, size):
    assert parse_size(text, "--fast-memory") == size


@pytest.mark.parametrize("text", ["", "0", "64KB", "-1", "1.5K", "4096M", True, 2.0])
def test_bad_sizes(text):
    with pytest.raises(OptionError):
        parse_size(text, "--fast-memory")


def test_budget_in_header_and_manifest(tmp_path, capsys):
    code, _, err = run_main(["convert", CNN, "-o", tmp_path, "--fast-memory", "32K", "-q"], capsys)
    assert code == 0, err
    header = (tmp_path / "cnn_int8.h").read_text()
    # Everything resident at 32 KB: the activations' 16384 + 4096 bytes, the largest staging
    # (layer 5, conv2: 3x3x16x32 int8 weights and 32 int32 biases, 4608 + 128 bytes) and the
    # softmax table (358 int16, 716 bytes).
    assert f"#define CNN_INT8_FAST_BYTES {16384 + 4096 + 4608 + 128 + 716}u" in header
    assert "#define CNN_INT8_SLOW_BYTES 0u" in header
    assert "mli_status cnn_int8_init(void *fast, size_t fast_bytes, void *slow, " in header
    assert "CNN_INT8_ARENA_BYTES" not in header
    fm = json.loads((tmp_path / "cnn_int8.json").read_text())["runtime"]["fast_memory"]
    assert (fm["budget"], fm["fast_bytes"], fm["slow_bytes"]) == (32768, 25932, 0)


def test_config_key_and_option_over_it(tmp_path, capsys, monkeypatch):
    (tmp_path / "mlitool.toml").write_text('fast_memory = "24K"\n')
    monkeypatch.chdir(tmp_path)
    code, _, err = run_main(["convert", CNN, "-o", "a", "-q"], capsys)
    assert code == 0, err
    fm = json.loads((tmp_path / "a" / "cnn_int8.json").read_text())["runtime"]["fast_memory"]
    assert fm["budget"] == 24 * 1024 and fm["slow_bytes"] == 16384
    code, _, err = run_main(["convert", CNN, "-o", "b", "-q", "--fast-memory", "64K"], capsys)
    assert code == 0, err
    fm = json.loads((tmp_path / "b" / "cnn_int8.json").read_text())["runtime"]["fast_memory"]
    assert fm["budget"] == 64 * 1024 and fm["slow_bytes"] == 0


def test_bad_config_value_names_the_file(tmp_path, capsys, monkeypatch):
    (tmp_path / "mlitool.toml").write_text('fast_memory = "lots"\n')
    monkeypatch.chdir(tmp_path)
    code, _, err = run_main(["convert", CNN, "-o", "a"], capsys)
    assert code == 2
    assert "mlitool.toml: fast_memory 'lots': give bytes" in err


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--fast-memory", "64KB"], "--fast-memory '64KB': give bytes"),
        (["--fast-memory", "64K", "--no-runtime"], "cannot go with --no-runtime"),
        (["--fast-memory", "64K", "--mli", "1.1", "-f", "fx16"], "MLI 1.1 does not have"),
    ],
)
def test_refused_options_write_nothing(extra, message, tmp_path, capsys):
    code, _, err = run_main(["convert", CNN, "-o", tmp_path, *extra], capsys)
    assert code == 2 and message in err
    assert list(tmp_path.iterdir()) == []


def test_layers_that_do_not_fit_run_in_row_tiles(tmp_path, capsys):
    code, _, err = run_main(["convert", CNN, "-o", tmp_path, "--fast-memory", "16K", "-q"], capsys)
    assert code == 0, err
    fm = json.loads((tmp_path / "cnn_int8.json").read_text())["runtime"]["fast_memory"]
    # conv1 (32x32x3 in, 32x32x16 out) and maxpool (32x32x16 in) need more than 16384 - 716
    # bytes whole; in two tiles of output rows each they fit.
    assert [la["tiles"] for la in fm["layers"]] == [2, 2, 1, 1, 1, 1, 1, 1, 1]
    assert fm["tiled_layers"] == 2 and fm["fast_bytes"] <= 16384


def test_weights_over_the_budget_run_in_channel_slices(tmp_path, capsys):
    model = shared_path("models", "mlperf_tiny", "vww_96_int8.tflite")
    code, _, err = run_main(["convert", model, "-o", tmp_path, "--fast-memory", "64K"], capsys)
    assert code == 0, err
    fm = json.loads((tmp_path / "vww_96_int8.json").read_text())["runtime"]["fast_memory"]
    # conv 26 (1x1, 3x3x256 -> 3x3x256) needs 65536 + 1024 + 2304 + 2304 bytes whole, more
    # than 65536 - 716 even in row tiles; two slices of 128 output channels need
    # 32768 + 512 + 2304 + 2304.
    assert [la["tiles"] for la in fm["layers"]] == [1] * 26 + [2, 1, 0, 1, 1]  # 28: a view
    assert fm["tiled_layers"] == 1 and fm["fast_bytes"] <= 65536
    # the staging slots of one slice; every weight and bias byte moved once
    assert fm["layers"][26]["constants_bytes"] == 32768 + 512
    assert fm["layers"][26]["bytes_moved"] >= 65536 + 1024


@pytest.mark.parametrize(
    "model,budget,message",
    [
        # FULLY_CONNECTED reads 25x20x8 (4000 bytes) and writes 4; one neuron's slice: 4000
        # weight bytes and a 4-byte bias; with the 716-byte softmax table, 8724
        (
            "tflm/micro_speech_int8",
            "8K",
            "layer 2 (FULLY_CONNECTED, TFLite op 2) needs at least 8724 bytes of fast memory "
            "(716 of them look-up tables), more than --fast-memory 8192: even in tiles of one "
            "output row or channel",
        ),
        # depthwise 3x3x256 -> 3x3x256 (depthwise is not sliced by channels): 2304 weight and
        # 1024 bias bytes, a middle row tile reads three 768-byte rows and writes one
        (
            "mlperf_tiny/vww_96_int8",
            "6K",
            "layer 25 (DEPTHWISE_CONV_2D, TFLite op 25) needs at least 7116 bytes of fast memory "
            "(716 of them look-up tables), more than --fast-memory 6144: even in tiles of one "
            "output row or channel",
        ),
    ],
)
def test_a_layer_that_cannot_fit_exits_4_with_its_least_bytes(
    model, budget, message, tmp_path, capsys
):
    model = shared_path("models", f"{model}.tflite")
    code, _, err = run_main(["convert", model, "-o", tmp_path, "--fast-memory", budget], capsys)
    assert code == 4
    assert message in err
    assert list(tmp_path.iterdir()) == []


def test_a_prelu_whose_slope_varies_along_the_rows_is_not_row_tiled(tmp_path, capsys):
    """A slope per row would need slicing with the rows: such a prelu must fit whole (its
    960-byte input and output and 12 slope bytes)."""
    shape = [1, 12, 10, 8]
    alpha = np.arange(12, dtype=np.int8).reshape(12, 1, 1)
    tensors = [
        T(shape, scale=[0.05], zero_point=[3], name="x"),
        T([12, 1, 1], scale=[0.01], zero_point=[0], name="alpha", data=alpha),
        T(shape, scale=[0.04], zero_point=[-10], name="y"),
    ]
    model = tmp_path / "prelu_rows.tflite"
    model.write_bytes(graph_model(tensors, [("PRELU", [0, 1], [2], None)], [0], [2]))
    code, _, err = run_main(["convert", model, "-o", tmp_path / "o", "--fast-memory", "1K"], capsys)
    assert code == 4
    assert (
        "layer 0 (PRELU, TFLite op 0) needs at least 1932 bytes of fast memory, more than "
        "--fast-memory 1024: it cannot be tiled: its slope varies along the rows"
    ) in err


def test_inserted_layers_are_named_after_the_op_they_serve():
    from mlitool.mli.memory.placement import layer_label
    from mlitool.pipeline import ModelOptions, load, settle

    _, model = load(CNN, settle(ModelOptions(format="fx16")))
    labels = [layer_label(pos, la) for pos, la in enumerate(model.layers)]
    assert labels[4:6] == [
        "layer 4 (ADD, TFLite op 4)",
        "layer 5 (relu inserted after ADD, TFLite op 4)",  # the ADD's fused RELU
    ]
