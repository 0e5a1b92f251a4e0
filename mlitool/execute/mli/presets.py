"""MLI build presets (the CLI's `--target`): the ROUND_MODE / FULL_ACCU pair a library build uses.

From embARC MLI 2.0.2 (README "Build Configuration Options", lib/mli_lib.cmake):
* ARC EM / HS: ROUND_MODE=CONVERGENT (the platform default, and the only mode the EM/HS DSP
  post-shift is configured for); accumulators keep their guard bits, which FULL_ACCU=ON emulates
  (the option's documented default).
* ARC VPX: ROUND_MODE=UP (the only mode VPX supports) with the reduced-precision accumulator
  post-processing that FULL_ACCU=OFF emulates.
`vpx` is the default build: the MLI 2.0.2 README recommends MLI 2.x for ARC VPX only ("EM/HS
targets are not properly tested and optimized"; EM/HS users are pointed to MLI 1.1), so a model
converted for MLI 2.x most likely runs on a VPX build. That build is also the one with the
reduced-accumulator hazard, which verify should show by default rather than hide.
"""

from __future__ import annotations

from mlitool.errors import OptionError
from mlitool.execute.mli.kernels.intops import CONVERGENT, UP, Arith

BUILD_PRESETS: dict[str, Arith] = {
    "em": Arith(round_mode=CONVERGENT, full_accu=True),
    "vpx": Arith(round_mode=UP, full_accu=False),
}
DEFAULT_BUILD = "vpx"


def arith_for(
    build: str | None = None, round_mode: str | None = None, accu: str | None = None
) -> Arith:
    """The Arith of the `build` preset (default vpx), with explicit `round_mode` (up|convergent)
    and `accu` (full|reduced) overriding the preset."""
    build = (build or DEFAULT_BUILD).lower()
    if build not in BUILD_PRESETS:
        raise OptionError(f"--target {build!r}: choose {' or '.join(BUILD_PRESETS)}")
    base = BUILD_PRESETS[build]
    rm = base.round_mode if round_mode is None else round_mode.lower()
    if rm not in (UP, CONVERGENT):
        raise OptionError(f"--round {round_mode!r}: choose up or convergent")
    if accu is None:
        full = base.full_accu
    elif accu.lower() in ("full", "reduced"):
        full = accu.lower() == "full"
    else:
        raise OptionError(f"--accu {accu!r}: choose full or reduced")
    return Arith(round_mode=rm, full_accu=full)


def describe(arith: Arith) -> str:
    return f"ROUND_MODE={arith.round_mode.upper()} FULL_ACCU={'ON' if arith.full_accu else 'OFF'}"
