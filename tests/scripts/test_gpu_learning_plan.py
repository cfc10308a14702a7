"""Tests of scripts/gpu_learning_plan.py, which plans the learning chapters' paper-scale GPU runs (no training)."""

import re

import pytest
from _support import load_script

from lloydlib import training

gpu_plan = load_script("gpu_learning_plan")


def test_fig_10a_comes_first_with_240_runs():
    name, configs, unstacked = gpu_plan.parts()[0]
    assert name == "fig10" and len(configs) == 240 and not unstacked
    assert {c.d for c in configs} == {4}
    assert gpu_plan.parts()[-1][0] == "fig17" and gpu_plan.parts()[-1][2]  # unstacked


def test_no_part_repeats_a_config_of_its_own():
    for name, configs, _ in gpu_plan.parts():
        assert len({c.key() for c in configs}) == len(configs), name


def test_the_plan_counts_every_config_once(tmp_path, capsys):
    keys = [c.key() for _, configs, _ in gpu_plan.parts() for c in configs]
    assert gpu_plan.main(["--dry-run", "--results", str(tmp_path)]) == 0
    new = [int(m) for m in re.findall(r"runs \((\d+) new", capsys.readouterr().out)]
    assert len(new) == len(gpu_plan.parts()) and sum(new) == len(set(keys)) < len(keys)


def test_a_full_stack_costs_one_run():
    one = training.TrainConfig(n=64, steps=1000)
    stack = training.grid(one, seed=list(range(64)))
    assert gpu_plan.estimate_seconds([one], False) == pytest.approx(1000 * 0.0094)
    assert gpu_plan.estimate_seconds(stack, False) == pytest.approx(1000 * 0.0094)
    assert gpu_plan.estimate_seconds(stack, True) == pytest.approx(64 * 1000 * 0.0094)
    assert gpu_plan.estimate_seconds([one.replace(n=1024)], True) == pytest.approx(4 * 1000 * 0.0094)


def test_dry_run_prints_the_plan_and_budget(tmp_path, capsys):
    assert gpu_plan.main(["--dry-run", "--budget-minutes", "60", "--results", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "fig10" in out and "fig17" in out
    assert f"--cache-dir {(tmp_path / 'h200').as_posix()}" in out
    assert "Parts that fit in 60 min: fig10" in out


def test_finished_runs_are_reported_done(tmp_path, capsys, monkeypatch):
    first = gpu_plan.parts()[0][1][0]
    monkeypatch.setattr(gpu_plan.training, "lookup", lambda c, roots: object() if c.key() == first.key() else None)
    assert gpu_plan.main(["--dry-run", "--results", str(tmp_path)]) == 0
    assert "fig10: 240 runs (239 new, 1 done" in capsys.readouterr().out


def test_without_dry_run_it_refuses(capsys):
    assert gpu_plan.main([]) == 2
    assert "only plans" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, word",
    [(["--dry-run", "--budget-minutes", "-1"], "--budget-minutes"), (["--dry-run", "--bogus"], "--bogus")],
)
def test_bad_arguments_name_the_option(argv, word, capsys):
    with pytest.raises(SystemExit):
        gpu_plan.main(argv)
    assert word in capsys.readouterr().err
