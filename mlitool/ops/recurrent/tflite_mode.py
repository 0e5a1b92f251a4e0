"""`tflite` mode UNIDIRECTIONAL_SEQUENCE_LSTM on int8 models: TFLite's integer LSTM (8x8_16).

int8 input and output state, int8 weights, int32 biases, an int16 cell state whose scale is a
power of two. Each gate is two saturating int16 accumulations in Q3.12 (input part, then the
recurrent part added to it), each a MultiplyByQuantizedMultiplier of an exact sum whose zero
point terms are folded into the bias as TFLite's Prepare() does; gemmlowp's 16-bit sigmoid and
tanh (`gemmlowp16`); the cell update in Q0.15 products with rounding shifts; the output through
the hidden intermediate's scale and zero point. Effective scales are float32 products, as in
TFLite. Every sequence starts from TFLite's reset state: output state at its zero point, cell 0.

A cell state scale that is not a power of two (CheckedLog2: log2 more than 1e-3 from an integer)
makes LiteRT's PopulateQuantizedLstmParams8x8_16 return early, a status its Prepare ignores: the
integer parameters keep their zero initialization (multipliers 0, hidden zero point 0), and the
LSTM outputs 0 at every step whatever its input. tflite mode gives exactly that, LiteRT's result.
(TFLite Micro's LSTM takes the file's scale in its cell multiplications and the rounded power in
its tanh; mlitool's MLI lowering takes the int16 state's range, as for any cell scale.)
Peephole, projection and layer normalization are refused (mlitool does not lower them either).
"""

from __future__ import annotations

import numpy as np

from mlitool import lstm_slots as lstm
from mlitool.execute.reference import fixedpoint as fp
from mlitool.execute.reference.call import Call
from mlitool.execute.reference.gemmlowp16 import (
    INT16_MAX,
    INT16_MIN,
    logistic_table,
    lookup,
    tanh_table,
    wrap16,
)
from mlitool.execute.reference.params import checked_log2, scale_of, zp_of
from mlitool.ops.recurrent import float_mode as float_ops

f32 = np.float32
GATE_INTEGER_BITS = 3  # gates are Q3.12 (TFLite's default intermediate 2^-12)


def unidirectional_sequence_lstm(c: Call):
    x_t = c.tin(0)
    if np.dtype(x_t.dtype).kind == "f":
        return float_ops.unidirectional_sequence_lstm(c)
    w_t = c.tin(lstm.INPUT_WEIGHTS[1])
    if x_t.dtype != "int8" or w_t.dtype != "int8":
        raise c.unsupported(f"an LSTM with {x_t.dtype} input and {w_t.dtype} weights (int8 only)")
    for what, slots in lstm.OPTIONAL_PARTS.items():
        if any(c.has(k) for k in slots):
            raise c.unsupported(f"an integer LSTM with {what}")
    if c.opt("fused_activation", "TANH") != "TANH":
        raise c.unsupported(
            f"an integer LSTM with activation {c.opt('fused_activation')} "
            "(TFLite's integer LSTM computes TANH only)"
        )
    if not checked_log2(scale_of(c.tin(lstm.CELL_STATE)))[1]:
        # LiteRT's Prepare stops at its CheckedLog2 of the cell scale, and its caller ignores the
        # status: every multiplier and zero point of the integer LSTM stays 0, so every output
        # element is 0 (not the zero point). TFLite Micro runs such a file otherwise.
        return [np.zeros(c.out_shape(), np.int8)]
    cell = _Cell(c)
    time_major = bool(c.opt("time_major", False))
    x = np.asarray(c.x(0), np.int64)
    if time_major:
        x = x.swapaxes(1, 2)  # (n, B, T, N)
    n, batch, steps = x.shape[:3]
    y = cell.run(x.reshape(n * batch, steps, -1))  # (n*B, T, M)
    y = y.reshape(n, batch, steps, -1)
    return [(y.swapaxes(1, 2) if time_major else y).astype(np.int8).reshape(c.out_shape())]


