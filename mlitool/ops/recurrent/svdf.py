"""SVDF (TFLite Micro's `keyword_scrambled` example): a rank-R factored filter over the last M
frames, whose memory is the variable `activation_state` tensor.

Per invocation: the state (B, F * M, one row of M per filter) moves left by one element, the
feature products `weights_feature` (F, N) . x land in each row's last column, each filter's row
is dotted with its `weights_time` row (F, M), the R filters of each of the U = F / R units are
summed, plus the bias. The state persists between invocations: the executors take the batch of
samples as consecutive invocations from a zero state (the variable tensor's own data where the
file has some), and the fallback C keeps it in static RAM (`svdf_c.py`).

float mode: TFLite's float kernel (float32 sums; its fused activation on the output).
tflite mode: LiteRT's `EvalIntegerSVDF` (int8 input and weights_feature, int16 weights_time and
state, int32 bias): the feature sum rescaled by MultiplyByQuantizedMultiplier(input *
weights_feature / state scale) and saturated to int16, the int32 time sums, the bias, the
output rescale (state * weights_time / output scale) plus the output zero point, saturated to
int8. The effective scales are float32 products, as in TFLite's Prepare. LiteRT requires (and
then ignores) a fused RELU on the integer kernel; TFLite Micro takes any and applies none, as
mlitool does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mlitool.execute.reference import fixedpoint as fp
from mlitool.execute.reference.call import Call
from mlitool.execute.reference.kernel_common import activate
from mlitool.execute.reference.params import scale_of, zp_of

f32 = np.float32
SLOTS = ("input", "weights_feature", "weights_time", "bias", "activation_state")
STATE = 4


def svdf_shapes(g, op):
    """TFLite's SVDF Prepare: input [B, I], weights_feature [F, I], weights_time [F, M], bias
    [F / rank], state [B, M * F], output [B, F / rank] (F a multiple of the rank)."""
    from mlitool.tflite.validate_ops import Problem

    x, wf, wt = (g.tensors[i] for i in op.inputs[:3])
    bias = g.tensor(op.inputs[3]) if len(op.inputs) > 3 else None
    state = g.tensor(op.inputs[STATE]) if len(op.inputs) > STATE else None
    rank = int(op.options.get("rank", 0) or 0)
    if len(x.shape) != 2 or len(wf.shape) != 2 or len(wt.shape) != 2:
        yield Problem("input and weights must be rank 2", op)
        return
    batch, filters, memory = x.shape[0], wf.shape[0], wt.shape[1]
    if wf.shape[1] != x.shape[1] or wt.shape[0] != filters:
        yield Problem(
            f"weights {list(wf.shape)} / {list(wt.shape)} do not fit input {list(x.shape)}", op
        )
        return
    if rank < 1 or filters % rank:
        yield Problem(f"rank {rank} does not divide the {filters} filters", op)
        return
    units = filters // rank
    if bias is not None and bias.size != units:
        yield Problem(f"has {bias.size} bias values, the op computes {units} units", op, bias)
    if state is None or tuple(state.shape) != (batch, memory * filters):
        got = None if state is None else list(state.shape)
        yield Problem(f"state {got}, the op keeps [{batch}, {memory * filters}]", op, state)
    out = g.tensors[op.outputs[0]]
    if tuple(out.shape) != (batch, units):
        yield Problem(
            f"has shape {list(out.shape)}, but the op computes {[batch, units]}",
            op,
            out,
            computed=(batch, units),
        )


@dataclass(frozen=True)
class SvdfInt8:
    """The integers of one int8 SVDF, as TFLite's Prepare derives them."""

    weights_feature: np.ndarray  # (F, N) int8
    weights_time: np.ndarray  # (F, M) int16
    bias: np.ndarray  # (U,) int32 (zeros without a bias)
    rank: int
    input_zp: int
    mult_1: tuple[int, int]  # input * weights_feature / state: (multiplier, shift)
    mult_2: tuple[int, int]  # state * weights_time / output
    output_zp: int
    act: tuple[int, int] = (-128, 127)  # the output's clamp (a float model's fused activation)

    @property
    def filters(self) -> int:
        return self.weights_feature.shape[0]

    @property
    def memory(self) -> int:
        return self.weights_time.shape[1]

    def step(self, x: np.ndarray, state: np.ndarray) -> np.ndarray:
        """One invocation: x (B, N) int8 values, state (B, F, M) int16 values updated in place
        → the output (B, U) int8 values."""
        state[:, :, :-1] = state[:, :, 1:].copy()
        acc = (np.asarray(x, np.int64) - self.input_zp) @ self.weights_feature.T.astype(np.int64)
        feature = fp.mul_by_quantized_multiplier(fp.wrap32(acc), *self.mult_1)
        state[:, :, -1] = np.clip(feature, -32768, 32767)
        per_filter = fp.wrap32((state.astype(np.int64) * self.weights_time).sum(axis=2))
        units = per_filter.reshape(per_filter.shape[0], -1, self.rank).sum(axis=2) + self.bias
        y = fp.mul_by_quantized_multiplier(fp.wrap32(units), *self.mult_2) + self.output_zp
        return np.clip(y, *self.act)


