"""samples/c, the CMake project a user copies: it builds MLI from its sources, runs `mlitool convert`
as a build step, and its main.c classifies the shared real inputs as the models' README says (kws ->
5; resnet8 -> the interpreter's classes of 20 real CIFAR-10 images, 19 of them their label),
printing the outputs `mlitool run --mode mli` computes for that build."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.support.mli_build import MliUnavailable, mli2_root
from tests.support.paths import ROOT, mli_unavailable, shared_path
from tests.support.real_inputs import RESNET8_CLASSES, assert_resnet8_classes, cifar10_test20_int8

SAMPLE = ROOT / "samples" / "c"
MLITOOL = [sys.executable, "-m", "mlitool"]
# The sample's default build: ROUND_MODE=UP, FULL_ACCU=OFF, which `run` calls --round up --accu reduced.
RUN_BUILD = ["--round", "up", "--accu", "reduced"]

pytestmark = pytest.mark.skipif(
    not all(shutil.which(t) for t in ("cmake", "gcc", "g++")),
    reason="cmake, gcc and g++ are needed to build the CMake sample",
)


class Sample:
    """One build tree of samples/c, reconfigured per model: MLI is built once for all tests."""

    def __init__(self, build: Path, mli_root: Path):
        self.build, self.mli_root = build, mli_root

    def configure(self, model: Path, **cache) -> None:
        defs = {
            "MLI_ROOT": self.mli_root,
            "MODEL": model,
            "MODEL_NAME": "",
            "MLITOOL": ";".join(MLITOOL),
            "FORMAT": "sa8",
            "CMAKE_C_FLAGS": "-Werror",
            "MLITOOL_FAST_MEMORY": "",
            **cache,
        }
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        _run(
            [
                "cmake",
                "-S",
                SAMPLE,
                "-B",
                self.build,
                *generator,
                *[f"-D{k}={v}" for k, v in defs.items()],
            ]
        )

    def make(self) -> str:
        return _run(["cmake", "--build", self.build, "--parallel", "2"])

    def classify(self, model: Path, data: Path, value=int) -> tuple[list, int]:
        """Builds the sample for `model` and runs it on `data`: (output 0's values, top class)."""
        self.configure(model)
        self.make()
        return self.run(data, value)

    def run(self, data: Path, value=int) -> tuple[list, int]:
        """Runs the model last built on `data`: (output 0's values, top class)."""
        lines = _run([self.build / "mlitool_sample", data]).splitlines()
        values = next(line for line in lines if line.startswith("output 0:")).split(":")[1].split()
        top = next(line for line in lines if line.startswith("top class:")).split(":")[1]
        return [value(v) for v in values], int(top)


def _run(cmd) -> str:
    res = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    assert res.returncode == 0, (
        f"{' '.join(map(str, cmd))}\n{res.stdout[-4000:]}\n{res.stderr[-4000:]}"
    )
    return res.stdout


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> Sample:
    try:
        root = mli2_root()
    except MliUnavailable as reason:
        mli_unavailable(reason)
    return Sample(tmp_path_factory.mktemp("sample_c") / "build", root)


def _mli_outputs(model: Path, data: Path, out: Path) -> list[int]:
    _run(MLITOOL + ["run", model, "--input", data, "--mode", "mli", *RUN_BUILD, "--npz", out])
    with np.load(out) as npz:
        (values,) = npz.values()
    return values.reshape(-1).tolist()


def test_kws_classifies_the_real_input(sample, tmp_path):
    model = shared_path("models", "mlperf_tiny", "kws_ref_model_int8.tflite")
    data = shared_path("models", "inputs", "kws_mfcc_int8.npy")
    values, top = sample.classify(model, data)
    assert top == 5
    header = (sample.build / "model" / "kws_ref_model_int8.h").read_text()
    assert (
        '#define KWS_REF_MODEL_INT8_MLI_BUILD "ROUND_MODE=UP FULL_ACCU=OFF"' in header
    )  # the sample's build
    assert values == _mli_outputs(model, data, tmp_path / "mli.npz")


def test_resnet8_classifies_real_images(sample, tmp_path):
    model = shared_path("models", "mlperf_tiny", "resnet8_int8.tflite")
    images = cifar10_test20_int8()
    files = [tmp_path / f"image{i}.npy" for i in range(len(images))]
    for f, image in zip(files, images):
        np.save(f, image[None])
    runs = [sample.classify(model, files[0])] + [sample.run(f) for f in files[1:]]
    values = np.array([v for v, _ in runs])
    assert [top for _, top in runs] == RESNET8_CLASSES
    assert_resnet8_classes(values)
    np.save(tmp_path / "all.npy", images)
    assert values.reshape(-1).tolist() == _mli_outputs(
        model, tmp_path / "all.npy", tmp_path / "mli.npz"
    )


def test_convert_reruns_only_when_the_model_or_a_setting_changes(sample, tmp_path):
    model = tmp_path / "fc.tflite"
    shutil.copyfile(SAMPLE.parent / "fc_int8.tflite", model)
    sample.configure(model)
    assert "mlitool convert" in sample.make()
    assert "mlitool convert" not in sample.make()  # nothing changed
    model.touch()
    assert "mlitool convert" in sample.make()  # the .tflite changed
    sample.configure(model, FORMAT="fx16")
    assert "mlitool convert" in sample.make()  # a convert setting changed
    assert "format fx16" in (sample.build / "model" / "fc.h").read_text()
    sample.configure(model, FORMAT="fx16")
    assert "mlitool convert" not in sample.make()  # reconfiguring alone converts nothing


def test_a_float_output_prints_real_values(sample, tmp_path):
    """QUANTIZE -> DEQUANTIZE: a float32 output is printed as numbers (%g), not as int32 bit patterns."""
    model = SAMPLE.parent / "ops" / "quantize_dequantize.tflite"
    data = tmp_path / "x.npy"
    np.save(data, np.linspace(-3.0, 2.0, 128, dtype=np.float32).reshape(1, 4, 4, 8))
    mli = _mli_outputs(model, data, tmp_path / "mli.npz")
    values, top = sample.classify(model, data, value=float)
    assert np.allclose(values, mli, rtol=1e-5, atol=0) and len(values) == len(mli)
    assert top == int(np.argmax(mli))


def test_selftest_target_passes_and_prints_the_crc_log(sample, tmp_path):
    """`--target selftest`: NAME_selftest on the library the sample builds (ROUND_MODE=UP,
    FULL_ACCU=OFF) passes, and its log has the CRCs `run --dump-crc` computes for that build."""
    from mlitool.crclog import parse_log

    model = shared_path("models", "mlperf_tiny", "kws_ref_model_int8.tflite")
    sample.configure(model, SELFTEST_SAMPLES="2")
    _run(["cmake", "--build", sample.build, "--parallel", "2", "--target", "selftest"])
    log = parse_log(_run([sample.build / "selftest"]))
    assert (log.build, log.layers, log.samples) == ("ROUND_MODE=UP FULL_ACCU=OFF", 13, 2)
    assert len(log.crcs) == 26
    assert "selftest" not in (sample.build / "model" / "kws_ref_model_int8.c").read_text()


def test_fast_memory_budget(sample, tmp_path):
    """MLITOOL_FAST_MEMORY=12000: convert plans kws for 12,000 bytes of fast memory (nine layers
    in row tiles, activations in the slow arena) and main.c runs it on the two buffers the
    header's NAME_FAST_BYTES / NAME_SLOW_BYTES size, NAME_CHECK_OPERANDS on: the real input's
    class and the outputs of `run --mode mli`; the selftest target passes on two buffers."""
    import json

    from mlitool.crclog import parse_log

    model = shared_path("models", "mlperf_tiny", "kws_ref_model_int8.tflite")
    data = shared_path("models", "inputs", "kws_mfcc_int8.npy")
    sample.configure(
        model,
        MLITOOL_FAST_MEMORY="12000",
        SELFTEST_SAMPLES="2",
        CMAKE_C_FLAGS="-Werror -DKWS_REF_MODEL_INT8_CHECK_OPERANDS",
    )
    sample.make()
    gen = sample.build / "model"
    fm = json.loads((gen / "kws_ref_model_int8.json").read_text())["runtime"]["fast_memory"]
    assert fm["budget"] == 12000 and fm["slow_bytes"] > 0 and fm["tiled_layers"] > 0
    assert (
        "#define MODEL_FAST_BYTES  KWS_REF_MODEL_INT8_FAST_BYTES" in (gen / "model.h").read_text()
    )
    values, top = sample.run(data)
    assert top == 5
    assert values == _mli_outputs(model, data, tmp_path / "mli.npz")
    # The selftest target on the two buffers (NAME_selftest_arena's), operands checked too.
    _run(["cmake", "--build", sample.build, "--parallel", "2", "--target", "selftest"])
    log = parse_log(_run([sample.build / "selftest"]))
    assert (log.build, log.layers, log.samples) == ("ROUND_MODE=UP FULL_ACCU=OFF", 13, 2)
