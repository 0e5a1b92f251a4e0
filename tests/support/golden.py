"""Reading the MLI 2.0.2 golden vectors (../shared/golden, see its README) into MliTensors."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mlitool.execute.mli.kernels.intops import Arith
from mlitool.mli.types import ElType, MliTensor, Role

MODES = ("UP_ACCU_OFF", "UP_ACCU_ON", "CONVERGENT_ACCU_OFF", "CONVERGENT_ACCU_ON")
_EL_TYPES = {
    "fx8": ElType.FX8,
    "fx16": ElType.FX16,
    "sa8": ElType.SA8,
    "sa32": ElType.SA32,
    "fp32": ElType.FP32,
}


def arith_of(mode: str) -> Arith:
    round_mode, _, accu = mode.partition("_ACCU_")
    return Arith(round_mode=round_mode.lower(), full_accu=accu == "ON")


@dataclass
class GoldenCase:
    index: int
    tags: str
    tensors: dict[str, MliTensor]  # every role, data = the logical values (outputs: as given)
    expected: dict[str, np.ndarray]  # role -> what the kernel wrote (outputs and in/outs)
    post: dict[str, MliTensor]  # output role -> tensor with the params the kernel left
    cfg: dict[str, int]


def _tensor(z, prefix: str, role: str, type_name: str) -> MliTensor:
    data = z[prefix]
    el_type = _EL_TYPES[type_name]
    kw = {}
    if el_type.is_fx:
        kw["frac_bits"] = int(z[prefix + "_frac_bits"])
    elif el_type.is_sa:
        kw.update(
            zero_point=z[prefix + "_zero_point"].astype(np.int16),
            scale=z[prefix + "_scale"].astype(np.int16),
            scale_frac_bits=z[prefix + "_scale_frac_bits"].astype(np.int8),
            dim=int(z[prefix + "_dim"]),
        )
    stride = tuple(int(s) for s in z[prefix + "_mem_stride"]) if data.ndim else ()
    return MliTensor(
        name=role,
        role=Role.ACTIVATION,
        shape=data.shape,
        el_type=el_type,
        data=data,
        mem_stride=stride,
        **kw,
    )


def _post(z, prefix: str, given: MliTensor) -> MliTensor:
    """The output tensor with the params the kernel wrote back (or the given ones)."""
    import dataclasses

    if prefix + "_post_frac_bits" in z.files:
        return dataclasses.replace(given, frac_bits=int(z[prefix + "_post_frac_bits"]))
    if prefix + "_post_scale" in z.files:
        return dataclasses.replace(
            given,
            zero_point=z[prefix + "_post_zero_point"].astype(np.int16),
            scale=z[prefix + "_post_scale"].astype(np.int16),
            scale_frac_bits=z[prefix + "_post_scale_frac_bits"].astype(np.int8),
            dim=int(z[prefix + "_post_dim"]),
        )
    return given


def load(golden_dir: Path, mode: str, kernel: str) -> tuple[dict, list[GoldenCase]]:
    """(meta, cases) of one golden file, e.g. load(dir, 'UP_ACCU_OFF', 'conv2d_hwcn_fx16')."""
    with np.load(golden_dir / mode / f"{kernel}.npz") as z:
        meta = json.loads(str(z["meta_json"]))
        cases = []
        for i in range(int(z["num_cases"])):
            p = f"c{i:03d}"
            tensors, expected, post = {}, {}, {}
            for role in meta["case_roles"][i]:
                t = _tensor(z, f"{p}_{role}", role, meta["role_types"][role])
                tensors[role] = t
                if role in meta["outputs"]:
                    expected[role] = z[f"{p}_{role}"]
                    post[role] = _post(z, f"{p}_{role}", t)
                if role in meta.get("inouts") or []:
                    expected[role] = z[f"{p}_{role}_out"]
            cfg_fields = meta.get("cfg_fields") or []
            cfg = dict(zip(cfg_fields, z[f"{p}_cfg"].tolist())) if f"{p}_cfg" in z.files else {}
            cases.append(GoldenCase(i, meta["case_tags"][i], tensors, expected, post, cfg))
    return meta, cases


def kernels(golden_dir: Path) -> list[str]:
    """Every kernel variant of the golden set (file stems of one mode directory)."""
    return sorted(p.stem for p in (golden_dir / MODES[0]).glob("*.npz"))
