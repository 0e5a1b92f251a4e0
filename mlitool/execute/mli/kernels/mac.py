"""MLI 2.0.2 MAC kernels: conv2d, depthwise / group / transpose conv2d, fully connected, rnn_dense.

Kernel convention: `kernel(x, inp, weights, bias, out, cfg, arith)` with `x` of shape (B,) + inp.shape
(the batch is an extra leading axis MLI does not have), returning (B,) + out.shape in out's dtype.
The element-type variant (sa8_sa8_sa32, fx16, fx16_fx8_fx8) follows from the tensors.

Accumulation is exact (`mac_sums`); then the accumulator width of the MLI kernel is applied (32-bit
wrap for SA8 and fx16_fx8_fx8, 64-bit for fx16 on x86, where the golden vectors come from).
"""

from __future__ import annotations

import numpy as np

from mlitool.errors import UnsupportedError
from mlitool.execute.channels import by_blocks
from mlitool.execute.exact_sums import max_abs
from mlitool.execute.mli.kernels import intops as mli_intops
from mlitool.execute.mli.kernels import macquant as mq
from mlitool.execute.mli.kernels._window import Window
from mlitool.execute.mli.kernels.adapter import Runner, runner
from mlitool.execute.mli.kernels.intops import Arith
from mlitool.execute.mli.kernels.mac_sums import conv_sums, matmul_exact
from mlitool.mli.types import ElType, MliLayer, MliModel, MliTensor

_VARIANTS = {
    (ElType.SA8, ElType.SA8, ElType.SA32): "sa8_sa8_sa32",
    (ElType.FX16, ElType.FX16, ElType.FX16): "fx16",
    (ElType.FX16, ElType.FX8, ElType.FX8): "fx16_fx8_fx8",
}


def variant(kind: str, inp: MliTensor, weights: MliTensor, bias: MliTensor, out: MliTensor) -> str:
    """The MLI type variant of a MAC kernel, or UnsupportedError if MLI 2.x has none."""
    key = (inp.el_type, weights.el_type, bias.el_type)
    name = _VARIANTS.get(key)
    if name is None or out.el_type != inp.el_type:
        types = "/".join(t.el_type.name.lower() for t in (inp, weights, bias, out))
        raise UnsupportedError(
            f"MLI 2.x has no {kind} kernel for in/weights/bias/out types {types}"
        )
    return name


# ---------------------------------------------------------------------------------------------
# Shared finishing: zero point handling, bias, rescale, ReLU


def _zero_meaning(x: np.ndarray, inp: MliTensor, name: str) -> np.ndarray:
    """SA8 subtracts the input zero point (so padding = real zero); FX values are already 0-based."""
    if name == "sa8_sa8_sa32":  # |x - zp| <= 255: exact in float32
        return np.subtract(x, np.float32(int(inp.zero_point[0])), dtype=np.float32)
    return np.asarray(x, dtype=np.int64)


def _finish(
    acc: np.ndarray,
    name: str,
    inp: MliTensor,
    weights: MliTensor,
    bias: MliTensor,
    out: MliTensor,
    cfg: dict,
    arith: Arith,
    acc_bound: int | None = None,
) -> np.ndarray:
    """Raw exact sums (..., Co) -> output values in out's dtype. `acc_bound` bounds |acc| when
    the caller knows it from the operands' ranges."""
    channels = acc.shape[-1]
    limits = mq.relu_limits(mq.relu_type(cfg), out)
    b = np.asarray(bias.data, dtype=np.int64).reshape(-1)
    if name == "sa8_sa8_sa32":
        b = mq.sa8_bias(b, arith)
        mul, shift = mq.sa8_multiplier(inp, weights, out, channels, arith)
        amax = mq.sa8_known_bound(acc_bound, b, mul, arith)
        if amax is None:
            amax = max_abs(acc) + max_abs(b)
        if amax < (1 << 31):  # no wrap, no saturation: sa8_result adds the bias
            return by_blocks(
                lambda a: mq.sa8_result(
                    a,
                    mul,
                    shift,
                    int(out.zero_point[0]),
                    arith,
                    limits,
                    bias=b,
                    amax=amax,
                    dtype=out.el_type.dtype,
                ),
                acc,
                out.el_type.dtype,
            )
        acc = mli_intops.sat(mli_intops.wrap(acc, 32) + b, 32)
        o = mq.sa8_result(acc, mul, shift, int(out.zero_point[0]), arith, limits)
        return o.astype(out.el_type.dtype)
    else:
        bits = mq.fx_acc_bits(weights)
        in_w = int(inp.frac_bits) + int(weights.frac_bits)
        acc = mli_intops.wrap(acc, bits) + mq.fx_bias(b, in_w - int(bias.frac_bits), bits)
        acc = mli_intops.sat(acc, bits)
        o = mq.fx_result(acc, in_w - int(out.frac_bits), bits, arith)
    return mq.clamp(o, limits).astype(out.el_type.dtype)


def _batched(x: np.ndarray, inp: MliTensor) -> np.ndarray:
    x = np.asarray(x)
    if x.shape[1:] != tuple(inp.shape):
        raise ValueError(f"input batch of shape {x.shape} does not match tensor shape {inp.shape}")
    return x


