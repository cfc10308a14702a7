"""Tests for lloydlib.quantization: the reconstructed model of "Attention-based clustering".

Closed forms are checked three ways: against the seed summary's formula (exact sympy equality), against
an independent derivation (finite L as L -> inf against the direct L = inf derivation), and against
Monte Carlo within 4 standard errors (seeded, so the tests are deterministic).
"""
import math

import pytest
import sympy as sp
import torch
from hypothesis import given
from hypothesis import strategies as st

from lloydlib import quantization as q

Z_TOL = 4.0   # Monte Carlo agreement: |MC - exact| <= Z_TOL standard errors


@pytest.fixture(scope="module")
def cf_id():
    return q.ClosedForms(2, "identity")


@pytest.fixture(scope="module")
def cf_or():
    return q.ClosedForms(2, "oracle")


def assert_mc(values, exact, what=""):
    mean, se = q.mean_and_se(values)
    assert abs(mean - exact) <= Z_TOL * se, f"{what}: MC {mean:.5f} +- {se:.5f} vs exact {exact:.5f}"


# ------------------------------------------------------------------------------------------ data

def test_centroids_orthonormal_and_seeded():
    mu = q.orthonormal_centroids(3, 7, seed=1)
    assert mu.shape == (3, 7) and mu.dtype == torch.float64
    assert torch.allclose(mu @ mu.T, torch.eye(3, dtype=torch.float64), atol=1e-12)
    assert torch.equal(mu, q.orthonormal_centroids(3, 7, seed=1))
    batch = q.orthonormal_centroids(2, 5, batch=4, seed=0)
    assert batch.shape == (4, 2, 5)
    assert torch.allclose(batch @ batch.transpose(1, 2), torch.eye(2, dtype=torch.float64).expand(4, 2, 2))
    assert torch.equal(q.orthonormal_centroids(2, 4, basis=True), torch.eye(4, dtype=torch.float64)[:2])


def test_sample_mixture_shapes_components_and_centroid_modes():
    m = q.sample_mixture(6, 9, 5, 3, 0.4, seed=2)
    assert m.X.shape == (6, 9, 5) and m.mu.shape == (6, 3, 5) and m.Z.shape == (6, 9)
    assert int(m.Z.min()) >= 0 and int(m.Z.max()) <= 2
    assert torch.equal(m.mu[0], m.mu[5])                                   # "fixed": one set for all prompts
    r = q.sample_mixture(6, 9, 5, 3, 0.4, centroids="random", seed=2)
    assert not torch.allclose(r.mu[0], r.mu[1])                             # "random": a set per prompt
    again = q.sample_mixture(6, 9, 5, 3, 0.4, centroids="random", seed=2)
    assert torch.equal(r.X, again.X)
    dirac = q.sample_mixture(4, 8, 5, 2, 0.0, seed=3)                       # sigma = 0: the Dirac mixture
    assert torch.equal(dirac.X, q.optimal_quantizer(dirac.mu, dirac.Z))
    given_mu = q.orthonormal_centroids(2, 5, seed=9)
    g = q.sample_mixture(3, 4, 5, 2, 0.1, centroids=given_mu, seed=0)
    assert torch.equal(g.mu[1], given_mu)


def test_second_moment_matches_samples():
    mu = q.orthonormal_centroids(2, 4, seed=0)
    M = q.second_moment(mu, 0.5)
    evals = torch.linalg.eigvalsh(M)
    assert torch.allclose(evals, torch.tensor([0.25, 0.25, 0.75, 0.75], dtype=torch.float64))
    m = q.sample_mixture(20000, 5, 4, 2, 0.5, centroids=mu, seed=4)
    emp = torch.einsum("bld,ble->de", m.X, m.X) / (20000 * 5)
    assert (emp - M).abs().max() < 0.02


