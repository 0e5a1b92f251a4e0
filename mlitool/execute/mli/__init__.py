"""Numpy re-implementations of the MLI 2.0.2 kernels, bit-exact with the reference (ref/) code."""
