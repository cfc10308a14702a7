"""lloydbook.fig6: the findings of Figs. 6, 7 and 12 and App. C as parts in the evidence vocabulary, on made-up
curves whose verdicts are known (OH and BN below Lloyd's, NA above it but improving, iterating diverging)."""

import math
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from _made_up_runs import run

from lloydbook import fig6, many_steps
from lloydbook.findings import not_evaluated, not_recorded, undecided
from lloydlib.model import LearnableTransformer
from lloydlib.training import TrainConfig

T, SEEDS = 8, 10
SETTINGS = [(e, l) for e in ("OH", "BN", "NA") for l in ("NE", "L2")]
RUNS = {s: [run(np.ones(11), i) for i in range(SEEDS)] for s in SETTINGS}


def curves(offset):
    """(seeds, T + 1) curves: Lloyd's falls from 1 to 0.5, re-embedding sits ``offset`` from it, iterating rises
    after step 1."""
    noise = 1e-3 * np.sin(np.arange(SEEDS))[:, None]
    lloyd = np.linspace(1.0, 0.5, T + 1)[None, :] + noise
    iterate = np.concatenate([lloyd[:, :2], lloyd[:, 1:2] + np.linspace(0.1, 2.0, T - 1)[None, :]], axis=1)
    return {"lloyd": lloyd, "reembed": lloyd + offset, "iterate": iterate}


FIG6 = {s: curves(0.1 if s[0] == "NA" else -0.1) for s in SETTINGS}


def outcomes(part):
    return [e.outcome for e in part.evidence]


def test_fig6_reads_every_setting_and_decides_each_finding(judge):
    parts = fig6.fig6(RUNS, FIG6, T, judge=judge)
    assert list(parts) == ["iterate-diverges", "reembed-beats-lloyd", "na-improves-not-lloyd"]
    assert set(parts) <= set(fig6.SOURCES)
    diverges, beats, na = parts.values()
    assert [e.part for e in diverges.evidence] == [
        f"objective at step {T} above step 1",
        f"objective at step {T} above the initial one",
    ]
    assert outcomes(diverges) == ["holds", "holds"] and len(diverges.runs) == 6 * SEEDS
    assert outcomes(beats) == ["holds"] and [c.part for c in beats.evidence[0].cells] == [
        "OH:NE",
        "OH:L2",
        "BN:NE",
        "BN:L2",
    ]
    assert (
        outcomes(na) == ["holds", "holds"] and len(na.runs) == 2 * SEEDS and "Re-embedded NA improves" in na.statement
    )


def test_inits_shifts_and_n_are_decided_per_case(judge):
    INIT = {(i, s): FIG6[s] for i in ("gonzalez", "kmeans++") for s in SETTINGS}
    (lose,) = fig6.inits(RUNS, INIT, ("gonzalez", "kmeans++"), T, judge=judge).values()
    assert outcomes(lose) == ["fails", "fails"]  # the models beat Lloyd's from every start here
    L2 = [("OH", "L2"), ("BN", "L2")]
    SHIFT = {(sh, s): FIG6[s] for sh in many_steps.SHIFTS for s in L2}
    shifts, doubled = fig6.fig7(RUNS, SHIFT, T, judge=judge).values()
    assert [e.part for e in shifts.evidence] == [f"{sh}: mean gap below 0" for sh in list(many_steps.SHIFTS)[:3]]
    assert outcomes(shifts) == ["holds"] * 3 and outcomes(doubled) == ["fails", "holds"]
    early, late = fig6.doubled(SHIFT, T)
    assert early.shape == late.shape == (2 * SEEDS,) and np.allclose(late, -0.1, atol=0.01)
    (gen,) = fig6.fig12(RUNS, {(n, s): FIG6[s] for n in (8, 16, 64) for s in L2}, T, judge=judge).values()
    assert [e.part for e in gen.evidence] == [
        "n=8: mean gap below 0",
        "n=16: mean gap below 0",
        "n=64: mean gap below 0",
    ]
    na = fig6.na(RUNS, {n: FIG6[("NA", "L2")] for n in (8, 64)}, "at other n", T, judge=judge)
    assert "Re-embedded NA (L2), at other n, improves" in na.statement and [c.part for c in na.evidence[0].cells] == [
        "8",
        "64",
    ]
    (moved,) = fig6.rewrite(RUNS, {s: np.full(SEEDS, 0.2) for s in SETTINGS}, judge=judge).values()
    assert outcomes(moved) == ["holds"]


def test_a_setting_without_runs_or_a_bad_T_names_what_is_missing(judge):
    with pytest.raises(
        ValueError, match=r"runs must map every setting evaluated to its runs; missing \[\('OH', 'NE'\)"
    ):
        fig6.fig6({}, FIG6, T, judge=judge)
    with pytest.raises(ValueError, match="T must be"):
        many_steps.exact_deviation(0, seed=1)


