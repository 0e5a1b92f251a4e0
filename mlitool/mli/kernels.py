"""The MLI kernels of each MLI version, as kernel tables derived from the layer kinds table
(`mlitool.mli.kinds`, which holds each kind's C functions); which TFLite ops become which layer
kinds: their OpSpecs.

Tables: layer kind -> {"<layout>:<format>" or "*:<format>" (any layout): C function}; each
`mlitool.mli.target.Target` holds one and answers `kernel(kind, fmt, layout)` (None when that
version has no such kernel: lowering then refuses the layer and names `formats_for`).
"""

from __future__ import annotations

from mlitool.mli.kinds import KINDS, c_names

# MLI 2.x look-up tables (`mli_lut`, int16 entries): layer kind -> table length, in the order the
# runtime creates them. Their kernels take the table that `mli_krn_<kind>_create_lut` fills in;
# MLI 1.x kernels have their tables built in.
LUT_LENGTHS: dict[str, int] = {k.name: k.lut for k in KINDS.values() if k.lut}


def luts_of(kind: str) -> tuple[str, ...]:
    """The look-up tables a layer kind's MLI 2.x kernel takes, in argument order."""
    entry = KINDS.get(kind)
    return entry.luts if entry is not None else ()


# MLI relu_type enum values (mli_relu_type).
RELU_NONE, RELU_GEN, RELU_1, RELU_6 = 0, 1, 2, 3


def mli2_kernels() -> dict[str, dict[str, str]]:
    """MLI 2.x names: every kernel takes any layout (HWC activations)."""
    return c_names("mli2")


def mli1_kernels(with_sa8: bool) -> dict[str, dict[str, str]]:
    """MLI 1.x names; keys are "<layout>:<format>" or "*:<format>" (any layout); `with_sa8`:
    MLI 1.1's SA8 kernels too."""
    return c_names("mli1", ("mli1_sa8",) if with_sa8 else ())
