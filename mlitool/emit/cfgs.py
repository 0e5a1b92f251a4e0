"""Kernel config struct initializers: how the `MliLayer.cfg` keys (the golden-vector field names)
fill the structs a target declares (their fields: `mlitool.mli.cfg_structs`) and those of the
fallback kernels (entries of the layer kinds table, `mlitool.mli.kinds`).
"""

from __future__ import annotations

import numbers
from typing import Any

from mlitool.emit.dialect import ptr_member
from mlitool.errors import UnsupportedError
from mlitool.mli.kinds import cfg_fields
from mlitool.mli.target import Target

RELU_NAMES = ("MLI_RELU_NONE", "MLI_RELU_GEN", "MLI_RELU_1", "MLI_RELU_6")
_RELU_ALIASES = {
    "NONE": 0,
    "GEN": 1,
    "RELU": 1,
    "RELU_GEN": 1,
    "RELU_1": 2,
    "RELU_N1_TO_1": 2,
    "RELU_6": 3,
    "RELU6": 3,
}

_ARRAY_RANGES = {
    "u32[4]": (0, (1 << 32) - 1),
    "i32[4]": (-(1 << 31), (1 << 31) - 1),
    "u8[4]": (0, 255),
}


def relu_index(value: Any, where: str) -> int:
    if isinstance(value, str):
        key = value.upper().removeprefix("MLI_")
        if key in _RELU_ALIASES:
            return _RELU_ALIASES[key]
    elif (
        isinstance(value, numbers.Integral)
        and not isinstance(value, bool)
        and 0 <= value < len(RELU_NAMES)
    ):
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
    out["padding_pre"] = [
        int(cfg.get("padding_top", 0)),
        int(cfg.get("padding_left", 0)),
        int(cfg.get("padding_channels_before", 0)),
        0,
    ]
    out["padding_post"] = [
        int(cfg.get("padding_bottom", 0)),
        int(cfg.get("padding_right", 0)),
        int(cfg.get("padding_channels_after", 0)),
        0,
    ]
    return out


def cfg_initializer(target: Target, cfg_type: str, cfg: dict[str, Any], where: str) -> list[str]:
    """The designated-initializer items (`.field = value`) of one config struct, in order."""
    fields = cfg_fields(target.cfg_structs, cfg_type)
    if fields is None:
        raise UnsupportedError(f"{where}: MLI {target.version} has no config struct {cfg_type}")
    items = []
    if cfg_type == "mli_mov_cfg_t":
        cfg = _mov_padding(cfg)
    for fname, kind, key, default in fields:
        if kind in _ARRAY_RANGES:
            values = [int(v) for v in cfg.get(key, default)]
            lo, hi = _ARRAY_RANGES[kind]
            if len(values) != 4 or not all(lo <= v <= hi for v in values):
                raise UnsupportedError(
                    f"{where}: {cfg_type}.{fname} = {values} is not 4 values in [{lo}, {hi}]"
                )
            items.append(f".{fname} = {{ {', '.join(map(str, values))} }}")
            continue
        if kind == "u8x4":
            perm = _perm(cfg)
            if len(perm) > 4 or not all(0 <= p <= 3 for p in perm):
                raise UnsupportedError(
                    f"{where}: permutation {perm} is not expressible in {cfg_type}"
                )
            items.append(f".{fname} = {{ {', '.join(map(str, perm))} }}")
            continue
        if key not in cfg and default is None:
            raise ValueError(f"{where}: config {cfg_type} needs '{key}'")
        value = cfg.get(key, default)
        if kind.startswith("enum:"):
            names = kind[5:].split(",")
            if not 0 <= int(value) < len(names):
                raise UnsupportedError(
                    f"{where}: {cfg_type}.{fname} = {value} is not one of {', '.join(names)}"
                )
            items.append(f".{fname} = {names[int(value)]}")
            continue
        if kind == "scratch":
            member = ptr_member(cfg["scratch_type"])
            items.append(
                f".{fname} = {{ .capacity = {int(cfg['scratch_bytes'])}u, "
                f".mem = {{ .{member} = {value} }} }}"
            )
            continue
        if kind in ("relu", "relu_type"):
            name = RELU_NAMES[relu_index(value, where)]
            items.append(
                f".{fname} = {{ .type = {name} }}" if kind == "relu" else f".{fname} = {name}"
            )
            continue
        value = int(value)
        lo, hi = (0, 255) if kind == "u8" else (-(1 << 31), (1 << 31) - 1)
        if not lo <= value <= hi:
            raise UnsupportedError(
                f"{where}: {cfg_type}.{fname} = {value} does not fit its "
                f"{'uint8_t' if kind == 'u8' else 'int32_t'} field"
            )
        items.append(f".{fname} = {value}")
    if not target.has_dilation and cfg_type == "mli_conv2d_cfg":
        for key in ("dilation_width", "dilation_height"):
            if int(cfg.get(key, 1)) not in (0, 1):
                raise UnsupportedError(
                    f"{where}: MLI {target.version} convolutions have no dilation "
                    f"({key} = {cfg[key]}); use --mli 2.0"
                )
    return items
