"""Unit tests of lloydbook.families: the families chapter's tasks, transfer grid, statistics and figures."""

import math
from types import SimpleNamespace

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

from lloydbook import families as fam
from lloydlib import losses
from lloydlib.generalisation.multistep import lloyd_objectives, model_objectives
from lloydlib.training import TrainConfig
from lloydlib.training.config import build_model

FAMS = ["normal", "cauchy"]


@pytest.fixture(autouse=True)
def close_figures():
    plt.close("all")
    yield
    plt.close("all")


def test_family_tasks_are_in_block_order_with_one_seed_per_family():
    X, C0, labels = fam.family_tasks(3, 8, 2, 3, FAMS, seed=5)
    assert X.shape == (6, 8, 2) and C0.shape == (6, 3, 2) and X.dtype == torch.float64
    assert labels == ["normal"] * 3 + ["cauchy"] * 3
    X2, _, _ = fam.family_tasks(3, 8, 2, 3, ["cauchy"], seed=6)
    torch.testing.assert_close(X[3:], X2)


def test_emd_draws_differ_between_draws():
    draws = fam.emd_draws(2, 2, 8, 2, 3, FAMS, seed=1)
    assert len(draws) == 2 and draws[0][0].shape == (4, 4)
    assert not np.allclose(draws[0][0], draws[1][0])


def test_isolated_fraction_and_block_row():
    labels = ["a", "a", "b", "b"]
    M = np.array([[0, 1, 5, 5], [1, 0, 0.5, 5], [5, 0.5, 0, 1], [5, 5, 1, 0]], dtype=float)
    # task 0: own 1 < 5; task 1: own 1 > median(0.5, 5) = 2.75? no: 1 < 2.75, so isolated
    assert fam.isolated_fraction(M, labels, "a") == 1.0
    M[1, 2] = M[2, 1] = 0.1
    M[1, 3] = M[3, 1] = 0.2
    assert fam.isolated_fraction(M, labels, "a") == 0.5
    row = fam.block_row(M, labels, "a")
    assert row["a"] == 1.0 and row["b"] == pytest.approx((5 + 5 + 0.1 + 0.2) / 4)


def runs_for(embedding="BN", diverged=False, seeds=2):
    cfg = TrainConfig(d=2, k=3, n=8, embedding=embedding)
    out = []
    for s in range(seeds):
        torch.manual_seed(s)
        out.append(SimpleNamespace(model=build_model(cfg), status="diverged" if diverged else "done"))
    return out


def test_transfer_one_step_is_eq20_and_diverged_runs_are_inf():
    tasks = fam.test_tasks(4, 8, 2, 3, FAMS, seed=3)
    runs = {"normal": runs_for(), "cauchy": runs_for(diverged=True)}
    one, many, _ = fam.transfer(runs, tasks, steps=3)
    assert set(one) == {(a, b) for a in FAMS for b in FAMS}
    assert one[("normal", "cauchy")].shape == (2,)
    X, C0 = tasks["cauchy"]
    with torch.no_grad():
        want = float(losses.relative_loss(X, C0, runs["normal"][0].model.eval()(X, C0)))
    assert one[("normal", "cauchy")][0] == pytest.approx(want, rel=1e-5)
    assert np.isinf(one[("cauchy", "normal")]).all() and np.isinf(many[("cauchy", "cauchy")]).all()
    assert np.isfinite(many[("normal", "normal")]).all()


def test_cell_medians():
    values = {("a", "a"): np.array([1.0, 2.0, 3.0]), ("a", "b"): np.array([4.0, 4.0, math.inf])}
    values[("b", "b")] = np.array([2.0, 2.0, 2.0])
    values[("b", "a")] = np.array([math.inf] * 3)
    G = fam.cell_medians(values, ["a", "b"], ["a", "b"])
    np.testing.assert_array_equal(G, [[2.0, 4.0], [math.inf, 2.0]])