@pytest.mark.parametrize("call, exc, text", [
    (lambda: q.sample_mixture(2, 3, 2, 3, 0.1), ValueError, "k <= d"),
    (lambda: q.sample_mixture(2, 3, 4, 2, -0.1), ValueError, "sigma"),
    (lambda: q.sample_mixture(2, 3, 4, 2, 0.1, centroids="nope"), ValueError, "centroids"),
    (lambda: q.sample_mixture(2, 3, 4, 2, 0.1, centroids=2 * torch.eye(4, dtype=torch.float64)[:2]),
     ValueError, "orthonormal"),
    (lambda: q.sample_mixture(0, 3, 4), ValueError, "batch"),
    (lambda: q.orthonormal_centroids(5, 3), ValueError, "k <= d"),
    (lambda: q.second_moment(torch.ones(3), 0.1), ValueError, "mu"),
])
def test_data_validation(call, exc, text):
    with pytest.raises(exc, match=text):
        call()


# ------------------------------------------------------------------------------------------ layers

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
        assert torch.allclose(out[b], q.attention_layer(m.X[b:b + 1], Lam[b], 0.5, "R2")[0])
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
    """brief 5.7: R1 depends on the heads only through G = Lam^T Lam, for every prompt and L."""
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


@pytest.mark.parametrize("call, exc, text", [
    (lambda X: q.attention_layer(X, torch.ones(2, 3, dtype=torch.float64), 1.0), ValueError, "Lam"),
    (lambda X: q.attention_layer(X, torch.ones(2, 4), 1.0), TypeError, "dtype"),
    (lambda X: q.attention_layer(X, torch.ones(2, 4, dtype=torch.float64), -1.0), ValueError, "c"),
    (lambda X: q.attention_layer(X, torch.ones(2, 4, dtype=torch.float64), 1.0, "R3"), ValueError, "form"),
    (lambda X: q.identity_layer(X[0], 1.0), ValueError, "X"),
    (lambda X: q.identity_layer(X, torch.zeros(2, dtype=torch.float64)), ValueError, "c"),
    (lambda X: q.reconstruction_error(X, X[:, :2]), ValueError, "T"),
    (lambda X: q.pca_quantizer(X, 5), ValueError, "k"),
    (lambda X: q.optimal_quantizer(torch.ones(2, 2, 4, dtype=torch.float64), torch.zeros(2, 3)), TypeError, "Z"),
])
def test_layer_validation(call, exc, text):
    X = q.sample_mixture(2, 3, 4, seed=0).X
    with pytest.raises(exc, match=text):
        call(X)


# ------------------------------------------------------------------------------------------ risks

def test_population_risk_matches_monte_carlo_of_the_population_layer():
    mu = q.orthonormal_centroids(2, 5, seed=3)
    M = q.second_moment(mu, 0.6)
    Lam = torch.nn.functional.normalize(torch.randn(2, 5, dtype=torch.float64,
                                                    generator=torch.Generator().manual_seed(2)), dim=-1)
    m = q.sample_mixture(40000, 1, 5, 2, 0.6, centroids=mu, seed=7)
    x = m.X[:, 0]
    G = Lam.T @ Lam
    B = {"R1": M @ G, "R2": Lam.T @ torch.diag(torch.einsum("hd,de,he->h", Lam, M, Lam)) @ Lam}
    for form in q.FORMS:
        err = ((x - 0.8 * x @ B[form].T) ** 2).sum(-1)
        assert_mc(err, float(q.population_risk(Lam, M, 0.8, form)), form)


def test_population_risk_gradient_matches_the_brief_formula():
    """brief 5.2: grad_{lambda_h} R_inf = 2 [-2c M^2 + c^2 (M^2 G M + M G M^2)] lambda_h (R1)."""
    mu = q.orthonormal_centroids(2, 6, seed=0)
    M = q.second_moment(mu, 0.4)
    Lam = torch.randn(2, 6, dtype=torch.float64, requires_grad=True)
    (grad,) = torch.autograd.grad(q.population_risk(Lam, M, 1.3, "R1"), Lam)
    G = Lam.detach().T @ Lam.detach()
    brief = 2 * (-2 * 1.3 * M @ M + 1.3 ** 2 * (M @ M @ G @ M + M @ G @ M @ M))
    assert torch.allclose(grad, Lam.detach() @ brief.T, atol=1e-12)


