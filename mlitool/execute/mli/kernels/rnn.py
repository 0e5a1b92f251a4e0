"""MLI 2.0.2 recurrent cells: lstm_cell and gru_cell (sa8_sa8_sa32, fx16, fx16_fx8_fx8).

Follows mli_krn_lstm_cell_ref.h / mli_krn_gru_cell_ref.h step by step: per gate an rnn_dense into
an intermediate tensor with fixed params, the LUT activations (`activations.sigm` / `tanh`), and
element-wise mul/add/sub (`eltwise.eltwise`) whose outputs keep the params of the tensor they
write (MLI calls them with "no output update").

Shapes (MLI, batch axis B added in front): `x` (B, seq, N), `h0` (B, M), LSTM `c0` (B, M);
weights_in (gates, N, M), weights_out (gates, M, M), bias (gates, M); out (1 or seq, M).
Gate order: LSTM (i, g, f, o), GRU (z, r, n). cfg: direction (0 fwd, 1 bwd), results (0 last,
1 all), act (0 none, 1 tanh, 2 sigm; LSTM only).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from mlitool.errors import UnsupportedError
from mlitool.execute.mli.kernels import activations
from mlitool.execute.mli.kernels.eltwise import eltwise
from mlitool.execute.mli.kernels.intops import Arith
from mlitool.execute.mli.kernels.mac import rnn_dense, variant
from mlitool.mli.ops import output_params
from mlitool.mli.types import MliLayer, MliModel, MliTensor

ACT_NONE, ACT_TANH, ACT_SIGM = 0, 1, 2


def _vector(t: MliTensor, size: int, **params) -> MliTensor:
    """A rank-1 tensor of `size` elements with t's type and params (or the given ones)."""
    return dataclasses.replace(t, shape=(size,), data=None, mem_stride=None, **params)


def _sa_params(zero_point: int, scale: int, frac_bits: int) -> dict:
    return dict(
        zero_point=np.array([zero_point], np.int16),
        scale=np.array([scale], np.int16),
        scale_frac_bits=np.array([frac_bits], np.int8),
        dim=-1,
    )


def _gate(t: MliTensor, g: int, shift_per_tensor: tuple[int, int] = (0, 0)) -> MliTensor:
    """Gate g of stacked weights or bias, with the scale MLI uses for it.

    Per-axis SA params (dim 0) give scale[g]. `shift_per_tensor` reproduces a GRU quirk: for the
    new gate MLI advances the scale pointers by two gates even when the params are per-tensor
    values held inline, which adds (4, 2) to the int16 scale and the int8 frac bits it reads.
    """
    data = np.asarray(t.data)[g]
    new = dataclasses.replace(t, shape=data.shape, data=data, mem_stride=None)
    if t.el_type.is_sa:
        if t.dim >= 0:
            new = dataclasses.replace(
                new,
                scale=t.scale[g : g + 1],
                scale_frac_bits=t.scale_frac_bits[g : g + 1],
                zero_point=t.zero_point[g : g + 1],
                dim=-1,
            )
        elif shift_per_tensor != (0, 0):
            scale = (t.scale.astype(np.int64) + shift_per_tensor[0] + 2**15) % 2**16 - 2**15
            frac = (t.scale_frac_bits.astype(np.int64) + shift_per_tensor[1] + 2**7) % 2**8 - 2**7
            new = dataclasses.replace(
                new, scale=scale.astype(np.int16), scale_frac_bits=frac.astype(np.int8)
            )
    return new


