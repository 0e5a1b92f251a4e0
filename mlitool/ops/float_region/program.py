"""A float region (`ir.REGION_OP`) compiled into a program of float32 operations, and its numpy
interpreter (the twin of the fallback C, `c_kernel.py`).

The program works on one float32 work area (`Program.arena` values, kept as their int32 bit
patterns in an SA32 tensor) and reads constants (weights, biases, constant operands: `consts`,
float32). An address a >= 0 is arena[a], a < 0 is consts[-a - 1]. An instruction is its
opcode and its operands, int32 words (`LENGTH[opcode]` in all):

- DEQ dst k n scale zp: arena[dst + i] = float(scale * (x - zp)) for the n elements x of int8
  input k (TFLite's DEQUANTIZE: one rounding of the exact product);
- FC dst x w b rows depth outs lo hi: per row and output, total = 0; total += x * w over the
  depth in order, each product and sum rounded to float32; then total + bias (0 without one),
  clamped to [lo, hi]: reference_ops::FullyConnected's order;
- MOVE dst src d0..d3 ss0..ss3 ds0..ds3: arena[dst + sum(i*ds)] = src[sum(i*ss)] over the 4-d
  index space d (SLICE, each input of a CONCATENATION; a RESHAPE moves nothing: it reads its
  input's storage); COPY dst src n where both sides are contiguous;
- BIN kind dst a b d0..d3 as0..as3 bs0..bs3 lo hi: ADD / SUB / MUL element by element, operands
  broadcast by stride 0, then the fused activation clamp min(max(r, lo), hi); FLAT kind dst a b
  n sa sb lo hi where each operand is contiguous (step 1) or one value (step 0);
- UN kind dst src n: LOGISTIC as reference_ops::Logistic (1 above 16.619047, expf(x) below -9,
  else 1 / (1 + expf(-x))) or TANH (tanhf): the C library's expf / tanhf, as TFLite's; RSQRT
  (1.0f / sqrtf(x)), SQRT, EXP (expf), RELU / RELU6 / RELU_N1_TO_1 (clamps);
- BIN / FLAT kinds beyond ADD / SUB / MUL: DIV (a / b) and SQUARED_DIFFERENCE ((a - b) squared,
  the difference rounded first); TRANSPOSE and BROADCAST_TO are MOVEs (permuted / 0 strides);
- MEAN dst src od0..od3 os0..os3 rd0..rd3 rs0..rs3: per output (index space od through source
  strides os), total = 0; total += each reduced element (index space rd, strides rs) in the
  input's order; then total / (float)count: reference_ops::Mean (sum, then one division);
- MM dst a b batch rows depth cols abs ars aks bbs bks bjs: per batch, row and column, total =
  0; total += a * b over the depth in order (strides: batch, row, depth of a; batch, depth,
  column of b; 0 broadcasts): reference_ops::BatchMatMul's order;
- LOAD dst k n: arena[dst + i] = the n float32 values of input k, a float tensor an earlier
  region carries (`carried` outputs: its arena values as they are, no QUANTIZE);
- SMAX dst src outer depth beta: reference_ops::Softmax per row: max, then expf((x - max) *
  beta) stored and summed from 0 in order, then each divided by the sum.

The region's QUANTIZEs are not instructions: each output is a later layer that quantizes its
arena values (`outputs`). Arena slots are reused once no later instruction reads them (first
fit in instruction order); outputs' slots live to the end. Every slot starts at 0.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import dataclasses
import functools

import numpy as np

from mlitool import ir
from mlitool.errors import UnsupportedError
from mlitool.ir import REGION_GRAPH
from mlitool.ops.island import arith

f32 = np.float32
DEQ, FC, MOVE, BIN, UN, COPY, FLAT, MEAN, MM, SMAX, LOAD = range(11)
LENGTH = (6, 10, 15, 19, 5, 4, 10, 19, 14, 6, 4)  # words of an instruction, by opcode
BIN_KINDS = {"ADD": 0, "SUB": 1, "MUL": 2, "DIV": 3, "SQUARED_DIFFERENCE": 4}
UN_KINDS = {
    "LOGISTIC": 0,
    "TANH": 1,
    "RSQRT": 2,
    "SQRT": 3,
    "EXP": 4,
    "RELU": 5,
    "RELU6": 6,
    "RELU_N1_TO_1": 7,
}
RANK = 4


@dataclasses.dataclass(frozen=True)
class Output:
    addr: int  # arena offset of the float values
    count: int
    scale: float
    zp: int
    carried: bool = False  # a float32 output read by a later region: its values, unquantized


@dataclasses.dataclass(frozen=True)
class Program:
    code: np.ndarray  # int32: the instructions one after the other
    consts: np.ndarray  # float32
    arena: int  # float32 slots
    outputs: tuple[Output, ...]  # one per region output, in the op's order
    count: int = 0  # instructions in `code`


def bits(v) -> int:
    return int(np.asarray([v], f32).view(np.int32)[0])


def _dims(shape) -> tuple[int, ...]:
    shape = tuple(int(d) for d in shape)
    return (1,) * (RANK - len(shape)) + shape


def _strides(shape) -> tuple[int, ...]:
    out, acc = [], 1
    for d in reversed(shape):
        out.append(acc)
        acc *= d
    return tuple(reversed(out))


def _bounds(op: ir.Op) -> tuple[int, int]:
    lo, hi = arith.act_bounds(str(op.options.get("fused_activation", "NONE")))
    return bits(lo), bits(hi)


class _Compiler:
    def __init__(self, graph: ir.Graph, op: ir.Op):
        self.g = graph
        self.sub: ir.Graph = op.options[REGION_GRAPH]
        self.inputs = list(op.inputs)
        self.consts: list[np.ndarray] = []
        self.const_at: dict[int, int] = {}
        self.n_consts = 0
        self.loc: dict[int, tuple] = {}  # tensor -> ("c", offset) or ("a", slot, offset)
        self.sizes: list[int] = []  # arena slots
        self.instrs: list[list] = []  # words; ("a", slot, off) / ("c", off) operands resolved later
        self.reads: list[list[int]] = []  # slots each instruction reads
        self.writes: list[int] = []
        self.outputs: list[tuple] = []  # (location, count, scale, zp, carried), in op order
        self.quantized: dict[int, tuple] = {}  # QUANTIZE output -> its entry of `outputs`

    def const(self, i: int) -> tuple:
        if i not in self.const_at:
            data = np.asarray(self.g.tensors[i].data, f32).reshape(-1)
            self.const_at[i] = self.n_consts
            self.consts.append(data)
            self.n_consts += data.size
        return ("c", self.const_at[i])

    def where(self, i: int) -> tuple:
        t = self.g.tensors[i]
        if t.data is not None:
            return self.const(i)
        return self.loc[i]

    def new(self, i: int) -> tuple:
        self.sizes.append(int(self.g.tensors[i].size))
        self.loc[i] = ("a", len(self.sizes) - 1, 0)
        return self.loc[i]

    def emit(self, words: list, reads: list[tuple], dst: tuple) -> None:
        self.instrs.append(words)
        self.reads.append([r[1] for r in reads if r[0] == "a"])
        self.writes.append(dst[1])

    def compile(self) -> Program:
        for k, i in enumerate(self.inputs):
            t = self.g.tensors[i]
            if t.dtype == "float32":  # carried from an earlier region
                dst = self.new(i)
                self.emit([LOAD, dst, k, t.size], [], dst)
        for op in self.sub.ops:
            getattr(self, "_" + op.type.lower())(op)
        self.outputs = [
            self.quantized.get(o) or (self.where(o), self.g.tensors[o].size, 0.0, 0, True)
            for o in self.sub.outputs
        ]
        return self._finish()

    # -- ops ------------------------------------------------------------------------------
    def _dequantize(self, op: ir.Op) -> None:
        x = self.g.tensors[op.inputs[0]]
        dst = self.new(op.outputs[0])
        k = self.inputs.index(x.index)
        scale, zp = float(x.quant.scale[0]), int(x.quant.zero_point[0])
        self.emit([DEQ, dst, k, x.size, bits(scale), zp], [], dst)

    def _quantize(self, op: ir.Op) -> None:
        y = self.g.tensors[op.outputs[0]]
        src = self.where(op.inputs[0])
        q = (src, y.size, float(y.quant.scale[0]), int(y.quant.zero_point[0]), False)
        self.quantized[y.index] = q

    def _reshape(self, op: ir.Op) -> None:
        self.loc[op.outputs[0]] = self.where(op.inputs[0])

    def _slice(self, op: ir.Op) -> None:
        x = self.g.tensors[op.inputs[0]]
        begin = [int(v) for v in np.asarray(self.g.tensors[op.inputs[1]].data).reshape(-1)]
        size = [int(v) for v in np.asarray(self.g.tensors[op.inputs[2]].data).reshape(-1)]
        size = [d - b if s < 0 else s for s, b, d in zip(size, begin, x.shape)]
        pad = RANK - len(begin)
        strides = _strides(_dims(x.shape))
        offset = sum(b * s for b, s in zip([0] * pad + begin, strides))
        src = self.where(op.inputs[0])
        dims = _dims(size)
        dst = self.new(op.outputs[0])
        self.move(dst, _shift(src, offset), dims, strides, _strides(dims))

    def move(self, dst: tuple, src: tuple, dims, ss, ds) -> None:
        """MOVE, or COPY where source and destination are both contiguous."""
        if _contiguous(dims, ss) and _contiguous(dims, ds):
            self.emit([COPY, dst, src, int(np.prod(dims))], [src], dst)
        else:
            self.emit([MOVE, dst, src, *dims, *ss, *ds], [src], dst)

    def _concatenation(self, op: ir.Op) -> None:
        out = self.g.tensors[op.outputs[0]]
        rank = len(out.shape)
        axis = int(op.options.get("axis", 0)) % rank + (RANK - rank)
        ds = _strides(_dims(out.shape))
        dst = self.new(op.outputs[0])
        at = 0
        for i in op.inputs:
            dims = _dims(self.g.tensors[i].shape)
            self.move(_shift(dst, at * ds[axis]), self.where(i), dims, _strides(dims), ds)
            at += dims[axis]

    def _fully_connected(self, op: ir.Op) -> None:
        w_t = self.g.tensors[op.inputs[1]]
        outs, depth = int(w_t.shape[0]), int(np.prod(w_t.shape[1:]))
        x = self.where(op.inputs[0])
        rows = self.g.tensors[op.inputs[0]].size // depth
        w = self.const(op.inputs[1])
        has_bias = len(op.inputs) > 2 and op.inputs[2] >= 0
        b = self.const(op.inputs[2]) if has_bias else None
        dst = self.new(op.outputs[0])
        lo, hi = _bounds(op)
        self.emit([FC, dst, x, w, b, rows, depth, outs, lo, hi], [x], dst)

    def _binary(self, op: ir.Op) -> None:
        out = _dims(self.g.tensors[op.outputs[0]].shape)
        ops, strides = [], []
        for i in op.inputs:
            dims = _dims(self.g.tensors[i].shape)
            ops.append(self.where(i))
            strides.append(tuple(0 if d == 1 else s for d, s in zip(dims, _strides(dims))))
        dst = self.new(op.outputs[0])
        lo, hi = _bounds(op)
        steps = [_step(out, st) for st in strides]
        if None not in steps:
            n = int(np.prod(out))
            words = [FLAT, BIN_KINDS[op.type], dst, ops[0], ops[1], n, *steps]
        else:
            words = [BIN, BIN_KINDS[op.type], dst, ops[0], ops[1], *out, *strides[0], *strides[1]]
        self.emit([*words, lo, hi], ops, dst)

    _add = _sub = _mul = _div = _squared_difference = _binary

    def _transpose(self, op: ir.Op) -> None:
        x = self.g.tensors[op.inputs[0]]
        perm = [int(v) for v in np.asarray(self.g.tensors[op.inputs[1]].data).reshape(-1)]
        rank = len(perm)
        pad = RANK - rank
        xs = _strides(_dims(x.shape))
        perm4 = list(range(pad)) + [p % rank + pad for p in perm]
        dims = _dims(self.g.tensors[op.outputs[0]].shape)
        src = self.where(op.inputs[0])
        dst = self.new(op.outputs[0])
        self.move(dst, src, dims, tuple(xs[p] for p in perm4), _strides(dims))

    def _broadcast_to(self, op: ir.Op) -> None:
        dims = _dims(self.g.tensors[op.outputs[0]].shape)
        x = _dims(self.g.tensors[op.inputs[0]].shape)
        ss = tuple(0 if d == 1 else s for d, s in zip(x, _strides(x)))
        src = self.where(op.inputs[0])
        dst = self.new(op.outputs[0])
        self.move(dst, src, dims, ss, _strides(dims))

    def _mean(self, op: ir.Op) -> None:
        x = self.g.tensors[op.inputs[0]]
        rank = len(x.shape)
        axes = {
            int(a) % rank + RANK - rank
            for a in np.asarray(self.g.tensors[op.inputs[1]].data).reshape(-1)
        }
        dims, strides = _dims(x.shape), _strides(_dims(x.shape))
        od = tuple(1 if k in axes else d for k, d in enumerate(dims))
        rd = tuple(d if k in axes else 1 for k, d in enumerate(dims))
        src = self.where(op.inputs[0])
        dst = self.new(op.outputs[0])
        self.emit([MEAN, dst, src, *od, *strides, *rd, *strides], [src], dst)

    def _batch_matmul(self, op: ir.Op) -> None:
        ta, tb = (self.g.tensors[i] for i in op.inputs[:2])
        out = self.g.tensors[op.outputs[0]]
        adj_x, adj_y = bool(op.options.get("adj_x")), bool(op.options.get("adj_y"))
        rows, depth = (ta.shape[-1], ta.shape[-2]) if adj_x else (ta.shape[-2], ta.shape[-1])
        cols = tb.shape[-2] if adj_y else tb.shape[-1]
        batch = int(np.prod(out.shape[:-2], dtype=np.int64))
        # element strides of a (row, depth) and b (depth, column) in their own storage
        a_rk = (1, ta.shape[-1]) if adj_x else (ta.shape[-1], 1)
        b_kj = (1, tb.shape[-1]) if adj_y else (tb.shape[-1], 1)
        a_b = 0 if int(np.prod(ta.shape[:-2], dtype=np.int64)) == 1 else rows * depth
        b_b = 0 if int(np.prod(tb.shape[:-2], dtype=np.int64)) == 1 else depth * cols
        a, b = self.where(op.inputs[0]), self.where(op.inputs[1])
        dst = self.new(op.outputs[0])
        words = [MM, dst, a, b, batch, int(rows), int(depth), int(cols), a_b, *a_rk, b_b, *b_kj]
        self.emit(words, [a, b], dst)

    def _softmax(self, op: ir.Op) -> None:
        x = self.g.tensors[op.inputs[0]]
        depth = int(x.shape[-1])
        src = self.where(op.inputs[0])
        dst = self.new(op.outputs[0])
        beta = float(op.options.get("beta", 1.0))
        self.emit([SMAX, dst, src, x.size // depth, depth, bits(beta)], [src], dst)

    def _unary(self, op: ir.Op) -> None:
        src = self.where(op.inputs[0])
        dst = self.new(op.outputs[0])
        n = self.g.tensors[op.outputs[0]].size
        self.emit([UN, UN_KINDS[op.type], dst, src, n], [src], dst)

    _logistic = _tanh = _rsqrt = _sqrt = _exp = _relu = _relu6 = _relu_n1_to_1 = _unary

    # -- arena ----------------------------------------------------------------------------
    def _finish(self) -> Program:
        last = {}  # the last instruction that reads or writes each slot
        for k, slots in enumerate(self.reads):
            for s in (*slots, self.writes[k]):
                last[s] = k
        end = len(self.instrs)
        for src, *_ in self.outputs:
            if src[0] == "a":
                last[src[1]] = end
        at: dict[int, int] = {}
        free: list[tuple[int, int]] = []  # (start, size), sorted
        top = 0
        for k, dst in enumerate(self.writes):
            if dst not in at:  # else a CONCATENATION's next input
                at[dst], top, free = _place(self.sizes[dst], top, free)
            for s in {*self.reads[k], dst}:
                if last[s] == k:  # its last use
                    free = _release(free, at[s], self.sizes[s])
        code = np.array([_word(w, at) for words in self.instrs for w in _checked(words)], np.int32)
        # one 0 when the region has no constant: the C takes a tensor of at least one element
        consts = np.concatenate(self.consts) if self.consts else np.zeros(1, f32)
        outputs = []
        for src, n, scale, zp, carried in self.outputs:
            if src[0] != "a":
                raise UnsupportedError("a float region's output is a constant")
            outputs.append(Output(_word(src, at), n, scale, zp, carried))
        arena = max(top, 1)
        return Program(code, consts.astype(f32), arena, tuple(outputs), len(self.instrs))


def _shift(loc: tuple, offset: int) -> tuple:
    return (*loc[:-1], loc[-1] + offset)


def _place(size: int, top: int, free: list) -> tuple[int, int, list]:
    """(offset, new top, new free list) of a slot of `size`: the first free span it fits."""
    for j, (start, room) in enumerate(free):
        if room >= size:
            rest = [(start + size, room - size)] if room > size else []
            return start, top, free[:j] + rest + free[j + 1 :]
    return top, top + size, free


def _release(free: list, start: int, size: int) -> list:
    """`free` with [start, start + size) added, neighbours merged."""
    spans = sorted([*free, (start, size)])
    merged: list[tuple[int, int]] = []
    for s, n in spans:
        if merged and merged[-1][0] + merged[-1][1] == s:
            merged[-1] = (merged[-1][0], merged[-1][1] + n)
        else:
            merged.append((s, n))
    return merged


def _checked(words: list) -> list:
    if len(words) != LENGTH[words[0]]:
        raise AssertionError(f"instruction {words[0]} of {len(words)} words")
    return words


def _contiguous(dims, strides) -> bool:
    """Whether the 4-d index space `dims` through `strides` is 0, 1, 2, ... in order."""
    return bool(np.array_equal(_index(dims, strides), np.arange(int(np.prod(dims)))))


def _step(dims, strides) -> int | None:
    """1 for an operand read in order, 0 for one value read everywhere, else None."""
    if _contiguous(dims, strides):
        return 1
    return 0 if not any(strides) else None


def _word(w, at: dict[int, int]) -> int:
    if w is None:  # no bias
        return -(2**31)
    if isinstance(w, tuple):
        if w[0] == "c":
            return -w[1] - 1
        return at[w[1]] + w[2]
    return int(w)


def compile_region(graph: ir.Graph, op: ir.Op) -> Program:
    """The program of float region `op` of `graph`."""
    return _Compiler(graph, op).compile()


# -- the numpy interpreter ----------------------------------------------------------------
@functools.cache
def _libm(name: str):
    path = ctypes.util.find_library("m")
    fn = getattr(ctypes.CDLL(path) if path else ctypes.CDLL(None), name)
    fn.argtypes, fn.restype = [ctypes.c_float], ctypes.c_float
    return np.frompyfunc(fn, 1, 1)


def libm(name: str, x: np.ndarray) -> np.ndarray:
    """The C library's float function `name` (expf, tanhf) of every element: what the C calls."""
    x = np.asarray(x, f32)
    with np.errstate(all="ignore"):  # expf's overflow to inf is TFLite's too
        return np.asarray(_libm(name)(x), dtype=f32).reshape(x.shape)


