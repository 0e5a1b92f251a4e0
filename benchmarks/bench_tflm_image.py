"""ROM and RAM of the same models built with TensorFlow Lite Micro and its arc_mli kernels for
ARC HS, side by side with the image mlitool's emitted C links to.

    python benchmarks/bench_tflm_image.py TFLM_TREE --flatbuffers DIR --gemmlowp DIR --ruy DIR \
        [--work DIR] [--mlitool-json FILE] [--json FILE] [MODEL ...]

TFLM_TREE is a checkout of github.com/tensorflow/tflite-micro (fetched, never committed); the
third-party trees are the ones its Makefile downloads (flatbuffers at the tag it names with its
flatbuffers.patch applied, gemmlowp and ruy at its pinned commits). Nothing fetched or built is
written into the repository: objects go to --work (default: a temporary directory).

The TFLM side, per model: TFLM's runtime sources (the Makefile's MICROLITE_CC_BASE_SRCS and
TFL_CC_SRCS without tests), the kernels of exactly the model's ops with arc_mli's versions where
it has one (conv, depthwise_conv, fully_connected, pooling, add) and arc_mli's MLI 2.0 glue
(mli_interface_mli_20.cc, scratch buffers, slicers), compiled with Debian's ARC cross g++ and
the flags tests/support/arc_image.py builds MLI 2.0.2 with (-mcpu=hs38 -O2 -ffunction-sections
-fdata-sections) plus TFLM's `BUILD_TYPE=release` defines; a main with a MicroMutableOpResolver
of exactly the model's ops, a static MicroInterpreter on the smallest arena AllocateTensors
accepts, the .tflite as a const array, one Invoke; linked with --gc-sections against the same
libmli.a (arc_image.build_mli). The map gives ROM = .text + .rodata + .data image and RAM =
.data + .bss (the arena is in .bss), of everything but the C/C++ runtime (crt, libc, libgcc,
libstdc++), which mlitool's image leaves out as well.

The arena cannot be measured on the ARC image (no simulator here), so the smallest arena
AllocateTensors accepts is found by bisection on a 32-bit host build (`g++ -m32`, the same
sources, MLI built for the host): TFLM's arena holds pointers and pointer-holding structs, so a
64-bit host would overstate it. The bisected arena is the one the ARC image reserves. The host
probe does not Invoke (arc_mli's conv crashes in mli_mov_tensor_sync off-target).

The models are first adapted to MLI 2.0's weight layout (what TFLM's arc adaptation_tool.py
does), and arc_mli at the fetched commit needs fixes to compile and prepare (_ARC_MLI_FIXES,
applied to copies under --work): with them FULLY_CONNECTED runs TFLM's reference int8 kernel.

mlitool's side is tools/link_image.py (its --json output, or measured here).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support import arc_image  # noqa: E402
from tests.support.mli_build import _PROJECT, mli2_root  # noqa: E402

DEFINES = (
    "-DTF_LITE_STATIC_MEMORY",
    "-DTF_LITE_DISABLE_X86_NEON",
    "-DMLI_2_0",
    "-DNDEBUG",
    "-DTF_LITE_STRIP_ERROR_STRINGS",
)
CXX_ONLY = ("-std=c++17", "-fno-rtti", "-fno-exceptions", "-fno-threadsafe-statics")
HOST_FLAGS = ("-m32", "-O1", "-ffunction-sections", "-fdata-sections")
# Debian's /usr/include/asm comes with gcc-multilib, which conflicts with the ARC cross compiler;
# the x86-64 asm headers serve -m32 too, so a private include dir points at them.
HOST_ASM = Path("/usr/include/x86_64-linux-gnu/asm")


def host_flags(work: Path) -> tuple[str, ...]:
    inc = work / "host-include"
    inc.mkdir(parents=True, exist_ok=True)
    if not (inc / "asm").exists():
        (inc / "asm").symlink_to(HOST_ASM)
    return (*HOST_FLAGS, f"-idirafter{inc}")


# Runtime sources that are test or benchmark support, not part of the library.
_NOT_LIBRARY = {
    "fake_micro_context.cc",
    "mock_micro_graph.cc",
    "test_helpers.cc",
    "test_helper_custom_ops.cc",
    "array.cc",
}
# Kernel files every build needs (helpers the op kernels call).
_KERNEL_HELPERS = (
    "kernel_util.cc",
    "micro_tensor_utils.cc",
    "decompress.cc",
    "decompress_common.cc",
)
# Op name -> kernel file stems where the stem is not the op's lower-case name.
_OP_FILES = {
    "AVERAGE_POOL_2D": ("pooling",),
    "MAX_POOL_2D": ("pooling",),
    "CONV_2D": ("conv",),
    "DEPTHWISE_CONV_2D": ("depthwise_conv",),
    "MEAN": ("reduce",),
    "SUM": ("reduce",),
    "RELU": ("activations",),
    "RELU6": ("activations",),
}
# arc_mli's MLI 2.0 glue (ext_libs/arc_mli.inc with ARC_TAGS=mli20_experimental).
_ARC_MLI_GLUE = (
    "scratch_buffers.cc",
    "scratch_buf_mgr.cc",
    "mli_slicers.cc",
    "mli_interface_mli_20.cc",
)


def model_ops(model: Path) -> list[str]:
    """The builtin op names the model uses, in first-use order."""
    from ai_edge_litert.interpreter import Interpreter

    names: list[str] = []
    for op in Interpreter(model_path=str(model))._get_ops_details():
        if op["op_name"] not in names:
            names.append(op["op_name"])
    return names


def adapt_to_mli(model: Path, tflm: Path, out: Path) -> Path:
    """The model with its weights in MLI 2.0's layout, as arc_mli built with MLI_2_0 requires
    (TFLM's tools/make/targets/arc/adaptation_tool.py, which needs TensorFlow; the same
    transposes here with TFLM's generated schema module): CONV_2D filters OHWI -> HWIO,
    DEPTHWISE_CONV_2D filters' shape 1HWC -> HW1C, FULLY_CONNECTED weights transposed."""
    import importlib.util

    import flatbuffers
    import numpy as np

    spec = importlib.util.spec_from_file_location(
        "tflm_schema", tflm / "tensorflow" / "lite" / "python" / "schema_py_generated.py"
    )
    schema = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(schema)
    buf = bytearray(model.read_bytes())
    m = schema.ModelT.InitFromObj(schema.Model.GetRootAsModel(buf, 0))

    def transpose(tensor, order):
        shape = np.asarray(tensor.shape)
        buffer = m.buffers[tensor.buffer]
        data = np.asarray(buffer.data, dtype=np.uint8)
        buffer.data = data.reshape(shape).transpose(order).flatten()
        tensor.shape = shape[order]
        tensor.quantization.quantizedDimension = order.index(tensor.quantization.quantizedDimension)

    codes = [max(c.builtinCode, c.deprecatedBuiltinCode) for c in m.operatorCodes]
    for sub in m.subgraphs:
        for op in sub.operators:
            code, weights = (
                codes[op.opcodeIndex],
                sub.tensors[op.inputs[1]] if len(op.inputs) > 1 else None,
            )
            if code == 3:  # CONV_2D
                transpose(weights, [1, 2, 3, 0])
            elif code == 4:  # DEPTHWISE_CONV_2D
                weights.shape = np.asarray(weights.shape)[[1, 2, 0, 3]]
            elif code == 9:  # FULLY_CONNECTED
                transpose(weights, [1, 0])
    builder = flatbuffers.Builder(1024)
    builder.Finish(m.Pack(builder), file_identifier=b"TFL3")
    out.write_bytes(bytes(builder.Output()))
    return out


def resolver_method(op: str) -> str:
    """MicroMutableOpResolver's Add method for a builtin op: CONV_2D -> AddConv2D."""
    return "Add" + "".join(p.upper() if p[0].isdigit() else p.capitalize() for p in op.split("_"))


def sources(tflm: Path, ops) -> list[Path]:
    micro = tflm / "tensorflow" / "lite" / "micro"
    srcs = []
    for sub in ("", "arena_allocator", "memory_planner", "tflite_bridge"):
        srcs += sorted((micro / sub).glob("*.cc"))
    for top in ((tflm / "tensorflow" / "lite"), (tflm / "tensorflow" / "compiler")):
        for path in sorted(top.rglob("*.c*")):
            rel = path.relative_to(tflm).as_posix()
            if path.suffix in (".cc", ".c") and not rel.startswith(
                ("tensorflow/lite/micro/", "tensorflow/lite/experimental/")
            ):
                srcs.append(path)
    srcs = [s for s in srcs if not s.name.endswith("_test.cc") and s.name not in _NOT_LIBRARY]
    kernels, arc = micro / "kernels", micro / "kernels" / "arc_mli"
    names = list(_KERNEL_HELPERS)
    for op in ops:
        for stem in _OP_FILES.get(op, (op.lower(),)):
            names += [f"{stem}.cc", f"{stem}_common.cc"]
    for name in dict.fromkeys(names):
        if (arc / name).is_file():
            srcs.append(arc / name)
        elif (kernels / name).is_file():
            srcs.append(kernels / name)
    srcs += [arc / name for name in _ARC_MLI_GLUE]
    return srcs


# arc_mli at the fetched commit does not compile against TFLM's own MicroContext (not built by
# TFLM's CI since 2022): three-argument AllocateTempInputTensor calls, AllocateTemp*Tensor called
# without the micro context, and the int16 depthwise path calling a helper for the reference
# kernel's OpDataConv. The benchmark compiles patched copies; the int16 depthwise path (not run
# by int8 models) gets default parameters.
_ARC_MLI_FIXES = (
    (None, r"(?<![>\w])(AllocateTemp(?:Input|Output)Tensor\()", r"GetMicroContext(context)->\1"),
    (None, r"AllocateTempInputTensor\(context, node, ", "AllocateTempInputTensor(node, "),
    ("depthwise_conv.cc", r"DepthwiseConvParamsQuantized\(params, data\),", "DepthwiseParams{},"),
    # arc_mli's depthwise Prepare allocates temp tensors it never frees, which TFLM's allocator
    # now refuses; the temp section is reset all the same (the TODO b/209453859 behaviour), so
    # the arena is what it would be with the tensors freed.
    (
        "single_arena_buffer_allocator.cc",
        r"ResetTempAllocations\(\) \{\n(.*\n)*?  if \(!IsAllTempDeallocated\(\)\) \{\n"
        r"    MicroPrintf\(\n.*\n    return kTfLiteError;\n  \}\n",
        "ResetTempAllocations() {\n",
    ),
    # fully_connected.cc's MLI path crashes in Prepare: AdjustBiasTensor reads the weights'
    # per-tensor scale as a per-channel array. Its layers take the reference int8 kernel (the
    # MLI path stays linked, so ROM still counts its code).
    (
        "fully_connected.cc",
        r"data->is_mli_applicable =\n      IsMliApplicable\(",
        "data->is_mli_applicable = false &&\n      IsMliApplicable(",
    ),
    # fully_connected.cc sets data->cfg->relu without ever allocating cfg.
    (
        "fully_connected.cc",
        r"(\n#ifdef MLI_2_0\n    if \(data->output_activation_min == -128 &&)",
        "\n    data->cfg = static_cast<mli_fully_connected_cfg*>(context->AllocatePersistentBuffer("
        "context, sizeof(mli_fully_connected_cfg)));\\1",
    ),
)


def patch_arc_mli(srcs, tflm: Path, work: Path) -> tuple[list[Path], list[str]]:
    """`srcs` with arc_mli files the fixes change replaced by patched copies under work/patched;
    the files patched."""
    out, changed = [], []
    for src in srcs:
        if not any(n in (src.name, None) for n, _, _ in _ARC_MLI_FIXES) or (
            "arc_mli" not in src.parts and not any(n == src.name for n, _, _ in _ARC_MLI_FIXES)
        ):
            out.append(src)
            continue
        text = fixed = src.read_text()
        for name, old, new in _ARC_MLI_FIXES:
            if name == src.name or (name is None and "arc_mli" in src.parts):
                fixed = re.sub(old, new, fixed, count=0 if name is None else 1)
        if fixed == text:
            out.append(src)
            continue
        copy = work / "patched" / src.relative_to(tflm)
        copy.parent.mkdir(parents=True, exist_ok=True)
        if not copy.is_file() or copy.read_text() != fixed:
            copy.write_text(fixed)
        out.append(copy)
        changed.append(src.name)
    return out, changed


def include_dirs(tflm: Path, deps: dict[str, Path]) -> list[Path]:
    mli = mli2_root()
    return [
        tflm,
        deps["flatbuffers"] / "include",
        deps["gemmlowp"],
        deps["ruy"],
        mli / "include",
        mli / "include" / "api",
    ]


def _compile_one(cmd: list[str]) -> str | None:
    done = subprocess.run(cmd, capture_output=True, text=True)
    return None if done.returncode == 0 else f"{' '.join(cmd)}\n{done.stderr[-3000:]}"


def compile_library(cxx, flags, srcs, incs, tflm: Path, out: Path, ar: str) -> Path:
    """Compile `srcs` into objects under `out` (kept between runs) and archive them."""
    out.mkdir(parents=True, exist_ok=True)
    jobs, objs = [], []
    for src in srcs:
        base = tflm if src.is_relative_to(tflm) else out.parent / "patched"
        rel = ("" if base == tflm else "patched__") + src.relative_to(base).as_posix()
        obj = out / (rel.replace("/", "__") + ".o")
        objs.append(obj)
        if obj.is_file() and obj.stat().st_mtime > src.stat().st_mtime:
            continue
        lang = CXX_ONLY if src.suffix == ".cc" else ("-x", "c", "-std=c17")
        jobs.append(
            [
                cxx,
                *flags,
                *lang,
                *DEFINES,
                *(f"-I{d}" for d in incs),
                "-c",
                str(src),
                "-o",
                str(obj),
            ]
        )
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        errors = [e for e in pool.map(_compile_one, jobs) if e]
    if errors:
        raise RuntimeError("TFLM compile failed:\n" + "\n\n".join(errors[:3]))
    lib = out / "libtflm.a"
    lib.unlink(missing_ok=True)
    subprocess.run([ar, "rcs", str(lib), *map(str, objs)], check=True)
    return lib


def build_host_mli(out: Path, flags) -> Path:
    """libmli.a for the 32-bit host, the settings arc_image builds the ARC one with."""
    library = out / "libmli.a"
    if library.is_file():
        return library
    flags = " ".join(flags)
    with tempfile.TemporaryDirectory(prefix="mli32-", dir=out) as tmp:
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
            f"-DMLI_LIB_HOME_DIR={mli2_root()}",
            *(f"-D{k}={v}" for k, v in arc_image.MLI_SETTINGS.items()),
            f"-DCMAKE_C_FLAGS={flags}",
            f"-DCMAKE_CXX_FLAGS={flags}",
            "-DCMAKE_BUILD_TYPE=",
        ]
        for cmd in (configure, ["cmake", "--build", str(bld), "--parallel", "2"]):
            done = subprocess.run(cmd, capture_output=True, text=True)
            if done.returncode != 0:
                raise RuntimeError(f"host MLI build failed: {done.stdout[-2000:]}\n{done.stderr}")
        shutil.copyfile(next(bld.rglob("libmli.a")), library)
    return library