class _Cell:
    """What both cells share: the dense gates, the activations, the element-wise steps."""

    def __init__(self, kind, tensors, cfg, arith, ir_sa: tuple[int, int, int], ir_fx_max: int):
        """tensors: (inp, prev_out, weights_in, weights_out, bias, out); ir_sa: (zp, scale, frac)
        of the SA8 gate tensor; ir_fx_max: cap of its FX frac bits."""
        inp, prev_out, weights_in, weights_out, bias, out = tensors
        for w in (weights_in, weights_out):
            variant(kind, inp, w, bias, out)
        if prev_out.el_type != inp.el_type:
            raise UnsupportedError(f"{kind}: prev_out must have the input's element type")
        self.weights_in, self.weights_out, self.bias, self.arith = (
            weights_in,
            weights_out,
            bias,
            arith,
        )
        self.sa = inp.el_type.is_sa
        self.m = prev_out.size
        self.x_t = _vector(inp, inp.shape[1])
        self.out_t = _vector(out, self.m)
        if self.sa:
            self.ir = _vector(inp, self.m, **_sa_params(*ir_sa))
        else:
            frac = min(ir_fx_max, int(inp.frac_bits) + int(weights_in.frac_bits))
            self.ir = _vector(inp, self.m, frac_bits=frac)
        self.sigm_t = self._act_params("sigm", self.ir)
        self.tanh_t = self._act_params("tanh", self.ir)
        self.steps = inp.shape[0]
        self.backward = int(cfg.get("direction", 0)) == 1
        self.all = int(cfg.get("results", 0)) == 1

    def _act_params(self, kind: str, t: MliTensor) -> MliTensor:
        return output_params(kind, t, t)

    def dense(self, g, x, h, h_t, shift_per_tensor=(0, 0)) -> np.ndarray:
        """rnn_dense of gate g: x @ W_in[g] + h @ W_out[g] + b[g] into the intermediate tensor."""
        w = [
            _gate(self.weights_in, g, shift_per_tensor),
            _gate(self.weights_out, g, shift_per_tensor),
        ]
        return rnn_dense([x, h], [self.x_t, h_t], w, _gate(self.bias, g), self.ir, {}, self.arith)

    def act(self, kind: str, v, t: MliTensor) -> tuple[np.ndarray, MliTensor]:
        fn = activations.sigm if kind == "sigm" else activations.tanh
        res_t = self._act_params(kind, t)
        return fn(v, t, res_t, self.arith).astype(np.int64), res_t

    def elt(self, op, a, b, a_t, b_t, out_t) -> np.ndarray:
        return eltwise(op, a, b, a_t, b_t, out_t, self.arith).astype(np.int64)

    def order(self) -> range:
        return range(self.steps - 1, -1, -1) if self.backward else range(self.steps)

    def collect(self, outputs: list[np.ndarray], out: MliTensor) -> np.ndarray:
        res = np.stack(outputs if self.all else outputs[-1:], axis=1)
        return res.reshape((res.shape[0],) + tuple(out.shape)).astype(out.el_type.dtype)


def lstm_cell(
    x,
    h0,
    c0,
    inp: MliTensor,
    prev_out: MliTensor,
    weights_in: MliTensor,
    weights_out: MliTensor,
    bias: MliTensor,
    cell: MliTensor,
    out: MliTensor,
    cfg: dict,
    arith: Arith,
) -> tuple[np.ndarray, np.ndarray]:
    """mli_krn_lstm_cell_*: returns (out (B,) + out.shape, the updated cell (B, M))."""
    tensors = inp, prev_out, weights_in, weights_out, bias, out
    k = _Cell("lstm_cell", tensors, cfg, arith, ir_sa=(0, 1, 4), ir_fx_max=10)
    act = int(cfg.get("act", ACT_NONE))
    x = np.asarray(x, np.int64)
    h, h_t = np.asarray(h0, np.int64).reshape(-1, k.m), _vector(prev_out, k.m)
    c, c_t = np.asarray(c0, np.int64).reshape(-1, k.m), _vector(cell, k.m)
    outputs = []
    for step in k.order():
        x_s = x[:, step]
        i, i_t = k.act("sigm", k.dense(0, x_s, h, h_t), k.ir)
        g, g_t = k.act("tanh", k.dense(1, x_s, h, h_t), k.ir)
        f, f_t = k.act("sigm", k.dense(2, x_s, h, h_t), k.ir)
        o, o_t = k.act("sigm", k.dense(3, x_s, h, h_t), k.ir)
        c = k.elt("mul", c, f, c_t, f_t, c_t)
        g = k.elt("mul", g, i, g_t, i_t, g_t)
        c = k.elt("add", c, g, c_t, g_t, c_t)
        if act == ACT_NONE:
            a, a_t = c, c_t
        elif act in (ACT_TANH, ACT_SIGM):
            a, a_t = k.act("tanh" if act == ACT_TANH else "sigm", c, c_t)
        else:
            raise UnsupportedError(f"lstm_cell: unknown activation {act}")
        h, h_t = k.elt("mul", a, o, a_t, o_t, k.out_t), k.out_t
        outputs.append(h)
    return k.collect(outputs, out), c.astype(cell.el_type.dtype)


