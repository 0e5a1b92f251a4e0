"""The support checks of UNIDIRECTIONAL_SEQUENCE_LSTM: what MLI's plain `lstm_cell` cannot
express. Written as every check in `checks` (a docstring that is the refusal, fields or None);
`checks` registers `LSTM_CHECKS` in this order."""

from __future__ import annotations

from mlitool import lstm_slots as lstm

_OK = None  # each takes a `checks.Subject` (not imported: checks imports this module)


def lstm_needs_mli2(s):
    """MLI {version} has no LSTM kernel (MLI 2.x has mli_krn_lstm_cell_*)"""
    return {"version": s.target.version} if not s.target.offers("lstm_cell") else _OK


def lstm_plain_cell(s):
    """LSTM with {what}: MLI's lstm_cell is the plain cell (no peephole, projection, layer
    normalization or coupled input and forget gates)"""
    present = [
        name
        for name, slots in lstm.OPTIONAL_PARTS.items()
        if any(k < len(s.op.inputs) and s.op.inputs[k] >= 0 for k in slots)
    ]
    if len(s.op.inputs) <= lstm.BIASES[-1] or s.op.inputs[lstm.INPUT_WEIGHTS[0]] < 0:
        present.append("coupled input and forget gates (CIFG)")
    return {"what": " and ".join(present)} if present else _OK


def lstm_constant_weights(s):
    """LSTM weight or bias tensor {name!r} is not a constant"""
    for k in lstm.INPUT_WEIGHTS + lstm.RECURRENT_WEIGHTS + lstm.BIASES:
        t = s.input(k)
        if t.data is None:
            return {"name": t.name}
    return _OK


def lstm_tanh(s):
    """LSTM activation {act}: MLI's lstm_cell applies tanh to the cell input (TFLite applies the
    fused activation there and to the output), so only TANH matches"""
    act = s.op.options.get("fused_activation", "TANH")
    return _OK if act == "TANH" else {"act": act}


def lstm_batch_major(s):
    """time-major LSTM input {shape}: one sequence per inference is [1, T, N]"""
    x = s.input(0)
    major = s.op.options.get("time_major", False) and len(x.shape) == 3 and x.shape[0] != 1
    return {"shape": list(x.shape)} if major or len(x.shape) != 3 else _OK


LSTM_CHECKS = (lstm_needs_mli2, lstm_plain_cell, lstm_constant_weights, lstm_tanh, lstm_batch_major)