_MAIN = """#include <stdint.h>
#include <stdlib.h>
#include "tensorflow/lite/micro/micro_interpreter.h"
#include "tensorflow/lite/micro/micro_mutable_op_resolver.h"
#include "tensorflow/lite/schema/schema_generated.h"

alignas(16) static const uint8_t model_data[] = {{{data}}};
#ifdef ARENA_BYTES
alignas(16) static uint8_t arena[ARENA_BYTES];
#else
#include <stdio.h>
#endif
static tflite::MicroMutableOpResolver<{n_ops}> resolver;

int main(int argc, char** argv) {{
{adds}
  const tflite::Model* model = tflite::GetModel(model_data);
#ifdef ARENA_BYTES
  static tflite::MicroInterpreter interpreter(model, resolver, arena, ARENA_BYTES);
#else
  // Host probe: the arena size from argv; prints what AllocateTensors used.
  size_t bytes = (size_t)atol(argv[1]);
  uint8_t* arena = (uint8_t*)aligned_alloc(16, (bytes + 15) / 16 * 16);
  tflite::MicroInterpreter interpreter(model, resolver, arena, bytes);
#endif
  if (interpreter.AllocateTensors() != kTfLiteOk) return 2;
#ifdef ARENA_BYTES
  if (interpreter.Invoke() != kTfLiteOk) return 3;
#else
  // The arena is fixed by AllocateTensors (arc_mli's scratch buffers included); the host
  // probe does not Invoke: arc_mli's conv crashes in mli_mov_tensor_sync off-target.
  printf("%zu\\n", interpreter.arena_used_bytes());
#endif
  return 0;
}}
"""


