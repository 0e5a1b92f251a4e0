"""The TFLite interpreter's reference kernels as a test oracle (skips when ai-edge-litert is absent)."""

from __future__ import annotations

import numpy as np
import pytest


def run_reference(path, graph, inputs: dict[int, np.ndarray]) -> dict[int, np.ndarray]:
    """Every op output tensor of `graph`, batched, as BUILTIN_REF kernels compute them."""
    litert = pytest.importorskip("ai_edge_litert.interpreter")
    it = litert.Interpreter(model_path=str(path),
                            experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF,
                            experimental_preserve_all_tensors=True, num_threads=1)
    it.allocate_tensors()
    n = next(iter(inputs.values())).shape[0]
    wanted = [t for op in graph.ops for t in op.outputs]
    res: dict[int, list] = {t: [] for t in wanted}
    for s in range(n):
        for idx, a in inputs.items():
            it.set_tensor(idx, np.ascontiguousarray(a[s]))
        it.invoke()
        for t in wanted:
            res[t].append(it.get_tensor(t).copy())
    return {t: np.stack(v) for t, v in res.items()}