def test_on_models_evaluates_every_figure_and_states_each_finding(judge):
    def model_run(e, l, seed):  # a small untrained model at (d, k, n) = (2, 3, 12)
        torch.manual_seed(seed)
        config = TrainConfig(d=2, k=3, n=12, steps=10, batch=4, embedding=e, loss=l, seed=seed)
        return SimpleNamespace(config=config, model=LearnableTransformer(2, 3, e, gamma=1.0), status="done")

    runs = {(e, l): [model_run(e, l, s) for s in range(3)] for e, l in SETTINGS}
    kw = dict(tasks=2, iterate_tasks=1, shift_tasks=2, doubled_tasks=3, n_points=48, ns=[6, 24], task_seed=5)
    parts, curves = fig6.on_models(runs, 4, **kw, judge=judge)
    assert list(parts) == list(fig6.ON_MODELS) and set(fig6.ON_MODELS) <= set(fig6.SOURCES)
    assert set(curves["fig6"]) == set(SETTINGS) and curves["fig6"][("OH", "NE")]["iterate"].shape == (3, 5)
    assert set(curves["fig7"]) == {(sh, s) for sh in many_steps.SHIFTS for s in [("OH", "L2"), ("BN", "L2")]}
    assert set(curves["fig12"]) == {(n, s) for n in (6, 24) for s in [("OH", "L2"), ("BN", "L2")]}
    assert all(math.isfinite(v) for moved in curves["rewrite"].values() for v in moved)
    # per seed, each setting's curves are those of evaluating it on its own (the jobs go by seed and share draws)
    alone = many_steps.evaluate(runs[("BN", "L2")], 4, tasks=3, shift="scale doubled", task_seed=5)
    for m in ("reembed", "lloyd"):
        np.testing.assert_array_equal(curves["fig7"][("scale doubled", ("BN", "L2"))][m], alone[m])
    alone = many_steps.evaluate(runs[("NA", "NE")], 4, tasks=1, modes=("iterate",), task_seed=5)
    np.testing.assert_array_equal(curves["fig6"][("NA", "NE")]["iterate"], alone["iterate"])
    moved = many_steps.data_rewrite(runs[("OH", "NE")], 2, 5)
    np.testing.assert_array_equal(curves["rewrite"][("OH", "NE")], moved)
    # the same tasks in two processes: the same evidence
    again, _ = fig6.on_models(runs, 4, **kw, workers=2, judge=judge)
    assert [e.text for p in again.values() for e in p.evidence] == [e.text for p in parts.values() for e in p.evidence]
    with pytest.raises(ValueError, match="workers must be"):
        fig6.on_models(runs, 4, **kw, workers=0, judge=judge)
    with pytest.raises(ValueError, match="runs must hold OH or BN with L2, and NA"):
        fig6.on_models({s: runs[s] for s in SETTINGS if s[0] != "NA"}, 4, **kw, judge=judge)


def test_models_not_recorded_are_open_rows_that_name_them():
    lacking = [TrainConfig(d=4, k=6, n=512, tau=0.1, embedding="OH", loss="L2", seed=s) for s in (3, 4)]
    parts = not_recorded({name: fig6.SOURCES[name] for name in fig6.ON_MODELS}, lacking)
    assert list(parts) == list(fig6.ON_MODELS) and parts["n-generalises"].runs == lacking
    why = undecided(parts["n-generalises"])
    assert why[0] == "undetermined" and "tau=0.1 OH:L2 seeds 3, 4" in why[1]
    with pytest.raises(ValueError, match="lacking must hold the configs"):
        not_recorded({"n-generalises": "x"}, [])
    (part,) = not_evaluated({"n-generalises": "x"}, lacking, "too costly here").values()
    assert undecided(part) == ("undetermined", "the models it reads: undetermined (too costly here)")
    with pytest.raises(ValueError, match="runs and why must say"):
        not_evaluated({"n-generalises": "x"}, lacking, " ")
    assert part.statement == "x: n-generalises"  # no statements given: named by its source and name
    (worded,) = not_evaluated(
        {"n-generalises": "x"}, lacking, "too costly", {"n-generalises": ("It holds", "p")}
    ).values()
    assert (worded.statement, worded.paper) == ("It holds", "p")
    with pytest.raises(TypeError, match="statements must be a dict"):
        not_evaluated({"n-generalises": "x"}, lacking, "too costly", [("It holds", "p")])


def test_fig12_reads_the_same_points_at_every_n_but_at_least_the_floor():
    assert [fig6.fig12_tasks(n, 16384, 64) for n in (128, 256, 1024, 2048)] == [128, 64, 64, 64]
    assert [fig6.fig12_tasks(n, 65536) for n in (128, 2048, 131072)] == [512, 32, 1]
    for bad, match in (((0, 16), "n must be"), ((8, 0), "n_points must be"), ((8, 16, 0), "n_min_tasks must be")):
        with pytest.raises(ValueError, match=match):
            fig6.fig12_tasks(*bad)
