"""Float regions of int8 models (`mlitool.passes.float_regions`): a program of float32 ops in C."""
