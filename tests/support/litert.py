"""The TFLite interpreter's reference kernels (mlitool.oracle) as the tests' oracle."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool import ir, oracle


def reference_outputs(
    path, graph: ir.Graph, inputs: dict[int, np.ndarray]
) -> dict[int, np.ndarray]:
    """Every op output tensor of `graph`, batched; skips the test when ai-edge-litert is absent."""
    ok, why = oracle.available()
    if not ok:
        pytest.skip(why)
    return oracle.run_litert(path, graph, inputs, [t for op in graph.ops for t in op.outputs])


def builtin_outputs(path, graph: ir.Graph, inputs: dict[int, np.ndarray]) -> np.ndarray:
    """The first output of LiteRT's builtin (optimized) kernels without delegates, batched over
    the first input: the reference where LiteRT's reference kernel is known to be wrong (its
    int8 and int16 SUM; tests/ops/reduce/test_reduce.py shows it)."""
    litert = pytest.importorskip("ai_edge_litert.interpreter")
    it = litert.Interpreter(
        model_path=str(path),
        experimental_op_resolver_type=litert.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
        num_threads=1,
    )
    it.allocate_tensors()
    out = []
    for x in inputs[graph.inputs[0]]:
        it.set_tensor(it.get_input_details()[0]["index"], x)
        it.invoke()
        out.append(it.get_tensor(it.get_output_details()[0]["index"]))
    return np.stack(out)


def reduce_reference(path, graph: ir.Graph, inputs: dict[int, np.ndarray]) -> np.ndarray:
    """LiteRT's first output of a reduction model: its builtin kernels for SUM (the reference
    one is wrong, `builtin_outputs`), its reference kernels otherwise."""
    if any(op.type == "SUM" for op in graph.ops):
        return builtin_outputs(path, graph, inputs)
    return reference_outputs(path, graph, inputs)[graph.outputs[0]]
