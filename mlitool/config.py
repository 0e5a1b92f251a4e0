"""`convert` settings from TOML: `--config mlitool.toml` or `[tool.mlitool]` in pyproject.toml.

Schema (every key optional):

    [tool.mlitool]            # in mlitool.toml the table may also be the top level
    format = "sa8"            # default format: sa8 | fx16 | fx8w16d | fx8
    mli = "2.0"               # 2.0 | 1.1 | 1.0
    layout = "hwc"            # hwc | chw (MLI 1.x)

    [[tool.mlitool.layer]]    # per-layer overrides; exactly one selector each
    index = 0                 # TFLite op index
    format = "fx16"

    [[tool.mlitool.layer]]
    name = "conv2d_1/Relu"    # the op's output tensor name, as `mlitool inspect` shows it
    format = "fx16"

    [[tool.mlitool.layer]]
    op = "SOFTMAX"            # every op of a TFLite type
    format = "fx16"

Overrides become `lower(overrides=...)` keys: int (index), "op:TYPE", or a tensor name.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from mlitool.errors import OptionError
from mlitool.mli.types import FORMATS, MLI_VERSIONS

_TOP_KEYS = {"format", "mli", "layout", "layer"}
_LAYER_KEYS = {"index", "name", "op", "format"}


@dataclass
class Config:
    format: str | None = None
    mli: str | None = None
    layout: str | None = None
    overrides: dict = field(default_factory=dict)
    path: str | None = None


def _table(data: dict, path: str) -> dict | None:
    tool = data.get("tool")
    if isinstance(tool, dict) and "mlitool" in tool:
        t = tool["mlitool"]
        if not isinstance(t, dict):
            raise OptionError("[tool.mlitool] is not a table", path)
        return t
    if Path(path).name == "pyproject.toml":
        return None
    return data


def parse_config(data: dict, path: str = "<config>") -> Config:
    """Validate a decoded TOML document (or its `[tool.mlitool]` table) into a `Config`."""
    table = _table(data, path)
    cfg = Config(path=path)
    if table is None:
        return cfg
    unknown = sorted(set(table) - _TOP_KEYS)
    if unknown:
        raise OptionError(f"unknown key(s) {unknown} (allowed: {sorted(_TOP_KEYS)})", path)
    cfg.format = _choice(table.get("format"), FORMATS, "format", path)
    cfg.mli = _choice(table.get("mli"), MLI_VERSIONS, "mli", path)
    cfg.layout = _choice(table.get("layout"), ("hwc", "chw"), "layout", path)
    layers = table.get("layer", [])
    if not isinstance(layers, list):
        raise OptionError("'layer' must be an array of tables ([[tool.mlitool.layer]])", path)
    for n, entry in enumerate(layers):
        where = f"layer entry {n + 1}"
        if not isinstance(entry, dict):
            raise OptionError(f"{where} is not a table", path)
        bad = sorted(set(entry) - _LAYER_KEYS)
        if bad:
            raise OptionError(f"{where}: unknown key(s) {bad} (allowed: {sorted(_LAYER_KEYS)})",
                              path)
        selectors = [k for k in ("index", "name", "op") if k in entry]
        if len(selectors) != 1:
            raise OptionError(f"{where}: give exactly one of index, name, op", path)
        fmt = _choice(entry.get("format"), FORMATS, f"{where} format", path)
        if fmt is None:
            raise OptionError(f"{where}: 'format' is missing", path)
        sel = selectors[0]
        value = entry[sel]
        if sel == "index":
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise OptionError(f"{where}: index must be a non-negative integer", path)
            key = value
        elif not isinstance(value, str) or not value:
            raise OptionError(f"{where}: {sel} must be a non-empty string", path)
        else:
            key = f"op:{value.upper()}" if sel == "op" else value
        if key in cfg.overrides and cfg.overrides[key] != fmt:
            raise OptionError(f"{where}: {sel} {value!r} is given two formats", path)
        cfg.overrides[key] = fmt
    return cfg


def _choice(value, allowed, what: str, path: str):
    if value is None:
        return None
    if not isinstance(value, str) or value.lower() not in allowed:
        raise OptionError(f"{what} = {value!r} is not one of {', '.join(allowed)}", path)
    return value.lower()


def load_config(path: str | Path | None = None, search_dir: str | Path | None = None) -> Config:
    """Read `path` (mlitool.toml or pyproject.toml), or, without it, `[tool.mlitool]` from
    pyproject.toml in `search_dir` when there is one. Missing pyproject: an empty Config."""
    if path is None:
        candidate = Path(search_dir or ".") / "pyproject.toml"
        if not candidate.is_file():
            return Config()
        path = candidate
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise OptionError("config file not found", str(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise OptionError(f"cannot read config: {exc}", str(path)) from None
    except tomllib.TOMLDecodeError as exc:
        raise OptionError(f"invalid TOML: {exc}", str(path)) from None
    return parse_config(data, str(path))
