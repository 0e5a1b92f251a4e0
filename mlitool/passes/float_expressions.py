"""Float islands of several element-wise ops in int8 models, as one op on the int8 tensors.

PyTorch's PT2E quantization (litert-torch) leaves the ops it has no int8 pattern for in float32
between int8 ops: every residual ADD (DEQUANTIZE -> ADD -> QUANTIZE, the float sum also passed on
to the next block's ADD, unquantized), SiLU (x * LOGISTIC(x) of one DEQUANTIZE), hard-sigmoid
((x + 3) * 1/6), squeeze-excite products. The float tensors between have no int8 parameters, so
lowering would ask for calibration. `fuse_float_expressions` replaces what each QUANTIZE of such
an island computes by one op (`ir.ISLAND_OP`) on the int8 tensors the island's DEQUANTIZEs read:

- one int8 input (SiLU, hard-sigmoid, LOGISTIC, TANH...): the island is a function of 256 values;
  it carries the 256 int8 results (`ISLAND_TABLE`) tflite mode computes through the island's own
  ops (DEQUANTIZE in float32, TFLite's float kernels, QUANTIZE), so the int8 table is identical
  to the float island on every input.
- several int8 inputs, combined by ADD / SUB / MUL (fused activation allowed) where each op has
  at least one side that depends on one int8 input alone, or by an ADD_N of such sides (TFLite's
  float32 sum in input order: ADD steps): per input, the 256 float32 values of
  that side (`ISLAND_TERMS`: its DEQUANTIZE and any unary ops on it, tabulated as above), and
  the float32 ops in the island's order (`ISLAND_STEPS`); the op then runs TFLite's float32
  arithmetic (an IEEE-754 operation per step, each rounded) and QUANTIZE's division and rounding.
  A float sum the island passes on to the next island unquantized is recomputed there from the
  same int8 inputs: float32 arithmetic gives the same bits again.

A constant operand is one value or one per channel (the last axis: a BatchNorm PT2E leaves
after a concatenation, ((x - mean) * a) * b + c): one of several values is its own term (the op
reads it; its values are no function of an int8 input), so the island takes the float32 path.
Other islands (a float FULLY_CONNECTED, inputs of different shapes) are left as they are (still
refused). It runs after `islands.fuse_float_islands`
(single fallback ops). A DEQUANTIZE or float op goes only when every reader of its output goes
too (with an island). The new op keeps the index of the island's last float op (or of the QUANTIZE
when that op stays or is taken) as its `origin`, and lists the ops it stands for
(`REWRITTEN_FROM`, `inspect`, with how it runs: `ISLAND_RUNS`).
"""

from __future__ import annotations

import dataclasses

from mlitool import ir
from mlitool.ir import ISLAND_OP, ISLAND_RUNS, ISLAND_STEPS, ISLAND_TABLE, ISLAND_TERMS
from mlitool.passes.context import PassContext
from mlitool.passes.islands import _per_tensor_int8, _table, one_value
from mlitool.passes.upsampling import REWRITTEN_FROM

# The fused activations TFLite's float kernels apply (the island's clamps, ops/island/arith.py).
FLOAT_ACTIVATIONS = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1", "RELU_0_TO_1")
# Ops combining the values of several int8 inputs (one float32 operation each).
COMBINING = ("ADD", "SUB", "MUL")
# Element-wise float ops an island may hold (those of one int8 input only are tabulated by
# tflite mode's own kernels; other inputs: constants of one value).
ELEMENTWISE = frozenset(
    {
        *COMBINING,
        "ADD_N", "DIV", "MAXIMUM", "MINIMUM", "SQUARED_DIFFERENCE", "LOGISTIC", "TANH", "HARD_SWISH",
        "RELU", "RELU6", "RELU_N1_TO_1", "RELU_0_TO_1", "LEAKY_RELU", "ABS", "NEG", "EXP",
        "LOG", "SQRT", "RSQRT", "SQUARE", "GELU", "ELU",
    }
)  # fmt: skip


def _const_term(t: ir.Tensor) -> bool:
    """A float32 constant an island may hold: one value (in any shape), or one per channel (the
    last axis)."""
    per_channel = len(t.shape) >= 1 and t.size == t.shape[-1]
    return t.dtype == "float32" and (one_value(t) or per_channel)


def _per_channel(t: ir.Tensor) -> bool:
    """A constant of several values, one per channel: no function of an int8 input alone."""
    return t.data is not None and not one_value(t)