# ---------------------------------------------------------------------------------------------
# Convolutions


def _grouped_conv(kind: str, x, inp, weights, bias, out, cfg, arith, groups: int) -> np.ndarray:
    name = variant(kind, inp, weights, bias, out)
    x = _batched(x, inp)
    zp = int(inp.zero_point[0]) if name == "sa8_sa8_sa32" else 0
    w = np.asarray(weights.data, dtype=np.int64)
    win = Window.from_cfg(cfg, w.shape[:2], out.shape)
    x_bound = _x_bound(x, inp, name)
    acc = conv_sums(x, w, win, groups, zp, x_bound)
    acc_bound = None if x_bound is None else w[..., 0].size * x_bound * max_abs(w)
    return _finish(acc, name, inp, weights, bias, out, cfg, arith, acc_bound)


def _x_bound(x: np.ndarray, inp: MliTensor, name: str) -> int | None:
    """max |x - zp| an int8 container allows (no pass over the data), None otherwise."""
    if name != "sa8_sa8_sa32" or x.dtype != np.int8:
        return None
    return 128 + abs(int(inp.zero_point[0]))


def conv2d(x, inp, weights, bias, out, cfg, arith) -> np.ndarray:
    """mli_krn_conv2d_hwcn_*: weights HWCN (Kh, Kw, Ci, Co)."""
    return _grouped_conv("conv2d", x, inp, weights, bias, out, cfg, arith, groups=1)


def depthwise_conv2d(x, inp, weights, bias, out, cfg, arith) -> np.ndarray:
    """mli_krn_depthwise_conv2d_hwcn_*: weights HW1N (Kh, Kw, 1, C), one filter per channel."""
    if weights.shape[2] != 1 or weights.shape[3] != inp.shape[-1]:
        raise UnsupportedError(
            f"depthwise conv2d needs HW1N weights with {inp.shape[-1]} channels, "
            f"got shape {weights.shape}"
        )
    return _grouped_conv(
        "depthwise_conv2d", x, inp, weights, bias, out, cfg, arith, groups=inp.shape[-1]
    )


