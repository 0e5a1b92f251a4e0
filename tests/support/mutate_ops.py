"""Seeded mutations of ops' structure, for benchmarks/fuzz_campaign.py and tests/cli/test_fuzz.py
(issue 37: arity and options validated before any pass).

`mutate_ops` makes one or two edits, each of one family:
* op lists: an op's input or output list emptied, shortened by one, or lengthened by one or two
  (its length word only: the entries that follow are the bytes after the list);
* option values: one field of an op's builtin options table, of any type found in the file (every
  field the schema gives the table, typed as the schema does: strides, dilations, filter sizes,
  axes, block sizes, depth multipliers, fused activations, betas, alphas, vectors such as
  SQUEEZE's dims), set to 0, a negative value, a neighbour, a type limit, or NaN / inf.

The slots are found with the `tflite` accessors (`op_slots`), once per model.
"""

from __future__ import annotations

import functools
import inspect
import random
import re
import struct
from dataclasses import dataclass

import tflite

from tests.support.mutate import U32, Slot

_FLAGS = {
    "Int8": "<b",
    "Uint8": "<B",
    "Bool": "<B",
    "Int16": "<h",
    "Uint16": "<H",
    "Int32": "<i",
    "Uint32": "<I",
    "Int64": "<q",
    "Uint64": "<Q",
    "Float32": "<f",
    "Float64": "<d",
}
_OPTION_NAMES = {
    code: name for name, code in vars(tflite.BuiltinOptions).items() if isinstance(code, int)
}


@dataclass(frozen=True)
class Field:
    voff: int
    fmt: str
    name: str
    vector: bool


@functools.lru_cache(maxsize=None)
def option_fields(table: str) -> tuple[Field, ...]:
    """The scalar and scalar-vector fields of an options table, typed from its generated
    accessors (vtable offset, struct format, field name, whether a vector)."""
    try:
        cls = getattr(__import__(f"tflite.{table}", fromlist=[table]), table)
    except (ImportError, AttributeError):
        return ()
    fields = []
    for name, fn in vars(cls).items():
        if not callable(fn) or name.startswith(("_", "GetRootAs", "Init")):
            continue
        if name.endswith(("AsNumpy", "Length", "IsNone")) or "BufferHasIdentifier" in name:
            continue
        src = inspect.getsource(fn)
        off = re.search(r"Offset\((\d+)\)", src)
        flags = re.search(r"number_types\.(\w+)Flags, (o|a) \+", src)
        if off is None or flags is None or flags.group(1) not in _FLAGS:
            continue
        fields.append(Field(int(off.group(1)), _FLAGS[flags.group(1)], name, flags.group(2) == "a"))
    return tuple(sorted(fields, key=lambda f: f.voff))


def op_slots(buf: bytes) -> tuple[list[Slot], list[Slot]]:
    """(the length words of every op's input and output lists, every option value of every op)
    of subgraph 0."""
    model = tflite.Model.GetRootAsModel(buf, 0)
    sg = model.Subgraphs(0)
    lists, values = [], []
    for i in range(sg.OperatorsLength()):
        op = sg.Operators(i)
        tab = op._tab
        for voff, what in ((6, "inputs"), (8, "outputs")):
            o = tab.Offset(voff)
            if o:
                lists.append(Slot(tab.Vector(o) - 4, U32, f"op {i} {what} count", tab.VectorLen(o)))
        opts = op.BuiltinOptions()
        if opts is None:
            continue
        table = _OPTION_NAMES.get(op.BuiltinOptionsType(), "")
        otab = flatbuffers_table(opts)
        for f in option_fields(table):
            o = otab.Offset(f.voff)
            if not o:
                continue
            if not f.vector:
                values.append(Slot(otab.Pos + o, f.fmt, f"op {i} {table}.{f.name}"))
                continue
            start, size = otab.Vector(o), struct.calcsize(f.fmt)
            for k in range(otab.VectorLen(o)):
                values.append(Slot(start + k * size, f.fmt, f"op {i} {table}.{f.name}[{k}]"))
    return lists, values


def flatbuffers_table(opts):
    """The flatbuffers Table of a union member (a bare Table, or a generated object)."""
    return getattr(opts, "_tab", opts)


def _value(rng: random.Random, fmt: str, old):
    if fmt in ("<f", "<d"):
        return rng.choice([0.0, -1.0, -old, float("nan"), float("inf"), -float("inf"), 1e30])
    bits = struct.calcsize(fmt) * 8
    lo, hi = (
        (0, 2**bits - 1)
        if fmt.isupper() or fmt == "<B"
        else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    )
    new = rng.choice(
        [0, 0, -1, -1, -2, -old, old + 1, old - 1, old * 2, lo, hi, rng.randint(-9, 9)]
    )
    return max(lo, min(hi, new))


def mutate_ops(buf: bytes, rng: random.Random, slots=None) -> tuple[bytes, str]:
    """One copy of `buf` with one or two op lists or option values changed, and a description.
    `slots`: `op_slots(buf)` when the caller keeps it."""
    lists, values = op_slots(buf) if slots is None else slots
    data, done = bytearray(buf), []
    for _ in range(rng.choice([1, 1, 2])):
        if values and (not lists or rng.random() < 0.6):
            slot = rng.choice(values)
            old = struct.unpack_from(slot.fmt, data, slot.pos)[0]
            new = _value(rng, slot.fmt, old)
        elif lists:
            slot = rng.choice(lists)
            old = struct.unpack_from(slot.fmt, data, slot.pos)[0]
            new = rng.choice([0, 0, max(old - 1, 0), old + 1, old + 2])
        else:
            break
        struct.pack_into(slot.fmt, data, slot.pos, new)
        done.append(f"{slot.what}: {old} -> {new}")
    return bytes(data), "; ".join(done) or "unchanged"