def gru_cell(
    x,
    h0,
    inp: MliTensor,
    prev_out: MliTensor,
    weights_in: MliTensor,
    weights_out: MliTensor,
    bias: MliTensor,
    out: MliTensor,
    cfg: dict,
    arith: Arith,
) -> np.ndarray:
    """mli_krn_gru_cell_*: returns (B,) + out.shape. (MLI's GRU ignores cfg.act.)"""
    tensors = inp, prev_out, weights_in, weights_out, bias, out
    k = _Cell("gru_cell", tensors, cfg, arith, ir_sa=(0, 21, 9), ir_fx_max=inp.el_type.bits - 1 - 4)
    x = np.asarray(x, np.int64)
    h, h_t = np.asarray(h0, np.int64).reshape(-1, k.m), _vector(prev_out, k.m)
    # The constant "one": the container maximum in sigm's output params.
    one_t = _vector(k.sigm_t, 1)
    one = np.full((1, 1), np.iinfo(inp.el_type.dtype).max, np.int64)
    quirk = (4, 2) if k.sa else (0, 0)
    outputs = []
    for step in k.order():
        x_s = x[:, step]
        z, z_t = k.act("sigm", k.dense(0, x_s, h, h_t), k.ir)
        r, r_t = k.act("sigm", k.dense(1, x_s, h, h_t), k.ir)
        h_reset = k.elt("mul", r, h, r_t, h_t, h_t)
        h_keep = k.elt("mul", h, z, h_t, z_t, h_t)
        one_minus_z = k.elt("sub", one, z, one_t, z_t, z_t)
        n, n_t = k.act("tanh", k.dense(2, x_s, h_reset, h_t, quirk), k.ir)
        new = k.elt("mul", n, one_minus_z, n_t, z_t, k.out_t)
        h, h_t = k.elt("add", new, h_keep, k.out_t, h_t, k.out_t), k.out_t
        outputs.append(h)
    return k.collect(outputs, out)


# ---------------------------------------------------------------------------------------------
# Layer adapters: inputs are [x, prev_out] (+ [cell] for LSTM); constants in weights / params.


def _tensors(layer: MliLayer, model: MliModel):
    t = model.tensors
    return (
        t[layer.inputs[0]],
        t[layer.inputs[1]],
        t[layer.params["weights_in"]],
        t[layer.params["weights_out"]],
        t[layer.bias],
        t[layer.outputs[0]],
    )


def _run_lstm(
    layer: MliLayer, model: MliModel, inputs: list[np.ndarray], arith: Arith
) -> np.ndarray:
    inp, prev, w_in, w_out, bias, out = _tensors(layer, model)
    cell = model.tensors[layer.inputs[2]]
    return lstm_cell(
        inputs[0], inputs[1], inputs[2], inp, prev, w_in, w_out, bias, cell, out, layer.cfg, arith
    )[0]


def _run_gru(
    layer: MliLayer, model: MliModel, inputs: list[np.ndarray], arith: Arith
) -> np.ndarray:
    inp, prev, w_in, w_out, bias, out = _tensors(layer, model)
    return gru_cell(inputs[0], inputs[1], inp, prev, w_in, w_out, bias, out, layer.cfg, arith)


LAYER_RUNNERS: dict[str, Callable[[MliLayer, MliModel, list[np.ndarray], Arith], np.ndarray]] = {
    "lstm_cell": _run_lstm,
    "gru_cell": _run_gru,
}
