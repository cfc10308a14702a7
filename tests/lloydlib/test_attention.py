"""Tests of lloydlib.attention: distance attention A_2^gamma (Eq. 3 of the Leaner paper), its hardmax,
large-gamma and sparsemax cases; bad input raises errors naming the argument."""

import math

import pytest
import torch
from _support import assert_raises_naming

from lloydlib.attention import attention_weights, distance_attention
from lloydlib.distances import DIRECT_LIMIT


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
    out = distance_attention(Z, Z, I, I, I, 1.0)  # every query sits at distance 0 from its own key
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
    # large enough to use the ||a||^2 + ||b||^2 - 2ab expansion path of lloydlib.distances.sqdist
    X = torch.rand(4, 800, 8, dtype=torch.float64)
    assert 4 * 800 * 800 * 8 > DIRECT_LIMIT
    X[:, 1] = X[:, 0]
    I = torch.eye(8, dtype=torch.float64)
    W = attention_weights(X, X, I, I, math.inf)
    assert torch.allclose(W[:, 0, :2], torch.full((4, 2), 0.5, dtype=torch.float64))
    assert torch.allclose(W[:, 5, 5], torch.ones(4, dtype=torch.float64))


def test_return_weights_gives_the_attention_matrix():
    Z, Zp = torch.rand(2, 3, 4, dtype=torch.float64), torch.rand(2, 6, 4, dtype=torch.float64)
    I = torch.eye(4, dtype=torch.float64)
    out, W = distance_attention(Z, Zp, I, I, I, 2.0, return_weights=True)
    assert torch.equal(W, attention_weights(Z, Zp, I, I, 2.0))
    torch.testing.assert_close(out, W @ Zp, atol=1e-14, rtol=0)


X = torch.rand(2, 10, 3)
C = torch.rand(2, 4, 3)
I3 = torch.eye(3)

BAD_CALLS = [
    # (callable, exception, words that must appear in the message)
    (lambda: attention_weights(X, C, I3, I3, -1.0), ValueError, ["gamma", "> 0", "-1.0"]),
    (lambda: attention_weights(X, C, I3, I3, float("nan")), ValueError, ["gamma", "nan"]),
    (lambda: attention_weights(X, C, torch.eye(4), torch.eye(4)), ValueError, ["Q", "d_emb=3"]),
    (lambda: attention_weights(X, C, I3, torch.eye(3)[:2]), ValueError, ["K", "shape"]),
    (lambda: attention_weights(X, C[:1], I3, I3), ValueError, ["batch size"]),
    (lambda: attention_weights(X, torch.rand(2, 4, 5), I3, I3), ValueError, ["Zp", "d_emb=3"]),
    (lambda: attention_weights(X, C, I3, I3, weighting="hard"), ValueError, ["weighting", "hard"]),
    (lambda: distance_attention(X, C, I3, I3, torch.eye(3, 2)), ValueError, ["V", "d_emb=3"]),
]


@pytest.mark.parametrize("call,exc,words", BAD_CALLS, ids=[f"bad{i}" for i in range(len(BAD_CALLS))])
def test_bad_input_raises_clear_error(call, exc, words):
    assert_raises_naming(call, exc, words)
