"""lloydlib.training.stacked: a run trained in a stack of S is the run ``train`` trains as a stack of one."""

import pickle

import numpy as np
import pytest
import torch
from _support import assert_raises_naming

from lloydlib import training
from lloydlib.training import TrainConfig, stack_engine
from lloydlib.training.stacked import stack_key, train_stack


def close(a, b, rtol=1e-9) -> bool:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return False
    both = np.isfinite(a) & np.isfinite(b)
    same_nonfinite = np.array_equal(np.isfinite(a), np.isfinite(b)) and np.array_equal(np.isnan(a), np.isnan(b))
    return same_nonfinite and bool(np.all(np.abs(a - b)[both] <= rtol * np.abs(a)[both] + 1e-300))


def assert_same_run(alone, stacked, rtol=1e-9):
    assert stacked.status == alone.status
    assert stacked.info["diverged_at"] == alone.info["diverged_at"]
    assert set(stacked.history) == set(alone.history)
    for k in alone.history:
        if k != "wall_time":
            assert close(alone.history[k], stacked.history[k], rtol), k
    assert close(alone.train_losses, stacked.train_losses, rtol)
    sa, sb = alone.model.state_dict(), stacked.model.state_dict()
    assert sa.keys() == sb.keys()
    for k in sa:
        assert close(sa[k], sb[k], rtol), k


@pytest.fixture
def mixed(tiny):
    """Five float64 runs of one stack: mixed seeds, taus, learning rates, clipping and one that diverges."""
    base = TrainConfig(**dict(tiny, dtype="float64", plateau_patience=0))
    return [
        base.replace(seed=0),
        base.replace(seed=1, tau=1.0),
        base.replace(seed=0, lr=0.05),
        base.replace(seed=2, lr=1e300),  # diverges at step 2
        base.replace(seed=1, clip=0.01, plateau=False),
    ]


@pytest.mark.parametrize("compile", [False, True])
def test_a_stacked_run_equals_the_run_trained_alone(tmp_path, mixed, compile):
    stacked = train_stack(mixed, cache_dir=tmp_path / "stack", compile=compile)
    statuses = [r.status for r in stacked]
    assert statuses == ["done", "done", "done", "diverged", "done"]
    for c, r in zip(mixed, stacked):
        alone = training.train(c, cache_dir=tmp_path / "alone", progress=False)
        assert_same_run(alone, r)
        assert r.info["stacked"] == 5 and r.info["compiled"] is compile
    assert stacked[3].info["diverged_at"] == 2
    assert stacked[0].history["lr"][-1] < mixed[0].lr  # each run's plateau scheduler acted
    assert stacked[4].history["lr"][-1] == mixed[4].lr  # and this one has none


def test_a_stack_of_another_size_reuses_the_compiled_step(tmp_path, mixed):
    from torch._dynamo.utils import counters

    five = train_stack(mixed, compile=True)
    graphs = counters["stats"]["unique_graphs"]
    three = train_stack(mixed[:3], compile=True)  # one stack key, another size: no new graph
    assert counters["stats"]["unique_graphs"] == graphs
    assert all(r.info["compiled"] and r.info["compile_error"] is None for r in five + three)
    for a, b in zip(five[:3], three):
        assert_same_run(a, b)


def test_written_runs_read_back_as_train_writes_them(tmp_path, mixed):
    stacked = train_stack(mixed[:3], cache_dir=tmp_path)
    for c, r in zip(mixed[:3], stacked):
        run_dir = tmp_path / "runs" / c.key()
        assert (run_dir / "result.pt").exists() and (run_dir / "result.json").exists()
        assert not (run_dir / "checkpoint.pt").exists()
        loaded = training.lookup(c, [tmp_path])
        assert loaded.info["cached"] and loaded.status == r.status
        assert_same_run(r, loaded, rtol=0)
    again = train_stack(mixed[:3], cache_dir=tmp_path)  # loaded, not trained
    assert all(r.info["cached"] for r in again)
    assert len(training.load_runs(tmp_path)) == 3


def test_write_false_and_no_cache_write_no_results(tmp_path, monkeypatch, mixed):
    monkeypatch.setenv("LLOYD_CACHE", str(tmp_path / "default"))
    runs = train_stack(mixed[:2], cache_dir=tmp_path / "c", write=False)
    assert not list((tmp_path / "c").glob("runs/*/result.pt"))
    runs2 = train_stack(mixed[:2])
    assert not (tmp_path / "default").exists()
    for a, b in zip(runs, runs2):
        assert_same_run(a, b, rtol=0)
    back = pickle.loads(pickle.dumps(runs))  # the Ray driver receives runs by value
    assert_same_run(runs[0], back[0], rtol=0)
    training.cache.write_result(tmp_path / "d", back[0])
    assert training.lookup(mixed[0], [tmp_path / "d"]) is not None


def test_an_interrupted_stack_resumes_and_train_can_resume_it(tmp_path, mixed, monkeypatch):
    configs = [mixed[0], mixed[1]]
    real = stack_engine.Stack._evaluate
    calls = {"n": 0}

    def crash(self, due):
        calls["n"] += 1
        if calls["n"] == 5:  # step 25: the checkpoints of step 20 are on disk
            raise KeyboardInterrupt("simulated interruption")
        return real(self, due)

    monkeypatch.setattr(stack_engine.Stack, "_evaluate", crash)
    with pytest.raises(KeyboardInterrupt):
        train_stack(configs, cache_dir=tmp_path / "b")
    monkeypatch.setattr(stack_engine.Stack, "_evaluate", real)
    for c in configs:
        assert (tmp_path / "b" / "runs" / c.key() / "checkpoint.pt").exists()
    resumed_alone = training.train(configs[0], cache_dir=tmp_path / "b", progress=False)  # train reads it
    resumed = train_stack(configs, cache_dir=tmp_path / "b")
    assert resumed_alone.info["resumed_from"] == 20 and resumed[1].info["resumed_from"] == 20
    for c, r in zip(configs, [resumed_alone, resumed[1]]):
        assert_same_run(training.train(c, cache_dir=tmp_path / "a", progress=False), r)


