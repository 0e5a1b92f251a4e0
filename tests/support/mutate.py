"""Seeded mutations of .tflite files for the fuzz test and benchmarks/fuzz_campaign.py.

Two families, picked at random per case:
* byte level: flip bytes, overwrite an aligned 32-bit word, truncate the file;
* field level: the flatbuffer is walked with the `tflite` accessors to find the byte position of
  every interesting field (op input / output indices and their counts, opcode indices and builtin
  codes, the options union type and options fields, tensor shapes, types, buffers, scales, zero
  points, quantized dimensions, graph inputs / outputs, the op count), and one of them is
  overwritten in place with an edge value (0, -1, a neighbour, another valid index, NaN, ...).
  Rewiring indices makes cycles, ops writing one tensor twice, missing inputs; shrinking a count
  drops inputs, outputs or trailing ops.

A third, separate family (`mutate_lengths`) only shortens arrays, so most of its files are
well-formed: quantization scales / zero points cut to one or none, the graph's input or output
list emptied, shortened or pointed elsewhere.

`run_cli` runs one command in this process and classifies the outcome (`Outcome`).
"""

from __future__ import annotations

import contextlib
import io
import random
import re
import struct
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import tflite

# (struct format, kind) of a field slot.
I8, U8, I32, U32, I64, F32 = "<b", "<B", "<i", "<I", "<q", "<f"

# vtable offsets of the fields mutated (schema.fbs order: 4 + 2 * field id).
_OPTION_I32 = {
    "Conv2DOptions": (6, 8, 12, 14),
    "DepthwiseConv2DOptions": (6, 8, 10, 14, 16),
    "Pool2DOptions": (6, 8, 10, 12),
    "ConcatenationOptions": (4,),
}


@dataclass(frozen=True)
class Slot:
    pos: int
    fmt: str
    what: str
    bound: int = 0  # for index fields: the count they index into


def _field(tab, voff: int) -> int | None:
    o = tab.Offset(voff)
    return tab.Pos + o if o else None


def _vector(tab, voff: int) -> tuple[int, int] | None:
    """(position of the length word, element count)."""
    o = tab.Offset(voff)
    if not o:
        return None
    start = tab.Vector(o)
    return start - 4, tab.VectorLen(o)


def _vector_slots(tab, voff: int, fmt: str, what: str, bound: int = 0) -> list[Slot]:
    v = _vector(tab, voff)
    if v is None:
        return []
    size = struct.calcsize(fmt)
    slots = [Slot(v[0], U32, f"{what} count", v[1])]
    slots += [Slot(v[0] + 4 + k * size, fmt, f"{what}[{k}]", bound) for k in range(v[1])]
    return slots


def field_slots(buf: bytes) -> list[Slot]:
    """Every mutable field of a (valid) model."""
    model = tflite.Model.GetRootAsModel(buf, 0)
    slots: list[Slot] = []
    n_codes = model.OperatorCodesLength()
    for i in range(n_codes):
        tab = model.OperatorCodes(i)._tab
        for voff, fmt in ((4, I8), (10, I32)):
            if (p := _field(tab, voff)) is not None:
                slots.append(Slot(p, fmt, f"opcode {i} builtin"))
    n_buffers = model.BuffersLength()
    sg = model.Subgraphs(0)
    n_t = sg.TensorsLength()
    slots += _vector_slots(sg._tab, 6, I32, "graph inputs", n_t)
    slots += _vector_slots(sg._tab, 8, I32, "graph outputs", n_t)
    ops = _vector(sg._tab, 10)
    if ops is not None:
        slots.append(Slot(ops[0], U32, "op count", ops[1]))
    for i in range(n_t):
        t = sg.Tensors(i)
        tab = t._tab
        slots += _vector_slots(tab, 4, I32, f"tensor {i} shape", 4)
        for voff, fmt, what, bound in ((6, I8, "type", 17), (8, U32, "buffer", n_buffers)):
            if (p := _field(tab, voff)) is not None:
                slots.append(Slot(p, fmt, f"tensor {i} {what}", bound))
        q = t.Quantization()
        if q is not None:
            slots += _vector_slots(q._tab, 8, F32, f"tensor {i} scale")
            slots += _vector_slots(q._tab, 10, I64, f"tensor {i} zero point")
            if (p := _field(q._tab, 16)) is not None:
                slots.append(Slot(p, I32, f"tensor {i} quantized dimension", 4))
    for i in range(sg.OperatorsLength()):
        op = sg.Operators(i)
        tab = op._tab
        if (p := _field(tab, 4)) is not None:
            slots.append(Slot(p, U32, f"op {i} opcode index", n_codes))
        slots += _vector_slots(tab, 6, I32, f"op {i} inputs", n_t)
        slots += _vector_slots(tab, 8, I32, f"op {i} outputs", n_t)
        if (p := _field(tab, 10)) is not None:
            slots.append(Slot(p, U8, f"op {i} options type", 127))
        opts = op.BuiltinOptions()
        if opts is not None:
            name = _OPTION_NAMES.get(op.BuiltinOptionsType(), "")
            wide = _OPTION_I32.get(name, ())
            vtable = opts.Pos - struct.unpack_from("<i", buf, opts.Pos)[0]
            n_fields = (struct.unpack_from("<H", buf, vtable)[0] - 4) // 2
            for k in range(n_fields):
                voff = 4 + 2 * k
                o = struct.unpack_from("<H", buf, vtable + voff)[0]
                if o:
                    slots.append(
                        Slot(opts.Pos + o, I32 if voff in wide else I8, f"op {i} {name} field {k}")
                    )
    return slots


