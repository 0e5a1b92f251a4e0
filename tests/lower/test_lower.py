"""Lowering IR graphs to MLI models: parameters, layouts, configs, refusals, inserted layers."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest

from mlitool import ir
from mlitool.config import load_config, parse_config
from mlitool.errors import OptionError, UnsupportedError
from mlitool.geometry import pool_hazard, safe_pool_axis, tflite_padding
from mlitool.mli.lower.driver import lower
from mlitool.mli.types import ElType, Role
from tests.support.paths import shared_path

INT8_MODELS = [
    "mlperf_tiny/kws_ref_model_int8",
    "mlperf_tiny/vww_96_int8",
    "mlperf_tiny/resnet8_int8",
    "mlperf_tiny/ad01_int8",
    "tflm/hello_world_int8",
    "tflm/micro_speech_int8",
    "embarc_mli/mobilenet_v1_int8",
]


def f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


def enc16(s: float) -> tuple[int, int]:
    """Independent scalar section-3 encoding (math.frexp on the C float)."""
    m, e = math.frexp(f32(s))
    scale = math.floor(m * 2**15 + 0.5)
    return (16384, 14 - e) if scale == 32768 else (scale, 15 - e)


_graphs: dict[str, ir.Graph] = {}


def model_graph(name: str) -> ir.Graph:
    if name not in _graphs:
        from mlitool.tflite.reader import read_model

        _graphs[name] = read_model(shared_path("models", name + ".tflite")).main
    return _graphs[name]


# --- hand-built graphs ------------------------------------------------------------------------


def q(scale, zp=0, axis=None):
    return ir.Quant(
        np.atleast_1d(np.asarray(scale, float)), np.atleast_1d(np.asarray(zp, np.int64)), axis
    )


class G:
    """Tiny graph builder."""

    def __init__(self):
        self.tensors, self.ops = [], []

    def t(self, shape, dtype="int8", quant=None, data=None, name=None):
        i = len(self.tensors)
        self.tensors.append(ir.Tensor(i, name or f"t{i}", tuple(shape), dtype, data, quant))
        return i

    def op(self, type_, inputs, outputs, **options):
        self.ops.append(ir.Op(len(self.ops), type_, tuple(inputs), tuple(outputs), options))

    def graph(self, inputs, outputs):
        return ir.Graph("g", self.tensors, self.ops, inputs, outputs)


def conv_graph(
    w_scales=(0.01, 0.02), in_hw=(5, 5), k=3, stride=1, padding="SAME", act="NONE", dilation=1
):
    b = G()
    cout = len(w_scales)
    x = b.t((1, *in_hw, 2), quant=q(0.05, 3), name="x")
    rng = np.random.default_rng(0)
    w = b.t(
        (cout, k, k, 2),
        data=rng.integers(-127, 128, (cout, k, k, 2)).astype(np.int8),
        quant=q(w_scales, [0] * cout, 0),
        name="w",
    )
    bias_scale = [f32(f32(0.05) * f32(s)) for s in w_scales]
    bb = b.t(
        (cout,),
        "int32",
        data=np.arange(cout, dtype=np.int32) * 100,
        quant=q(bias_scale, [0] * cout, 0),
        name="b",
    )
    oh, _, _ = tflite_padding(padding, in_hw[0], k, stride, dilation)
    ow, _, _ = tflite_padding(padding, in_hw[1], k, stride, dilation)
    y = b.t((1, oh, ow, cout), quant=q(0.1, -128), name="y")
    b.op(
        "CONV_2D",
        [x, w, bb],
        [y],
        padding=padding,
        stride_h=stride,
        stride_w=stride,
        dilation_h=dilation,
        dilation_w=dilation,
        fused_activation=act,
    )
    return b.graph([x], [y])


# --- SA8 parameters of real layers --------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "mlperf_tiny/kws_ref_model_int8",
        "mlperf_tiny/vww_96_int8",
        "embarc_mli/mobilenet_v1_int8",
        "mlperf_tiny/ad01_int8",
    ],
)
def test_sa8_params_of_real_mac_layers(name):
    g = model_graph(name)
    m = lower(g, format="sa8")
    checked = 0
    for layer in m.layers:
        if layer.weights is None:
            continue
        op = g.ops[layer.index]
        x_t, w_t, b_t = (g.tensors[i] for i in op.inputs[:3])
        y_t = g.tensors[op.outputs[0]]
        xin, w, b = m.tensors[layer.inputs[0]], m.tensors[layer.weights], m.tensors[layer.bias]
        y = m.tensors[layer.outputs[0]]
        for mt, tt in ((xin, x_t), (y, y_t)):
            s, f = enc16(float(tt.quant.scale[0]))
            assert (int(mt.scale[0]), int(mt.scale_frac_bits[0]), int(mt.zero_point[0])) == (
                s,
                f,
                int(tt.quant.zero_point[0]),
            )
            assert mt.dim == -1 and len(mt.scale) == 1
        in_s, in_f = enc16(float(x_t.quant.scale[0]))
        for k, ws in enumerate(w_t.quant.scale):
            s, f = enc16(float(ws))
            assert (int(w.scale[k]), int(w.scale_frac_bits[k])) == (s, f)
            bf = 15 - math.frexp(f32(float(b_t.quant.scale[k])))[1]
            assert int(b.scale_frac_bits[k]) == bf
            assert int(b.scale[k]) == (in_s * s) >> (in_f + f - bf)
        assert np.array_equal(b.data, b_t.data) and b.data.dtype == np.int32
        expected_dim = {"CONV_2D": 3, "DEPTHWISE_CONV_2D": 3, "FULLY_CONNECTED": 1}[op.type]
        assert w.dim == (expected_dim if w_t.quant.per_axis else -1)
        assert b.dim == (0 if w_t.quant.per_axis else -1)
        checked += 1
    assert checked >= 1


def test_weight_layouts_against_tflite():
    g = model_graph("mlperf_tiny/kws_ref_model_int8")
    m = lower(g, format="sa8")
    rng = np.random.default_rng(1)
    for layer in m.layers:
        if layer.weights is None:
            continue
        tw = np.asarray(g.tensors[g.ops[layer.index].inputs[1]].data)
        mw = m.tensors[layer.weights].data
        for _ in range(50):
            if layer.kind == "conv2d":  # OHWI -> HWCN
                o, h, w, c = (int(rng.integers(0, d)) for d in tw.shape)
                assert mw[h, w, c, o] == tw[o, h, w, c]
            elif layer.kind == "depthwise_conv2d":  # (1,Kh,Kw,C) -> (Kh,Kw,1,C)
                _, h, w, c = (int(rng.integers(0, d)) for d in tw.shape)
                assert mw[h, w, 0, c] == tw[0, h, w, c]
            else:  # (M, N) -> (N, M)
                o, n = (int(rng.integers(0, d)) for d in tw.shape)
                assert mw[n, o] == tw[o, n]
        assert m.tensors[layer.weights].layout in ("HWCN", "HW1N", "NM")


def test_mli11_chw_weight_layout_and_shared_frac():
    g = conv_graph(w_scales=(0.01, 0.0003))
    m = lower(g, format="fx16", mli_version="1.1", layout="chw")
    layer = m.layers[0]
    assert layer.kernel == "mli_krn_conv2d_chw_fx16"
    assert m.tensors[layer.inputs[0]].shape == (2, 5, 5)  # CHW
    assert m.tensors[layer.weights].shape == (2, 2, 3, 3)  # (Cout, Cin, Kh, Kw)
    assert "dilation_width" not in layer.cfg
    b = G()
    x = b.t((1, 4), quant=q(0.05, 3))
    w = b.t((2, 4), data=np.ones((2, 4), np.int8), quant=q([0.01, 0.0003], [0, 0], 0))
    bb = b.t((2,), "int32", data=np.zeros(2, np.int32), quant=q([0.0005, 0.000015], [0, 0], 0))
    y = b.t((1, 2), quant=q(0.1, 0))
    b.op("FULLY_CONNECTED", [x, w, bb], [y], fused_activation="NONE")
    m = lower(b.graph([x], [y]), format="sa8", mli_version="1.1")
    wt = m.tensors[m.layers[0].weights]
    assert wt.scale.dtype == np.int32 and wt.dim == 0
    fr = min(31 - math.frexp(f32(s))[1] for s in (0.01, 0.0003))
    assert int(wt.scale_frac_bits[0]) == fr and len(wt.scale_frac_bits) == 1
    assert wt.scale.tolist() == [
        int(np.trunc(np.float32(np.float32(s) * np.float32(2.0**fr)) + np.float32(0.5)))
        for s in (0.01, 0.0003)
    ]


# --- every shared int8 model lowers -----------------------------------------------------------


@pytest.mark.parametrize("name", INT8_MODELS)
def test_int8_models_lower_to_all_formats(name):
    g = model_graph(name)
    for fmt in ("sa8", "fx16", "fx8w16d"):
        m = lower(g, format=fmt, mli_version="2.0")
        assert m.layers and m.inputs and m.outputs
        for t in m.tensors.values():
            if t.data is not None:
                assert t.data.shape == t.shape and t.data.dtype == t.el_type.dtype
            if t.el_type.is_sa:
                assert t.scale.dtype == np.int16 and np.all(t.scale > 0)
                assert len(t.scale) == (1 if t.dim < 0 else t.shape[t.dim])
            elif t.el_type.is_fx:
                assert isinstance(t.frac_bits, int)
        for layer in m.layers:
            assert layer.kind == "view" or layer.kernel.startswith(
                ("mli_krn_", "mli_hlp_", "mli_mov_")
            )
    for target in ("1.1", "1.0"):
        for fmt in ("fx16", "fx8"):
            m = lower(g, format=fmt, mli_version=target, layout="chw")
            assert all("_fx" in L.kernel or L.kind in ("view", "convert") for L in m.layers)


def test_fx_mac_constraints_on_real_model():
    g = model_graph("mlperf_tiny/vww_96_int8")
    m = lower(g, format="fx8w16d")
    for layer in m.layers:
        if layer.weights is None:
            continue
        x, w, b = (m.tensors[n] for n in (layer.inputs[0], layer.weights, layer.bias))
        out = m.tensors[layer.outputs[0]]
        assert b.frac_bits <= x.frac_bits + w.frac_bits
        assert out.frac_bits <= x.frac_bits + w.frac_bits
        assert w.el_type == ElType.FX8 and b.el_type == ElType.FX8 and x.el_type == ElType.FX16
        # real weights reproduced within half an LSB where not saturated
        op = g.ops[layer.index]
        wt = g.tensors[op.inputs[1]]
        real = wt.quant.dequantize(np.asarray(wt.data))
        if op.type == "CONV_2D":
            real = real.transpose(1, 2, 3, 0)
        elif op.type == "FULLY_CONNECTED":
            real = real.T
        else:
            real = real.reshape(w.shape)
        err = np.abs(w.data * 2.0**-w.frac_bits - real)
        ok = np.abs(w.data) < 127
        assert np.all(err[ok] <= 2.0**-w.frac_bits / 2 + 1e-12)


# --- padding and configs ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "in_size,k,s,d,pad,expected",
    [
        (49, 10, 2, 1, "SAME", (25, 4, 5)),
        (10, 4, 2, 1, "SAME", (5, 1, 1)),
        (5, 3, 1, 1, "SAME", (5, 1, 1)),
        (5, 3, 1, 2, "SAME", (5, 2, 2)),
        (6, 3, 2, 1, "SAME", (3, 0, 1)),
        (7, 3, 2, 2, "SAME", (4, 2, 2)),
        (5, 3, 1, 1, "VALID", (3, 0, 0)),
        (7, 3, 2, 2, "VALID", (2, 0, 0)),
        (4, 4, 1, 1, "SAME", (4, 1, 2)),
    ],
)
def test_tflite_padding(in_size, k, s, d, pad, expected):
    # expected values from TFLite's formula done by hand:
    # out = ceil(in / s) (SAME) or ceil((in - (k-1)d) / s) (VALID);
    # total = (out-1)s + (k-1)d + 1 - in; before = total // 2, after = total - before
    assert tflite_padding(pad, in_size, k, s, d) == expected


def test_padding_matches_real_model_shapes():
    for name in INT8_MODELS:
        g = model_graph(name)
        for op in g.ops:
            if op.type in ("CONV_2D", "DEPTHWISE_CONV_2D"):
                x, w, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
                o = op.options
                oh, pt, pb = tflite_padding(
                    o["padding"], x.shape[1], w.shape[1], o["stride_h"], o["dilation_h"]
                )
                assert oh == y.shape[1]
                # every output row's window starts inside the padded input and ends inside it
                assert (oh - 1) * o["stride_h"] + (w.shape[1] - 1) * o["dilation_h"] + 1 <= x.shape[
                    1
                ] + pt + pb


def test_conv_cfg_fields_and_relu():
    g = conv_graph(in_hw=(7, 6), k=3, stride=2, padding="SAME", act="RELU6", dilation=2)
    m = lower(g)
    L = m.layers[0]
    assert L.kind == "conv2d" and L.kernel == "mli_krn_conv2d_hwcn_sa8_sa8_sa32"
    assert L.cfg_type == "mli_conv2d_cfg"
    # height 7: out 4, total 3*2 + 5 - 7 = 4 -> 2/2; width 6: out 3, total 2*2 + 5 - 6 = 3 -> 1/2
    assert L.cfg == {
        "relu_type": 3,
        "stride_width": 2,
        "stride_height": 2,
        "padding_left": 1,
        "padding_right": 2,
        "padding_top": 2,
        "padding_bottom": 2,
        "dilation_width": 2,
        "dilation_height": 2,
    }
    # RELU with zero point -128 clamps nothing: NONE, as the TFLM integration decides
    assert lower(conv_graph(act="RELU")).layers[0].cfg["relu_type"] == 0


def test_group_conv_for_depth_multiplier():
    b = G()
    x = b.t((1, 4, 4, 2), quant=q(0.05, 0))
    w = b.t(
        (1, 3, 3, 6),
        data=np.arange(54, dtype=np.int8).reshape(1, 3, 3, 6),
        quant=q([0.01] * 6, [0] * 6, 3),
    )
    bb = b.t((6,), "int32", data=np.zeros(6, np.int32), quant=q([0.0005] * 6, [0] * 6, 0))
    y = b.t((1, 4, 4, 6), quant=q(0.1, 0))
    b.op(
        "DEPTHWISE_CONV_2D",
        [x, w, bb],
        [y],
        padding="SAME",
        stride_h=1,
        stride_w=1,
        dilation_h=1,
        dilation_w=1,
        depth_multiplier=3,
        fused_activation="NONE",
    )
    m = lower(b.graph([x], [y]))
    L = m.layers[0]
    assert L.kind == "group_conv2d" and L.kernel == "mli_krn_group_conv2d_hwcn_sa8_sa8_sa32"
    assert m.tensors[L.weights].shape == (3, 3, 1, 6) and m.tensors[L.weights].dim == 3
    with pytest.raises(UnsupportedError, match="group_conv2d"):
        lower(b.graph([x], [y]), format="fx16", mli_version="1.1", layout="chw")


# --- refusals ---------------------------------------------------------------------------------


def test_unsupported_ops_listed_together():
    b = G()
    x = b.t((1, 8), quant=q(0.1, 0))
    y = b.t((1, 8), quant=q(0.1, 0))
    z = b.t((1, 8), quant=q(0.1, 0))
    u = b.t((1, 8), quant=q(0.1, 0))
    b.op("SIGN", [x], [y])
    b.op("RELU", [y], [z])
    b.op("ATAN2", [z], [u])
    with pytest.raises(UnsupportedError) as exc:
        lower(b.graph([x], [u]))
    msg = str(exc.value)
    assert "SIGN (op 0)" in msg and "ATAN2 (op 2)" in msg and "op 1" not in msg
    assert exc.value.exit_code == 4


def test_refused_formats_name_layer_and_alternatives():
    with pytest.raises(UnsupportedError) as exc:
        lower(conv_graph(), format="fx8")
    assert "op 0 (CONV_2D)" in str(exc.value) and "sa8, fx16, fx8w16d" in str(exc.value)
    with pytest.raises(UnsupportedError, match="op 0 .*no sa8 kernel"):
        lower(conv_graph(), format="sa8", mli_version="1.0", layout="chw")
    with pytest.raises(UnsupportedError, match="--layout hwc"):
        lower(conv_graph(), format="sa8", mli_version="1.1", layout="chw")
    with pytest.raises(OptionError):
        lower(conv_graph(), format="int4")
    with pytest.raises(OptionError):
        lower(conv_graph(), mli_version="2.0", layout="chw")


def test_float_model_needs_ranges():
    b = G()
    x = b.t((1, 4), "float32")
    w = b.t((3, 4), "float32", data=np.linspace(-1, 1, 12).reshape(3, 4).astype(np.float32))
    bb = b.t((3,), "float32", data=np.array([0.1, -0.2, 0.3], np.float32))
    y = b.t((1, 3), "float32")
    b.op("FULLY_CONNECTED", [x, w, bb], [y], fused_activation="NONE")
    g = b.graph([x], [y])
    with pytest.raises(OptionError, match="ranges"):
        lower(g, format="sa8")
    m = lower(g, format="sa8", weights_only=True)
    wt = m.tensors[m.layers[0].weights]
    assert wt.data.shape == (4, 3) and np.max(np.abs(wt.data)) == 127
    m = lower(g, format="sa8", ranges={x: (-1.0, 1.0), y: (-2.0, 3.0)})
    out = m.tensors[m.layers[0].outputs[0]]
    s, f = enc16(5.0 / 255)
    assert (int(out.scale[0]), int(out.scale_frac_bits[0])) == (s, f)
    m = lower(g, format="fx16", ranges={x: (-1.0, 1.0), y: (-2.0, 3.0)})
    assert m.tensors[m.layers[0].inputs[0]].frac_bits == 15
    assert m.tensors[m.layers[0].outputs[0]].frac_bits == 13  # ceil(log2 3) = 2


def test_int16_scale_overflow_is_noted():
    s = float(np.nextafter(np.float32(0.5), np.float32(0)))  # m just below 1
    b = G()
    x = b.t((1, 4), quant=q(s, 0))
    y = b.t((1, 4), quant=q(0.01, 0))
    b.op("RELU", [x], [y])
    m = lower(b.graph([x], [y]))
    t = m.tensors[m.layers[0].inputs[0]]
    assert (int(t.scale[0]), int(t.scale_frac_bits[0])) == (16384, 15)
    assert any("32768" in n for n in t.notes)


# --- inserted layers and fixed output params --------------------------------------------------


def _golden_post(kernel):
    z = np.load(shared_path("golden", "UP_ACCU_OFF", kernel + ".npz"))
    p = "c000_out_post_"
    return {k[len(p) :]: z[k] for k in z.files if k.startswith(p)}


@pytest.mark.parametrize(
    "op_type,kind,out_q",
    [
        ("LOGISTIC", "sigm", (1 / 256, -128)),
        ("TANH", "tanh", (1 / 128, 0)),
        ("SOFTMAX", "softmax", (1 / 256, -128)),
        ("L2_NORMALIZATION", "l2_normalize", (1 / 128, 0)),
    ],
)
def test_lut_output_params_match_golden(op_type, kind, out_q):
    b = G()
    x = b.t((1, 10), quant=q(0.1, 5))
    y = b.t((1, 10), quant=q(*out_q))
    b.op(op_type, [x], [y], beta=1.0)
    g = b.graph([x], [y])
    m = lower(g, format="sa8")
    post = _golden_post(f"{kind}_sa8")
    out = m.tensors[m.outputs[0]]
    assert int(out.zero_point[0]) == int(post["zero_point"][0])
    assert int(out.scale[0]) == int(post["scale"][0])
    assert int(out.scale_frac_bits[0]) == int(post["scale_frac_bits"][0])
    assert [L.kind for L in m.layers] == [kind]
    m = lower(g, format="fx16", ranges={})
    assert m.tensors[m.outputs[0]].frac_bits == int(_golden_post(f"{kind}_fx16")["frac_bits"])
    # a model expecting other output params gets a requantizing convert
    b.tensors[y] = ir.Tensor(y, "t1", (1, 10), "int8", None, q(0.01, 0))
    m = lower(b.graph([x], [y]), format="sa8")
    assert [L.kind for L in m.layers] == [kind, "convert"]
    assert "requantizes" in " ".join(m.layers[1].notes)


def test_maxpool_copies_input_params_and_eltwise_relu():
    b = G()
    x = b.t((1, 4, 4, 3), quant=q(0.1, 0))
    y = b.t((1, 2, 2, 3), quant=q(0.2, 1))
    z = b.t((1, 2, 2, 3), quant=q(0.2, 1))
    u = b.t((1, 2, 2, 3), quant=q(0.3, -5))
    b.op(
        "MAX_POOL_2D",
        [x],
        [y],
        filter_h=2,
        filter_w=2,
        stride_h=2,
        stride_w=2,
        padding="VALID",
        fused_activation="NONE",
    )
    b.op("ADD", [y, z], [u], fused_activation="RELU")
    m = lower(b.graph([x, z], [u]))
    assert [L.kind for L in m.layers] == ["maxpool", "convert", "eltwise_add", "relu"]
    assert m.layers[0].cfg == {
        "kernel_width": 2,
        "kernel_height": 2,
        "stride_width": 2,
        "stride_height": 2,
        "padding_left": 0,
        "padding_right": 0,
        "padding_top": 0,
        "padding_bottom": 0,
    }
    krn = m.tensors[m.layers[0].outputs[0]]
    assert krn.zero_point.tolist() == [0] and krn.name.endswith("_krn")
    assert m.layers[3].cfg == {"relu_type": 1}


def test_view_aliases_buffer():
    g = model_graph("mlperf_tiny/kws_ref_model_int8")
    m = lower(g)
    views = [L for L in m.layers if L.kind == "view"]
    assert len(views) == 1 and views[0].kernel == ""
    out = m.tensors[views[0].outputs[0]]
    assert out.buffer == views[0].inputs[0] and out.shape == (64,)


def test_mean_as_avepool_and_chw_flatten_permute():
    b = G()
    x = b.t((1, 3, 3, 4), quant=q(0.1, 0))
    axes = b.t((2,), "int32", data=np.array([1, 2], np.int32))
    y = b.t((1, 4), quant=q(0.1, 0))
    b.op("MEAN", [x, axes], [y], keep_dims=False)
    m = lower(b.graph([x], [y]))
    assert [L.kind for L in m.layers] == ["avepool", "view"]
    assert m.layers[0].cfg["kernel_width"] == 3 and m.layers[0].cfg["kernel_height"] == 3
    b = G()
    x = b.t((1, 2, 2, 4), quant=q(0.1, 0))
    shp = b.t((2,), "int32", data=np.array([1, 16], np.int32))
    y = b.t((1, 16), quant=q(0.1, 0))
    b.op("RESHAPE", [x, shp], [y])
    m = lower(b.graph([x], [y]), format="fx16", mli_version="1.1", layout="chw")
    assert [L.kind for L in m.layers] == ["permute", "view"]


# --- pooling hazard ---------------------------------------------------------------------------


def _valid_sets(in_size, k, s, pb, out):
    return [
        tuple(i for i in range(o * s - pb, o * s - pb + k) if 0 <= i < in_size) for o in range(out)
    ]


@pytest.mark.parametrize(
    "in_size,k,s,pb,pa,out",
    [
        (2, 5, 1, 2, 2, 2),  # SAME 5x5 over 2: min pad 2 vs k-in-1 = 2: safe boundary
        (2, 5, 1, 1, 2, 2),  # min pad 1 < 2: hazard
        (1, 3, 1, 1, 1, 1),  # 1 < 1? no: safe
        (1, 4, 1, 1, 2, 1),  # 1 < 2: hazard (global pool with SAME)
        (3, 7, 2, 3, 3, 2),
        (2, 6, 2, 2, 2, 1),
    ],
)
def test_safe_pool_axis_equivalent(in_size, k, s, pb, pa, out):
    safe = safe_pool_axis(in_size, k, s, pb, pa, out)
    hazard = min(pb, pa) < k - in_size - 1
    assert pool_hazard(in_size, k, pb, pa) == hazard
    if not hazard:
        assert safe == (k, s, pb, pa)
        return
    assert safe is not None
    k2, s2, b2, a2 = safe
    assert not (min(b2, a2) < k2 - in_size - 1)
    assert (in_size + b2 + a2 - k2) // s2 + 1 == out
    assert _valid_sets(in_size, k2, s2, b2, out) == _valid_sets(in_size, k, s, pb, out)


def test_pool_hazard_rewritten_in_lowering():
    b = G()
    x = b.t((1, 2, 2, 3), quant=q(0.1, 0))
    y = b.t((1, 1, 1, 3), quant=q(0.1, 0))
    b.op(
        "AVERAGE_POOL_2D",
        [x],
        [y],
        filter_h=5,
        filter_w=5,
        stride_h=5,
        stride_w=5,
        padding="SAME",
        fused_activation="NONE",
    )
    m = lower(b.graph([x], [y]))
    cfg = m.layers[0].cfg
    # TFLite SAME: out 1, total 3 -> pads 1/2; min 1 < 5-2-1: rewritten to the 2x2 window
    assert (cfg["kernel_width"], cfg["padding_left"], cfg["padding_right"]) == (2, 0, 0)
    assert (cfg["kernel_height"], cfg["padding_top"], cfg["padding_bottom"]) == (2, 0, 0)
    assert any("outside its output" in n for n in m.layers[0].notes)


# --- config and overrides ---------------------------------------------------------------------


def test_config_overrides_insert_converts(tmp_path):
    path = tmp_path / "mlitool.toml"
    path.write_text(
        '[tool.mlitool]\nformat = "sa8"\n\n[[tool.mlitool.layer]]\nindex = 0\n'
        'format = "fx16"\n\n[[tool.mlitool.layer]]\nop = "softmax"\nformat = "fx16"\n'
    )
    cfg = load_config(path)
    assert cfg.format == "sa8" and cfg.overrides == {0: "fx16", "op:SOFTMAX": "fx16"}
    g = model_graph("mlperf_tiny/kws_ref_model_int8")
    m = lower(g, format=cfg.format, overrides=cfg.overrides)
    kinds = [(L.kind, L.kernel) for L in m.layers]
    assert kinds[0] == ("conv2d", "mli_krn_conv2d_hwcn_fx16")
    assert kinds[1] == ("convert", "mli_hlp_convert_tensor")
    assert kinds[2][1] == "mli_krn_depthwise_conv2d_hwcn_sa8_sa8_sa32"
    assert kinds[-2][0] == "convert" and kinds[-1] == ("softmax", "mli_krn_softmax_fx16")
    conv_in = m.tensors[m.layers[1].inputs[0]]
    assert (
        conv_in.el_type == ElType.FX16 and m.tensors[m.layers[1].outputs[0]].el_type == ElType.SA8
    )
    assert m.tensors[m.inputs[0]].role == Role.INPUT


def test_config_from_pyproject_and_errors(tmp_path):
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "pyproject.toml").write_text(
        '[project]\nname = "x"\n[tool.mlitool]\nmli = "1.1"\nlayout = "CHW"\n'
    )
    cfg = load_config(search_from=tmp_path / "proj")
    assert (cfg.mli, cfg.layout, cfg.overrides) == ("1.1", "chw", {})
    (tmp_path / "other").mkdir()
    assert load_config(search_from=tmp_path / "other").path is None
    for bad in (
        {"format": "int4"},
        {"colour": 1},
        {"layer": [{"format": "fx16"}]},
        {"layer": [{"index": 0, "name": "a", "format": "fx16"}]},
        {"layer": [{"index": -1, "format": "fx16"}]},
    ):
        with pytest.raises(OptionError):
            parse_config({"tool": {"mlitool": bad}}, "mlitool.toml")
    bad_toml = tmp_path / "bad.toml"
    bad_toml.write_text("format = [")
    with pytest.raises(OptionError, match="invalid TOML"):
        load_config(bad_toml)
    with pytest.raises(OptionError, match="override 0: format 'fx4': choose one of sa8"):
        lower(conv_graph(), overrides={0: "fx4"})
