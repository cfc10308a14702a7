"""lloydlib.training.stack_engine through train (a stack of one): a run learns, is repeatable and resumable,
and reports divergence."""

import json
import math

import numpy as np
import pytest
import torch

from lloydlib import training
from lloydlib.training import TrainConfig, stack_engine


def states_equal(a: torch.nn.Module, b: torch.nn.Module) -> bool:
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


def same_history(r1, r2) -> bool:
    return all(
        np.array_equal(r1.history[k], r2.history[k], equal_nan=True) for k in r1.history if k != "wall_time"
    ) and np.array_equal(r1.train_losses, r2.train_losses)


def test_a_run_has_a_history_and_learns(cache, tiny):
    cfg = TrainConfig(**dict(tiny, steps=60, n=24, lr=0.01, tau=0.1))
    run = training.train(cfg, progress=False)
    assert run.status == "done" and run.info["cached"] is False
    h = run.history
    assert list(h["step"]) == list(range(0, 61, 5))
    assert set(h) == {"step", "train_loss", "val_rel_loss", "val_loss", "lr", "wall_time"}
    assert all(np.isfinite(h[k]).all() for k in h)
    assert len(run.train_losses) == 60 and h["train_loss"][0] == run.train_losses[0]
    assert np.all(np.diff(h["wall_time"]) >= 0)
    assert run.train_losses[-10:].mean() < run.train_losses[:10].mean()  # it learns something
    assert (cache / "runs" / cfg.key() / "result.pt").exists()
    summary = json.loads((cache / "runs" / cfg.key() / "result.json").read_text())
    assert summary["config"]["tau"] == 0.1 and "torch" in summary["info"]["hardware"]
    assert not (cache / "runs" / cfg.key() / "checkpoint.pt").exists()


@pytest.mark.parametrize("dropout", [0.0, 0.2])
def test_resume_gives_the_same_run_bitwise_in_float64(tmp_path, tiny, dropout):
    cfg = TrainConfig(**dict(tiny, dtype="float64", dropout=dropout, plateau_patience=0, clip=1.0))
    full = training.train(cfg, cache_dir=tmp_path / "a", progress=False)
    part = training.train(cfg, cache_dir=tmp_path / "b", progress=False, stop_at=17)
    assert part.status == "partial" and len(part.train_losses) == 17
    resumed = training.train(cfg, cache_dir=tmp_path / "b", progress=False)
    assert resumed.info["resumed_from"] == 17
    assert states_equal(full.model, resumed.model) and same_history(full, resumed)
    assert full.history["lr"][-1] < cfg.lr  # the plateau scheduler acted and was restored too


def test_a_crash_resumes_from_the_last_checkpoint(tmp_path, tiny, monkeypatch):
    cfg = TrainConfig(**dict(tiny, dtype="float64"))
    full = training.train(cfg, cache_dir=tmp_path / "a", progress=False)
    real = stack_engine.smoothed_losses
    calls = {"n": 0}

    def crash_at_step_23(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 23:
            raise KeyboardInterrupt("simulated interruption")
        return real(*args, **kwargs)

    monkeypatch.setattr(stack_engine, "smoothed_losses", crash_at_step_23)
    with pytest.raises(KeyboardInterrupt):
        training.train(cfg, cache_dir=tmp_path / "b", progress=False)
    monkeypatch.setattr(stack_engine, "smoothed_losses", real)
    run_dir = tmp_path / "b" / "runs" / cfg.key()
    assert (run_dir / "checkpoint.pt").exists() and not (run_dir / "result.pt").exists()
    resumed = training.train(cfg, cache_dir=tmp_path / "b", progress=False)
    assert resumed.info["resumed_from"] == 20
    assert states_equal(full.model, resumed.model) and same_history(full, resumed)


def test_a_truncated_checkpoint_is_an_error_naming_the_file(tmp_path, tiny):
    cfg = TrainConfig(**tiny)
    run_dir = tmp_path / "runs" / cfg.key()
    run_dir.mkdir(parents=True)
    (run_dir / "checkpoint.pt").write_bytes(b"PK\x03\x04 truncated")
    with pytest.raises(training.CacheError, match="checkpoint.pt"):
        training.train(cfg, cache_dir=tmp_path, progress=False)


def test_a_cached_run_is_loaded_not_retrained(cache, tiny, monkeypatch):
    cfg = TrainConfig(**tiny)
    first = training.train(cfg, progress=False)

    def fail(*args, **kwargs):
        raise AssertionError("trained again instead of loading the cache")

    monkeypatch.setattr(stack_engine.Stack, "train", fail)
    again = training.train(cfg, progress=False)
    assert again.info["cached"] is True and states_equal(first.model, again.model) and same_history(first, again)
    # the device and the checkpoint interval do not change the key: a GPU run is read on a CPU
    assert training.train(cfg.replace(device="cuda", checkpoint_every=3), progress=False).info["cached"]


def test_a_diverging_run_is_reported_not_hidden(cache, tiny, monkeypatch):
    cfg = TrainConfig(**tiny)
    real = stack_engine.stacked_forward

    def exploding(*args, training=False, **kwargs):
        out = real(*args, training=training, **kwargs)
        return out * math.inf if training else out

    monkeypatch.setattr(stack_engine, "stacked_forward", exploding)
    run = training.train(cfg, progress=False)
    assert run.status == "diverged" and run.info["diverged_at"] == 1 and run.final_val == math.inf
    assert run.final_train() == math.inf


def test_bad_arguments_to_train_raise(tmp_path, tiny):
    with pytest.raises(TypeError, match="config must be a TrainConfig"):
        training.train({"d": 4})
    with pytest.raises(ValueError, match="stop_at must be >= 1"):
        training.train(TrainConfig(**tiny), cache_dir=tmp_path, stop_at=0)
    with pytest.raises(ValueError, match="device must be"):
        training.train(TrainConfig(**dict(tiny, device="tpu:x")), cache_dir=tmp_path)
