"""The C emitter: compiles with gcc/g++ for every MLI target, a compiled probe reads back every
tensor exactly as the Python model holds it, names are safe, output is deterministic and atomic."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlitool.emit.cdata import int_lines
from mlitool.emit.names import RESERVED, NameTable, c_identifier, comment_text
from mlitool.emit.writer import emit
from mlitool.errors import OptionError, UnsupportedError
from mlitool.mli.types import ElType, MliTensor, Role
from mlitool.plumbing.fsio import write_files_atomically
from tests.support.emit_models import HOSTILE_NAMES, mli1_model, mli2_model
from tests.support.emit_probe import expected_lines, probe_source
from tests.support.paths import ROOT, mli_cflags

WARN = ["-Wall", "-Wextra", "-Werror", "-pedantic"]

needs_gcc = pytest.mark.skipif(
    not (shutil.which("gcc") and shutil.which("g++")), reason="gcc/g++ not installed"
)

CASES = {
    "mli2_sa8": lambda: mli2_model("sa8"),
    "mli2_fx16": lambda: mli2_model("fx16"),
    "mli2_fx8w16d": lambda: mli2_model("fx8w16d"),
    "mli2_hostile": lambda: mli2_model("sa8", HOSTILE_NAMES),
    "mli11_sa8": lambda: mli1_model("1.1", "sa8"),
    "mli11_fx8w16d": lambda: mli1_model("1.1", "fx8w16d"),
    "mli11_hostile": lambda: mli1_model("1.1", "sa8", HOSTILE_NAMES),
    "mli10_fx16": lambda: mli1_model("1.0", "fx16"),
    "mli10_fx8": lambda: mli1_model("1.0", "fx8"),
}
OPTIONS = {"mli2_fx16": {"align": 16, "section": ".mli_weights"}, "mli11_sa8": {"align": 4}}


def _run(cmd, cwd):
    res = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    assert res.returncode == 0, f"{' '.join(map(str, cmd))}\n{res.stdout}\n{res.stderr}"
    return res.stdout


def _c_names(manifest):
    return {t["name"]: t["c_name"] for t in manifest["tensors"]}


@needs_gcc
@pytest.mark.parametrize("case", sorted(CASES))
def test_compiles_and_probe_reads_back_every_tensor(case, tmp_path):
    model = CASES[case]()
    emit(model, tmp_path, "net", **OPTIONS.get(case, {}))
    manifest = json.loads((tmp_path / "net.json").read_text())
    inc = [*mli_cflags(model.mli_version), "-I", str(tmp_path)]
    (tmp_path / "probe.c").write_text(probe_source(manifest, "net.h"))
    shutil.copy(tmp_path / "probe.c", tmp_path / "probe.cc")
    _run(["gcc", "-std=c99", *WARN, *inc, "-c", "net.c", "-o", "net.o"], tmp_path)
    _run(["gcc", "-std=c99", *WARN, *inc, "probe.c", "net.o", "-o", "probe_c"], tmp_path)
    # The header from C++: extern "C" linkage against the C object.
    _run(["g++", "-std=c++11", *WARN, *inc, "probe.cc", "net.o", "-o", "probe_cxx"], tmp_path)
    want = expected_lines(model, _c_names(manifest))
    assert _run([str(tmp_path / "probe_c")], tmp_path).splitlines() == want
    assert _run([str(tmp_path / "probe_cxx")], tmp_path).splitlines() == want


@needs_gcc
@pytest.mark.parametrize("case", ["mli2_sa8", "mli2_hostile", "mli11_sa8", "mli10_fx16"])
def test_single_header_compiles_as_c99_and_cxx20(case, tmp_path):
    model = CASES[case]()
    written = emit(model, tmp_path, "one", single_header=True, align=8, section=".w")
    assert [p.name for p in written] == ["one.h", "one.json"]
    manifest = json.loads((tmp_path / "one.json").read_text())
    inc = [*mli_cflags(model.mli_version), "-I", str(tmp_path)]
    (tmp_path / "p.c").write_text(probe_source(manifest, "one.h"))
    shutil.copy(tmp_path / "p.c", tmp_path / "p.cc")
    # A second translation unit including the same header must not clash (all static).
    (tmp_path / "other.c").write_text(
        '#include "one.h"\nint other(void);\nint other(void) { return 1; }\n'
    )
    _run(["gcc", "-std=c99", *WARN, *inc, "p.c", "other.c", "-o", "p_c"], tmp_path)
    _run(["g++", "-std=c++20", *WARN, *inc, "p.cc", "-o", "p_cxx"], tmp_path)
    want = expected_lines(model, _c_names(manifest))
    assert _run([str(tmp_path / "p_c")], tmp_path).splitlines() == want
    assert _run([str(tmp_path / "p_cxx")], tmp_path).splitlines() == want


def test_attributes_and_include(tmp_path):
    emit(mli2_model("sa8"), tmp_path, "m", header="<mli/mli_api.h>", align=32, section=".mli_w")
    c = (tmp_path / "m.c").read_text()
    h = (tmp_path / "m.h").read_text()
    assert "#include <mli/mli_api.h>" in h and 'extern "C" {' in h
    data_decls = re.findall(r"static const int(?:8|16|32)_t m_\w+_data\[\d+\]([^=]*)=", c)
    assert data_decls and all('aligned(32), section(".mli_w")' in d for d in data_decls)
    assert re.search(
        r"static const int16_t m_L0_conv_weights_scale\[4\] __attribute__\(\(aligned\(32\)\)\) =", c
    )
    assert "extern const mli_conv2d_cfg m_L0_conv_cfg;" in h
    assert "extern mli_tensor m_in0;" in h and "extern const mli_tensor m_L0_conv_weights;" in h


# ------------------------------------------------------------------------------- manifest


def test_manifest_matches_model(tmp_path):
    model = mli2_model("sa8")
    emit(model, tmp_path, "m")
    text = (tmp_path / "m.json").read_text()
    doc = json.loads(text)
    assert text == json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=True) + "\n"
    assert doc["model"]["source"] == "test_model.tflite"  # no absolute path
    by_name = {t["name"]: t for t in doc["tensors"]}
    assert list(by_name) == list(model.tensors)
    for key, t in model.tensors.items():
        m = by_name[key]
        assert m["shape"] == list(t.shape) and m["mem_stride"] == list(t.mem_stride)
        assert m["el_type"] == t.el_type.name and m["role"] == t.role.value
        assert m["source"] == t.source and m["layout"] == t.layout
        if t.data is not None and t.buffer is None:
            assert (
                m["sha256"]
                == hashlib.sha256(
                    t.data.astype(t.data.dtype.newbyteorder("<")).tobytes()
                ).hexdigest()
            )
        if t.el_type.is_sa:
            assert m["params"]["scale"] == t.scale.tolist()
            assert m["params"]["zero_point"] == t.zero_point.tolist()
            assert m["params"]["scale_frac_bits"] == t.scale_frac_bits.tolist()
            assert m["params"]["real_scale"] == [
                float(s) * 2.0 ** -int(f)
                for s, f in zip(t.scale.tolist(), t.scale_frac_bits.tolist())
            ]
    assert (
        by_name["flatten"]["view_of"] == "m_L2_maxpool_out"
        and by_name["pool/row1"]["view_offset"] == 16
    )
    assert by_name["pool/row1"]["bytes"] == 1 + 3 * 4 + 1 * 1
    # Totals from the model, computed here.
    t = model.tensors
    weights = sum(x.data.nbytes for x in t.values() if x.role == Role.WEIGHTS)
    bias = sum(x.data.nbytes for x in t.values() if x.role == Role.BIAS)
    per_axis = sum(
        x.zero_point.nbytes * bool(x.zero_point.any()) + x.scale.nbytes + x.scale_frac_bits.nbytes
        for x in t.values()
        if x.el_type.is_sa and x.dim >= 0
    )
    # all-zero zero points of constants: one shared int16 array, as long as the longest
    shared = max(
        (
            x.zero_point.size
            for x in t.values()
            if x.el_type.is_sa and x.dim >= 0 and not x.zero_point.any()
        ),
        default=0,
    )
    params = t["consts"].data.nbytes + per_axis + 2 * shared  # the view, the rank-0 slope: none
    acts = [x.nbytes for x in t.values() if not x.role.is_constant and x.buffer is None]
    assert doc["totals"] == {
        "num_tensors": len(t),
        "num_layers": len(model.layers),
        "weight_bytes": weights,
        "bias_bytes": bias,
        "param_bytes": params,
        "activation_bytes": sum(acts),
        "largest_activation_bytes": max(acts),
    }
    layer0 = doc["layers"][0]
    assert (
        layer0["kernel"] == "mli_krn_conv2d_hwcn_sa8_sa8_sa32"
        and layer0["cfg_type"] == "mli_conv2d_cfg"
    )
    assert layer0["inputs"] == ["m_in0"] and layer0["weights"] == "m_L0_conv_weights"
    assert layer0["cfg"]["relu_type"] == 1 and layer0["notes"] == ["padding SAME"]
    h = (tmp_path / "m.h").read_text()
    for key, macro in doc["total_macros"].items():
        assert f"#define {macro} {doc['totals'][key]}u" in h


# ------------------------------------------------------------------------------- names


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_c_identifier_is_always_valid(text):
    ident = c_identifier(text)
    assert re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", ident)
    assert "__" not in ident and ident not in RESERVED
    assert not ident.lower().startswith("mli_")
    assert c_identifier(text) == ident  # stable


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=12), max_size=30))
def test_name_table_gives_unique_deterministic_names(texts):
    def run():
        table = NameTable()
        return [table.claim(c_identifier(t), ("_data", "_BYTES")) for t in texts]

    names = run()
    assert run() == names
    every = names + [n + s for n in names for s in ("_data", "_BYTES")]
    assert len(set(every)) == len(every)
    assert all("__" not in n and re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", n) for n in every)


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_comment_text_cannot_escape_a_comment(text):
    s = comment_text(text)
    assert s.isascii() and s.isprintable()
    for bad in ("*/", "/*", "??", "\n", "\r", "//"):
        assert bad not in s
    assert not s.endswith("\\")


def test_hostile_names_map_to_expected_identifiers():
    assert c_identifier("*/ int evil; /*") == "int_evil"
    assert c_identifier("int") == "t_int" and c_identifier("true") == "t_true"
    assert c_identifier("9lives") == "t_9lives"
    assert c_identifier("__reserved") == "reserved"
    assert c_identifier("_Upper") == "Upper"
    assert c_identifier("") == "t"
    assert c_identifier("mli_tensor") == "t_mli_tensor"
    assert c_identifier("model/conv2d/Relu;model/conv2d/BiasAdd") == "model_conv2d_Relu"
    assert comment_text("a*/b??/c\\\n\u00e9") == "a*\\x2fb\\x3f?/c\\x5c\\x0a\\xc3\\xa9"
    assert (
        comment_text("model/conv2d/Relu;model/conv2d/BiasAdd")
        == "model/conv2d/Relu;model/conv2d/BiasAdd"
    )


def test_symbols_name_the_layer_and_role_not_the_tflite_name(tmp_path):
    (tmp_path / "plain").mkdir()
    (tmp_path / "hostile").mkdir()
    emit(mli2_model("sa8"), tmp_path / "plain", "h")
    emit(mli2_model("sa8", HOSTILE_NAMES), tmp_path / "hostile", "h")
    plain = _c_names(json.loads((tmp_path / "plain" / "h.json").read_text()))
    names = _c_names(json.loads((tmp_path / "hostile" / "h.json").read_text()))
    assert [
        plain[k]
        for k in (
            "input",
            "conv/weights",
            "conv/bias",
            "conv/out",
            "dw/out",
            "pool/out",
            "fc/weights",
            "leaky/slope",
            "output",
        )
    ] == [
        "h_in0",
        "h_L0_conv_weights",
        "h_L0_conv_bias",
        "h_L0_conv_out",
        "h_L1_dwconv_out",
        "h_L2_maxpool_out",
        "h_L4_fc_weights",
        "h_L6_leaky_relu_slope",
        "h_L7_softmax_out",
    ]
    assert plain["pool/row1"] == "h_L8_permute_in0"  # a view only read: by its reader
    # Renaming every TFLite tensor (to hostile names) changes no symbol a layer names ...
    renamed = {HOSTILE_NAMES.get(k, k): v for k, v in plain.items()}
    assert {k: v for k, v in names.items() if k != "mli_tensor"} == {
        k: v for k, v in renamed.items() if k != "mli_tensor"
    }
    # ... and a buffer no layer names keeps a name made from its TFLite name.
    assert plain["consts"] == "h_t_consts" and names["mli_tensor"] == "h_t_t_mli_tensor"
    text = (tmp_path / "hostile" / "h.h").read_text() + (tmp_path / "hostile" / "h.c").read_text()
    assert text.isascii() and "evil; /*" not in text
    assert "TFLite 'tfl\\x2f*\\x2f int evil; \\x2f*' #0, input" in text  # kept in the comment


# ------------------------------------------------------------------------------- formatting


@settings(max_examples=50, deadline=None)
@given(
    st.sampled_from(["int8", "int16", "int32", "uint8"]),
    st.integers(0, 70),
    st.integers(0, 2**32 - 1),
)
def test_int_lines_round_trip(dtype, n, seed):
    info = np.iinfo(dtype)
    values = (
        np.random.default_rng(seed).integers(info.min, info.max, n, endpoint=True).astype(dtype)
    )
    values[:2] = [info.min, info.max][: min(n, 2)]
    text = b"".join(int_lines(values)).decode()
    assert all(len(line.split(",")) - 1 <= 16 for line in text.splitlines())
    parsed = [int(tok) for tok in text.replace("\n", " ").split(",") if tok.strip()]
    assert parsed == values.tolist()


# ------------------------------------------------------------------------------- determinism


def _digest(directory: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(directory.iterdir())}


def test_output_is_byte_identical_across_runs_and_hash_seeds(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    emit(mli2_model("sa8", HOSTILE_NAMES), a, "m")
    emit(mli2_model("sa8", HOSTILE_NAMES), b, "m")
    assert _digest(a) == _digest(b)
    script = (
        "import sys; sys.path[:0] = [{root!r}]\n"
        "from tests.support.emit_models import mli2_model, HOSTILE_NAMES\n"
        "from mlitool.emit.writer import emit\n"
        "emit(mli2_model('sa8', HOSTILE_NAMES), sys.argv[1], 'm')\n"
    ).format(root=str(ROOT))
    for seed in ("1", "98765"):
        out = tmp_path / f"seed{seed}"
        out.mkdir()
        env = dict(os.environ, PYTHONHASHSEED=seed)
        subprocess.run([sys.executable, "-c", script, str(out)], check=True, env=env)
        assert _digest(out) == _digest(a)


# ------------------------------------------------------------------------------- atomicity


def _old_outputs(directory: Path) -> dict[str, bytes]:
    old = {f"m.{ext}": f"old {ext}\n".encode() for ext in ("h", "c", "json")}
    for name, data in old.items():
        (directory / name).write_bytes(data)
    return old


def test_failure_while_streaming_leaves_old_files(tmp_path, monkeypatch):
    old = _old_outputs(tmp_path)
    import mlitool.emit.csource as csource

    def exploding(data):
        yield b"    1,\n"
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(csource, "int_lines", exploding)
    with pytest.raises(RuntimeError):
        emit(mli2_model("sa8"), tmp_path, "m")
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == old


def test_model_error_writes_nothing(tmp_path):
    old = _old_outputs(tmp_path)
    model = mli2_model("sa8")
    model.layers[0].cfg["padding_left"] = 300  # no uint8_t holds it
    with pytest.raises(UnsupportedError, match="padding_left = 300"):
        emit(model, tmp_path, "m")
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    with pytest.raises(UnsupportedError):
        emit(model, fresh, "m")
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == old
    assert list(fresh.iterdir()) == []


def test_write_files_atomically_replaces_all(tmp_path):
    (tmp_path / "a").write_text("old")
    write_files_atomically({tmp_path / "a": "new a", tmp_path / "b": iter([b"new ", b"b"])})
    assert (tmp_path / "a").read_text() == "new a" and (tmp_path / "b").read_text() == "new b"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b"]


# ------------------------------------------------------------------------------- refusals


def _tensor(**kw) -> MliTensor:
    base = dict(name="x", role=Role.ACTIVATION, shape=(2, 2), el_type=ElType.FX16, frac_bits=3)
    base.update(kw)
    return MliTensor(**base)


@pytest.mark.parametrize(
    "target,change,message",
    [
        (
            "1.0",
            lambda m: m.tensors.update(
                sa=_tensor(
                    name="sa",
                    el_type=ElType.SA8,
                    frac_bits=None,
                    zero_point=np.zeros(1, np.int16),
                    scale=np.ones(1, np.int32),
                    scale_frac_bits=np.zeros(1, np.int8),
                )
            ),
            "MLI 1.0 cannot hold SA8",
        ),
        (
            "2.0",
            lambda m: m.tensors.update(big=_tensor(name="big", shape=(1, 2, 2, 2, 2))),
            "rank 5 exceeds",
        ),
        (
            "1.1",
            lambda m: m.tensors.update(neg=_tensor(name="neg", frac_bits=-2)),
            "frac_bits are unsigned",
        ),
        (
            "1.1",
            lambda m: setattr(
                m.tensors["conv/weights"], "scale_frac_bits", np.array([30, 31, 30, 30], np.int8)
            ),
            "one scale_frac_bits per tensor",
        ),
        ("1.1", lambda m: m.layers[0].cfg.update(dilation_width=2), "no dilation"),
        (
            "1.0",
            lambda m: m.tensors.update(strided=_tensor(name="strided", mem_stride=(4, 1))),
            "not dense",
        ),
        ("2.0", lambda m: setattr(m.layers[7], "cfg_type", "mli_bogus_cfg"), "no config struct"),
    ],
)
def test_refuses_what_the_target_cannot_express(tmp_path, target, change, message):
    model = (
        mli2_model("sa8")
        if target == "2.0"
        else mli1_model(target, "sa8" if target == "1.1" else "fx16")
    )
    change(model)
    with pytest.raises(UnsupportedError, match=message):
        emit(model, tmp_path, "m")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "kwargs",
    [
        {"name": "../evil"},
        {"name": ""},
        {"name": ".hidden"},
        {"header": 'x.h"\n#define A'},
        {"header": "../../etc/passwd"},
        {"align": 3},
        {"align": 0},
        {"section": '.a"); int x; ("'},
    ],
)
def test_bad_options(tmp_path, kwargs):
    args = {"name": "m", **kwargs}
    name = args.pop("name")
    with pytest.raises(OptionError):
        emit(mli2_model("sa8"), tmp_path, name, **args)
    assert list(tmp_path.iterdir()) == []
