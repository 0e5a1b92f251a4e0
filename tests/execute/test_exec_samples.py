"""Every sample model (samples/*.tflite, samples/ops/*.tflite) against the interpreter's reference
kernels: int8 models exactly in `tflite` mode, float models within float32 tolerance in `float`
mode, at every layer."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.execute.reference.graph import run_graph
from mlitool.execute.reference.inputs import random_inputs
from mlitool.tflite.reader import read_model
from tests.support.litert import reference_outputs
from tests.support.paths import SAMPLES

MODELS = sorted(
    p.relative_to(SAMPLES).as_posix()
    for p in list(SAMPLES.glob("*.tflite")) + list(SAMPLES.glob("ops/*.tflite"))
)


def _is_float_model(graph) -> bool:
    return all(graph.tensors[i].dtype == "float32" for i in graph.inputs) and not any(
        op.type == "QUANTIZE" for op in graph.ops
    )


@pytest.mark.skipif(not MODELS, reason="no sample models in samples/")
@pytest.mark.parametrize("name", MODELS)
def test_sample_every_layer_matches_interpreter(name):
    path = SAMPLES / name
    graph = read_model(str(path)).main
    mode = "float" if _is_float_model(graph) else "tflite"
    inputs = random_inputs(graph, 4, seed=3)
    ours = run_graph(graph, inputs, mode, keep=True)
    ref = reference_outputs(path, graph, inputs)
    for op in graph.ops:
        for t in op.outputs:
            a, b = ours[t], ref[t]
            assert a.shape == b.shape and a.dtype == b.dtype, op.label
            if mode == "tflite" or a.dtype.kind in "iub":
                assert np.array_equal(a, b), (
                    f"{name} {op.label}: {np.count_nonzero(a != b)} elements differ"
                )
            else:
                tol = 1e-5 * max(1.0, float(np.abs(b).max()))
                assert np.abs(a - b).max() <= tol, f"{name} {op.label}"
