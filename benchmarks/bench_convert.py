"""Benchmark the whole `mlitool convert` (read -> lower -> emit) against `xxd -i` on the same bytes.

    python benchmarks/bench_convert.py [--reps 5] [--format sa8] [--mli 2.0] [--keep DIR]

Models: the largest .tflite under ../shared/models (or $MLITOOL_SHARED/models; skipped with a
message when absent) and a generated int8 model with about 44 MB of per-channel weights (CONV_2D and
FULLY_CONNECTED layers, fixed seed, written to a temporary directory).

For each model it prints:
- the median over --reps runs of `mlitool.convert.convert` in this process, and the wall-clock
  time of one `python -m mlitool convert` subprocess (interpreter start-up and imports included);
- the median over --reps runs of `xxd -i` on the model's constant buffers, concatenated into one
  file, and the ratio xxd / mlitool (target: >= 2);
- peak memory: the tracemalloc peak of one in-process convert (Python and numpy allocations) and
  the ru_maxrss of the subprocess, against the target 3 x weight bytes + 150 MB.
"""

from __future__ import annotations

import argparse
import importlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path

import flatbuffers
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mlitool.convert import EmitOptions, convert  # noqa: E402
from mlitool.pipeline import ModelOptions  # noqa: E402

SHARED_MODELS = Path(os.environ.get("MLITOOL_SHARED", ROOT.parent / "shared")) / "models"
MB = 1e6
MIB = 2**20


# --------------------------------------------------------------------------------------------------
# The generated model


def _m(name: str):
    return importlib.import_module(f"tflite.{name}")


@dataclass
class _Tensor:
    name: str
    shape: tuple[int, ...]
    dtype: int  # TensorType: 9 int8, 2 int32
    scale: np.ndarray
    zero_point: np.ndarray
    axis: int = 0
    data: bytes | None = None


# (kind, output channels, stride) after an input of [1, 16, 16, 128]; conv kernels are 3x3.
LARGE_LAYERS = [
    ("conv", 256, 2),
    ("conv", 512, 2),
    ("conv", 1024, 1),
    ("conv", 1024, 2),
    ("reshape", None, None),
    ("fc", 4096, None),
    ("fc", 2048, None),
    ("fc", 1000, None),
]
_CONV_2D, _FULLY_CONNECTED, _RESHAPE = 3, 9, 22


