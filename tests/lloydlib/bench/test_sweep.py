"""lloydlib.bench.sweep: stacked and one-at-a-time training of the same runs, as runs per hour.
(Speed itself is measured by the command, not tested.)"""

import json

import pytest
from _support import assert_raises_naming

from lloydlib import bench
from lloydlib.bench.sweep import TAUS, sweep, sweep_configs


def test_sweep_configs_form_one_stack():
    from lloydlib.training.stacked import stack_key

    configs = sweep_configs(7, n=16, steps=5)
    assert [c.tau for c in configs[:3]] == list(TAUS) and [c.seed for c in configs] == [0, 0, 0, 1, 1, 1, 2]
    assert len({stack_key(c) for c in configs}) == 1 and len({c.key() for c in configs}) == 7


def test_sweep_reports_both_rates_from_interleaved_rounds():
    out = sweep(runs=3, d=2, k=3, n=8, batch=2, steps=3, workers=2, compile=False, per_hour_steps=30, rounds=2)
    assert out["benchmark"] == "sweep" and out["compiled"] is False
    assert out["stacked_runs_per_hour"] > 0 and out["sequential_runs_per_hour"] > 0
    assert len(out["stacked_seconds"]) == len(out["sequential_seconds"]) == len(out["round_ratios"]) == 2
    for ratio, a, b in zip(out["round_ratios"], out["stacked_seconds"], out["sequential_seconds"]):
        assert ratio == pytest.approx(b / a)  # equal run counts: the ratio of rates is that of seconds
    assert out["ratio"] == pytest.approx(sum(out["round_ratios"]) / 2)
    assert out["ratio_interval"] is None  # two rounds are too few for any interval at alpha = 0.1
    assert out["config"]["workers"] == 2 and out["config"]["rounds"] == 2 and "extrapolated" in out["extrapolation"]
    assert "cpu" in out["hardware"] and out["machine"]
    json.dumps(out)


def test_sweep_interval_brackets_the_median_ratio():
    out = sweep(runs=2, d=2, k=3, n=8, batch=2, steps=2, workers=1, compile=False, per_hour_steps=20, rounds=5)
    lo, hi = out["ratio_interval"]
    assert lo == min(out["round_ratios"]) and hi == max(out["round_ratios"])  # 5 rounds: [min, max] at 0.1
    assert lo <= out["ratio"] <= hi


def test_sweep_refuses_bad_arguments():
    assert_raises_naming(lambda: sweep(runs=0), ValueError, ["runs", "1", "0"])
    assert_raises_naming(lambda: sweep(loss="XX"), ValueError, ["loss", "XX"])
    assert_raises_naming(lambda: sweep(rounds=0), ValueError, ["rounds", "1", "0"])
    assert_raises_naming(lambda: sweep(alpha=1.5), ValueError, ["alpha", "1.5"])


def test_cli_sweep(capsys, tmp_path):
    path = tmp_path / "sweep.json"
    argv = ["sweep", "--runs", "2", "--d", "2", "--k", "3", "--n", "8", "--batch", "2", "--steps", "2", "--rounds", "1"]
    assert bench.main(argv + ["--workers", "1", "--no-compile", "--json", "--out", str(path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert json.loads(path.read_text()) == out and out["config"]["n"] == 8
    assert bench.main(argv + ["--workers", "1", "--no-compile"]) == 0
    assert "runs/hour" in capsys.readouterr().out
    assert bench.main(argv + ["--runs", "0"]) == 2
