"""The quantization parameters an MLI 2.0.2 kernel leaves in its output tensor.

sigm, tanh, softmax, l2_normalize and argmax overwrite them with fixed values; permute copies
(and for per-axis SA re-targets) the input's; relu and maxpool copy the input's. The emitted C
must carry exactly these, or the next layer reads other parameters than planned.
"""

from __future__ import annotations

from mlitool.execute.mli_kernels import activations, movement
from mlitool.mli.types import MliTensor

REWRITING_KINDS = ("relu", "maxpool", "sigm", "tanh", "softmax", "l2_normalize", "argmax", "permute")


def output_params(kind: str, inp: MliTensor, out: MliTensor, cfg: dict | None = None) -> MliTensor:
    """`out` as the kernel of layer kind `kind` leaves it (unchanged for other kinds)."""
    if kind in ("argmax", "permute"):
        return movement.output_params(kind, inp, out, cfg or {})
    if kind == "maxpool":
        kind = "relu"                   # same rule: the input's params are copied
    return activations.output_params(kind, inp, out, cfg or {})