def int8_constants(
    c: Call | None, wf, wt, bias, x_t, state_t, out_t, rank: int, where: str
) -> SvdfInt8:
    """`SvdfInt8` from the tensors (ir.Tensor) of an int8 SVDF; refuses what LiteRT refuses or
    computes otherwise than TFLite Micro (a state zero point other than 0: LiteRT assumes 0)."""
    from mlitool.errors import UnsupportedError

    def refuse(what: str):
        return c.unsupported(what) if c is not None else UnsupportedError(f"{where}: {what}")

    if (x_t.dtype, wf.dtype, wt.dtype, state_t.dtype, out_t.dtype) != (
        "int8",
        "int8",
        "int16",
        "int16",
        "int8",
    ):
        raise refuse(
            f"an integer SVDF with {x_t.dtype} input, {wf.dtype} weights_feature, "
            f"{wt.dtype} weights_time, {state_t.dtype} state and {out_t.dtype} output "
            "(LiteRT's: int8, int8, int16, int16, int8)"
        )
    if zp_of(state_t) != 0:
        raise refuse(f"an integer SVDF whose state zero point is {zp_of(state_t)} (LiteRT: 0)")
    units = wf.shape[0] // rank
    return from_scales(
        np.asarray(wf.data, np.int64),
        np.asarray(wt.data, np.int64),
        np.zeros(units, np.int64) if bias is None else np.asarray(bias.data, np.int64),
        rank,
        (scale_of(x_t), zp_of(x_t)),
        scale_of(wf),
        scale_of(wt),
        scale_of(state_t),
        (scale_of(out_t), zp_of(out_t)),
    )


def from_scales(wf, wt, bias, rank, x_q, s_wf, s_wt, s_state, out_q) -> SvdfInt8:
    """`SvdfInt8` from integer weights and scales: (scale, zero point) of input and output, the
    scales of the weights and of the state. The effective scales are float32 products, as in
    TFLite's Prepare."""
    m1 = f32(x_q[0]) * f32(s_wf) / f32(s_state)
    m2 = f32(s_state) * f32(s_wt) / f32(out_q[0])
    q1, q2 = fp.quantize_multiplier(np.float64(m1)), fp.quantize_multiplier(np.float64(m2))
    return SvdfInt8(
        weights_feature=np.asarray(wf, np.int64),
        weights_time=np.asarray(wt, np.int64),
        bias=np.asarray(bias, np.int64),
        rank=rank,
        input_zp=int(x_q[1]),
        mult_1=(int(q1[0]), int(q1[1])),
        mult_2=(int(q2[0]), int(q2[1])),
        output_zp=int(out_q[1]),
    )


def _rank(c: Call) -> int:
    rank = int(c.opt("rank", 0) or 0)
    filters = c.tin(1).shape[0]
    if rank < 1 or filters % rank:
        raise c.unsupported(f"an SVDF of rank {rank} over {filters} filters")
    return rank


def _initial_state(c: Call, batch: int, filters: int, memory: int, dtype) -> np.ndarray:
    """The variable tensor's own data where the file has some, else zeros; (B, F, M)."""
    t = c.tin(STATE)
    data = np.zeros(batch * filters * memory) if t.data is None else np.asarray(t.data)
    if c.mode == "float" and t.quant is not None and t.data is not None:
        data = (data.astype(np.float64) - zp_of(t)) * scale_of(t)
    return np.array(data, dtype).reshape(batch, filters, memory)


def float_svdf(c: Call):
    """TFLite's float SVDF over the samples as consecutive invocations."""
    rank = _rank(c)
    wf = np.asarray(c.const(1), f32)
    wt = np.asarray(c.const(2), f32)
    bias = np.asarray(c.const(3), f32) if c.has(3) else f32(0)
    x = np.asarray(c.x(0), f32)  # (n, B, N)
    batch, (filters, memory) = x.shape[1], wt.shape
    state = _initial_state(c, batch, filters, memory, f32)
    act = c.opt("fused_activation", "NONE")
    out, states = [], []
    for xs in x:
        state[:, :, :-1] = state[:, :, 1:].copy()
        state[:, :, -1] = xs @ wf.T
        per_filter = (state * wt).sum(axis=2, dtype=f32)
        y = per_filter.reshape(batch, -1, rank).sum(axis=2, dtype=f32) + bias
        out.append(activate(y.astype(f32), act))
        states.append(state.reshape(batch, -1).copy())
    if c.mode == "float":
        # every invocation's state under the state tensor: what calibration takes its range from
        c.values[c.op.inputs[STATE]] = np.stack(states)
    return [np.stack(out).reshape(c.out_shape())]


def tflite_svdf(c: Call):
    """LiteRT's integer SVDF (float models: its float kernel) over the samples as consecutive
    invocations."""
    if np.dtype(c.tin(0).dtype).kind == "f":
        return float_svdf(c)
    rank = _rank(c)
    k = int8_constants(
        c,
        c.tin(1),
        c.tin(2),
        c.tin(3) if c.has(3) else None,
        c.tin(0),
        c.tin(STATE),
        c.tout(),
        rank,
        c.op.label,
    )
    x = np.asarray(c.x(0), np.int64)
    state = _initial_state(c, x.shape[1], k.filters, k.memory, np.int64)
    out = [k.step(xs, state) for xs in x]
    return [np.stack(out).astype(np.int8).reshape(c.out_shape())]
