"""`OpSpec`: everything mlitool knows about one TFLite op, and the registry of them.

One `OpSpec` per op holds its input slots by name, arity, options table, element types, the MLI
layer kind it becomes (or none), its validation shape check, support checks, lowering rule and
executor kernels. The built-in ops are registered by their families (`mlitool/ops/<family>/`),
which the entry points load once (`mlitool.op_families.load()`); the stages that dispatch on an
op (validation, the support check, lowering, inspect, the executors) read this registry and never
import a family. This module imports nothing of mlitool, so the functions an OpSpec names can
read it.

Adding an op is one `register(OpSpec(...))` in its family: every per-op table is derived from
the registry.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

# How an op's element types relate (validation):
SAME = "same"  # the data inputs and the outputs share one type
CONVERT = "convert"  # the output type is the op's choice (QUANTIZE, ARG_MAX...)
WIDEN = "widen"  # as SAME, but int8 inputs may give int16 outputs (TFLite (Micro))

VARIADIC = 1 << 16  # "any number" of inputs or outputs


@dataclass(frozen=True)
class OpSpec:
    """One TFLite op. Callables are optional: an op without `lower` is refused by the support
    check ("no MLI kernel for this op"), one without `run` by the executors."""

    name: str  # TFLite builtin name, e.g. "CONV_2D"; a custom op's custom code (`custom`)
    slots: tuple[str, ...] | None = None  # input slots in schema order; None: not validated
    optional: int = 0  # how many trailing slots may be omitted or absent
    required: int | None = None  # slots that must be present (default: non-optional)
    variadic: bool = False  # the last slot repeats (CONCATENATION)
    outputs: tuple[int, int] = (1, 1)  # (min, max) outputs
    options: str | None = None  # the builtin options table it carries
    options_required: bool = False  # ... and must carry (no usable default)
    types: str = SAME  # SAME | CONVERT | WIDEN
    all_data: bool = False  # every input is data of the op's type (ADD...)
    quantized: bool = False  # integer activations must carry quantization
    mac: bool = False  # multiplies weights: rescale = input * weights
    rescale: bool = True  # its rescales are checked (not internal ones)
    window: bool = True  # stride / dilation / filter options checked
    index_outputs: bool = False  # outputs are indices (any integer type)
    bools: bool = False  # reads or writes bool tensors (one byte 0/1; lowered as SA8)
    # reads or writes int32 tensors (and ARG_MAX / ARG_MIN int64 indices): 4-byte SA32 of scale
    # 1, run as fallback C on the integers (`mlitool/ops/integer`)
    int32: bool = False
    reads_views: bool = False  # takes a strided view as input (mli_mov copies)
    fused_activation: bool = True  # "fused_activation" is an output activation
    params: tuple[str, ...] = ()  # slots that must be constants, not activations
    shapes: Callable | None = None  # validation: (graph, op) -> Problems
    kind: str | None = None  # the MLI layer kind; None: no MLI kernel
    not_lowered: str | None = None  # MLI kernels mlitool does not lower (yet)
    checks: tuple[Callable, ...] = ()  # support checks, in order (after common ones)
    lower: Callable | None = None  # (builder, op, format) -> None
    run: tuple[Callable | None, Callable | None] = (None, None)  # (float, tflite) kernels
    weights: tuple[str, ...] = ()  # slots of its weights, first present wins
    # Multiply-accumulates per inference: (graph, op, weights shape, output shape) -> int, for
    # the ops that multiply weights (inspect and the reports count them; None: 0).
    macs: Callable | None = None
    # A leading dimension other than 1 is rows or time steps, not a batch: the op's arithmetic
    # is per element (views, element-wise ops, activations), so lowering keeps that dimension.
    # True, or a predicate (graph, op) -> bool for ops where it depends on the instance.
    leading_dims: bool | Callable = False
    # Its outputs depend on its input's shape alone (SHAPE, ZEROS_LIKE): constant folding
    # evaluates it once that shape is static, its input's values unknown.
    shape_only: bool = False
    # Its variable tensors carry state from one inference to the next (SVDF's memory): the
    # executors and the LiteRT reference run a batch of samples as consecutive invocations.
    stream: bool = False
    # A custom op (TFLite_Detection_PostProcess): `name` is its custom code, its options the
    # flexbuffer map of its custom options (mlitool.passes.custom_ops).
    custom: bool = False
    # Reads and writes its float32 tensors as MLI FP32 tensors (no quantization): they need no
    # value range from calibration for its sake.
    keeps_float: bool = False
    # Its inputs that hold indices: (graph, op) -> {input position: n}, each index valid in
    # [0, n) (GATHER's positions, EMBEDDING_LOOKUP's ids). Random inputs that feed only such
    # slots are drawn in that range (`mlitool.execute.reference.inputs`).
    index_bounds: Callable | None = None

    @property
    def arity(self) -> tuple[int, int, int, int, int]:
        """(min inputs, max inputs, required slots, min outputs, max outputs)."""
        lo = len(self.slots) - self.optional
        hi = VARIADIC if self.variadic else len(self.slots)
        return (lo, hi, lo if self.required is None else self.required, *self.outputs)

    def slot(self, name: str) -> int:
        """Index of input slot `name` (KeyError naming the op when it has none)."""
        try:
            return self.slots.index(name)
        except (ValueError, AttributeError):
            raise KeyError(f"{self.name} has no input slot {name!r}") from None

    def has_slot(self, name: str) -> bool:
        return self.slots is not None and name in self.slots

    @property
    def data_slot(self) -> int:
        """The slot of its data input: "input" where it has one, else the first."""
        return self.slot("input") if self.has_slot("input") else 0


REGISTRY: dict[str, OpSpec] = {}


def register(spec: OpSpec) -> OpSpec:
    """Add `spec` (ValueError if its op is registered already)."""
    if spec.name in REGISTRY:
        raise ValueError(f"op {spec.name} is registered twice")
    REGISTRY[spec.name] = spec
    return spec


@contextmanager
def registered(spec: OpSpec) -> Iterator[OpSpec]:
    """`spec` registered for the duration of the block (tests, plug-ins)."""
    register(spec)
    try:
        yield spec
    finally:
        del REGISTRY[spec.name]


def _loaded() -> dict[str, OpSpec]:
    if not REGISTRY:  # every lookup would say "unknown op": a missing load, not a bad model
        raise RuntimeError("no op families loaded: call mlitool.op_families.load() first")
    return REGISTRY


def get(op_type: str) -> OpSpec | None:
    """The spec of `op_type`, None for an op mlitool does not know."""
    return _loaded().get(op_type)


def spec(op_type: str) -> OpSpec:
    """The spec of a known op (KeyError otherwise)."""
    try:
        return _loaded()[op_type]
    except KeyError:
        raise KeyError(f"no OpSpec for op {op_type!r}") from None


def input_index(op: Any, name: str) -> int:
    """Tensor index in `op`'s input slot `name`; -1 when omitted or beyond its inputs."""
    k = spec(op.type).slot(name)
    return op.inputs[k] if k < len(op.inputs) else -1


def lowered_ops() -> frozenset[str]:
    """Ops mlitool lowers to MLI (those with a layer kind)."""
    return frozenset(n for n, s in REGISTRY.items() if s.kind is not None)
