"""Unit tests of lloydbook.learning: the statistics, claims and tables the learning chapters share."""

import math
import sys
from types import SimpleNamespace

import numpy as np
import pytest

from lloydbook import learning, results
from lloydbook.claims import evidence
from lloydbook.sweeps import paper_sweeps, sweep_commands
from lloydlib import lloyd_step, sample_tasks
from lloydlib.training import TrainConfig


def fake_run(val, *, train=None, wall=None, status="done", seconds=1.0, config=None, **fields):
    """A Run-like object: evaluations at steps 0, 10, 20, ... with the given validation curve."""
    val = np.asarray(val, dtype=float)
    steps = np.arange(len(val)) * 10
    history = {
        "step": steps,
        "val_rel_loss": val,
        "train_loss": np.asarray(train if train is not None else val * 10, dtype=float),
        "wall_time": np.asarray(wall if wall is not None else steps / 10, dtype=float),
        "lr": np.full(len(val), 0.01),
        "val_loss": val,
    }
    cfg = config or SimpleNamespace(**{**dict(d=4, k=6, n=32, tau=0.1, lr=0.01, embedding="BN", loss="L2"), **fields})
    return SimpleNamespace(
        history=history,
        status=status,
        config=cfg,
        info={"seconds": seconds},
        train_losses=np.ones(max(1, int(steps[-1]))),
    )


# ----------------------------------------------------------------------------------------- statistics
def test_final_and_final_train_take_the_last_evaluation_and_inf_when_diverged():
    runs = [fake_run([2.0, 1.5, 1.2], train=[9, 8, 7]), fake_run([2.0, 1.0, 0.9], status="diverged")]
    np.testing.assert_array_equal(learning.final(runs), [1.2, math.inf])
    np.testing.assert_array_equal(learning.final_train(runs), [7.0, math.inf])
    assert learning.final(runs).shape == (2,)


def test_auc_is_the_mean_after_step_zero():
    runs = [fake_run([100.0, 1.0, 2.0, 3.0]), fake_run([1.0, 1.0], status="diverged")]
    np.testing.assert_array_equal(learning.auc(runs), [2.0, math.inf])


def test_steps_to_settle_finds_the_first_step_inside_the_band():
    run = fake_run([0, 0, 0, 0, 0], train=[50.0, 20.0, 12.0, 10.4, 10.0])
    assert learning.steps_to_settle(run) == 30  # 10.4 is within 5% of 10; 12 is not
    flat = fake_run([0, 0, 0], train=[50.0, 10.0, 10.0])
    assert learning.steps_to_settle(flat) == 10  # inside from the first step after 0


def test_largest_rise_skips_step_zero_and_reads_nan_as_inf():
    assert learning.largest_rise(fake_run([9.0, 1.0, 1.2, 1.1, 1.5])) == pytest.approx(0.4)
    assert learning.largest_rise(fake_run([9.0, 1.0, 0.9, 0.8])) == pytest.approx(-0.1)
    assert learning.largest_rise(fake_run([9.0, 1.0, float("nan")])) == math.inf
    assert learning.largest_rise(fake_run([9.0, 1.0])) == 0.0


def test_ms_per_step():
    runs = [fake_run([1, 1], seconds=s) for s in (1.0, 2.0, 3.0)]  # 10 steps each
    assert learning.ms_per_step(runs) == pytest.approx(200.0)


def test_relative_spread():
    X, C0 = sample_tasks(8, 20, 3, 4, seed=0)
    assert learning.relative_spread(lloyd_step, X, C0) == pytest.approx(1.0)
    collapse = lambda X, C: X.mean(1, keepdim=True).expand_as(C)  # every center at the middle
    assert learning.relative_spread(collapse, X, C0) == 0.0
    double = lambda X, C: 2 * lloyd_step(X, C)  # twice as far from their centroid: a squared spread 4 times
    assert learning.relative_spread(double, X, C0) == pytest.approx(4.0)


def test_step_costs_times_forward_and_backward_per_repetition():
    costs = learning.step_costs(2, 3, n=8, batch=2, reps=3, warmup=0, seed=4)
    assert set(costs) == {"OH", "BN"} and all(len(v) == 3 and min(v) > 0 for v in costs.values())