def fuse_float_expressions(graph: ir.Graph, ctx: PassContext) -> ir.Graph:
    """`graph` with each QUANTIZE of a float island of element-wise ops replaced by one
    `ISLAND_OP` on the island's int8 inputs (`ctx.rewritten`); the same graph when there is
    none."""
    finder = _Finder(graph)
    islands = []
    for q in graph.ops:
        if q.type != "QUANTIZE" or not _per_tensor_int8(graph.tensors[q.outputs[0]]):
            continue
        found = finder.island(q)
        if found is not None:
            islands.append(found)
    if not islands:
        return graph
    covered = {op.index for isl in islands for op in isl.ops}
    consumers, outputs = graph.consumers(), set(graph.outputs)
    # an op goes when every reader of its outputs goes too: a float sum read by an op no island
    # takes stays, and so do the ops it reads (until nothing more stays)
    removed = set(covered)
    while True:
        stays = {
            op.index
            for op in graph.ops
            if op.index in removed
            and op.type != "QUANTIZE"
            and any(
                o in outputs or any(r.index not in removed for r in consumers.get(o, []))
                for o in op.outputs
            )
        }
        if not stays:
            break
        removed -= stays
    placed: dict[int, ir.Op] = {}
    for isl in islands:
        top = isl.top if isl.top.index in removed and isl.top.index not in placed else isl.quant
        new = isl.op(graph, top)
        placed[top.index] = new
        ctx.rewritten[new.label] = list(new.options[REWRITTEN_FROM])
    ops = [placed.get(op.index, op) for op in graph.ops]
    ops = [op for op in ops if op.index in placed or op.index not in removed]
    return dataclasses.replace(graph, ops=ops)


@dataclasses.dataclass
class _Island:
    quant: ir.Op  # its QUANTIZE
    top: ir.Op  # the float op the QUANTIZE reads
    ops: list[ir.Op]  # every op it stands for, in graph order
    inputs: list[int]  # int8 tensors, one per term
    terms: list[int]  # float tensors of one int8 input each, tabulated
    steps: list[tuple[str, str]]  # (ADD | SUB | RSUB | MUL, activation) per term after the first

    def op(self, graph: ir.Graph, at: ir.Op) -> ir.Op:
        # the op's own label first (inspect shows the rest as rewritten into it)
        labels = (at.label, *(o.label for o in self.ops if o.index != at.index))
        opts: dict = {REWRITTEN_FROM: labels}
        kinds = sorted({o.type for o in self.ops} - {"DEQUANTIZE", "QUANTIZE"})
        if len(self.terms) == 1:
            table = _table(graph, (*self._chain(graph, self.top.outputs[0]), self.quant))
            opts[ISLAND_TABLE] = tuple(int(v) for v in table)
            opts[ISLAND_RUNS] = (
                f"int8 table of 256 ({', '.join(kinds)} of one int8 input: identical to the "
                "float island on every input)"
            )
        else:
            opts[ISLAND_TERMS] = tuple(
                ()  # a constant term: the op reads the constant itself
                if graph.tensors[t].data is not None
                else tuple(float(v) for v in _table(graph, self._chain(graph, t)))
                for t in self.terms
            )
            opts[ISLAND_STEPS] = tuple(self.steps)
            n_in = sum(1 for t in self.terms if graph.tensors[t].data is None)
            consts = len(self.terms) - n_in
            also = f" and {consts} constants (one value, or one per channel)" if consts else ""
            opts[ISLAND_RUNS] = (
                f"float32 {', '.join(kinds)} of {n_in} int8 input{'s' * (n_in != 1)}{also} "
                "as TFLite "
                "(tables of their float values, float32 arithmetic, QUANTIZE's rounding)"
            )
        return ir.Op(
            at.index,
            ISLAND_OP,
            tuple(self.inputs),
            self.quant.outputs,
            opts,
            origin=at,
        )

    def _chain(self, graph: ir.Graph, t: int) -> list[ir.Op]:
        """The ops computing float tensor `t` from its one int8 input, in an order they run
        (its DEQUANTIZE first)."""
        prod = {o: op for op in self.ops for o in op.outputs}
        order: list[ir.Op] = []
        seen: set[int] = set()

        def visit(i: int) -> None:
            op = prod.get(i)
            if op is None or op.index in seen:
                return
            seen.add(op.index)
            for j in op.inputs:
                visit(j)
            order.append(op)

        visit(t)
        return order


