"""lloydlib.training.cli: ``python -m lloydlib train`` trains a sweep into the cache Python reads."""

import pytest

from lloydlib import training
from lloydlib.training import TrainConfig
from lloydlib.training.cli import main


def test_command_line_runs_a_two_seed_sweep(tmp_path, capsys):
    argv = [
        "--d", "2", "--k", "3", "--n", "12", "--steps", "10", "--batch", "4", "--val-tasks", "8",
        "--eval-every", "5", "--embedding", "OH", "BN", "--seed", "0", "1", "--clip", "none",
        "--plateau", "false", "--cache-dir", str(tmp_path), "--no-progress",
    ]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "4 run(s)" in out
    runs = training.load_runs(tmp_path)
    assert {(r.config.embedding, r.config.seed) for r in runs} == {("OH", 0), ("OH", 1), ("BN", 0), ("BN", 1)}
    assert all(r.config.plateau is False and r.config.clip is None for r in runs)
    # the same configs built in Python hit the cache the command line filled
    cfg = TrainConfig(
        d=2, k=3, n=12, steps=10, batch=4, val_tasks=8, eval_every=5, embedding="BN", seed=1, plateau=False
    )
    assert training.lookup(cfg, [tmp_path]) is not None
    assert main(argv[:-1] + ["--dry-run"]) == 0
    assert capsys.readouterr().out.count("cached") == 4


def test_bad_values_exit_with_status_2_or_a_usage_error(tmp_path, capsys):
    assert main(["--k", "30", "--n", "10", "--cache-dir", str(tmp_path)]) == 2
    assert "k must be <= n" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--plateau", "maybe"])


def test_the_line_command_writes_means_exactly_its_grid(tmp_path, tiny, capsys):
    base = TrainConfig(**dict(tiny, steps=10))
    line = training.command(base, embedding=["OH", "BN"], seed=[0, 1], clip=1.0, plateau=False)
    assert main(line.split()[4:] + ["--cache-dir", str(tmp_path), "--dry-run"]) == 0
    listed = capsys.readouterr().out
    for c in training.grid(base, embedding=["OH", "BN"], seed=[0, 1], clip=1.0, plateau=False):
        assert c.key() in listed


def test_the_default_cache_is_the_environments(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("LLOYD_CACHE", str(tmp_path / "env"))
    assert main(["--steps", "5", "--dry-run"]) == 0
    assert str(tmp_path / "env" / "runs") in capsys.readouterr().out
