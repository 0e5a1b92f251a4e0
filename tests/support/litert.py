"""The TFLite interpreter's reference kernels (mlitool.oracle) as the tests' oracle."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool import ir, oracle

# Ops whose float32 kernel in LiteRT calls the host C library (expf, tanhf, expm1f, logf, erff,
# ...). Those are not correctly rounded: glibc 2.36's tanhf and expm1f (fdlibm's) miss on about
# 14% and 10% of inputs, its expf on about 1 in 2000, and its FMA build of expf rounds others;
# another libm rounds otherwise again. tflite mode computes them correctly rounded (machine
# independent), so float tensors from such an op on are within float32 rounding of LiteRT, not
# its bits; every other float kernel (sums in LiteRT's order) is bit for bit.
LIBM_OPS = frozenset(
    {
        "LOGISTIC",
        "TANH",
        "ELU",
        "GELU",
        "EXP",
        "LOG",
        "SIN",
        "COS",
        "POW",
        "SOFTMAX",
        "LOG_SOFTMAX",
        "UNIDIRECTIONAL_SEQUENCE_LSTM",
        "BIDIRECTIONAL_SEQUENCE_LSTM",
        "UNIDIRECTIONAL_SEQUENCE_RNN",
        "SVDF",
    }
)


def libm_ops(graph: ir.Graph) -> set[str]:
    """The float ops of `graph` that LiteRT runs through the host libm (`LIBM_OPS`, or a fused
    TANH activation)."""
    found = set()
    for op in graph.ops:
        if not op.inputs or op.inputs[0] < 0:
            continue
        if np.dtype(graph.tensors[op.inputs[0]].dtype).kind != "f":
            continue
        if op.type in LIBM_OPS:
            found.add(op.type)
        elif (op.options or {}).get("fused_activation") == "TANH":
            found.add(f"{op.type} + TANH")
    return found


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