def write_main(model: Path, ops, path: Path) -> None:
    data = model.read_bytes()
    hexed = ",".join(str(b) for b in data)
    adds = "\n".join(f"  resolver.{resolver_method(op)}();" for op in ops)
    path.write_text(_MAIN.format(data=hexed, n_ops=len(ops), adds=adds))


def smallest_arena(probe: Path) -> int:
    """The smallest arena (bytes) AllocateTensors accepts, by bisection."""

    def ok(n: int) -> bool:
        return subprocess.run([str(probe), str(n)], capture_output=True).returncode == 0

    hi = 1 << 16
    while not ok(hi):
        hi *= 2
        if hi > 1 << 26:
            raise RuntimeError(f"{probe}: no arena up to 64 MiB works")
    lo = 0
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


_TOOLCHAIN = ("/usr/lib/gcc-cross/", "/usr/arc-linux-gnu/", "/usr/lib/gcc/")


def from_toolchain(origin: str) -> bool:
    return origin.startswith(_TOOLCHAIN) or "linker stubs" in origin


def measure(model: Path, tflm: Path, deps: dict[str, Path], work: Path) -> dict:
    ops = model_ops(model)
    srcs, patched = patch_arc_mli(sources(tflm, ops), tflm, work)
    incs = include_dirs(tflm, deps)
    key = hashlib.sha256("\0".join(map(str, srcs)).encode()).hexdigest()[:12]
    name = model.stem
    mdir = work / name
    mdir.mkdir(parents=True, exist_ok=True)
    main = mdir / "main.cc"
    write_main(adapt_to_mli(model, tflm, mdir / f"{name}_mli.tflite"), ops, main)

    # Host probe (32-bit) for the arena.
    hflags = host_flags(work)
    host_lib = compile_library("g++", hflags, srcs, incs, tflm, work / f"host-{key}", "ar")
    host_mli = build_host_mli(work, hflags)
    probe = mdir / "probe"
    cmd = [
        "g++",
        *hflags,
        *CXX_ONLY,
        *DEFINES,
        *(f"-I{d}" for d in incs),
        str(main),
        str(host_lib),
        str(host_mli),
        "-Wl,--gc-sections",
        "-o",
        str(probe),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"host probe link failed:\n{done.stderr[-3000:]}")
    arena = smallest_arena(probe)
    used = int(
        subprocess.run([str(probe), str(arena)], capture_output=True, text=True, check=True).stdout
    )

    # ARC image.
    flags = arc_image.CFLAGS
    arc_lib = compile_library(
        arc_image.GXX, flags, srcs, incs, tflm, work / f"arc-{key}", "arc-linux-gnu-ar"
    )
    mli = arc_image.build_mli()
    main_o = mdir / "main.o"
    done = subprocess.run(
        [
            arc_image.GXX,
            *flags,
            *CXX_ONLY,
            *DEFINES,
            f"-DARENA_BYTES={arena}",
            *(f"-I{d}" for d in incs),
            "-c",
            str(main),
            "-o",
            str(main_o),
        ],
        capture_output=True,
        text=True,
    )
    if done.returncode:
        raise RuntimeError(f"ARC main compile failed:\n{done.stderr[-3000:]}")
    pieces = arc_image.link([main_o, arc_lib], mli, mdir / f"{name}.elf")
    ours = [p for p in pieces if not from_toolchain(p.origin)]
    part = {
        "main": arc_image.sizes(ours, lambda o: o == str(main_o)),
        "tflm": arc_image.sizes(ours, lambda o: "libtflm.a(" in o),
        "mli": arc_image.sizes(ours, arc_image.from_mli),
    }
    total = arc_image.sizes(ours, lambda o: True)
    return {
        "model": name,
        "ops": ops,
        "patched": patched,
        "tflite_bytes": model.stat().st_size,
        "arena": arena,
        "arena_used_bytes": used,
        "parts": part,
        "rom_bytes": total["text"] + total["rodata"] + total["data"],
        "ram_bytes": total["data"] + total["bss"],
    }


