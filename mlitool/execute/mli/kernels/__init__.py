"""Bit-exact numpy implementations of the MLI 2.0.2 kernels (the `mli` executor's kernels).

Every kernel takes a batched integer array `x` of shape (B,) + tensor shape and the `MliTensor`s that
describe its operands, and returns (B,) + out.shape in the output's numpy dtype. Each module also
exposes `LAYER_RUNNERS`, keyed by `MliLayer.kind`, for the executor's graph walker.
"""