# ----------------------------------------------------------------------------------------- what the chapters glue
def test_final_lrs_reads_the_rate_each_run_ended_with():
    a, b = fake_run([2.0, 1.0, 0.9]), fake_run([2.0, 1.0, 0.9])
    b.history["lr"] = np.array([0.01, 0.005, 0.0025])
    np.testing.assert_array_equal(learning.final_lrs([a, b]), [0.01, 0.0025])


def test_wall_numbers_number_the_cases_in_order():
    wall = {
        (16, 16): {("OH",): [fake_run([2.0, 1.2], seconds=2.0)], ("BN",): [fake_run([2.0, 1.4], seconds=1.0)]},
        (32, 25): {("OH",): [fake_run([2.0, 1.1], seconds=4.0)], ("BN",): [fake_run([2.0, 1.5], seconds=3.0)]},
    }
    got = learning.wall_numbers(wall)  # 10 steps a run: ms = 100 x seconds
    assert got == pytest.approx(
        {
            "ms-oh-1": 200.0,
            "ms-bn-1": 100.0,
            "wall-plateau-1": 1.3,
            "ms-oh-2": 400.0,
            "ms-bn-2": 300.0,
            "wall-plateau-2": 1.3,
        }
    )


def test_cost_ratios_are_medians_of_the_per_repetition_ratios():
    cost = {(16, 16): {"OH": [2.0, 3.0, 9.0], "BN": [1.0, 1.0, 1.0]}, (32, 25): {"OH": [1.0, 1.0], "BN": [2.0, 2.0]}}
    assert learning.cost_ratios(cost) == {"cost-ratio-1": 3.0, "cost-ratio-2": 0.5}


def test_outcomes_and_evidence_table_show_the_parts():
    ev = [evidence.Evidence("OH within 0.05", "holds", "numbers a"), evidence.Evidence("BN", "undetermined", "b")]
    assert learning.outcomes(ev) == "OH within 0.05: holds; BN: undetermined"
    table = learning.evidence_table(ev)
    assert table.header == ["part", "outcome", "what the seeds say"]
    assert table.rows == [["OH within 0.05", "holds", "numbers a"], ["BN", "undetermined", "b"]]


def test_q3_table_formats_per_seed_values_floats_and_labels():
    table = learning.q3_table(("eta", "rise", "max", "runs"), [(0.001, [[1.0, 2.0, 3.0], 0.123456, 20])])
    assert table.header == ["eta", "rise", "max", "runs"]
    assert table.rows == [["0.001", "2.000 [1.500, 2.500]", "0.123", "20"]]
    assert learning.q3_table(("d", "gap"), [(4, [np.array([0.5, 0.5])])]).rows == [["4", "0.500 [0.500, 0.500]"]]


def test_command_line_runs_runs_the_command_and_finds_its_runs(monkeypatch, capsys, tmp_path):
    """The cache goes to the command as --cache-dir (never through the environment), and is where the runs are
    looked up."""
    configs = [TrainConfig(d=2, k=2, n=6, seed=s) for s in (0, 1)]
    calls, roots = [], []

    def fake_subprocess_run(args, **kwargs):
        calls.append((args, kwargs.get("env")))
        return SimpleNamespace(returncode=0, stdout="trained 2 runs", stderr="")

    def fake_lookup(c, dirs):
        roots.append(list(dirs))
        return f"run {c.seed}"

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(learning.results, "cache_dir", lambda: tmp_path / "c")  # the book's
    monkeypatch.setattr(learning.subprocess, "run", fake_subprocess_run)
    monkeypatch.setattr(learning.training, "lookup", fake_lookup)
    cmd = "python -m lloydlib train --d 2 --k 2 --n 6 --seed 0 1"
    environ = dict(learning.os.environ)
    assert learning.command_line_runs(cmd, configs) == ["run 0", "run 1"]
    assert calls == [
        ([sys.executable, "-m", "lloydlib", "train", "--d", "2", "--k", "2", "--n", "6", "--seed", "0", "1",
          "--cache-dir", "c"], None)
    ]  # fmt: skip
    assert roots == [[tmp_path / "c"]] * 2 and dict(learning.os.environ) == environ
    out = capsys.readouterr().out
    assert (
        out.startswith(f"$ {cmd} --cache-dir c\ntrained 2 runs\n") and "found in the cache: 2 runs, e.g. run 0" in out
    )
    with pytest.raises(ValueError, match="--cache-dir"):
        learning.command_line_runs(cmd + " --cache-dir elsewhere", configs)
    monkeypatch.setattr(learning.training, "lookup", lambda c, dirs: None if c.seed else "run 0")
    with pytest.raises(RuntimeError, match="not in the cache"):
        learning.command_line_runs(cmd, configs)
    monkeypatch.setattr(
        learning.subprocess, "run", lambda a, **k: SimpleNamespace(returncode=2, stdout="", stderr="bad")
    )
    with pytest.raises(RuntimeError, match=r"failed \(exit 2\): bad"):
        learning.command_line_runs(cmd, configs)
    with pytest.raises(ValueError, match="python -m lloydlib train"):
        learning.command_line_runs("python -m lloydlib check", configs)


