"""Benchmark the numpy executor's three modes against the TFLite interpreter (run by hand, not a test).

    python benchmarks/bench_executor.py [--batch 32] [--repeat 3] [--shared ../shared]
                                        [--models vww_96_int8 mobilenet_v1_int8 mobilenet_v2_224]

Models: vww_96_int8 and mobilenet_v1_int8 (shared/models) and a 224x224 MobileNetV2-style int8
model that `benchmarks/make_mobilenet_v2.py` writes into a temporary directory. For each: the
executor's `float` and `tflite` modes and `mli` mode (lowered to sa8 for MLI 2.0) with the `em`
build (ROUND_MODE=CONVERGENT, FULL_ACCU=ON) and the default `vpx` build (UP, FULL_ACCU=OFF), on one
batch of random inputs; the TFLite interpreter (ai-edge-litert, one thread) with its reference
kernels (BUILTIN_REF) and its default kernels (XNNPACK), one invocation per sample. All in the
same process, one BLAS thread as the CLI runs. Prints the best of `--repeat` runs as ms per
inference and each mode's time as a multiple of LiteRT's default kernels.
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
sys.path.insert(0, str(ROOT / "benchmarks"))

from mlitool.plumbing.parallel import one_blas_thread  # noqa: E402

one_blas_thread()  # as the CLI, before numpy loads

from mlitool import op_families  # noqa: E402
from mlitool.execute.mli.bridge import run_mli  # noqa: E402
from mlitool.execute.mli.presets import BUILD_PRESETS  # noqa: E402
from mlitool.execute.reference.graph import run_graph  # noqa: E402
from mlitool.execute.reference.inputs import random_inputs  # noqa: E402
from mlitool.mli.lower.driver import lower  # noqa: E402
from mlitool.tflite.reader import read_model  # noqa: E402

op_families.load()  # an entry point: the op registry

SHARED_MODELS = {
    "vww_96_int8": "models/mlperf_tiny/vww_96_int8.tflite",
    "mobilenet_v1_int8": "models/embarc_mli/mobilenet_v1_int8.tflite",
}
GENERATED = "mobilenet_v2_224"
MODES = ("float", "tflite", "mli em", "mli vpx")
LITERT = ("litert ref", "litert default")


def best_of(fn, repeat: int) -> float:
    fn()  # warm-up: caches, first-call imports
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


def bench(path: Path, batch: int, repeat: int) -> dict[str, float]:
    """Seconds per inference of each executor mode and of LiteRT's two kernel sets."""
    graph = read_model(path).main
    mli = lower(graph, format="sa8", source=str(path))
    x = random_inputs(graph, batch, seed=0)
    res = {
        "float": best_of(lambda: run_graph(graph, x, "float"), repeat) / batch,
        "tflite": best_of(lambda: run_graph(graph, x, "tflite"), repeat) / batch,
    }
    for build in ("em", "vpx"):
        arith = BUILD_PRESETS[build]
        res[f"mli {build}"] = (
            best_of(lambda arith=arith: run_mli(graph, mli, x, arith), repeat) / batch
        )
    try:
        from ai_edge_litert import interpreter as litert
    except ImportError:
        return res
    inp = graph.inputs[0]
    for label, resolver in zip(LITERT, (litert.OpResolverType.BUILTIN_REF, None)):
        it = _interpreter(path, resolver)

        def run_all(it=it):
            for s in range(batch):
                it.set_tensor(inp, x[inp][s])
                it.invoke()

        res[label] = best_of(run_all, repeat) / batch
    return res


def model_paths(shared: Path, names: list[str], tmp: Path) -> dict[str, Path]:
    paths = {}
    for name in names:
        if name == GENERATED:
            import make_mobilenet_v2

            paths[name] = tmp / f"{GENERATED}.tflite"
            paths[name].write_bytes(make_mobilenet_v2.build())
        elif name in SHARED_MODELS:
            paths[name] = shared / SHARED_MODELS[name]
        else:
            raise SystemExit(
                f"unknown model {name!r}: choose from {', '.join([*SHARED_MODELS, GENERATED])}"
            )
    return paths


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--shared",
        type=Path,
        default=Path(os.environ.get("MLITOOL_SHARED", ROOT.parent / "shared")),
    )
    ap.add_argument("--models", nargs="+", default=[*SHARED_MODELS, GENERATED])
    args = ap.parse_args()
    cols = (*MODES, *LITERT)
    print(
        f"batch {args.batch}, best of {args.repeat}; ms per inference "
        "(x: multiple of LiteRT default)"
    )
    print(f"{'model':<20}" + "".join(f"{c:>16}" for c in cols))
    with tempfile.TemporaryDirectory() as tmp:
        for name, path in model_paths(args.shared, args.models, Path(tmp)).items():
            if not path.exists():
                print(f"{name}: {path} is absent, skipped")
                continue
            r = {k: v * 1e3 for k, v in bench(path, args.batch, args.repeat).items()}
            base = r.get("litert default")
            cells = []
            for c in cols:
                if c not in r:
                    cells.append(f"{'-':>16}")
                elif base is None:
                    cells.append(f"{r[c]:>16.2f}")
                else:
                    cells.append(f"{r[c]:>8.2f} ({r[c] / base:>4.1f}x)")
            print(f"{name:<20}" + "".join(cells), flush=True)


if __name__ == "__main__":
    main()
