"""The kernel config structs each MLI version declares: their fields in declaration order (from
the real `mli_types.h` of Release_2.0.2 / Release_1.1 / Release_1.0). Data only: `target` gives
each `Target` its table, `mlitool.emit.cfgs` fills them, `mlitool.footprint.cstructs` sizes them;
which layer kind carries which struct is its `cfg_structs` in `mlitool.mli.kinds`.
"""

from __future__ import annotations

# A field: (struct field, kind, cfg key, default or None when required).
# kinds: "relu" (nested mli_relu_cfg), "relu_type" (bare mli_relu_type), "u8", "i32", "u8x4".
# Stride and padding: the same fields, in this order, in convolution and pooling configs.
_STRIDE = [
    ("stride_width", "u8", "stride_width", 1),
    ("stride_height", "u8", "stride_height", 1),
]
_PAD2D = [
    ("padding_left", "u8", "padding_left", 0),
    ("padding_right", "u8", "padding_right", 0),
    ("padding_top", "u8", "padding_top", 0),
    ("padding_bottom", "u8", "padding_bottom", 0),
]
_CONV_2X = [
    ("relu", "relu", "relu_type", 0),
    *_STRIDE,
    *_PAD2D,
    ("dilation_width", "u8", "dilation_width", 1),
    ("dilation_height", "u8", "dilation_height", 1),
]
_POOL = [
    ("kernel_width", "u8", "kernel_width", None),
    ("kernel_height", "u8", "kernel_height", None),
    *_STRIDE,
    *_PAD2D,
]
_AXIS = [("axis", "i32", "axis", -1)]
_PERMUTE = [("perm_dim", "u8x4", "perm_dim", None)]
_CONCAT = [("tensors_num", "u8", "tensors_num", None), ("axis", "u8", "axis", None)]
_RELU = [("type", "relu_type", "relu_type", 0)]
# mli_mov_cfg_t: arrays of MLI_MAX_RANK; kinds "u32[4]", "i32[4]", "u8[4]".
_MOV = [
    ("offset", "u32[4]", "offset", [0] * 4),
    ("size", "u32[4]", "size", [0] * 4),
    ("sub_sample_step", "u32[4]", "sub_sample_step", [1] * 4),
    ("dst_offset", "u32[4]", "dst_offset", [0] * 4),
    ("dst_mem_stride", "i32[4]", "dst_mem_stride", [0] * 4),
    ("perm_dim", "u8[4]", "perm_dim", [0, 1, 2, 3]),
    ("padding_pre", "u8[4]", "padding_pre", [0] * 4),
    ("padding_post", "u8[4]", "padding_post", [0] * 4),
]
# mli_rnn_cell_cfg: enums by index; the scratch container points at a static array the source
# defines (cfg key "scratch": its symbol, "scratch_bytes", "scratch_type": int8_t / int16_t).
_RNN_CELL = [
    ("direction", "enum:RNN_DIR_FORWARD,RNN_DIR_BACKWARD", "direction", 0),
    ("results", "enum:RNN_OUT_LAST,RNN_OUT_ALL", "results", 1),
    ("act", "enum:RNN_ACT_NONE,RNN_ACT_TANH,RNN_ACT_SIGM", "act", 1),
    ("scratch_data", "scratch", "scratch", None),
]
MLI2_CFG_STRUCTS: dict[str, list] = {
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
}
MLI1_CFG_STRUCTS: dict[str, list] = {
    "mli_conv2d_cfg": _CONV_2X[:7],  # no dilation in 1.x
    "mli_pool_cfg": _POOL,
    "mli_relu_cfg": _RELU,
    "mli_permute_cfg": _PERMUTE,
    "mli_padding2d_cfg": _PAD2D,
    "mli_concat_cfg": _CONCAT,
}
