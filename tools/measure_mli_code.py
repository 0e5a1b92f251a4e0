"""Measure the code each MLI 2.0.2 function adds to an ARC HS image and write the table the
footprint reads (mlitool/data/mli_code_arc_hs.json).

    python tools/measure_mli_code.py [--out FILE]

For every public function of the cross-built library (`mli_krn_*`, `mli_mov_*`, `mli_hlp_*`: the
kernels, their kernel-size specializations, the LUT builders, moves and helpers) it links a tiny
main that takes that function's address, with --gc-sections, and records the library's input
sections the link kept (.text, .rodata, .data; the map names them). A model's MLI code is then the
union of its functions' sections, so code two kernels share counts once. Section bytes are rounded
up to 4 (the alignment of ARC code and of MLI's tables; the map's fill shows no larger one).
It also measures the C of each of mlitool's fallback kernels (`mlitool.fallback`) the same way:
the model code the footprint adds for a model that uses one.

Toolchain, target, flags and MLI build settings are tests/support/arc_image.py's and are written
into the table. Needs Debian's gcc-12-arc-linux-gnu and g++-12-arc-linux-gnu, and cmake.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support import arc_image  # noqa: E402

OUT = ROOT / "mlitool" / "data" / "mli_code_arc_hs.json"
PREFIXES = ("mli_krn_", "mli_mov_", "mli_hlp_")
CODE_KINDS = ("text", "rodata", "data")


def public_functions(library: Path) -> list[str]:
    """The library's defined global C functions whose names start with PREFIXES."""
    nm = arc_image.GCC.replace("gcc-12", "nm")
    out = subprocess.run(
        [nm, "--defined-only", "-g", str(library)], capture_output=True, text=True, check=True
    ).stdout
    names = {parts[2] for parts in map(str.split, out.splitlines()) if len(parts) == 3}
    return sorted(n for n in names if n.startswith(PREFIXES))


def _member(origin: str) -> str:
    """`.../libmli.a(mli_krn_conv2d_hwcn.cc.obj)` -> `mli_krn_conv2d_hwcn.cc.obj`."""
    return origin.rsplit("(", 1)[1].rstrip(")")


def _round4(n: int) -> int:
    return (n + 3) // 4 * 4


def measure_one(function: str, library: Path, work: Path) -> dict[str, int]:
    """{"member:section": bytes} of the library sections a main referencing `function` keeps."""
    d = work / function
    d.mkdir()
    main = d / "main.c"
    main.write_text(
        f"extern void {function}(void);\n"
        f"void *volatile keep;\n"
        f"int main(void) {{ keep = (void *)&{function}; return 0; }}\n"
    )
    obj = arc_image.compile_c(main, d / "main.o")
    pieces = arc_image.link([obj], library, d / "main.elf")
    kept: dict[str, int] = {}
    for p in pieces:
        if arc_image.from_mli(p.origin) and p.kind in CODE_KINDS:
            key = f"{_member(p.origin)}:{p.section}"
            # The piece's bytes carry the fill before it; the section's own size rounded to 4 is
            # what it costs wherever it lands.
            kept[key] = kept.get(key, 0) + p.size - p.fill
    return {k: _round4(v) for k, v in kept.items()}


def measure_fallback(work: Path) -> dict[str, int]:
    """Bytes of code each fallback kernel's C (with the helpers it uses) adds, as the emitter
    writes it into NAME.c, and of the fixed-point helpers alone (shared by the kernels that use
    them: a model counts them once)."""
    from mlitool import op_families
    from mlitool.mli.kinds import fallback_kernels

    op_families.load()  # the families register their kernels

    library = arc_image.build_mli()
    out: dict[str, int] = {}
    for name, k in sorted(fallback_kernels().items()):
        out[name] = _fallback_bytes([k], work / name, library)
    fixed = [k for k in fallback_kernels().values() if k.fixedpoint]
    if len(fixed) >= 2:
        pair = _fallback_bytes(fixed[:2], work / "pair", library)
        out["fixedpoint_helpers"] = out[fixed[0].kernel] + out[fixed[1].kernel] - pair
    return out


def _fallback_bytes(kernels, d: Path, library: Path) -> int:
    """Code of a C file holding `kernels` (as the emitter fills them in) that a main calling
    each of them keeps."""
    from mlitool.mli import fallback

    d.mkdir()
    lines = ["#include <stdint.h>", '#include "mli_api.h"']
    helpers = fallback.helpers(kernels).replace("@P@", "fb")
    lines.append(helpers.replace("static ", "static __attribute__((unused)) "))
    calls = []
    for i, k in enumerate(kernels):
        fn = f"fb_kernel{i}"
        if k.cfg_type:  # as mlitool.emit.fallback_c writes it
            fields = " ".join(f"int32_t {f};" for f in k.cfg)
            fields += " mli_data_container state;" if k.state else ""
            lines.append(f"typedef struct {{ {fields} }} cfg{i};")
        src = k.c_source.replace("@STORAGE@", "").replace("@FN@", fn).replace("@P@", "fb")
        lines.append(src.replace("@CFG@", f"cfg{i}"))
        calls.append(f"keep[{i}] = (void *)&{fn};")
    lines.append(f"void *volatile keep[{len(kernels)}];")
    lines.append(f"int main(void) {{ {' '.join(calls)} return 0; }}")
    src = d / "fb.c"
    src.write_text("\n".join(lines) + "\n")
    obj = arc_image.compile_c(src, d / "fb.o")
    pieces = arc_image.link([obj], library, d / "fb.elf")
    mine = [p for p in pieces if p.origin == str(obj) and p.kind in CODE_KINDS]
    return sum(_round4(p.size - p.fill) for p in mine if p.section != ".text.main")


def measure(workers: int = 2) -> dict:
    library = arc_image.build_mli()
    functions = public_functions(library)
    with tempfile.TemporaryDirectory(prefix="mli-code-") as tmp:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            kept = list(pool.map(lambda f: measure_one(f, library, Path(tmp)), functions))
        fallback = measure_fallback(Path(tmp))
    sections: dict[str, int] = {}
    kernels: dict[str, dict] = {}
    for function, secs in zip(functions, kept):
        sections.update(secs)
        kernels[function] = {"bytes": sum(secs.values()), "sections": sorted(secs)}
    return {
        "about": (
            "Bytes of MLI library code (.text, .rodata, .data input sections, each rounded up to "
            "4) that a --gc-sections link keeps for each public MLI function; a set of functions "
            "costs the union of their sections. Written by tools/measure_mli_code.py."
        ),
        "mli": "embARC MLI 2.0.2, portable code",
        "mli_settings": arc_image.MLI_SETTINGS,
        "toolchain": arc_image.compiler_version(),
        "target": arc_image.TARGET,
        "cflags": list(arc_image.CFLAGS),
        "ldflags": list(arc_image.LDFLAGS),
        "sections": sections,
        "functions": kernels,
        "fallback": fallback,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    try:
        table = measure()
    except arc_image.ArcUnavailable as e:
        print(f"measure_mli_code: {e}", file=sys.stderr)
        return 2
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    tmp.replace(args.out)
    print(
        f"{len(table['functions'])} functions, {len(table['sections'])} sections, "
        f"{len(table['fallback'])} fallback entries -> {args.out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
