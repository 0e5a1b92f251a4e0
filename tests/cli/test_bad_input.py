"""Bad and hostile model files: exit code 2, exactly one stderr line naming the file, no traceback."""

from __future__ import annotations

import random
import subprocess
import sys

import pytest

from tests.support.paths import ROOT, SHARED, shared_path
from tests.support.tflite_build import Buf, build, fc_spec

MODELS = (
    sorted(
        p.relative_to(SHARED / "models").as_posix() for p in (SHARED / "models").glob("**/*.tflite")
    )
    if (SHARED / "models").is_dir()
    else []
)


def run_main(args, capsys):
    """Run the CLI in-process; (exit code, stdout, stderr)."""
    from mlitool.cli.entry import main

    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    return exc.value.code, out, err


def assert_bad_input(path, capsys, *, mentions: str | None = None):
    code, out, err = run_main(["inspect", str(path)], capsys)
    lines = err.strip().splitlines()
    assert code == 2, err
    assert len(lines) == 1, err
    assert str(path) in lines[0] and lines[0].startswith("mlitool: error: ")
    assert "Traceback" not in err and out == ""
    if mentions:
        assert mentions in lines[0], lines[0]
    return lines[0]


# -- the file itself -----------------------------------------------------------------------------


def test_missing_file(tmp_path, capsys):
    assert_bad_input(tmp_path / "nope.tflite", capsys, mentions="no such file")


def test_directory(tmp_path, capsys):
    assert_bad_input(tmp_path, capsys, mentions="directory")


def test_empty_file(tmp_path, capsys):
    p = tmp_path / "empty.tflite"
    p.write_bytes(b"")
    assert_bad_input(p, capsys, mentions="empty")


def test_not_a_flatbuffer(tmp_path, capsys):
    p = tmp_path / "notes.tflite"
    p.write_text("this is a text file, not a model\n")
    assert_bad_input(p, capsys, mentions="TFL3")


def test_wrong_identifier(tmp_path, capsys):
    data = bytearray(build(fc_spec()))
    data[4:8] = b"TFL2"
    p = tmp_path / "wrong_id.tflite"
    p.write_bytes(bytes(data))
    assert_bad_input(p, capsys, mentions="TFL3")


@pytest.mark.parametrize("seed", range(12))
def test_random_bytes(tmp_path, capsys, seed):
    rng = random.Random(seed)
    data = bytearray(rng.randbytes(rng.choice([9, 64, 1000, 20000])))
    if seed % 2:
        data[4:8] = b"TFL3"  # get past the identifier check into the parser
    p = tmp_path / f"random{seed}.tflite"
    p.write_bytes(bytes(data))
    assert_bad_input(p, capsys)


def test_corrupted_bytes_never_crash(tmp_path, capsys):
    """Random byte flips in a valid model: either it still reads, or it is a clean exit 2."""
    from mlitool.errors import ModelFormatError
    from mlitool.tflite.reader import parse_model

    good = build(fc_spec())
    rng = random.Random(1)
    for _ in range(400):
        data = bytearray(good)
        for _ in range(rng.choice([1, 3, 10])):
            data[rng.randrange(8, len(data))] = rng.randrange(256)
        try:
            parse_model(bytes(data), "flipped.tflite")
        except ModelFormatError as exc:
            assert "\n" not in str(exc) and str(exc).startswith("flipped.tflite: ")


# -- truncated copies of every shared model --------------------------------------------------------