def toy_values(scale_by_emd, emd, fams, seeds=6, noise=0.0, seed=0):
    rng = np.random.default_rng(seed)
    values = {}
    for i, a in enumerate(fams):
        for j, b in enumerate(fams):
            base = 1.0 + (scale_by_emd * emd[i, j] if i != j else 0.0)
            values[(a, b)] = base * np.exp(noise * rng.standard_normal(seeds))
    return values


def test_transfer_correlation_finds_a_monotone_relation_and_its_absence():
    fams = ["a", "b", "c", "d"]
    emd = np.array([[0, 1, 2, 3], [1, 0, 4, 5], [2, 4, 0, 6], [3, 5, 6, 0]], dtype=float)
    values = toy_values(1.0, emd, fams, noise=0.01)
    res = fam.transfer_correlation(values, [emd, emd + 0.01], fams, resamples=200, seed=0)
    assert res["rho"] > 0.95 and res["low"] > 0.8  # pairs (a, b) and (b, a) tie in EMD
    assert res["emd"].shape == (12,) and res["pairs"] == 12 and res["low"] <= res["rho"] <= res["high"]
    deg = math.log(np.median(values[("a", "b")]) / np.median(values[("b", "b")]))
    assert res["deg"][0] == pytest.approx(deg)  # the first pair, (a, b)
    flat = toy_values(0.0, emd, fams, noise=0.3, seed=1)
    res0 = fam.transfer_correlation(flat, [emd], fams, resamples=200, seed=0)
    assert res0["low"] < 0 < res0["high"]


def test_transfer_correlation_leaves_out_the_pairs_without_a_finite_degradation():
    fams = ["a", "b", "c"]
    values = {(a, b): np.full(4, 1.0 + fams.index(a) + 2 * fams.index(b)) for a in fams for b in fams}
    values[("a", "b")] = np.full(4, math.inf)  # (a, b) infinite
    values[("c", "c")] = np.full(4, math.inf)  # every (x, c) without its in-family reference
    res = fam.transfer_correlation(values, [np.arange(9.0).reshape(3, 3)], fams, resamples=10, seed=0)
    assert res["pairs"] == 3  # (b, a), (c, a), (c, b)


def test_figures_draw_one_panel_per_setting():
    fams = ["normal", "cauchy"]
    vals = {
        (f, t, e, l): np.array([0.9, 1.0, math.inf])
        for f in fams
        for t in (1.0, 0.1)
        for e in ("OH", "BN")
        for l in ("NE", "L2")
    }
    fam.same_family_figure(vals, fams, [1.0, 0.1], ["OH", "BN"], ["NE", "L2"])
    assert len(plt.gcf().axes) == 2
    plt.close("all")
    fam.grid_figure({"OH": np.array([[0.9, 1.2], [math.inf, 1.0]]), "BN": np.ones((2, 2))}, fams, "grid")
    assert len(plt.gcf().axes) == 3  # two heatmaps and a shared colour bar
    plt.close("all")
    M = np.random.default_rng(0).random((4, 4))
    fam.emd_figure({"x": (M, ["normal"] * 2 + ["cauchy"] * 2)}, fams)
    assert len(plt.gcf().axes) == 2
    plt.close("all")
    X, C0, _ = fam.family_tasks(1, 16, 2, 3, fams, seed=0)
    fam.squeeze_figure({f: (X[i : i + 1], C0[i : i + 1]) for i, f in enumerate(fams)}, {f: np.ones(5) for f in fams})
    assert len(plt.gcf().axes) == 4


def test_squeeze_ratio_is_below_one_and_shrinks_with_n():
    small = fam.squeeze_ratio(16, 32, 2, 3, seed=4)
    large = fam.squeeze_ratio(16, 512, 2, 3, seed=4)
    assert 0 < large < small < 1  # cauchy tasks are squeezed, more so at larger n
    X, _, _ = fam.family_tasks(16, 32, 2, 3, ["normal", "cauchy"], seed=4)
    width = (X.quantile(0.75, dim=1) - X.quantile(0.25, dim=1)).mean(-1)
    assert small == pytest.approx(float(width[16:].median() / width[:16].median()))


