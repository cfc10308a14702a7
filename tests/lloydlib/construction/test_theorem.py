"""Tests of lloydlib.construction.theorem: Theorem B.1 of the Leaner paper by computation. The exact OH/BN/SC
transformers equal Lloyd's algorithm and scikit-learn; bad input raises errors naming the argument."""

import math

import numpy as np
import pytest
import torch
from _support import assert_raises_naming
from hypothesis import given
from hypothesis import strategies as st
from sklearn.cluster import KMeans

import lloydlib as L
from lloydlib.construction import (
    param_count,
)

TOL = 1e-10
STEPS = 10


def _sklearn_step(X: np.ndarray, C: np.ndarray) -> np.ndarray:
    km = KMeans(n_clusters=C.shape[0], init=C, n_init=1, max_iter=1, algorithm="lloyd", tol=0.0)
    return km.fit(X).cluster_centers_


def _no_empty(rep) -> torch.Tensor:
    return ~rep["empty"].any(-1).any(-1) & (rep["ties"].sum(-1) == 0)


@pytest.mark.parametrize("embedding", ["OH", "BN", "SC"])
@given(
    n=st.integers(2, 60),
    d=st.integers(1, 6),
    k=st.integers(2, 13),
    seed=st.integers(0, 10_000),
    family=st.sampled_from(L.FAMILIES),
)
def test_exact_transformer_equals_lloyd_for_ten_steps(embedding, n, d, k, seed, family):
    k = min(k, n)
    X, C = L.sample_tasks(3, n, d, k, family=family, seed=seed, dtype=torch.float64)
    T = L.exact_transformer(d, k, embedding)
    C_trf, traj, rep = T.run(X, C, STEPS, return_trajectory=True, return_report=True, warn=False)
    _, _, empty = L.lloyd(X, C, STEPS, return_empty=True)
    ok = _no_empty(rep) & ~empty.any(-1).any(-1)
    C_ref = C.clone()
    for t in range(1, STEPS + 1):
        C_ref = L.lloyd_step(X, C_ref)
        err = (traj[:, t] - C_ref).abs().amax(dim=(1, 2))
        assert bool((err[ok] <= TOL).all()), f"step {t}: max error {err[ok].max():.3e}"


@pytest.mark.parametrize("embedding", ["OH", "BN"])
@pytest.mark.parametrize("n,d,k", [(40, 1, 2), (50, 2, 3), (64, 5, 6), (80, 3, 7), (120, 8, 13), (30, 4, 16)])
def test_one_layer_equals_sklearn_lloyd(embedding, n, d, k):
    X, C = L.sample_tasks(6, n, d, k, seed=n * d * k, dtype=torch.float64)
    T = L.exact_transformer(d, k, embedding)
    C1, rep = T.run(X, C, 1, return_report=True, warn=False)
    checked = 0
    for b in range(X.shape[0]):
        if not bool(_no_empty(rep)[b]):
            continue
        ref = _sklearn_step(X[b].numpy(), C[b].numpy())
        np.testing.assert_allclose(C1[b].numpy(), ref, atol=TOL, rtol=0)
        checked += 1
    assert checked >= 3, "too few tasks without empty clusters to be a meaningful check"


def test_finite_gamma_error_falls_as_gamma_grows():
    X, C = L.sample_tasks(8, 100, 3, 5, seed=3, dtype=torch.float64)
    ref = L.lloyd_step(X, C)
    errors = []
    for gamma in [1e1, 1e2, 1e3, 1e4, 1e5]:
        errors.append(float((L.exact_transformer(3, 5, "BN", gamma)(X, C) - ref).abs().max()))
    assert all(a > b for a, b in zip(errors, errors[1:])), errors
    assert errors[-1] < 1e-6


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_huge_finite_gamma_is_finite_and_exact(dtype):
    X, C = L.sample_tasks(4, 60, 3, 6, seed=5, dtype=dtype)
    out = L.exact_transformer(3, 6, "BN", 1e12, dtype=dtype)(X, C)
    assert bool(torch.isfinite(out).all())
    _, empty = L.lloyd_step(X, C, return_empty=True)
    ok = ~empty.any(-1)
    tol = 1e-5 if dtype == torch.float32 else 1e-12
    assert float((out - L.lloyd_step(X, C)).abs().amax(dim=(1, 2))[ok].max()) < tol


def test_duplicate_points_are_reported_and_harmless():
    X, C = L.sample_tasks(2, 40, 2, 4, seed=11, dtype=torch.float64)
    X = torch.cat([X, X[:, :10]], dim=1)  # ten exact duplicates per task
    T = L.exact_transformer(2, 4, "BN")
    with pytest.warns(L.AssumptionWarning, match="duplicate"):
        C5, rep = T.run(X, C, 5, return_report=True)
    assert rep["duplicates"].tolist() == [10, 10]
    assert float((C5 - L.lloyd(X, C, 5)[0]).abs().max()) <= TOL


def test_tie_is_reported_and_point_is_left_out_of_the_means():
    X = torch.tensor([[[0.0], [1.0], [0.5], [0.1], [0.9]]], dtype=torch.float64)
    C = torch.tensor([[[0.0], [1.0]]], dtype=torch.float64)  # x = 0.5 is equidistant from both
    T = L.exact_transformer(1, 2, "OH")
    with pytest.warns(L.AssumptionWarning, match="tied"):
        C1, rep = T.run(X, C, 1, return_report=True)
    assert rep["ties"].tolist() == [[1]]
    expected = torch.tensor([[[0.05], [0.95]]], dtype=torch.float64)  # 0.5 dropped from both means
    assert torch.allclose(C1, expected, atol=1e-12)
    assert torch.allclose(L.lloyd_step(X, C), torch.tensor([[[0.2], [0.95]]], dtype=torch.float64))