_OPTION_NAMES = {
    code: name for name, code in vars(tflite.BuiltinOptions).items() if isinstance(code, int)
}


def _edge_value(rng: random.Random, slot: Slot, old):
    if slot.fmt == F32:
        return rng.choice(
            [
                0.0,
                -old,
                float("nan"),
                float("inf"),
                -float("inf"),
                old * 1e30,
                old * rng.uniform(0.5, 2),
                1e-45,
            ]
        )
    info = {
        I8: (-128, 127),
        U8: (0, 255),
        I32: (-(2**31), 2**31 - 1),
        U32: (0, 2**32 - 1),
        I64: (-(2**63), 2**63 - 1),
    }[slot.fmt]
    choices = [
        0,
        1,
        2,
        -1,
        old + 1,
        old - 1,
        info[0],
        info[1],
        old * 2,
        -old,
        rng.randint(-40000, 40000),
    ]
    if slot.bound:
        choices += [rng.randrange(slot.bound)] * 4 + [slot.bound, slot.bound - 1]
    return max(info[0], min(info[1], rng.choice(choices)))


def mutate(buf: bytes, rng: random.Random, slots: list[Slot] | None = None) -> tuple[bytes, str]:
    """One mutated copy of `buf` and a description of the mutation."""
    data = bytearray(buf)
    kind = rng.random()
    if kind < 0.15:
        for _ in range(rng.randint(1, 8)):
            p = rng.randrange(len(data))
            data[p] = rng.randrange(256)
        return bytes(data), "byte flips"
    if kind < 0.22:
        p = rng.randrange(0, len(data) - 4, 4)
        struct.pack_into("<i", data, p, rng.choice([0, -1, 1, 0x7FFFFFFF, rng.randrange(1 << 16)]))
        return bytes(data), f"word at {p}"
    if kind < 0.27:
        n = rng.randrange(len(data))
        return bytes(data[:n]), f"truncated to {n}"
    slots = field_slots(buf) if slots is None else slots
    done = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        slot = rng.choice(slots)
        old = struct.unpack_from(slot.fmt, data, slot.pos)[0]
        new = _edge_value(rng, slot, old)
        struct.pack_into(slot.fmt, data, slot.pos, new)
        done.append(f"{slot.what}: {old} -> {new}")
    return bytes(data), "; ".join(done)


# --- array lengths --------------------------------------------------------------------------------
#
# Shrinking a vector's length word keeps the flatbuffer well-formed (its elements stay inside the
# file): these mutations make files TFLite may well run, so they reach past the reader. Each picks
# a quantization table (mostly a per-channel one) and shortens its scales and / or zero points to
# one or none, or edits the graph's input / output list (emptied, its last entry dropped, an entry
# pointing at another tensor).

_QUANT_LENGTHS = (("scale", "zero point"), ("scale", "zero point"), ("scale",), ("zero point",))


def mutate_lengths(
    buf: bytes, rng: random.Random, slots: list[Slot] | None = None
) -> tuple[bytes, str]:
    """One copy of `buf` with a quantization table's array lengths or the graph's input / output
    list changed, and a description of the change."""
    slots = field_slots(buf) if slots is None else slots
    counts = {s.what: s for s in slots if s.what.endswith(" count")}
    quantized = sorted({w.split(" scale count")[0] for w in counts if w.endswith(" scale count")})
    wide = [t for t in quantized if counts[f"{t} scale count"].bound > 1]
    data, done = bytearray(buf), []

    def put(slot: Slot, value: int) -> None:
        done.append(f"{slot.what}: {struct.unpack_from(slot.fmt, data, slot.pos)[0]} -> {value}")
        struct.pack_into(slot.fmt, data, slot.pos, value)

    for _ in range(rng.choice([1, 1, 2])):
        if quantized and rng.random() < 0.6:
            tensor = rng.choice(wide if wide and rng.random() < 0.8 else quantized)
            length = rng.choice([1, 1, 0])
            for field in rng.choice(_QUANT_LENGTHS):
                if (slot := counts.get(f"{tensor} {field} count")) is not None:
                    put(slot, min(length, slot.bound))
            continue
        which = rng.choice(["graph inputs", "graph outputs", "graph outputs"])
        count = counts.get(f"{which} count")
        if count is None:
            continue
        n = struct.unpack_from(count.fmt, data, count.pos)[0]
        choice = rng.choice(["empty", "drop last", "another tensor"])
        if choice == "another tensor" and n:
            k = rng.randrange(n)  # drawn once: a draw per slot may match none
            entry = next(s for s in slots if s.what == f"{which}[{k}]")
            put(entry, rng.randrange(entry.bound))
        else:
            put(count, 0 if choice == "empty" else max(n - 1, 0))
    return bytes(data), "; ".join(done) or "unchanged"


