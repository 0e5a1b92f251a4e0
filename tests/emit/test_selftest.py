"""`convert --selftest N`: NAME_selftest.c on the real MLI 2.0.2 library. It passes for every
shared int8 model in the build it was generated for; linked against a build with another
ROUND_MODE / FULL_ACCU it fails and names the first layer whose bytes differ (found here from the
two boards' own logs), and `verify --board-log` says which build the board's CRCs match; a
corrupted weight byte in NAME.c is found at the layer that reads it."""

from __future__ import annotations

import dataclasses
import functools
import json
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from mlitool.convert import EmitOptions, convert
from mlitool.crclog import BoardLog, parse_log
from mlitool.pipeline import ModelOptions
from mlitool.verify.board_log import compare_board_log
from tests.support import runtime_harness as H
from tests.support.paths import SAMPLES, mli_cflags, shared_path
from tests.support.tflite_build import T, graph_model, options

MAIN = r"""
#include <stdio.h>
#include <stdint.h>
#include "net.h"
static uint64_t mine[(NET_ARENA_BYTES + 7u) / 8u + 2u];
int main(int argc, char **argv) {
    unsigned layer = 99u, sample = 99u;
    int code;
    (void)argv;
    if (argc > 1) {  /* one byte past an aligned address */
        code = net_selftest_arena((unsigned char *)mine + 1, NET_ARENA_BYTES, &layer, &sample);
    } else {
        code = net_selftest(&layer, &sample);
    }
    printf("result %d %u %u\n", code, sample, layer);
    return 0;
}
"""
# The same on a --fast-memory conversion: net_selftest_arena takes the two buffers.
MAIN_FAST = r"""
#include <stdio.h>
#include <stdint.h>
#include "net.h"
static uint64_t fast[(NET_FAST_BYTES + 7u) / 8u + 2u];
static uint64_t slow[(NET_SLOW_BYTES + 7u) / 8u + 1u];
int main(int argc, char **argv) {
    unsigned layer = 99u, sample = 99u;
    int code;
    (void)argv;
    if (argc > 1) {  /* one byte past an aligned address */
        code = net_selftest_arena((unsigned char *)fast + 1, NET_FAST_BYTES, slow, NET_SLOW_BYTES,
            &layer, &sample);
    } else {
        code = net_selftest(&layer, &sample);
    }
    printf("result %d %u %u\n", code, sample, layer);
    return 0;
}
"""
BUILD_NAME = {
    ("UP", "OFF"): "ROUND_MODE=UP FULL_ACCU=OFF",
    ("UP", "ON"): "ROUND_MODE=UP FULL_ACCU=ON",
    ("CONVERGENT", "OFF"): "ROUND_MODE=CONVERGENT FULL_ACCU=OFF",
    ("CONVERGENT", "ON"): "ROUND_MODE=CONVERGENT FULL_ACCU=ON",
}
OPTS = {"UP": "up", "CONVERGENT": "convergent", "OFF": "reduced", "ON": "full"}


def model_opts(build: tuple[str, str], fmt: str = "sa8") -> ModelOptions:
    return ModelOptions(format=fmt, round_mode=OPTS[build[0]], accu=OPTS[build[1]])


def make(
    model: Path, out: Path, build, *, fmt="sa8", n=2, hook=True, patch=None, st=(), fast=None, **kw
):
    """Convert with a self-test of n inputs for `build` (`fast`: with --fast-memory), `patch` the
    output folder, compile NAME.c (with the self-test's hook; NAME_CHECK_OPERANDS too when
    `fast`), NAME_selftest.c (printing its log, with the flags `st`) and a main; the objects."""
    opts = dataclasses.replace(model_opts(build, fmt), fast_memory=fast)
    convert(model, opts, EmitOptions(out=out, name="net", selftest=n, **kw))
    if patch:
        patch(out)
    (out / "main.c").write_text(MAIN if fast is None else MAIN_FAST)
    flags = ["gcc", *H.STRICT, "-O1", *mli_cflags("2.0"), "-I", str(out), "-c"]
    flags += [] if fast is None else ["-DNET_CHECK_OPERANDS"]
    objs = []
    for src, extra in (
        ("net.c", ["-DNET_LAYER_HOOK=net_selftest_hook"] if hook else []),
        ("net_selftest.c", ["-DNET_SELFTEST_PRINTF=printf", *st]),
        ("main.c", []),
    ):
        objs.append(out / src.replace(".c", ".o"))
        H._cc([*flags, *extra, str(out / src), "-o", str(objs[-1])])
    return objs


def board(objs, build, exe: Path, *args) -> tuple[tuple[int, int, int], str]:
    """Link against the real library `build`, run: ((code, sample, layer), the printed log)."""
    H.link(objs, build, exe)
    r = subprocess.run([str(exe), *args], capture_output=True, text=True, check=True)
    code, sample, layer = map(
        int, re.search(r"^result (\d+) (\d+) (\d+)$", r.stdout, re.M).groups()
    )
    return (code, sample, layer), r.stdout


