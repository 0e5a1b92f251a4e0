"""The runtime for MLI 1.1 and 1.0: the same API over the 1.x FX (and 1.1 SA8) kernels, with their
CHW / HWC names and 1.x signatures (no look-up tables, no configs for fully connected and softmax,
an array of inputs for concatenation, a non-const input for mli_hlp_convert_tensor).

There is no 1.x library to run (it needs the ARC toolchain), so this compiles: NAME.c with the
layer hook enabled and a driver that calls the whole API, `gcc -std=c99 -Wall -Wextra -Werror
-pedantic` against the real 1.x headers of ../shared/mli (a wrong kernel name, argument count or
pointer type is an error there), and NAME.c as C++20. Every convertible case is compiled; a model
and setting that lowering refuses is not a runtime concern and is left out (listed in CASES by the
conversions that succeed today, so a case that stops converting fails loudly).
"""

from __future__ import annotations

import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest

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

# (target, format, layout) settings a 1.x user picks.
SETTINGS = [("1.1", "fx16", "chw"), ("1.1", "fx16", "hwc"), ("1.1", "sa8", "hwc"),
            ("1.1", "fx8w16d", "chw"), ("1.0", "fx16", "chw"), ("1.0", "fx8", "chw")]
_ALL = SETTINGS
_CHW = [s for s in SETTINGS if s[2] == "chw"]
_NO_SA8 = [s for s in SETTINGS if s[1] != "sa8"]

# model -> the settings it converts with (lowering's own limits decide the rest).
CASES = {
    "samples/cnn_int8": _CHW,
    "samples/fc_int8": _ALL,
    "shared/mlperf_tiny/kws_ref_model_int8": _CHW,
    "shared/mlperf_tiny/resnet8_int8": [s for s in _NO_SA8 if s[:2] != ("1.0", "fx8")],
    "shared/mlperf_tiny/ad01_int8": _ALL,
    "shared/tflm/micro_speech_int8": _NO_SA8,
}
for op in ("add", "add_const", "sub", "sub_const", "mul", "mul_const", "minimum", "maximum",
           "maximum_const", "minimum_const", "concatenation", "concatenation_requant", "logistic",
           "tanh", "softmax", "pad", "transpose", "relu", "relu6", "relu_n1_to_1"):
    CASES[f"samples/ops/{op}"] = _NO_SA8
for op in ("avg_pool_global_same", "max_pool", "max_pool_global_same", "mean_hw", "reshape",
           "squeeze", "conv_stride2_same", "fully_connected_per_tensor"):
    CASES[f"samples/ops/{op}"] = _ALL
for op in ("split", "split_v"):
    CASES[f"samples/ops/{op}"] = [s for s in _CHW if s[1] != "sa8"]


def _path(model: str):
    where, rest = model.split("/", 1)
    return SAMPLES / f"{rest}.tflite" if where == "samples" else shared_path("models", f"{rest}.tflite")


def _compile(cmd: list[str]) -> str:
    r = subprocess.run(cmd, capture_output=True, text=True)
    return "" if r.returncode == 0 else f"{' '.join(cmd)}\n{r.stderr[-2000:]}"


@pytest.mark.parametrize("model", sorted(CASES))
def test_mli1_runtime_compiles_against_the_real_headers(model, tmp_path):
    path = _path(model)
    cmds = []
    for target, fmt, layout in CASES[model]:
        out = tmp_path / f"{target}_{fmt}_{layout}"
        H.convert(path, fmt, out, mli_version=target, layout=layout)
        (out / "driver.c").write_text(DRIVER)
        inc = [*mli_cflags(target), "-I", str(out)]
        cmds.append(["gcc", *H.STRICT, "-DNET_LAYER_HOOK=hook", *inc, "-c", str(out / "net.c"),
                     "-o", str(out / "net.o")])
        cmds.append(["gcc", *H.STRICT, "-DNET_LAYER_HOOK=hook", *inc, "-c",
                     str(out / "driver.c"), "-o", str(out / "driver.o")])
        if not model.startswith("samples/ops/"):
            cmds.append(["g++", "-std=c++20", *H.STRICT[1:], "-x", "c++", *inc, "-c",
                         str(out / "net.c"), "-o", str(out / "net_cxx.o")])
    with ThreadPoolExecutor(2) as pool:
        errors = [e for e in pool.map(_compile, cmds) if e]
    assert not errors, errors[0]