class _Finder:
    def __init__(self, graph: ir.Graph):
        self.g = graph
        self.prod = {o: op for op in graph.ops for o in op.outputs}
        self.outputs = set(graph.outputs)
        self.memo: dict[int, frozenset | None] = {}
        self.channel_memo: dict[int, bool] = {}

    def leaves(self, t: int) -> frozenset | None:
        """The int8 tensors float tensor `t` is computed from (through DEQUANTIZE and
        element-wise ops; constants of one value), or None when it is not such a tensor."""
        if t not in self.memo:
            self.memo[t] = self._leaves(t)
        return self.memo[t]

    def _leaves(self, t: int) -> frozenset | None:
        tensor = self.g.tensors[t]
        if tensor.dtype != "float32":
            return None
        if tensor.data is not None:  # one value (ZEROS_LIKE folded: of any shape), or per channel
            return frozenset() if _const_term(tensor) else None
        op = self.prod.get(t)
        if op is None or t in self.outputs or len(op.outputs) != 1:
            return None
        if op.type == "DEQUANTIZE":
            x = self.g.tensors[op.inputs[0]]
            return frozenset({x.index}) if _per_tensor_int8(x) and x.data is None else None
        if op.type not in ELEMENTWISE:
            return None
        found: frozenset = frozenset()
        for i in op.inputs:
            sub = self.leaves(i)
            t_in = self.g.tensors[i]
            if sub is None or (t_in.data is None and tuple(t_in.shape) != tuple(tensor.shape)):
                return None
            if _per_channel(t_in) and t_in.size != tensor.shape[-1]:
                return None  # a constant of several values: one per channel (the last axis)
            found |= sub
        return found

    def per_channel(self, t: int) -> bool:
        """Float tensor `t` depends on a constant of several values (one per channel), so it is
        no function of its int8 inputs alone (no 256-entry table)."""
        if t not in self.channel_memo:
            tensor, op = self.g.tensors[t], self.prod.get(t)
            if tensor.data is not None:
                found = _per_channel(tensor)
            elif op is None or op.type == "DEQUANTIZE":
                found = False
            else:
                found = any(self.per_channel(i) for i in op.inputs)
            self.channel_memo[t] = found
        return self.channel_memo[t]

    def term(self, t: int) -> bool:
        """`t` is one term of an island: a function of one int8 input alone (tabulated), or a
        constant (one value, or one per channel)."""
        if self.g.tensors[t].data is not None:
            return self.leaves(t) is not None
        return len(self.leaves(t)) == 1 and not self.per_channel(t)

    def island(self, q: ir.Op) -> _Island | None:
        f = q.inputs[0]
        top = self.prod.get(f)
        if top is None or top.type == "DEQUANTIZE":
            return None
        leaves = self.leaves(f)
        if not leaves:
            return None
        linear = self._linear(f)
        if linear is None:
            return None
        terms, steps = linear
        # a constant term is its own input (the op reads its values); others their int8 tensor
        inputs = [
            t if self.g.tensors[t].data is not None else next(iter(self.leaves(t))) for t in terms
        ]
        ops: dict[int, ir.Op] = {q.index: q}
        self._collect(f, ops)
        return _Island(q, top, sorted(ops.values(), key=lambda o: o.index), inputs, terms, steps)

    def _collect(self, t: int, ops: dict[int, ir.Op]) -> None:
        op = self.prod.get(t)
        if op is None or op.index in ops:
            return
        ops[op.index] = op
        if op.type != "DEQUANTIZE":
            for i in op.inputs:
                self._collect(i, ops)

    def _linear(self, t: int) -> tuple[list[int], list[tuple[str, str]]] | None:
        """`t` as term, then (op, term) steps: the tensors of one int8 input each and how they
        combine, left to right; None when an op combines two sides of several inputs each (or
        a constant with such a side)."""
        if self.term(t):
            return [t], []
        op = self.prod.get(t)
        if op is None:
            return None
        if op.type == "ADD_N":  # TFLite's float kernel: 0 + in0 + in1 + ..., in order
            if not all(self.term(i) for i in op.inputs):
                return None
            return list(op.inputs), [("ADD", "NONE")] * (len(op.inputs) - 1)
        if op.type not in COMBINING or len(op.inputs) != 2:
            return None
        act = str(op.options.get("fused_activation", "NONE"))
        if act not in FLOAT_ACTIVATIONS:  # one TFLite's float kernels do not apply
            return None
        a, b = op.inputs
        for rest, term, kind in ((a, b, op.type), (b, a, "RSUB" if op.type == "SUB" else op.type)):
            if self.term(term):
                inner = self._linear(rest)
                if inner is None:
                    return None
                return [*inner[0], term], [*inner[1], (kind, act)]
        return None
