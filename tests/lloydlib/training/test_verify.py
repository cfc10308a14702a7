"""lloydlib.training.verify: stored runs re-trained for their first steps and compared."""

import dataclasses
import json
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from lloydlib import training
from lloydlib.training import TrainConfig, verify

TOLERANCE = (1e-5, 1e-2)


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    tiny = dict(d=2, k=3, n=12, steps=20, batch=4, val_tasks=8, eval_every=5, device="cpu")
    configs = [TrainConfig(**tiny, seed=s, embedding=e) for e in ("OH", "BN") for s in (0, 1)]
    return training.train_many(configs, cache_dir=tmp_path_factory.mktemp("c"), progress=False)


def test_sample_takes_runs_of_every_shape_from_its_seed():
    configs = [TrainConfig(d=d, embedding=e, seed=s) for d in (2, 4) for e in ("OH", "BN") for s in range(5)]
    a = verify.sample(configs, 3)
    assert len(a) == 4 and {(c.d, c.embedding) for c in a} == {(2, "OH"), (2, "BN"), (4, "OH"), (4, "BN")}
    assert a == verify.sample(configs, 3) and len(verify.sample(configs, 3, per_shape=2)) == 8
    assert any(verify.sample(configs, s) != a for s in range(4, 10))  # the seed draws
    with pytest.raises(TypeError, match=r"configs\[0\]"):
        verify.sample(["x"], 0)
    with pytest.raises(ValueError, match="per_shape"):
        verify.sample(configs, 0, per_shape=0)


def test_relative_difference():
    d = verify.relative_difference([1.0, 2.0, np.inf, np.nan, 0.0], [1.0, 2.2, np.inf, np.nan, 1.0])
    assert d.tolist() == pytest.approx([0.0, 0.2 / 2.2, 0.0, 0.0, 1.0])
    assert verify.relative_difference([np.nan], [1.0]).tolist() == [np.inf]
    with pytest.raises(ValueError, match="one shape"):
        verify.relative_difference([1.0], [1.0, 2.0])


def test_runs_that_share_a_stack_key_and_steps_retrain_in_one_stack(stored):
    configs = [r.config for r in stored]  # OH seeds 0, 1, then BN seeds 0, 1
    assert verify.stacks(configs) == [[0, 1], [2, 3]]
    mixed = [configs[2], configs[0], configs[3].replace(steps=10), configs[1], configs[2].replace(tau=0.5)]
    assert verify.stacks(mixed) == [[0, 4], [1, 3], [2]]  # tau is a run's own; steps split a stack here
    assert verify.stacks([]) == []
    alone = [verify.retrain([r], 10, tolerance=TOLERANCE, threads=1)[0] for r in stored]
    stacked = verify.retrain(stored, 10, tolerance=TOLERANCE, threads=1)
    assert [c.ok for c in stacked] == [c.ok for c in alone] and [c.key for c in stacked] == [r.key for r in stored]
    for a, b in zip(alone, stacked):  # the same checks up to float32 rounding
        assert abs(a.first - b.first) <= 1e-6 and abs(a.later - b.later) <= 1e-6 and a.steps == b.steps


def test_a_run_retrains_to_itself_and_a_changed_one_is_caught(stored):
    checks = verify.retrain(stored, 10, tolerance=(1e-5, 1e-2), threads=1)
    assert all(c.ok and c.steps == 10 for c in checks), checks
    assert max(c.first for c in checks) <= 1e-6
    edited = stored[0]
    edited.train_losses = edited.train_losses.copy()
    edited.train_losses[4] *= 1.05
    (bad,) = verify.retrain([edited], 10, tolerance=(1e-5, 1e-2))
    assert not bad.ok and bad.where == "train loss, step 5" and bad.later == pytest.approx(0.05 / 1.05, rel=1e-3)
    with pytest.raises(TypeError, match="tolerance"):
        verify.retrain(stored, 5, tolerance=1e-3)
    with pytest.raises(ValueError, match="steps"):
        verify.retrain(stored, 0, tolerance=(1e-5, 1e-2))


def test_a_validation_loss_that_jumps_ends_the_comparison_before_its_evaluation():
    steps = [0, 50, 100, 150]
    assert verify.stable_until(steps, [12.0, 9.0, 8.0, 7.5], 300) == 300
    assert verify.stable_until(steps, [12.0, 1.3e11, 1e12, 2e12], 300) == 49  # Fig. 11, lr=1, d=32
    assert verify.stable_until(steps, [12.0, 9.0, 95.0, 1e3], 300) == 99  # above RISE x the smallest before
    assert verify.stable_until(steps, [12.0, 9.0, 95.0, 1e3], 80) == 80  # the jump lies past the compared steps
    assert verify.stable_until(steps, [12.0, np.nan, 8.0, 7.5], 300) == 300
    with pytest.raises(ValueError, match="one shape"):
        verify.stable_until(steps, [1.0, 2.0], 300)


def test_the_horizon_is_the_first_step_where_the_twin_parts_in_a_training_or_validation_loss():
    def run(losses, val):
        return SimpleNamespace(
            train_losses=np.asarray(losses, float), history={"step": np.array([0, 2, 4]), "val_rel_loss": np.array(val)}
        )

    a = run([1.0, 1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0])
    assert verify.horizon(a, a, 1e-3) is None
    assert verify.horizon(a, run([1.0, 1.0, 1.0005, 1.002, 1.1], [1.0, 1.0, 1.0]), 1e-3) == 4
    assert verify.horizon(a, run([1.0] * 5, [1.0, 1.01, 1.0]), 1e-3) == 2
    assert verify.horizon(a, run([1.0, 1.0, 1.0, 1.0, 1.1], [1.0, 1.0, 1.01]), 1e-3) == 4
    with pytest.raises(ValueError, match="share"):
        verify.horizon(a, a, 0)


