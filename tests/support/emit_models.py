"""Hand-made MliModels for emitter tests: every layer family, per-axis and per-tensor SA params,
FX variants, views (of an activation and of a constant), a rank-0 scalar, hostile names."""

from __future__ import annotations

import numpy as np

from mlitool.mli.types import ElType, MliLayer, MliModel, MliTensor, Role

SA8, SA32, FX8, FX16 = ElType.SA8, ElType.SA32, ElType.FX8, ElType.FX16


def _rng(seed: int = 7) -> np.random.Generator:
    return np.random.default_rng(seed)


def _data(rng, el: ElType, shape) -> np.ndarray:
    info = np.iinfo(el.dtype)
    lo, hi = (-1000, 1000) if el.bits == 32 else (info.min, info.max)
    return rng.integers(lo, hi, size=shape, endpoint=True).astype(el.dtype)


class _Builder:
    def __init__(self, target: str, fmt: str, names: dict[str, str] | None = None, seed: int = 7):
        self.target, self.fmt, self.rng = target, fmt, _rng(seed)
        self.names = names or {}
        self.tensors: dict[str, MliTensor] = {}
        self.layers: list[MliLayer] = []

    def key(self, k: str) -> str:
        return self.names.get(k, k)

    def params(self, el: ElType, n: int, dim: int, frac: int | None = None) -> dict:
        if el.is_fx:
            return {"frac_bits": frac if frac is not None else (7 if el == FX8 else 12)}
        int32 = self.target != "2.0"
        zp = (
            np.zeros(n, np.int16)
            if el == SA32 or dim >= 0
            else self.rng.integers(-128, 128, n).astype(np.int16)
        )
        if int32:
            scale = self.rng.integers(1 << 30, (1 << 31) - 1, n).astype(np.int32)
            sfb = np.full(n, 38, np.int8)
        else:
            scale = self.rng.integers(1 << 14, (1 << 15) - 1, n).astype(np.int16)
            sfb = self.rng.integers(15, 30, n).astype(np.int8)
        return {"zero_point": zp, "scale": scale, "scale_frac_bits": sfb, "dim": dim}

    def add(
        self,
        k: str,
        role: Role,
        shape,
        el: ElType,
        layout: str = "",
        dim: int = -1,
        const: bool = False,
        **kw,
    ) -> str:
        n = shape[dim] if dim >= 0 else 1
        prm = {} if kw.pop("no_params", False) else self.params(el, n, dim, kw.pop("frac", None))
        data = _data(self.rng, el, shape) if const else None
        key = self.key(k)
        self.tensors[key] = MliTensor(
            name=key,
            role=role,
            shape=tuple(shape),
            el_type=el,
            layout=layout,
            data=data,
            source=f"tfl/{key}",
            source_index=len(self.tensors),
            **prm,
            **kw,
        )
        return key

    def layer(self, op, kind, kernel, ins, outs, cfg_type=None, cfg=None, **kw):
        self.layers.append(
            MliLayer(
                index=len(self.layers),
                op_type=op,
                kind=kind,
                kernel=kernel,
                inputs=ins,
                outputs=outs,
                cfg_type=cfg_type,
                cfg=cfg or {},
                **kw,
            )
        )

    def model(self, inputs, outputs) -> MliModel:
        return MliModel(
            source="/some/dir/test_model.tflite",
            mli_version=self.target,
            format=self.fmt,
            layout="hwc",
            tensors=self.tensors,
            layers=self.layers,
            inputs=inputs,
            outputs=outputs,
            warnings=["hand-made test model"],
        )


