"""Kernel config structs: which structs each MLI version declares, their fields in declaration
order (from the real `mli_types.h` of Release_2.0.2 / Release_1.1 / Release_1.0), and how the
`MliLayer.cfg` keys (the golden-vector field names) fill them.
"""

from __future__ import annotations

import numbers
from typing import Any

from mlitool.errors import UnsupportedError

RELU_NAMES = ("MLI_RELU_NONE", "MLI_RELU_GEN", "MLI_RELU_1", "MLI_RELU_6")
_RELU_ALIASES = {"NONE": 0, "GEN": 1, "RELU": 1, "RELU_GEN": 1, "RELU_1": 2, "RELU_N1_TO_1": 2,
                 "RELU_6": 3, "RELU6": 3}

# A field: (struct field, kind, cfg key, default or None when required).
# kinds: "relu" (nested mli_relu_cfg), "relu_type" (bare mli_relu_type), "u8", "i32", "u8x4".
_CONV_2X = [("relu", "relu", "relu_type", 0), ("stride_width", "u8", "stride_width", 1),
            ("stride_height", "u8", "stride_height", 1), ("padding_left", "u8", "padding_left", 0),
            ("padding_right", "u8", "padding_right", 0), ("padding_top", "u8", "padding_top", 0),
            ("padding_bottom", "u8", "padding_bottom", 0),
            ("dilation_width", "u8", "dilation_width", 1),
            ("dilation_height", "u8", "dilation_height", 1)]
_POOL = [("kernel_width", "u8", "kernel_width", None), ("kernel_height", "u8", "kernel_height", None),
         ("stride_width", "u8", "stride_width", 1), ("stride_height", "u8", "stride_height", 1),
         ("padding_left", "u8", "padding_left", 0), ("padding_right", "u8", "padding_right", 0),
         ("padding_top", "u8", "padding_top", 0), ("padding_bottom", "u8", "padding_bottom", 0)]
_PAD2D = [("padding_left", "u8", "padding_left", 0), ("padding_right", "u8", "padding_right", 0),
          ("padding_top", "u8", "padding_top", 0), ("padding_bottom", "u8", "padding_bottom", 0)]
_AXIS = [("axis", "i32", "axis", -1)]
_PERMUTE = [("perm_dim", "u8x4", "perm_dim", None)]
_CONCAT = [("tensors_num", "u8", "tensors_num", None), ("axis", "u8", "axis", None)]
_RELU = [("type", "relu_type", "relu_type", 0)]
# mli_mov_cfg_t: arrays of MLI_MAX_RANK; kinds "u32[4]", "i32[4]", "u8[4]".
_MOV = [("offset", "u32[4]", "offset", [0] * 4), ("size", "u32[4]", "size", [0] * 4),
        ("sub_sample_step", "u32[4]", "sub_sample_step", [1] * 4),
        ("dst_offset", "u32[4]", "dst_offset", [0] * 4),
        ("dst_mem_stride", "i32[4]", "dst_mem_stride", [0] * 4),
        ("perm_dim", "u8[4]", "perm_dim", [0, 1, 2, 3]),
        ("padding_pre", "u8[4]", "padding_pre", [0] * 4),
        ("padding_post", "u8[4]", "padding_post", [0] * 4)]
# mli_rnn_cell_cfg: enums by index; the scratch container points at a static array the source
# defines (cfg key "scratch": its symbol, "scratch_bytes", "scratch_type": int8_t / int16_t).
_RNN_CELL = [("direction", "enum:RNN_DIR_FORWARD,RNN_DIR_BACKWARD", "direction", 0),
             ("results", "enum:RNN_OUT_LAST,RNN_OUT_ALL", "results", 1),
             ("act", "enum:RNN_ACT_NONE,RNN_ACT_TANH,RNN_ACT_SIGM", "act", 1),
             ("scratch_data", "scratch", "scratch", None)]
_MEMBER = {"int8_t": "pi8", "int16_t": "pi16", "int32_t": "pi32"}
_ARRAY_RANGES = {"u32[4]": (0, (1 << 32) - 1), "i32[4]": (-(1 << 31), (1 << 31) - 1),
                 "u8[4]": (0, 255)}

CFG_STRUCTS: dict[str, dict[str, list]] = {
    "2.0": {
        "mli_conv2d_cfg": _CONV_2X,
        "mli_pool_cfg": _POOL,
        "mli_fully_connected_cfg": [("relu", "relu", "relu_type", 0)],
        "mli_relu_cfg": _RELU,
        "mli_prelu_cfg": _AXIS,
        "mli_softmax_cfg": _AXIS,
        "mli_l2_normalize_cfg": _AXIS,
        "mli_argmax_cfg": [("axis", "i32", "axis", -1), ("topk", "i32", "topk", 1)],
        "mli_permute_cfg": _PERMUTE,
        "mli_padding2d_cfg": _PAD2D,
        "mli_concat_cfg": _CONCAT,
        "mli_rnn_dense_cfg": [("inputs_num", "u8", "inputs_num", None)],
        "mli_rnn_cell_cfg": _RNN_CELL,
        "mli_mov_cfg_t": _MOV,
    },
    "1.1": {
        "mli_conv2d_cfg": _CONV_2X[:7],          # no dilation in 1.x
        "mli_pool_cfg": _POOL,
        "mli_relu_cfg": _RELU,
        "mli_permute_cfg": _PERMUTE,
        "mli_padding2d_cfg": _PAD2D,
        "mli_concat_cfg": _CONCAT,
    },
}
CFG_STRUCTS["1.0"] = CFG_STRUCTS["1.1"]


