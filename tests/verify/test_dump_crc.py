"""`mlitool run --dump-crc`: every layer's output CRC per sample, equal to the CRC-32 of the bytes
the emitted C writes on the real MLI 2.0.2 library (the layer hook's tensors) in each build."""

from __future__ import annotations

import json
import zlib

import numpy as np
import pytest

from mlitool.crclog import parse_log
from mlitool.errors import InputDataError
from tests.support import runtime_harness as H
from tests.support.cli import run_main
from tests.support.paths import SAMPLES, mli_cflags

CNN = SAMPLES / "cnn_int8.tflite"
CNN_IN = SAMPLES / "cnn_input_int8.npy"


def board_crcs(data: bytes, layers: int) -> dict[tuple[int, int], int]:
    """{(sample, layer): CRC-32} of the hook records of a harness driver run (a layer's outputs
    one after the other), zlib's CRC over the bytes the real library wrote."""
    crcs: dict[tuple[int, int], int] = {}
    sample = 0
    for tag, raw in H.records(data):
        if tag & H.OUTPUT_TAG:
            if tag == H.OUTPUT_TAG:  # the first model output ends a sample's layers
                sample += 1
            continue
        crcs[sample, tag] = zlib.crc32(raw, crcs.get((sample, tag), 0))
    assert len(crcs) == sample * layers
    return crcs


def test_dump_crc_equals_the_real_library_in_every_build(mli_builds, tmp_path, capsys):
    conv = H.convert(CNN, "sa8", tmp_path / "c")
    objs = H.compile_objects(conv, mli_cflags("2.0"))
    inputs = H.real_inputs(conv, np.load(CNN_IN))
    n = H.write_inputs(conv.model, inputs, tmp_path / "in.bin")
    logs = {}
    for key, build in sorted(mli_builds.items()):
        exe = H.link(objs, build, tmp_path / f"net_{build.name}")
        board = board_crcs(H.run_driver(exe, tmp_path / "in.bin", n, tmp_path / "o.bin"), 9)
        code, out, err = run_main(
            ["run", CNN, "--input", CNN_IN, "--dump-crc", "--npz", tmp_path / "y.npz"]
            + build.run_options,
            capsys,
        )
        assert code == 0, err
        log = parse_log(out)
        assert log.build == f"ROUND_MODE={key[0]} FULL_ACCU={key[1]}" and log.layers == 9
        assert {k: crc for k, (_, crc) in log.crcs.items()} == board, build.name
        assert [log.crcs[0, pos][0] for pos in range(9)] == [la.index for la in conv.model.layers]
        logs[key] = log.crcs
    # The builds' arithmetic differs where it must: the CRCs are not the same in every build.
    assert len({tuple(sorted(c.items())) for c in logs.values()}) > 1


def test_dump_crc_json_and_the_npz(tmp_path, capsys):
    code, out, err = run_main(
        ["run", CNN, "--input", CNN_IN, "--dump-crc", "--json", "--npz", tmp_path / "y.npz"],
        capsys,
    )
    assert code == 0, err
    crc = json.loads(out)["crc"]
    assert crc["build"] == "ROUND_MODE=UP FULL_ACCU=OFF" and crc["format"] == "mlitool-crc 1"
    assert [la["position"] for la in crc["layers"]] == list(range(9))
    assert crc["layers"][0]["kernel"] == "mli_krn_conv2d_hwcn_sa8_sa8_sa32"
    assert len(crc["samples"]) == 4 and all(len(row) == 9 for row in crc["samples"])
    with np.load(tmp_path / "y.npz") as z:
        assert list(z.files) == ["Identity"]  # the CRCs stay out of the outputs file


def test_dump_crc_needs_mli_mode(tmp_path, capsys):
    code, _, err = run_main(
        [
            "run",
            CNN,
            "--input",
            CNN_IN,
            "--dump-crc",
            "--mode",
            "tflite",
            "--npz",
            tmp_path / "y.npz",
        ],
        capsys,
    )
    assert code == 2 and "--dump-crc" in err and "--mode mli" in err


def test_parse_log_skips_noise_and_refuses_contradictions():
    text = (
        "boot ok\r\nmlitool-crc 1 layers=2 samples=1 ROUND_MODE=UP FULL_ACCU=ON\r\n"
        "crc 0 0 3 0000abcd\r\n[uart] noise\ncrc 0 1 4 FFFFFFFF\n"
    )
    log = parse_log(text)
    assert (log.build, log.layers, log.samples) == ("ROUND_MODE=UP FULL_ACCU=ON", 2, 1)
    assert log.crcs == {(0, 0): (3, 0xABCD), (0, 1): (4, 0xFFFFFFFF)}
    with pytest.raises(InputDataError, match="two different crc lines"):
        parse_log(text + "crc 0 1 4 00000000\n")
    with pytest.raises(InputDataError, match="no 'crc SAMPLE"):
        parse_log("hello\n")
