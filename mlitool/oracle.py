"""The TFLite interpreter (`ai-edge-litert`) as an independent oracle for `verify --oracle litert`.

It runs the interpreter's reference kernels (OpResolverType.BUILTIN_REF, one thread), the
arithmetic `tflite` mode reproduces, keeping every intermediate tensor (see `_interpreter` for
the op versions the reference resolver lacks), or its builtin kernels for a model with an op
the reference resolver lacks (ELU, CEIL, ROUND) or an int8 / int16 SUM (LiteRT's reference SUM
of integers is not its builtin kernel's, which is TFLite Micro's arithmetic). Optional: when the
package is missing, `available()` says why and verify reports it instead of failing.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from mlitool import ir

ORACLES = ("litert",)


def available() -> tuple[bool, str]:
    try:
        import ai_edge_litert.interpreter  # noqa: F401
    except ImportError as exc:
        return False, (
            f"the litert oracle needs the ai-edge-litert package ({exc}); "
            "install it with `pip install ai-edge-litert`"
        )
    return True, "TFLite interpreter (ai-edge-litert), reference kernels, 1 thread"


def cannot_load(path: str | Path) -> str | None:
    """Why the interpreter refuses the file (None when it loads it), in one line: a file TFLite
    Micro runs may still be refused (TFLite Micro's person detection: 1-D biases with
    quantized_dimension 3), and verify goes on with its other references."""
    try:
        _interpreter(path).allocate_tensors()
    except (ValueError, RuntimeError) as exc:
        return f"LiteRT cannot load {Path(path).name}: {_reason(str(exc))}"
    return None


def _reason(text: str) -> str:
    """LiteRT's message, shortened: it runs its errors together, one per tensor, with no
    separator; keep the first and count those that start the same."""
    text = " ".join(text.split())
    first = text.split(". ")[0]
    repeats = text.count(first) if first else 1
    if repeats > 1:
        text = text[: text.index(first, len(first))]
    text = re.sub(r"\.(?=[A-Z])", ". ", text).strip()  # "Was 3.Tensor 33" -> "Was 3. Tensor 33"
    text = text if len(text) <= 300 else text[:299] + "…"
    return f"{text} ({repeats} such errors)" if repeats > 1 else text


def _interpreter(path: str | Path):
    return interpreter(path)[0]


def interpreter(path: str | Path):
    """(interpreter, which kernels it runs: "reference", with the op versions lowered, or
    "builtin ..."). The interpreter on LiteRT's reference kernels. Its reference resolver registers some ops
    only up to an older version than the converter writes (int8 TILE is version 3, registered
    up to 2; DEPTH_TO_SPACE); an op version only gates registration (one kernel serves every
    version), so the model is loaded with that op's version lowered until the resolver has it.
    An op it lacks in every version (ELU) runs on the builtin kernels, without delegates; so
    does a model with an int8 / int16 SUM (`_integer_sum`)."""
    from ai_edge_litert import interpreter as litert

    def make(content: bytes, resolver):
        return litert.Interpreter(
            model_content=content,
            experimental_op_resolver_type=resolver,
            experimental_preserve_all_tensors=True,
            num_threads=1,
        )

    content = bytearray(Path(path).read_bytes())
    if _integer_sum(bytes(content)):
        it = make(bytes(content), litert.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
        return it, "builtin (LiteRT's reference int8 / int16 SUM is not its builtin one)"
    lowered: dict[str, int] = {}
    for _ in range(64):  # at most one step down per op and version
        try:
            it = make(bytes(content), litert.OpResolverType.BUILTIN_REF)
            done = ", ".join(f"{op} as version {v}" for op, v in sorted(lowered.items()))
            return it, "reference" + (f" ({done})" if done else "")
        except ValueError as exc:
            missing = re.search(r"builtin opcode '(\w+)' version '(\d+)'", str(exc))
            if missing is None:
                raise
            op, version = missing.group(1), int(missing.group(2))
            if version <= 1 or not _lower_version(content, op, version - 1):
                break
            lowered[op] = version - 1
    content = bytearray(Path(path).read_bytes())
    it = make(bytes(content), litert.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    return it, f"builtin ({op} has no reference kernel)"


def _integer_sum(content: bytes) -> bool:
    """The model holds a SUM of int8 or int16 values and no MAC op. LiteRT's reference SUM of
    them is not the arithmetic of its builtin kernel, which TFLite Micro's is (QuantizedMeanOrSum:
    a sum in int32, requantized once), so such a model runs on the builtin kernels, as one with an
    op the reference resolver lacks does. Not a model with a convolution or fully connected
    layer: LiteRT's builtin int8 MAC kernels round 1 LSB away from the reference ones (and
    TFLite Micro's) on some elements, and the global average pool such models end with is a SUM
    the two resolvers compute alike where the sum's scale is the mean's."""
    import tflite

    model = tflite.Model.GetRootAsModel(content, 0)
    sums = {
        i
        for i in range(model.OperatorCodesLength())
        if max(model.OperatorCodes(i).BuiltinCode(), model.OperatorCodes(i).DeprecatedBuiltinCode())
        == tflite.BuiltinOperator.SUM
    }
    mac_codes = {
        tflite.BuiltinOperator.CONV_2D,
        tflite.BuiltinOperator.DEPTHWISE_CONV_2D,
        tflite.BuiltinOperator.FULLY_CONNECTED,
        tflite.BuiltinOperator.TRANSPOSE_CONV,
    }
    codes = [
        max(model.OperatorCodes(i).BuiltinCode(), model.OperatorCodes(i).DeprecatedBuiltinCode())
        for i in range(model.OperatorCodesLength())
    ]
    if mac_codes.intersection(codes):
        return False
    integer = (tflite.TensorType.INT8, tflite.TensorType.INT16)
    for g in range(model.SubgraphsLength()):
        sub = model.Subgraphs(g)
        for k in range(sub.OperatorsLength()):
            op = sub.Operators(k)
            if op.OpcodeIndex() in sums and sub.Tensors(op.Inputs(0)).Type() in integer:
                return True
    return False


def _lower_version(content: bytearray, op: str, version: int) -> bool:
    """Set the version of op code `op` in the model bytes to `version` (in place); False when the
    model stores no version field to change."""
    import struct

    import tflite

    code = getattr(tflite.BuiltinOperator, op, None)
    model = tflite.Model.GetRootAsModel(content, 0)
    changed = False
    for i in range(model.OperatorCodesLength()):
        c = model.OperatorCodes(i)
        if code is not None and max(c.BuiltinCode(), c.DeprecatedBuiltinCode()) == code:
            field = c._tab.Offset(8)  # OperatorCode.version
            if field:
                struct.pack_into("<i", content, c._tab.Pos + field, version)
                changed = True
    return changed


def _file_tensor_count(path: str | Path) -> int:
    """How many tensors the file's main subgraph holds (indices 0..N-1 in the interpreter)."""
    import tflite

    model = tflite.Model.GetRootAsModel(Path(path).read_bytes(), 0)
    return model.Subgraphs(0).TensorsLength()


