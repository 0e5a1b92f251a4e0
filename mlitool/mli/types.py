"""The MLI model: what `convert` produces, what the C emitter writes and the `mli` executor runs.

An `MliModel` is a list of `MliLayer`s (one MLI kernel call each) over named `MliTensor`s. Every
number the emitted C carries lives here, already encoded for the MLI version: data arrays in the
kernel's layout and element type, int16 scales with frac bits, FX frac bits, kernel configs.
The emitter and the executor only read these objects; neither recomputes a parameter.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mlitool.mli.target import Target, target_of


class ElType(enum.Enum):
    """MLI element types. `value` is the MLI 2.x enum value (`mli_element_type`)."""

    FX4 = 0x004
    FX8 = 0x008
    FX16 = 0x010
    SA8 = 0x108
    SA32 = 0x120
    FP16 = 0x210
    FP32 = 0x220

    @property
    def bits(self) -> int:
        return self.value & 0xFF

    @property
    def is_fx(self) -> bool:
        return self in (ElType.FX4, ElType.FX8, ElType.FX16)

    @property
    def is_sa(self) -> bool:
        return self in (ElType.SA8, ElType.SA32)

    @property
    def dtype(self) -> np.dtype:
        return _DTYPES[self]

    @property
    def c_type(self) -> str:
        return _C_TYPE[self]

    @property
    def mli2_name(self) -> str:
        return {
            ElType.FX4: "MLI_EL_FX_4",
            ElType.FX8: "MLI_EL_FX_8",
            ElType.FX16: "MLI_EL_FX_16",
            ElType.SA8: "MLI_EL_SA_8",
            ElType.SA32: "MLI_EL_SA_32",
            ElType.FP16: "MLI_EL_FP_16",
            ElType.FP32: "MLI_EL_FP_32",
        }[self]


_NUMPY_DTYPE = {
    ElType.FX4: "int8",
    ElType.FX8: "int8",
    ElType.FX16: "int16",
    ElType.SA8: "int8",
    ElType.SA32: "int32",
    ElType.FP16: "float16",
    ElType.FP32: "float32",
}
_DTYPES = {el: np.dtype(name) for el, name in _NUMPY_DTYPE.items()}  # parsed once
_C_TYPE = {
    ElType.FX4: "int8_t",
    ElType.FX8: "int8_t",
    ElType.FX16: "int16_t",
    ElType.SA8: "int8_t",
    ElType.SA32: "int32_t",
    ElType.FP16: "uint16_t",
    ElType.FP32: "float",
}


# Formats the user chooses (`--format`): element types of (activations, weights, bias).
FORMATS: dict[str, tuple[ElType, ElType, ElType]] = {
    "sa8": (ElType.SA8, ElType.SA8, ElType.SA32),
    "fx16": (ElType.FX16, ElType.FX16, ElType.FX16),
    "fx8w16d": (ElType.FX16, ElType.FX8, ElType.FX8),
    "fx8": (ElType.FX8, ElType.FX8, ElType.FX8),
}


class Role(str, enum.Enum):
    INPUT = "input"  # model input: the application sets the data pointer
    OUTPUT = "output"  # model output: likewise
    ACTIVATION = "activation"  # intermediate buffer
    WEIGHTS = "weights"
    BIAS = "bias"
    PARAM = "param"  # other constants: slopes, epsilon, LUT-free scalars

    @property
    def is_constant(self) -> bool:
        return self in (Role.WEIGHTS, Role.BIAS, Role.PARAM)


def row_major_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, acc = [], 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= max(int(d), 1)
    return tuple(reversed(strides))


@dataclass
class MliTensor:
    """One `mli_tensor`.

    `shape` is the MLI shape (batch dropped, kernel layout); `data` (constants only) is a numpy
    array of exactly that shape in `el_type.dtype`, already in the kernel's layout. Activations
    have `data is None`. Quantization:
      FX:  `frac_bits` (int, may be negative).
      SA:  `zero_point` (int16[n]), `scale` (int16[n], > 0), `scale_frac_bits` (int8[n]) and
           `dim` (-1 with n == 1 for per-tensor; else the per-axis dimension, n == shape[dim]).
    `mem_stride` is in elements (row-major unless this tensor is a view into a larger buffer,
    see `buffer`/`offset`). Views are made by `mlitool.mli.subtensor`, which also sets `capacity`
    (MLI's `data.capacity`) and, for per-axis views, `param_offset`.
    """

    name: str  # unique key in MliModel.tensors
    role: Role
    shape: tuple[int, ...]
    el_type: ElType
    layout: str = ""  # "HWC", "HWCN", "HW1N", "NM", "C", ... for people
    data: np.ndarray | None = None
    frac_bits: int | None = None
    zero_point: np.ndarray | None = None
    scale: np.ndarray | None = None
    scale_frac_bits: np.ndarray | None = None
    dim: int = -1
    mem_stride: tuple[int, ...] | None = None  # None means row-major of `shape`
    buffer: str | None = None  # name of the tensor whose memory this one views
    offset: int = 0  # element offset into `buffer`
    capacity: int | None = None  # bytes `data` may address (None: nbytes)
    param_offset: int = 0  # per-axis views: index of zero_point/scale[0]
    # in the root buffer's parameter arrays
    source: str | None = None  # original TFLite tensor name
    source_index: int | None = None  # original TFLite tensor index
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.shape = tuple(int(d) for d in self.shape)
        if self.mem_stride is None:
            self.mem_stride = row_major_strides(self.shape)

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)  # shape holds Python ints (see __post_init__)

    @property
    def nbytes(self) -> int:
        """Bytes of the memory the strides span (= dense size for a row-major tensor)."""
        if self.rank == 0:
            return 0 if self.data is not None else self.el_type.dtype.itemsize
        span = 1 + sum((d - 1) * s for d, s in zip(self.shape, self.mem_stride) if d > 0)
        return span * self.el_type.dtype.itemsize

    @property
    def per_axis(self) -> bool:
        return self.el_type.is_sa and self.dim >= 0

    def real_scale(self) -> np.ndarray:
        """SA: float64 scale(s) = scale * 2^-scale_frac_bits; FX: the single 2^-frac_bits."""
        if self.el_type.is_fx:
            return np.array([2.0 ** -int(self.frac_bits)])
        return self.scale.astype(np.float64) * np.exp2(-self.scale_frac_bits.astype(np.float64))


@dataclass
class SliceCalls:
    """A kernel called once per slice: nested loops over the output dimensions `loops`
    (outermost first). Call operand k is `views[k]`, a view of layer operand k (inputs, then
    outputs) over the other dimensions: an input of size 1 along a looped dimension (a
    broadcast) is the same slice at every index, and an input of size 1 along every other
    dimension is a one-element slice (MLI's scalar operand). Used where MLI's element-wise
    kernels, which take equal shapes or a scalar, meet a broadcast activation: the loops run
    over the leading dimensions (`[1,H,W,1] x [1,H,W,C]`: H*W calls over C elements) or over
    the trailing ones (`[1,1,1,C] x [1,H,W,C]`: C calls over a strided view of H*W elements,
    the channel's value the scalar), whichever makes fewer calls."""

    loops: tuple[int, ...]
    views: tuple[str, ...]

    def count(self, out_shape: tuple[int, ...]) -> int:
        """Calls per inference."""
        return math.prod(out_shape[d] for d in self.loops)

    def steps(
        self, shape: tuple[int, ...], strides: tuple[int, ...], out_shape: tuple[int, ...]
    ) -> list[int]:
        """Elements the slice of an operand of `shape` (row-major or memory `strides`) moves per
        index of each output dimension: its stride along a looped dimension, 0 where it
        repeats or the dimension is not looped."""
        lead = len(out_shape) - len(shape)
        shape, strides = (1,) * lead + tuple(shape), (0,) * lead + tuple(strides)
        return [
            strides[d] if d in self.loops and shape[d] == out_shape[d] else 0
            for d in range(len(out_shape))
        ]


@dataclass
class MliLayer:
    """One MLI kernel call.

    `kind` is the kernel family, a key of the layer kinds table (`mlitool.mli.kinds.KINDS`:
    "conv2d", "eltwise_add", "sigm", "permute", "view", "fallback", ...); `kernel`
    is the C function the application calls (e.g. "mli_krn_conv2d_hwcn_sa8_sa8_sa32"; a fallback
    layer's names its fallback kernel, e.g. "mlitool_lut8"), or "" for a "view"
    (reshape, squeeze, slices, concatenation: no call, the outputs are views of one buffer).
    `inputs` are activation tensor names in call order; constants go in `weights`, `bias` and
    `params` (role name -> tensor name, e.g. {"slope": ...}). `cfg_type` is the C struct
    ("mli_conv2d_cfg", "mli_pool_cfg", ...) and `cfg` its fields in declaration order.
    """

    index: int  # TFLite op index it came from
    op_type: str  # TFLite op type
    kind: str
    kernel: str
    inputs: list[str]
    outputs: list[str]
    weights: str | None = None
    bias: str | None = None
    params: dict[str, str] = field(default_factory=dict)
    cfg_type: str | None = None
    cfg: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # what lowering decided and why
    calls: SliceCalls | None = None  # one call per slice instead of one call


@dataclass
class MliModel:
    source: str  # path of the .tflite
    mli_version: str  # the data; code asks `target`
    format: str  # default format ("sa8", "fx16", ...)
    layout: str  # "hwc" (2.x, 1.x) | "chw" (1.x)
    tensors: dict[str, MliTensor]
    layers: list[MliLayer]
    inputs: list[str]
    outputs: list[str]
    warnings: list[str] = field(default_factory=list)
    config: str | None = None  # the settings file it was made with
    # What constant folding at import did (mlitool.passes.constant_fold): graph inputs whose
    # dynamic batch was fixed to 1, ops evaluated into constants, ops left without a reader.
    batch_fixed: list[str] = field(default_factory=list)
    folded_ops: list[str] = field(default_factory=list)
    removed_ops: list[str] = field(default_factory=list)

    @property
    def target(self) -> Target:
        """What the MLI version offers (`mlitool.mli.target`)."""
        return target_of(self.mli_version)

    def tensor(self, name: str) -> MliTensor:
        return self.tensors[name]
