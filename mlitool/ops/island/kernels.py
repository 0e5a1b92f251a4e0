"""The executors' kernels and the lowering of `ir.ISLAND_OP` (an int8 model's float island).

tflite mode: one int8 input: the island's 256 int8 results (`ISLAND_TABLE`; bool 0 / 1 for a
comparison's island, `mlitool.passes.bool_islands`); several: TFLite's
float32 arithmetic on the tables of their values (`arith.island_int8`). float mode (real values
in and out): each input back on its int8 grid, the same float32 values, unquantized.
Lowering: one input onto the `lut8` table look-up (no float arithmetic); several onto
`float_island<N>` (`c_kernel.py`: float32 operations in C), an input whose values are its plain
DEQUANTIZE (bit for bit, checked on all 256) as its scale and zero point, else as its table.
"""

from __future__ import annotations

import numpy as np

from mlitool import ir
from mlitool.errors import UnsupportedError
from mlitool.execute.reference.call import Call
from mlitool.execute.reference.params import scale_of, zp_of
from mlitool.ir import ISLAND_RUNS, ISLAND_STEPS, ISLAND_TABLE, ISLAND_TERMS
from mlitool.mli.lower.builder import Builder
from mlitool.mli.lower.checks import _OK, Subject
from mlitool.mli.types import ElType
from mlitool.ops.common import fallback_checks as FB
from mlitool.ops.compare.lower import BOOL_NOTE
from mlitool.ops.island import arith
from mlitool.ops.island.c_kernel import CONSTANT_TERM, MAX_INPUTS, dequantized, island_kernel
from mlitool.ops.unary import c_kernel as lut

f32 = np.float32
SA8 = ElType.SA8


def _tables(op: ir.Op) -> list[np.ndarray | None]:
    """Each term's table of 256 float32 values; None for a constant term."""
    return [np.asarray(t, f32) if len(t) else None for t in op.options[ISLAND_TERMS]]


def _term_input(c: Call, i: int) -> np.ndarray:
    """Input i: an int8 activation (samples first), or a constant term's float32 values in its
    own shape (they broadcast on the output's trailing axes)."""
    t = c.tin(i)
    return np.asarray(t.data, f32) if t.data is not None else np.asarray(c.x(i))


def _typed(values: np.ndarray, out: ir.Tensor) -> np.ndarray:
    """int8 table results as the output's type (a comparison's island writes bool)."""
    return values != 0 if out.dtype == "bool" else values


def tflite_island(c: Call):
    out = c.tout()
    xs = [_term_input(c, i) for i in range(len(c.op.inputs))]
    if ISLAND_TABLE in c.op.options:
        table = np.asarray(c.op.options[ISLAND_TABLE], np.int8)
        return [_typed(table[xs[0].astype(np.int16) + 128], out)]
    steps = c.op.options[ISLAND_STEPS]
    return [arith.island_int8(xs, _tables(c.op), steps, scale_of(out), zp_of(out))]


def float_island(c: Call):
    xs = []
    for i in range(len(c.op.inputs)):
        t = c.tin(i)
        if t.data is not None:  # a constant term: read as it is
            xs.append(None)
            continue
        q = arith.quantize(np.asarray(c.x(i), f32), scale_of(t), zp_of(t))
        xs.append(q.astype(np.int16) + 128)
    out = c.tout()
    if ISLAND_TABLE in c.op.options and out.dtype == "bool":
        return [np.asarray(c.op.options[ISLAND_TABLE], np.int8)[xs[0]] != 0]
    if ISLAND_TABLE in c.op.options:
        table = np.asarray(c.op.options[ISLAND_TABLE], np.int8).astype(f32)
        return [(f32(scale_of(out)) * (table[xs[0]] - f32(zp_of(out)))).astype(f32)]
    tables = _tables(c.op)
    values = [
        _term_input(c, k) if table is None else table[x]
        for k, (x, table) in enumerate(zip(xs, tables))
    ]
    return [arith.combine(values, c.op.options[ISLAND_STEPS])]


def island_inputs_in_range(s: Subject):
    """a float island of {n} int8 inputs (fallback C takes up to {most})"""
    n = len(s.op.inputs)
    return _OK if n <= MAX_INPUTS else {"n": n, "most": MAX_INPUTS}


