"""lloydlib.bench.step: a whole training step in both forms, from the same weights."""

import pytest

from lloydlib import bench


def test_train_step_times_both_forms():
    out = bench.train_step(n=16, d=2, k=3, batch=2, warmup=0, reps=3, compile=False)
    assert out["benchmark"] == "train-step" and out["compile"] is False and out["compile_warmup_seconds"] is None
    assert len(out["samples_ms"]["lloydlib"]) == len(out["cpu_samples_ms"]["reference"]) == 3
    assert out["speedup"] == pytest.approx(out["reference_ms_per_step"] / out["lloydlib_ms_per_step"])
    assert out["initial_loss"]["lloydlib"] == pytest.approx(out["initial_loss"]["reference"], rel=1e-4)
    assert out["config"]["d_emb"] == 4 and "eager" in out["config"]["lloydlib_form"]
    assert out["hardware"]["device"] == "cpu"


def test_train_step_refuses_bad_arguments():
    with pytest.raises(ValueError, match="embedding must be one of"):
        bench.train_step(embedding="XX")
    with pytest.raises(ValueError, match="tau must be > 0"):
        bench.train_step(tau=0.0)
    with pytest.raises(ValueError, match="reps must be >= 1"):
        bench.train_step(reps=0)
