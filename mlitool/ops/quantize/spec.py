"""OpSpecs of QUANTIZE and DEQUANTIZE: identities in float mode (`float_mode.py`), TFLite's
arithmetic in tflite mode (`tflite_mode.py`), lowered onto `mli_hlp_convert_tensor`
(`lower.py`)."""

from __future__ import annotations

from collections.abc import Iterator

from mlitool import ir
from mlitool.mli.lower import checks as C
from mlitool.ops.quantize import float_mode as F
from mlitool.ops.quantize import tflite_mode as T
from mlitool.ops.quantize.lower import lower_quantize
from mlitool.ops.spec import CONVERT, OpSpec, register
from mlitool.tflite import validate_ops as V

# The element types TFLite's Prepare lets each write.
_WRITES = {
    "QUANTIZE": ("int8", "uint8", "int16", "int32"),
    "DEQUANTIZE": ("float32", "float16"),
}


def conversion_shapes(g: ir.Graph, op: ir.Op) -> Iterator[V.Problem]:
    """The output is of a type the op writes (QUANTIZE an integer, DEQUANTIZE a float) and of
    the input's shape."""
    out = g.tensors[op.outputs[0]]
    if out.dtype not in _WRITES[op.type]:
        kinds = ", ".join(_WRITES[op.type])
        yield V.Problem(f"has type {out.dtype}; {op.type} writes {kinds}", op, out)
        return
    yield from V.same_shape(g, op)


for _name, _tflite in (("QUANTIZE", T.quantize), ("DEQUANTIZE", T.dequantize)):
    register(
        OpSpec(
            _name,
            ("input",),
            quantized=True,
            shapes=conversion_shapes,
            leading_dims=True,
            kind="convert",
            lower=lower_quantize,
            run=(F.identity, _tflite),
            types=CONVERT,
            options=_name.capitalize() + "Options",
            checks=(C.float_needs_mli2,),
        )
    )
