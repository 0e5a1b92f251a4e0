"""The layer kinds table (`mlitool.mli.kinds`): its C functions are those the real MLI headers
declare, its runners are the executor's, its config structs and weights are those of the layers
lowering makes, its MAC counts are the products a convolution makes, and fallback kernels enter
it through `register_fallback`."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import mlitool
import mlitool.execute
from mlitool.mli import fallback, kinds
from mlitool.mli.kinds import KINDS, PER_ELEMENT, kind_of, register_fallback
from mlitool.mli.lower.driver import lower
from mlitool.mli.types import MliLayer
from mlitool.tflite.reader import read_model
from tests.support.paths import SAMPLES, shared_models, shared_path

# The MLI releases whose headers declare each C-name field's functions.
RELEASES = {
    "mli2": ("embarc_mli_2.0.2",),
    "mli1": ("embarc_mli_1.0", "embarc_mli_1.1"),
    "mli1_sa8": ("embarc_mli_1.1",),
}
NOT_MLI = {"", "mlitool_fallback"}  # no call (views), mlitool's own C


def _declared(release: str) -> str:
    include = shared_path("mli", release, "include")
    return "\n".join(p.read_text(errors="replace") for p in sorted(include.rglob("*.h")))


@pytest.mark.parametrize("field", sorted(RELEASES))
def test_every_c_function_is_declared_by_its_mli_release(field):
    for release in RELEASES[field]:
        headers = _declared(release)
        missing = sorted(
            f"{k.name}: {fn}"
            for k in KINDS.values()
            for fn in getattr(k, field).values()
            if fn not in NOT_MLI and not re.search(rf"\b{fn}\s*\(", headers)
        )
        assert missing == [], release


def test_the_executor_runs_the_kinds_the_table_names_it_for():
    modules = {}
    for info in pkgutil.walk_packages(mlitool.execute.__path__, "mlitool.execute."):
        module = importlib.import_module(info.name)
        if isinstance(getattr(module, "LAYER_RUNNERS", None), dict):
            modules[info.name] = module.LAYER_RUNNERS
    for name, runners in modules.items():
        for kind, run in runners.items():
            assert KINDS[kind].runner_module == name, kind
            assert KINDS[kind].runner() is run, kind
    named = {k.name for k in KINDS.values() if k.runner_module}
    assert named == {kind for runners in modules.values() for kind in runners}
    # no runner: views (the walker moves them itself) and the generic fallback kind
    assert {k.name for k in KINDS.values() if k.runner() is None} == {"view", "fallback"}


MODELS = (
    sorted(SAMPLES.glob("*int8.tflite"))
    + sorted((SAMPLES / "ops").glob("*.tflite"))
    + shared_models("**/*int8.tflite")
)


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
@pytest.mark.parametrize("path", MODELS, ids=lambda p: Path(p).stem)
def test_lowered_layers_carry_what_their_kind_says(path, fmt):
    graph = read_model(path).main
    ranges = {t.index: (-1.0, 1.0) for t in graph.tensors}
    model = lower(graph, format=fmt, weights_only=False, ranges=ranges)
    for layer in model.layers:
        entry = kind_of(layer)
        where = f"layer {layer.index} ({layer.kind} {layer.kernel})"
        assert entry is not None, where
        assert layer.cfg_type is None or layer.cfg_type in entry.cfg_structs, where
        assert bool(layer.weights) == entry.mac, where
        if layer.kind != "fallback":
            assert layer.kernel in entry.mli2.values(), where


def _conv_products(w_ohwi, stride, in_hw=(9, 9)):
    """The most products one output of a transposed convolution sums: every input pixel
    scatters its Kh x Kw x Ci products at `stride` (counted, not derived)."""
    _, kh, kw, ci = w_ohwi
    (sh, sw), (h, wd) = stride, in_hw
    count = np.zeros(((h - 1) * sh + kh, (wd - 1) * sw + kw), np.int64)
    for i in range(h):
        for j in range(wd):
            count[i * sh : i * sh + kh, j * sw : j * sw + kw] += ci
    return int(count.max())


@pytest.mark.parametrize(
    "w, stride", [((8, 3, 3, 5), (2, 2)), ((4, 4, 2, 3), (3, 1)), ((2, 5, 5, 7), (1, 1))]
)
def test_transpose_conv_macs_are_the_most_products_of_one_output(w, stride):
    assert KINDS["transpose_conv2d"].macs(w, stride) == _conv_products(w, stride)


def test_macs_per_output_of_the_other_mac_kinds():
    # an output of a conv2d sums Kh*Kw*Ci products, of a depthwise Kh*Kw, of a fully connected
    # its N inputs
    x = np.ones((1, 6, 6, 5))
    w = np.ones((8, 3, 2, 5))  # OHWI
    out = np.einsum("hwc,ohwc->o", x[0, :3, :2], w)
    assert KINDS["conv2d"].macs(w.shape, (1, 1)) == out[0] == 30
    assert KINDS["depthwise_conv2d"].macs((1, 3, 2, 5), (1, 1)) == 6
    assert KINDS["group_conv2d"].macs((1, 3, 2, 10), (1, 1)) == 6
    assert KINDS["fully_connected"].macs((7, 11), (1, 1)) == 11
    assert {k.name for k in KINDS.values() if k.macs} == {k.name for k in KINDS.values() if k.mac}


@dataclass(frozen=True)
class _ToyKernel:
    name: str
    cfg: tuple[str, ...] = ("n",)

    @property
    def kernel(self) -> str:
        return "mlitool_" + self.name

    @property
    def cfg_type(self) -> str:
        return f"mlitool_{self.name}_cfg"

    def run(self, layer, model, xs, arith):
        return xs[0]


def test_fallback_kernels_are_entries_of_the_table():
    lut = fallback.kernel("mlitool_lut8")
    assert kinds.fallback_kernels()["mlitool_lut8"] is lut
    layer = MliLayer(0, "EXP", "fallback", "mlitool_lut8", ["x"], ["y"])
    assert kind_of(layer).fallback is lut and kind_of(layer).row_tiling == PER_ELEMENT
    assert kind_of(layer).runner() == lut.run
    assert kind_of(layer).chart == KINDS["fallback"].chart == "fallback"
    toy = _ToyKernel("toy9")
    try:
        entry = register_fallback(toy)
        assert register_fallback(toy) is entry  # the same kernel again: no-op
        with pytest.raises(ValueError, match="registered twice"):
            register_fallback(_ToyKernel("toy9", cfg=("a", "b")))
        assert kinds.cfg_fields({}, "mlitool_toy9_cfg") == [("n", "i32", "n", None)]
        assert kinds.cfg_fields({}, "mlitool_toy8_cfg") is None
        assert fallback.kernel("mlitool_toy9") is toy
    finally:
        del KINDS["mlitool_toy9"]
    clash = _ToyKernel("lut8")  # another kernel under a registered kernel's name
    with pytest.raises(ValueError, match="'mlitool_lut8' is registered twice"):
        register_fallback(clash)


# Collections naming three or more layer kinds outside the table, and why these remain.
_ELSEWHERE = {
    "execute/mli/kernels/activations.py",  # its LAYER_RUNNERS; the LUT kernels' SA8 outputs
    "execute/mli/kernels/luts.py",  # the functions each look-up table samples (arithmetic)
    "execute/mli/kernels/mac.py",  # its LAYER_RUNNERS (the table names the module)
    "mli/lower/checks.py",  # the kinds whose 1.x refusal names MLI 2.x
    "report/quant_section.py",  # the TFLite op whose per-axis dim a MAC kind's weights keep
}


def test_no_per_kind_table_outside_the_kinds_table():
    root = Path(mlitool.__file__).parent
    names = {name for name, k in KINDS.items() if k.fallback is None}
    found = set()
    for path in root.rglob("*.py"):
        if path == root / "mli" / "kinds.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Dict, ast.Set, ast.Tuple, ast.List)):
                elts = node.keys if isinstance(node, ast.Dict) else node.elts
                hits = {e.value for e in elts if isinstance(e, ast.Constant) and e.value in names}
                if len(hits) >= 3:
                    found.add(str(path.relative_to(root)))
    assert found == _ELSEWHERE
