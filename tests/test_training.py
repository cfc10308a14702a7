"""Tests of lloydlib.training: repeatable, resumable, cached runs and the command line."""
import dataclasses
import json
import math
import os

import numpy as np
import pytest
import torch

import lloydlib
from lloydlib import training
from lloydlib.training import TrainConfig

TINY = dict(d=2, k=3, n=12, steps=30, batch=4, val_tasks=8, eval_every=5, checkpoint_every=10, device="cpu")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("LLOYD_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def states_equal(a: torch.nn.Module, b: torch.nn.Module) -> bool:
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


def same_history(r1, r2) -> bool:
    return all(np.array_equal(r1.history[k], r2.history[k], equal_nan=True)
               for k in r1.history if k != "wall_time") and np.array_equal(r1.train_losses, r2.train_losses)


def test_a_run_has_a_history_and_learns(cache):
    cfg = TrainConfig(**dict(TINY, steps=60, n=24, d=2, k=3, lr=0.01, tau=0.1))
    run = training.train(cfg, progress=False)
    assert run.status == "done" and run.info["cached"] is False
    h = run.history
    assert list(h["step"]) == list(range(0, 61, 5))
    assert set(h) == {"step", "train_loss", "val_rel_loss", "val_loss", "lr", "wall_time"}
    assert all(np.isfinite(h[k]).all() for k in h)
    assert len(run.train_losses) == 60 and h["train_loss"][0] == run.train_losses[0]
    assert np.all(np.diff(h["wall_time"]) >= 0)
    assert run.train_losses[-10:].mean() < run.train_losses[:10].mean()      # it learns something
    assert (cache / "runs" / cfg.key() / "result.pt").exists()
    summary = json.loads((cache / "runs" / cfg.key() / "result.json").read_text())
    assert summary["config"]["tau"] == 0.1 and summary["info"]["hardware"]
    assert not (cache / "runs" / cfg.key() / "checkpoint.pt").exists()


@pytest.mark.parametrize("dropout", [0.0, 0.2])
def test_resume_gives_the_same_run_bitwise_in_float64(tmp_path, dropout):
    cfg = TrainConfig(**dict(TINY, dtype="float64", dropout=dropout, plateau_patience=0, clip=1.0))
    full = training.train(cfg, cache_dir=tmp_path / "a", progress=False)
    part = training.train(cfg, cache_dir=tmp_path / "b", progress=False, stop_at=17)
    assert part.status == "partial" and len(part.train_losses) == 17
    resumed = training.train(cfg, cache_dir=tmp_path / "b", progress=False)
    assert resumed.info["resumed_from"] == 17
    assert states_equal(full.model, resumed.model) and same_history(full, resumed)
    assert full.history["lr"][-1] < cfg.lr            # the plateau scheduler acted and was restored too


def test_a_crash_resumes_from_the_last_checkpoint(tmp_path, monkeypatch):
    cfg = TrainConfig(**dict(TINY, dtype="float64"))
    full = training.train(cfg, cache_dir=tmp_path / "a", progress=False)
    real = training.smoothed_loss
    calls = {"n": 0}

    def crash_at_step_23(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 23:
            raise KeyboardInterrupt("simulated interruption")
        return real(*args, **kwargs)

    monkeypatch.setattr(training, "smoothed_loss", crash_at_step_23)
    with pytest.raises(KeyboardInterrupt):
        training.train(cfg, cache_dir=tmp_path / "b", progress=False)
    monkeypatch.setattr(training, "smoothed_loss", real)
    run_dir = tmp_path / "b" / "runs" / cfg.key()
    assert (run_dir / "checkpoint.pt").exists() and not (run_dir / "result.pt").exists()
    resumed = training.train(cfg, cache_dir=tmp_path / "b", progress=False)
    assert resumed.info["resumed_from"] == 20
    assert states_equal(full.model, resumed.model) and same_history(full, resumed)


def test_a_cached_run_is_loaded_not_retrained(cache, monkeypatch):
    cfg = TrainConfig(**TINY)
    first = training.train(cfg, progress=False)

    def fail(*args, **kwargs):
        raise AssertionError("trained again instead of loading the cache")

    monkeypatch.setattr(training, "_train", fail)
    again = training.train(cfg, progress=False)
    assert again.info["cached"] is True and states_equal(first.model, again.model) and same_history(first, again)
    # the device and the checkpoint interval do not change the key: a GPU run is read on a CPU
    assert training.train(cfg.replace(device="cuda", checkpoint_every=3), progress=False).info["cached"]
    assert training.lookup(cfg) is not None and training.lookup(cfg.replace(seed=1)) is None
    assert [r.key for r in training.load_runs(cache)] == [cfg.key()]
    assert training.train_many([cfg, cfg], progress=False)[1].info["cached"]


def test_the_key_covers_every_experiment_field_and_the_version(monkeypatch):
    base = TrainConfig()
    changed = dict(d=5, k=7, n=100, embedding="OH", loss="NE", tau=0.25, lr=0.1, batch=8, steps=5, seed=3,
                   family="cauchy", scale=0.2, isotropic=False, equal_weights=False, init="kmeans++", gamma=2.0,
                   bias=False, dropout=0.01, weighting="sparsemax", fast=False, clip=1.0, plateau=False,
                   plateau_factor=0.25, plateau_patience=3, eval_every=10, val_tasks=64, dtype="float64")
    assert set(changed) | set(training.EXECUTION_FIELDS) == {f.name for f in dataclasses.fields(TrainConfig)}
    keys = {base.replace(**{name: value}).key() for name, value in changed.items()}
    assert len(keys) == len(changed) and base.key() not in keys
    assert base.replace(tau=1).key() == base.replace(tau=1.0).key()          # 1 and 1.0 are one config
    before = base.key()
    monkeypatch.setattr(lloydlib, "__version__", "999")
    assert TrainConfig().key() != before


def test_files_are_written_atomically(tmp_path):
    target = tmp_path / "x" / "file.json"
    training._save_json(target, {"a": 1})

    def half_then_crash(f):
        f.write(b"{\"a\": 2, \"trunc")
        raise OSError("disk full")

    with pytest.raises(OSError):
        training._atomic_write(target, half_then_crash)
    assert json.loads(target.read_text()) == {"a": 1}                       # old content intact
    assert sorted(p.name for p in target.parent.iterdir()) == ["file.json"]  # no temporary left behind


def test_cache_dir_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("LLOYD_CACHE", str(tmp_path))
    assert training.cache_dir() == tmp_path
    assert training.cache_dir(tmp_path / "y") == tmp_path / "y"
    monkeypatch.delenv("LLOYD_CACHE")
    assert training.cache_dir().name in (".lloydlib-cache", "lloydlib")


def test_a_diverging_run_is_reported_not_hidden(cache, monkeypatch):
    cfg = TrainConfig(**TINY)
    real = training._build_model

    class Exploding(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, X, C):
            out = self.inner(X, C)
            return out * math.inf if self.training else out

    monkeypatch.setattr(training, "_build_model", lambda c: Exploding(real(c)))
    run = training.train(cfg, progress=False)
    assert run.status == "diverged" and run.info["diverged_at"] == 1 and run.final_val == math.inf


def test_seeds_give_different_and_repeatable_streams():
    s = {training.derive_seed(0, "train", m) for m in range(100)} | {training.derive_seed(0, "val")}
    assert len(s) == 101 and training.derive_seed(0, "val") == training.derive_seed(0, "val")
    assert training.derive_seed(1, "val") != training.derive_seed(0, "val")
    assert all(0 <= v < 2 ** 63 for v in s)


def test_grid_is_a_cartesian_product():
    cfgs = training.grid(TrainConfig(d=3), embedding=["OH", "BN"], seed=[0, 1, 2], tau=0.5)
    assert len(cfgs) == 6 and [c.seed for c in cfgs[:3]] == [0, 1, 2]
    assert all(c.d == 3 and c.tau == 0.5 for c in cfgs)
    with pytest.raises(ValueError, match="axis 'seed'"):
        training.grid(seed=[])
    with pytest.raises(TypeError, match="no field"):
        training.grid(sede=[1])


@pytest.mark.parametrize("changes, exc, words", [
    (dict(k=20, n=10), ValueError, "k must be <= n"),
    (dict(k=1), ValueError, "k must be >= 2"),
    (dict(loss="L3"), ValueError, "loss must be one of"),
    (dict(embedding="XX"), ValueError, "embedding must be one of"),
    (dict(tau=0.0), ValueError, "tau must be a positive"),
    (dict(lr=-1.0), ValueError, "lr must be a positive"),
    (dict(steps=0), ValueError, "steps must be >= 1"),
    (dict(steps=2.5), TypeError, "steps must be an integer"),
    (dict(dropout=1.0), ValueError, "dropout must be a probability"),
    (dict(clip=0.0), ValueError, "clip must be a positive"),
    (dict(dtype="float16"), ValueError, "dtype must be one of"),
    (dict(plateau_factor=1.5), ValueError, "plateau_factor must be in"),
    (dict(plateau="yes"), TypeError, "plateau must be True or False"),
    (dict(family="uniform"), ValueError, "family must be one of"),
])
def test_bad_config_raises_a_clear_error(changes, exc, words):
    with pytest.raises(exc, match=words):
        TrainConfig(**changes)


def test_bad_arguments_to_train_raise(tmp_path):
    with pytest.raises(TypeError, match="config must be a TrainConfig"):
        training.train({"d": 4})
    with pytest.raises(ValueError, match="stop_at must be >= 1"):
        training.train(TrainConfig(**TINY), cache_dir=tmp_path, stop_at=0)
    with pytest.raises(TypeError, match=r"configs\[1\]"):
        training.train_many([TrainConfig(**TINY), "x"])
    with pytest.raises(ValueError, match="device must be"):
        training.train(TrainConfig(**dict(TINY, device="tpu:x")), cache_dir=tmp_path)
    with pytest.raises(ValueError, match="root must be an existing directory"):
        training.load_runs(tmp_path / "nowhere")


def test_command_line_runs_a_two_seed_sweep(tmp_path, capsys):
    argv = ["--d", "2", "--k", "3", "--n", "12", "--steps", "10", "--batch", "4", "--val-tasks", "8",
            "--eval-every", "5", "--embedding", "OH", "BN", "--seed", "0", "1", "--clip", "none",
            "--plateau", "false", "--cache-dir", str(tmp_path), "--no-progress"]
    assert training.main(argv) == 0
    out = capsys.readouterr().out
    assert "4 run(s)" in out
    runs = training.load_runs(tmp_path)
    assert len(runs) == 4 and {(r.config.embedding, r.config.seed) for r in runs} == \
        {("OH", 0), ("OH", 1), ("BN", 0), ("BN", 1)}
    assert all(r.config.plateau is False and r.config.clip is None for r in runs)
    # the same configs built in Python hit the cache the command line filled
    cfg = TrainConfig(d=2, k=3, n=12, steps=10, batch=4, val_tasks=8, eval_every=5, embedding="BN", seed=1,
                      plateau=False)
    assert training.lookup(cfg, [tmp_path]) is not None
    assert training.main(argv[:-1] + ["--dry-run"]) == 0
    assert capsys.readouterr().out.count("cached") == 4
    assert training.main(["--k", "30", "--n", "10", "--cache-dir", str(tmp_path)]) == 2
    with pytest.raises(SystemExit):
        training.main(["--plateau", "maybe"])


def test_command_builds_the_cli_line_of_a_grid(tmp_path, capsys):
    base = TrainConfig(**dict(TINY, steps=10))
    line = training.command(base, embedding=["OH", "BN"], seed=[0, 1], clip=1.0, plateau=False)
    assert line.startswith("python -m lloydlib train ") and "--embedding OH BN" in line and "--plateau false" in line
    argv = line.split()[4:] + ["--cache-dir", str(tmp_path), "--dry-run"]
    assert training.main(argv) == 0
    listed = capsys.readouterr().out
    for c in training.grid(base, embedding=["OH", "BN"], seed=[0, 1], clip=1.0, plateau=False):
        assert c.key() in listed                       # the line means exactly that grid


def test_summaries_over_seeds(cache):
    runs = training.train_many(training.grid(TrainConfig(**TINY), seed=[0, 1, 2]), progress=False)
    step, med, lo, hi = training.curves(runs)
    assert list(step) == list(runs[0].history["step"]) and np.all(lo <= med) and np.all(med <= hi)
    assert np.allclose(med, np.median(np.stack([r.history["val_rel_loss"] for r in runs]), axis=0))
    assert list(training.group(runs, "seed")) == [(0,), (1,), (2,)]
    assert training.final_values(runs).shape == (3,)
    assert training.quartiles([1, 2, 3, 4, 5]) == (2.0, 3.0, 4.0)
    assert training.iqr_relation([1, 2, 3], [5, 6, 7]) == "below"
    assert training.iqr_relation([5, 6, 7], [1, 2, 3]) == "above"
    assert training.iqr_relation([1, 2, 6], [2, 3, 7]) == "overlap"
    assert training.gpu_results(cache.parent / "nothing") == []
    (cache.parent / "gpu" / "machine-a").mkdir(parents=True)
    import shutil
    shutil.copytree(cache / "runs", cache.parent / "gpu" / "machine-a" / "runs")
    assert [p.name for p in training.gpu_results(cache.parent / "gpu")] == ["machine-a"]
    with pytest.raises(ValueError, match="names must be one of"):
        training.group(runs, "colour")
    with pytest.raises(ValueError, match="at least one"):
        training.curves([])
