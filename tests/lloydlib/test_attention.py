"""Tests of lloydlib.attention: distance attention A_2^gamma (Eq. 3 of the Leaner paper), its hardmax,
large-gamma and sparsemax cases; bad input raises errors naming the argument."""

import math

import pytest
import torch
import torch.nn.functional as F
from _support import assert_raises_naming

from lloydlib.attention import attention_weights, blocked_attention, distance_attention
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


def _qkv(batch, m, mp, e, f, grads):
    gen = torch.Generator().manual_seed(batch * 100 + m)
    shapes = {"q": (batch, m, e), "k": (batch, mp, e), "v": (batch, mp, f)}
    return {n: torch.randn(s, dtype=torch.float64, generator=gen).requires_grad_(n in grads) for n, s in shapes.items()}


@pytest.mark.parametrize("keep", [True, False])  # weights kept for the backward, or recomputed there
@pytest.mark.parametrize("grads", ["k", "qkv", "qv", "v"])
@pytest.mark.parametrize("block_entries", [1, 50, 1 << 22])  # a task a block, a remainder, one block
def test_blocked_attention_is_the_fused_kernel_with_only_the_gradients_asked_for(
    grads, block_entries, keep, monkeypatch
):
    import lloydlib.attention

    monkeypatch.setattr(lloydlib.attention, "KEEP_ENTRIES", 1 << 30 if keep else 0)
    t = _qkv(5, 7, 6, 3, 2, grads)
    out = blocked_attention(t["q"], t["k"], t["v"], 0.7, block_entries=block_entries)
    ref = F.scaled_dot_product_attention(t["q"], t["k"], t["v"], scale=0.7)
    torch.testing.assert_close(out, ref, atol=1e-13, rtol=1e-12)
    g = torch.randn(out.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    wrt = [t[n] for n in grads]
    for a, b in zip(torch.autograd.grad(out, wrt, g), torch.autograd.grad(ref, wrt, g)):
        torch.testing.assert_close(a, b, atol=1e-12, rtol=1e-11)


def test_blocked_attention_gradcheck():
    t = _qkv(3, 4, 5, 2, 3, "qkv")
    assert torch.autograd.gradcheck(
        lambda q, k, v: blocked_attention(q, k, v, 1.3, block_entries=20), (t["q"], t["k"], t["v"])
    )


def test_blocked_attention_keeps_only_the_data_when_no_gradient_is_asked():
    t = _qkv(2, 3, 3, 2, 2, "")
    assert not blocked_attention(t["q"], t["k"], t["v"], 1.0).requires_grad


@pytest.mark.parametrize(
    "kw, exc, words",
    [
        (dict(q=torch.zeros(2, 3)), ValueError, ["q", "3 dimensions", "(2, 3)"]),
        (dict(k=torch.zeros(2, 4, 5)), ValueError, ["k", "e=4", "(2, 4, 5)"]),
        (dict(v=torch.zeros(2, 5, 1)), ValueError, ["v", "m'=4", "(2, 5, 1)"]),
        (dict(v=torch.zeros(2, 4, 1, dtype=torch.float64)), TypeError, ["one dtype", "float32", "float64"]),
        (dict(block_entries=0), ValueError, ["block_entries", "0"]),
    ],
)
def test_blocked_attention_bad_input_names_the_argument(kw, exc, words):
    args = dict(q=torch.zeros(2, 3, 4), k=torch.zeros(2, 4, 4), v=torch.zeros(2, 4, 1), scale=1.0) | kw
    assert_raises_naming(lambda: blocked_attention(**args), exc, words)


def test_blocked_attention_backward_twice_gives_the_same_gradients():
    t = _qkv(3, 5, 4, 2, 2, "k")
    out = blocked_attention(t["q"], t["k"], t["v"], 0.9, block_entries=20)
    g = torch.ones_like(out)
    first = torch.autograd.grad(out, t["k"], g, retain_graph=True)[0]
    torch.testing.assert_close(torch.autograd.grad(out, t["k"], g)[0], first, atol=0, rtol=0)
