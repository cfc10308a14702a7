"""Tests of lloydlib.lloyd: Lloyd's algorithm (Alg. 2 of the Leaner paper), its empty-cluster policies,
scikit-learn agreement, soft k-means and the assignment gaps; bad input raises errors naming the argument."""

import numpy as np
import pytest
import torch
from _support import assert_raises_naming
from hypothesis import given
from hypothesis import strategies as st
from sklearn.cluster import KMeans

import lloydlib as L
from lloydlib.lloyd import assignment_gaps

TOL = 1e-10


def _sklearn_step(X: np.ndarray, C: np.ndarray) -> np.ndarray:
    km = KMeans(n_clusters=C.shape[0], init=C, n_init=1, max_iter=1, algorithm="lloyd", tol=0.0)
    return km.fit(X).cluster_centers_


@given(seed=st.integers(0, 1000), k=st.integers(1, 8))
def test_lloyd_objective_is_monotone(seed, k):
    X, C = L.sample_tasks(4, 40, 3, k, seed=seed, dtype=torch.float64)
    _, obj = L.lloyd(X, C, 8)
    assert obj.shape == (4, 9)
    assert bool((obj[:, 1:] <= obj[:, :-1] + 1e-12).all())


def test_ties_go_to_lowest_index():
    X = torch.tensor([[[0.5], [0.9]]], dtype=torch.float64)
    C = torch.tensor([[[0.0], [1.0]]], dtype=torch.float64)
    assert L.assign(X, C).tolist() == [[0, 1]]


def test_empty_cluster_policies():
    X = torch.tensor([[[0.0], [0.2], [1.0]]], dtype=torch.float64)
    C = torch.tensor([[[0.0], [1.0], [9.0]]], dtype=torch.float64)
    kept, empty = L.lloyd_step(X, C, return_empty=True)
    assert empty.tolist() == [[False, False, True]]
    assert kept[0, 2, 0] == 9.0
    reseeded = L.lloyd_step(X, C, empty="reseed", seed=0)
    assert float(reseeded[0, 2, 0]) in (0.0, 0.2, 1.0)
    assert torch.equal(reseeded, L.lloyd_step(X, C, empty="reseed", seed=0))
    _, _, e = L.lloyd(X, C, 3, return_empty=True)
    assert e.shape == (1, 3, 3) and bool(e[0, 0, 2])


def test_objective_value():
    X = torch.tensor([[[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]]])
    C = torch.tensor([[[0.0, 0.0]]])
    assert L.kmeans_objective(X, C).tolist() == [5.0]


def test_lloyd_matches_sklearn_on_many_tasks():
    rng_tasks = 0
    for seed in range(40):
        n, d, k = 30 + seed, 1 + seed % 5, 2 + seed % 9
        X, C = L.sample_tasks(1, n, d, k, seed=seed, dtype=torch.float64)
        C1, empty = L.lloyd_step(X, C, return_empty=True)
        if bool(empty.any()):
            continue
        np.testing.assert_allclose(C1[0].numpy(), _sklearn_step(X[0].numpy(), C[0].numpy()), atol=TOL, rtol=0)
        rng_tasks += 1
    assert rng_tasks >= 25


def test_assignment_gaps_brute_force():
    X, C = L.sample_tasks(3, 20, 2, 4, seed=2, dtype=torch.float64)
    g = assignment_gaps(X, C)
    D = ((X[:, :, None] - C[:, None]) ** 2).sum(-1).sort(-1).values
    assert g.shape == (3, 20) and torch.allclose(g, D[..., 1] - D[..., 0]) and float(g.min()) >= 0


# ----------------------------------------------------------------------------- bad input
X = torch.rand(2, 10, 3)
C = torch.rand(2, 4, 3)


def nan_points():
    Y = X.clone()
    Y[0, 0, 0] = float("nan")
    return Y


def inf_centers():
    Y = C.clone()
    Y[1, 0, 2] = float("inf")
    return Y


BAD_CALLS = [
    # (callable, exception, words that must appear in the message)
    (lambda: L.lloyd_step(X[0], C), ValueError, ["X", "3 dimensions", "(10, 3)"]),
    (lambda: L.lloyd_step(X, C[:1]), ValueError, ["C", "batch"]),
    (lambda: L.lloyd_step(X, torch.rand(2, 4, 2)), ValueError, ["C", "d=2", "d=3"]),
    (lambda: L.lloyd_step(X, torch.rand(2, 11, 3)), ValueError, ["k=11", "n=10"]),
    (lambda: L.lloyd_step(X, torch.rand(2, 0, 3)), ValueError, ["C", "k >= 1", "k=0"]),
    (lambda: L.lloyd_step(nan_points(), C), ValueError, ["X", "finite", "NaN"]),
    (lambda: L.lloyd_step(X, inf_centers()), ValueError, ["C", "finite"]),
    (lambda: L.lloyd_step(X.long(), C), TypeError, ["X", "floating-point", "int64"]),
    (lambda: L.lloyd_step(X, C.double()), TypeError, ["dtype", "float64"]),
    (lambda: L.lloyd_step(X, C, empty="drop"), ValueError, ["empty", "drop", "keep"]),
    (lambda: L.lloyd(X, C, -1), ValueError, ["steps", ">= 0"]),
    (lambda: L.lloyd(X, C, 2.0), TypeError, ["steps", "integer"]),
    (lambda: L.kmeans_objective([[0.0]], C), TypeError, ["X", "torch.Tensor", "list"]),
    (lambda: L.assign(X, C.numpy()), TypeError, ["C", "torch.Tensor", "ndarray"]),
    (lambda: L.soft_kmeans_step(X, C, 0.0), ValueError, ["beta", "> 0", "0.0"]),
    (lambda: assignment_gaps(torch.rand(1, 5, 2), torch.rand(1, 1, 2)), ValueError, ["k >= 2"]),
    (lambda: assignment_gaps(torch.rand(5, 2), torch.rand(1, 2, 2)), ValueError, ["X", "3 dimensions"]),
]


@pytest.mark.parametrize("call,exc,words", BAD_CALLS, ids=[f"bad{i}" for i in range(len(BAD_CALLS))])
def test_bad_input_raises_clear_error(call, exc, words):
    assert_raises_naming(call, exc, words)