def test_a_stack_resumes_a_run_that_train_began_and_runs_of_other_lengths(tmp_path, mixed):
    a, b = mixed[0], mixed[1].replace(steps=17)
    training.train(a, cache_dir=tmp_path / "s", progress=False, stop_at=10)
    runs = train_stack([a, b], cache_dir=tmp_path / "s")
    assert runs[0].info["resumed_from"] == 10 and len(runs[1].train_losses) == 17
    for c, r in zip([a, b], runs):
        assert_same_run(training.train(c, cache_dir=tmp_path / "alone", progress=False), r)


def test_runs_with_one_task_stream_share_the_draw(mixed, monkeypatch):
    draws, val_draws = [], []
    real, real_val = stack_engine.sample_task_streams, stack_engine.sample
    monkeypatch.setattr(
        stack_engine, "sample_task_streams", lambda seeds, *a, **k: draws.append(seeds) or real(seeds, *a, **k)
    )
    monkeypatch.setattr(
        stack_engine, "sample", lambda c, count, seed, *a: val_draws.append(seed) or real_val(c, count, seed, *a)
    )
    same_seed = [mixed[0], mixed[0].replace(tau=1.0), mixed[0].replace(lr=0.05), mixed[0].replace(seed=1)]
    train_stack(same_seed)
    steps = same_seed[0].steps
    # per step one call drawing for seed 0 and seed 1; validation sets once per seed
    assert len(draws) == steps and all(len(seeds) == 2 for seeds in draws) and len(val_draws) == 2


def test_each_run_draws_from_its_own_task_distribution():
    # family, scale, isotropy, weights and initialisation may differ between the runs of one stack
    base = TrainConfig(d=2, k=3, n=10, batch=4, steps=3, val_tasks=4)
    configs = [base.replace(family=f, seed=s) for f in ("normal", "cauchy", "lognormal") for s in (0, 1)]
    configs += [base.replace(init="kmeans++", seed=1), base.replace(scale=0.3), base.replace(isotropic=False)]
    configs += [base.replace(equal_weights=False, init="gonzalez", tau=0.5)]
    assert len({stack_key(c) for c in configs}) == 1
    stack = stack_engine.Stack(configs, torch.device("cpu"), [None] * len(configs), compile=False)
    X, C = stack._draw([2] * len(configs))
    for s, c in enumerate(configs):
        x, c0 = stack_engine.sample(c, c.batch, training.derive_seed(c.seed, "train", 2), "cpu", torch.float32)
        assert torch.equal(X[s], x) and torch.equal(C[s], c0), c.label()


def test_duplicates_and_empty(mixed):
    assert train_stack([]) == []
    a, b = train_stack([mixed[0], mixed[0]])
    assert a is b


def test_stack_key_and_bad_input(mixed):
    assert stack_key(mixed[0]) == stack_key(mixed[0].replace(seed=5, tau=3.0, lr=1.0, clip=2.0, steps=3))
    assert stack_key(mixed[0]) != stack_key(mixed[0].replace(n=13))
    assert_raises_naming(lambda: train_stack([mixed[0], mixed[1].replace(n=13)]), ValueError, ["configs[1]", "n"])
    assert_raises_naming(lambda: train_stack([mixed[0], "x"]), TypeError, ["configs[1]", "TrainConfig", "str"])
    assert_raises_naming(lambda: train_stack(mixed[0]), TypeError, ["configs", "sequence"])
    assert_raises_naming(lambda: train_stack(mixed, write=1), TypeError, ["write"])
    assert_raises_naming(lambda: stack_key("x"), TypeError, ["config", "TrainConfig"])


def test_dropout_runs_train_as_stacks_of_one(tmp_path, mixed):
    c = mixed[0].replace(dropout=0.1)
    runs = train_stack([c, c.replace(seed=1)], cache_dir=tmp_path / "x", write=False)
    assert all(r.info["stacked"] == 1 and not r.info["compiled"] for r in runs)
    assert "path" not in runs[0].info and not list((tmp_path / "x").glob("runs/*/result.pt"))
    assert_same_run(training.train(c, cache_dir=tmp_path / "y", progress=False), runs[0], rtol=0)
    assert not np.allclose(runs[0].train_losses, train_stack([mixed[0]])[0].train_losses)  # dropout acted
    assert_raises_naming(
        lambda: stack_engine.Stack([c, c.replace(seed=1)], torch.device("cpu"), [None, None], compile=False),
        ValueError,
        ["dropout", "stacks of one"],
    )


def test_float32_stack_is_close_to_train(tmp_path, tiny):
    base = TrainConfig(**tiny)
    runs = train_stack([base, base.replace(seed=3, tau=1.0)], compile=False)
    for c, r in zip([base, base.replace(seed=3, tau=1.0)], runs):
        alone = training.train(c, cache_dir=tmp_path, progress=False)
        assert r.model.Q.dtype == torch.float32
        assert close(alone.history["val_rel_loss"], r.history["val_rel_loss"], rtol=1e-3)
