"""One `Target` per MLI version: no module outside `mlitool/mli/target.py` tests the version
string, each option is checked by one function in one wording, and each target's C dialect is
the one the emitter uses."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from mlitool import ir
from mlitool.emit.dialect import Dialect
from mlitool.emit.writer import dialect_for
from mlitool.errors import OptionError
from mlitool.mli.lower.driver import lower
from mlitool.mli.target import FORMAT_NAMES, MLI2, MLI10, MLI11, TARGETS
from mlitool.mli.types import FORMATS
from mlitool.pipeline import ModelOptions, settle

PACKAGE = Path(__file__).resolve().parents[1] / "mlitool"
VERSIONS = set(TARGETS)  # "2.0", "1.1", "1.0"
PREFIXES = {v[:n] for v in VERSIONS for n in range(1, len(v) + 1)}  # "2", "2.", "2.0", ...


def _about_version(node: ast.AST) -> bool:
    text = ast.unparse(node).lower()
    return "version" in text or "mli" in text


def version_tests(source: str) -> list[str]:
    """Every place `source` spells an MLI version: a version literal, a comparison against a
    version prefix, or `.startswith` / `.endswith` of one, on something named like a version."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and node.value in VERSIONS:
            found.append(f"line {node.lineno}: literal {node.value!r}")
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            consts = [s for s in sides if isinstance(s, ast.Constant) and s.value in PREFIXES]
            if consts and any(_about_version(s) for s in sides if s not in consts):
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("startswith", "endswith")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value in PREFIXES
            and _about_version(node.func.value)
        ):
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


@pytest.mark.parametrize(
    "snippet",
    [
        'v2 = model.mli_version == "2.0"',
        'if s.mli_version != "2.0" and kind: pass',
        'ok = mli_version.startswith("2")',
        'old = self.target_version[0] == "1"',
        'x = version in ("1.1", "1.0")',
        'TABLE = {"2.0": 1}',
    ],
)
def test_the_scan_finds_each_spelling(snippet):
    assert version_tests(snippet), snippet


@pytest.mark.parametrize(
    "snippet",
    [
        "if target.strided_views: pass",
        'name.startswith("2")',  # not about a version
        'x = fmt == "fx16"',
    ],
)
def test_the_scan_passes_other_code(snippet):
    assert version_tests(snippet) == []


def test_no_module_but_target_spells_a_version():
    offenders = {
        str(p.relative_to(PACKAGE)): hits
        for p in sorted(PACKAGE.rglob("*.py"))
        if p != PACKAGE / "mli" / "target.py" and (hits := version_tests(p.read_text()))
    }
    assert offenders == {}


def test_targets_name_their_versions_and_dialects():
    assert [t.version for t in TARGETS.values()] == ["2.0", "1.1", "1.0"]
    assert FORMAT_NAMES == tuple(FORMATS)
    for target in (MLI2, MLI11, MLI10):
        assert dialect_for(target).target is target
        assert isinstance(dialect_for(target), Dialect)  # every member of the protocol
    assert [type(dialect_for(t)).__name__ for t in (MLI2, MLI11, MLI10)] == [
        "Mli2",
        "Mli11",
        "Mli10",
    ]
    # MLI 2.x kernels ignore the layout (HWC only); 1.x picks by layout
    assert MLI2.kernel("conv2d", "sa8", "chw") == "mli_krn_conv2d_hwcn_sa8_sa8_sa32"
    assert MLI11.kernel("conv2d", "fx16", "chw") == "mli_krn_conv2d_chw_fx16"
    assert MLI11.kernel("conv2d", "sa8", "chw") is None
    assert MLI11.kernel("conv2d", "sa8", "hwc") == "mli_krn_conv2d_nhwc_sa8_sa8_sa32"
    assert MLI10.kernel("conv2d", "sa8", "hwc") is None
    assert MLI11.formats_for("conv2d", "hwc") == ["sa8", "fx16", "fx8w16d", "fx8"]
    assert MLI2.layouts_for("conv2d", "sa8") == ["hwc"]
    assert MLI2.has_dilation and not MLI11.has_dilation
    assert MLI2.cfg_relu_on_fc and not MLI10.cfg_relu_on_fc


@pytest.mark.parametrize(
    "options, message",
    [
        ({"format": "int4"}, "--format 'int4': choose one of sa8, fx16, fx8w16d, fx8"),
        ({"mli": "3.7"}, "--mli '3.7': choose one of 2.0, 1.1, 1.0"),
        ({"layout": "nchw"}, "--layout 'nchw': choose one of hwc, chw"),
        ({"layout": "chw"}, "--layout chw: MLI 2.0 kernels take HWC activations"),
        ({"overrides": {0: "fx4"}}, "override 0: format 'fx4': choose one of sa8"),
    ],
)
def test_one_check_one_wording(options, message, tmp_path):
    """`settings.settle` (the commands) and `lower` (the library) refuse alike."""
    config = tmp_path / "mlitool.toml"
    config.write_text("")
    with pytest.raises(OptionError) as by_pipeline:
        settle(ModelOptions(config=config, **options))
    lower_kw = {{"mli": "mli_version"}.get(k, k): v for k, v in options.items()}
    with pytest.raises(OptionError) as by_lower:
        lower(ir.Graph("g", [], [], [], []), **lower_kw)
    assert str(by_pipeline.value).startswith(message)
    assert by_lower.value.message == by_pipeline.value.message