def island_int8_or_bool(s: Subject):
    """fallback C runs a float island on int8 tensors (bool out); tensor {name!r} is {dtype}"""
    for i in (*s.op.inputs, *s.op.outputs):
        t = s.graph.tensors[i]
        if t.data is None and t.dtype not in ("int8", "float32", "bool"):
            return {"name": t.name or f"#{i}", "dtype": t.dtype}
    return _OK


CHECKS = (FB.fallback_needs_mli2, island_int8_or_bool, island_inputs_in_range)


def _bits(values) -> np.ndarray:
    return np.asarray(values, f32).view(np.int32)


def lower_island(b: Builder, op: ir.Op, fmt: str) -> None:
    out_idx = op.outputs[0]
    xs = [b.use(op, i, SA8) if b.g.tensors[i].data is None else None for i in op.inputs]
    out = b.produce(out_idx, SA8)
    if ISLAND_TABLE in op.options:  # a function of one int8 input: its 256 results
        note = "the float island's int8 result for every input -128..127, as TFLite computes it"
        if b.g.tensors[out_idx].dtype == "bool":  # a comparison's island: 0 / 1
            b.set_sa(out, 1.0, 0)
            out.notes = [BOOL_NOTE]
        data = np.asarray(op.options[ISLAND_TABLE], np.int8)
        table = b.sa_constant(f"{out.name}_table", SA8, data, notes=[note])
        b.fallback(
            op,
            lut.LUT8,
            xs,
            [out.name],
            params={"table": table},
            notes=[f"float island: fallback C, {op.options.get(ISLAND_RUNS)}"],
        )
        return
    scale, zp = FB.sa8_params(b, op, out_idx)
    params, cfg = {}, {}
    for k, (idx, values) in enumerate(zip(op.inputs, _tables(op))):
        cfg[f"len{k}"] = 0
        if values is None:  # a constant term: its float32 values, one per channel
            data = _bits(np.asarray(b.g.tensors[idx].data, f32).reshape(-1))
            if np.all(data == data[0]):  # one value, whatever the constant's shape
                data = data[:1]
            if data.size > 1 and data.size != out.shape[-1]:
                raise UnsupportedError(
                    f"{op.label}: a constant of {data.size} values in a float island whose "
                    f"MLI output {list(out.shape)} does not end in that many channels"
                )
            cfg[f"deq{k}"], cfg[f"len{k}"] = CONSTANT_TERM, int(data.size)
            note = f"term {k} is a constant: float32 values (bit patterns), one per channel"
            params[f"table{k}"] = b.sa_constant(
                f"{out.name}_values{k}", ElType.SA32, data, notes=[note]
            )
            xs[k] = params[f"table{k}"]  # never read as int8: the kernel reads the values
            continue
        s_in, z_in = FB.sa8_params(b, op, idx)
        # a plain DEQUANTIZE: its scale and zero point (8 bytes) instead of 1 KiB of values
        deq = np.array_equal(_bits(values), _bits(dequantized(s_in, z_in)))
        if deq:
            data = np.array([_bits([s_in])[0], z_in], np.int32)
            note = f"input {k} is DEQUANTIZEd: float32 scale (bit pattern) and zero point"
        else:
            data = _bits(values)
            note = f"float32 value (bit pattern) of input {k} for every int8 value, as the island"
        cfg[f"deq{k}"] = int(deq)
        params[f"table{k}"] = b.sa_constant(
            f"{out.name}_values{k}", ElType.SA32, data, notes=[note]
        )
    for k, (kind, act) in enumerate(op.options[ISLAND_STEPS], start=1):
        bounds = arith.act_bounds(act)
        if bounds is None:
            raise UnsupportedError(f"{op.label}: fused activation {act} in a float island")
        lo, hi = bounds
        cfg |= {f"op{k}": arith.STEP_CODES[kind], f"lo{k}": int(_bits([lo])[0])}
        cfg |= {f"hi{k}": int(_bits([hi])[0])}
    cfg |= dict(fscale=int(_bits([scale])[0]), out_zp=zp)
    b.fallback(
        op,
        island_kernel(len(xs)),
        xs,
        [out.name],
        params=params,
        cfg=cfg,
        notes=[
            f"float island: fallback C, {op.options.get(ISLAND_RUNS)} "
            "(software floating point on a core without an FPU)"
        ],
    )