def mli2_model(fmt: str = "sa8", names: dict[str, str] | None = None) -> MliModel:
    """conv -> depthwise -> maxpool -> view (flatten) -> FC -> add(const view) -> leaky relu
    (rank-0 slope) -> avepool-free tail -> softmax, for MLI 2.0."""
    b = _Builder("2.0", fmt, names)
    if fmt == "sa8":
        act, w, bias, wdim, bdim = SA8, SA8, SA32, 3, 0
    else:
        act, w, bias = (FX16, FX16, FX16) if fmt == "fx16" else (FX16, FX8, FX8)
        wdim = bdim = -1
    sfx = "sa8_sa8_sa32" if fmt == "sa8" else ("fx16" if fmt == "fx16" else "fx16_fx8_fx8")
    x = b.add("input", Role.INPUT, (8, 8, 3), act, "HWC")
    cw = b.add("conv/weights", Role.WEIGHTS, (3, 3, 3, 4), w, "HWCN", dim=wdim, const=True)
    cb = b.add(
        "conv/bias", Role.BIAS, (4,), bias, "C", dim=bdim if fmt == "sa8" else -1, const=True
    )
    a1 = b.add("conv/out", Role.ACTIVATION, (8, 8, 4), act, "HWC")
    b.layer(
        "CONV_2D",
        "conv2d",
        f"mli_krn_conv2d_hwcn_{sfx}",
        [x],
        [a1],
        "mli_conv2d_cfg",
        {
            "relu_type": 1,
            "stride_width": 1,
            "stride_height": 1,
            "padding_left": 1,
            "padding_right": 1,
            "padding_top": 1,
            "padding_bottom": 1,
            "dilation_width": 1,
            "dilation_height": 1,
        },
        weights=cw,
        bias=cb,
        notes=["padding SAME"],
    )
    dw = b.add("dw/weights", Role.WEIGHTS, (3, 3, 1, 4), w, "HW1N", dim=wdim, const=True)
    db = b.add("dw/bias", Role.BIAS, (4,), bias, "C", dim=bdim if fmt == "sa8" else -1, const=True)
    a2 = b.add("dw/out", Role.ACTIVATION, (8, 8, 4), act, "HWC")
    b.layer(
        "DEPTHWISE_CONV_2D",
        "depthwise_conv2d",
        f"mli_krn_depthwise_conv2d_hwcn_{sfx}",
        [a1],
        [a2],
        "mli_conv2d_cfg",
        {
            "relu_type": "RELU_6",
            "stride_width": 1,
            "stride_height": 1,
            "padding_left": 1,
            "padding_right": 1,
            "padding_top": 1,
            "padding_bottom": 1,
        },
        weights=dw,
        bias=db,
    )
    a3 = b.add("pool/out", Role.ACTIVATION, (4, 4, 4), act, "HWC")
    pk = "sa8" if fmt == "sa8" else "fx16"
    b.layer(
        "MAX_POOL_2D",
        "maxpool",
        f"mli_krn_maxpool_hwc_{pk}",
        [a2],
        [a3],
        "mli_pool_cfg",
        {
            "kernel_width": 2,
            "kernel_height": 2,
            "stride_width": 2,
            "stride_height": 2,
            "padding_left": 0,
            "padding_right": 0,
            "padding_top": 0,
            "padding_bottom": 0,
        },
    )
    # A flattened view of the pooled activation, and a strided view into the middle of it.
    flat = b.add("flatten", Role.ACTIVATION, (64,), act, "C", buffer=a3, offset=0)
    b.layer("RESHAPE", "view", "", [a3], [flat])
    part = b.add(
        "pool/row1", Role.ACTIVATION, (4, 2), act, "WC", buffer=a3, offset=16, mem_stride=(4, 1)
    )
    fw = b.add(
        "fc/weights", Role.WEIGHTS, (64, 10), w, "NM", dim=1 if fmt == "sa8" else -1, const=True
    )
    fb = b.add("fc/bias", Role.BIAS, (10,), bias, "C", dim=0 if fmt == "sa8" else -1, const=True)
    a4 = b.add("fc/out", Role.ACTIVATION, (10,), act, "C")
    b.layer(
        "FULLY_CONNECTED",
        "fully_connected",
        f"mli_krn_fully_connected_{sfx}",
        [flat],
        [a4],
        "mli_fully_connected_cfg",
        {"relu_type": 0},
        weights=fw,
        bias=fb,
    )
    consts = b.add("consts", Role.PARAM, (16,), act, "C", const=True)
    addend = b.add("add/const", Role.PARAM, (10,), act, "C", buffer=consts, offset=3)
    a5 = b.add("add/out", Role.ACTIVATION, (10,), act, "C")
    b.layer("ADD", "eltwise_add", f"mli_krn_eltwise_add_{pk}", [a4, addend], [a5])
    slope = b.add("leaky/slope", Role.PARAM, (), act, "", const=True)
    a6 = b.add("leaky/out", Role.ACTIVATION, (10,), act, "C")
    b.layer(
        "LEAKY_RELU", "leaky_relu", f"mli_krn_leaky_relu_{pk}", [a5], [a6], params={"slope": slope}
    )
    out = b.add("output", Role.OUTPUT, (10,), act, "C")
    b.layer(
        "SOFTMAX", "softmax", f"mli_krn_softmax_{pk}", [a6], [out], "mli_softmax_cfg", {"axis": -1}
    )
    a7 = b.add("transposed", Role.OUTPUT, (2, 4), act, "CW")
    b.layer(
        "TRANSPOSE",
        "permute",
        f"mli_krn_permute_{pk}",
        [part],
        [a7],
        "mli_permute_cfg",
        {"perm_dim0": 1, "perm_dim1": 0},
    )
    am = b.add("argmax", Role.OUTPUT, (1, 1), SA32, "C") if fmt == "sa8" else None
    if am:
        b.layer(
            "ARG_MAX",
            "argmax",
            "mli_krn_argmax_sa8",
            [out],
            [am],
            "mli_argmax_cfg",
            {"axis": -1, "topk": 1},
        )
    return b.model([x], [out, a7] + ([am] if am else []))


