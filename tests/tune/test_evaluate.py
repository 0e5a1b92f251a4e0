"""tune's evaluation of one mix: each mix lowered once, the current mix's values run from the
previous one's equal a whole run, fingerprints computed only as far as compared."""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.paths import SAMPLES

CNN = SAMPLES / "cnn_int8.tflite"
A = ((5, "fx16"),)  # op 5 (CONV_2D) in fx16
B = ((5, "fx16"), (7, "fx8w16d"))  # and op 7 (FULLY_CONNECTED) in fx8w16d


@pytest.fixture
def E():
    """The evaluation module with the search's job for CNN installed (8 samples, batches of 3)."""
    from mlitool.pipeline import ModelOptions, lower_model, read, settle
    from mlitool.plumbing.parallel import _install
    from mlitool.tune import evaluate as E
    from mlitool.tune.search import Targets, TuneOptions

    model = read(CNN)
    opts = ModelOptions(format="sa8")
    base = lower_model(model, CNN, settle(opts), executed_by="tune")
    tune_opts = TuneOptions(Targets(min_snr=1.0), samples=8, batch=3)
    _install(E.job(CNN, model.main, base, settle(opts), None, tune_opts))
    E.reset()
    yield E
    E.reset()


def _lowerings(monkeypatch) -> list:
    """The mixes `lower` is called for from now on."""
    import mlitool.mli.lower.driver as L

    calls, lower = [], L.lower
    monkeypatch.setattr(
        L, "lower", lambda g, s, **kw: calls.append(s.overrides) or lower(g, s, **kw)
    )
    return calls


def test_a_sized_move_is_run_without_lowering_it_again(E, monkeypatch):
    E.evaluate(((), ()))  # all sa8, the current mix
    calls = _lowerings(monkeypatch)
    sized = E.size(((), A))
    figs = E.evaluate(((), A))
    assert calls == [dict(A)]
    assert (figs["ram_bytes"], figs["rom_bytes"]) == (sized["ram_bytes"], sized["rom_bytes"])
    E.evaluate((A, B))  # a new step: A, lowered as a move, is the current mix
    assert calls == [dict(A), dict(B)]


def test_current_mix_run_from_the_previous_equals_a_whole_run(E):
    E.evaluate(((), ()))
    E.evaluate((B, B))  # B's values run from all sa8's: op 5 onwards
    part, run = E._base["values"], E._base["run"]
    E.reset()
    E.evaluate((B, B))  # B's values in a whole run
    whole = E._base["values"]
    layers = len(E._base["low"].mli.layers)
    assert E._base["run"] == 3 * layers > run > 0  # 3 batches
    assert [sorted(v) for v in part] == [sorted(v) for v in whole]
    for p, w in zip(part, whole):
        for name in w:
            np.testing.assert_array_equal(p[name], w[name], err_msg=name)
            assert p[name].dtype == w[name].dtype


def test_fingerprints_computed_as_far_as_compared(E):
    from mlitool.tune.prints import Prints

    c = E.context()
    one, other = Prints(E._lower_mix(c, ()).mli), Prints(E._lower_mix(c, B).mli)
    first = next(k for k, la in enumerate(other.mli.layers) if la.index == 5)
    assert other.common(one) == first
    assert len(other._layers) == len(one._layers) == first + 1  # none after the first change
    assert Prints(one.mli).common(one) == len(one) == len(one._layers)


@pytest.mark.parametrize("field, change", [("frac_bits", lambda v: v + 1), ("layout", str.lower)])
def test_a_changed_scalar_changes_the_digest(E, field, change):
    """An int or a str of a tensor differs: the layers compute the same only up to its writer."""
    import dataclasses

    from mlitool.tune.prints import Prints

    mli = E._lower_mix(E.context(), A).mli
    convert = mli.layers[5]  # the conversion into op 5's FX16 input
    assert (convert.index, convert.kind) == (5, "convert")
    t = mli.tensor(convert.outputs[0])
    other = {t.name: dataclasses.replace(t, **{field: change(getattr(t, field))})}
    changed = dataclasses.replace(mli, tensors={**mli.tensors, **other})
    assert Prints(changed).common(Prints(mli)) == 5
