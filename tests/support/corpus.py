"""The Keras-export corpus (`tests/corpus`, or a folder of your own): its files and what each is."""

from __future__ import annotations

import json
from pathlib import Path


def entries(corpus: Path) -> dict[str, dict]:
    """DIR/corpus.json's files, or (a folder of .tflite files without one, e.g. a corpus of
    your own) what the files say: the variant from the input and activation types, the batch
    from the input's shape signature, float inputs in [-1, 1]."""
    index = corpus / "corpus.json"
    if index.exists():
        return json.loads(index.read_text())["files"]
    from mlitool.errors import MlitoolError
    from mlitool.tflite.reader import read_model

    found = {}
    for path in sorted(corpus.glob("*.tflite")):
        try:
            g = read_model(path).main
        except MlitoolError as exc:  # listed all the same: its measure then says why
            found[path.name] = {"variant": "int8", "batch": "?", "inputs": [], "error": str(exc)}
            continue
        (i,) = g.inputs[:1]
        t = g.tensors[i]
        int16 = any(x.dtype == "int16" and x.data is None for x in g.tensors)
        variant = "float32" if t.dtype == "float32" else "16x8" if int16 else "int8"
        sig = list(t.shape_signature if t.shape_signature is not None else t.shape)
        found[path.name] = {
            "variant": variant,
            "batch": "dynamic" if sig and sig[0] == -1 else "fixed",
            "inputs": [{"shape": sig, "dtype": t.dtype}],
            "input_range": [-1.0, 1.0],
        }
    return found