def run_litert(
    path: str | Path, graph: ir.Graph, inputs: dict[int, np.ndarray], tensors: list[int]
) -> dict[int, np.ndarray]:
    """{tensor index: batch} for those of `tensors` the file has, one interpreter invocation per
    sample. `inputs` are in the model's own dtypes ({input tensor index: batch}). Variable
    tensors (LSTM state) are reset before every sample: each sample is one inference, as in
    mlitool's executors; except in a model whose state persists between inferences (SVDF's
    memory, `ir.Graph.is_stream`): its samples are consecutive invocations from one reset, as
    mlitool runs them."""
    it = _interpreter(path)
    it.allocate_tensors()
    n = next(iter(inputs.values())).shape[0]
    # tensors a rewrite at import added (mlitool.passes: dilated, quantize_early...) are not in
    # the file: left out. Their indices follow the file's, where the interpreter keeps its own
    # temporaries (a convolution's im2col buffer): only the file's tensors count.
    in_file = set(range(_file_tensor_count(path)))
    res: dict[int, list] = {t: [] for t in tensors if t in in_file}
    stream = graph.is_stream
    it.reset_all_variables()
    for s in range(n):
        for idx, a in inputs.items():
            want = tuple(graph.tensors[idx].shape)
            it.set_tensor(idx, np.ascontiguousarray(a[s]).reshape(want))
        if not stream:
            it.reset_all_variables()
        it.invoke()
        for t in res:
            res[t].append(it.get_tensor(t).copy())
    return {t: np.stack(v) for t, v in res.items()}