# --- running one case ---------------------------------------------------------------------------

DOCUMENTED_EXITS = {0, 2, 3, 4, 5}


@dataclass
class Outcome:
    code: int
    stderr: str
    warnings: list[str]
    where: str = ""  # internal errors: the innermost mlitool frame of the traceback

    @property
    def internal(self) -> bool:
        return self.code == 1

    @property
    def ok(self) -> bool:
        lines = self.stderr.strip().splitlines()
        return (
            self.code in DOCUMENTED_EXITS
            and "Traceback" not in self.stderr
            and not self.warnings
            and (self.code == 0 or len(lines) == 1 or _refusal_list(self.code, lines))
        )


def _refusal_list(code: int, lines: list[str]) -> bool:
    """An unsupported model's refusals, one line per reason under a head line that counts them
    (README: `convert`), as `convert` prints them when the ops fail for several reasons."""
    head = re.search(r", for (\d+) reasons:$", lines[0])
    return (
        code == 4
        and head is not None
        and len(lines) == 1 + int(head.group(1))
        and all(line.startswith("  ") for line in lines[1:])
    )


def run_cli(args: list[str]) -> Outcome:
    """Run `mlitool ARGS` in this process; internal errors are run again with --debug to locate."""
    from mlitool.cli.entry import main

    def once(argv):
        err, out = io.StringIO(), io.StringIO()
        with (
            warnings.catch_warnings(record=True) as caught,
            contextlib.redirect_stderr(err),
            contextlib.redirect_stdout(out),
        ):
            warnings.simplefilter("always")
            try:
                main(argv)
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
        return code, err.getvalue(), [f"{w.category.__name__}: {w.message}" for w in caught]

    code, err, caught = once(list(args))
    outcome = Outcome(code, err, caught)
    if code == 1:
        _, debug_err, _ = once(["--debug", *args])
        frames = re.findall(r'File "[^"]*?(mlitool/[^"]+)", line (\d+), in (\w+)', debug_err)
        outcome.where = ":".join(frames[-1]) if frames else "?"
    return outcome


COMMANDS = ("inspect", "convert", "convert", "run-mli", "run-mli", "run-float", "run-tflite")


def case_args(command: str, model: Path, work: Path, npy: Path | None) -> list[str]:
    """The command line of one case (run falls back to convert for multi-input models)."""
    if command == "inspect":
        return ["inspect", str(model)]
    if command == "convert" or npy is None:
        return ["convert", str(model), "--out", str(work / "out"), "--name", "m"]
    return [
        "run",
        str(model),
        "--mode",
        command.split("-")[1],
        "--input",
        str(npy),
        "--npz",
        str(work / "out.npz"),
    ]


def leftovers(work: Path, code: int) -> str:
    """What a finished command left in `work` that it must not: temporary files, partial
    outputs (empty when all is well)."""
    names = sorted(str(p.relative_to(work)) for p in work.rglob("*"))
    if any(n.endswith(".tmp") for n in names):
        return f"temporary files left: {names}"
    out = [n for n in names if n.startswith("out")]
    if code != 0 and [n for n in out if n != "out"]:
        return f"outputs after failure {code}: {out}"
    if code == 0 and out not in (["out", "out/m.c", "out/m.h", "out/m.json"], ["out.npz"], []):
        return f"outputs after success: {out}"
    return ""


def run_case(
    model_name: str,
    original: bytes,
    slots: list[Slot],
    npy: Path | None,
    rng: random.Random,
    work: Path,
    mutator=mutate,
) -> tuple[list[str], str, Outcome, str]:
    """Mutate `original` (with `mutator`), write it into the empty directory `work` and run one
    command on it: (command line, mutation, outcome, what is wrong — empty when the case
    passed)."""
    command = rng.choice(COMMANDS)
    data, how = mutator(original, rng, slots)
    path = work / model_name
    path.write_bytes(data)
    argv = case_args(command, path, work, npy)
    outcome = run_cli(argv)
    path.unlink()
    problem = leftovers(work, outcome.code)
    if outcome.internal:
        problem = f"internal error at {outcome.where}"
    elif outcome.warnings:
        problem = f"warning: {outcome.warnings[0]}"
    elif not outcome.ok:
        problem = problem or f"exit {outcome.code}, stderr {outcome.stderr[-300:]!r}"
    return argv, how, outcome, problem


def sample_input(buf: bytes, path: Path, seed: int = 0) -> Path | None:
    """A .npy batch of 2 random real-valued samples for the model's single input (None when the
    model has several inputs)."""
    from mlitool.tflite.reader import parse_model

    g = parse_model(buf).main
    if len(g.inputs) != 1:
        return None
    shape = g.tensors[g.inputs[0]].shape
    rng = np.random.default_rng(seed)
    np.save(path, rng.uniform(-1, 1, (2, *shape)).astype(np.float32))
    return path