def test_oracle_population_layer_is_the_projection():
    """At L = inf, oracle heads and c = 1/a give T = P x (both forms), so the risk is sigma^2 (d - 2)."""
    d, sigma = 7, 0.8
    mu = q.orthonormal_centroids(2, d, seed=1)
    M = q.second_moment(mu, sigma)
    a = 0.5 + sigma ** 2
    for form in q.FORMS:
        assert math.isclose(float(q.population_risk(mu, M, 1 / a, form)), sigma ** 2 * (d - 2), rel_tol=1e-12)


def test_baselines():
    d, sigma = 5, 1.0
    m = q.sample_mixture(20000, 12, d, 2, sigma, centroids="random", seed=11)
    assert_mc(q.reconstruction_error(m.X, q.optimal_quantizer(m.mu, m.Z)), sigma ** 2 * d, "T*")
    nc = q.nearest_centroid_quantizer(m.X, m.mu)
    assert_mc(q.reconstruction_error(m.X, nc), q.nearest_centroid_risk(d, sigma), "nearest centroid")
    dist = ((m.X[:, :, None, :] - m.mu[:, None]) ** 2).sum(-1)
    assert torch.equal(((m.X - nc) ** 2).sum(-1), dist.amin(-1))
    # PCA projects on the top-2 eigenvectors of Mhat; its risk tends to sigma^2 (d - 2) as L grows
    big = q.sample_mixture(200, 2000, d, 2, sigma, centroids="random", seed=12)
    pca = q.reconstruction_error(big.X, q.pca_quantizer(big.X, 2))
    assert abs(q.mean_and_se(pca)[0] - sigma ** 2 * (d - 2)) < 0.03
    assert q.nearest_centroid_risk(d, 0.0) == 0.0
    assert abs(q.nearest_centroid_risk(5, 1.0) - 4.60) < 0.005                    # brief 4.4: about 4.60


# ------------------------------------------------------------------------------------------ optimisation

def test_sphere_steps():
    Lam = torch.nn.functional.normalize(torch.randn(3, 2, 5, dtype=torch.float64), dim=-1)
    grad = torch.randn(3, 2, 5, dtype=torch.float64)
    for update in ("riemannian", "projected"):
        assert torch.allclose(q.sphere_step(Lam, grad, 0.3, update).norm(dim=-1), torch.ones(3, 2, dtype=torch.float64))
    assert torch.allclose(q.sphere_step(Lam, 2.5 * Lam, 0.3, "riemannian"), Lam)   # radial gradient: no move
    assert torch.allclose(q.sphere_step(Lam, grad, 0.3, "euclidean"), Lam - 0.3 * grad)
    with pytest.raises(ValueError, match="update"):
        q.sphere_step(Lam, grad, 0.3, "adam")


@pytest.mark.parametrize("k, d", [(2, 3), (2, 8), (3, 6)])
def test_init_on_manifold(k, d):
    mu = q.orthonormal_centroids(k, d, seed=k + d)
    Lam = q.init_on_manifold(mu, runs=5, seed=0)
    assert Lam.shape == (5, k, d)
    assert torch.allclose(Lam.norm(dim=-1), torch.ones(5, k, dtype=torch.float64))
    assert float(q.manifold_violation(Lam, mu).max()) < 1e-13
    assert float(q.manifold_violation(q.init_on_sphere(k, d, runs=5, seed=0), mu).min()) > 1e-3
    with pytest.raises(ValueError, match="d >= K"):
        q.init_on_manifold(q.orthonormal_centroids(k, k, seed=0))


def test_centroid_distance():
    mu = q.orthonormal_centroids(3, 6, seed=2)
    perm = torch.stack([-mu[2], mu[0], -mu[1]])
    assert float(q.centroid_distance(perm, mu)) == 0.0
    assert float(q.centroid_distance(mu, mu)) == 0.0
    mu2 = mu[:2]
    for phi in (1e-6, 0.1, 0.5, math.pi / 4):
        want = 2 * math.sqrt(2) * abs(math.sin(phi / 2))
        assert math.isclose(float(q.centroid_distance(q.plane_rotation_heads(mu2, phi), mu2)), want, rel_tol=1e-6)
    assert float(q.subspace_distance(q.plane_rotation_heads(mu2, 0.7), mu2)) < 1e-14


