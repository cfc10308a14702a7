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


def test_train_step_takes_the_l2_loss():
    out = bench.train_step(n=16, d=2, k=3, batch=2, warmup=0, reps=1, compile=False, loss="L2")
    assert out["config"]["loss"] == "L2" and "L2 loss" in out["config"]["reference_form"]
    assert out["initial_loss"]["lloydlib"] == pytest.approx(out["initial_loss"]["reference"], rel=1e-4)
    with pytest.raises(ValueError, match="loss must be one of"):
        bench.train_step(loss="L3")


def test_step_cost_counts_the_fused_attention_above_the_limit():
    small = bench.step_cost(n=16, d=4, k=6, batch=2)
    big = bench.step_cost(n=200, d=4, k=6, batch=32)  # 32 * 200^2 > FUSED_LIMIT: head 2 fused
    assert not small["head2_fused"] and big["head2_fused"]
    for cost in (small, big):
        assert cost["flops"] == cost["matmul_flops"] + cost["attention_flops"] + cost["loss_flops"]
        assert cost["bytes"] > 0 and cost["matmul_flops"] > 0
    # head 2's B n^2 entries dominate at n=200: about 83 operations each (forward and backward)
    assert 80 * 32 * 200**2 < big["attention_flops"] < 90 * 32 * 200**2 + 3 * 32 * 200 * 6 * 60
    with pytest.raises(ValueError, match="embedding must be one of"):
        bench.step_cost(embedding="XX")
    with pytest.raises(ValueError, match="loss must be one of"):
        bench.step_cost(loss="XX")


def test_machine_rates_and_estimate():
    rates = bench.machine_rates(threads=1, reps=1)
    assert rates["flops_per_s"] > 1e8 and rates["bytes_per_s"] > 1e8
    ms = bench.estimate({"flops": 2e9, "bytes": 1e9}, {"flops_per_s": 1e11, "bytes_per_s": 1e10})
    assert ms == pytest.approx(1e3 * (0.02 + 0.1))
    with pytest.raises(ValueError, match="reps must be >= 1"):
        bench.machine_rates(reps=0)


def test_train_step_grid_times_every_configuration_in_rounds():
    out = bench.train_step_grid(
        embeddings=["BN", "NA"], losses=["NE"], rounds=2, threads=1, n=16, d=2, k=3, batch=2, warmup=0, reps=1,
        compile=False,
    )  # fmt: skip
    assert out["benchmark"] == "train-step-grid" and out["threads"] == 1 and out["rounds"] == 2
    assert [(c["embedding"], c["loss"]) for c in out["configs"]] == [("BN", "NE"), ("NA", "NE")]
    for c in out["configs"]:
        assert len(c["lloydlib_ms"]["rounds"]) == 2 and c["lloydlib_ms"]["min"] <= c["lloydlib_ms"]["median"]
        assert c["over_estimate"] == pytest.approx(c["lloydlib_ms"]["median"] / c["estimate_ms"])
    with pytest.raises(ValueError, match="embeddings must be one of"):
        bench.train_step_grid(embeddings=["XX"])
    with pytest.raises(ValueError, match="at least one"):
        bench.train_step_grid(losses=[])
    with pytest.raises(ValueError, match="rounds must be >= 1"):
        bench.train_step_grid(rounds=0)
