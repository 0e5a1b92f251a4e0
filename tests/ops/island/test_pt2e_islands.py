"""The PT2E int8 files of the PyTorch corpus (tests/corpus_torch): every float island (residual
ADDs, SiLU, hard-sigmoid) becomes one op, and each such op, given LiteRT's own int8 values of its
inputs, gives LiteRT's int8 output exactly (LiteRT's reference kernels running the island's
DEQUANTIZE, float ops and QUANTIZE)."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from mlitool import ir
from mlitool.execute.reference.graph import run_graph
from mlitool.ir import ISLAND_OP, ISLAND_TABLE
from mlitool.pipeline import read
from mlitool.tflite.reader import read_model
from tests.support.litert import reference_outputs
from tests.support.paths import ROOT

CORPUS = ROOT / "tests" / "corpus_torch"
# file: (islands of one int8 input (int8 tables), islands of several (float32 arithmetic))
ISLANDS = {
    "resnet18": (0, 8),
    "mobilenet_v2": (0, 9),
    "mnasnet": (0, 12),
    "mobilenet_v3_small": (9, 6),
    "efficientnet_b0": (31, 1),
}


@pytest.mark.parametrize("arch", sorted(ISLANDS))
def test_every_island_equals_litert(arch):
    path = CORPUS / f"{arch}_pt2e_int8.tflite"
    raw = read_model(path).main
    g = read(path).main
    fused = [op for op in g.ops if op.type == ISLAND_OP]
    tables = sum(ISLAND_TABLE in op.options for op in fused)
    assert (tables, len(fused) - tables) == ISLANDS[arch]
    assert not any(g.tensors[t].dtype == "float32" for op in g.ops for t in op.outputs)
    rng = np.random.default_rng(zlib.crc32(arch.encode()))
    xs = {
        i: rng.integers(-128, 128, (2, *raw.tensors[i].shape)).astype(np.int8) for i in raw.inputs
    }
    ref = reference_outputs(path, raw, xs)
    for op in fused:
        one = ir.Graph(g.name, g.tensors, [op], list(op.inputs), [op.outputs[0]])
        ins = {i: ref[i].reshape((2, *g.tensors[i].shape)) for i in op.inputs}
        got = run_graph(one, ins, "tflite")[op.outputs[0]]
        want = ref[op.outputs[0]].reshape(got.shape)
        np.testing.assert_array_equal(got, want, err_msg=op.label)
