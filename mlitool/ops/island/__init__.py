"""Float islands of int8 models fused onto the int8 tensors (`mlitool.passes.float_expressions`)."""
