"""int32 tensors (and ARG_MAX / ARG_MIN int64 indices) as fallback C: arithmetic, comparisons,
SELECT, CAST and gathers by run-time indices on 4-byte SA32 elements of scale 1. The ops keep
their OpSpecs in their own families, which take this family's path for int32 operands
(`dispatch.py`)."""
