"""lloydlib.bench.cli: ``python -m lloydlib bench`` prints tables or JSON naming the hardware.
(Speed itself is measured by the command, not tested.)"""

import json

import pytest

from lloydlib import bench


def test_cli_train_step_json(capsys):
    argv = ["train-step", "--n", "24", "--d", "2", "--k", "3", "--batch", "2", "--warmup", "1", "--reps", "2"]
    assert bench.main(argv + ["--no-compile", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["lloydlib_ms_per_step"] > 0 and out["reference_ms_per_step"] > 0
    assert out["config"]["n"] == 24 and out["config"]["embedding"] == "BN" and out["compile"] is False
    assert "cpu" in out["hardware"] and len(out["samples_ms"]["lloydlib"]) == 2
    assert bench.main(argv + ["--no-compile", "--threads", "1"]) == 0
    assert "speed-up" in capsys.readouterr().out


def test_cli_grid_json_and_file(capsys, tmp_path):
    path = tmp_path / "grid.json"
    argv = ["grid", "--d", "2 3", "--k", "4", "--n", "16", "--batch", "1", "--warmup", "0", "--reps", "2"]
    assert bench.main(argv + ["--json", "--out", str(path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert json.loads(path.read_text()) == out
    assert [(r["d"], r["k"]) for r in out["rows"]] == [(2, 4), (3, 4)]
    assert out["config"]["n"] == 16 and out["benchmark"] == "grid"
    argv = ["table1", "--k", "6", "--n", "16", "--batch", "1", "--warmup", "0", "--reps", "1", "--no-memory"]
    assert bench.main(argv) == 0
    assert "OH/BN" in capsys.readouterr().out


def test_cli_bad_input(capsys):
    assert bench.main(["grid", "--k", "1", "--n", "8", "--reps", "1", "--warmup", "0"]) == 2
    assert "k must be >= 2" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        bench.main(["train-step", "--embedding", "XX"])


def test_cli_train_step_grid(capsys, tmp_path):
    path = tmp_path / "grid.json"
    argv = ["train-step-grid", "--n", "16", "--d", "2", "--k", "3", "--batch", "2", "--warmup", "0", "--reps", "1"]
    argv += ["--embeddings", "BN", "--losses", "NE", "L2", "--rounds", "1", "--no-compile", "--threads", "1"]
    assert bench.main(argv + ["--out", str(path)]) == 0
    assert "estimate ms" in capsys.readouterr().out
    out = json.loads(path.read_text())
    assert out["benchmark"] == "train-step-grid" and len(out["configs"]) == 2
    assert bench.recorded("train-step-grid", root=tmp_path)[0]["file"] == "grid.json"
