"""Between the IR and the MLI model: which MLI tensor holds an IR tensor's value, and how values
cross over (model dtype or real values <-> MLI containers).

An IR tensor's *primary* MLI tensor is the one holding its value as the model defines it: for a
graph input the MLI input tensor lowered from it; for an op output the last tensor that op's
layers write with that `source_index` (after an inserted relu, requantizing convert or view).
Format variants that a consumer's layers make (converts inserted before another op) belong to
that consumer and are not primary.

Crossing over:
* real values -> MLI: `mli_hlp_convert_tensor` from FP32 (`execute.mli.kernels.convert_tensor`),
  i.e. what an application using MLI's own helper would feed.
* model dtype (int8) -> SA8 with the model's own parameters: the same integers (identity).
  Otherwise the integers are dequantized with the model's parameters, then converted as above.
* MLI -> real values: (q - zp) * scale * 2^-frac from the MLI tensor's own encoded parameters.
* MLI -> model dtype: identity for SA8 carrying the model's parameters, else the real values
  quantized with the model's parameters (TFLite rounding); float models get the real values.
"""

from __future__ import annotations

import numpy as np

from mlitool import ir
from mlitool.execute.mli.kernels.intops import Arith
from mlitool.mli import quant as Q
from mlitool.mli.types import ElType, MliModel, MliTensor, Role


def primary_tensors(graph: ir.Graph, model: MliModel) -> dict[int, str]:
    """IR tensor index -> name of the MLI tensor holding its value (see the module docstring)."""
    out: dict[int, str] = {}
    for name in model.inputs:
        idx = model.tensor(name).source_index
        if idx is not None:
            out[idx] = name
    producer = {t: op.index for op in graph.ops for t in op.outputs}
    for layer in model.layers:
        for name in layer.outputs:
            idx = model.tensor(name).source_index
            if idx is not None and producer.get(idx) == layer.index:
                out[idx] = name  # later layers of the same op win
    return out


def layers_by_op(model: MliModel) -> dict[int, list]:
    """IR op index -> its MLI layers in call order (inserted converts and relus included)."""
    groups: dict[int, list] = {}
    for layer in model.layers:
        groups.setdefault(layer.index, []).append(layer)
    return groups


def same_sa8(t: ir.Tensor, m: MliTensor) -> bool:
    """True when MLI tensor `m` encodes exactly the model's int8 per-tensor quantization of `t`."""
    if m.el_type != ElType.SA8 or t.dtype != "int8" or t.quant is None or t.quant.per_axis:
        return False
    if m.dim >= 0 or int(m.zero_point[0]) != int(t.quant.zero_point[0]):
        return False
    s16, f = Q.encode_scale_mli2(np.array([t.quant.scale[0]]))
    return int(s16[0]) == int(m.scale[0]) and int(f[0]) == int(m.scale_frac_bits[0])


def _fp32_like(m: MliTensor) -> MliTensor:
    return MliTensor(
        name=f"{m.name}_fp32", role=Role.ACTIVATION, shape=m.shape, el_type=ElType.FP32
    )


def encode(m: MliTensor, real: np.ndarray) -> np.ndarray:
    """Batched real values -> `m`'s containers, as mli_hlp_convert_tensor converts FP32."""
    from mlitool.execute.mli.kernels.convert_tensor import convert

    real = np.asarray(real, dtype=np.float32)
    if m.el_type == ElType.FP32:
        return real.reshape((real.shape[0],) + m.shape)
    return convert(real.reshape((real.shape[0],) + m.shape), _fp32_like(m), m, Arith())


def decode(m: MliTensor, q: np.ndarray) -> np.ndarray:
    """Batched containers of `m` -> real values (float64), from `m`'s encoded parameters."""
    q = np.asarray(q)
    if m.el_type == ElType.FP32 or m.el_type == ElType.FP16:
        return q.astype(np.float64)
    v = q.astype(np.float64)
    if m.el_type.is_fx:
        return v * 2.0 ** -int(m.frac_bits)
    scale = m.real_scale()
    zp = m.zero_point.astype(np.float64)
    if m.dim >= 0:
        shape = [1] * q.ndim
        shape[m.dim + 1] = -1
        scale, zp = scale.reshape(shape), zp.reshape(shape)
    else:
        scale, zp = scale[0], zp[0]
    return (v - zp) * scale


def to_mli(t: ir.Tensor, m: MliTensor, value: np.ndarray) -> np.ndarray:
    """An IR-side batch of `t` (real floats, or integers in the model's dtype) -> `m`'s containers."""
    value = np.asarray(value)
    n = value.shape[0]
    if value.dtype.kind in "iub" and np.dtype(t.dtype).kind in "iu":
        if same_sa8(t, m):
            return value.reshape((n,) + m.shape).astype(np.int8)
        if t.quant is not None:
            value = t.quant.dequantize(value.reshape((n,) + tuple(t.shape)).astype(np.int64))
        if m.el_type == ElType.SA32 and t.quant is None:
            return value.reshape((n,) + m.shape).astype(np.int32)
    return encode(m, value.reshape((n,) + m.shape))


