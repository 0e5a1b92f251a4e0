"""The options of a command, settled once: `ModelOptions` (what the command line gave) over the
config file into `Settings` (the `Target`, format, layout, overrides, the build's arithmetic,
the config file read), which every stage after it takes: lowering, the emitter's inputs, run,
verify, report, tune.

`settle` is the one place options meet the config file; `settings_for` settles the options a
library caller of `mli.lower.lower` gives by keyword (no config file, no build).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from mlitool.config import Config, load_config
from mlitool.errors import OptionError
from mlitool.mli.target import DEFAULT, Target, check_options

if TYPE_CHECKING:
    from mlitool.execute.mli.kernels.intops import Arith


@dataclass(frozen=True)
class ModelOptions:
    """Which MLI model to make of a .tflite file, and the MLI build that runs it.

    None means: the config file's value, else the default (sa8, MLI 2.0, hwc for 2.x / chw for
    1.x; build preset vpx). The build fields matter only where the model is executed."""

    format: str | None = None
    mli: str | None = None  # MLI version: 2.0 | 1.1 | 1.0
    layout: str | None = None
    config: Path | None = None
    overrides: dict = field(default_factory=dict)  # per-layer, over the config file's
    weights_only: bool = False
    calibration: Path | None = None
    calibration_method: str = "minmax"
    build: str | None = None  # preset (the CLI's --target): vpx | em
    round_mode: str | None = None  # up | convergent, over the preset's
    accu: str | None = None  # full | reduced, over the preset's
    fast_memory: str | None = None  # convert's --fast-memory SIZE, over the config's

    def arith(self) -> Arith:
        """The arithmetic of the chosen build (OptionError on a bad name)."""
        from mlitool.execute.mli.presets import arith_for

        return arith_for(self.build, self.round_mode, self.accu)


@dataclass(frozen=True)
class Settings:
    """ModelOptions settled against the config file."""

    format: str
    target: Target
    layout: str
    overrides: dict
    file: Config = field(default_factory=Config)  # the config file read (empty: none)
    fast_memory: int | None = None  # bytes of fast memory the runtime is planned for
    arith: Arith | None = None  # the build that runs the model (None: a library lowering)
    options: ModelOptions = field(default_factory=ModelOptions)  # as the command line gave them

    @property
    def config(self) -> str | None:
        """The config file read, as shown to the user."""
        return self.file.path


def settle(opts: ModelOptions) -> Settings:
    """Settle the build, format, MLI version, layout, overrides and fast memory from options
    over the config file (OptionError on a bad value)."""
    arith = opts.arith()  # bad build names fail first
    cfg = load_config(opts.config)
    fmt = (opts.format or cfg.format or "sa8").lower()
    layout = opts.layout or cfg.layout
    overrides = {**cfg.overrides, **opts.overrides}
    target, layout = check_options(
        fmt, opts.mli or cfg.mli or DEFAULT.version, layout and layout.lower(), overrides
    )
    fast = cfg.fast_memory
    if opts.fast_memory is not None:
        from mlitool.mli.memory.placement import parse_size

        fast = parse_size(opts.fast_memory, "--fast-memory")
    if fast is not None and not target.mov_staging:
        raise OptionError(
            f"--fast-memory needs mli_mov_tensor_sync, which MLI {target.version} does not have"
        )
    return Settings(fmt, target, layout, overrides, cfg, fast, arith, opts)


def settings_for(
    format: str = "sa8",
    mli_version: str = DEFAULT.version,
    layout: str = "hwc",
    overrides: Mapping | None = None,
) -> Settings:
    """Settings of a library caller's options (no config file, no build)."""
    overrides = dict(overrides or {})
    target, layout = check_options(format, mli_version, layout.lower(), overrides)
    return Settings(format, target, layout, overrides)
