"""UNIDIRECTIONAL_SEQUENCE_LSTM's input slots in TFLite's schema: the one table the validator,
the support check, the lowering and both executors read.

Gate tensors come in TFLite's order: input, forget, cell, output."""

INPUT_WEIGHTS = (1, 2, 3, 4)            # [M, N]
RECURRENT_WEIGHTS = (5, 6, 7, 8)        # [M, P]
PEEPHOLE = (9, 10, 11)                  # [M] each: cell to input, forget, output gate
BIASES = (12, 13, 14, 15)               # [M]
PROJECTION = (16, 17)                   # weights [P, M], bias [P]
OUTPUT_STATE, CELL_STATE = 18, 19       # variables: [B, P], [B, M]
LAYER_NORM = (20, 21, 22, 23)
INPUT_GATE = (INPUT_WEIGHTS[0], RECURRENT_WEIGHTS[0], BIASES[0])   # all absent: CIFG
REQUIRED = (0, *INPUT_WEIGHTS[1:], *RECURRENT_WEIGHTS[1:], *BIASES[1:], OUTPUT_STATE, CELL_STATE)
OPTIONAL_PARTS = {"peephole": PEEPHOLE, "projection": PROJECTION,
                  "layer normalization": LAYER_NORM}
HIDDEN_INTERMEDIATE = 4                 # the op's intermediate with the hidden state's params
