"""Cross-linked ARC HS images: the real MLI 2.0.2 built with Debian's ARC cross compiler, C
compiled and linked with it, and the link map read back as bytes per object and section.

The toolchain is Debian's `gcc-12-arc-linux-gnu` / `g++-12-arc-linux-gnu` (apt). MLI is built from
its portable reference code (no MetaWare intrinsics: cmake sees no `ARC` platform, like the native
build in mli_build.py) with `MLI_DEBUG_MODE=DBG_MODE_RELEASE` and the `--target em` arithmetic
(ROUND_MODE=CONVERGENT, FULL_ACCU=ON), -mcpu=hs38 -O2 -ffunction-sections -fdata-sections, and
cached in `.cache/mli-arc` keyed by the tree, the settings and the compiler version. A link uses
--gc-sections and writes a map; `read_map` gives every input section that was kept, with the
alignment fill before it, so sums over an object are the bytes it adds to the image.

Used by tools/measure_mli_code.py (the per-kernel table), tools/link_image.py (the models' images)
and the footprint test. A missing compiler raises `ArcUnavailable` with the apt command.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from tests.support.mli_build import _PROJECT, mli2_root

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache" / "mli-arc"

GCC = "arc-linux-gnu-gcc-12"
GXX = "arc-linux-gnu-g++-12"
TARGET = "ARC HS (arc-linux-gnu, -mcpu=hs38)"
CFLAGS = ("-mcpu=hs38", "-O2", "-ffunction-sections", "-fdata-sections")
LDFLAGS = ("-Wl,--gc-sections",)
MLI_SETTINGS = {
    "MLI_DEBUG_MODE": "DBG_MODE_RELEASE",
    "ROUND_MODE": "CONVERGENT",
    "FULL_ACCU": "ON",
}
APT = "apt-get install -y gcc-12-arc-linux-gnu g++-12-arc-linux-gnu"

# Output sections by what they are in a flash/RAM budget; others (.eh_frame, .comment, ...) are
# kept apart as "other".
_KIND = {
    ".text": "text",
    ".init": "text",
    ".fini": "text",
    ".rodata": "rodata",
    ".data": "data",
    ".sdata": "data",
    ".bss": "bss",
    ".sbss": "bss",
}


class ArcUnavailable(Exception):
    """The ARC cross compiler (or cmake) is missing; the message says how to install it."""


@dataclass(frozen=True)
class Piece:
    """One kept input section: its output section's kind, its name, bytes (with the fill before
    it) and the object it came from (`lib.a(member.o)` for an archive member)."""

    kind: str
    section: str
    size: int
    origin: str
    fill: int = 0  # of `size`: the alignment fill before the section


def require() -> None:
    missing = [t for t in (GCC, GXX, "cmake") if shutil.which(t) is None]
    if missing:
        raise ArcUnavailable(f"{', '.join(missing)} not on PATH (Debian: {APT})")


def compiler_version() -> str:
    """'arc-linux-gnu-gcc-12 (Debian 12.2.0-13) 12.2.0'."""
    require()
    out = subprocess.run([GCC, "--version"], capture_output=True, text=True, check=True)
    return out.stdout.splitlines()[0]


def mli_include_dirs() -> tuple[Path, ...]:
    root = mli2_root()
    return (root / "include", root / "include" / "api", root / "lib" / "src" / "private")


def build_mli(cache: Path = CACHE) -> Path:
    """libmli.a for ARC HS (cached); raises ArcUnavailable or RuntimeError with the build log."""
    require()
    root = mli2_root()
    digest = hashlib.sha256()
    for part in ("cmake", "include", "lib"):
        for path in sorted((root / part).rglob("*")):
            if path.is_file():
                digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    for setting in (*CFLAGS, *sorted(MLI_SETTINGS.items()), compiler_version(), _PROJECT):
        digest.update(str(setting).encode() + b"\0")
    out = cache / digest.hexdigest()[:16]
    library = out / "libmli.a"
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not library.is_file():
            _build(root, out)
    return library


def _build(root: Path, out: Path) -> None:
    flags = " ".join(CFLAGS)
    with tempfile.TemporaryDirectory(prefix="build-arc-", dir=out) as tmp:
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
            "-DCMAKE_SYSTEM_NAME=Generic",
            f"-DCMAKE_C_COMPILER={GCC}",
            f"-DCMAKE_CXX_COMPILER={GXX}",
            f"-DMLI_LIB_HOME_DIR={root}",
            *(f"-D{k}={v}" for k, v in MLI_SETTINGS.items()),
            f"-DCMAKE_C_FLAGS={flags}",
            f"-DCMAKE_CXX_FLAGS={flags}",
            "-DCMAKE_BUILD_TYPE=",
        ]
        for cmd in (configure, ["cmake", "--build", str(bld), "--parallel", "1"]):
            done = subprocess.run(cmd, capture_output=True, text=True)
            if done.returncode != 0:
                raise RuntimeError(
                    f"ARC MLI build failed: {' '.join(cmd)}\n{done.stdout}\n{done.stderr}"
                )
        built = next(bld.rglob("libmli.a"))
        shutil.copyfile(built, out / "libmli.a.tmp")
        os.replace(out / "libmli.a.tmp", out / "libmli.a")


def compile_c(source: Path, obj: Path, include_dirs=()) -> Path:
    cmd = [GCC, *CFLAGS, *(f"-I{d}" for d in (*mli_include_dirs(), *include_dirs))]
    done = subprocess.run([*cmd, "-c", str(source), "-o", str(obj)], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{GCC} failed on {source}:\n{done.stderr}")
    return obj


def link(objects, library: Path, elf: Path) -> list[Piece]:
    """Link `objects` + `library` into `elf` with --gc-sections; the kept input sections."""
    mapfile = elf.with_suffix(".map")
    cmd = [GXX, *CFLAGS, *LDFLAGS, f"-Wl,-Map={mapfile}", *map(str, objects), str(library)]
    done = subprocess.run([*cmd, "-o", str(elf)], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"ARC link failed: {' '.join(cmd)}\n{done.stderr}")
    return read_map(mapfile.read_text())


_OUT = re.compile(r"^(\.\S+|COMMON)(?:\s+0x[0-9a-f]+\s+0x[0-9a-f]+.*)?$")
_IN = re.compile(r"^ (\S+)(?:\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(.+))?$")
_ADDR = re.compile(r"^\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(.+)$")
_FILL = re.compile(r"^ \*fill\*\s+0x[0-9a-f]+\s+0x([0-9a-f]+)")


def read_map(text: str) -> list[Piece]:
    """The input sections of a GNU ld map's "Linker script and memory map", each with the
    alignment fill just before it (the bytes placing it costs)."""
    body = text.split("Linker script and memory map", 1)[1]
    pieces: list[Piece] = []
    kind = "other"
    pending: str | None = None  # an input section whose address line follows
    fill = 0
    for line in body.splitlines():
        if pending is not None:
            m = _ADDR.match(line)
            if m:
                pieces.append(
                    Piece(kind, pending, int(m.group(2), 16) + fill, m.group(3).strip(), fill)
                )
                fill = 0
            pending = None
            continue
        m = _FILL.match(line)
        if m:
            fill += int(m.group(1), 16)
            continue
        if line.startswith(" *") or not line.strip():
            continue
        if not line.startswith(" "):
            m = _OUT.match(line)
            if m:
                kind = _KIND.get(m.group(1), "other")
                fill = 0
            continue
        m = _IN.match(line)
        if m and m.group(1).startswith((".", "COMMON")):
            if m.group(2) is None:
                pending = m.group(1)
            else:
                pieces.append(
                    Piece(kind, m.group(1), int(m.group(3), 16) + fill, m.group(4).strip(), fill)
                )
                fill = 0
    return [p for p in pieces if p.size]


def sizes(pieces, origin_test) -> dict[str, int]:
    """Bytes per kind ("text", "rodata", "data", "bss", "other") of the pieces whose origin
    passes `origin_test`."""
    out: dict[str, int] = defaultdict(int)
    for p in pieces:
        if origin_test(p.origin):
            out[p.kind] += p.size
    return {k: out.get(k, 0) for k in ("text", "rodata", "data", "bss", "other")}


def from_mli(origin: str) -> bool:
    return "libmli.a(" in origin


_MAIN = """#include "{name}.h"
static unsigned char arena[{up}_ARENA_BYTES] __attribute__((aligned({up}_ARENA_ALIGN)));
int main(void) {{
    if ({name}_init(arena, sizeof arena) != MLI_STATUS_OK) return 1;
    if ({name}_input(0u) == NULL) return 1;
    if ({name}_run() != MLI_STATUS_OK) return 1;
    return {name}_output(0u) == NULL;
}}
"""


_FAST_MAIN = """#include "{name}.h"
static unsigned char fast[{up}_FAST_BYTES + 1u] __attribute__((aligned(16)));
static unsigned char slow[{up}_SLOW_BYTES + 1u] __attribute__((aligned(16)));
int main(void) {{
    if ({name}_init(fast, {up}_FAST_BYTES, slow, {up}_SLOW_BYTES) != MLI_STATUS_OK) return 1;
    if ({name}_input(0u) == NULL) return 1;
    if ({name}_run() != MLI_STATUS_OK) return 1;
    return {name}_output(0u) == NULL;
}}
"""


def link_model(
    src_dir: Path, name: str, work: Path, fast: bool = False
) -> dict[str, dict[str, int]]:
    """Cross-link the emitted `src_dir/name.c` with MLI and a main that inits the model on a
    static arena and runs it once. Bytes per kind of the model's object ("model"), MLI's members
    ("mli") and the main ("main", whose .bss is the arena)."""
    library = build_mli()
    main = work / f"{name}_main.c"
    main.write_text((_FAST_MAIN if fast else _MAIN).format(name=name, up=name.upper()))
    model_o = compile_c(src_dir / f"{name}.c", work / f"{name}.o", [src_dir])
    main_o = compile_c(main, work / f"{name}_main.o", [src_dir])
    pieces = link([main_o, model_o], library, work / f"{name}.elf")
    return {
        "model": sizes(pieces, lambda o: o == str(model_o)),
        "mli": sizes(pieces, from_mli),
        "main": sizes(pieces, lambda o: o == str(main_o)),
        "functions": {
            p.section.removeprefix(".text."): p.size
            for p in pieces
            if p.origin == str(model_o) and p.kind == "text"
        },
    }


def undefined_mli(obj: Path) -> list[str]:
    """The MLI functions an object calls (its undefined `mli_` symbols)."""
    nm = GCC.replace("gcc-12", "nm")
    out = subprocess.run([nm, "-u", str(obj)], capture_output=True, text=True, check=True).stdout
    return sorted(w for line in out.splitlines() for w in line.split()[-1:] if w.startswith("mli_"))