def first_difference(a: BoardLog, b: BoardLog) -> tuple[int, int]:
    """The first (sample, layer) whose CRCs differ between two boards' logs."""
    assert a.crcs.keys() == b.crcs.keys()
    return next(k for k in sorted(a.crcs) if a.crcs[k] != b.crcs[k])


# The build each model's self-test is made for (all four covered), and the build it is then
# linked against: FULL_ACCU flipped, where the four builds compute different bytes. On
# hello_world's two seeded inputs they all compute the same bytes (the executor says so, and
# every board then passes).
SHARED_INT8 = [
    ("mlperf_tiny/kws_ref_model_int8", ("UP", "OFF"), ("UP", "ON")),
    ("mlperf_tiny/vww_96_int8", ("UP", "ON"), ("CONVERGENT", "OFF")),
    ("mlperf_tiny/resnet8_int8", ("CONVERGENT", "OFF"), ("CONVERGENT", "ON")),
    ("mlperf_tiny/ad01_int8", ("CONVERGENT", "ON"), ("UP", "ON")),
    ("tflm/hello_world_int8", ("UP", "OFF"), ("CONVERGENT", "ON")),
    ("tflm/micro_speech_int8", ("CONVERGENT", "ON"), ("CONVERGENT", "OFF")),
    ("embarc_mli/mobilenet_v1_int8", ("UP", "OFF"), ("CONVERGENT", "ON")),
]


@pytest.mark.parametrize("case", SHARED_INT8, ids=lambda c: c[0].split("/")[1])
def test_selftest_passes_in_its_build_and_names_the_layer_in_another(case, mli_builds, tmp_path):
    model, own, other = case
    path = shared_path("models", f"{model}.tflite")
    objs = make(path, tmp_path, own)
    (code, _, _), text = board(objs, mli_builds[own], tmp_path / "own")
    assert code == 0, text
    own_log = parse_log(text)
    layers = len(json.loads((tmp_path / "net.json").read_text())["layers"])
    assert (own_log.build, own_log.layers, own_log.samples) == (BUILD_NAME[own], layers, 2)
    assert len(own_log.crcs) == 2 * layers
    (code, sample, layer), text = board(objs, mli_builds[other], tmp_path / "other")
    doc = compare_board_log(path, model_opts(own), _write(tmp_path / "board.log", text))
    if model == "tflm/hello_world_int8":
        assert code == 0 and doc["agrees"] and len(doc["matching_builds"]) == 4
        return
    assert code == 1, text
    assert (sample, layer) == first_difference(own_log, parse_log(text))
    assert not doc["agrees"] and BUILD_NAME[other] in doc["matching_builds"]
    assert BUILD_NAME[own] not in doc["matching_builds"]
    assert (doc["first_difference"]["sample"], doc["first_difference"]["layer"]) == (sample, layer)
    assert "MLI library was built with" in doc["causes"][0]


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def _corrupt_l5_weights(out: Path, layer: int = 5) -> None:
    """Adds 64 to the first byte of layer 5's (`layer`'s) weights in NAME.c (modulo 256)."""
    c_file = out / "net.c"
    text = c_file.read_text()
    head = re.search(rf"net_L{layer}_conv_weights_data\[\d+\] = \{{\n\s*(-?\d+),", text)
    value = (int(head[1]) + 64 + 128) % 256 - 128
    c_file.write_text(text[: head.start(1)] + str(value) + text[head.end(1) :])


def test_a_corrupted_weight_byte_is_found_at_the_layer_that_reads_it(mli_builds, tmp_path, capsys):
    model = SAMPLES / "cnn_int8.tflite"
    objs = make(model, tmp_path, ("UP", "OFF"), patch=_corrupt_l5_weights)
    (code, sample, layer), text = board(objs, mli_builds["UP", "OFF"], tmp_path / "bad")
    assert (code, sample, layer) == (1, 0, 5), text
    log = _write(tmp_path / "board.log", text)
    from mlitool.cli.entry import main

    with pytest.raises(SystemExit) as exc:
        main(["verify", str(model), "--board-log", str(log)])
    out, err = capsys.readouterr()
    assert exc.value.code == 3 and "at sample 0, layer 5 (CONV_2D, op 5)" in err
    assert "first difference: sample 0, layer 5 (CONV_2D, TFLite op 5" in out
    assert "the CRCs match: no MLI build" in out and "weights, bias" in out