def test_population_pgd_from_the_manifold_reaches_the_centroids_and_stays_on_m():
    mu = q.orthonormal_centroids(2, 8, seed=0)
    sigma = 0.3
    res = q.train_heads(mu, sigma, 1 / (0.5 + sigma ** 2), init="manifold", lr=0.2, steps=800, runs=3,
                        record_every=100, seed=1)
    assert res.distance.shape == (3, 9) and res.steps.tolist() == list(range(0, 801, 100))
    assert res.overlap.shape == (3, 9) and float(res.overlap.max()) < 1e-12        # orthogonal on M
    assert float(res.distance[:, -1].max()) < 1e-10
    assert float(res.violation.max()) < 1e-12
    sphere = q.train_heads(mu, sigma, 1 / (0.5 + sigma ** 2), init="sphere", lr=0.2, steps=800, runs=3, seed=1)
    assert float(sphere.subspace[:, -1].max()) < 1e-8        # the plane is found ...
    assert float(sphere.distance[:, -1].min()) > 1e-3        # ... but not the centroids (R1 symmetry)


def test_stochastic_training_is_seeded_and_decreases_the_distance():
    mu = q.orthonormal_centroids(2, 5, seed=0)
    kw = dict(form="R2", L=6, batch=64, init="manifold", lr=1.0, steps=100, runs=2, record_every=20, seed=3)
    a = q.train_heads(mu, 0.3, 0.1 / 0.59, **kw)
    b = q.train_heads(mu, 0.3, 0.1 / 0.59, **kw)
    assert torch.equal(a.Lam, b.Lam)
    assert float(a.distance[:, -1].max()) < 0.3 < float(a.distance[:, 0].min())
    with pytest.raises(ValueError, match="init"):
        q.train_heads(mu, 0.3, 1.0, init=torch.zeros(3, 2, 5, dtype=torch.float64), runs=2)
    with pytest.raises(ValueError, match="init"):
        q.train_heads(mu, 0.3, 1.0, init="gaussian")


# ------------------------------------------------------------------------------------------ closed forms

def test_identity_ratio_is_the_seed_summary_formula_exactly(cf_id):
    s = q.symbols()
    seed = (1 - 2 / s.d) * (1 + 2 * s.sigma ** 2) / (1 + 6 * s.sigma ** 2 + 12 * s.sigma ** 4 + 4 * s.d * s.sigma ** 6)
    assert sp.simplify(cf_id.ratio_inf - seed) == 0
    assert sp.simplify(cf_id.risk_inf_opt - s.sigma ** 2 * s.d * seed) == 0


def test_oracle_and_identity_for_k_centroids():
    s = q.symbols()
    K, d, sig = s.K, s.d, s.sigma
    assert sp.simplify(q.ClosedForms("K", "oracle").ratio_inf - (1 - K / d)) == 0
    assert sp.simplify(q.ClosedForms("K", "oracle").scale_inf - 1 / (1 / K + sig ** 2)) == 0
    ident = q.ClosedForms("K", "identity").risk_inf_opt
    brief = (d - K) * sig ** 2 * (1 + K * sig ** 2) / ((1 + K * sig ** 2) ** 3 + K ** 2 * (d - K) * sig ** 6)
    assert sp.simplify(ident - brief) == 0
    assert sp.simplify(q.ClosedForms(3, "oracle").ratio_inf - (1 - 3 / d)) == 0


def test_identity_risk_is_below_sigma2_d_minus_2_at_L_inf(cf_id):
    """Both at c* and at the unbiased c = 1/a; checked as polynomial identities with positive coefficients."""
    s = q.symbols()
    n = sp.Symbol("n", positive=True)                       # n = d - 2
    for risk in (cf_id.risk_inf_opt, cf_id.risk_inf.subs(s.c, cf_id.unbiased_scale_inf)):
        gap = sp.factor(sp.together(s.sigma ** 2 * (s.d - 2) - risk).subs(s.d, n + 2))
        num, den = sp.fraction(gap)
        for part in (num, den):
            assert all(coef > 0 for coef in sp.Poly(sp.expand(part), n, s.sigma).coeffs()), part


