"""The TFLite interpreter (`ai-edge-litert`) as an independent oracle for `verify --oracle litert`.

It runs the interpreter's reference kernels (OpResolverType.BUILTIN_REF, one thread), the
arithmetic `tflite` mode reproduces, keeping every intermediate tensor. Optional: when the
package is missing, `available()` says why and verify reports it instead of failing.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from mlitool import ir

ORACLES = ("litert",)


def available() -> tuple[bool, str]:
    try:
        import ai_edge_litert.interpreter  # noqa: F401
    except ImportError as exc:
        return False, (f"the litert oracle needs the ai-edge-litert package ({exc}); "
                       "install it with `pip install ai-edge-litert`")
    return True, "TFLite interpreter (ai-edge-litert), reference kernels, 1 thread"


def run_litert(path: str | Path, graph: ir.Graph, inputs: dict[int, np.ndarray],
               tensors: list[int]) -> dict[int, np.ndarray]:
    """{tensor index: batch} for `tensors`, one interpreter invocation per sample. `inputs` are
    in the model's own dtypes ({input tensor index: batch}). Variable tensors (LSTM state) are
    reset before every sample: each sample is one inference, as in mlitool's executors."""
    from ai_edge_litert import interpreter as litert

    it = litert.Interpreter(model_path=str(path),
                            experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF,
                            experimental_preserve_all_tensors=True, num_threads=1)
    it.allocate_tensors()
    n = next(iter(inputs.values())).shape[0]
    res: dict[int, list] = {t: [] for t in tensors}
    for s in range(n):
        for idx, a in inputs.items():
            want = tuple(graph.tensors[idx].shape)
            it.set_tensor(idx, np.ascontiguousarray(a[s]).reshape(want))
        it.reset_all_variables()
        it.invoke()
        for t in tensors:
            res[t].append(it.get_tensor(t).copy())
    return {t: np.stack(v) for t, v in res.items()}
