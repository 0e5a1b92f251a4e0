"""The reader's vtable slot numbers and field layouts against the generated `tflite` accessors.

The reader decodes flatbuffer tables itself, with slot numbers copied from schema.fbs. Each use of
a slot in the reader (found in its source) is checked against the accessor the `tflite` package
generated for that field: the slot it passes to `self._tab.Offset(...)`, and for scalars and
vectors the element layout it reads with `self._tab.Get(...)`.
"""

from __future__ import annotations

import ast
import importlib
import inspect

import numpy as np
import pytest

from mlitool.tflite import checked, read_tensors, reader

READER = (reader, read_tensors)  # the modules that read slots; the constants are checked.py's

# Which schema field each slot constant of the reader names: (table, generated accessor).
FIELDS = {
    "_MODEL_OPCODES": ("Model", "OperatorCodes"),
    "_MODEL_SUBGRAPHS": ("Model", "Subgraphs"),
    "_MODEL_DESCRIPTION": ("Model", "Description"),
    "_MODEL_BUFFERS": ("Model", "Buffers"),
    "_MODEL_SIGNATURES": ("Model", "SignatureDefs"),
    "_SUBGRAPH_TENSORS": ("SubGraph", "Tensors"),
    "_SUBGRAPH_INPUTS": ("SubGraph", "Inputs"),
    "_SUBGRAPH_OUTPUTS": ("SubGraph", "Outputs"),
    "_SUBGRAPH_OPS": ("SubGraph", "Operators"),
    "_SUBGRAPH_NAME": ("SubGraph", "Name"),
    "_TENSOR_SHAPE": ("Tensor", "Shape"),
    "_TENSOR_TYPE": ("Tensor", "Type"),
    "_TENSOR_BUFFER": ("Tensor", "Buffer"),
    "_TENSOR_NAME": ("Tensor", "Name"),
    "_TENSOR_QUANT": ("Tensor", "Quantization"),
    "_TENSOR_IS_VARIABLE": ("Tensor", "IsVariable"),
    "_TENSOR_SHAPE_SIGNATURE": ("Tensor", "ShapeSignature"),
    "_QUANT_SCALE": ("QuantizationParameters", "Scale"),
    "_QUANT_ZERO_POINT": ("QuantizationParameters", "ZeroPoint"),
    "_QUANT_DIMENSION": ("QuantizationParameters", "QuantizedDimension"),
    "_OP_INPUTS": ("Operator", "Inputs"),
    "_OP_OUTPUTS": ("Operator", "Outputs"),
    "_OP_CUSTOM_OPTIONS": ("Operator", "CustomOptions"),
    "_OP_INTERMEDIATES": ("Operator", "Intermediates"),
    "_OPCODE_CUSTOM": ("OperatorCode", "CustomCode"),
    "_BUFFER_DATA": ("Buffer", "Data"),
    "_SIGNATURE_KEY": ("SignatureDef", "SignatureKey"),
}

# The _Checked methods (and reader wrappers around them) whose second argument is a slot.
SLOT_METHODS = {"offset", "scalar", "vector", "array", "tables", "string", "_indices"}


class _Spy:
    """Stands in for a table's `_tab`: records the slot asked for and the layout of each read.
    `present` says whether the field is in the table (Offset returns non-zero)."""

    Pos = 0

    def __init__(self, present: bool):
        self.present = present
        self.slots: list[int] = []
        self.reads: list[str] = []

    def Offset(self, slot):
        self.slots.append(slot)
        return 4 if self.present else 0

    def Get(self, flags, pos):
        self.reads.append(flags.packer_type.format)
        return 0

    def Vector(self, off):
        return 0

    def VectorLen(self, off):
        return 1

    def Indirect(self, off):
        return 0

    def String(self, off):
        return b""


def _accessor_call(table: str, accessor: str, present: bool) -> _Spy:
    cls = getattr(importlib.import_module(f"tflite.{table}"), table)
    obj = cls.__new__(cls)
    obj._tab = spy = _Spy(present)
    method = getattr(obj, accessor)
    method(*[0] * (len(inspect.signature(method).parameters)))
    return spy


def generated_slot(table: str, accessor: str) -> int:
    spy = _accessor_call(table, accessor, present=False)
    assert len(spy.slots) == 1, (table, accessor, spy.slots)
    return spy.slots[0]


def generated_layout(table: str, accessor: str) -> np.dtype:
    """The layout the accessor reads a scalar or vector element with (a bool as its byte)."""
    spy = _accessor_call(table, accessor, present=True)
    assert len(spy.reads) == 1, (table, accessor, spy.reads)
    return np.dtype(spy.reads[0].replace("?", "B"))


def _slot_uses() -> list[tuple[str, str, object]]:
    """(method, slot argument, layout argument) of every call of a slot method in the reader; the
    slot argument is a constant's name, or the literal itself when the reader wrote a number."""
    tree = ast.Module(
        body=[n for m in READER for n in ast.parse(inspect.getsource(m)).body], type_ignores=[]
    )
    wrapped = {}  # wrapper method -> layout it passes on for its `slot`
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef) and fn.name in SLOT_METHODS:
            for call in ast.walk(fn):
                if (
                    isinstance(call, ast.Call)
                    and isinstance(call.func, ast.Attribute)
                    and call.func.attr == "array"
                    and len(call.args) > 2
                ):
                    wrapped[fn.name] = call.args[2]
    uses = []
    for call in ast.walk(tree):
        if not (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr in SLOT_METHODS
            and len(call.args) > 1
        ):
            continue
        slot = call.args[1]
        if isinstance(slot, ast.Name) and slot.id == "slot":
            continue  # inside a slot method: the caller's slot, checked there
        name = slot.id if isinstance(slot, ast.Name) else ast.literal_eval(slot)
        layout = (
            call.args[2] if call.func.attr in ("scalar", "array") else wrapped.get(call.func.attr)
        )
        uses.append((call.func.attr, name, layout))
    return uses


USES = _slot_uses()


def _layout_of(node: ast.expr) -> np.dtype:
    """A layout argument of the reader: a struct constant or a dtype string."""
    if isinstance(node, ast.Name):
        return np.dtype(getattr(checked, node.id).format)
    return np.dtype(ast.literal_eval(node))


@pytest.mark.parametrize("method,slot,layout", USES, ids=[f"{m}:{s}" for m, s, _ in USES])
def test_slot_matches_generated_accessor(method, slot, layout):
    assert isinstance(slot, str), f"{method}() is given the literal slot {slot}: name the field"
    assert slot in FIELDS, f"{slot} is read but not mapped to a schema field here"
    table, accessor = FIELDS[slot]
    assert getattr(checked, slot) == generated_slot(table, accessor), (
        f"{slot} = {getattr(checked, slot)}, but tflite.{table}.{accessor} reads slot "
        f"{generated_slot(table, accessor)}"
    )
    if layout is not None:
        assert _layout_of(layout) == generated_layout(table, accessor), (slot, ast.dump(layout))


def test_every_mapped_field_is_read():
    assert {slot for _, slot, _ in USES} == set(FIELDS)