def group_conv2d(x, inp, weights, bias, out, cfg, arith) -> np.ndarray:
    """mli_krn_group_conv2d_hwcn_*: weights (Kh, Kw, Ci/groups, Co), groups = Ci / weights.shape[2]."""
    ci, cig, co = inp.shape[-1], weights.shape[2], weights.shape[3]
    if cig == 0 or ci % cig or co % (ci // cig):
        raise UnsupportedError(
            f"group conv2d: input channels {ci} and weights {weights.shape} "
            "do not form whole groups"
        )
    return _grouped_conv("group_conv2d", x, inp, weights, bias, out, cfg, arith, groups=ci // cig)


def transpose_conv2d(x, inp, weights, bias, out, cfg, arith) -> np.ndarray:
    """mli_krn_transpose_conv2d_hwcn_*: out[o] = sum over i, k with o = i*stride + k - pad.

    Computed as a stride-1 convolution of the stride-dilated input (zeros between samples,
    which SA8 treats like padding: real zero) with the spatially flipped kernel.
    """
    name = variant("transpose_conv2d", inp, weights, bias, out)
    xs = _zero_meaning(_batched(x, inp), inp, name)
    w = np.asarray(weights.data, dtype=np.int64)[::-1, ::-1]
    kh, kw = w.shape[:2]
    sh, sw = int(cfg.get("stride_height", 1)), int(cfg.get("stride_width", 1))
    b, h, wd, c = xs.shape
    xd = np.zeros((b, (h - 1) * sh + 1, (wd - 1) * sw + 1, c), dtype=np.int64)
    xd[:, ::sh, ::sw, :] = xs
    pt, pl = int(cfg.get("padding_top", 0)), int(cfg.get("padding_left", 0))
    win = Window(
        kernel=(kh, kw),
        stride=(1, 1),
        dilation=(1, 1),
        pad=(kh - 1 - pt, kw - 1 - pl),
        out=(out.shape[0], out.shape[1]),
    )
    acc = conv_sums(xd, w, win, groups=1)
    return _finish(acc, name, inp, weights, bias, out, cfg, arith)


# ---------------------------------------------------------------------------------------------
# Fully connected


def fully_connected(x, inp, weights, bias, out, cfg, arith, ext_bias: bool = False) -> np.ndarray:
    """mli_krn_fully_connected_*: input read as N elements, weights (N, M).

    `ext_bias` (sa8 only): the input zero point is ignored, the bias already holds its term.
    """
    name = variant("fully_connected", inp, weights, bias, out)
    if ext_bias and name != "sa8_sa8_sa32":
        raise UnsupportedError("fully_connected _ext_bias exists only for sa8_sa8_sa32")
    x = _batched(x, inp)
    xs = np.asarray(x, dtype=np.int64).reshape(x.shape[0], -1)
    if not ext_bias:
        xs = _zero_meaning(xs, inp, name)
    w = np.asarray(weights.data, dtype=np.int64).reshape(xs.shape[1], -1)
    acc = matmul_exact(xs, w)
    return _finish(acc, name, inp, weights, bias, out, cfg, arith).reshape(
        (x.shape[0],) + tuple(out.shape)
    )


def fully_connected_ext_bias(x, inp, weights, bias, out, cfg, arith) -> np.ndarray:
    """mli_krn_fully_connected_sa8_sa8_sa32_ext_bias."""
    return fully_connected(x, inp, weights, bias, out, cfg, arith, ext_bias=True)


# ---------------------------------------------------------------------------------------------
# RNN dense


def rnn_dense(
    xs: list[np.ndarray],
    inps: list[MliTensor],
    weights: list[MliTensor],
    bias: MliTensor,
    out: MliTensor,
    cfg: dict,
    arith: Arith,
) -> np.ndarray:
    """mli_krn_rnn_dense_*: out = sum_i in_i @ W_i + bias, each input's product rescaled on its own.

    MLI adds the bias to the first input's accumulator, rescales every input's accumulator to the
    output scale separately and sums those with saturation; no ReLU. SA8 uses only the first
    weight scale of each weights tensor (the kernel passes channel index 0).
    """
    if not (len(xs) == len(inps) == len(weights)) or not xs:
        raise ValueError("rnn_dense needs as many inputs as weights tensors")
    names = {variant("rnn_dense", i, w, bias, out) for i, w in zip(inps, weights)}
    if len(names) != 1:
        raise UnsupportedError("rnn_dense inputs/weights mix element types")
    name = names.pop()
    channels = out.size
    b = np.asarray(bias.data, dtype=np.int64).reshape(-1)
    bits = 32 if name == "sa8_sa8_sa32" else mq.fx_acc_bits(weights[0])
    total = None
    for idx, (x, inp, wt) in enumerate(zip(xs, inps, weights)):
        x = _batched(x, inp)
        xv = np.asarray(x, dtype=np.int64).reshape(x.shape[0], -1)
        xv = _zero_meaning(xv, inp, name)
        w = np.asarray(wt.data, dtype=np.int64).reshape(xv.shape[1], -1)
        acc = matmul_exact(xv, w)
        if name == "sa8_sa8_sa32":
            if idx == 0:
                acc = acc + mli_intops.sat(mq.sa8_bias(b, arith), 32)
            mul, shift = mq.sa8_multiplier(inp, wt, out, channels, arith, channel=0)
            part = mli_intops.asr_rnd(
                mli_intops.wrap(acc, 32) * mul, np.minimum(shift, 63), 64, arith.round_mode
            )
            part = mli_intops.sat(part, 32)
        else:
            in_w = int(inp.frac_bits) + int(wt.frac_bits)
            if idx == 0:
                fb = int(bias.frac_bits)
                acc = acc + mq.fx_bias(
                    b, int(inps[0].frac_bits) + int(weights[0].frac_bits) - fb, bits
                )
            shift = in_w - int(out.frac_bits)
            part = mli_intops.asr_rnd(
                mli_intops.wrap(acc, bits),
                min(shift, 39) if bits == 64 else shift,
                bits,
                arith.round_mode,
            )
        total = part if total is None else mli_intops.sat(total + part, bits)
    o = mli_intops.sat(total, 16)
    if name == "sa8_sa8_sa32":
        o = mli_intops.sat(mli_intops.sat(o + int(out.zero_point[0]), 16), 8)
    return o.astype(out.el_type.dtype).reshape((o.shape[0],) + tuple(out.shape))


# ---------------------------------------------------------------------------------------------
# Layer adapters for the executor


def _rnn_dense_weights(layer: MliLayer) -> list[str]:
    """Weights names in input order: params weights0..weights{k-1}, or layer.weights + weights1.."""
    count = len(layer.inputs)
    if "weights0" in layer.params:
        return [layer.params[f"weights{i}"] for i in range(count)]
    return [layer.weights] + [layer.params[f"weights{i}"] for i in range(1, count)]


def _run_rnn_dense(
    layer: MliLayer, model: MliModel, inputs: list[np.ndarray], arith: Arith
) -> np.ndarray:
    t = model.tensors
    return rnn_dense(
        inputs,
        [t[n] for n in layer.inputs],
        [t[n] for n in _rnn_dense_weights(layer)],
        t[layer.bias],
        t[layer.outputs[0]],
        layer.cfg,
        arith,
    )


def _ext_bias(layer: MliLayer) -> dict:
    return {"ext_bias": layer.kernel.endswith("_ext_bias")}


LAYER_RUNNERS: dict[str, Runner] = {
    "conv2d": runner(conv2d, "weights", "bias"),
    "depthwise_conv2d": runner(depthwise_conv2d, "weights", "bias"),
    "group_conv2d": runner(group_conv2d, "weights", "bias"),
    "transpose_conv2d": runner(transpose_conv2d, "weights", "bias"),
    # the _ext_bias kernel: verified against the golden vectors (tests/execute), never lowered
    "fully_connected": runner(fully_connected, "weights", "bias", keywords=_ext_bias),
    "rnn_dense": _run_rnn_dense,  # verified against the golden vectors, never lowered
}
