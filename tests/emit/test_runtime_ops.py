"""Every layer kind mlitool emits, on the real MLI 2.0.2 library: the one-op sample models
(samples/ops, int8) through the runtime, bit-exact against the executor on the four builds.

sa8 and fx16 for every op; fx8w16d (FX8 weights) where the op has weights. The shared models
cover the MAC, pooling and softmax layers at scale; these cover the rest: the LUT kernels
(sigm, tanh, softmax, l2_normalize) with tables made by MLI's create_lut, argmax, permute,
eltwise with constant operands, prelu / leaky relu, inserted converts and copies, padding
through SA32, views of splits, slices and concatenations.
"""

from __future__ import annotations

import json

import pytest

from tests.support import runtime_harness as H
from tests.support.paths import SAMPLES, mli_cflags

_OPS = json.loads((SAMPLES / "ops.json").read_text())
_WEIGHTED = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "MEAN")
OPS = sorted(p.stem for p in (SAMPLES / "ops").glob("*.tflite") if not p.stem.endswith("_float"))
CASES = [(op, fmt) for op in OPS for fmt in ("sa8", "fx16")] + [
    (op, "fx8w16d") for op in OPS if set(_OPS[f"ops/{op}.tflite"]) & set(_WEIGHTED)
]


@pytest.mark.parametrize("op,fmt", CASES, ids=[f"{o}-{f}" for o, f in CASES])
def test_op_runtime_equals_executor(op, fmt, mli_builds, tmp_path):
    H.assert_bit_exact(
        H.run_case(SAMPLES / "ops" / f"{op}.tflite", fmt, tmp_path, mli_builds, mli_cflags("2.0"))
    )