# ----------------------------------------------------------------------------------------- where a claim holds
def test_setting_of_reads_the_runs_configs():
    runs = [
        fake_run([1.0], config=TrainConfig(n=32, d=4, k=6, steps=300, tau=t, seed=s))
        for t in (1.0, 0.1)
        for s in (0, 1)
    ]
    assert learning.setting_of(runs) == "n=32, d=4, k=6; 300 steps; 2 seeds"
    assert learning.setting_of({("a",): runs[:2], ("b",): runs[2:]}, ("n", "tau"), T=20) == (
        "n=32, tau in {0.1, 1}, T=20; 300 steps; 2 seeds"
    )
    with pytest.raises(ValueError, match="one step count"):
        learning.setting_of([TrainConfig(steps=10), TrainConfig(steps=20)])
    with pytest.raises(ValueError, match="at least one"):
        learning.setting_of([])


def test_at_names_only_the_fields_that_depart_and_nothing_at_the_papers_setting():
    ours, paper = dict(n=32, d=[4], steps=6000), dict(n=512, d=[4, 32], steps=10000)
    assert learning.at(ours, paper) == "At n=32, d=4, 6,000 steps (the paper: n=512, d in {4, 32}, 10,000 steps): "
    assert learning.at(dict(n=512, d=4), dict(n=512, d=[4])) == ""
    assert learning.at(dict(k=6), dict(k=None)) == "At k=6 (the paper: k not stated): "


def test_paper_decides_names_the_setting_and_the_command_of_the_selected_runs():
    text = learning.paper_decides("fig11", ("n", "d", "lr"), d=32)
    assert text.startswith("the paper's setting (n=512, d=32, lr in {0.001, 0.01, 0.1, 1}; 5,000 steps; 10 seeds)")
    assert "`python -m lloydlib train --d 32 " in text and "--d 4 32" not in text
    assert "one run at a time" in learning.paper_decides("fig17", d=16, k=16)
    assert "--family normal cauchy" in learning.paper_decides("families", tau=0.1, loss="L2", embedding="BN")
    with pytest.raises(ValueError, match="selects no run"):
        learning.paper_decides("fig13", d=7)
    with pytest.raises(ValueError, match="one of the book.s sweeps"):
        learning.paper_decides("fig99")


def test_gpu_status_names_the_gpu_machines_only(monkeypatch, tmp_path):
    monkeypatch.setattr(results, "recorded_run_dirs", lambda: [])
    assert "no runs recorded on a GPU" in learning.gpu_status()
    monkeypatch.setattr(results, "recorded_run_dirs", lambda: [tmp_path / "cpu-amd-epyc"])
    assert "no runs recorded on a GPU" in learning.gpu_status()  # the CPU's store is chapter 04's own section
    monkeypatch.setattr(results, "recorded_run_dirs", lambda: [tmp_path / "cpu-amd-epyc", tmp_path / "h200"])
    assert learning.gpu_status().endswith("1 GPU machine(s): h200")


def test_gpu_commands_lists_every_command_of_the_sweeps_named():
    found = {name: (specs, unstacked) for name, specs, unstacked in paper_sweeps()}
    table = learning.gpu_commands(("fig10", "fig17"))
    expected = [sweep_commands(*found[n], results.RECORDED_STORE) for n in ("fig10", "fig17")]
    assert [r[0] for r in table.rows] == ["fig10"] * len(expected[0]) + ["fig17"] * len(expected[1])
    assert table.rows[0][1] == f"<code>{expected[0][0].replace('<', '&lt;').replace('>', '&gt;')}</code>"
    assert "&lt;machine&gt;" in table.header[1] and "for n in 256 512 1024" in table.rows[-1][1]
    for bad in (("fig99",), "fig10"):
        with pytest.raises(ValueError, match="names must be a list of paper-scale sweeps"):
            learning.gpu_commands(bad)
