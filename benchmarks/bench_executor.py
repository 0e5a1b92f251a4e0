"""Benchmark `mli` mode against the TFLite interpreter on real models (run by hand, not a test).

    python benchmarks/bench_executor.py [--batch 64] [--repeat 3] [--shared ../shared]

For vww_96_int8 and mobilenet_v1_int8: lowers the model to sa8 (MLI 2.0), runs `mli` mode on a
batch of random inputs (ROUND_MODE=CONVERGENT, FULL_ACCU=ON, the default `em` build) and the
TFLite interpreter (ai-edge-litert, one thread) with its reference kernels (BUILTIN_REF) and its
default (optimized) kernels, one invocation per sample, in the same process. Prints the best of
`--repeat` runs as time per inference and the ratios.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path


ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mlitool.execute.inputs import random_inputs  # noqa: E402
from mlitool.execute.mli_intops import Arith  # noqa: E402
from mlitool.execute.mli_bridge import run_mli  # noqa: E402
from mlitool.mli.lower import lower  # noqa: E402
from mlitool.tflite_reader import read_model  # noqa: E402

MODELS = {"vww_96_int8": "models/mlperf_tiny/vww_96_int8.tflite",
          "mobilenet_v1_int8": "models/embarc_mli/mobilenet_v1_int8.tflite"}


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


def bench(name: str, path: Path, batch: int, repeat: int) -> dict:
    graph = read_model(path).main
    mli = lower(graph, format="sa8", source=str(path))
    x = random_inputs(graph, batch, seed=0)
    arith = Arith("convergent", True)
    t_mli = best_of(lambda: run_mli(graph, mli, x, arith), repeat) / batch
    res = {"model": name, "mli": t_mli}
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
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--shared", type=Path, default=Path(os.environ.get("MLITOOL_SHARED",
                                                                       ROOT.parent / "shared")))
    args = ap.parse_args()
    print(f"batch {args.batch}, best of {args.repeat}; ms per inference")
    print(f"{'model':<20}{'mli':>10}{'tflite ref':>12}{'tflite opt':>12}"
          f"{'ref/mli':>10}{'opt/mli':>10}")
    for name, rel in MODELS.items():
        path = args.shared / rel
        if not path.exists():
            print(f"{name}: {path} is absent, skipped")
            continue
        r = bench(name, path, args.batch, args.repeat)
        ms = {k: v * 1e3 for k, v in r.items() if k != "model"}
        ref, opt = ms.get("tflite_ref"), ms.get("tflite_default")
        print(f"{name:<20}{ms['mli']:>10.2f}"
              + (f"{ref:>12.2f}{opt:>12.2f}{ref / ms['mli']:>10.2f}{opt / ms['mli']:>10.2f}"
                 if ref is not None else "   (ai-edge-litert not installed)"))


if __name__ == "__main__":
    main()