def test_empty_cluster_is_reported():
    X = torch.tensor([[[0.0], [0.1], [0.2], [1.0]]], dtype=torch.float64)
    C = torch.tensor([[[0.0], [0.05], [5.0]]], dtype=torch.float64)  # center 3 attracts no point
    T = L.exact_transformer(1, 3, "BN")
    with pytest.warns(L.AssumptionWarning, match="empty"):
        _, rep = T.run(X, C, 1, return_report=True)
    assert rep["empty"][0, 0].tolist() == [False, False, True]
    _, empty = L.lloyd_step(X, C, return_empty=True)
    assert empty.tolist() == [[False, False, True]]


def test_soft_kmeans_transformer_equals_soft_kmeans_step():
    X, C = L.sample_tasks(3, 50, 2, 4, seed=2, dtype=torch.float64)
    for beta in [0.5, 5.0, 50.0]:
        out = L.soft_kmeans_transformer(2, 4, beta)(X, C)
        assert float((out - L.soft_kmeans_step(X, C, beta)).abs().max()) < 1e-12


def test_linear_center_update_with_hardmax_is_lloyd():
    X, C = L.sample_tasks(4, 60, 3, 5, seed=8, dtype=torch.float64)
    _, empty = L.lloyd_step(X, C, return_empty=True)
    ok = ~empty.any(-1)
    out = L.exact_transformer(3, 5, "OH", center_update="linear")(X, C)
    assert float((out - L.lloyd_step(X, C)).abs().amax(dim=(1, 2))[ok].max()) < TOL


def test_weights_are_the_theorems():
    Q, K, V = L.theorem_weights(3, 6, "BN")
    assert Q.shape == K.shape == V.shape == (4, 6, 6)
    Px = torch.diag(torch.tensor([1.0, 1, 1, 0, 0, 0], dtype=torch.float64))
    Py = torch.eye(6, dtype=torch.float64) - Px
    for mu, (q, v) in enumerate([(Px, Py), (Px, -Py), (Py, Px), (Py, -Px)]):
        assert torch.equal(Q[mu], q) and torch.equal(K[mu], q) and torch.equal(V[mu], v)
    assert L.exact_transformer(32, 1000, "BN").d_emb == 42
    assert L.exact_transformer(32, 1000, "OH").d_emb == 1032
    assert math.isinf(L.exact_transformer(2, 3).gammas[0])


def exactness_sweep(embedding: str, tasks_per_shape: int = 4):
    """Max |transformer - Lloyd| over 10 steps on many random (n, d, k); returns (tasks covered, max error)."""
    covered, worst = 0, 0.0
    shapes = [(n, d, k) for n in (20, 64, 150) for d in (1, 2, 5, 8) for k in (2, 3, 5, 6, 7, 10, 13)]
    for i, (n, d, k) in enumerate(shapes):
        X, C = L.sample_tasks(tasks_per_shape, n, d, k, seed=1000 + i, dtype=torch.float64)
        C_trf, rep = L.exact_transformer(d, k, embedding).run(X, C, STEPS, return_report=True, warn=False)
        C_ref, _, empty = L.lloyd(X, C, STEPS, return_empty=True)
        ok = _no_empty(rep) & ~empty.any(-1).any(-1)
        if bool(ok.any()):
            worst = max(worst, float((C_trf - C_ref).abs().amax(dim=(1, 2))[ok].max()))
        covered += int(ok.sum())
    return covered, worst


@pytest.mark.parametrize("embedding", ["OH", "BN"])
def test_exactness_sweep_covers_many_tasks(embedding):
    covered, worst = exactness_sweep(embedding)
    assert covered >= 150, f"only {covered} tasks without empty clusters"
    assert worst <= TOL, f"max error {worst:.3e} over {covered} tasks"


# ----------------------------------------------------------------------------- bad input
X = torch.rand(2, 10, 3)
C = torch.rand(2, 4, 3)

BAD_CALLS = [
    # (callable, exception, words that must appear in the message)
    (lambda: L.exact_transformer(3, 4, "NA"), ValueError, ["embedding", "NA"]),
    (lambda: L.exact_transformer(3, 1, "BN"), ValueError, ["k", ">= 2"]),
    (lambda: L.exact_transformer(3, 4, "BN", center_update="linear"), ValueError, ["center_update", "OH"]),
    (lambda: L.exact_transformer(3, 4, "BN", gamma=(1.0, 2.0)), ValueError, ["gamma", "4"]),
    (lambda: L.exact_transformer(3, 4, "BN", gamma=0), ValueError, ["gamma", "> 0"]),
    (lambda: L.exact_transformer(3, 4)(X, torch.rand(2, 5, 3)), ValueError, ["C", "k=4", "k=5"]),
    (lambda: L.exact_transformer(2, 4)(X, C), ValueError, ["X", "d=2", "d=3"]),
    (lambda: L.exact_transformer(3, 4).run(X, C, -2), ValueError, ["steps"]),
    (lambda: param_count(4, 4, "BN", construction="other"), ValueError, ["construction", "other"]),
]


@pytest.mark.parametrize("call,exc,words", BAD_CALLS, ids=[f"bad{i}" for i in range(len(BAD_CALLS))])
def test_bad_input_raises_clear_error(call, exc, words):
    assert_raises_naming(call, exc, words)


def test_infinite_gamma_is_accepted_but_not_nan():
    assert L.exact_transformer(3, 4, gamma=math.inf).gammas == (math.inf,) * 4
