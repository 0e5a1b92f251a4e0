"""The runtime for MLI 1.1 and 1.0: the same API over the 1.x FX (and 1.1 SA8) kernels, with their
CHW / HWC names and 1.x signatures (no look-up tables, no configs for fully connected and softmax,
an array of inputs for concatenation, a non-const input for mli_hlp_convert_tensor).

There is no 1.x library to run (it needs the ARC toolchain), so this compiles: NAME.c with the
layer hook enabled and a driver that calls the whole API, `gcc -std=c99 -Wall -Wextra -Werror
-pedantic` against the real 1.x headers of ../shared/mli (a wrong kernel name, argument count or
pointer type is an error there), and NAME.c as C++20. Every setting a model converts with is
compiled; a model of MODELS that converts with none fails.
"""

from __future__ import annotations

import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest

from mlitool.errors import MlitoolError
from tests.support import runtime_harness as H
from tests.support.paths import SAMPLES, mli_cflags, shared_path

DRIVER = r"""
#include "net.h"

void hook(unsigned layer, const mli_tensor *output) {
    (void)layer;
    (void)output;
}

static uint64_t arena[(NET_ARENA_BYTES + 7u) / 8u + 1u];

int main(void) {
    mli_tensor *in = net_input(0u), *out = net_output(NET_NUM_OUTPUTS - 1u);
    if (net_init(arena, sizeof arena) != MLI_STATUS_OK) return 1;
    if (in == NULL || out == NULL || out->capacity == 0u) return 2;
    return net_run() == MLI_STATUS_OK ? 0 : 3;
}
"""

# (MLI version, format, layout) settings a 1.x user picks.
SETTINGS = [
    ("1.1", "fx16", "chw"),
    ("1.1", "fx16", "hwc"),
    ("1.1", "sa8", "hwc"),
    ("1.1", "fx8w16d", "chw"),
    ("1.0", "fx16", "chw"),
    ("1.0", "fx8", "chw"),
]

# Every model that converts for MLI 1.x in at least one setting; the test compiles every setting
# it converts with (lowering's own checks, tested with lowering, decide the rest).
MODELS = [
    "samples/cnn_int8",
    "samples/fc_int8",
    *(
        f"shared/mlperf_tiny/{m}"
        for m in ("ad01_int8", "kws_ref_model_int8", "resnet8_int8", "vww_96_int8")
    ),
    "shared/tflm/hello_world_int8",
    "shared/tflm/micro_speech_int8",
    "shared/embarc_mli/mobilenet_v1_int8",
    *(
        f"samples/ops/{op}"
        for op in (
            "add",
            "add_const",
            "avg_pool_global_same",
            "concatenation",
            "concatenation_requant",
            "conv_stride2_same",
            "fully_connected_keep_dims",
            "fully_connected_per_tensor",
            "logistic",
            "max_pool",
            "max_pool_global_same",
            "maximum",
            "maximum_const",
            "mean_hw",
            "minimum",
            "minimum_const",
            "mul",
            "mul_const",
            "pad",
            "relu",
            "relu6",
            "relu_n1_to_1",
            "reshape",
            "softmax",
            "split",
            "split_v",
            "squeeze",
            "sub",
            "sub_const",
            "tanh",
            "transpose",
        )
    ),
]


def _path(model: str):
    where, rest = model.split("/", 1)
    return (
        SAMPLES / f"{rest}.tflite"
        if where == "samples"
        else shared_path("models", f"{rest}.tflite")
    )


def _compile(cmd: list[str]) -> str:
    r = subprocess.run(cmd, capture_output=True, text=True)
    return "" if r.returncode == 0 else f"{' '.join(cmd)}\n{r.stderr[-2000:]}"


def _converted(path, out, mli_version: str, fmt: str, layout: str) -> bool:
    try:
        H.convert(path, fmt, out, mli_version=mli_version, layout=layout)
    except MlitoolError:  # a refusal with a typed error: not this setting
        return False
    return True


@pytest.mark.parametrize("model", MODELS)
def test_mli1_runtime_compiles_against_the_real_headers(model, tmp_path):
    path = _path(model)
    cmds = []
    for mli_version, fmt, layout in SETTINGS:
        out = tmp_path / f"{mli_version}_{fmt}_{layout}"
        if not _converted(path, out, mli_version, fmt, layout):
            continue
        (out / "driver.c").write_text(DRIVER)
        inc = [*mli_cflags(mli_version), "-I", str(out)]
        cmds.append(
            [
                "gcc",
                *H.STRICT,
                "-DNET_LAYER_HOOK=hook",
                *inc,
                "-c",
                str(out / "net.c"),
                "-o",
                str(out / "net.o"),
            ]
        )
        cmds.append(
            [
                "gcc",
                *H.STRICT,
                "-DNET_LAYER_HOOK=hook",
                *inc,
                "-c",
                str(out / "driver.c"),
                "-o",
                str(out / "driver.o"),
            ]
        )
        if not model.startswith("samples/ops/"):
            cmds.append(
                [
                    "g++",
                    "-std=c++20",
                    *H.STRICT[1:],
                    "-x",
                    "c++",
                    *inc,
                    "-c",
                    str(out / "net.c"),
                    "-o",
                    str(out / "net_cxx.o"),
                ]
            )
    assert cmds, f"{model} converts for no MLI 1.x setting any more"
    with ThreadPoolExecutor(2) as pool:
        errors = [e for e in pool.map(_compile, cmds) if e]
    assert not errors, errors[0]