def relu_index(value: Any, where: str) -> int:
    if isinstance(value, str):
        key = value.upper().removeprefix("MLI_")
        if key in _RELU_ALIASES:
            return _RELU_ALIASES[key]
    elif isinstance(value, numbers.Integral) and not isinstance(value, bool) \
            and 0 <= value < len(RELU_NAMES):
        return int(value)
    raise ValueError(f"{where}: relu_type {value!r} is not one of {', '.join(RELU_NAMES)}")


def _perm(cfg: dict[str, Any]) -> list[int]:
    if "perm_dim" in cfg:
        perm = [int(v) for v in cfg["perm_dim"]]
    else:
        perm = [int(cfg[f"perm_dim{i}"]) for i in range(4) if f"perm_dim{i}" in cfg]
    return perm + [0] * (4 - len(perm))


def _mov_padding(cfg: dict[str, Any]) -> dict[str, Any]:
    """A PAD layer's cfg (padding_top/bottom/left/right, padding_channels_before/after of an HWC
    tensor) as mli_mov_cfg_t padding_pre / padding_post arrays."""
    if "padding_pre" in cfg or "padding_top" not in cfg:
        return cfg
    out = dict(cfg)
    out["padding_pre"] = [int(cfg.get("padding_top", 0)), int(cfg.get("padding_left", 0)),
                          int(cfg.get("padding_channels_before", 0)), 0]
    out["padding_post"] = [int(cfg.get("padding_bottom", 0)), int(cfg.get("padding_right", 0)),
                           int(cfg.get("padding_channels_after", 0)), 0]
    return out


def cfg_initializer(mli_version: str, cfg_type: str, cfg: dict[str, Any], where: str
                    ) -> list[str]:
    """The designated-initializer items (`.field = value`) of one config struct, in order."""
    fields = CFG_STRUCTS[mli_version].get(cfg_type)
    if fields is None:
        raise UnsupportedError(f"{where}: MLI {mli_version} has no config struct {cfg_type}")
    items = []
    if cfg_type == "mli_mov_cfg_t":
        cfg = _mov_padding(cfg)
    for fname, kind, key, default in fields:
        if kind in _ARRAY_RANGES:
            values = [int(v) for v in cfg.get(key, default)]
            lo, hi = _ARRAY_RANGES[kind]
            if len(values) != 4 or not all(lo <= v <= hi for v in values):
                raise UnsupportedError(f"{where}: {cfg_type}.{fname} = {values} is not 4 values "
                                       f"in [{lo}, {hi}]")
            items.append(f".{fname} = {{ {', '.join(map(str, values))} }}")
            continue
        if kind == "u8x4":
            perm = _perm(cfg)
            if len(perm) > 4 or not all(0 <= p <= 3 for p in perm):
                raise UnsupportedError(f"{where}: permutation {perm} is not expressible in {cfg_type}")
            items.append(f".{fname} = {{ {', '.join(map(str, perm))} }}")
            continue
        if key not in cfg and default is None:
            raise ValueError(f"{where}: config {cfg_type} needs '{key}'")
        value = cfg.get(key, default)
        if kind.startswith("enum:"):
            names = kind[5:].split(",")
            if not 0 <= int(value) < len(names):
                raise UnsupportedError(f"{where}: {cfg_type}.{fname} = {value} is not one of "
                                       f"{', '.join(names)}")
            items.append(f".{fname} = {names[int(value)]}")
            continue
        if kind == "scratch":
            member = _MEMBER[cfg["scratch_type"]]
            items.append(f".{fname} = {{ .capacity = {int(cfg['scratch_bytes'])}u, "
                         f".mem = {{ .{member} = {value} }} }}")
            continue
        if kind in ("relu", "relu_type"):
            name = RELU_NAMES[relu_index(value, where)]
            items.append(f".{fname} = {{ .type = {name} }}" if kind == "relu" else f".{fname} = {name}")
            continue
        value = int(value)
        lo, hi = (0, 255) if kind == "u8" else (-(1 << 31), (1 << 31) - 1)
        if not lo <= value <= hi:
            raise UnsupportedError(f"{where}: {cfg_type}.{fname} = {value} does not fit its "
                                   f"{'uint8_t' if kind == 'u8' else 'int32_t'} field")
        items.append(f".{fname} = {value}")
    if mli_version != "2.0" and cfg_type == "mli_conv2d_cfg":
        for key in ("dilation_width", "dilation_height"):
            if int(cfg.get(key, 1)) not in (0, 1):
                raise UnsupportedError(f"{where}: MLI {mli_version} convolutions have no dilation "
                                       f"({key} = {cfg[key]}); use --mli 2.0")
    return items
