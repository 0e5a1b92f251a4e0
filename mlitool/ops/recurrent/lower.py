"""UNIDIRECTIONAL_SEQUENCE_LSTM onto `mli_krn_lstm_cell_*` (sa8_sa8_sa32, fx16, fx16_fx8_fx8).

TFLite keeps four gate matrices per input (input, forget, cell, output; `[M, N]` and `[M, M]`),
four biases and two variable state tensors. MLI takes the gates stacked in its own order
(i, g, f, o) as `[4, N, M]` / `[4, M, M]` / `[4, M]`, SA8 weights with one scale per gate (MLI
reads scale[g]), the previous output and the cell state as tensors, and a scratch buffer of
4*M elements in its config. Every sample is one sequence from a zero state (as mlitool's
executors and verify run it): the previous output is a constant zero vector, and a copy
(`mli_mov`) from a zero constant resets the cell tensor before the kernel, which updates it in
place. MLI has no cell clip: the cell's range is set to +-cell_clip where the model clips, so
its saturation takes the clip's place.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mlitool import ir
from mlitool import lstm_slots as lstm
from mlitool.execute.reference.params import checked_log2
from mlitool.mli import quant as Q
from mlitool.mli.lower import params as P
from mlitool.mli.lower.builder import Builder
from mlitool.mli.types import FORMATS, ElType, MliTensor, Role

MLI_GATE_ORDER = (0, 2, 1, 3)  # MLI (i, g, f, o) from TFLite's (input, forget, cell, output)
RNN_ACT_TANH = 1
RNN_OUT_ALL = 1
DEFAULT_CELL_RANGE = 8.0  # where neither a clip nor an int16 cell state says more


def _gates(b: Builder, op: ir.Op, slots: tuple[int, ...], transpose: bool) -> list[np.ndarray]:
    """Real values of the four gate tensors in MLI's order (`[in, out]` for weights)."""
    out = []
    for g in MLI_GATE_ORDER:
        real = P.real(b.g.tensors[op.inputs[slots[g]]])
        out.append(real.T if transpose else real)
    return out


def _sa8_per_gate(b: Builder, op: ir.Op, slots, real: list[np.ndarray]):
    """(int8 [4, ...] data, float scale per gate): a gate's own int8 values and scale where the
    model has them per tensor, else symmetric quantization of its real values."""
    data, scales = [], []
    for g, r in zip(MLI_GATE_ORDER, real):
        t = b.g.tensors[op.inputs[slots[g]]]
        if (
            t.dtype == "int8"
            and t.quant is not None
            and not t.quant.per_axis
            and int(t.quant.zero_point[0]) == 0
        ):
            data.append(np.asarray(t.data, np.int8).T)
            scales.append(float(t.quant.scale[0]))
            continue
        s = float(Q.symmetric_scales(r, None)[0])
        q, _ = Q.int_quantize(r, s, 0, 8)
        data.append(q.astype(np.int8))
        scales.append(s)
    return np.stack(data), np.array(scales, np.float64)


def _cell_range(b: Builder, op: ir.Op) -> tuple[float, str]:
    """The cell state's range: calibrated (float models; the float executor leaves the cell
    states under the state tensor), else the int16 cell state's, else a default; never beyond
    the model's cell clip, which the cell's saturation then stands in for."""
    clip = float(op.options.get("cell_clip", 0.0) or 0.0)
    idx = op.inputs[lstm.CELL_STATE] if len(op.inputs) > lstm.CELL_STATE else -1
    t = b.g.tensor(idx)
    if idx in b.ranges:
        r, why = max(abs(v) for v in b.ranges[idx]), "calibrated"
    elif t is not None and t.dtype == "int16" and t.quant is not None:
        r, why = float(t.quant.scale[0]) * 32767, "the model's int16 cell state"
        if not checked_log2(float(t.quant.scale[0]))[1]:
            why += (
                " (its scale is no power of two: LiteRT's integer LSTM outputs 0 for this"
                " model, and tflite mode with it)"
            )
    elif clip > 0:
        r, why = clip, "the model's cell clip"
    else:
        r, why = DEFAULT_CELL_RANGE, "a default: no calibration, clip or int16 state says more"
    if clip > 0 and r > clip:
        r, why = clip, why + ", within the model's cell clip (saturation clips)"
    return r, f"cell range +-{r:.4g}: {why}"


@dataclass
class _Cell:
    """The MLI tensors of one LSTM layer, with the real values the constants encode."""

    x: MliTensor
    out: MliTensor
    w_in: MliTensor
    w_out: MliTensor
    bias: MliTensor
    prev_out: MliTensor
    cell_zero: MliTensor
    cell: MliTensor
    real_w_in: list[np.ndarray]  # per gate, MLI order, [N, M]
    real_w_out: list[np.ndarray]  # [M, M]
    real_bias: list[np.ndarray]  # [M]
    cell_range: float