def to_model(t: ir.Tensor, m: MliTensor, q: np.ndarray) -> np.ndarray:
    """`m`'s containers -> the model's own representation of `t` (its dtype and shape)."""
    q = np.asarray(q)
    shape = (q.shape[0],) + tuple(t.shape)
    kind = np.dtype(t.dtype).kind
    if kind in "iu":
        if same_sa8(t, m):
            return q.reshape(shape).astype(t.dtype)
        if t.quant is None:  # e.g. ARG_MAX indices
            return q.reshape(shape).astype(t.dtype)
        from mlitool.execute.reference.params import affine_quantize

        return affine_quantize(decode(m, q).reshape(shape), t)
    return decode(m, q).reshape(shape).astype(t.dtype)


def model_inputs(graph: ir.Graph, model: MliModel, inputs: dict) -> dict[str, np.ndarray]:
    """User inputs ({input name, position or tensor index: batch}) -> MLI input containers.

    Float arrays are real values; integer arrays of an integer input are the model's quantized
    values. SA8 inputs that carry the model's own parameters receive the integers TFLite's
    quantization gives (as `tflite` mode does), so both modes start from the same input.
    """
    from mlitool.errors import InputDataError
    from mlitool.execute.reference.graph import find_input, prepare_input

    primary = primary_tensors(graph, model)
    out: dict[str, np.ndarray] = {}
    for key, array in inputs.items():
        idx = find_input(graph, key)
        t = graph.tensors[idx]
        if idx not in primary:
            continue  # an input no layer reads
        m = model.tensor(primary[idx])
        a = np.asarray(array)
        if a.dtype.kind == "f" and not same_sa8(t, m):
            real = prepare_input(t, a, "float")
            out[m.name] = encode(m, real.reshape((real.shape[0],) + m.shape))
        else:
            v = prepare_input(t, a, "tflite" if np.dtype(t.dtype).kind in "iu" else "float")
            out[m.name] = to_mli(t, m, v)
    missing = [model.tensor(n).source for n in model.inputs if n not in out]
    if missing:
        raise InputDataError(f"no data given for input(s) {', '.join(map(str, missing))}")
    return out


def run_mli(
    graph: ir.Graph, model: MliModel, inputs: dict, arith: Arith, *, keep: bool = False
) -> tuple[dict[int, np.ndarray], dict[str, np.ndarray]]:
    """Run `model` (lowered from `graph`) on user inputs. Returns ({IR tensor index: value in the
    model's representation} for the graph outputs, or for every mapped tensor with `keep`;
    {MLI tensor name: containers} of what was kept)."""
    from mlitool.execute.mli.walker import run_model

    values = run_model(model, model_inputs(graph, model, inputs), arith, keep=keep)
    primary = primary_tensors(graph, model)
    wanted = primary if keep else {i: primary[i] for i in graph.outputs if i in primary}
    ir_values = {
        i: to_model(graph.tensors[i], model.tensor(name), values[name])
        for i, name in wanted.items()
        if name in values
    }
    return ir_values, values


def run_op(
    graph: ir.Graph,
    model: MliModel,
    op_index: int,
    feed: dict[int, np.ndarray],
    arith: Arith,
    groups: dict[int, list] | None = None,
    primary: dict[int, str] | None = None,
) -> dict[int, np.ndarray]:
    """Run the MLI layers of IR op `op_index` alone (isolated): every activation they read from
    outside the group is taken from `feed` ({IR tensor index: batch in the IR representation,
    real floats or the model's integers}) and converted into that MLI tensor. Returns {IR output
    index: containers of its primary MLI tensor}."""
    from mlitool.execute.mli.walker import run_layers

    groups = groups if groups is not None else layers_by_op(model)
    primary = primary if primary is not None else primary_tensors(graph, model)
    layers = groups.get(op_index, [])
    written = {name for layer in layers for name in layer.outputs}
    values: dict[str, np.ndarray] = {}
    n = 0
    for layer in layers:
        for name in layer.inputs:
            t = model.tensor(name)
            if name in written or name in values or t.data is not None:
                continue
            idx = t.source_index
            if idx is None or idx not in feed:
                raise KeyError(
                    f"layer {layer.index} ({layer.kind}) reads {name!r}, which has no "
                    "IR value to feed"
                )
            values[name] = to_mli(graph.tensors[idx], t, feed[idx])
            n = values[name].shape[0]
    run_layers(model, layers, values, arith, n)
    op = next(o for o in graph.ops if o.index == op_index)
    return {i: values[primary[i]] for i in op.outputs if primary.get(i) in values}
