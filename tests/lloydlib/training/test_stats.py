"""lloydlib.training.stats: summaries over the seeds of a setting."""

import math

import numpy as np
import pytest

from lloydlib import training
from lloydlib.training import Run, TrainConfig


def fake_run(seed, values, status="done"):
    history = {"step": np.arange(len(values)) * 5, "val_rel_loss": np.array(values, dtype=float)}
    history["train_loss"] = history["val_loss"] = history["val_rel_loss"]
    return Run(TrainConfig(seed=seed), None, history, np.zeros(3), status)


def test_curves_are_median_and_quartiles_over_runs():
    runs = [fake_run(0, [1.0, 0.5, 0.2]), fake_run(1, [1.0, 0.7, 0.4]), fake_run(2, [1.0, 0.9, 0.6])]
    step, med, lo, hi = training.curves(runs)
    assert list(step) == [0, 5, 10] and np.allclose(med, [1.0, 0.7, 0.4])
    assert np.allclose(lo, [1.0, 0.6, 0.3]) and np.allclose(hi, [1.0, 0.8, 0.5])
    with pytest.raises(ValueError, match="at least one"):
        training.curves([])
    with pytest.raises(ValueError, match="metric must be one of"):
        training.curves(runs, "accuracy")


def test_a_diverged_run_counts_as_infinite_from_its_divergence():
    runs = [fake_run(0, [1.0, 0.5, 0.2]), fake_run(1, [1.0, 0.5]), fake_run(2, [1.0, 0.5, math.nan])]
    _, med, _, hi = training.curves(runs)
    assert med[-1] == math.inf and hi[-1] == math.inf
    assert training.final_values([fake_run(0, [1.0, 0.5], "diverged")]).tolist() == [math.inf]


def test_group_final_values_quartiles_and_iqr_relation():
    runs = [fake_run(s, [1.0, 0.5 + s]) for s in (0, 1, 2)]
    assert list(training.group(runs, "seed")) == [(0,), (1,), (2,)]
    assert list(training.group(runs, "d")) == [(4,)]
    assert training.final_values(runs).tolist() == [0.5, 1.5, 2.5]
    assert training.final_values(runs, window=2).tolist() == [0.75, 1.25, 1.75]
    assert training.quartiles([1, 2, 3, 4, 5]) == (2.0, 3.0, 4.0)
    assert training.iqr_relation([1, 2, 3], [5, 6, 7]) == "below"
    assert training.iqr_relation([5, 6, 7], [1, 2, 3]) == "above"
    assert training.iqr_relation([1, 2, 6], [2, 3, 7]) == "overlap"
    with pytest.raises(ValueError, match="names must be one of"):
        training.group(runs, "colour")
    with pytest.raises(ValueError, match="at least one number"):
        training.quartiles([])
    with pytest.raises(ValueError, match="window must be >= 1"):
        training.final_values(runs, window=0)


def test_median_difference_separates_shifted_settings_and_not_equal_ones():
    rng = np.random.default_rng(1)
    a = rng.normal(1.0, 0.05, 10)
    far = training.median_difference(a, a + 0.5)
    assert 0.4 < far.low <= far.estimate <= far.high < 0.6 and far.level == 0.9
    same = training.median_difference(a, rng.permutation(a))
    assert same.estimate == 0 and same.low < 0 < same.high
    # paired: a common per-seed offset cancels, so a small shift separates
    base = rng.normal(0, 1.0, 10)
    shift = training.median_difference(base, base + 0.01 + rng.normal(0, 1e-3, 10), paired=True)
    assert shift.low > 0
    assert training.median_difference(base, base + 0.01, paired=False).low < 0  # lost in the spread
    # repeatable, and +inf (diverged runs) is the largest value
    assert training.median_difference(a, a + 0.5) == far
    div = training.median_difference(a, np.full(10, np.inf))
    assert div.estimate == np.inf and div.low == np.inf
    # +inf against +inf is undefined: never a number, and it widens the interval
    for paired in (False, True):
        with pytest.raises(ValueError, match="undefined"):
            training.median_difference(np.full(3, np.inf), np.full(3, np.inf), paired=paired)
    one = training.median_difference([np.inf, 1.0, 2.0, 3.0], [np.inf, 1.5, 2.5, 3.5], paired=True)
    assert one.estimate == 0.5 and one.low == -np.inf and one.high == np.inf
    mixed = training.median_difference([np.inf, np.inf, 1.0], [np.inf, 2.0, 3.0])
    assert math.isnan(mixed.estimate) is False and mixed.high == np.inf


def test_median_difference_names_bad_arguments():
    with pytest.raises(ValueError, match="a must hold at least two values"):
        training.median_difference([1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="b must be numbers or \\+inf"):
        training.median_difference([1.0, 2.0], [1.0, math.nan])
    with pytest.raises(ValueError, match="level must be > 0.0 and < 1.0"):
        training.median_difference([1.0, 2.0], [1.0, 2.0], level=1.0)
    with pytest.raises(ValueError, match="one a and one b per seed"):
        training.median_difference([1.0, 2.0], [1.0, 2.0, 3.0], paired=True)
    with pytest.raises(TypeError, match="paired must be"):
        training.median_difference([1.0, 2.0], [1.0, 2.0], paired="yes")
