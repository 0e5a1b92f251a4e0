"""UNIDIRECTIONAL_SEQUENCE_LSTM's input slots in TFLite's schema: `SLOTS` names them (its OpSpec's
slots, `op.input("cell_state")`), the groups below are their indices, read by the validator, the
support check, the lowering and both executors.

Gate tensors come in TFLite's order: input, forget, cell, output."""

GATES = ("input", "forget", "cell", "output")
SLOTS = (
    "input",
    *(f"input_to_{g}_weights" for g in GATES),  # [M, N]
    *(f"recurrent_to_{g}_weights" for g in GATES),  # [M, P]
    *(f"cell_to_{g}_weights" for g in ("input", "forget", "output")),  # peephole, [M] each
    *(f"{g}_gate_bias" for g in GATES),  # [M]
    "projection_weights",
    "projection_bias",  # [P, M], [P]
    "output_state",
    "cell_state",  # variables: [B, P], [B, M]
    *(f"{g}_layer_norm_coefficients" for g in GATES),
)


def _at(*names: str) -> tuple[int, ...]:
    return tuple(SLOTS.index(n) for n in names)


INPUT_WEIGHTS = _at(*(f"input_to_{g}_weights" for g in GATES))
RECURRENT_WEIGHTS = _at(*(f"recurrent_to_{g}_weights" for g in GATES))
PEEPHOLE = _at(*(f"cell_to_{g}_weights" for g in ("input", "forget", "output")))
BIASES = _at(*(f"{g}_gate_bias" for g in GATES))
PROJECTION = _at("projection_weights", "projection_bias")
(OUTPUT_STATE, CELL_STATE) = _at("output_state", "cell_state")
LAYER_NORM = _at(*(f"{g}_layer_norm_coefficients" for g in GATES))
INPUT_GATE = (INPUT_WEIGHTS[0], RECURRENT_WEIGHTS[0], BIASES[0])  # all absent: CIFG
REQUIRED = (0, *INPUT_WEIGHTS[1:], *RECURRENT_WEIGHTS[1:], *BIASES[1:], OUTPUT_STATE, CELL_STATE)
OPTIONAL_PARTS = {"peephole": PEEPHOLE, "projection": PROJECTION, "layer normalization": LAYER_NORM}
HIDDEN_INTERMEDIATE = 4  # the op's intermediate with the hidden state's params
