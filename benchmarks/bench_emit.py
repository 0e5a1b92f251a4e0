"""Benchmark the C emitter against `xxd -i` on the same weight bytes.

    python benchmarks/bench_emit.py [--mb 40] [--format sa8|fx16]

Builds an MliModel with about MB megabytes of weights (a stack of 3x3 convolutions with per-axis
SA8 or FX16 weights), times `emit` (NAME.h/.c/.json, fsynced) and `xxd -i` on the raw weight
bytes, and prints both times, the ratio and the peak resident memory of this process.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mlitool.emit.writer import emit
from mlitool.mli.types import ElType, MliLayer, MliModel, MliTensor, Role  # noqa: E402


def big_model(megabytes: float, fmt: str) -> MliModel:
    rng = np.random.default_rng(0)
    el = ElType.SA8 if fmt == "sa8" else ElType.FX16
    c = 256
    per_layer = 9 * c * c * el.dtype.itemsize
    layers_n = max(1, int(megabytes * 1e6 // per_layer))
    tensors, layers = {}, []

    def act(name, role):
        if el.is_sa:
            return MliTensor(
                name,
                role,
                (8, 8, c),
                el,
                "HWC",
                zero_point=np.array([-3], np.int16),
                scale=np.array([20000], np.int16),
                scale_frac_bits=np.array([22], np.int8),
            )
        return MliTensor(name, role, (8, 8, c), el, "HWC", frac_bits=10)

    tensors["in"] = act("in", Role.INPUT)
    prev = "in"
    for i in range(layers_n):
        w = rng.integers(
            np.iinfo(el.dtype).min,
            np.iinfo(el.dtype).max,
            (3, 3, c, c),
            dtype=el.dtype,
            endpoint=True,
        )
        if el.is_sa:
            tensors[f"w{i}"] = MliTensor(
                f"w{i}",
                Role.WEIGHTS,
                w.shape,
                el,
                "HWCN",
                data=w,
                dim=3,
                zero_point=np.zeros(c, np.int16),
                scale=rng.integers(16384, 32767, c).astype(np.int16),
                scale_frac_bits=np.full(c, 20, np.int8),
            )
        else:
            tensors[f"w{i}"] = MliTensor(
                f"w{i}", Role.WEIGHTS, w.shape, el, "HWCN", data=w, frac_bits=14
            )
        out = f"a{i}"
        tensors[out] = act(out, Role.OUTPUT if i == layers_n - 1 else Role.ACTIVATION)
        layers.append(
            MliLayer(
                i,
                "CONV_2D",
                "conv2d",
                "mli_krn_conv2d_hwcn_" + ("sa8_sa8_sa32" if el.is_sa else "fx16"),
                [prev],
                [out],
                weights=f"w{i}",
                cfg_type="mli_conv2d_cfg",
                cfg={
                    "relu_type": 0,
                    "padding_left": 1,
                    "padding_right": 1,
                    "padding_top": 1,
                    "padding_bottom": 1,
                },
            )
        )
        prev = out
    return MliModel("bench.tflite", "2.0", fmt, "hwc", tensors, layers, ["in"], [prev])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=40.0)
    ap.add_argument("--format", default="sa8", choices=["sa8", "fx16"])
    args = ap.parse_args()
    model = big_model(args.mb, args.format)
    weights = [t.data for t in model.tensors.values() if t.data is not None]
    nbytes = sum(w.nbytes for w in weights)
    base_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        emit(model, tmp, "bench")
        t_emit = time.perf_counter() - t0
        c_size = (Path(tmp) / "bench.c").stat().st_size
        raw = Path(tmp) / "weights.bin"
        with open(raw, "wb") as fh:
            for w in weights:
                fh.write(w.tobytes())
        t_xxd = float("nan")
        if shutil.which("xxd"):
            t0 = time.perf_counter()
            with open(Path(tmp) / "weights.xxd", "wb") as out:
                subprocess.run(["xxd", "-i", str(raw)], stdout=out, check=True)
            t_xxd = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"weights: {nbytes / 1e6:.1f} MB in {len(weights)} tensors ({args.format}); "
        f"NAME.c {c_size / 1e6:.1f} MB"
    )
    print(
        f"mlitool emit: {t_emit:.2f} s   xxd -i: {t_xxd:.2f} s   ratio xxd/emit: "
        f"{t_xxd / t_emit:.2f}x"
    )
    print(
        f"peak RSS: {peak:.0f} MB (after building the model: {base_rss:.0f} MB; "
        f"weights {nbytes / 2**20:.0f} MiB)"
    )


if __name__ == "__main__":
    main()
