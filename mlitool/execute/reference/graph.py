"""Graph walker: runs an `ir.Graph` op by op in `float` or `tflite` mode, batched over samples.

Batch convention: every activation array has shape `(N,) + tensor.shape` — a leading sample axis
in front of the model's own shape (whose batch dimension is usually 1). Kernels merge the sample
and model batch axes where they need NHWC. Model inputs may also be given as `(N,) + shape[1:]`
when the model batch is 1.

Values per mode:
* `float`: real values, float32. Quantized constants and quantized integer inputs are dequantized;
  QUANTIZE / DEQUANTIZE are identities and no activation is ever re-quantized, so float mode on a
  quantized model is the accuracy reference (the model's own real-valued arithmetic).
* `tflite`: the model's own dtypes (int8 activations, ...), computed with TFLite's integer
  reference arithmetic. Float inputs to an integer input tensor are quantized (TFLite rounding).
"""

from __future__ import annotations

import numpy as np

from mlitool import ir
from mlitool.errors import InputDataError, OptionError, UnsupportedError
from mlitool.execute.reference.call import Call, Kernel
from mlitool.execute.reference.params import affine_quantize
from mlitool.ops import spec as opspec

MODES = ("float", "tflite")


def kernels(mode: str) -> dict[str, Kernel]:
    """Op type → the kernel that runs it in `mode` (its OpSpec's `run`; data movement has one
    arithmetic-free kernel for both modes)."""
    if mode not in MODES:
        raise OptionError(f"unknown execution mode {mode!r} (choose from {', '.join(MODES)})")
    k = MODES.index(mode)
    return {name: spec.run[k] for name, spec in opspec.REGISTRY.items() if spec.run[k] is not None}


def run_op(
    op: ir.Op,
    graph: ir.Graph,
    mode: str,
    values: dict[int, np.ndarray],
    n: int,
    consts: dict[int, np.ndarray],
) -> None:
    """Run one op on the batched `values` (n samples), adding its outputs to them; `consts`
    caches converted constants across ops."""
    call = Call(op, graph, mode, values, n, consts)
    kernel = opspec.spec(op.type).run[MODES.index(mode)]
    try:
        results = kernel(call)
    except UnsupportedError as e:  # a shared helper's refusal: name the op it refused
        if e.message.startswith(op.label):
            raise
        raise UnsupportedError(f"{op.label}: {e.message}", e.path) from None
    for j, (t, v) in enumerate(zip(op.outputs, results)):
        want = call.out_shape(j)
        values[t] = v if v.shape == want else v.reshape(want)


def unsupported_ops(graph: ir.Graph, mode: str) -> list[str]:
    """Labels of ops `mode` cannot run, in graph order (empty when the whole graph runs)."""
    table = kernels(mode)
    return [op.label for op in graph.ops if op.type not in table]


def cannot_run(graph: ir.Graph, mode: str, inputs: dict) -> str | None:
    """Why `mode` cannot run `graph`, or None: run_graph's refusal of the op types it has no
    kernel for, else the first kernel refusal when running `inputs` (a sample: kernels refuse
    on dtypes, zero points and options, which do not depend on the data)."""
    try:
        run_graph(graph, inputs, mode)
    except UnsupportedError as e:
        return str(e)
    return None


def find_input(graph: ir.Graph, key) -> int:
    if isinstance(key, (int, np.integer)):
        if 0 <= key < len(graph.inputs):
            return graph.inputs[int(key)]
        if int(key) in graph.inputs:
            return int(key)
        raise InputDataError(f"graph {graph.name!r} has no input {key}")
    for idx in graph.inputs:
        if graph.tensors[idx].name == key:
            return idx
    names = ", ".join(graph.tensors[i].name for i in graph.inputs)
    raise InputDataError(f"graph {graph.name!r} has no input named {key!r} (inputs: {names})")


def prepare_input(t: ir.Tensor, array, mode: str) -> np.ndarray:
    """Check and convert one batched input array to the mode's representation of tensor `t`."""
    a = np.asarray(array)
    shape = tuple(t.shape)
    if a.ndim == len(shape) and shape and shape[0] == 1 and a.shape[1:] == shape[1:]:
        a = a[:, None]  # (N,)+shape[1:] → (N,1)+shape[1:]
    if a.ndim != len(shape) + 1 or a.shape[1:] != shape:
        raise InputDataError(
            f"input {t.name!r}: expected a batch of shape (N, {', '.join(map(str, shape))}) "
            f"or (N, {', '.join(map(str, shape[1:]))}), got {a.shape}"
        )
    is_float = a.dtype.kind == "f"
    if a.dtype.kind not in "fiub":
        raise InputDataError(f"input {t.name!r}: unsupported array dtype {a.dtype}")
    model_is_int = np.dtype(t.dtype).kind in "iu"
    if mode == "float":
        if model_is_int and not is_float and t.quant is not None:
            _check_range(t, a)
            return t.quant.dequantize(a).astype(np.float32)
        return a.astype(np.float32) if np.dtype(t.dtype).kind == "f" or t.quant is not None else a
    if model_is_int and is_float:
        if t.quant is None:
            raise InputDataError(
                f"input {t.name!r}: float data given for an unquantized {t.dtype} input"
            )
        return affine_quantize(a, t)
    if model_is_int:
        _check_range(t, a)
    return a.astype(t.dtype)


def _check_range(t: ir.Tensor, a: np.ndarray) -> None:
    info = np.iinfo(np.dtype(t.dtype))
    if a.size and (a.min() < info.min or a.max() > info.max):
        raise InputDataError(
            f"input {t.name!r}: values outside the {t.dtype} range [{info.min}, {info.max}]"
        )


def run_graph(
    graph: ir.Graph, inputs: dict, mode: str, *, keep: bool = False
) -> dict[int, np.ndarray]:
    """Run `graph` on a batch of inputs ({input name or position or tensor index: array}).

    Returns {tensor index: batched array} for the graph outputs, or for every tensor computed
    (inputs included) when `keep` is true.
    """
    table = kernels(mode)
    values: dict[int, np.ndarray] = {}
    for key, array in inputs.items():
        idx = find_input(graph, key)
        values[idx] = prepare_input(graph.tensors[idx], array, mode)
    missing = [
        graph.tensors[i].name
        for i in graph.inputs
        if i not in values and not graph.tensors[i].is_constant
    ]
    if missing:
        raise InputDataError(f"no data given for input(s) {', '.join(missing)}")
    sizes = {v.shape[0] for v in values.values()}
    if len(sizes) > 1:
        raise InputDataError(f"inputs have different sample counts: {sorted(sizes)}")
    n = sizes.pop() if sizes else 1
    bad = [op.label for op in graph.ops if op.type not in table]
    if bad:
        raise UnsupportedError(f"graph {graph.name!r}: {mode} mode cannot run {', '.join(bad)}")

    last_use: dict[int, int] = {}
    for pos, op in enumerate(graph.ops):
        for t in op.inputs:
            last_use[t] = pos
    outputs = set(graph.outputs)
    consts: dict[int, np.ndarray] = {}
    # Float arithmetic (float mode, float models in tflite mode) is IEEE's: a model that
    # overflows yields inf / NaN, as in TFLite, not a warning
    with np.errstate(all="ignore"):
        for pos, op in enumerate(graph.ops):
            run_op(op, graph, mode, values, n, consts)
            if not keep:
                for t in set(op.inputs):
                    if last_use.get(t) == pos and t not in outputs and t in values:
                        del values[t]
    if keep:
        return values
    return {t: values[t] for t in graph.outputs}
