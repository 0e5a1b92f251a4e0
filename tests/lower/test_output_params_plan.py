"""Lowering plans output parameters for kernels that rewrite them (sigm, tanh, softmax,
l2_normalize, argmax, permute copy or overwrite; relu and maxpool copy the input's). The emitted
output tensor must carry exactly what the kernel leaves there, which `ops.output_params`
reproduces (checked against every golden `*_post_*` value in test_mli_elt_golden). This test ties
the two together on every model mlitool ships or is given."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlitool.errors import UnsupportedError
from mlitool.mli.lower.driver import lower
from mlitool.mli.ops import OUTPUT_PARAMS, output_params
from mlitool.tflite.reader import read_model
from tests.support.paths import SAMPLES, shared_models

MODELS = (
    sorted(SAMPLES.glob("*.tflite"))
    + sorted((SAMPLES / "ops").glob("*.tflite"))
    + shared_models("**/*int8.tflite")
)


def _params(t):
    if t.el_type.is_fx:
        return ("fx", t.frac_bits)
    return ("sa", t.dim, t.zero_point.tolist(), t.scale.tolist(), t.scale_frac_bits.tolist())


# The models lowering refuses (why); any other refusal fails the test.
REFUSED: dict[str, str] = {}


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
@pytest.mark.parametrize("path", MODELS, ids=lambda p: Path(p).stem)
def test_planned_output_params_are_what_the_kernel_leaves(path, fmt):
    graph = read_model(path).main
    ranges = {t.index: (-1.0, 1.0) for t in graph.tensors}
    if Path(path).stem in REFUSED:
        with pytest.raises(UnsupportedError, match=REFUSED[Path(path).stem]):
            lower(graph, format=fmt, weights_only=False, ranges=ranges)
        return
    model = lower(graph, format=fmt, weights_only=False, ranges=ranges)
    for layer in model.layers:
        if layer.kind not in OUTPUT_PARAMS:
            continue
        inp = model.tensors[layer.inputs[0]]
        out = model.tensors[layer.outputs[0]]
        left = output_params(layer.kind, inp, out, layer.cfg)
        assert _params(left) == _params(out), f"layer {layer.index} ({layer.kind})"
