"""The real embARC MLI library for compile-and-run checks: header include dirs and native builds.

MLI 2.0.2 builds natively on x86 from its portable reference code. `build_mli` builds it once per
ROUND_MODE x FULL_ACCU configuration with `MLI_DEBUG_MODE=DBG_MODE_RET_CODES` (every kernel checks
its parameters and returns a status), -O2 and -fPIC (so it also links into a shared library), the
configurations in parallel. Built libraries are kept in a gitignored cache keyed by the content of
the MLI tree and every setting, so a second test session builds nothing.

The MLI tree is `$MLITOOL_MLI_ROOT` when set (a user's own checkout), else the copy in
`../shared/mli`. A missing tool or tree raises `MliUnavailable` with the reason (`MliTreeMissing` for
the tree), which tests turn into a skip (a failure in CI for the tree, tests/support/paths.py) and
benchmarks print.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from tests.support.paths import ROOT, SHARED

MLI_ROOT_ENV = "MLITOOL_MLI_ROOT"
CACHE = ROOT / ".cache" / "mli"

ROUND_MODES = ("UP", "CONVERGENT")
FULL_ACCUS = ("OFF", "ON")
CONFIGS = tuple((r, a) for r in ROUND_MODES for a in FULL_ACCUS)
DEBUG_MODE = "DBG_MODE_RET_CODES"
C_FLAGS = "-O2 -fPIC"
WORKERS = 2  # the machine's cores; one single-threaded build per core

# Read by `mlitool run --round/--accu`: the executor setting that matches each build.
RUN_OPTIONS = {"UP": "up", "CONVERGENT": "convergent", "OFF": "reduced", "ON": "full"}

_SHARED_HEADERS = {"2.0": "embarc_mli_2.0.2", "1.1": "embarc_mli_1.1", "1.0": "embarc_mli_1.0"}
_TOOLS = ("cmake", "gcc", "g++")


class MliUnavailable(Exception):
    """The MLI tree or a build tool is missing; the message says which and how to provide it."""


class MliTreeMissing(MliUnavailable):
    """The MLI sources or headers are missing: shared reference material, not a tool."""


@dataclass(frozen=True)
class MliBuild:
    """One native build of MLI 2.x: what a C program needs to compile against it and link it."""

    round_mode: str  # UP | CONVERGENT
    full_accu: str  # OFF | ON
    include_dirs: tuple[Path, ...]
    library: Path  # libmli.a

    @property
    def name(self) -> str:
        """`UP_ACCU_OFF` ...: the directory names of ../shared/golden."""
        return f"{self.round_mode}_ACCU_{self.full_accu}"

    @property
    def cflags(self) -> list[str]:
        return [f"-I{d}" for d in self.include_dirs]

    @property
    def ldflags(self) -> list[str]:
        """After the objects on a gcc link line: the library is C++ (libstdc++) and uses libm."""
        return [str(self.library), "-lstdc++", "-lm"]

    @property
    def run_options(self) -> list[str]:
        """The `mlitool run` options whose arithmetic this build computes."""
        return ["--round", RUN_OPTIONS[self.round_mode], "--accu", RUN_OPTIONS[self.full_accu]]


def mli2_root() -> Path:
    """The MLI 2.x source tree: $MLITOOL_MLI_ROOT, else ../shared/mli/embarc_mli_2.0.2."""
    named = os.environ.get(MLI_ROOT_ENV)
    root = Path(named) if named else SHARED / "mli" / _SHARED_HEADERS["2.0"]
    if (
        not (root / "lib" / "CMakeLists.txt").is_file()
        or not (root / "include" / "mli_api.h").is_file()
    ):
        where = f"{MLI_ROOT_ENV}={named}" if named else str(root)
        raise MliTreeMissing(
            f"no MLI 2.x source tree at {where} (lib/CMakeLists.txt and include/mli_api.h); "
            f"set {MLI_ROOT_ENV} to an embARC MLI 2.x checkout"
        )
    return root


def header_dirs(mli_version: str) -> tuple[Path, ...]:
    """The real MLI headers for an MLI version ("2.0", "1.1", "1.0"): the -I dirs that make `mli_api.h` resolve.

    2.0 follows $MLITOOL_MLI_ROOT like the library build; 1.x are the header-only copies in ../shared."""
    if mli_version == "2.0":
        return _mli2_include_dirs(mli2_root())
    include = SHARED / "mli" / _SHARED_HEADERS[mli_version] / "include"
    if not (include / "mli_api.h").is_file():
        raise MliTreeMissing(
            f"no MLI {mli_version} headers at {include} (set MLITOOL_SHARED to the shared "
            "reference material)"
        )
    return (include,)


def build_mli(configs=CONFIGS, cache: Path = CACHE) -> dict[tuple[str, str], MliBuild]:
    """Build MLI 2.x for each (ROUND_MODE, FULL_ACCU) in `configs`, reusing cached builds.

    Returns {(round_mode, full_accu): MliBuild}. Raises MliUnavailable when a tool or the tree is
    missing, RuntimeError (with the build log) when the build itself fails."""
    missing = [t for t in _TOOLS if shutil.which(t) is None]
    if missing:
        raise MliUnavailable(
            f"{', '.join(missing)} not on PATH: building the MLI library needs cmake, gcc and g++"
        )
    root = mli2_root()
    key = _cache_key(root)
    includes = _mli2_include_dirs(root)
    builds = {
        cfg: MliBuild(
            cfg[0], cfg[1], includes, cache / key / f"{cfg[0]}_ACCU_{cfg[1]}" / "libmli.a"
        )
        for cfg in configs
    }
    todo = [b for b in builds.values() if not b.library.is_file()]
    if todo:
        (cache / key).mkdir(parents=True, exist_ok=True)
        with ThreadPoolExecutor(max_workers=WORKERS) as pool:
            list(pool.map(lambda b: _build_locked(root, b), todo))
    return builds


def _mli2_include_dirs(root: Path) -> tuple[Path, ...]:
    # MLI's own PUBLIC includes (lib/mli_lib.cmake); lib/src/private is among them.
    return (root / "include", root / "include" / "api", root / "lib" / "src" / "private")


def _cache_key(root: Path) -> str:
    """Content of every file of the tree that the build reads, plus every setting and tool version."""
    digest = hashlib.sha256()
    for part in ("cmake", "include", "lib"):
        for path in sorted((root / part).rglob("*")):
            if path.is_file():
                digest.update(
                    str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0"
                )
    for setting in (
        DEBUG_MODE,
        C_FLAGS,
        _version("cmake"),
        _version("gcc"),
        _version("g++"),
        _PROJECT.encode().hex(),
    ):
        digest.update(setting.encode() + b"\0")
    return digest.hexdigest()[:16]


def _version(tool: str) -> str:
    return subprocess.run(
        [tool, "--version"], capture_output=True, text=True, check=True
    ).stdout.splitlines()[0]


# The tiny CMake project that hosts MLI's lib/CMakeLists.txt (which has no project() of its own).
_PROJECT = """cmake_minimum_required(VERSION 3.13)
project(mli_native C CXX)
add_subdirectory("${MLI_LIB_HOME_DIR}/lib" mli)
"""


def _build_locked(root: Path, build: MliBuild) -> None:
    """Build one configuration unless another process did meanwhile (a lock file serialises them)."""
    out_dir = build.library.parent
    with open(out_dir.parent / f"{out_dir.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not build.library.is_file():
            _build(root, build, out_dir)


def _build(root: Path, build: MliBuild, out_dir: Path) -> None:
    with tempfile.TemporaryDirectory(prefix=f"build-{build.name}-", dir=out_dir.parent) as tmp:
        src, bld = Path(tmp) / "src", Path(tmp) / "build"
        src.mkdir()
        (src / "CMakeLists.txt").write_text(_PROJECT)
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        configure = [
            "cmake",
            "-S",
            str(src),
            "-B",
            str(bld),
            *generator,
            f"-DMLI_LIB_HOME_DIR={root}",
            f"-DROUND_MODE={build.round_mode}",
            f"-DFULL_ACCU={build.full_accu}",
            f"-DMLI_DEBUG_MODE={DEBUG_MODE}",
            f"-DCMAKE_C_FLAGS={C_FLAGS}",
            f"-DCMAKE_CXX_FLAGS={C_FLAGS}",
            "-DCMAKE_BUILD_TYPE=",
        ]
        for cmd in (configure, ["cmake", "--build", str(bld), "--parallel", "1"]):
            done = subprocess.run(cmd, capture_output=True, text=True)
            if done.returncode != 0:
                raise RuntimeError(
                    f"MLI {build.name} build failed: {' '.join(cmd)}\n{done.stdout}\n{done.stderr}"
                )
        built = next(bld.rglob("libmli.a"), None)
        if built is None:
            raise RuntimeError(f"MLI {build.name} build made no libmli.a under {bld}")
        out_dir.mkdir(exist_ok=True)
        staged = out_dir / "libmli.a.tmp"
        shutil.copyfile(built, staged)
        os.replace(staged, build.library)  # atomic: a cached library is always complete
