"""Decoding of builtin options tables into the IR's `Op.options` (the reader's): every scalar
and scalar-vector field under a snake_case key, enums named, type codes as dtype names."""

from __future__ import annotations

import functools
import re
from typing import Any

from mlitool.tflite.checked import TYPES

_ACTIVATIONS = {0: "NONE", 1: "RELU", 2: "RELU_N1_TO_1", 3: "RELU6", 4: "TANH", 5: "SIGN_BIT"}
_PADDING = {0: "SAME", 1: "VALID"}
_WEIGHTS_FORMAT = {0: "DEFAULT", 1: "SHUFFLED4x16INT8"}
# Generic snake_case option names renamed to the IR's documented keys.
_RENAME = {
    "fused_activation_function": "fused_activation",
    "dilation_h_factor": "dilation_h",
    "dilation_w_factor": "dilation_w",
    "filter_height": "filter_h",
    "filter_width": "filter_w",
    "dilation_d_factor": "dilation_d",
}
# Option fields holding a TensorType code: decoded to a dtype name.
_DTYPE_FIELDS = {
    "output_type",
    "in_data_type",
    "out_data_type",
    "idx_out_type",
    "out_type",
    "quantized_bias_type",
    "key_dtype",
    "value_dtype",
}
_SKIP_METHODS = {"Init"}


@functools.lru_cache(maxsize=None)
def option_fields(cls: type) -> tuple[tuple[str, str, bool], ...]:
    """(accessor, IR key, is a vector) of every scalar and scalar-vector field of an options
    class, in name order; found by reflection once per class."""
    fields = []
    methods = {k for k, v in vars(cls).items() if callable(v) and not k.startswith("_")}
    for meth in sorted(methods):
        if (
            meth in _SKIP_METHODS
            or meth.startswith("GetRootAs")
            or "BufferHasIdentifier" in meth
            or meth.endswith(("AsNumpy", "Length", "IsNone"))
        ):
            continue
        nargs = getattr(cls, meth).__code__.co_argcount
        key = _RENAME.get(_snake(meth), _snake(meth))
        if nargs == 2:  # vector accessor Field(j)
            if getattr(cls, meth + "AsNumpy", None) is not None:
                fields.append((meth, key, True))
            # else a vector of tables (StableHLO): not decoded
        elif nargs == 1:
            fields.append((meth, key, False))
    return tuple(fields)


@functools.lru_cache(maxsize=None)
def _snake(name: str) -> str:
    s = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name)
    s = re.sub(r"(?<=[A-Z])([A-Z][a-z])", r"_\1", s)
    return s.lower()


def name_enums(opts: dict[str, Any]) -> dict[str, Any]:
    for key, names in (
        ("padding", _PADDING),
        ("fused_activation", _ACTIVATIONS),
        ("weights_format", _WEIGHTS_FORMAT),
    ):
        code = opts.get(key)
        if isinstance(code, int) and not isinstance(code, bool):
            opts[key] = names.get(code, f"UNKNOWN_{code}")
    if opts.get("quantized_bias_type") == 0:
        del opts["quantized_bias_type"]  # 0 = not set (bias type follows the inputs)
    for key in _DTYPE_FIELDS & opts.keys():
        code = opts[key]
        if isinstance(code, int) and not isinstance(code, bool):
            opts[key] = TYPES.get(code, (f"UNKNOWN_{code}",))[0]
    return opts