def test_selftest_with_fast_memory(mli_builds, tmp_path):
    """--fast-memory 16K: conv1 and the max pool in two row tiles each; conv1's 16 KB output and
    three 4 KB buffers in the slow arena (20 KB, reused), the input of conv2 (layer 5)
    among them; NAME_CHECK_OPERANDS on. The self-test passes on its two buffers with the CRCs
    of the one-arena self-test; a corrupted weight byte of the tiled conv1 (layer 0) or of
    conv2 (layer 5) is found at that layer; a misaligned fast buffer gives MISALIGNED."""
    model, build = SAMPLES / "cnn_int8.tflite", mli_builds["UP", "OFF"]
    objs = make(model, tmp_path / "one", ("UP", "OFF"))
    one_arena = parse_log(board(objs, build, tmp_path / "one" / "exe")[1])
    objs = make(model, tmp_path / "ok", ("UP", "OFF"), fast="16K")
    fm = json.loads((tmp_path / "ok" / "net.json").read_text())["runtime"]["fast_memory"]
    assert [la["tiles"] for la in fm["layers"]][:2] == [2, 2] and fm["slow_bytes"] == 16384 + 4096
    (code, _, _), text = board(objs, build, tmp_path / "ok" / "exe")
    assert code == 0, text
    assert parse_log(text).crcs == one_arena.crcs
    assert board(objs, build, tmp_path / "ok" / "exe", "misaligned")[0] == (2, 0, 0)
    for layer in (0, 5):
        out = tmp_path / f"bad{layer}"
        patch = functools.partial(_corrupt_l5_weights, layer=layer)
        objs = make(model, out, ("UP", "OFF"), fast="16K", patch=patch)
        (code, sample, at), text = board(objs, build, out / "exe")
        assert (code, sample, at) == (1, 0, layer), text


def _two_output_model() -> bytes:
    """int8 input [1,4] -> FULLY_CONNECTED -> output 0 [1,3], and -> FULLY_CONNECTED -> output 1
    [1,2]."""
    w0 = np.arange(-6, 6, dtype=np.int8).reshape(3, 4)
    w1 = np.array([[5, -3, 2, 7], [-8, 1, 4, -2]], np.int8)

    def bias(n):
        return T([n], dtype="int32", scale=[0.05] * n, zero_point=[0] * n, data=np.zeros(n))

    tensors = [
        T([1, 4], scale=[0.5], zero_point=[-3]),
        T([3, 4], scale=[0.1] * 3, zero_point=[0] * 3, data=w0),
        bias(3),
        T([1, 3], scale=[0.25], zero_point=[7]),
        T([2, 4], scale=[0.1] * 2, zero_point=[0] * 2, data=w1),
        bias(2),
        T([1, 2], scale=[0.5], zero_point=[-1]),
    ]
    fc = options("FullyConnectedOptions", keepNumDims=True)
    ops = [("FULLY_CONNECTED", [0, 1, 2], [3], fc), ("FULLY_CONNECTED", [0, 4, 5], [6], fc)]
    return graph_model(tensors, ops, [0], [3, 6])


def _corrupt_expected_output(out: Path) -> None:
    """Adds 1 to sample 1's first expected byte of output 1 in NAME_selftest.c (modulo 256)."""
    c_file = out / "net_selftest.c"
    text = c_file.read_text()
    body = re.search(r"net_st_out_1\[4\] = \{([^}]*)\}", text)
    values = [int(v) for v in body[1].replace(",", " ").split()]
    values[2] = (values[2] + 1 + 128) % 256 - 128  # 2 elements a sample
    new = "\n    " + ", ".join(map(str, values)) + "\n"
    c_file.write_text(text[: body.start(1)] + new + text[body.end(1) :])


def test_a_corrupted_expected_output_byte_gives_output_differs(mli_builds, tmp_path):
    """Every CRC matches, then the outputs' bytes are compared: one expected byte off gives
    NET_SELFTEST_OUTPUT_DIFFERS with its sample and output; NET_SELFTEST_NO_OUTPUTS leaves the
    comparison (and the expected bytes) out."""
    model = tmp_path / "two.tflite"
    model.write_bytes(_two_output_model())
    build = mli_builds["UP", "OFF"]
    objs = make(model, tmp_path / "a", ("UP", "OFF"))
    assert board(objs, build, tmp_path / "a" / "ok")[0] == (0, 0, 0)
    objs = make(model, tmp_path / "b", ("UP", "OFF"), patch=_corrupt_expected_output)
    (code, sample, output), text = board(objs, build, tmp_path / "b" / "bad")
    assert (code, sample, output) == (7, 1, 1), text
    assert "selftest: FAIL (code 7, sample 1, layer 1)" in text
    st = json.loads((tmp_path / "b" / "net.json").read_text())["runtime"]["selftest"]
    assert st["codes"]["NET_SELFTEST_OUTPUT_DIFFERS"] == 7
    # 2 samples x (3 + 2) int8 outputs; total: 2 x 4 inputs, 2 x 2 CRCs + 64, 10.
    assert st["flash_bytes"]["outputs"] == 10 and st["flash_bytes"]["total"] == 8 + 80 + 10
    no = ["-DNET_SELFTEST_NO_OUTPUTS"]
    objs = make(model, tmp_path / "c", ("UP", "OFF"), patch=_corrupt_expected_output, st=no)
    assert board(objs, build, tmp_path / "c" / "bad")[0] == (0, 0, 0)
    assert (
        "net_st_out"
        not in subprocess.run(
            ["nm", str(tmp_path / "c" / "net_selftest.o")], capture_output=True, text=True
        ).stdout
    )


