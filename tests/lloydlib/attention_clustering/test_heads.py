"""Tests for lloydlib.attention_clustering.heads: the R1/R2 layers against the reference linear attention, and
their risks (per prompt from Mhat, and at L = inf)."""

import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from lloydlib import attention_clustering as q

Z_TOL = 4.0  # Monte Carlo agreement: |MC - exact| <= Z_TOL standard errors


def assert_mc(values, exact, what=""):
    mean, se = q.mean_and_se(values)
    assert abs(mean - exact) <= Z_TOL * se, f"{what}: MC {mean:.5f} +- {se:.5f} vs exact {exact:.5f}"


def _r1_weights(Lam):
    H, d = Lam.shape
    return Lam[:, None, :], Lam[:, None, :], torch.eye(d, dtype=Lam.dtype).expand(H, d, d)


def test_layers_equal_the_reference_linear_attention():
    m = q.sample_mixture(5, 7, 4, 2, 0.6, seed=0)
    Lam = torch.randn(3, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    Q, K, V = _r1_weights(Lam)
    assert torch.allclose(q.attention_layer(m.X, Lam, 0.7, "R1"), q.linear_attention(m.X, Q, K, V, 0.7))
    V2 = torch.einsum("hd,he->hde", Lam, Lam)
    assert torch.allclose(q.attention_layer(m.X, Lam, 0.7, "R2"), q.linear_attention(m.X, Q, K, V2, 0.7))
    eye = torch.eye(4, dtype=torch.float64)[None]
    assert torch.allclose(q.identity_layer(m.X, 0.7), q.linear_attention(m.X, eye, eye, eye, 0.7))
    # d orthonormal heads under R1 are the identity-QKV layer (G = I) ...
    basis = q.orthonormal_centroids(4, 4, seed=5)
    assert torch.allclose(q.attention_layer(m.X, basis, 0.7, "R1"), q.identity_layer(m.X, 0.7))
    # ... but not under R2, which keeps only the diagonal of Mhat in the heads' basis
    assert not torch.allclose(q.attention_layer(m.X, basis, 0.7, "R2"), q.identity_layer(m.X, 0.7))


def test_per_prompt_heads_and_scales():
    m = q.sample_mixture(3, 6, 4, 2, 0.3, seed=1)
    Lam = torch.randn(3, 2, 4, dtype=torch.float64)
    out = q.attention_layer(m.X, Lam, 0.5, "R2")
    for b in range(3):
        assert torch.allclose(out[b], q.attention_layer(m.X[b : b + 1], Lam[b], 0.5, "R2")[0])
    c = torch.tensor([0.5, 1.0, 2.0], dtype=torch.float64)
    out = q.identity_layer(m.X, c)
    assert torch.allclose(out[2], q.identity_layer(m.X[2:], 2.0)[0])
    assert q.adaptive_scale(m.X).shape == (3,)


def test_layer_risk_equals_the_reconstruction_error():
    m = q.sample_mixture(40, 9, 5, 2, 0.7, seed=2)
    Lam = torch.randn(2, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    for form in q.FORMS:
        direct = q.reconstruction_error(m.X, q.attention_layer(m.X, Lam, 0.3, form))
        assert torch.allclose(q.layer_risk(m.X, Lam, 0.3, form), direct, rtol=1e-10, atol=1e-12)


@given(st.floats(-math.pi, math.pi), st.integers(0, 10_000))
def test_r1_is_invariant_to_rotations_of_the_heads_in_the_centroid_plane(phi, seed):
    """R1 depends on the heads only through G = Lam^T Lam, for every prompt and L."""
    m = q.sample_mixture(4, 5, 4, 2, 0.5, seed=seed)
    mu = m.mu[0]
    a = q.attention_layer(m.X, q.plane_rotation_heads(mu, 0.0), 0.9, "R1")
    b = q.attention_layer(m.X, q.plane_rotation_heads(mu, phi), 0.9, "R1")
    assert torch.allclose(a, b, atol=1e-12)


def test_r2_is_not_rotation_invariant_at_finite_L():
    m = q.sample_mixture(50, 5, 4, 2, 0.5, seed=0)
    mu = m.mu[0]
    a = q.attention_layer(m.X, q.plane_rotation_heads(mu, 0.0), 0.9, "R2")
    b = q.attention_layer(m.X, q.plane_rotation_heads(mu, 0.4), 0.9, "R2")
    assert (a - b).abs().max() > 1e-3


@pytest.mark.parametrize(
    "call, exc, text",
    [
        (lambda X: q.attention_layer(X, torch.ones(2, 3, dtype=torch.float64), 1.0), ValueError, "Lam"),
        (lambda X: q.attention_layer(X, torch.ones(2, 4), 1.0), TypeError, "dtype"),
        (lambda X: q.attention_layer(X, torch.ones(2, 4, dtype=torch.float64), -1.0), ValueError, "c"),
        (lambda X: q.attention_layer(X, torch.ones(2, 4, dtype=torch.float64), 1.0, "R3"), ValueError, "form"),
        (lambda X: q.optimal_quantizer(torch.ones(2, 2, 4, dtype=torch.float64), torch.zeros(2, 3)), TypeError, "Z"),
    ],
)
def test_layer_validation(call, exc, text):
    X = q.sample_mixture(2, 3, 4, seed=0).X
    with pytest.raises(exc, match=text):
        call(X)


# ------------------------------------------------------------------------------------------ risks


def test_population_risk_matches_monte_carlo_of_the_population_layer():
    mu = q.orthonormal_centroids(2, 5, seed=3)
    M = q.second_moment(mu, 0.6)
    Lam = torch.nn.functional.normalize(
        torch.randn(2, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(2)), dim=-1
    )
    m = q.sample_mixture(40000, 1, 5, 2, 0.6, centroids=mu, seed=7)
    x = m.X[:, 0]
    G = Lam.T @ Lam
    B = {"R1": M @ G, "R2": Lam.T @ torch.diag(torch.einsum("hd,de,he->h", Lam, M, Lam)) @ Lam}
    for form in q.FORMS:
        err = ((x - 0.8 * x @ B[form].T) ** 2).sum(-1)
        assert_mc(err, float(q.population_risk(Lam, M, 0.8, form)), form)


def test_population_risk_gradient_matches_the_hand_derived_formula():
    """By hand: grad_{lambda_h} R_inf = 2 [-2c M^2 + c^2 (M^2 G M + M G M^2)] lambda_h (R1)."""
    mu = q.orthonormal_centroids(2, 6, seed=0)
    M = q.second_moment(mu, 0.4)
    Lam = torch.randn(2, 6, dtype=torch.float64, requires_grad=True)
    (grad,) = torch.autograd.grad(q.population_risk(Lam, M, 1.3, "R1"), Lam)
    G = Lam.detach().T @ Lam.detach()
    hand = 2 * (-2 * 1.3 * M @ M + 1.3**2 * (M @ M @ G @ M + M @ G @ M @ M))
    assert torch.allclose(grad, Lam.detach() @ hand.T, atol=1e-12)


def test_oracle_population_layer_is_the_projection():
    """At L = inf, oracle heads and c = 1/a give T = P x (both forms), so the risk is sigma^2 (d - 2)."""
    d, sigma = 7, 0.8
    mu = q.orthonormal_centroids(2, d, seed=1)
    M = q.second_moment(mu, sigma)
    a = 0.5 + sigma**2
    for form in q.FORMS:
        assert math.isclose(float(q.population_risk(mu, M, 1 / a, form)), sigma**2 * (d - 2), rel_tol=1e-12)