def test_unbiasedness_and_conditional_variance_at_L_inf(cf_id):
    s = q.symbols()
    assert sp.simplify(cf_id.unbiased_scale_inf - 2 / (1 + 2 * s.sigma ** 2)) == 0
    var = sp.simplify(cf_id.cond_var_inf.subs(s.c, cf_id.unbiased_scale_inf))
    brief = s.sigma ** 2 * (2 + (s.d - 2) * (2 * s.sigma ** 2 / (1 + 2 * s.sigma ** 2)) ** 2)
    assert sp.simplify(var - brief) == 0
    n = sp.Symbol("n", positive=True)
    gap = sp.factor(sp.together((cf_id.input_cond_var - var).subs(s.d, n + 2)))
    num, den = sp.fraction(gap)
    assert all(c > 0 for c in sp.Poly(sp.expand(num), n, s.sigma).coeffs())


@pytest.mark.parametrize("heads", ["identity", "oracle"])
def test_finite_L_forms_tend_to_the_L_inf_forms(heads):
    """Two independent derivations: the index-pattern expansion at finite L and M's eigenbasis at L = inf."""
    cf = q.ClosedForms(2, heads)
    s = q.symbols()
    assert sp.simplify(sp.limit(cf.risk_L, s.L, sp.oo) - cf.risk_inf) == 0
    assert sp.simplify(sp.limit(cf.risk_L_opt, s.L, sp.oo) - cf.risk_inf_opt) == 0
    assert sp.simplify(sp.limit(cf.mean_coef_L, s.L, sp.oo) - cf.mean_coef_inf) == 0


def test_finite_L_first_order_correction_matches_the_brief(cf_or, cf_id):
    s = q.symbols()
    d, sig = s.d, s.sigma
    brief_r1 = -(4 * d * sig ** 4 + 2 * d * sig ** 2 - 20 * sig ** 4 - 16 * sig ** 2 - 1) / (1 + 2 * sig ** 2)
    assert sp.simplify(cf_or.first_order_L - brief_r1) == 0
    brief_cL = s.L / ((s.L - 1) * (sp.Rational(1, 2) + sig ** 2) + 1 + (d + 2) * sig ** 2)
    assert sp.simplify(cf_id.unbiased_scale_L - brief_cL) == 0


@pytest.mark.parametrize("d, sigma, L, c", [(5, 0.5, 10, 1.3), (6, 0.3, 4, None), (8, 1.0, 20, None)])
def test_finite_L_risks_match_monte_carlo(cf_id, cf_or, d, sigma, L, c):
    m = q.sample_mixture(60000, L, d, 2, sigma, centroids="random", seed=d * 100 + L)
    for cf, layer in ((cf_id, lambda cc: q.identity_layer(m.X, cc)),
                      (cf_or, lambda cc: q.attention_layer(m.X, m.mu, cc, "R1"))):
        cc = c if c is not None else q.numeric(cf.scale_L, d=d, sigma=sigma, L=L)
        exact = q.numeric(cf.risk_L, d=d, sigma=sigma, L=L, c=cc)
        assert_mc(q.reconstruction_error(m.X, layer(cc)), exact, f"{cf.heads} d={d} sigma={sigma} L={L}")
        if c is None:
            assert math.isclose(exact, q.numeric(cf.risk_L_opt, d=d, sigma=sigma, L=L), rel_tol=1e-9)


def test_unbiasedness_and_conditional_variance_at_finite_L_match_monte_carlo(cf_id):
    d, sigma, L = 6, 0.5, 8
    c = q.numeric(cf_id.unbiased_scale_L, d=d, sigma=sigma, L=L)
    m = q.sample_mixture(80000, L, d, 2, sigma, centroids="random", seed=5)
    T = q.identity_layer(m.X, c)[:, 0]
    target = q.optimal_quantizer(m.mu, m.Z)[:, 0]
    assert_mc((T * target).sum(-1), 1.0, "E[<T, mu_Z>]")
    resid = T - target
    # the mean along mu_Z is 1 and orthogonal to it is 0, so E||T - mu_Z||^2 = tr Cov(T | Z)
    assert_mc((resid ** 2).sum(-1), q.numeric(cf_id.cond_var_L, d=d, sigma=sigma, L=L, c=c), "tr Cov")
    assert q.numeric(cf_id.cond_var_L, d=d, sigma=sigma, L=L, c=c) < sigma ** 2 * d