def logistic(x: np.ndarray) -> np.ndarray:
    """reference_ops::Logistic on float32."""
    x = np.asarray(x, f32)
    one = f32(1)
    with np.errstate(all="ignore"):
        mid = (one / (one + libm("expf", -x))).astype(f32)
        return np.where(
            x > f32(16.619047164916992188), one, np.where(x < f32(-9), libm("expf", x), mid)
        )


def unary(kind: int, v: np.ndarray) -> np.ndarray:
    """UN `kind` of float32 values `v`, as TFLite's float32 kernels (the C library's expf,
    tanhf; sqrtf and the division correctly rounded)."""
    one = f32(1)
    if kind == 0:
        return logistic(v)
    if kind == 1:
        return libm("tanhf", v)
    if kind == 2:
        return (one / np.sqrt(v.astype(f32))).astype(f32)
    if kind == 3:
        return np.sqrt(v.astype(f32)).astype(f32)
    if kind == 4:
        return libm("expf", v)
    lo, hi = {5: (0, np.inf), 6: (0, 6), 7: (-1, 1)}[kind]
    return _clamp(v, bits(lo), bits(hi))


def binary(kind: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """BIN / FLAT `kind` of float32 operands, one rounding per operation."""
    if kind == 0:
        return (a + b).astype(f32)
    if kind == 1:
        return (a - b).astype(f32)
    if kind == 2:
        return (a * b).astype(f32)
    if kind == 3:
        return (a / b).astype(f32)
    d = (a - b).astype(f32)
    return (d * d).astype(f32)


def _index(dims, strides) -> np.ndarray:
    grid = np.indices(tuple(int(d) for d in dims)).reshape(RANK, -1)
    return (np.asarray(strides, np.int64)[:, None] * grid).sum(axis=0)


def run_program(prog: Program, xs: list[np.ndarray]) -> np.ndarray:
    """The arena [samples, prog.arena] after the program on int8 inputs `xs` (samples first)."""
    n = max(len(x) for x in xs)
    arena = np.zeros((n, prog.arena), f32)
    consts = prog.consts

    def ld(a: int, idx: np.ndarray) -> np.ndarray:
        return arena[:, a + idx] if a >= 0 else np.broadcast_to(consts[-a - 1 + idx], (n, idx.size))

    pc = 0
    while pc < len(prog.code):
        w = [int(v) for v in prog.code[pc : pc + LENGTH[int(prog.code[pc])]]]
        pc += len(w)
        with np.errstate(all="ignore"):
            if w[0] == DEQ:
                dst, k, cnt, scale, zp = w[1:6]
                table = arith_dequantized(scale, zp)
                x = np.broadcast_to(np.asarray(xs[k]).reshape(len(xs[k]), -1), (n, cnt))
                arena[:, dst : dst + cnt] = table[x.astype(np.int16) + 128]
            elif w[0] == FC:
                dst, xa, wa, ba, rows, depth, outs, lo, hi = w[1:10]
                x = ld(xa, np.arange(rows * depth)).reshape(n, rows, depth)
                wt = consts[-wa - 1 : -wa - 1 + outs * depth].reshape(outs, depth)
                acc = np.zeros((n, rows, outs), f32)
                for d in range(depth):
                    acc = (acc + (x[:, :, d, None] * wt[None, None, :, d])).astype(f32)
                bias = f32(0) if ba == -(2**31) else consts[-ba - 1 : -ba - 1 + outs]
                acc = _clamp((acc + bias).astype(f32), lo, hi)
                arena[:, dst : dst + rows * outs] = acc.reshape(n, -1)
            elif w[0] == MOVE:
                dst, src = w[1:3]
                dims, ss, ds = w[3:7], w[7:11], w[11:15]
                arena[:, dst + _index(dims, ds)] = ld(src, _index(dims, ss))
            elif w[0] == COPY:
                dst, src, cnt = w[1:4]
                arena[:, dst : dst + cnt] = ld(src, np.arange(cnt))
            elif w[0] == FLAT:
                kind, dst, a, b, cnt, sa, sb, lo, hi = w[1:10]
                va, vb = ld(a, np.arange(cnt) * sa), ld(b, np.arange(cnt) * sb)
                arena[:, dst : dst + cnt] = _clamp(binary(kind, va, vb), lo, hi)
            elif w[0] == BIN:
                kind, dst, a, b = w[1:5]
                dims, sa, sb, (lo, hi) = w[5:9], w[9:13], w[13:17], w[17:19]
                va, vb = ld(a, _index(dims, sa)), ld(b, _index(dims, sb))
                arena[:, dst : dst + va.shape[1]] = _clamp(binary(kind, va, vb), lo, hi)
            elif w[0] == UN:
                kind, dst, src, cnt = w[1:5]
                arena[:, dst : dst + cnt] = unary(kind, ld(src, np.arange(cnt)))
            elif w[0] == LOAD:
                dst, k, cnt = w[1:4]
                x = np.asarray(xs[k], f32)
                arena[:, dst : dst + cnt] = np.broadcast_to(x.reshape(len(x), -1), (n, cnt))
            elif w[0] == MEAN:
                dst, src = w[1:3]
                outs, terms = _index(w[3:7], w[7:11]), _index(w[11:15], w[15:19])
                total = np.zeros((n, outs.size), f32)
                for t in terms:  # in the input's order, one rounding per sum
                    total = (total + ld(src, outs + t)).astype(f32)
                arena[:, dst : dst + outs.size] = (total / f32(terms.size)).astype(f32)
            elif w[0] == MM:
                dst, a, b, batch, rows, depth, cols, abs_, ars, aks, bbs, bks, bjs = w[1:14]
                bi = np.arange(batch)[:, None, None]
                i, j = np.arange(rows)[None, :, None], np.arange(cols)[None, None, :]
                total = np.zeros((n, batch, rows, cols), f32)
                for k in range(depth):
                    ai = (bi * abs_ + i * ars + k * aks + 0 * j).reshape(-1)
                    bj = (bi * bbs + k * bks + j * bjs + 0 * i).reshape(-1)
                    p = (ld(a, ai) * ld(b, bj)).astype(f32).reshape(total.shape)
                    total = (total + p).astype(f32)
                arena[:, dst : dst + total[0].size] = total.reshape(n, -1)
            else:
                dst, src, outer, depth, beta = w[1:6]
                arena[:, dst : dst + outer * depth] = softmax(
                    ld(src, np.arange(outer * depth)).reshape(n, outer, depth), beta
                ).reshape(n, -1)
    return arena


def softmax(x: np.ndarray, beta_bits: int) -> np.ndarray:
    """reference_ops::Softmax on float32 rows (last axis): max, expf((x - max) * beta), their
    sum from 0 in order, each divided by it."""
    beta = np.array([beta_bits], np.int32).view(f32)[0]
    top = x.max(axis=-1, keepdims=True)
    e = libm("expf", ((x - top).astype(f32) * beta).astype(f32))
    total = np.zeros(x.shape[:-1], f32)
    for c in range(x.shape[-1]):
        total = (total + e[..., c]).astype(f32)
    return (e / total[..., None]).astype(f32)


def _clamp(v: np.ndarray, lo: int, hi: int) -> np.ndarray:
    lo_f, hi_f = np.array([lo, hi], np.int32).view(f32)
    v = np.where(v < lo_f, lo_f, v)
    return np.where(v > hi_f, hi_f, v).astype(f32)


def arith_dequantized(scale_bits: int, zp: int) -> np.ndarray:
    """DEQUANTIZE of every int8 value -128..127 in float32 (scale from its bit pattern)."""
    scale = np.array([scale_bits], np.int32).view(f32)[0]
    return (scale * (np.arange(-128, 128) - zp).astype(f32)).astype(f32)


def quantize_output(arena: np.ndarray, out: Output) -> np.ndarray:
    """The int8 values of output `out`: TFLite's QUANTIZE of its arena values (a carried
    output: the float32 values themselves)."""
    if out.carried:
        return arena[:, out.addr : out.addr + out.count].astype(f32)
    return arith.quantize(arena[:, out.addr : out.addr + out.count], out.scale, out.zp)
