"""Input data files for run / verify / calibration: .npy (one input) or .npz (keyed by input name,
or `arr_0` for a single-input model). The leading dimension counts samples.

Float arrays are real values; integer arrays must have the input's own dtype and are taken as its
quantized values. Anything else (shape, dtype, missing or unknown keys) is an InputDataError
naming the file.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np

from mlitool import ir
from mlitool.errors import InputDataError, UnsupportedError

_NPY_MAGIC, _ZIP_MAGIC = b"\x93NUMPY", b"PK\x03\x04"


def _load(path: Path) -> dict[str, np.ndarray]:
    if path.is_dir():
        raise InputDataError("is a directory; give a .npy or .npz file", str(path))
    if path.exists() and not path.is_file():  # /dev/null, a FIFO: there is no array to read
        raise InputDataError("is not a regular file; give a .npy or .npz file", str(path))
    if not path.is_file():
        raise InputDataError("no such file", str(path))
    try:
        with open(path, "rb") as fh:
            head = fh.read(6)
    except OSError as exc:
        raise InputDataError(f"cannot read: {exc.strerror or exc}", str(path)) from None
    if not head.startswith((_NPY_MAGIC, _ZIP_MAGIC)):
        raise InputDataError(
            "is not a .npy or .npz file (no NumPy or zip signature); save "
            "arrays with numpy.save or numpy.savez",
            str(path),
        )
    try:
        # .npy is memory-mapped: batches page in as they run, so a dataset larger than RAM works
        data = np.load(path, allow_pickle=False, mmap_mode="r" if head == _NPY_MAGIC else None)
        if isinstance(data, np.ndarray):
            return {"": data}
        with data:
            return {k: data[k] for k in data.files}
    except InputDataError:
        raise
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
        if isinstance(exc, ValueError) and ("pickle" in str(exc) or "Python objects" in str(exc)):
            raise InputDataError(
                "holds Python objects (pickles are refused); save plain numeric arrays", str(path)
            ) from None
        raise InputDataError(f"not a readable .npy/.npz file ({exc})", str(path)) from None


def _check(t: ir.Tensor, a: np.ndarray, path: Path, key: str) -> np.ndarray:
    where = f"input {t.name!r}" + (f" (key {key!r})" if key else "")
    shape = tuple(t.shape)
    if a.dtype.kind == "f":
        _check_finite(a, where, path)
    elif a.dtype.kind in "iub":
        if np.dtype(t.dtype).kind == "f":
            raise InputDataError(
                f"{where}: {a.dtype} data for a float32 input; give real values as a float array",
                str(path),
            )
        if a.dtype != np.dtype(t.dtype):
            raise InputDataError(
                f"{where}: {a.dtype} data for a {t.dtype} input; give the "
                f"input's quantized values as {t.dtype}, or real values as a "
                "float array",
                str(path),
            )
    else:
        raise InputDataError(f"{where}: unsupported array dtype {a.dtype}", str(path))
    ok = a.ndim == len(shape) + 1 and a.shape[1:] == shape
    if not ok and shape and shape[0] == 1:
        ok = a.ndim == len(shape) and a.shape[1:] == shape[1:]
    if not ok:
        raise InputDataError(
            f"{where}: got shape {a.shape}, expected {_expected(shape)}{_hint(shape, a.shape)}",
            str(path),
        )
    if a.shape[0] == 0:
        raise InputDataError(f"{where}: no samples", str(path))
    return a


def _expected(shape: tuple) -> str:
    """The shape a batch of N samples has, in the form people have it."""
    if shape and shape[0] == 1:
        return (
            f"(N, {', '.join(map(str, shape[1:]))})"
            + ("," if len(shape) == 2 else "")
            + f" for N samples of the model's {list(shape)}"
        )
    return f"(N, {', '.join(map(str, shape))}) for N samples"


def _hint(shape: tuple, got: tuple) -> str:
    sample = shape[1:] if shape and shape[0] == 1 else shape
    if got == sample:
        return "; this is one sample without the sample axis: save a[None]"
    if len(got) == len(sample) + 1 and sorted(got[1:]) == sorted(sample) and len(sample) == 3:
        return (
            "; the samples look channels-first: the model takes HWC (np.transpose(a, (0, 2, 3, 1)))"
        )
    return ""


def _check_finite(a: np.ndarray, where: str, path: Path) -> None:
    bad = ~np.isfinite(a)
    if bad.any():
        first = tuple(int(k) for k in np.argwhere(bad)[0])
        raise InputDataError(
            f"{where}: {int(bad.sum())} non-finite value(s) (NaN or inf), the "
            f"first {a[first]} at sample {first[0]}, index {first[1:]}",
            str(path),
        )


def fed_inputs(graph: ir.Graph) -> list[int]:
    """The graph inputs samples are given for (not constants); a model without any (TFLite runs
    it: its outputs are constants) has no samples to run on."""
    inputs = [i for i in graph.inputs if not graph.tensors[i].is_constant]
    if not inputs:
        raise UnsupportedError(
            "the model has no inputs to give samples for: running it "
            "(run, verify, report, calibration) needs at least one"
        )
    return inputs


def load_labels(path: str | Path, samples: int) -> np.ndarray:
    """The class index of each sample: a .npy of integers, or a .npz with a `labels` array (one
    per sample, in the order of --input)."""
    path = Path(path)
    arrays = _load(path)
    if "" not in arrays and "labels" not in arrays:
        raise InputDataError(f"has no 'labels' array (it has {', '.join(arrays)})", str(path))
    a = np.asarray(arrays.get("labels", arrays.get("")))
    if a.dtype.kind not in "iu" or a.ndim != 1:
        raise InputDataError(
            f"labels are one integer class index per sample (got {a.dtype} of shape "
            f"{list(a.shape)})",
            str(path),
        )
    if len(a) != samples or (len(a) and a.min() < 0):
        raise InputDataError(
            f"{len(a)} labels for {samples} samples; give one class index >= 0 per sample",
            str(path),
        )
    return a.astype(np.int64)


def load_inputs(path: str | Path, graph: ir.Graph) -> dict[int, np.ndarray]:
    """{input tensor index: batch} from a .npy/.npz file, checked against `graph`'s inputs."""
    path = Path(path)
    inputs = fed_inputs(graph)
    arrays = _load(path)
    by_name = {graph.tensors[i].name: i for i in inputs}
    out: dict[int, np.ndarray] = {}
    if list(arrays) == [""] or (len(inputs) == 1 and list(arrays) == ["arr_0"]):
        if len(inputs) != 1:
            raise InputDataError(
                f"the model has {len(inputs)} inputs ("
                f"{', '.join(by_name)}): give an .npz keyed by input name",
                str(path),
            )
        key = next(iter(arrays))
        out[inputs[0]] = _check(graph.tensors[inputs[0]], arrays[key], path, key)
    else:
        unknown = [k for k in arrays if k not in by_name]
        if unknown:
            raise InputDataError(
                f"keys {unknown} name no model input (inputs: {', '.join(by_name)})", str(path)
            )
        for name, idx in by_name.items():
            if name not in arrays:
                raise InputDataError(f"no array for input {name!r}", str(path))
            out[idx] = _check(graph.tensors[idx], arrays[name], path, name)
    sizes = {a.shape[0] for a in out.values()}
    if len(sizes) > 1:
        raise InputDataError(f"inputs have different sample counts {sorted(sizes)}", str(path))
    return out
