"""Missing shared reference material (../shared, the MLI tree) skips on a user's clone and fails in CI."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.support import mli_build, paths

ABSENT = "no-such-shared-folder"


@pytest.fixture
def no_shared(monkeypatch, tmp_path):
    monkeypatch.setattr(paths, "SHARED", tmp_path / ABSENT)
    monkeypatch.setattr(mli_build, "SHARED", tmp_path / ABSENT)
    monkeypatch.delenv(mli_build.MLI_ROOT_ENV, raising=False)
    monkeypatch.delenv("CI", raising=False)
    return monkeypatch


@pytest.mark.parametrize(
    "value, ci",
    [
        ("", False),
        ("0", False),
        ("false", False),
        ("FALSE", False),
        ("1", True),
        ("true", True),
        ("yes", True),
    ],
)
def test_ci_values(monkeypatch, value, ci):
    monkeypatch.setenv("CI", value)
    assert paths.in_ci() is ci


def test_present_path_is_returned(monkeypatch, tmp_path):
    (tmp_path / "golden").mkdir()
    monkeypatch.setattr(paths, "SHARED", tmp_path)
    monkeypatch.setenv("CI", "1")
    assert paths.shared_path("golden") == tmp_path / "golden"


def test_missing_shared_skips_on_a_clone(no_shared):
    with pytest.raises(pytest.skip.Exception, match=f"{ABSENT}/golden is absent"):
        paths.shared_path("golden")
    assert paths.shared_models() == []


def test_missing_shared_fails_in_ci(no_shared):
    no_shared.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=f"{ABSENT}/golden is absent.*CI is set"):
        paths.shared_path("golden")
    with pytest.raises(FileNotFoundError, match=f"{ABSENT}/models is absent and CI is set"):
        paths.shared_models()


@pytest.mark.parametrize("version", ["2.0", "1.1"])
def test_missing_mli_tree_skips_on_a_clone_and_fails_in_ci(no_shared, version):
    with pytest.raises(pytest.skip.Exception, match="no MLI"):
        paths.mli_cflags(version)
    no_shared.setenv("CI", "1")
    with pytest.raises(pytest.fail.Exception, match="no MLI.*CI is set"):
        paths.mli_cflags(version)


def test_missing_tool_stays_a_skip_in_ci(monkeypatch):
    monkeypatch.setenv("CI", "1")
    with pytest.raises(pytest.skip.Exception, match="cmake not on PATH"):
        paths.mli_unavailable(mli_build.MliUnavailable("cmake not on PATH"))


def _pytest(tmp_path, ci: str | None, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", mli_build.MLI_ROOT_ENV)}
    env["MLITOOL_SHARED"] = str(tmp_path / ABSENT)
    if ci is not None:
        env["CI"] = ci
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=paths.ROOT,
        env=env,
        capture_output=True,
        text=True,
    )


def test_a_golden_test_without_shared_end_to_end(tmp_path):
    """A real golden test file run without ../shared: skipped on a clone, failed with CI set."""
    test = "tests/execute/test_mli_pool_golden.py::test_golden"
    clone = _pytest(tmp_path, None, test)
    assert clone.returncode == 0, clone.stdout
    assert " skipped" in clone.stdout and "failed" not in clone.stdout
    ci = _pytest(tmp_path, "true", test, "-x")
    assert ci.returncode == 1, ci.stdout
    assert "1 failed" in ci.stdout and "CI is set" in ci.stdout
