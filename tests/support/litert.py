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
