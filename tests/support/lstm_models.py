"""Generated LSTM models for tests: an int8 UNIDIRECTIONAL_SEQUENCE_LSTM as TFLite's quantizer
writes it (tflite mode against LiteRT, the lowering on the real MLI library)."""

from __future__ import annotations

import numpy as np

from tests.support.tflite_build import T, graph_model, options


def int8_lstm_model(
    *,
    steps: int = 6,
    features: int = 5,
    cells: int = 7,
    batch: int = 1,
    x_zp: int = -3,
    h_zp: int = 0,
    hidden_zp: int | None = None,
    cell_power: int = -12,
    cell_scale: float | None = None,
    cell_clip: float = 0.0,
    cifg: bool = False,
    time_major: bool = False,
    gate_gain: float = 1.0,
    seed: int = 0,
    hidden_scale: float = 1 / 128,
    slots_from: dict[int, int] | None = None,
) -> bytes:
    """An int8 UNIDIRECTIONAL_SEQUENCE_LSTM as TFLite's quantizer writes it: per-tensor int8
    weights, int32 biases, variable int8 output state and int16 cell state (scale 2^cell_power, or
    `cell_scale`: TFLite's quantizer writes a power of two, other tools may not),
    five intermediates (four unquantized gate placeholders, the hidden state's quantization).
    `hidden_scale` is the hidden intermediate's scale (the output's quantization in TFLite's
    kernel). `slots_from` {slot: other slot or -1} rewires or omits an input (malformed models)."""
    rng = np.random.default_rng(seed)
    x_scale, h_scale = 0.02, 1 / 128

    def weights(*shape):
        scale = gate_gain * float(rng.uniform(0.004, 0.012))
        return T(list(shape), scale=scale, data=rng.integers(-127, 128, shape).astype(np.int8))

    x_shape = [steps, batch, features] if time_major else [batch, steps, features]
    tensors = [T(x_shape, scale=x_scale, zero_point=x_zp, name="x")]
    slots = [0]
    for k in range(1, 24):
        t = None
        if k in (1, 2, 3, 4) and not (cifg and k == 1):
            t = weights(cells, features)
        elif k in (5, 6, 7, 8) and not (cifg and k == 5):
            t = weights(cells, cells)
        elif k in (12, 13, 14, 15) and not (cifg and k == 12):
            gate_weights = tensors[slots[k - 11]]  # bias scale: input x weight scale
            t = T(
                [cells],
                dtype="int32",
                scale=x_scale * gate_weights.scale,
                data=rng.integers(-3000, 3000, cells).astype(np.int32),
            )
        elif k == 18:
            t = T([batch, cells], scale=h_scale, zero_point=h_zp, is_variable=True, name="h")
        elif k == 19:
            scale = 2.0**cell_power if cell_scale is None else cell_scale
            t = T([batch, cells], dtype="int16", scale=scale, is_variable=True, name="c")
        if t is None:
            slots.append(-1)
        else:
            tensors.append(t)
            slots.append(len(tensors) - 1)
    for slot, other in (slots_from or {}).items():
        slots[slot] = slots[other] if other >= 0 else -1
    first_intermediate = len(tensors)
    tensors += [T([0], dtype="float32", name=f"gate{g}") for g in range(4)]
    tensors.append(
        T(
            [0],
            scale=hidden_scale,
            zero_point=h_zp if hidden_zp is None else hidden_zp,
            name="hidden",
        )
    )
    out_shape = [steps, batch, cells] if time_major else [batch, steps, cells]
    tensors.append(T(out_shape, scale=h_scale, zero_point=h_zp, name="y"))
    y = len(tensors) - 1
    op = (
        "UNIDIRECTIONAL_SEQUENCE_LSTM",
        slots,
        [y],
        options(
            "UnidirectionalSequenceLSTMOptions",
            fusedActivationFunction=4,
            cellClip=cell_clip,
            timeMajor=time_major,
        ),
        list(range(first_intermediate, first_intermediate + 5)),
    )
    return graph_model(tensors, [op], [0], [y])


def float_lstm_model(
    *,
    batch: int = 1,
    steps: int = 3,
    features: int = 4,
    cells: int = 5,
    projection: int | None = None,
    projection_bias: bool = False,
    proj_clip: float = 0.0,
    peephole: bool = False,
    layer_norm: bool = False,
    time_major: bool = False,
    seed: int = 2,
) -> bytes:
    """A float32 UNIDIRECTIONAL_SEQUENCE_LSTM alone: `projection` P projects the M cells to P
    outputs ([P, M] weights, optional [P] bias, clipped at `proj_clip`); a model batch of
    `batch` sequences."""
    rng = np.random.default_rng(seed)
    outputs = projection or cells
    shapes = {k: (cells, features) for k in (1, 2, 3, 4)}
    shapes.update({k: (cells, outputs) for k in (5, 6, 7, 8)})
    shapes.update({k: (cells,) for k in (12, 13, 14, 15)})
    if peephole:
        shapes.update({k: (cells,) for k in (9, 10, 11)})
    if projection:
        shapes[16] = (outputs, cells)
        if projection_bias:
            shapes[17] = (outputs,)
    if layer_norm:
        shapes.update({k: (cells,) for k in (20, 21, 22, 23)})
    x_shape = [steps, batch, features] if time_major else [batch, steps, features]
    tensors = [T(x_shape, dtype="float32", name="x")]
    slots = [0] + [-1] * 23
    for k, shape in shapes.items():
        slots[k] = len(tensors)
        tensors.append(
            T(list(shape), dtype="float32", data=rng.uniform(-0.5, 0.5, shape).astype(np.float32))
        )
    for k, shape, name in ((18, [batch, outputs], "h"), (19, [batch, cells], "c")):
        slots[k] = len(tensors)
        tensors.append(T(shape, dtype="float32", is_variable=True, name=name))
    out_shape = [steps, batch, outputs] if time_major else [batch, steps, outputs]
    tensors.append(T(out_shape, dtype="float32", name="y"))
    y = len(tensors) - 1
    return graph_model(
        tensors,
        [
            (
                "UNIDIRECTIONAL_SEQUENCE_LSTM",
                slots,
                [y],
                options(
                    "UnidirectionalSequenceLSTMOptions",
                    fusedActivationFunction=4,
                    projClip=proj_clip,
                    timeMajor=time_major,
                ),
            )
        ],
        [0],
        [y],
    )
