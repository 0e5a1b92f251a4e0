"""`svdf8`: SVDF as fallback C, LiteRT's integer arithmetic (`svdf.SvdfInt8`, its numpy twin),
with the state in static RAM that persists between NAME_run calls.

The state (F rows of M int16) is the layer's own static array (`FallbackKernel.state`: the
config's `state` container, zeroed by NAME_init): each call moves it left by one element, writes
the F rescaled feature sums into the rows' last column, then sums each unit's R rows against
`weights_time`. One NAME_run is one invocation; NAME_init starts a new stream. The executors take
a batch of samples as consecutive invocations from a zero state, as the C runs them one after
the other after one NAME_init.

An int8 model's SVDF runs with its own integers (LiteRT requires a fused RELU on it and applies
none; TFLite Micro neither). A float model's is quantized here: weights_feature int8 and
weights_time int16, symmetric per tensor (and coarse enough that a unit's int32 sum cannot
wrap), the state scale the calibrated range of the state
(float mode leaves every invocation's state under its tensor) or, without calibration, the
largest feature sum the input's range allows, so no feature value saturates; the bias in
state * weights_time units; its fused activation a clamp of the int8 output.
"""

from __future__ import annotations

import numpy as np

from mlitool import ir
from mlitool.mli import quant as Q
from mlitool.mli.fallback import FallbackKernel, register_kernel
from mlitool.mli.lower import params as P
from mlitool.mli.lower.builder import Builder
from mlitool.mli.lower.checks import _OK, Subject
from mlitool.mli.types import ElType, MliTensor, Role
from mlitool.ops.common import fallback_checks as FB
from mlitool.ops.recurrent.svdf import STATE, SvdfInt8, from_scales, int8_constants

CFG = (
    "inputs",
    "filters",
    "memory",
    "rank",
    "input_zp",
    "mult_1",
    "shift_1",
    "mult_2",
    "shift_2",
    "output_zp",
    "act_min",
    "act_max",
)


def _constants(layer, model) -> SvdfInt8:
    cfg, p = layer.cfg, layer.params
    return SvdfInt8(
        weights_feature=np.asarray(model.tensor(p["weights_feature"]).data, np.int64),
        weights_time=np.asarray(model.tensor(p["weights_time"]).data, np.int64),
        bias=np.asarray(model.tensor(p["bias"]).data, np.int64),
        rank=cfg["rank"],
        input_zp=cfg["input_zp"],
        mult_1=(cfg["mult_1"], cfg["shift_1"]),
        mult_2=(cfg["mult_2"], cfg["shift_2"]),
        output_zp=cfg["output_zp"],
        act=(cfg["act_min"], cfg["act_max"]),
    )


def _run(layer, model, xs, arith) -> np.ndarray:
    k = _constants(layer, model)
    x = np.asarray(xs[0], np.int64).reshape(xs[0].shape[0], 1, -1)
    state = np.zeros((1, k.filters, k.memory), np.int64)  # NAME_init's zeros
    y = np.stack([k.step(sample, state) for sample in x])
    out_shape = model.tensor(layer.outputs[0]).shape
    return y.astype(np.int8).reshape((x.shape[0],) + tuple(out_shape))