@pytest.mark.parametrize("name", MODELS or ["<none>"])
def test_truncated_shared_model(tmp_path, capsys, name):
    data = shared_path("models", name).read_bytes()
    cuts = sorted({4, 8, 12, 64, len(data) // 4, len(data) // 2, len(data) * 3 // 4, len(data) - 1})
    for cut in cuts:
        p = tmp_path / f"cut{cut}.tflite"
        p.write_bytes(data[:cut])
        assert_bad_input(p, capsys)


# -- hostile or inconsistent contents --------------------------------------------------------------


def _hostile(tmp_path, mutate) -> str:
    spec = fc_spec()
    mutate(spec)
    p = tmp_path / "hostile.tflite"
    p.write_bytes(build(spec))
    return p


def test_huge_constant_shape(tmp_path, capsys):
    def m(s):
        s.tensors[1].shape = [2**30, 2**30]

    line = assert_bad_input(_hostile(tmp_path, m), capsys, mentions="'weights'")
    assert "implausible shape" in line


def test_huge_activation_shape(tmp_path, capsys):
    def m(s):
        s.tensors[3].shape = [1, 2**31 - 1, 4]

    assert_bad_input(_hostile(tmp_path, m), capsys, mentions="'output'")


def test_shape_does_not_match_buffer_length(tmp_path, capsys):
    def m(s):
        s.tensors[1].shape = [3, 5]

    line = assert_bad_input(_hostile(tmp_path, m), capsys, mentions="'weights'")
    assert "needs 15 bytes" in line and "holds 12" in line


def test_negative_dimension(tmp_path, capsys):
    def m(s):
        s.tensors[3].shape = [1, -3]

    assert_bad_input(_hostile(tmp_path, m), capsys, mentions="negative")


def test_external_buffer_beyond_end_of_file(tmp_path, capsys):
    def m(s):
        s.buffers[1] = Buf(offset=10**12, size=12)

    assert_bad_input(_hostile(tmp_path, m), capsys, mentions="outside the file")


def test_external_buffer_size_beyond_end_of_file(tmp_path, capsys):
    def m(s):
        s.buffers[1] = Buf(offset=16, size=2**62)

    assert_bad_input(_hostile(tmp_path, m), capsys, mentions="outside the file")


def test_buffer_index_out_of_range(tmp_path, capsys):
    def m(s):
        s.tensors[1].buffer = 99

    assert_bad_input(_hostile(tmp_path, m), capsys, mentions="buffer 99")


def test_tensor_index_out_of_range(tmp_path, capsys):
    def m(s):
        s.ops[0].inputs = [0, 1, 42]

    assert_bad_input(_hostile(tmp_path, m), capsys, mentions="tensor 42")


def test_graph_output_index_out_of_range(tmp_path, capsys):
    def m(s):
        s.outputs = [-1]

    assert_bad_input(_hostile(tmp_path, m), capsys, mentions="outputs of subgraph 0")


def test_opcode_index_out_of_range(tmp_path, capsys):
    def m(s):
        s.ops[0].opcode = 7

    assert_bad_input(_hostile(tmp_path, m), capsys, mentions="operator code 7")


def test_per_axis_scale_count_mismatch(tmp_path, capsys):
    def m(s):
        s.tensors[1].scale = [0.1, 0.2]
        s.tensors[1].zero_point = [0, 0]

    assert_bad_input(_hostile(tmp_path, m), capsys, mentions="2 quantization scales")


def test_quantized_axis_out_of_range(tmp_path, capsys):
    def m(s):
        s.tensors[1].axis = 5

    assert_bad_input(_hostile(tmp_path, m), capsys, mentions="axis 5")


def test_patched_vector_length_in_real_model(tmp_path, capsys):
    """A real model whose first tensor's shape vector claims 2**30 entries."""
    import tflite

    data = bytearray(shared_path("models", "tflm", "hello_world_int8.tflite").read_bytes())
    t = tflite.Model.GetRootAs(bytes(data), 0).Subgraphs(0).Tensors(0)
    start = t._tab.Vector(t._tab.Offset(4))  # the length word sits just before the data
    data[start - 4 : start] = (2**30).to_bytes(4, "little")
    p = tmp_path / "patched.tflite"
    p.write_bytes(bytes(data))
    assert_bad_input(p, capsys, mentions="outside the file")


# -- through a real process: exit status, one line, no traceback -----------------------------------


def _cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "mlitool", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        timeout=60,
    )


def test_subprocess_bad_inputs(tmp_path):
    empty = tmp_path / "empty.tflite"
    empty.write_bytes(b"")
    hostile = tmp_path / "hostile.tflite"
    spec = fc_spec()
    spec.tensors[1].shape = [2**20, 2**20]
    hostile.write_bytes(build(spec))
    truncated = tmp_path / "truncated.tflite"
    truncated.write_bytes(build(fc_spec())[:200])
    for path in (tmp_path / "missing.tflite", tmp_path, empty, hostile, truncated):
        r = _cli("inspect", str(path))
        assert r.returncode == 2, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1 and str(path) in r.stderr
        assert "Traceback" not in r.stderr and r.stdout == ""


def test_version_subprocess():
    from mlitool import __version__

    r = _cli("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"mlitool {__version__}"
