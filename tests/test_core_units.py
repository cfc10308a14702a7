"""Unit tests of tasks, Lloyd, embeddings and distance attention."""
import math

import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st

import lloydlib as L
from lloydlib.attention import attention_weights, distance_attention


# ----------------------------------------------------------------------------- tasks
@pytest.mark.parametrize("family", L.FAMILIES)
@pytest.mark.parametrize("init", L.INITS)
def test_sample_tasks_shapes_range_and_seed(family, init):
    X, C = L.sample_tasks(3, 50, 4, 6, family=family, init=init, seed=7)
    assert X.shape == (3, 50, 4) and C.shape == (3, 6, 4) and X.dtype == torch.float32
    assert float(X.min()) >= 0 and float(X.max()) <= 1
    assert torch.allclose(X.amin(1), torch.zeros(3, 4)) and torch.allclose(X.amax(1), torch.ones(3, 4))
    X2, C2 = L.sample_tasks(3, 50, 4, 6, family=family, init=init, seed=7)
    assert torch.equal(X, X2) and torch.equal(C, C2)
    # every initial center is one of the task's points
    assert bool(((C[:, :, None, :] == X[:, None, :, :]).all(-1).any(-1)).all())


def test_sample_tasks_same_on_every_dtype():
    X32, _ = L.sample_tasks(2, 20, 3, 4, seed=1)
    X64, _ = L.sample_tasks(2, 20, 3, 4, seed=1, dtype=torch.float64)
    assert torch.allclose(X32.double(), X64, atol=1e-7)


def test_random_init_is_first_k_points_and_gonzalez_is_farthest_first():
    X, C = L.sample_tasks(2, 30, 2, 5, seed=3)
    assert torch.equal(C, X[:, :5])
    G = L.init_centers(X, 3, "gonzalez")
    for b in range(2):
        d1 = ((X[b] - G[b, 0]) ** 2).sum(-1)
        assert torch.equal(G[b, 1], X[b, int(d1.argmax())])


def test_variants_and_labels():
    X, C, lab = L.sample_tasks(2, 400, 2, 4, isotropic=False, equal_weights=False, seed=0, return_labels=True)
    assert lab.shape == (2, 400) and int(lab.max()) < 4
    counts = torch.stack([torch.bincount(lab[b], minlength=4) for b in range(2)])
    assert int(counts.max() - counts.min()) > 20          # unequal weights show


def test_minmax_constant_dimension_becomes_zero():
    X = torch.tensor([[[1.0, 2.0], [1.0, 4.0]]])
    assert torch.equal(L.minmax_scale(X), torch.tensor([[[0.0, 0.0], [0.0, 1.0]]]))


# ----------------------------------------------------------------------------- lloyd
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


# ----------------------------------------------------------------------------- embeddings
def test_bn_codes_lsb_first_as_in_the_paper():
    B = L.cluster_codes(6, "BN")
    assert B.T.tolist() == [[0, 1, 0, 1, 0, 1], [0, 0, 1, 1, 0, 0], [0, 0, 0, 0, 1, 1]]


@pytest.mark.parametrize("k,expected", [(2, 1), (3, 2), (4, 2), (5, 3), (6, 3), (10, 4), (1000, 10), (1024, 10)])
def test_embedding_dims(k, expected):
    assert L.code_dim(k, "BN") == expected
    assert L.embedding_dim(32, k, "BN") == 32 + expected
    assert L.embedding_dim(32, k, "OH") == 32 + k
    assert L.embedding_dim(32, k, "NA") == 32
    assert L.embedding_dim(32, k, "SC") == 33


def test_token_builders():
    X, C = L.sample_tasks(2, 10, 3, 5, seed=0)
    Xb, Cb = L.embed_points(X, 5, "OH"), L.embed_centers(C, "OH")
    assert Xb.shape == (2, 10, 8) and Cb.shape == (2, 5, 8)
    assert bool((Xb[..., 3:] == 0).all()) and torch.equal(Cb[0, :, 3:], torch.eye(5))


# ----------------------------------------------------------------------------- attention
def test_hardmax_averages_ties():
    Z = torch.zeros(1, 1, 2, dtype=torch.float64)
    Zp = torch.tensor([[[1.0, 0.0], [0.0, 1.0], [2.0, 2.0]]], dtype=torch.float64)
    I = torch.eye(2, dtype=torch.float64)
    W = attention_weights(Z, Zp, I, I, math.inf)
    assert W.tolist() == [[[0.5, 0.5, 0.0]]]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("gamma", [1e3, 1e8, 1e12])
def test_large_gamma_never_overflows(dtype, gamma):
    Z = torch.rand(2, 7, 4, dtype=dtype) * 100
    Zp = torch.rand(2, 9, 4, dtype=dtype) * 100
    I = torch.eye(4, dtype=dtype)
    W = attention_weights(Z, Zp, I, I, gamma)
    assert bool(torch.isfinite(W).all())
    assert torch.allclose(W.sum(-1), torch.ones(2, 7, dtype=dtype))


def test_gradients_finite_at_distance_zero():
    Z = torch.rand(1, 3, 2, dtype=torch.float64, requires_grad=True)
    I = torch.eye(2, dtype=torch.float64)
    out = distance_attention(Z, Z, I, I, I, 1.0)       # every query sits at distance 0 from its own key
    out.sum().backward()
    assert bool(torch.isfinite(Z.grad).all())


def test_sparsemax_weighting_is_sparse_and_normalised():
    Z = torch.rand(1, 5, 3, dtype=torch.float64)
    Zp = torch.rand(1, 8, 3, dtype=torch.float64) * 4
    I = torch.eye(3, dtype=torch.float64)
    W = attention_weights(Z, Zp, I, I, 10.0, weighting="sparsemax")
    assert torch.allclose(W.sum(-1), torch.ones(1, 5, dtype=torch.float64))
    assert bool((W == 0).any()) and bool((W >= 0).all())


def test_attention_matches_equation_3_by_hand():
    torch.manual_seed(0)
    Z, Zp = torch.rand(1, 3, 4, dtype=torch.float64), torch.rand(1, 5, 4, dtype=torch.float64)
    Q, K, V = (torch.randn(4, 4, dtype=torch.float64) for _ in range(3))
    gamma = 0.7
    out = distance_attention(Z, Zp, Q, K, V, gamma)
    for i in range(3):
        s = torch.stack([-(gamma / 2.0) * ((Q @ Z[0, i] - K @ Zp[0, j]) ** 2).sum() for j in range(5)])
        expected = sum(w * (V @ Zp[0, j]) for j, w in enumerate(torch.softmax(s, 0)))
        assert torch.allclose(out[0, i], expected, atol=1e-12)


def test_expanded_distances_keep_exact_ties_within_tolerance():
    # large enough to use the ||a||^2 + ||b||^2 - 2ab expansion path
    X = torch.rand(4, 700, 8, dtype=torch.float64)
    X[:, 1] = X[:, 0]
    I = torch.eye(8, dtype=torch.float64)
    W = attention_weights(X, X, I, I, math.inf)
    assert torch.allclose(W[:, 0, :2], torch.full((4, 2), 0.5, dtype=torch.float64))
    assert torch.allclose(W[:, 5, 5], torch.ones(4, dtype=torch.float64))