def test_three_centroid_finite_L_risk_matches_monte_carlo():
    cf = q.ClosedForms(3, "identity")
    d, sigma, L, c = 6, 0.4, 6, 1.1
    m = q.sample_mixture(60000, L, d, 3, sigma, centroids="random", seed=8)
    assert_mc(q.reconstruction_error(m.X, q.identity_layer(m.X, c)), q.numeric(cf.risk_L, d=d, sigma=sigma, L=L, c=c))


def test_manifold_profile():
    s = q.symbols()
    f, cmax = q.manifold_profile(2)
    a, b = sp.Rational(1, 2) + s.sigma ** 2, s.sigma ** 2
    assert sp.simplify(cmax - 2 * (a + b) / (a * (2 * a + b))) == 0                  # brief 5.6
    assert sp.simplify(f - (-2 * s.c * (b ** 2 + (a ** 2 - b ** 2) * s.u)
                            + s.c ** 2 * (b ** 2 + (a ** 2 - b ** 2) * s.u) * (b + (a - b) * s.u))) == 0
    assert sp.simplify(cmax - 1 / a).is_positive                                    # c = 1/a is allowed
    f2, cmax2 = q.manifold_profile(2, "R2")
    assert sp.simplify(cmax2 - 4 / (3 * a)) == 0
    # below c_max, f' <= 0 on [0, 1]; above it, f'(1) > 0
    for fu, cm in ((f, cmax), (f2, cmax2)):
        fp = sp.diff(fu, s.u)
        for sig in (0.3, 1.0):
            c_max = q.numeric(cm, sigma=sig)
            assert max(q.numeric(fp, u=u / 20, sigma=sig, c=0.99 * c_max) for u in range(21)) <= 0
            assert q.numeric(fp, u=1, sigma=sig, c=1.01 * c_max) > 0
    # the profiles agree with the matrix formula at a point of M
    mu = q.orthonormal_centroids(2, 5, basis=True)
    M = q.second_moment(mu, 0.7)
    e = torch.eye(5, dtype=torch.float64)
    th = (0.3, 1.1)
    Lam = torch.stack([math.cos(th[0]) * e[0] + math.sin(th[0]) * e[2],
                       math.cos(th[1]) * e[1] + math.sin(th[1]) * e[3]])
    for form, fu in (("R1", f), ("R2", f2)):
        want = float(torch.trace(M)) + sum(q.numeric(fu, u=math.cos(t) ** 2, sigma=0.7, c=0.9) for t in th)
        assert math.isclose(float(q.population_risk(Lam, M, 0.9, form)), want, rel_tol=1e-12)


def test_population_pgd_rate_on_the_manifold():
    """Near the centroids each step multiplies the distance by 1 + 2 lr f'(1)."""
    s = q.symbols()
    mu = q.orthonormal_centroids(2, 6, seed=4)
    sigma, lr = 0.5, 0.3
    c = 0.5 / (0.5 + sigma ** 2)
    for form in q.FORMS:
        f, _ = q.manifold_profile(2, form)
        rho = 1 + 2 * lr * q.numeric(sp.diff(f, s.u), u=1, sigma=sigma, c=c)
        res = q.train_heads(mu, sigma, c, form=form, init="manifold", lr=lr, steps=400, runs=2, seed=0)
        dist = res.distance[0]
        window = (dist < 1e-4) & (dist > 1e-11)
        steps = res.steps[window].double()
        design = torch.stack([steps, torch.ones_like(steps)], 1)
        slope = torch.linalg.lstsq(design, dist[window].log()[:, None]).solution[0]
        assert abs(math.exp(float(slope)) - rho) < 1e-4, (form, math.exp(float(slope)), rho)


def test_numeric_and_closed_form_validation():
    with pytest.raises(ValueError, match="still depends"):
        q.numeric(q.ClosedForms(2).risk_inf, d=5)
    with pytest.raises(ValueError, match="among"):
        q.numeric(q.ClosedForms(2).risk_inf, e=5)
    with pytest.raises(ValueError, match="integer k"):
        q.ClosedForms("K").risk_L
    with pytest.raises(ValueError, match="heads"):
        q.ClosedForms(2, "random")
