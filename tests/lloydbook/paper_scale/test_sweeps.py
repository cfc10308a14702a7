"""lloydbook.paper_scale.sweeps: the paper-scale sweeps of lloydbook.sweeps.paper_sweeps judged by name
on (here: made-up) runs with the sweeps' real configs."""

import numpy as np
import pytest
from _made_up_runs import falls, run

from lloydbook import book, claims, paper_scale
from lloydbook.paper_scale import sweeps
from lloydbook.sweeps import paper_sweeps, sweep_configs

PAPER = book.params("learning", "paper")
SWEEPS = {name: specs for name, specs, _ in paper_sweeps(PAPER)}


def recorded(name, curve):
    """Made-up runs with the real configs of the paper-scale sweep ``name``, ``curve(config)`` giving each run."""
    return [curve(c) for c in sweep_configs(SWEEPS[name])]


def wall_run(c):
    slow = c.embedding == "BN" and c.d == 16
    ms = {16: 0.9, 32: 0.5}[c.d] if c.embedding == "BN" else 1.0
    return run(falls(60 if slow else 20), c.seed, ms=ms, config=c)


def test_fields_are_the_sweeps_and_their_configs_fields():
    assert list(sweeps.FIELDS) == list(SWEEPS)  # every paper-scale sweep, in the order a GPU trains them
    for name, fields in sweeps.FIELDS.items():
        configs = sweep_configs(SWEEPS[name])
        assert all(hasattr(configs[0], f) for f in fields), name
        keys = {tuple(getattr(c, f) for f in fields) for c in configs}
        seeds = {len(c) for c in [[c for c in configs if tuple(getattr(c, f) for f in fields) == k] for k in keys]}
        assert seeds == {10}, name  # the fields tell the settings apart; what is left is the seed


def test_judge_decides_a_paper_scale_sweep_by_its_name(chapter):
    ids = paper_scale.judge("fig17", recorded("fig17", wall_run), PAPER, "H200")
    assert ids == ["learning-wallclock-bn-slower-gpu-h200", "learning-wallclock-bn-initially-faster-gpu-h200"]
    assert paper_scale.judge("fig17", recorded("fig17", wall_run)[1:], PAPER, "H200") == []
    with pytest.raises(ValueError, match="name must be one of the paper-scale sweeps"):
        paper_scale.judge("fig99", [], PAPER, "H200")


def test_judge_checks_the_machine_even_without_runs(chapter):
    with pytest.raises(ValueError, match="machine must name the GPU machine"):
        paper_scale.judge("fig13", [], PAPER, "()")
    assert paper_scale.judge("fig13", iter([]), PAPER, "h200") == []  # any iterable of runs


def test_judge_line_says_what_was_judged_for_every_sweep(chapter):
    runs = recorded("fig17", wall_run)
    partial = paper_scale.judge_line("fig17", runs[:-1], PAPER, "h200")
    assert partial == f"h200, fig17: partial ({len(runs) - 1} of {len(runs)} runs): shown, not judged"
    assert claims.claims() == []
    assert paper_scale.judge_line("fig13", [], PAPER, "h200") == "h200, fig13: not recorded"
    line = paper_scale.judge_line("fig17", runs, PAPER, "h200")
    assert line.startswith("h200, fig17: judged at paper scale: learning-wallclock-bn-slower-gpu-h200, ")


def test_wall_panels_are_one_column_per_case_and_n():
    cols, titles = paper_scale.wall_panels(recorded("fig17", wall_run))
    assert titles[0] == "d=16, k=16, n=256" and len(cols) == 6 and set(cols[0]) == {("OH", "L2"), ("BN", "L2")}


def test_wall_panels_keep_the_order_runs_came_in_and_what_is_missing():
    runs = recorded("fig17", wall_run)
    only_bn_32 = [r for r in runs if r.config.d == 32 and r.config.embedding == "BN" and r.config.n == 512]
    cols, titles = paper_scale.wall_panels(only_bn_32 + [r for r in runs if r.config.d == 16 and r.config.n == 256])
    assert titles == ["d=32, k=25, n=512", "d=16, k=16, n=256"]
    assert set(cols[0]) == {("BN", "L2")} and [r.config.seed for r in cols[0][("BN", "L2")]] == PAPER["seeds"]
    assert paper_scale.wall_panels([]) == ([], [])


FIRST = {
    "fig10": "learning-l2-lower-train-loss-d4-gpu-h200",
    "fig10b": "learning-l2-lower-train-loss-d32-gpu-h200",
    "fig14": "shapes-d-oh-bn-gap-shrinks-gpu-h200",
    "fig11": "shapes-lr-small-monotone-slow-d4-gpu-h200",
    "fig13": "shapes-n-little-difference-gpu-h200",
    "fig15": "shapes-k-bn-degrades-gpu-h200",
    "fig17": "learning-wallclock-bn-slower-gpu-h200",
}


@pytest.mark.parametrize("name", list(FIRST))
def test_every_paper_sweep_reaches_its_claims(chapter, name):
    """The paper's own sweeps, with flat made-up curves: partial, nothing; complete, the figure's first finding
    is decided: a row (Fig. 13's claim holds; an undecided comparison is an open row) or a failed check (flat
    curves contradict most statements)."""
    claims.start(FIRST[name].split("-")[0])  # the key of the chapter that decides the figure
    runs = recorded(name, lambda c: run(np.full(11, 0.95), c.seed, config=c))
    assert paper_scale.judge(name, runs[:-1], PAPER, "h200") == []
    failed = []
    try:
        paper_scale.judge(name, runs, PAPER, "h200")
    except AssertionError as e:
        failed = [str(e).split("'")[1]]
    assert ([r.id for r in claims.rows()] + failed)[0] == FIRST[name]
