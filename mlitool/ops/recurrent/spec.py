"""OpSpecs of the recurrent ops: UNIDIRECTIONAL_SEQUENCE_LSTM (float mode `float_mode.py`,
TFLite's integer LSTM `tflite_mode.py`, lowered onto MLI's LSTM cell per step `lower.py`, support
checks `checks.py`), and UNIDIRECTIONAL_SEQUENCE_RNN (named, not lowered)."""

from __future__ import annotations

from mlitool import lstm_slots
from mlitool.inspect.opstats import sequence_macs
from mlitool.ops.common.register import fallback_op
from mlitool.ops.recurrent import float_mode as F
from mlitool.ops.recurrent import lower as recurrent
from mlitool.ops.recurrent import svdf as SV
from mlitool.ops.recurrent import svdf_c
from mlitool.ops.recurrent import tflite_mode as tflite_lstm
from mlitool.ops.recurrent.checks import LSTM_CHECKS
from mlitool.ops.spec import OpSpec, register
from mlitool.tflite import validate_weighted as V

# Optional slots sit between required ones: `lstm_shapes` checks which are present. Its
# rescales are internal; its fused activation is the gates' (LSTM_CHECKS).
register(
    OpSpec(
        "UNIDIRECTIONAL_SEQUENCE_LSTM",
        lstm_slots.SLOTS,
        optional=4,
        required=1,
        options="UnidirectionalSequenceLSTMOptions",
        rescale=False,
        fused_activation=False,
        shapes=V.lstm_shapes,
        weights=tuple(lstm_slots.SLOTS[k] for k in lstm_slots.INPUT_WEIGHTS),
        kind="lstm_cell",
        checks=LSTM_CHECKS,
        lower=recurrent.lower_lstm,
        run=(F.unidirectional_sequence_lstm, tflite_lstm.unidirectional_sequence_lstm),
        macs=sequence_macs,
    )
)

# MLI 2.x has kernels that mlitool does not lower (yet): the support check names them. Not
# validated (no slots), not executed.
register(
    OpSpec("UNIDIRECTIONAL_SEQUENCE_RNN", not_lowered="mli_krn_rnn_dense_*", macs=sequence_macs)
)

# SVDF: TFLite's float kernel, LiteRT's integer one (`svdf.py`), the `svdf8` fallback C
# (`svdf_c.py`); its state persists between invocations (a batch of samples runs as consecutive
# ones).
fallback_op(
    "SVDF",
    SV.SLOTS,
    optional=1,
    options="SVDFOptions",
    rescale=False,
    fused_activation=False,
    stream=True,
    shapes=SV.svdf_shapes,
    params=("weights_feature", "weights_time"),
    weights=("weights_feature",),
    checks=svdf_c.CHECKS,
    lower=svdf_c.lower_svdf,
    run=(SV.float_svdf, SV.tflite_svdf),
    macs=sequence_macs,
)
