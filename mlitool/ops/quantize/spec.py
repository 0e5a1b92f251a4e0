"""OpSpecs of QUANTIZE and DEQUANTIZE: identities in float mode (`float_mode.py`), TFLite's
arithmetic in tflite mode (`tflite_mode.py`), lowered onto `mli_hlp_convert_tensor`
(`lower.py`)."""

from __future__ import annotations

from mlitool.mli.lower import checks as C
from mlitool.ops.quantize import float_mode as F
from mlitool.ops.quantize import tflite_mode as T
from mlitool.ops.quantize.lower import lower_quantize
from mlitool.ops.spec import CONVERT, OpSpec, register
from mlitool.tflite import validate_ops as V

for _name, _tflite in (("QUANTIZE", T.quantize), ("DEQUANTIZE", T.dequantize)):
    register(
        OpSpec(
            _name,
            ("input",),
            quantized=True,
            shapes=V.same_shape,
            leading_dims=True,
            kind="convert",
            lower=lower_quantize,
            run=(F.identity, _tflite),
            types=CONVERT,
            options=_name.capitalize() + "Options",
            checks=(C.float_needs_mli2,),
        )
    )
