"""Tests of lloydbook.construction: exactness bookkeeping, finite-temperature errors, the failing
assumptions, the float32 limit of the scalar code, and the figures."""

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

import lloydlib as L  # noqa: E402
from lloydbook import construction as lc  # noqa: E402
from lloydlib.embeddings import code_margin  # noqa: E402
from lloydlib.lloyd import assignment_gaps  # noqa: E402


@pytest.fixture
def task():
    return L.sample_tasks(2, 30, 2, 4, seed=3, dtype=torch.float64)


def test_lloyd_trajectory_shape_and_ends(task):
    X, C = task
    traj = lc.lloyd_trajectory(X, C, 4)
    assert traj.shape == (2, 5, 4, 2)
    assert torch.equal(traj[:, 0], C)
    assert torch.allclose(traj[:, -1], L.lloyd(X, C, 4)[0])


def test_exactness_counts_and_is_exact():
    worst, checked, total = lc.exactness(("OH", "BN"), [(2, 3), (3, 5)], 3, 20, 3, seed0=7)
    assert total == 6
    assert set(worst) == set(checked) == {"OH", "BN"}
    for emb in ("OH", "BN"):
        assert 0 <= checked[emb] <= total and worst[emb] <= 1e-10


def test_code_head_errors_decrease(task):
    X, C = task
    ref = L.lloyd_step(X, C)
    ts = np.array([2.0, 10.0, 40.0])
    err = lc.code_head_errors(X, C, ref, "BN", ts)
    assert err.shape == (3,) and err[0] > err[1] > err[2] and err[2] <= 1e-12


def test_exponential_fit_recovers_slope_and_crossing():
    ts = np.arange(1.0, 20.0)
    slope, t_star = lc.exponential_fit(ts, np.exp(-ts))
    assert slope == pytest.approx(-1.0, abs=1e-9)
    assert t_star == pytest.approx(math.log(1e8), abs=1e-9)
    with pytest.raises(ValueError, match="too few points"):
        lc.exponential_fit([1.0, 2.0, 3.0], [1.0, 1e-20, 1e-21])


def test_assignment_head_errors_shapes(task):
    X, C = task
    ref = L.lloyd_step(X, C)
    gap_min = assignment_gaps(X, C).amin(1)
    xs, ys = lc.assignment_head_errors(X, C, ref, "BN", [1.0, 1e6], gap_min)
    assert xs.shape == ys.shape == (4,)
    assert np.allclose(xs[2:], 1e6 * xs[:2])
    assert ys[2:].max() < ys[:2].max()


def test_one_d_and_run_case():
    X = lc.one_d([0.0, 0.1, 0.2, 0.3])
    assert X.shape == (1, 4, 1) and X.dtype == torch.float64
    trf, ll, rep, caught = lc.run_case(X, lc.one_d([0.1, 0.9]))
    assert ll == pytest.approx([0.15, 0.9]) and trf[0] == pytest.approx(0.15)
    assert bool(rep["empty"].any())
    assert any(m.startswith("AssumptionWarning: ") for m in caught)


def test_largest_intact_k_is_the_float32_limit():
    def margin(k):
        return code_margin(k, "SC", dtype=torch.float32, formula="expanded")

    lo_k = lc.largest_intact_k([4, 64, 4096])
    assert margin(lo_k) == 1.0 and margin(lo_k + 1) != 1.0
    assert math.floor(1 + 2**11.5) <= lo_k < 4096


def test_figures_return_their_figure(task):
    X, C = task
    Q, K, V = L.theorem_weights(2, 4, "BN")
    traj = lc.lloyd_trajectory(X, C, 2)
    fg = {(2, 4, e): {"err": np.array([1e-2, 1e-4]), "slope": -1.0, "D": 4, "mu": 1.0} for e in ("OH", "BN", "SC")}
    margins = {(f, e): [(4, 1.0), (16, 1.0)] for f in ("float32", "float16") for e in ("OH", "BN", "SC")}
    figs = [
        (lc.plot_tokens(X[:1], C[:1]), 6),
        (lc.plot_weights(Q, K, V, "t"), 12),
        (lc.plot_center_paths(X[0], traj[0], traj[0], "t"), 1),
        (lc.plot_param_reduction((4, 32)), 1),
        (lc.plot_code_head_errors(fg, [1.0, 2.0], [(2, 4)]), 1),
        (lc.plot_assignment_errors({"BN": (np.array([1.0, 2.0]), np.array([1e-3, 0.0]))}, "t"), 1),
        (lc.plot_code_margins(margins, {"float32": 2897, "float16": 32}), 2),
        (lc.plot_soft_curves([1.0, 10.0], {"a": [1e-3, 1e-6]}), 1),
    ]
    for fig, panels in figs:
        assert len(fig.axes) == panels
        plt.close(fig)


def test_gamma_table_has_one_row_per_shape():
    fg = {
        (d, k, e): {"gamma_star": g} for d, k in ((4, 10), (4, 100)) for e, g in zip(("OH", "BN", "SC"), (40, 58, 46))
    }
    table = lc.gamma_table(fg, [(4, 10, 1.45, 1.51), (4, 100, 0.594, 0.65)])
    assert len(table.header) == 7 and table.header[:2] == ["d", "k"]
    assert table.rows == [
        ["4", "10", "40.0", "58.0", "46.0", "1.45", "1.51"],
        ["4", "100", "40.0", "58.0", "46.0", "0.59", "0.65"],
    ]
    assert "<table" in table._repr_html_()


def test_cases_table_counts_the_failed_assumptions():
    cases = {
        "empty": (lc.one_d([0.0, 0.1, 0.2, 0.3]), lc.one_d([0.1, 0.9])),
        "fine": (lc.one_d([0.0, 0.1, 0.9, 1.0]), lc.one_d([0.2, 0.8])),
    }
    table = lc.cases_table({name: lc.run_case(X, C) for name, (X, C) in cases.items()})
    assert table.header == ["task", "transformer", "Lloyd", "ties", "duplicates", "empty", "warning"]
    empty, fine = table.rows
    assert empty[:3] == ["empty", "0.15, 0.15", "0.15, 0.9"] and empty[5] == "1"
    assert empty[6] == "AssumptionWarning"
    assert fine == ["fine", "0.05, 0.95", "0.05, 0.95", "0", "0", "0", "none"]


def test_norms_table_formats_the_rows():
    table = lc.norms_table([(6, "SC", 9, 33.0, 33.0, 11.0), (1000, "BN", 18, 18.0, 17.0, 4.2426)], 8)
    assert table.header[0] == "k (d = 8)" and len(table.header) == 6
    assert table.rows == [["6", "SC", "9", "33", "33", "11"], ["1000", "BN", "18", "18", "17", "4.24"]]