def test_squeeze_numbers_and_table():
    squeeze = {32: 0.3, 128: 0.1, 512: 0.03}
    on_cauchy = {(e, n): np.array([0.7, 0.8, 0.9]) + (e == "BN") * 0.1 for e in ("OH", "BN") for n in squeeze}
    numbers = fam.squeeze_numbers(squeeze, 0.02, on_cauchy, "OH")
    assert numbers == {"sq-small": 0.3, "sq-large": 0.03, "sq-paper": 0.02, "sq-on-cauchy": pytest.approx(0.8)} | {
        "e0": "OH",
        "nlo": 32,
        "nhi": 512,
    }
    table = fam.squeeze_table(squeeze, on_cauchy, ["OH", "BN"], (512, 32), 0.02)
    assert len(table.header) == 4 and len(table.rows) == 4
    assert table.rows[0][:3] == ["32", "0.300", "0.800 [0.750, 0.850]"]
    assert table.rows[-1][:2] == ["512 (d=32, the paper's task size)", "0.020"]


def same_family_values(fams=("normal", "cauchy", "gumbel"), taus=(1.0, 0.1)):
    V = {}
    for i, f in enumerate(fams):
        for t in taus:
            for e in ("OH", "BN"):
                for j, l in enumerate(("NE", "L2")):
                    V[(f, t, e, l)] = np.array([1.0, 2.0, 3.0]) * (1 + i) * (1 + j) * (2 if t == 1.0 else 1)
    V[("cauchy", 0.1, "BN", "L2")] = np.array([1.0, math.inf, 5.0])
    return V


def test_same_family_numbers_are_medians_without_the_chapter_prefix():
    V = same_family_values()
    numbers = fam.same_family_numbers(V, ["OH", "BN"], ["NE", "L2"], ["normal", "gumbel"], 1.0, 0.1)
    assert not any(name.startswith("fam") for name in numbers)
    assert numbers["cauchy-oh-l2"] == 8.0 and numbers["cauchy-t1-min"] == 8.0 and numbers["cauchy-plateau"] == 3
    assert numbers["t1-l2-min"] == 8.0 and numbers["t1-ne-min"] == 4.0
    assert numbers["oh-t01-max"] == 12.0 and numbers["bn-t01-min"] == 2.0 and numbers["nseeds"] == 3


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # numpy's quantiles of +inf (a diverged run)
def test_same_family_table_counts_the_diverged_runs():
    V = same_family_values()
    table = fam.same_family_table(V, ["normal", "cauchy", "gumbel"], [1.0, 0.1], ["OH", "BN"], ["NE", "L2"])
    assert table.header == ["family", "tau", "OH:NE", "OH:L2", "BN:NE", "BN:L2"] and len(table.rows) == 6
    assert table.rows[0][:3] == ["normal", "1", "4.000 [3.000, 5.000]"]
    assert table.rows[3][-1].endswith(", 1 diverged") and "diverged" not in table.rows[3][-2]


def test_transfer_numbers_are_medians_of_the_cells_and_block_means():
    fams = ["normal", "cauchy", "gumbel"]
    others = ["normal", "gumbel"]
    many = {
        e: {
            (a, b): np.full(3, 1.0 + 0.1 * i + 0.01 * j + (e == "BN"))
            for i, a in enumerate(fams)
            for j, b in enumerate(fams)
        }
        for e in ("OH", "BN")
    }
    block = {e: np.array([0.9, 1.0, 1.1]) + (e == "BN") for e in ("OH", "BN")}
    numbers = fam.transfer_numbers(many, ["OH", "BN"], others, block)
    assert numbers["tr-cauchy-min"] == pytest.approx(1.1) and numbers["tr-cc"] == pytest.approx(1.11)
    assert numbers["tr-to-cauchy-max"] == pytest.approx(1.21) and numbers["tr-block-min"] == pytest.approx(1.0)
    assert numbers["tr-block-max"] == pytest.approx(2.22) and numbers["tr-block-oh"] == pytest.approx(1.0)
    assert numbers["tr-block-bn"] == pytest.approx(2.0)


