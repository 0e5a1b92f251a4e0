"""Custom ops mlitool knows, by their custom code.

A CUSTOM op is read as it is stored: its custom code and its custom options bytes. Where an op
family registers an OpSpec for that custom code (`OpSpec.custom`, e.g. TFLite_Detection_PostProcess),
the op becomes an op of that type, its flexbuffer options decoded into `options` (TFLite's own
custom ops store a flexbuffer map), so validation, the support check, lowering and the executors
dispatch on it as on a builtin op. The op keeps its index and custom code: nothing is rewritten.
Options that are not a flexbuffer map leave the op a CUSTOM one, with a warning.
"""

from __future__ import annotations

import dataclasses

from mlitool import ir
from mlitool.ops import spec as opspec
from mlitool.passes.context import PassContext


def decode_flexbuffer_map(data: bytes) -> dict:
    """The flexbuffer map `data` holds, as a dict (ValueError when it holds none)."""
    from flatbuffers import flexbuffers

    try:
        value = flexbuffers.Loads(bytearray(data)) if data else None
    except Exception as exc:  # the flexbuffers decoder raises anything on corrupt bytes
        raise ValueError(f"not a flexbuffer ({type(exc).__name__})") from None
    if not isinstance(value, dict):
        raise ValueError("not a flexbuffer map")
    return {str(k): v for k, v in value.items()}


def name_custom_ops(graph: ir.Graph, ctx: PassContext) -> ir.Graph:
    """`graph` with each CUSTOM op whose custom code an OpSpec registers as a custom op (`custom`)
    made an op of that type, its flexbuffer custom options decoded into `options`."""
    ops = list(graph.ops)
    for k, op in enumerate(ops):
        spec = opspec.REGISTRY.get(op.custom_code or "") if op.type == "CUSTOM" else None
        if spec is None or not spec.custom:
            continue
        try:
            options = decode_flexbuffer_map(op.custom_options)
        except ValueError as exc:
            ctx.warnings.append(f"{op.label}: custom options {exc}: left as an unknown custom op")
            continue
        ops[k] = dataclasses.replace(op, type=op.custom_code, options=options)
    return dataclasses.replace(graph, ops=ops)
