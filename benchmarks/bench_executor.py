"""Benchmark the executor's three modes against the TFLite interpreter (run by hand, not a test).

    python benchmarks/bench_executor.py [--batch 32] [--repeat 3] [--shared ../shared]
                                        [--models vww_96_int8 mobilenet_v1_int8 mobilenet_v2_224]

For vww_96_int8, mobilenet_v1_int8 (../shared) and a generated 224x224 MobileNetV2-style int8
model (benchmarks/make_mobilenet_v2.py, 300 M MACs, written to a temporary file): runs `mli` mode
(sa8, MLI 2.0, the default vpx build: ROUND_MODE=UP, FULL_ACCU=OFF), `tflite` and `float` modes on
a batch of random inputs, in batches of the size `run` uses, and the TFLite interpreter
(ai-edge-litert, one thread) with its reference kernels (BUILTIN_REF) and its default (XNNPACK)
kernels, one invocation per sample, in the same process. Prints the best of `--repeat` runs as ms
per inference and each mode's ratio to LiteRT's default kernels (the issue's goal: <= 5x).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path


ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.make_mobilenet_v2 import build as build_mobilenet_v2  # noqa: E402
from mlitool.execute.graph import run_graph  # noqa: E402
from mlitool.execute.inputs import random_inputs  # noqa: E402
from mlitool.execute.mli_bridge import run_mli  # noqa: E402
from mlitool.execute.presets import arith_for  # noqa: E402
from mlitool.mli.lower import lower  # noqa: E402
from mlitool.parallel import batch_size, one_blas_thread  # noqa: E402
from mlitool.tflite_reader import read_model  # noqa: E402

MODELS = {"vww_96_int8": "models/mlperf_tiny/vww_96_int8.tflite",
          "mobilenet_v1_int8": "models/embarc_mli/mobilenet_v1_int8.tflite",
          "mobilenet_v2_224": None}              # generated
MODES = ("mli", "tflite", "float")


def best_of(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _interpreter(path: Path, resolver):
    from ai_edge_litert import interpreter as litert

    kwargs = {"num_threads": 1}
    if resolver is not None:
        kwargs["experimental_op_resolver_type"] = resolver
    it = litert.Interpreter(model_path=str(path), **kwargs)
    it.allocate_tensors()
    return it


def _batched(fn, x: dict, size: int):
    n = len(next(iter(x.values())))
    for s in range(0, n, size):
        fn({k: v[s:s + size] for k, v in x.items()})


def bench(name: str, path: Path, batch: int, repeat: int) -> dict:
    graph = read_model(path).main
    mli = lower(graph, format="sa8", source=str(path))
    x = random_inputs(graph, batch, seed=0)
    arith, size = arith_for("vpx"), batch_size(graph)
    res = {"model": name}
    for mode in MODES:
        step = ((lambda b: run_mli(graph, mli, b, arith)) if mode == "mli"
                else (lambda b, mode=mode: run_graph(graph, b, mode)))
        res[mode] = best_of(lambda step=step: _batched(step, x, size), repeat) / batch
    try:
        from ai_edge_litert import interpreter as litert
    except ImportError:
        return res
    inp = graph.inputs[0]
    for label, resolver in (("tflite_ref", litert.OpResolverType.BUILTIN_REF),
                            ("tflite_default", None)):
        it = _interpreter(path, resolver)

        def run_all(it=it):
            for s in range(batch):
                it.set_tensor(inp, x[inp][s])
                it.invoke()
        res[label] = best_of(run_all, repeat) / batch
    return res


def main() -> None:
    one_blas_thread()                       # as the CLI runs; LiteRT gets one thread too
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    ap.add_argument("--shared", type=Path, default=Path(os.environ.get("MLITOOL_SHARED",
                                                                       ROOT.parent / "shared")))
    args = ap.parse_args()
    print(f"{args.batch} samples, best of {args.repeat}; ms per inference; ratio = mode / "
          "LiteRT default (goal <= 5)")
    head = "".join(f"{m:>9}" for m in MODES) + f"{'LiteRT ref':>11}{'default':>9}" + "".join(
        f"{m + '/def':>11}" for m in MODES)
    print(f"{'model':<19}{head}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models:
            if MODELS[name] is None:
                path = Path(tmp) / f"{name}.tflite"
                path.write_bytes(build_mobilenet_v2())
            else:
                path = args.shared / MODELS[name]
            if not path.exists():
                print(f"{name}: {path} is absent, skipped")
                continue
            ms = {k: v * 1e3 for k, v in bench(name, path, args.batch, args.repeat).items()
                  if k != "model"}
            row = "".join(f"{ms[m]:>9.2f}" for m in MODES)
            if "tflite_ref" in ms:
                opt = ms["tflite_default"]
                row += f"{ms['tflite_ref']:>11.2f}{opt:>9.2f}" + "".join(
                    f"{ms[m] / opt:>10.1f}x" for m in MODES)
            else:
                row += "   (ai-edge-litert not installed)"
            print(f"{name:<19}{row}", flush=True)


if __name__ == "__main__":
    main()