def test_transfer_growth_is_the_models_own_change_in_log_objective():
    tasks = fam.test_tasks(4, 8, 2, 3, FAMS, seed=3)
    runs = {"normal": runs_for(), "cauchy": runs_for(diverged=True)}
    one, many, grow = fam.transfer(runs, tasks, steps=3)
    assert set(grow) == set(many) == set(one)
    X, C0 = tasks["cauchy"]
    obj = model_objectives(runs["normal"][1].model, X, C0, 3)
    assert grow[("normal", "cauchy")][1] == pytest.approx(float(torch.log(obj[:, 3] / obj[:, 0]).mean()))
    assert np.isinf(grow[("cauchy", "normal")]).all()


def test_transfer_with_precomputed_baselines_is_the_same_and_checks_them():
    tasks = fam.test_tasks(4, 8, 2, 3, FAMS, seed=3)
    runs = {"normal": runs_for(), "cauchy": runs_for(diverged=True)}
    lloyd = fam.lloyd_baselines(tasks, 3)
    assert all(torch.equal(lloyd[f], lloyd_objectives(*tasks[f], 3)) for f in FAMS)
    plain, shared = fam.transfer(runs, tasks, 3), fam.transfer(runs, tasks, 3, lloyd=lloyd)
    for a, b in zip(plain, shared):
        assert a.keys() == b.keys() and all(np.array_equal(a[c], b[c]) for c in a)
    one, many, _ = shared
    X, C0 = tasks["normal"]
    obj = model_objectives(runs["normal"][0].model, X, C0, 3)
    assert one[("normal", "normal")][0] == float((obj[:, 1] / lloyd["normal"][:, 1]).mean())
    assert many[("normal", "normal")][0] == float((obj[:, 3] / lloyd["normal"][:, 3]).mean())
    with pytest.raises(ValueError, match="lloyd must hold"):
        fam.transfer(runs, tasks, 3, lloyd={"normal": lloyd["normal"]})
    with pytest.raises(ValueError, match="lloyd must hold"):
        fam.transfer(runs, tasks, 2, lloyd=lloyd)


def test_bound_terms_read_the_histories_and_the_largest_smoothing_gap():
    cfg = TrainConfig(d=2, k=3, n=8, tau=0.5, loss="L2")
    X, C0 = fam.test_tasks(4, 8, 2, 3, ["normal"], seed=3)["normal"]
    runs = []
    for s, status in enumerate(("done", "done", "diverged")):
        torch.manual_seed(s)
        history = {"val_loss": np.array([9.0, 2.0 + s]), "train_loss": np.array([9.0, 2.5 + 2 * s])}
        runs.append(SimpleNamespace(model=build_model(cfg), status=status, config=cfg, history=history))
    with torch.no_grad():
        runs[2].model.V.fill_(math.nan)
    with np.errstate(invalid="ignore"):  # the diverged run's slack: inf - inf
        terms = fam.bound_terms(runs, X, C0)
    assert terms["slack"][:2] == pytest.approx([0.5, 1.5]) and terms["loss"][:2] == pytest.approx([2.0, 3.0])
    assert math.isinf(terms["loss"][2]) and math.isinf(terms["gap"][2])
    with torch.no_grad():
        expected = float(losses.smoothing_gap(X, runs[0].model(X, C0), 0.5, "L2").max())
    assert terms["gap"][0] == pytest.approx(expected) and (terms["gap"][:2] >= 0).all()