class _Cell:
    """The integer LSTM's constants, derived as TFLite's Prepare() does, and its recurrence."""

    def __init__(self, c: Call):
        self.cifg = not c.has(lstm.INPUT_WEIGHTS[0])
        self.gates = [1, 2, 3] if self.cifg else [0, 1, 2, 3]
        x_t, h_t, cell_t = c.tin(0), c.tin(lstm.OUTPUT_STATE), c.tin(lstm.CELL_STATE)
        self.cell_power = _cell_scale_power(c, scale_of(cell_t))
        gate_scale = f32(2.0**-12)
        w_in, w_rec, bias_in, bias_rec, m_in, m_rec = [], [], [], [], [], []
        for g in self.gates:
            wi = np.asarray(c.const(lstm.INPUT_WEIGHTS[g]), np.int64)
            wr = np.asarray(c.const(lstm.RECURRENT_WEIGHTS[g]), np.int64)
            b = np.asarray(c.const(lstm.BIASES[g]), np.int64) if c.has(lstm.BIASES[g]) else 0
            w_in.append(wi)
            w_rec.append(wr)
            bias_in.append(b - zp_of(x_t) * wi.sum(axis=1))
            bias_rec.append(-zp_of(h_t) * wr.sum(axis=1))
            m_in.append(
                f32(scale_of(c.tin(lstm.INPUT_WEIGHTS[g]))) * f32(scale_of(x_t)) / gate_scale
            )
            m_rec.append(
                f32(scale_of(c.tin(lstm.RECURRENT_WEIGHTS[g]))) * f32(scale_of(h_t)) / gate_scale
            )
        cells = w_in[0].shape[0]
        self.cells = cells
        # All gates side by side: one product per step; multipliers repeat per gate row.
        self.w_in = np.concatenate(w_in).T.astype(np.float64)  # (N, G*M), exact sums
        self.w_rec = np.concatenate(w_rec).T.astype(np.float64)  # (M, G*M)
        self.bias_in, self.bias_rec = np.concatenate(bias_in), np.concatenate(bias_rec)
        self.mult_in = [np.repeat(v, cells) for v in fp.quantize_multiplier(np.array(m_in))]
        self.mult_rec = [np.repeat(v, cells) for v in fp.quantize_multiplier(np.array(m_rec))]
        hidden = _hidden(c)
        self.hidden_zp = zp_of(hidden)
        self.hidden_mult = fp.quantize_multiplier(
            f32(2.0**-15) / f32(scale_of(hidden)) * f32(2.0**-15)
        )
        self.h0 = zp_of(h_t)
        clip = float(c.opt("cell_clip", 0.0) or 0.0)
        self.clip = (
            int(np.clip(f32(clip) / f32(scale_of(cell_t)), INT16_MIN, INT16_MAX)) if clip > 0 else 0
        )
        self.sigmoid = logistic_table(GATE_INTEGER_BITS)
        self.tanh_gate = tanh_table(GATE_INTEGER_BITS)
        self.tanh_cell = tanh_table(15 + self.cell_power)

    def run(self, x: np.ndarray) -> np.ndarray:
        """x (B, T, N) int8 values → every step's output state (B, T, M)."""
        batch, steps = x.shape[:2]
        m = self.cells
        from_input = _requantize16(x.astype(np.float64) @ self.w_in, self.bias_in, self.mult_in, 0)
        h = np.full((batch, self.w_rec.shape[0]), self.h0, np.int64)
        cell = np.zeros((batch, m), np.int64)
        out = np.empty((batch, steps, h.shape[1]), np.int64)
        for t in range(steps):
            pre = _requantize16(
                h.astype(np.float64) @ self.w_rec, self.bias_rec, self.mult_rec, from_input[:, t]
            )
            gate = dict(zip(self.gates, np.split(pre, len(self.gates), axis=1)))
            forget = lookup(self.sigmoid, gate[1])
            cell_in = lookup(self.tanh_gate, gate[2])
            output = lookup(self.sigmoid, gate[3])
            input_gate = INT16_MAX - forget if self.cifg else lookup(self.sigmoid, gate[0])
            cell = wrap16(fp.rdbpot(forget * cell, 15))
            update = wrap16(fp.rdbpot(input_gate * cell_in, 30 + self.cell_power))
            cell = np.clip(cell + update, INT16_MIN, INT16_MAX)
            if self.clip > 0:
                cell = np.clip(cell, -self.clip, self.clip)
            hidden = output * lookup(self.tanh_cell, cell)
            h = np.clip(
                fp.mul_by_quantized_multiplier(hidden, *self.hidden_mult) + self.hidden_zp,
                -128,
                127,
            )
            out[:, t] = h
        return out


def _requantize16(acc: np.ndarray, bias: np.ndarray, mult: list, add) -> np.ndarray:
    """TFLite's MatrixBatchVectorMultiplyAccumulate into int16: the exact sum plus the folded
    bias, rescaled, added to what the gate holds, saturated."""
    acc = np.rint(acc).astype(np.int64) + bias
    return np.clip(fp.mul_by_quantized_multiplier(acc, *mult) + add, INT16_MIN, INT16_MAX)


def _cell_scale_power(c: Call, scale: float) -> int:
    """TFLite's CheckedLog2 of the cell state scale; its tanh takes Q0.15 to Q6.9 cell states."""
    power, pot = checked_log2(scale)
    if not pot or not -15 <= power <= -9:
        raise c.unsupported(
            f"an integer LSTM whose cell state scale {scale:g} is not a power "
            "of two between 2^-15 and 2^-9"
        )
    return power


def _hidden(c: Call):
    """The hidden state's quantization: the op's fifth intermediate tensor (TFLite requires it)."""
    inter, k = c.op.intermediates, lstm.HIDDEN_INTERMEDIATE
    t = c.graph.tensor(inter[k]) if len(inter) > k and inter[k] >= 0 else None
    if t is None or t.quant is None:
        raise c.unsupported(
            "an integer LSTM without the quantized hidden-state intermediate "
            "(intermediate 4) TFLite reads its output scale from"
        )
    return t