def test_misaligned_arena_and_a_missing_hook(mli_builds, tmp_path):
    model = SAMPLES / "cnn_int8.tflite"
    build = mli_builds["UP", "OFF"]
    # fx16: NAME_ARENA_ALIGN is 2, so one byte past an aligned address is misaligned.
    objs = make(model, tmp_path / "a", ("UP", "OFF"), fmt="fx16")
    assert board(objs, build, tmp_path / "a" / "ok")[0] == (0, 0, 0)
    assert board(objs, build, tmp_path / "a" / "ok", "misaligned")[0] == (2, 0, 0)
    objs = make(model, tmp_path / "b", ("UP", "OFF"), hook=False)
    assert board(objs, build, tmp_path / "b" / "nohook")[0] == (5, 0, 0)


def test_real_inputs_flash_cost_and_release_sources(mli_builds, tmp_path):
    """--selftest-input: the first N real samples (CIFAR-10 test images); the manifest gives the
    flash cost; NAME.c has no self-test data (a release build without NAME_selftest.c has none)."""
    from tests.support.real_inputs import cifar10_test20_int8

    path = shared_path("models", "mlperf_tiny", "resnet8_int8.tflite")
    real = tmp_path / "images.npy"
    np.save(real, cifar10_test20_int8())
    objs = make(path, tmp_path, ("UP", "OFF"), n=3, selftest_input=real)
    (code, _, _), text = board(objs, mli_builds["UP", "OFF"], tmp_path / "resnet")
    assert code == 0, text
    st = json.loads((tmp_path / "net.json").read_text())["runtime"]["selftest"]
    # 3 images of 32x32x3 int8; 3 x 16 CRCs of 4 bytes and the 64-byte nibble table; 3 x 10
    # int8 class scores.
    assert st["flash_bytes"] == {
        "inputs": 9216,
        "crcs": 256,
        "outputs": 30,
        "ops_with_printf": 32,
        "total": 9502,
    }
    assert (st["samples"], st["layers"], st["build"]) == (3, 16, "ROUND_MODE=UP FULL_ACCU=OFF")
    assert "selftest" not in (tmp_path / "net.c").read_text()
    assert "int net_selftest(unsigned" in (tmp_path / "net.h").read_text()
    got = re.search(r"net_st_in_0\[9216\] = \{([^}]*)\}", (tmp_path / "net_selftest.c").read_text())
    want = np.load(real)[:3].reshape(-1)
    assert np.array_equal(np.array(got[1].replace(",", " ").split(), dtype=np.int8), want)


def test_selftest_needs_the_runtime(tmp_path):
    from mlitool.errors import OptionError

    model = SAMPLES / "cnn_int8.tflite"
    for kw in ({"runtime": False}, {"single_header": True}):
        with pytest.raises(OptionError, match="needs the runtime"):
            convert(model, ModelOptions(), EmitOptions(out=tmp_path, selftest=1, **kw))
    assert not list(tmp_path.iterdir())
    with pytest.raises(OptionError, match="--selftest 0"):
        convert(model, ModelOptions(), EmitOptions(out=tmp_path, selftest=0))
    with pytest.raises(OptionError, match="has no reference build"):
        convert(
            model, ModelOptions(mli="1.1", format="fx16"), EmitOptions(out=tmp_path, selftest=1)
        )


def test_config_key_selftest(tmp_path):
    from mlitool.errors import OptionError

    cfg = tmp_path / "mlitool.toml"
    cfg.write_text("selftest = 2\n")
    out = tmp_path / "out"
    out.mkdir()
    convert(SAMPLES / "cnn_int8.tflite", ModelOptions(config=cfg), EmitOptions(out=out, name="net"))
    assert json.loads((out / "net.json").read_text())["runtime"]["selftest"]["samples"] == 2
    assert "net_st_in_0[6144]" in (out / "net_selftest.c").read_text()  # 2 x 32x32x3 int8
    cfg.write_text("selftest = true\n")
    with pytest.raises(OptionError, match="selftest = True"):
        convert(SAMPLES / "cnn_int8.tflite", ModelOptions(config=cfg), EmitOptions(out=out))
