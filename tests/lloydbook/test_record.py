"""lloydbook.record: the command that records a registry sweep (over lloydlib.training.record), and the
problems of the recorded stores."""

import pytest

from lloydbook import record, results, runs
from lloydlib import training
from lloydlib.training import TrainConfig
from lloydlib.training import record as engine
from lloydlib.training.fingerprint import fingerprint

BASE = TrainConfig(d=2, k=3, n=12, steps=30, batch=4, val_tasks=8, eval_every=5, device="cpu", dtype="float64")


@pytest.fixture
def configs():
    return [BASE.replace(seed=s, tau=t) for s in (0, 1) for t in (0.1, 1.0)] + [BASE.replace(n=10, seed=3)]


def alone(c):
    (run,) = training.train_stack([c], compile=False)  # a stack of one, no cache
    return run


def quiet(*args):
    pass


def test_bad_command_lines_are_named(tmp_path, capsys):
    for argv, name in (
        (["fig10", "--where", "bogus", "--budget", "1", "--out", "x"], "--where"),
        (["fig10a-paper", "--budget", "0", "--out", "x"], "budget"),
        (["fig10a-paper", "--budget", "1", "--workers", "0", "--out", "x"], "workers"),
        (["fig10a-paper", "--budget", "1", "--device", "gpu", "--out", "x"], "device"),
        (["fig10a-paper", "--budget", "1", "--where", "seed=99", "--out", "x"], "selects no run"),
        (["fig99", "--budget", "1", "--out", "x"], "fig99"),
    ):
        assert record.main(argv) == 2
        assert name in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_problems_name_a_damaged_or_stale_recorded_store(tmp_path, configs, monkeypatch):
    good, stale, damaged = tmp_path / "good", tmp_path / "stale", tmp_path / "damaged"
    run = alone(configs[0])
    training.write_store(good, {"a": [run]}, rebuild="python -m lloydbook.record a --out good")
    fp = fingerprint()
    other = dict(fp, modules={**fp["modules"], "lloydlib/losses.py": "0" * 16})
    training.write_store(stale, {"a": [run]}, rebuild="python -m lloydbook.record a --out stale", fingerprint=other)
    training.write_store(damaged, {"a": [run]}, rebuild="python -m lloydbook.record a --out damaged")
    (npz,) = damaged.glob("*.npz")
    npz.write_bytes(npz.read_bytes()[:100])
    (tmp_path / "cache-root").mkdir()
    monkeypatch.setattr(results, "recorded_run_dirs", lambda: [good, tmp_path / "cache-root"])
    assert record.problems() == []
    monkeypatch.setattr(results, "recorded_run_dirs", lambda: [good, stale, damaged])
    found = record.problems()
    assert len(found) == 2
    assert found[0].startswith(f"the recorded run store {stale} was trained by other code: lloydlib/losses.py")
    assert found[0].endswith(f"; {record.RETRAIN} python -m lloydbook.record a --out stale")
    assert str(npz) in found[1] and "python -m lloydbook.record a --out damaged" in found[1]


def test_runs_verify_retrains_one_run_of_each_shape_of_a_recorded_store(tmp_path, configs, monkeypatch, capsys):
    stored = training.train_many(configs[:1], cache_dir=tmp_path / "c", progress=False)
    training.write_store(tmp_path / "store", {"tiny": stored}, rebuild="make runs")
    monkeypatch.setenv("LLOYD_STORE", str(tmp_path / "store"))
    machine = tmp_path / "recorded" / "cpu-test"
    engine.record(configs, machine, engine.Budget(3600), chunk=30, group="tiny", log=quiet)
    monkeypatch.setattr(results, "recorded_run_dirs", lambda: [machine])
    monkeypatch.setattr(runs, "STEPS", 5)
    monkeypatch.setattr(runs, "GPU_STEPS", 7)
    picked = runs.sample(2)
    mine = [(r.config, steps) for r, steps, where in picked if where == "cpu-test"]
    assert len(mine) == 2 and {steps for _, steps in mine} == {7} and {c.n for c, _ in mine} == {10, 12}
    assert runs.main(["verify", "--seed", "2"]) == 0
    assert "ok       cpu-test" in capsys.readouterr().out
