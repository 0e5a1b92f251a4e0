"""The executors' kernels and the lowering of `ir.REGION_OP` (an int8 model's float region).

Lowering compiles the region's ops (`ir.REGION_GRAPH`) into a program (`program.py`): one
`float_region<N>` layer runs it into the region's float32 work area, then one
`float_region_out` layer per output quantizes its values as TFLite's QUANTIZE does. tflite mode
runs the same program (TFLite's float32 reference kernels to the bit, checked against LiteRT);
float mode runs the region's own ops on real values.
"""

from __future__ import annotations

import numpy as np

from mlitool import ir
from mlitool.execute.reference.call import Call
from mlitool.ir import ISLAND_RUNS, REGION_GRAPH
from mlitool.mli.lower.builder import Builder
from mlitool.mli.lower.checks import _OK, Subject
from mlitool.mli.types import ElType, MliTensor, Role
from mlitool.ops.common import fallback_checks as FB
from mlitool.ops.float_region import program as P
from mlitool.ops.float_region.c_kernel import (
    CARRY_KERNEL,
    MAX_INPUTS,
    OUTPUT_KERNEL,
    region_kernel,
)

SA8, FP32 = ElType.SA8, ElType.FP32


def _el(graph, idx: int) -> ElType:
    """int8 tensors as SA8; a float32 one carried between regions as FP32."""
    return FP32 if graph.tensors[idx].dtype == "float32" else SA8


def _run(c: Call, mode: str) -> list:
    from mlitool.execute.reference.graph import run_graph  # the walker imports the kernels

    sub: ir.Graph = c.op.options[REGION_GRAPH]
    xs = {i: np.asarray(c.x(k)) for k, i in enumerate(c.op.inputs)}
    out = run_graph(sub, xs, mode)
    return [out[o] for o in c.op.outputs]


def tflite_region(c: Call):
    """The region's program (`program.py`): TFLite's float32 reference kernels to the bit (its
    FULLY_CONNECTED order, LOGISTIC's cut-offs, expf / tanhf), what the C computes."""
    prog = P.compile_region(c.graph, c.op)
    arena = P.run_program(prog, [np.asarray(c.x(k)) for k in range(len(c.op.inputs))])
    return [
        P.quantize_output(arena, o).reshape((len(arena), *c.tout(j).shape))
        for j, o in enumerate(prog.outputs)
    ]


def float_region(c: Call):
    return _run(c, "float")


def region_inputs_in_range(s: Subject):
    """a float region of {n} inputs (fallback C takes up to {most})"""
    n = len(s.op.inputs)
    return _OK if n <= MAX_INPUTS else {"n": n, "most": MAX_INPUTS}


def region_int8_or_float(s: Subject):
    """a float region's tensors are int8 or float32 (carried between regions); {name!r} is
    {dtype}"""
    for i in (*s.op.inputs, *s.op.outputs):
        t = s.graph.tensors[i]
        if t.dtype not in ("int8", "float32"):
            return {"name": t.name, "dtype": t.dtype}
    return _OK


CHECKS = (FB.fallback_needs_mli2, region_int8_or_float, region_inputs_in_range)


def lower_region(b: Builder, op: ir.Op, fmt: str) -> None:
    prog = P.compile_region(b.g, op)
    xs = [b.use(op, i, _el(b.g, i)) for i in op.inputs]
    base = b.base(op.outputs[0])
    code = b.sa_constant(
        f"{base}_program",
        ElType.SA32,
        prog.code,
        notes=[f"{prog.count} float32 instructions ({len(prog.code)} words)"],
    )
    consts = b.sa_constant(
        f"{base}_consts",
        ElType.SA32,
        prog.consts.view(np.int32),
        notes=["float32 weights, biases and constants (bit patterns)"],
    )
    work = MliTensor(
        name=f"{base}_work",
        role=Role.ACTIVATION,
        shape=(prog.arena,),
        el_type=ElType.SA32,
        notes=["the float region's float32 values (bit patterns)"],
    )
    b.set_sa(work, 1.0, 0)
    b.add(work)
    runs = op.options.get(ISLAND_RUNS)
    b.fallback(
        op,
        region_kernel(len(xs)),
        [*xs, code, consts],
        [work.name],
        cfg={"count": prog.count, "arena": prog.arena},
        notes=[f"float region: fallback C, {runs} (software floating point without an FPU)"],
    )
    for idx, o in zip(op.outputs, prog.outputs):
        if o.carried:
            out = b.produce(idx, FP32)
            b.fallback(
                op,
                CARRY_KERNEL,
                [work.name],
                [out.name],
                cfg={"addr": o.addr},
                notes=["float region output read by a later region: its float32 values"],
            )
            continue
        out = b.produce(idx, SA8)
        scale, zp = FB.sa8_params(b, op, idx)
        b.fallback(
            op,
            OUTPUT_KERNEL,
            [work.name],
            [out.name],
            cfg={"addr": o.addr, "fscale": P.bits(scale), "out_zp": zp},
            notes=["float region output: QUANTIZE of its float32 values"],
        )
