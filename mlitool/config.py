"""Settings from TOML: `--config FILE`, else the nearest `mlitool.toml` or `pyproject.toml` with a
`[tool.mlitool]` table, searched upward from the working directory (as ruff and pytest do).

Schema (every key optional):

    [tool.mlitool]            # in mlitool.toml the table may also be the top level
    format = "sa8"            # default format: sa8 | fx16 | fx8w16d | fx8
    mli = "2.0"               # 2.0 | 1.1 | 1.0
    layout = "hwc"            # hwc | chw (MLI 1.x)
    fast_memory = "64K"       # convert: fast-memory budget, bytes (K, M suffixes) or an int
    min_snr = 20.0            # verify, report, tune: the thresholds of their verdict (the
    max_lsb = 1               #   options of the same names win); sizes in bytes, K and M
    min_accuracy = 90.0       #   suffixes (percent; checked when --labels is given)
    ram_budget = "48K"
    rom_budget = "256K"

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

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from mlitool.errors import OptionError
from mlitool.mli.target import LAYOUTS, MLI_VERSIONS, choose
from mlitool.mli.types import FORMATS

_THRESHOLDS = {"min_snr", "max_lsb", "min_accuracy", "ram_budget", "rom_budget"}
_TOP_KEYS = {"format", "mli", "layout", "fast_memory", "layer", "selftest", *_THRESHOLDS}
_LAYER_KEYS = {"index", "name", "op", "format"}


@dataclass
class Config:
    format: str | None = None
    mli: str | None = None
    layout: str | None = None
    fast_memory: int | None = None  # bytes
    overrides: dict = field(default_factory=dict)
    path: str | None = None
    selftest: int | None = None  # convert: test inputs in NAME_selftest.c
    thresholds: dict = field(default_factory=dict)  # verdict thresholds given (sizes in bytes)


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
    cfg.layout = _choice(table.get("layout"), LAYOUTS, "layout", path)
    st = table.get("selftest")
    if st is not None and (isinstance(st, bool) or not isinstance(st, int) or st < 1):
        raise OptionError(f"selftest = {st!r}: give the number of test inputs (1 or more)", path)
    cfg.selftest = st
    if "fast_memory" in table:
        from mlitool.mli.memory.placement import parse_size

        try:
            cfg.fast_memory = parse_size(table["fast_memory"], "fast_memory")
        except OptionError as exc:
            raise OptionError(exc.message, path) from None
    cfg.thresholds = _thresholds(table, path)
    layers = table.get("layer", [])
    if not isinstance(layers, list):
        raise OptionError("'layer' must be an array of tables ([[tool.mlitool.layer]])", path)
    for n, entry in enumerate(layers):
        where = f"layer entry {n + 1}"
        if not isinstance(entry, dict):
            raise OptionError(f"{where} is not a table", path)
        bad = sorted(set(entry) - _LAYER_KEYS)
        if bad:
            raise OptionError(
                f"{where}: unknown key(s) {bad} (allowed: {sorted(_LAYER_KEYS)})", path
            )
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


def _thresholds(table: dict, path: str) -> dict:
    """The verdict thresholds the table sets, checked (sizes parsed to bytes)."""
    from mlitool.mli.memory.placement import parse_size

    out = {}
    for key in sorted(_THRESHOLDS & set(table)):
        v = table[key]
        if key.endswith("budget"):
            try:
                v = parse_size(v, key)
            except OptionError as exc:
                raise OptionError(exc.message, path) from None
        elif isinstance(v, bool) or not isinstance(v, int if key == "max_lsb" else (int, float)):
            kind = "an integer" if key == "max_lsb" else "a number"
            raise OptionError(f"{key} = {v!r}: give {kind}", path)
        out[key] = v
    return out


def _choice(value, allowed, what: str, path: str):
    if value is None:
        return None
    if not isinstance(value, str):
        raise OptionError(f"{what} = {value!r} is not a string", path)
    return choose(what, value.lower(), allowed, path)


def load_config(path: str | Path | None = None, search_from: str | Path | None = None) -> Config:
    """Read `path` (mlitool.toml or pyproject.toml), or, without it, the config `find_config`
    finds from `search_from` (default: the working directory). None found: an empty Config."""
    if path is None:
        found = find_config(Path(search_from) if search_from is not None else Path.cwd())
        if found is None:
            return Config()
        path, data = found
        return parse_config(data, _shown(path))
    return parse_config(_read_toml(Path(path)), str(path))


def find_config(start: Path) -> tuple[Path, dict] | None:
    """The nearest `mlitool.toml`, or `pyproject.toml` that has `[tool.mlitool]`, in `start` or
    its parents: (path, decoded TOML). A pyproject.toml without the table does not count."""
    for folder in [start, *start.resolve().parents]:
        own = folder / "mlitool.toml"
        if own.is_file():
            return own, _read_toml(own)
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file():
            data = _read_toml(pyproject)
            if isinstance(data.get("tool"), dict) and "mlitool" in data["tool"]:
                return pyproject, data
    return None


def _read_toml(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise OptionError("config file not found", str(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise OptionError(f"cannot read config: {exc}", str(path)) from None
    except tomllib.TOMLDecodeError as exc:
        raise OptionError(f"invalid TOML: {exc}", str(path)) from None


def _shown(path: Path) -> str:
    """A found config's path as a user would type it: relative to the working directory."""
    try:
        return os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return str(path)


def check_overrides(graph, overrides: dict, path: str | None) -> None:
    """Every override selects at least one op of `graph`: one that matches nothing is a typo
    (OptionError naming the closest selector the model has)."""
    import difflib

    op_types = sorted({op.type for op in graph.ops})
    names = sorted({graph.tensors[op.outputs[0]].name for op in graph.ops if op.outputs})
    problems = []
    for key in sorted(overrides, key=str):
        if isinstance(key, int):
            indices = sorted(op.index for op in graph.ops)
            if key not in indices:
                problems.append(
                    f"index = {key} matches no layer (the model has ops "
                    f"{indices[0]}..{indices[-1]})"
                    if indices
                    else f"index = {key} matches no layer (the model has no ops)"
                )
        elif key.startswith("op:"):
            if key[3:] not in op_types:
                close = difflib.get_close_matches(key[3:], op_types, n=1)
                hint = (
                    f"did you mean op = {close[0]!r}?"
                    if close
                    else f"the model's ops are {', '.join(op_types)}"
                )
                problems.append(f"op = {key[3:]!r} matches no layer; {hint}")
        elif key not in names:
            # TFLite fuses names ("a/Relu;a/BiasAdd;..."): compare with each part too.
            parts = {part: name for name in names for part in name.split(";")}
            close = [
                parts[p] for p in difflib.get_close_matches(key, sorted(parts), n=1, cutoff=0.6)
            ]
            hint = (
                f"; did you mean name = {close[0]!r}?"
                if close
                else " (names are op output tensors, as `mlitool inspect` shows them)"
            )
            problems.append(f"name = {key!r} matches no layer{hint}")
    if problems:
        raise OptionError("override " + "; override ".join(problems), path)
