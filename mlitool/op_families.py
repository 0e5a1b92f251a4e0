"""The op families mlitool knows, loaded into the OpSpec registry (`mlitool.ops.spec`).

Each family is a folder of `mlitool/ops/` holding its ops' OpSpecs (`spec.py`, which registers
them), their float / tflite reference kernels, their lowering and, where MLI has no kernel,
their fallback C with its numpy twin. The stages (reader, validation, passes, lowering, the
executors, the emitter) read only the registry; the entry points (`mlitool.pipeline`, the CLI)
call `load()` once. Adding an op family is one folder plus one line here.
"""

from __future__ import annotations


def load() -> None:
    """Register every family's ops, in the registry's order (importing a family's `spec`
    registers its ops once: later calls do nothing)."""
    # isort: off
    from mlitool.ops.conv import spec as _conv  # noqa: F401
    from mlitool.ops.pool import spec as _pool  # noqa: F401
    from mlitool.ops.reduce import spec as _reduce  # noqa: F401
    from mlitool.ops.elementwise import spec as _elementwise  # noqa: F401
    from mlitool.ops.activation import spec as _activation  # noqa: F401
    from mlitool.ops.quantize import spec as _quantize  # noqa: F401
    from mlitool.ops.movement import spec as _movement  # noqa: F401
    from mlitool.ops.recurrent import spec as _recurrent  # noqa: F401
    from mlitool.ops.shape import spec as _shape  # noqa: F401
    from mlitool.ops.gather import spec as _gather  # noqa: F401
    from mlitool.ops.binary import spec as _binary  # noqa: F401
    from mlitool.ops.resize import spec as _resize  # noqa: F401
    from mlitool.ops.unary import spec as _unary  # noqa: F401
    from mlitool.ops.compare import spec as _compare  # noqa: F401
    from mlitool.ops.logical import spec as _logical  # noqa: F401
    from mlitool.ops.log_softmax import spec as _log_softmax  # noqa: F401
    from mlitool.ops.update_slice import spec as _update_slice  # noqa: F401
    from mlitool.ops.island import spec as _island  # noqa: F401
    # isort: on