def mli1_model(
    target: str = "1.1", fmt: str = "sa8", names: dict[str, str] | None = None
) -> MliModel:
    """conv -> relu -> avepool -> view -> FC (-> softmax) for MLI 1.1 (SA8 or FX) or 1.0 (FX)."""
    b = _Builder(target, fmt, names)
    if fmt == "sa8":
        act, w, bias = SA8, SA8, SA32
        conv_k, fc_k = "mli_krn_conv2d_nhwc_sa8_sa8_sa32", "mli_krn_fully_connected_sa8_sa8_sa32"
    else:
        act, w, bias = (
            (FX16, FX16, FX16)
            if fmt == "fx16"
            else (FX16, FX8, FX8)
            if fmt == "fx8w16d"
            else (FX8, FX8, FX8)
        )
        conv_k, fc_k = f"mli_krn_conv2d_chw_{fmt}", f"mli_krn_fully_connected_{fmt}"
    x = b.add("input", Role.INPUT, (3, 8, 8), act, "CHW")
    cw = b.add(
        "conv/weights",
        Role.WEIGHTS,
        (4, 3, 3, 3),
        w,
        "NCHW",
        dim=0 if fmt == "sa8" else -1,
        const=True,
    )
    cb = b.add("conv/bias", Role.BIAS, (4,), bias, "C", dim=0 if fmt == "sa8" else -1, const=True)
    a1 = b.add("conv/out", Role.ACTIVATION, (4, 8, 8), act, "CHW")
    b.layer(
        "CONV_2D",
        "conv2d",
        conv_k,
        [x],
        [a1],
        "mli_conv2d_cfg",
        {
            "relu_type": 0,
            "stride_width": 1,
            "stride_height": 1,
            "padding_left": 1,
            "padding_right": 1,
            "padding_top": 1,
            "padding_bottom": 1,
        },
        weights=cw,
        bias=cb,
    )
    a2 = b.add("relu/out", Role.ACTIVATION, (4, 8, 8), act, "CHW")
    b.layer("RELU", "relu", "mli_krn_relu_fx16", [a1], [a2], "mli_relu_cfg", {"relu_type": 1})
    a3 = b.add("pool/out", Role.ACTIVATION, (4, 4, 4), act, "CHW")
    b.layer(
        "AVERAGE_POOL_2D",
        "avepool",
        "mli_krn_avepool_chw_fx16",
        [a2],
        [a3],
        "mli_pool_cfg",
        {"kernel_width": 2, "kernel_height": 2, "stride_width": 2, "stride_height": 2},
    )
    flat = b.add("flatten", Role.ACTIVATION, (64,), act, "C", buffer=a3, offset=0)
    b.layer("RESHAPE", "view", "", [a3], [flat])
    fw = b.add(
        "fc/weights", Role.WEIGHTS, (10, 64), w, "MN", dim=0 if fmt == "sa8" else -1, const=True
    )
    fb = b.add("fc/bias", Role.BIAS, (10,), bias, "C", dim=0 if fmt == "sa8" else -1, const=True)
    out = b.add("output", Role.OUTPUT, (10,), act, "C")
    b.layer("FULLY_CONNECTED", "fully_connected", fc_k, [flat], [out], weights=fw, bias=fb)
    half = b.add("output/half", Role.OUTPUT, (5,), act, "C", buffer=out, offset=5)
    b.layer("SLICE", "view", "", [out], [half])
    return b.model([x], [out, half])


HOSTILE_NAMES = {
    "input": "*/ int evil; /*",
    "conv/weights": "int",
    "conv/bias": "a??/\nb",
    "conv/out": "x\\",
    "dw/weights": "\u00e9t\u00e9/\u4e2d\u6587",
    "dw/bias": "",
    "dw/out": "9lives",
    "pool/out": "__reserved",
    "flatten": "_Upper",
    "fc/weights": "a-b",
    "fc/bias": "a_b",
    "fc/out": "a b",
    "consts": "mli_tensor",
    "output": "out",
    "leaky/out": "out_data",  # collides with the derived data symbol of "out"
    "add/out": "out_BYTES",
    "transposed": "NULL",
}