def large_int8_model(seed: int = 0) -> bytes:
    """A full-integer int8 model with ~44 MB of weights: four 3x3 CONV_2D (SAME, ReLU) and three
    FULLY_CONNECTED layers, per-channel int8 weights, int32 biases. Same bytes for the same seed."""
    rng = np.random.default_rng(seed)
    act_scale, act_zp = 0.05, -3
    tensors: list[_Tensor] = []
    ops: list[tuple[int, list[int], list[int], tuple]] = []  # (opcode, ins, outs, options)

    def add(t: _Tensor) -> int:
        tensors.append(t)
        return len(tensors) - 1

    def act(name, shape):
        return add(_Tensor(name, shape, 9, np.array([act_scale]), np.array([act_zp])))

    shape = (1, 16, 16, 128)
    x = act("input", shape)
    for i, (kind, cout, stride) in enumerate(LARGE_LAYERS):
        if kind == "reshape":
            new = (1, int(np.prod(shape[1:])))
            s = add(
                _Tensor(
                    f"reshape{i}/shape",
                    (2,),
                    2,
                    np.array([]),
                    np.array([]),
                    data=np.array(new, np.int32).tobytes(),
                )
            )
            y = act(f"reshape{i}", new)
            ops.append((_RESHAPE, [x, s], [y], ("reshape", new)))
            x, shape = y, new
            continue
        cin = shape[-1]
        w_shape = (cout, 3, 3, cin) if kind == "conv" else (cout, cin)
        w = rng.integers(-127, 128, w_shape, dtype=np.int8)
        w_scale = rng.uniform(0.0005, 0.004, cout).astype(np.float32).astype(np.float64)
        b_scale = (np.float32(act_scale) * w_scale.astype(np.float32)).astype(np.float64)
        b = rng.integers(-20000, 20000, cout, dtype=np.int32)
        wi = add(
            _Tensor(
                f"layer{i}/weights", w_shape, 9, w_scale, np.zeros(cout, np.int64), data=w.tobytes()
            )
        )
        bi = add(
            _Tensor(
                f"layer{i}/bias", (cout,), 2, b_scale, np.zeros(cout, np.int64), data=b.tobytes()
            )
        )
        if kind == "conv":
            shape = (1, -(-shape[1] // stride), -(-shape[2] // stride), cout)
            opts = ("conv", stride)
        else:
            shape = (1, cout)
            opts = ("fc",)
        y = act(f"layer{i}/out" if i < len(LARGE_LAYERS) - 1 else "output", shape)
        ops.append((_CONV_2D if kind == "conv" else _FULLY_CONNECTED, [x, wi, bi], [y], opts))
        x = y
    return _flatbuffer(tensors, ops, inputs=[0], outputs=[x])


def _flatbuffer(tensors: list[_Tensor], ops: list, inputs: list[int], outputs: list[int]) -> bytes:
    Model, SubGraph, Tensor, Operator = _m("Model"), _m("SubGraph"), _m("Tensor"), _m("Operator")
    OperatorCode, Buffer, QP = _m("OperatorCode"), _m("Buffer"), _m("QuantizationParameters")
    Conv, FC, Reshape = _m("Conv2DOptions"), _m("FullyConnectedOptions"), _m("ReshapeOptions")
    total = sum(len(t.data) for t in tensors if t.data is not None)
    b = flatbuffers.Builder(total + (1 << 16))

    def ivec(values, dtype=np.int32):
        return b.CreateNumpyVector(np.asarray(values, dtype=dtype))

    def table_vec(start_fn, offsets):
        start_fn(b, len(offsets))
        for o in reversed(offsets):
            b.PrependUOffsetTRelative(o)
        return b.EndVector()

    buffers, buffer_of = [], {}
    Buffer.Start(b)
    buffers.append(Buffer.End(b))  # buffer 0: the empty sentinel
    for ti, t in enumerate(tensors):
        if t.data is None:
            continue
        b.StartVector(1, len(t.data), 16)  # 16-byte aligned, as TFLite writes them
        b.head -= len(t.data)
        b.Bytes[b.head : b.head + len(t.data)] = t.data
        data = b.EndVector()
        Buffer.Start(b)
        Buffer.AddData(b, data)
        buffer_of[ti] = len(buffers)
        buffers.append(Buffer.End(b))

    t_offs = []
    for ti, t in enumerate(tensors):
        name, shape = b.CreateString(t.name), ivec(t.shape)
        quant = None
        if t.scale.size:
            scale = b.CreateNumpyVector(t.scale.astype(np.float32))
            zp = ivec(t.zero_point, np.int64)
            QP.Start(b)
            QP.AddScale(b, scale)
            QP.AddZeroPoint(b, zp)
            QP.AddQuantizedDimension(b, t.axis)
            quant = QP.End(b)
        Tensor.Start(b)
        Tensor.AddShape(b, shape)
        Tensor.AddType(b, t.dtype)
        Tensor.AddBuffer(b, buffer_of.get(ti, 0))
        Tensor.AddName(b, name)
        if quant is not None:
            Tensor.AddQuantization(b, quant)
        t_offs.append(Tensor.End(b))

    codes = sorted({op[0] for op in ops})
    op_offs = []
    for opcode, ins, outs, opts in ops:
        in_vec, out_vec = ivec(ins), ivec(outs)
        if opts[0] == "conv":
            Conv.Start(b)
            Conv.AddPadding(b, 0)  # SAME
            Conv.AddStrideW(b, opts[1])
            Conv.AddStrideH(b, opts[1])
            Conv.AddFusedActivationFunction(b, 1)  # RELU
            kind, opt = 1, Conv.End(b)
        elif opts[0] == "fc":
            FC.Start(b)
            FC.AddFusedActivationFunction(b, 1)
            kind, opt = 8, FC.End(b)
        else:
            new_shape = ivec(opts[1])
            Reshape.Start(b)
            Reshape.AddNewShape(b, new_shape)
            kind, opt = 17, Reshape.End(b)
        Operator.Start(b)
        Operator.AddOpcodeIndex(b, codes.index(opcode))
        Operator.AddInputs(b, in_vec)
        Operator.AddOutputs(b, out_vec)
        Operator.AddBuiltinOptionsType(b, kind)
        Operator.AddBuiltinOptions(b, opt)
        op_offs.append(Operator.End(b))

    sg_name = b.CreateString("main")
    t_vec = table_vec(SubGraph.StartTensorsVector, t_offs)
    o_vec = table_vec(SubGraph.StartOperatorsVector, op_offs)
    in_vec, out_vec = ivec(inputs), ivec(outputs)
    SubGraph.Start(b)
    SubGraph.AddTensors(b, t_vec)
    SubGraph.AddInputs(b, in_vec)
    SubGraph.AddOutputs(b, out_vec)
    SubGraph.AddOperators(b, o_vec)
    SubGraph.AddName(b, sg_name)
    subgraph = SubGraph.End(b)
    code_offs = []
    for c in codes:
        OperatorCode.Start(b)
        OperatorCode.AddDeprecatedBuiltinCode(b, c)
        OperatorCode.AddBuiltinCode(b, c)
        OperatorCode.AddVersion(b, 1)
        code_offs.append(OperatorCode.End(b))
    desc = b.CreateString("mlitool benchmark model")
    code_vec = table_vec(Model.StartOperatorCodesVector, code_offs)
    sg_vec = table_vec(Model.StartSubgraphsVector, [subgraph])
    buf_vec = table_vec(Model.StartBuffersVector, buffers)
    Model.Start(b)
    Model.AddVersion(b, 3)
    Model.AddOperatorCodes(b, code_vec)
    Model.AddSubgraphs(b, sg_vec)
    Model.AddDescription(b, desc)
    Model.AddBuffers(b, buf_vec)
    b.Finish(Model.End(b), file_identifier=b"TFL3")
    return bytes(b.Output())


# --------------------------------------------------------------------------------------------------
# Measurements


def constant_bytes(model_path: Path) -> bytes:
    """The model's constant buffers, concatenated in buffer order (what `xxd -i` gets)."""
    buf = model_path.read_bytes()
    model = _m("Model").Model.GetRootAs(buf, 0)
    parts = []
    for i in range(model.BuffersLength()):
        data = model.Buffers(i).DataAsNumpy()
        if not isinstance(data, int):
            parts.append(data.tobytes())
    return b"".join(parts)


def median_time(fn, reps: int) -> tuple[float, float]:
    """(median, fastest) wall seconds of `reps` calls."""
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), min(times)


# Runs a command and prints "wall-seconds ru_maxrss-KiB" of it. Linux counts the memory a child
# had before exec into its ru_maxrss, and a child of this (large) process starts as a copy of it;
# this small launcher makes the measured process start from a few MB instead.
_LAUNCHER = """import os, subprocess, sys, time
t0 = time.perf_counter()
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
_, status, usage = os.wait4(p.pid, 0)
print(time.perf_counter() - t0, usage.ru_maxrss, os.waitstatus_to_exitcode(status))
"""


def cli_run(model_path: Path, out: Path, fmt: str, mli: str) -> tuple[float, float]:
    """(wall seconds, ru_maxrss MiB) of one `python -m mlitool convert` subprocess."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    cmd = [
        sys.executable,
        "-m",
        "mlitool",
        "convert",
        str(model_path),
        "--out",
        str(out),
        "--format",
        fmt,
        "--mli",
        mli,
    ]
    res = subprocess.run(
        [sys.executable, "-S", "-c", _LAUNCHER, *cmd],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    wall, maxrss_kib, code = res.stdout.split()
    if int(code) != 0:
        raise SystemExit(f"mlitool convert failed ({code}): {res.stderr.strip()}")
    return float(wall), int(maxrss_kib) / 1024  # Linux: ru_maxrss is in KiB


def traced_peak(model_path: Path, opts: ModelOptions, out: EmitOptions) -> float:
    """tracemalloc peak (MiB) of one in-process convert."""
    tracemalloc.start()
    try:
        convert(model_path, opts, out)
        return tracemalloc.get_traced_memory()[1] / MIB
    finally:
        tracemalloc.stop()


def bench(label: str, model_path: Path, work: Path, args) -> bool:
    weights = constant_bytes(model_path)
    raw = work / f"{model_path.stem}.weights.bin"
    raw.write_bytes(weights)
    out = work / f"{model_path.stem}.out"
    opts, emit_opts = ModelOptions(format=args.format, mli=args.mli), EmitOptions(out=out)
    convert(model_path, opts, emit_opts)  # warm-up: imports, lookup tables, page cache
    t_convert, best_convert = median_time(lambda: convert(model_path, opts, emit_opts), args.reps)
    t_cli, rss = cli_run(model_path, work / f"{model_path.stem}.cli", args.format, args.mli)

    def xxd():
        with open(work / "weights.xxd", "wb") as fh:
            subprocess.run(["xxd", "-i", str(raw)], stdout=fh, check=True)

    xxd()
    t_xxd, best_xxd = median_time(xxd, args.reps)
    traced = traced_peak(model_path, opts, emit_opts)
    c_bytes = sum(p.stat().st_size for p in out.iterdir())
    limit = 3 * len(weights) / MIB + 150
    ratio, ratio_cli = t_xxd / t_convert, t_xxd / t_cli
    ok_time, ok_mem = ratio >= 2, max(traced, rss) <= limit
    print(
        f"\n== {label}: {model_path.name} ({model_path.stat().st_size / MB:.2f} MB file, "
        f"{len(weights) / MB:.2f} MB constant data; --format {args.format} --mli {args.mli})"
    )
    print(f"  output (.h + .c + .json)      {c_bytes / MB:9.2f} MB")
    print(
        f"  mlitool convert, in-process   {t_convert:9.3f} s   (median of {args.reps}; "
        f"fastest {best_convert:.3f} s)"
    )
    print(f"  mlitool convert, CLI process  {t_cli:9.3f} s   (one run, start-up included)")
    print(
        f"  xxd -i on the constant bytes  {t_xxd:9.3f} s   (median of {args.reps}; "
        f"fastest {best_xxd:.3f} s)"
    )
    print(
        f"  ratio xxd / convert           {ratio:9.2f} x  (medians; fastest runs "
        f"{best_xxd / best_convert:.2f} x; CLI {ratio_cli:.2f} x)  target >= 2: "
        f"{'met' if ok_time else 'NOT MET'}"
    )
    print(
        f"  peak memory: tracemalloc {traced:.1f} MiB, CLI ru_maxrss {rss:.1f} MiB; "
        f"target < 3 x weights + 150 MiB = {limit:.1f} MiB: {'met' if ok_mem else 'NOT MET'}"
    )
    return ok_time and ok_mem


def largest_shared_model() -> Path | None:
    if not SHARED_MODELS.is_dir():
        return None
    models = sorted(SHARED_MODELS.rglob("*.tflite"), key=lambda p: (-p.stat().st_size, str(p)))
    return models[0] if models else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--format", default="sa8", choices=["sa8", "fx16", "fx8w16d", "fx8"])
    ap.add_argument("--mli", default="2.0", choices=["2.0", "1.1", "1.0"])
    ap.add_argument("--keep", type=Path, help="write the generated model and outputs here")
    args = ap.parse_args()
    if not shutil.which("xxd"):
        print("xxd is not installed: nothing to compare against")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        results = []
        shared = largest_shared_model()
        if shared is None:
            print(f"skipped the largest shared model: {SHARED_MODELS} is absent")
        else:
            results.append(bench("largest shared model", shared, work, args))
        big = work / "large_int8.tflite"
        big.write_bytes(large_int8_model())
        results.append(bench("generated large model", big, work, args))
    print("\nall targets met" if all(results) else "\nsome targets NOT met")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
