"""lloydlib.training.cli: ``python -m lloydlib train`` trains a sweep into the cache Python reads."""

import json
import sys

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


SMALL = ["--d", "2", "--k", "3", "--n", "12", "--steps", "10", "--batch", "4", "--val-tasks", "8", "--eval-every", "5"]


def test_sweep_words_and_json_grids_make_the_union_of_their_grids(tmp_path, capsys):
    spec = tmp_path / "sweep.json"
    spec.write_text(json.dumps([{"embedding": "OH", "tau": [0.1, 1]}, {"embedding": ["BN"], "clip": None}]))
    argv = SMALL + ["--cache-dir", str(tmp_path), "--dry-run", "--sweep", "seed=0,1", str(spec)]
    assert main(argv) == 0
    listed = capsys.readouterr().out
    base = TrainConfig(d=2, k=3, n=12, steps=10, batch=4, val_tasks=8, eval_every=5)
    expected = training.grid(base, embedding="OH", tau=[0.1, 1], seed=[0, 1]) + training.grid(
        base, embedding="BN", seed=[0, 1]
    )
    assert "6 run(s)" in listed and all(c.key() in listed for c in expected)
    inline = '{"embedding": ["OH"], "tau": [0.1, 1]}'
    assert main(SMALL + ["--cache-dir", str(tmp_path), "--dry-run", "--seed", "0", "1", "--sweep", inline]) == 0
    assert "4 run(s)" in capsys.readouterr().out


@pytest.mark.parametrize(
    "sweep, words",
    [
        (["seed=0,x"], ["seed=0,x", "seed must be an integer", "'x'"]),
        (["sede=1"], ["no field 'sede'"]),
        (["tau"], ["'tau'", "FIELD=V1,V2"]),
        (['{"d": [2, "3"]}'], ["JSON text", "d must be an integer", "'3'"]),
        (['[{"d": 2}, {"tau": []}]'], ["JSON text[1]", "axis 'tau' is empty"]),
        (['[{"d": 2}, 3]'], ["JSON text[1]", "JSON object"]),
        (['{"plateau": 1}'], ["plateau must be a bool", "int 1"]),
        (['{"d": 2'], ["not valid JSON"]),
        (["missing.json"], ["missing.json", "cannot be read"]),
        (["d=3"], ["'d'", "both as --d and in --sweep"]),
        (['{"d": 3}'], ["'d'", "both as options and in a --sweep JSON grid"]),
        (["embedding=OH,XX"], ["embedding must be one of", "'XX'"]),
    ],
)
def test_bad_sweeps_exit_with_status_2_naming_the_field(tmp_path, capsys, sweep, words):
    assert main(["--d", "2", "--cache-dir", str(tmp_path), "--dry-run", "--sweep", *sweep]) == 2
    err = capsys.readouterr().err
    for word in words:
        assert word in err, err


def test_the_executor_options_are_checked(tmp_path, capsys, monkeypatch):
    assert main(["--address", "auto", "--cache-dir", str(tmp_path)]) == 2
    assert "--address needs --executor ray" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--executor", "dask"])
    monkeypatch.setitem(sys.modules, "ray", None)  # Ray not installed
    assert main(SMALL + ["--cache-dir", str(tmp_path), "--executor", "ray", "--no-progress"]) == 2
    assert "pip install 'lloydlib[distributed]'" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())