SVDF8 = FallbackKernel(
    name="svdf8",
    doc="SVDF, LiteRT's integer arithmetic; its int16 state persists between runs",
    cfg=CFG,
    state="int16_t",
    c_source="""\
@STORAGE@mli_status @FN@(const mli_tensor *in, const mli_tensor *weights_feature,
                         const mli_tensor *weights_time, const mli_tensor *bias,
                         const @CFG@ *cfg, mli_tensor *out) {
    const int8_t *wf = weights_feature->data.mem.pi8;
    const int16_t *wt = weights_time->data.mem.pi16;
    const int32_t *b = bias->data.mem.pi32;
    int16_t *state = cfg->state.mem.pi16;
    const int8_t *x = in->data.mem.pi8;
    const int32_t total = cfg->filters * cfg->memory;
    int32_t f, j, u;
    /* the oldest column leaves: the whole state moves left by one element */
    for (j = 0; j + 1 < total; j++) {
        state[j] = state[j + 1];
    }
    for (f = 0; f < cfg->filters; f++) {
        int32_t acc = 0;
        for (j = 0; j < cfg->inputs; j++) {
            acc += (int32_t)wf[f * cfg->inputs + j] *
                   ((int32_t)x[@P@_offset(in, (uint32_t)j)] - cfg->input_zp);
        }
        acc = @P@_mbqm(acc, cfg->mult_1, cfg->shift_1);
        state[f * cfg->memory + cfg->memory - 1] =
            (int16_t)(acc < -32768 ? -32768 : (acc > 32767 ? 32767 : acc));
    }
    for (u = 0; u < cfg->filters / cfg->rank; u++) {
        /* int32 sums as TFLite's wrap: exact in int64, wrapped where TFLite's would */
        int64_t sum = b[u];
        int32_t r, v;
        for (r = 0; r < cfg->rank; r++) {
            const int32_t row = (u * cfg->rank + r) * cfg->memory;
            int64_t dot = 0;
            for (j = 0; j < cfg->memory; j++) {
                dot += (int64_t)wt[row + j] * state[row + j];
            }
            sum += @P@_wrap32(dot);
        }
        v = @P@_mbqm(@P@_wrap32(sum), cfg->mult_2, cfg->shift_2) + cfg->output_zp;
        v = v < cfg->act_min ? cfg->act_min : (v > cfg->act_max ? cfg->act_max : v);
        out->data.mem.pi8[@P@_offset(out, (uint32_t)u)] = (int8_t)v;
    }
    return MLI_STATUS_OK;
}
""",
    run=_run,
)
register_kernel(SVDF8)


# --- support checks --------------------------------------------------------------------------


def svdf_types(s: Subject):
    """integer SVDF with {what}: LiteRT's integer kernel takes int8 input, weights_feature and
    output, int16 weights_time and state (zero point 0)"""
    x = s.input(0)
    if x.dtype == "float32":
        return _OK
    try:
        int8_constants(
            None,
            s.input(1),
            s.input(2),
            None,
            x,
            s.input(STATE),
            s.output,
            max(1, int(s.op.options.get("rank", 1) or 1)),
            s.op.label,
        )
    except Exception as exc:  # noqa: BLE001 - the refusal says why
        return {"what": str(exc).split(": ", 1)[-1]}
    return _OK


def svdf_rank(s: Subject):
    """SVDF of rank {rank} over {filters} filters: the filters are not a multiple of the rank"""
    rank, filters = int(s.op.options.get("rank", 0) or 0), s.input(1).shape[0]
    return _OK if rank >= 1 and filters % rank == 0 else {"rank": rank, "filters": filters}


CHECKS = (FB.fallback_needs_mli2, svdf_rank, svdf_types)  # batch 1: the common check


# --- lowering --------------------------------------------------------------------------------


