"""`emit`: an MliModel -> NAME.h, NAME.c, NAME.json in one atomic step.

Everything that can fail on the model (checks, names, configs) runs before the first byte is
written; the large data arrays are then streamed to temporary files that replace the old outputs
only when all three files are complete. The manifest is made last, while the C files are being
flushed to disk (see `mlitool.plumbing.fsio`); should it fail, earlier outputs are still untouched.
"""

from __future__ import annotations

import re
from pathlib import Path

from mlitool.emit.analysis import Emission, analyze
from mlitool.emit.c_mli1 import Mli10, Mli11
from mlitool.emit.c_mli2 import Mli2
from mlitool.emit.csource import COptions, CWriter
from mlitool.emit.dialect import Dialect
from mlitool.emit.manifest import manifest_text
from mlitool.emit.runtime import Runtime
from mlitool.emit.symbols import check_file_name, check_not_shadowing, make_symbols
from mlitool.errors import OptionError
from mlitool.footprint.summary import image_parts
from mlitool.mli.calls import kernel_calls
from mlitool.mli.target import Target
from mlitool.mli.types import MliModel
from mlitool.plumbing.fsio import write_files_atomically

_HEADER = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./+-]*")
_SECTION = re.compile(r"[A-Za-z0-9_.$]+")


def check_options(header: str, align: int | None, section: str | None) -> None:
    """Reject option values that would produce broken or injected C."""
    inner = header[1:-1] if header.startswith("<") and header.endswith(">") else header
    if not _HEADER.fullmatch(inner) or ".." in inner.split("/"):
        raise OptionError(
            f"--header {header!r}: give a header file name such as mli_api.h or "
            "<mli_api.h> (letters, digits, '_', '.', '/', '-', '+')"
        )
    if align is not None and (align < 1 or align > 4096 or align & (align - 1)):
        raise OptionError(f"--align {align}: use a power of two from 1 to 4096")
    if section is not None and not _SECTION.fullmatch(section):
        raise OptionError(f"--section {section!r}: use letters, digits, '_', '.' and '$'")


def dialect_for(target: Target) -> Dialect:
    """The C struct dialect of `target`."""
    return next(d for d in (Mli2, Mli11, Mli10) if d.target is target)()


def emit(
    model: MliModel,
    out_dir: str | Path,
    name: str,
    *,
    header: str = "mli_api.h",
    align: int | None = None,
    section: str | None = None,
    single_header: bool = False,
    runtime: bool = False,
    verified_build: str | None = None,
    selftest=None,
    fast_memory: int | None = None,
) -> list[Path]:
    """Write `NAME.h` and `NAME.c` (or only `NAME.h` with `single_header`) and `NAME.json` into
    `out_dir` for `model.mli_version`; returns the paths written. On any error nothing is written.
    `runtime`: add NAME_init / NAME_run (`mlitool.emit.runtime`; `convert` does by default, its
    `--no-runtime` leaves them out); `verified_build` names the MLI build
    ("ROUND_MODE=UP FULL_ACCU=OFF") the header states the outputs are verified for;
    `selftest` (a `mlitool.emit.selftest.SelfTestData`) adds NAME_selftest.c;
    `fast_memory`: a budget in bytes, to plan every kernel operand into fast memory
    (`mlitool.emit.fast_runtime`; needs `runtime`)."""
    check_file_name(name)
    check_not_shadowing(name, header)
    check_options(header, align, section)
    out = Path(out_dir)
    if not out.is_dir():
        raise OptionError(f"--out {out}: not a directory")
    dialect = dialect_for(model.target)  # OptionError on an unknown version
    if fast_memory is not None and not runtime:
        raise OptionError("--fast-memory plans the runtime; it cannot go with --no-runtime")
    syms = make_symbols(model, name, runtime=runtime, fast=fast_memory is not None)
    infos = analyze(model, dialect, syms)
    em = Emission(model, infos, syms, dialect, name)
    opts = COptions(header=header, align=align, section=section, single_header=single_header)
    rt = None
    if fast_memory is not None:
        from mlitool.emit.fast_runtime import FastRuntime

        rt = FastRuntime(em, single_header, verified_build, fast_memory=fast_memory)
    elif runtime:
        rt = Runtime(em, single_header, verified_build)
    writer = CWriter(em, opts, rt)
    st = _selftest(model, syms, name, selftest, rt, single_header)
    if st:
        writer.extra_header = st.header_lines()

    def manifest():
        yield manifest_text(
            model,
            infos,
            syms,
            name,
            header,
            writer.totals,
            writer.cfg_items,
            {**rt.manifest(), **({"selftest": st.manifest()} if st else {})} if rt else None,
            # the linked image's parts (`mlitool.footprint`): the runtime's, so only with one
            image_parts(model, fast_memory, specialize=False) if rt else None,  # as called
            kernel_calls(model, getattr(rt, "fplan", None)) if rt else None,
        ).encode("ascii")

    files = {out / f"{name}.h": writer.header()}
    if not single_header:
        files[out / f"{name}.c"] = writer.source()
    if st:
        files[out / st.file] = st.source()
    files[out / f"{name}.json"] = manifest()
    return write_files_atomically(files)


def _selftest(model: MliModel, syms, name: str, data, rt, single_header: bool):
    """The self-test of `data`, or None; refused where there is no runtime to run it on."""
    if data is None:
        return None
    from mlitool.emit.selftest import SelfTest

    if rt is None or single_header:
        raise OptionError(
            "--selftest runs NAME_run from NAME_selftest.c: it needs the runtime and NAME.c "
            "(not --no-runtime or --single-header)"
        )
    return SelfTest(model, syms, name, data)
