"""`float` mode kernel of UNIDIRECTIONAL_SEQUENCE_LSTM: TFLite's float LSTM, step by step."""

from __future__ import annotations

import numpy as np

from mlitool import lstm_slots as lstm
from mlitool.execute.reference import repro
from mlitool.execute.reference.call import Call
from mlitool.execute.reference.kernel_common import activate, real_input
from mlitool.execute.reference.repro import matmul

f32 = np.float32


def _sigmoid(v: np.ndarray) -> np.ndarray:
    return (f32(1) / (f32(1) + repro.exp(-v))).astype(f32)


def unidirectional_sequence_lstm(c: Call):
    """UNIDIRECTIONAL_SEQUENCE_LSTM as TFLite's float kernel (lstm_eval.cc): peephole, projection
    (bias, clip) and a model batch of B sequences; no layer normalization. CIFG (no input gate
    weights) uses 1 - forget. The state starts at zero for every sample: one inference is B
    sequences."""
    if any(c.has(k) for k in lstm.LAYER_NORM):
        raise c.unsupported("an LSTM with layer normalization")
    time_major = bool(c.opt("time_major", False))
    x = real_input(c, 0)
    if time_major:
        x = x.swapaxes(1, 2)  # (n, B, T, N)
    n, batch, steps = x.shape[:3]
    x = x.reshape(n * batch, steps, -1)  # sequences are independent
    w = {
        k: c.const(k).astype(f32)
        for k in lstm.INPUT_WEIGHTS
        + lstm.RECURRENT_WEIGHTS
        + lstm.PEEPHOLE
        + lstm.BIASES
        + lstm.PROJECTION
        if c.has(k)
    }
    m = w[lstm.RECURRENT_WEIGHTS[3]].shape[0]
    proj, proj_bias = (w.get(k) for k in lstm.PROJECTION)
    act = c.opt("fused_activation", "TANH")
    clip = float(c.opt("cell_clip", 0.0) or 0.0)
    proj_clip = float(c.opt("proj_clip", 0.0) or 0.0)

    peephole = dict(zip((0, 1, 3), lstm.PEEPHOLE))  # the cell gate has none

    def gate(g: int, xt: np.ndarray, h: np.ndarray, cell: np.ndarray | None = None):
        v = (
            matmul(xt, w[lstm.INPUT_WEIGHTS[g]].T)
            + matmul(h, w[lstm.RECURRENT_WEIGHTS[g]].T)
            + w.get(lstm.BIASES[g], f32(0))
        )
        return v + cell * w[peephole[g]] if peephole.get(g) in w else v

    h = np.zeros((x.shape[0], w[lstm.RECURRENT_WEIGHTS[3]].shape[1]), f32)
    cell = np.zeros((x.shape[0], m), f32)
    outs, cells = [], []
    for t in range(steps):
        xt = x[:, t]
        f = _sigmoid(gate(1, xt, h, cell))
        i = _sigmoid(gate(0, xt, h, cell)) if lstm.INPUT_WEIGHTS[0] in w else f32(1) - f
        cell = f * cell + i * activate(gate(2, xt, h), act)
        if clip > 0:
            cell = np.clip(cell, f32(-clip), f32(clip))
        h = (_sigmoid(gate(3, xt, h, cell)) * activate(cell, act)).astype(f32)
        if proj is not None:
            h = matmul(h, proj.T) + (f32(0) if proj_bias is None else proj_bias)
            if proj_clip > 0:
                h = np.clip(h, f32(-proj_clip), f32(proj_clip))
        outs.append(h)
        cells.append(cell)
    if c.has(lstm.CELL_STATE):
        # Every step's cell state, under the state tensor: what calibration takes its range from
        # (no graph tensor holds it; nothing reads a variable's value).
        c.values[c.op.inputs[lstm.CELL_STATE]] = np.stack(cells, axis=1).reshape(n, batch, steps, m)
    y = np.stack(outs, axis=1).reshape(n, batch, steps, -1)
    return [(y.swapaxes(1, 2) if time_major else y).reshape(c.out_shape())]
