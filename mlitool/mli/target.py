"""One `Target` per MLI version mlitool emits for: what differs between MLI 2.0, 1.1 and 1.0, as
named facts the code asks (`target.strided_views`, `target.kernel(kind, fmt, layout)`) instead of
comparing version strings.

The version string ("2.0", "1.1", "1.0") stays data (options, config, the manifest, JSON); it is
looked up here (`target_of`). `choose` is the one check of an option's value (the config file
calls it, `settings.settle` and `settings_for` through `check_options`), so an option is refused in one
wording; the CLI's enums take their choices from here for --help.
`tests/test_target.py` keeps every other module free of version string comparisons.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from mlitool.errors import OptionError
from mlitool.mli import kernels as K
from mlitool.mli.cfg_structs import MLI1_CFG_STRUCTS, MLI2_CFG_STRUCTS

LAYOUTS = ("hwc", "chw")
FORMAT_NAMES = ("sa8", "fx16", "fx8w16d", "fx8")  # their element types: types.FORMATS


def choose(option: str, value: str, allowed: Iterable[str], path: str | None = None) -> str:
    """`value` when it is one of `allowed`, else OptionError naming `option` (and the config
    file `path`) and the choices."""
    allowed = tuple(allowed)
    if value not in allowed:
        raise OptionError(f"{option} {value!r}: choose one of {', '.join(allowed)}", path)
    return value


@dataclass(frozen=True, eq=False)
class Target:
    version: str  # the data: "2.0" | "1.1" | "1.0"
    kernels: Mapping[str, Mapping[str, str]]  # kind -> {"layout:fmt" | "*:fmt": C function}
    layouts: tuple[str, ...]  # activation layouts allowed, the default first
    cfg_structs: Mapping[str, list]  # config struct -> fields (cfg_structs.py)
    # -- the mli_tensor struct (the C dialect: mlitool.emit.dialect)
    data_container: bool  # data is an mli_data_container (capacity + union); 1.x: void *
    has_mem_stride: bool  # mli_tensor has mem_stride (1.0 has none: dense tensors only)
    sa_tensors: bool  # SA8 / SA32 tensors exist (1.0: FX only)
    float_tensors: bool  # FP32 tensors exist (QUANTIZE / DEQUANTIZE of float data)
    int16_scales: bool  # SA scales are int16 with int8 frac bits per axis; 1.1: int32
    # scales, one frac bits value per tensor
    fx_frac_bits: tuple[int, int]  # range of fx.frac_bits (int8; 1.x: uint8)
    per_axis_bytes: tuple[int, int, int]  # bytes per channel of (zero points, scales, frac
    # bits) arrays of one per-axis tensor
    shared_zero_points: bool  # per-axis constants whose zero points are all 0 point into one
    # shared array: 2.x kernels read element 0 (mli_prv_quant_ref.h) and check the capacity
    size_specializations: bool  # SA8 kernels for fixed kernel sizes (`..._k3x3`: 2.x names,
    # mlitool.mli.specialize); 1.x names theirs otherwise
    # -- the kernels
    strided_views: bool  # kernels read and write through mem_stride (1.x ignore it,
    # so only contiguous views)
    hwcn_weights: bool  # conv weights HWCN / HW1N, fully connected NM; 1.x: TFLite's
    # order (OHWI, or NCHW / N1HW in CHW layout)
    lut_kernels: bool  # sigm, tanh, softmax, l2_normalize, lstm take a table that
    # mli_krn_<kind>_create_lut fills; 1.x have theirs built in
    softmax_axis: bool  # softmax / l2_normalize take their axis in a config; 1.x work
    # on the whole tensor
    padding_via_mov: bool  # PAD is an mli_mov copy (every dimension, any element type,
    # SA32 included); 1.x: mli_krn_padding2d (H and W)
    fuses_pad_into_conv: bool  # a PAD before a convolution becomes its config's padding
    concat_kernel: bool  # concatenation is one kernel over an array of inputs; 2.x
    # copies each piece with mli_mov (or writes it in place)
    mov_staging: bool  # mli_mov_tensor_sync copies operands into fast memory (convert
    # --fast-memory); 1.x has no mli_mov
    executable: bool  # the executor reproduces this version's kernels (MLI 2.0.2):
    # run / verify / report accuracy, a verified build

    def __repr__(self) -> str:
        return f"Target({self.version!r})"

    def __reduce__(self):
        # one Target per version, in worker processes too (tune sends Settings to them)
        return target_of, (self.version,)

    @property
    def default_layout(self) -> str:
        return self.layouts[0]

    @property
    def has_dilation(self) -> bool:
        """Convolutions take a dilation (their config has the fields)."""
        return any(f[0] == "dilation_width" for f in self.cfg_structs["mli_conv2d_cfg"])

    @property
    def cfg_relu_on_fc(self) -> bool:
        """Fully connected applies a fused ReLU itself (from its config); 1.x: a separate relu."""
        return "mli_fully_connected_cfg" in self.cfg_structs

    def check_layout(self, layout: str) -> str:
        choose("--layout", layout, LAYOUTS)
        if layout not in self.layouts:
            takes = " or ".join(x.upper() for x in self.layouts)
            raise OptionError(
                f"--layout {layout}: MLI {self.version} kernels take {takes} activations"
            )
        return layout

    def offers(self, kind: str) -> bool:
        """Some kernel of this version computes layer `kind`."""
        return kind in self.kernels

    def kernel(self, kind: str, fmt: str, layout: str = "hwc") -> str | None:
        """The C function for `kind` in format `fmt` and `layout`, or None if there is none."""
        table = self.kernels.get(kind, {})
        return table.get(f"{layout}:{fmt}", table.get(f"*:{fmt}"))

    def formats_for(self, kind: str, layout: str = "hwc") -> list[str]:
        """Formats in which this version offers a `kind` kernel (for refusal messages)."""
        return [f for f in FORMAT_NAMES if self.kernel(kind, f, layout) is not None]

    def layouts_for(self, kind: str, fmt: str) -> list[str]:
        return [
            lay
            for lay in ("chw", "hwc")
            if lay in self.layouts and self.kernel(kind, fmt, lay) is not None
        ]

    def no_kernel(self, kind: str, fmt: str, layout: str) -> str:
        """Why `kind` has no kernel here, and the formats / layout / target that have one."""
        alts = self.formats_for(kind, layout)
        lays = [lay for lay in self.layouts_for(kind, fmt) if lay != layout]
        hint = []
        if alts:
            hint.append(
                f"formats available for it: {', '.join(alts)} (--format or a per-layer override)"
            )
        if lays:
            hint.append(f"or --layout {lays[0]}")
        if not alts and not lays:
            hint.append("another --mli target")
        return f"MLI {self.version} has no {fmt} kernel for {layout.upper()} layout; " + " ".join(
            hint
        )


_MLI1 = {
    "layouts": ("chw", "hwc"),
    "cfg_structs": MLI1_CFG_STRUCTS,
    "data_container": False,
    "float_tensors": False,
    "int16_scales": False,
    "fx_frac_bits": (0, 255),
    "shared_zero_points": False,
    "size_specializations": False,
    "strided_views": False,
    "hwcn_weights": False,
    "lut_kernels": False,
    "softmax_axis": False,
    "padding_via_mov": False,
    "fuses_pad_into_conv": False,
    "concat_kernel": True,
    "mov_staging": False,
    "executable": False,
}

MLI2 = Target(
    "2.0",
    K.mli2_kernels(),
    layouts=("hwc",),
    cfg_structs=MLI2_CFG_STRUCTS,
    data_container=True,
    has_mem_stride=True,
    sa_tensors=True,
    float_tensors=True,
    int16_scales=True,
    fx_frac_bits=(-128, 127),
    per_axis_bytes=(2, 2, 1),
    shared_zero_points=True,
    size_specializations=True,
    strided_views=True,
    hwcn_weights=True,
    lut_kernels=True,
    softmax_axis=True,
    padding_via_mov=True,
    fuses_pad_into_conv=True,
    concat_kernel=False,
    mov_staging=True,
    executable=True,
)
MLI11 = Target(
    "1.1",
    K.mli1_kernels(with_sa8=True),
    has_mem_stride=True,
    sa_tensors=True,
    per_axis_bytes=(2, 4, 0),
    **_MLI1,
)
# 1.0: 1.1 without SA8 tensors and mem_stride (dense tensors only).
MLI10 = replace(
    MLI11,
    version="1.0",
    kernels=K.mli1_kernels(with_sa8=False),
    has_mem_stride=False,
    sa_tensors=False,
    per_axis_bytes=(0, 0, 0),
)

TARGETS: dict[str, Target] = {t.version: t for t in (MLI2, MLI11, MLI10)}
MLI_VERSIONS = tuple(TARGETS)  # what `--mli` and the config's `mli` accept
DEFAULT = MLI2


def target_of(version: str, path: str | None = None) -> Target:
    """The Target of an MLI version string (OptionError naming the choices)."""
    return TARGETS[choose("--mli", version, TARGETS, path)]


def check_options(
    fmt: str, version: str, layout: str | None, overrides: Mapping
) -> tuple[Target, str]:
    """The one check of a model's options: (its Target, the layout, by default the target's)."""
    choose("--format", fmt, FORMAT_NAMES)
    target = target_of(version)
    for key, f in overrides.items():
        choose(f"override {key!r}: format", f, FORMAT_NAMES)
    return target, target.check_layout(layout or target.default_layout)