def test_the_parting_step_is_the_first_step_after_step_1_beyond_the_later_tolerance(stored, monkeypatch):
    run = stored[1]
    far = dataclasses.replace(run, train_losses=run.train_losses * np.r_[1.0, 1.0, 1.0, 1.001, 1.05, 1.2, np.ones(14)])
    assert verify.parting_step(run, run, 20, TOLERANCE) is None
    assert verify.parting_step(run, far, 20, TOLERANCE) == 5  # 1.05 at step 5; 1.001 at step 4 is within 1e-2
    assert verify.parting_step(run, far, 4, TOLERANCE) is None  # past the compared steps
    val = np.array(run.history["val_rel_loss"], dtype=float) * np.r_[1.0, 1.5, np.ones(len(run.history["step"]) - 2)]
    late = dataclasses.replace(run, history={**run.history, "val_rel_loss": val})
    assert verify.parting_step(run, late, 20, TOLERANCE) == int(run.history["step"][1])
    with pytest.raises(TypeError, match="tolerance"):
        verify.parting_step(run, run, 20, 1e-2)
    # the float64 twin that looks for a horizon trains up to the parting step only
    calls = []
    monkeypatch.setattr(verify, "train_stack", lambda *a, **kw: calls.append(kw) or training.train_stack(*a, **kw))
    (new,) = training.train_stack([run.config], cache_dir=None, write=False, compile=False)
    check, at = verify.to_horizon(far, new, verify.compare(far, new, 20, TOLERANCE))
    assert [c["stop_at"] for c in calls] == [5] and not check.ok and (at is None or at <= 5)


def test_report_prints_each_run_and_the_verdict_and_names_a_run_that_disagrees(stored, capsys):
    good = [(r, 10, "store") for r in stored[1:3]]  # stored[0] is edited by another test
    assert verify.report(good, tolerance=TOLERANCE, seed=3, command="my-verify", rebuild="my-rebuild") == 0
    out = capsys.readouterr().out
    assert "verification: seed 3 (replay: my-verify --seed 3); 2 runs, tolerance 1e-05 at step 1 and 0.01 after" in out
    assert out.count("  ok       store    ") == 2 and "  10 steps  step 1 " in out
    assert "verification: 2 runs in " in out and "largest step-1 difference" in out and "against 0.01" in out
    bad = dataclasses.replace(stored[3], train_losses=stored[3].train_losses * 1.02)  # a run this code does not train
    assert verify.report([*good, (bad, 10, "gpu")], tolerance=TOLERANCE, seed=4, command="v", rebuild="my-rebuild") == 1
    out, err = capsys.readouterr()
    assert out.count("  ok       store    ") == 2 and out.count("  MISMATCH gpu      ") == 1
    assert f"verification FAILED: {bad.config.label()} (key {bad.key}): step 1 1.96e-02" in err
    assert "rebuild with my-rebuild" in err


def test_report_names_a_bad_argument(stored):
    good = [(stored[1], 5, "store")]
    kwargs = dict(tolerance=TOLERANCE, seed=0, command="v", rebuild="r")
    for picked, error, name in (
        ([], ValueError, "picked must be a non-empty list"),
        ([stored[1]], TypeError, r"picked\[0\] must be a triple"),
        ([("run", 5, "store")], TypeError, r"picked\[0\]\[0\] must be a Run"),
        ([(stored[1], 0, "store")], ValueError, r"picked\[0\]\[1\]"),
        ([(stored[1], 5, None)], TypeError, r"picked\[0\]\[2\]"),
    ):
        with pytest.raises(error, match=name):
            verify.report(picked, **kwargs)
    for name, bad, error in (
        ("tolerance", 1e-2, TypeError),
        ("seed", -1, ValueError),
        ("command", " ", ValueError),
        ("rebuild", None, ValueError),
        ("since", -1.0, ValueError),
    ):
        with pytest.raises(error, match=name):
            verify.report(good, **{**kwargs, name: bad})


def test_drift_records_the_largest_differences_by_step_of_each_way(stored, tmp_path, capsys):
    training.write_store(tmp_path / "s", {"tiny": stored[1:]}, rebuild="make runs")
    store = training.RunStore(tmp_path / "s")
    threads = torch.get_num_threads()
    record = verify.drift(store, 10, 1, "a machine")
    assert torch.get_num_threads() == threads
    assert record["steps"] == 10 and record["hardware"] == "a machine" and "1 samples" in record["samples"]
    assert list(record["ways"]) == list(verify.DRIFT_WAYS)
    one, two = record["ways"].values()
    assert one["runs"] == 3 and two["runs"] == 2 and one["compared_fewer_steps"] == 0  # two: one run per shape
    for way in (one, two):
        assert list(way["largest_by_step"]) == [1, 2, 5, 10]
        assert all(0 <= v <= 1e-3 for v in way["largest_by_step"].values())
        largest = list(way["largest_by_step"].values())
        assert largest == sorted(largest)  # the largest difference up to each step
    json.dumps(record)
    out = capsys.readouterr().out
    assert "stack of one, 1 thread 3 runs, 0 compared on fewer steps: 1:" in out
    with pytest.raises(TypeError, match="store must be a RunStore"):
        verify.drift(tmp_path / "s", 10, 1, "a machine")
    for args, name in (((0, 1, "m"), "steps"), ((10, -1, "m"), "samples"), ((10, 1, ""), "hardware")):
        with pytest.raises(ValueError, match=name):
            verify.drift(store, *args)