def mlitool_rows(path: Path | None, models) -> dict[str, dict]:
    if path is not None:
        rows = json.loads(path.read_text())
    else:
        sys.path.insert(0, str(ROOT / "tools"))
        import link_image

        rows = [link_image.measure(m) for m in models]
    return {r["model"]: r["linked"] for r in rows}


def table(tflm_rows, ml) -> str:
    lines = [
        "| model | TFLM ROM | TFLM RAM (arena) | mlitool ROM | mlitool RAM (arena) | ROM saved | "
        "RAM saved |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in tflm_rows:
        m = ml[r["model"]]
        lines.append(
            f"| {r['model']} | {r['rom_bytes']:,} | {r['ram_bytes']:,} ({r['arena']:,}) | "
            f"{m['rom_bytes']:,} | {m['ram_bytes']:,} ({m['arena']:,}) | "
            f"{1 - m['rom_bytes'] / r['rom_bytes']:.0%} | {1 - m['ram_bytes'] / r['ram_bytes']:.0%} |"
        )
    return "\n".join(lines)


def breakdown(rows) -> str:
    lines = [
        "| model | ops | main .text / .rodata (model) / .data / .bss (arena+interpreter) | "
        "TFLM .text / .rodata / .data / .bss | MLI .text / .rodata |",
        "|---|---|---:|---:|---:|",
    ]
    for r in rows:
        mn, t, mli = r["parts"]["main"], r["parts"]["tflm"], r["parts"]["mli"]
        lines.append(
            f"| {r['model']} | {', '.join(r['ops'])} | {mn['text']:,} / {mn['rodata']:,} / "
            f"{mn['data']:,} / {mn['bss']:,} | {t['text']:,} / {t['rodata']:,} / {t['data']:,} / "
            f"{t['bss']:,} | {mli['text']:,} / {mli['rodata']:,} |"
        )
    return "\n".join(lines)


def tree_commit(tree: Path) -> str:
    stamp = tree / "COMMIT"
    return stamp.read_text().strip() if stamp.is_file() else "unknown (put the hash in TREE/COMMIT)"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tflm", type=Path, help="a tflite-micro checkout")
    ap.add_argument("--flatbuffers", type=Path, required=True)
    ap.add_argument("--gemmlowp", type=Path, required=True)
    ap.add_argument("--ruy", type=Path, required=True)
    ap.add_argument("--work", type=Path, help="build directory (kept); default a temporary one")
    ap.add_argument("--mlitool-json", type=Path, help="tools/link_image.py --json output")
    ap.add_argument("--json", type=Path, help="also write the rows as JSON")
    ap.add_argument("models", nargs="*", type=Path)
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT / "tools"))
    import link_image

    models = args.models or link_image.default_models()
    deps = {"flatbuffers": args.flatbuffers, "gemmlowp": args.gemmlowp, "ruy": args.ruy}
    try:
        arc_image.require()
        with tempfile.TemporaryDirectory(prefix="tflm-image-") as tmp:
            work = args.work or Path(tmp)
            rows = [measure(m, args.tflm.resolve(), deps, work.resolve()) for m in models]
    except arc_image.ArcUnavailable as e:
        print(f"bench_tflm_image: {e}", file=sys.stderr)
        return 2
    ml = mlitool_rows(args.mlitool_json, models)
    print(
        f"{arc_image.compiler_version()}, {' '.join(arc_image.CFLAGS)} "
        f"{' '.join(arc_image.LDFLAGS)}; TFLM {tree_commit(args.tflm)} with "
        f"{' '.join(DEFINES)} {' '.join(CXX_ONLY)}; MLI 2.0.2 "
        + " ".join(f"{k}={v}" for k, v in arc_image.MLI_SETTINGS.items())
    )
    print(table(rows, ml))
    print()
    print(breakdown(rows))
    if args.json:
        args.json.write_text(
            json.dumps({"tflm": rows, "mlitool": ml}, indent=1, sort_keys=True) + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