def _float_constants(b: Builder, op: ir.Op, rank: int) -> tuple[SvdfInt8, list[str]]:
    """A float model's SVDF quantized (module docstring)."""
    g = b.g
    wf_r = P.real(g.tensors[op.inputs[1]]).astype(np.float64)
    wt_r = P.real(g.tensors[op.inputs[2]]).astype(np.float64)
    has_bias = len(op.inputs) > 3 and op.inputs[3] >= 0
    bias_r = P.real(g.tensors[op.inputs[3]]) if has_bias else np.zeros(wf_r.shape[0] // rank)
    x_q = FB.sa8_params(b, op, op.inputs[0])
    out_q = FB.sa8_params(b, op, op.outputs[0])
    s_wf = float(Q.symmetric_scales(wf_r, None)[0])
    # int16 products summed over a unit's R * M terms in int32: the scale keeps every sum (at a
    # full-scale state) within 2^30, half the range, leaving the bias the other half.
    unit_sums = np.abs(wt_r).reshape(-1, rank * wt_r.shape[1]).sum(axis=1)
    s_wt = max(
        float(np.abs(wt_r).max(initial=0.0)) / 32767,
        float(unit_sums.max(initial=0.0)) * 32768 / 2**30,
        1e-30,
    )
    wf, _ = Q.int_quantize(wf_r, s_wf, 0, 8)
    wt, _ = Q.int_quantize(wt_r, s_wt, 0, 16)
    state_idx = op.inputs[STATE]
    if state_idx in b.ranges:
        bound, why = max(abs(v) for v in b.ranges[state_idx]), "its calibrated range"
    else:
        x_max = x_q[0] * 128 + abs(x_q[0] * x_q[1])
        bound = float(np.abs(wf_r).sum(axis=1).max(initial=0.0)) * x_max
        why = "the largest feature sum the input's range allows"
    s_state = max(bound, 1e-30) / 32767
    s_bias = float(np.float32(s_state) * np.float32(s_wt))
    bias, _ = Q.int_quantize(np.asarray(bias_r, np.float64), s_bias, 0, 32)
    k = from_scales(wf, wt, bias, rank, x_q, s_wf, s_wt, s_state, out_q)
    lo, hi = _act_range(op.options.get("fused_activation", "NONE"), out_q)
    k = SvdfInt8(**{**k.__dict__, "act": (lo, hi)})
    return k, [f"state scale {s_state:.6g}: {why}"]


def _act_range(act: str, out_q: tuple[float, int]) -> tuple[int, int]:
    scale, zp = out_q
    lo = {"RELU": 0.0, "RELU6": 0.0, "RELU_N1_TO_1": -1.0}.get(act)
    hi = {"RELU6": 6.0, "RELU_N1_TO_1": 1.0}.get(act)
    qlo = -128 if lo is None else max(-128, zp + int(np.round(lo / scale)))
    qhi = 127 if hi is None else min(127, zp + int(np.round(hi / scale)))
    return qlo, qhi


def _param(b: Builder, name: str, el: ElType, data: np.ndarray, src: ir.Tensor) -> str:
    t = MliTensor(
        name=name,
        role=Role.PARAM,
        shape=data.shape,
        el_type=el,
        data=data,
        source=src.name if src is not None else None,
        source_index=src.index if src is not None else None,
    )
    if el == ElType.FX16:
        t.frac_bits = 0  # raw int16 values: the kernel reads them as integers
    else:
        b.set_sa(t, 1.0, 0)
    return b.add(t)


def lower_svdf(b: Builder, op: ir.Op, fmt: str) -> None:
    rank = int(op.options.get("rank", 1))
    x = b.use(op, op.inputs[0], ElType.SA8)
    out = b.produce(op.outputs[0], ElType.SA8)
    g = b.g
    if g.tensors[op.inputs[0]].dtype == "int8":
        has_bias = len(op.inputs) > 3 and op.inputs[3] >= 0
        k = int8_constants(
            None,
            g.tensors[op.inputs[1]],
            g.tensors[op.inputs[2]],
            g.tensors[op.inputs[3]] if has_bias else None,
            g.tensors[op.inputs[0]],
            g.tensors[op.inputs[STATE]],
            g.tensors[op.outputs[0]],
            rank,
            op.label,
        )
        notes = ["LiteRT's integer SVDF (its fused activation: none, as LiteRT and TFLM run it)"]
    else:
        k, notes = _float_constants(b, op, rank)
    src = [g.tensor(op.inputs[i]) if len(op.inputs) > i else None for i in range(4)]
    params = {
        "weights_feature": _param(
            b, f"{out.name}_wf", ElType.SA8, k.weights_feature.astype(np.int8), src[1]
        ),
        "weights_time": _param(
            b, f"{out.name}_wt", ElType.FX16, k.weights_time.astype(np.int16), src[2]
        ),
        "bias": _param(b, f"{out.name}_bias", ElType.SA32, k.bias.astype(np.int32), src[3]),
    }
    state_bytes = 2 * k.filters * k.memory
    cfg = dict(
        inputs=int(k.weights_feature.shape[1]),
        filters=k.filters,
        memory=k.memory,
        rank=rank,
        input_zp=k.input_zp,
        mult_1=k.mult_1[0],
        shift_1=k.mult_1[1],
        mult_2=k.mult_2[0],
        shift_2=k.mult_2[1],
        output_zp=k.output_zp,
        act_min=k.act[0],
        act_max=k.act[1],
        scratch_bytes=state_bytes,
        scratch_type="int16_t",
    )
    b.fallback(
        op,
        SVDF8,
        [x],
        [out.name],
        params=params,
        cfg=cfg,
        notes=[
            f"no MLI kernel for SVDF: fallback C; its {state_bytes}-byte int16 state is static "
            "RAM kept between runs (NAME_init zeroes it)",
            *notes,
        ],
    )
