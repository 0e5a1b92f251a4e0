"""The emitted runtime on the real MLI 2.0.2 library equals the `mli` executor, bit for bit.

For every shared int8 model and sample in sa8 / fx16 / fx8w16d (the float sample with its
calibration data): NAME.c compiled once with the strict flags, linked against the four
ROUND_MODE x FULL_ACCU builds, 16 seeded random inputs over every level of the input containers
plus the real inputs of ../shared/models/inputs, and the first input again at the end (repeated
NAME_run calls must not drift). Every layer's output (through the layer hook) and every model
output must equal `run_model` (what `mlitool run --mode mli --round R --accu A` computes), and
every kernel must return MLI_STATUS_OK (the driver stops with the status otherwise).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.support import runtime_harness as H
from tests.support.paths import SAMPLES, mli_cflags, shared_path
from tests.support.real_inputs import cifar10_test20_int8

# Real inputs in the model's own representation (see ../shared/models/README.md).
REAL_INPUTS = {
    "kws_ref_model_int8": lambda: np.load(shared_path("models", "inputs", "kws_mfcc_int8.npy")),
    "resnet8_int8": lambda: cifar10_test20_int8()[:4],  # 4 real images keep it fast
    "ad01_int8": lambda: np.load(
        shared_path("models", "inputs", "dcase_toycar_frames_float32.npy")
    ),
    "cnn_int8": lambda: np.load(SAMPLES / "cnn_input_int8.npy"),
    "cnn_float": lambda: np.load(SAMPLES / "cnn_calib.npy")[:8],
}


def calibration(stem: str, tmp_path: Path) -> Path | None:
    """cnn_float: the representative data its int8 twin was quantized with. fc_float has none in
    samples/: seeded inputs over fc_int8's input range (real [-2.95, 3.24])."""
    if stem == "cnn_float":
        return SAMPLES / "cnn_calib.npy"
    if stem == "fc_float":
        path = tmp_path / "fc_calib.npy"
        np.save(path, np.random.default_rng(1).uniform(-2.95, 3.24, (64, 64)).astype(np.float32))
        return path
    return None


SHARED_INT8 = [
    "mlperf_tiny/kws_ref_model_int8",
    "mlperf_tiny/vww_96_int8",
    "mlperf_tiny/resnet8_int8",
    "mlperf_tiny/ad01_int8",
    "tflm/hello_world_int8",
    "tflm/micro_speech_int8",
    "embarc_mli/mobilenet_v1_int8",
]
SAMPLE_MODELS = ["cnn_int8", "fc_int8", "cnn_float", "fc_float"]
FORMATS = ["sa8", "fx16", "fx8w16d"]
CASES = [(m, f) for m in SHARED_INT8 + SAMPLE_MODELS for f in FORMATS]


def _path(model: str) -> Path:
    if "/" in model:
        return shared_path("models", f"{model}.tflite")
    return SAMPLES / f"{model}.tflite"


@pytest.mark.parametrize("model,fmt", CASES, ids=[f"{m.split('/')[-1]}-{f}" for m, f in CASES])
def test_runtime_equals_executor(model, fmt, mli_builds, tmp_path):
    path = _path(model)
    real = REAL_INPUTS[path.stem]() if path.stem in REAL_INPUTS else None
    H.assert_bit_exact(
        H.run_case(
            path,
            fmt,
            tmp_path,
            mli_builds,
            mli_cflags("2.0"),
            calibration=calibration(path.stem, tmp_path),
            real=real,
        )
    )