def lower_lstm(b: Builder, op: ir.Op, fmt: str) -> None:
    el_a, el_w, el_b = FORMATS[fmt]
    x = b.tensors[b.use(op, op.inputs[0], el_a)]
    out = b.produce(op.outputs[0], el_a)
    w_in = _gates(b, op, lstm.INPUT_WEIGHTS, transpose=True)
    w_out = _gates(b, op, lstm.RECURRENT_WEIGHTS, transpose=True)
    bias = _gates(b, op, lstm.BIASES, transpose=False)
    m = bias[0].shape[0]
    cell_range, cell_note = _cell_range(b, op)

    def tensor(
        suffix: str,
        role: Role,
        shape,
        el: ElType,
        layout: str = "",
        slot=None,
        note: str | None = None,
    ) -> MliTensor:
        return MliTensor(
            name=f"{out.name}_{suffix}",
            role=role,
            shape=shape,
            el_type=el,
            layout=layout,
            notes=[note] if note else [],
            source_index=op.inputs[slot] if slot is not None else None,
        )

    k = _Cell(
        x,
        out,
        tensor(
            "weights_in", Role.WEIGHTS, (4,) + w_in[0].shape, el_w, "GNM", lstm.INPUT_WEIGHTS[0]
        ),
        tensor("weights_out", Role.WEIGHTS, (4, m, m), el_w, "GMM", lstm.RECURRENT_WEIGHTS[0]),
        tensor("bias", Role.BIAS, (4, m), el_b, "GM", lstm.BIASES[0]),
        tensor(
            "prev_out",
            Role.PARAM,
            (m,),
            el_a,
            note="the previous output at the first step: zero (one sequence per run)",
        ),
        tensor(
            "cell_zero", Role.PARAM, (m,), el_a, note="copied into the cell state before every run"
        ),
        tensor("cell", Role.ACTIVATION, (m,), el_a, note=cell_note),
        w_in,
        w_out,
        bias,
        cell_range,
    )
    if el_a == ElType.SA8:
        _sa8_params(b, op, k)
    else:
        _fx_params(k, el_w.bits, el_b.bits)
    for t in (k.w_in, k.w_out, k.bias, k.prev_out, k.cell_zero, k.cell):
        b.add(t)
    b.mov(
        op, fmt, k.cell_zero.name, k.cell.name, [0], [m], [1], "reset the LSTM cell state to zero"
    )
    b.layer(
        op,
        "lstm_cell",
        fmt,
        [x.name, k.prev_out.name, k.cell.name],
        [out.name],
        bias=k.bias.name,
        params={"weights_in": k.w_in.name, "weights_out": k.w_out.name},
        cfg_type="mli_rnn_cell_cfg",
        cfg={
            "direction": 0,
            "results": RNN_OUT_ALL,
            "act": RNN_ACT_TANH,
            "scratch_bytes": 4 * m * el_a.dtype.itemsize,
            "scratch_type": el_a.c_type,
        },
        notes=[
            "gates stacked in MLI's order (i, g, f, o) from TFLite's (input, forget, "
            "cell, output); every step's output kept",
            cell_note,
        ],
    )


def _sa8_params(b: Builder, op: ir.Op, k: _Cell) -> None:
    k.w_in.data, s_in = _sa8_per_gate(b, op, lstm.INPUT_WEIGHTS, k.real_w_in)
    k.w_out.data, s_out = _sa8_per_gate(b, op, lstm.RECURRENT_WEIGHTS, k.real_w_out)
    # MLI adds the bias to the input part of each gate: its scale is x_scale * w_in_scale[g].
    b_scale = np.float32(k.x.real_scale()[0]) * s_in.astype(np.float32)
    k.bias.data = np.stack(
        [Q.int_quantize(r, float(s), 0, 32)[0] for r, s in zip(k.real_bias, b_scale)]
    ).astype(np.int32)
    for t, scales in ((k.w_in, s_in), (k.w_out, s_out)):
        t.scale, t.scale_frac_bits = Q.encode_scale_mli2(scales)
        t.zero_point, t.dim = np.zeros(4, np.int16), 0
    k.bias.scale, k.bias.scale_frac_bits = Q.bias_scale_mli2(
        int(k.x.scale[0]),
        int(k.x.scale_frac_bits[0]),
        k.w_in.scale,
        k.w_in.scale_frac_bits,
        b_scale.astype(np.float64),
    )
    k.bias.zero_point, k.bias.dim = np.zeros(4, np.int16), 0
    b.set_sa(k.cell, k.cell_range / 127, 0)
    for t, like in ((k.prev_out, k.out), (k.cell_zero, k.cell)):  # real zero in their params
        t.scale, t.scale_frac_bits = like.scale.copy(), like.scale_frac_bits.copy()
        t.zero_point, t.dim = like.zero_point.copy(), -1
        t.data = np.full(t.shape, int(like.zero_point[0]), np.int8)


def _fx_params(k: _Cell, w_bits: int, b_bits: int) -> None:
    for t, real in ((k.w_in, np.stack(k.real_w_in)), (k.w_out, np.stack(k.real_w_out))):
        t.frac_bits = Q.fx_frac_bits(float(np.abs(real).max(initial=0.0)), w_bits)
        t.data, _ = Q.fx_quantize(real, t.frac_bits, w_bits)
    real_b = np.stack(k.real_bias)
    # MLI shifts the bias to the input part's frac bits (in + w_in): it must not exceed them.
    k.bias.frac_bits = min(
        Q.fx_frac_bits(float(np.abs(real_b).max(initial=0.0)), b_bits),
        int(k.x.frac_bits) + int(k.w_in.frac_bits),
    )
    k.bias.data, _ = Q.fx_quantize(real_b, k.bias.frac_bits, b_bits)
    k.cell.frac_bits = Q.fx_frac_bits(k.cell_range, 16)
    for t, like in ((k.prev_out, k.out), (k.cell_zero, k.cell)):
        t.frac_bits = like.frac_bits
        t.data = np.zeros(t.shape, like.el_type.dtype)
