"""Tests for lloydlib.attention_clustering.closed_forms: the sympy closed forms.

Checked three ways: against the summary's formula (exact sympy equality), against an independent
derivation (finite L as L -> inf against the direct L = inf derivation), and against Monte Carlo within
4 standard errors (seeded, so the tests are deterministic).
"""

import math

import pytest
import sympy as sp
import torch

from lloydlib import attention_clustering as q

Z_TOL = 4.0  # Monte Carlo agreement: |MC - exact| <= Z_TOL standard errors


def assert_mc(values, exact, what=""):
    mean, se = q.mean_and_se(values)
    assert abs(mean - exact) <= Z_TOL * se, f"{what}: MC {mean:.5f} +- {se:.5f} vs exact {exact:.5f}"


@pytest.fixture(scope="module")
def cf_id():
    return q.ClosedForms(2, "identity")


@pytest.fixture(scope="module")
def cf_or():
    return q.ClosedForms(2, "oracle")


def test_identity_ratio_is_the_seed_summary_formula_exactly(cf_id):
    s = q.symbols()
    seed = (1 - 2 / s.d) * (1 + 2 * s.sigma**2) / (1 + 6 * s.sigma**2 + 12 * s.sigma**4 + 4 * s.d * s.sigma**6)
    assert sp.simplify(cf_id.ratio_inf - seed) == 0
    assert sp.simplify(cf_id.risk_inf_opt - s.sigma**2 * s.d * seed) == 0


def test_oracle_and_identity_for_k_centroids():
    s = q.symbols()
    K, d, sig = s.K, s.d, s.sigma
    assert sp.simplify(q.ClosedForms("K", "oracle").ratio_inf - (1 - K / d)) == 0
    assert sp.simplify(q.ClosedForms("K", "oracle").scale_inf - 1 / (1 / K + sig**2)) == 0
    ident = q.ClosedForms("K", "identity").risk_inf_opt
    want = (d - K) * sig**2 * (1 + K * sig**2) / ((1 + K * sig**2) ** 3 + K**2 * (d - K) * sig**6)
    assert sp.simplify(ident - want) == 0
    assert sp.simplify(q.ClosedForms(3, "oracle").ratio_inf - (1 - 3 / d)) == 0


def test_identity_risk_is_below_sigma2_d_minus_2_at_L_inf(cf_id):
    """Both at c* and at the unbiased c = 1/a; checked as polynomial identities with positive coefficients."""
    s = q.symbols()
    n = sp.Symbol("n", positive=True)  # n = d - 2
    for risk in (cf_id.risk_inf_opt, cf_id.risk_inf.subs(s.c, cf_id.unbiased_scale_inf)):
        gap = sp.factor(sp.together(s.sigma**2 * (s.d - 2) - risk).subs(s.d, n + 2))
        num, den = sp.fraction(gap)
        for part in (num, den):
            assert all(coef > 0 for coef in sp.Poly(sp.expand(part), n, s.sigma).coeffs()), part


def test_unbiasedness_and_conditional_variance_at_L_inf(cf_id):
    s = q.symbols()
    assert sp.simplify(cf_id.unbiased_scale_inf - 2 / (1 + 2 * s.sigma**2)) == 0
    var = sp.simplify(cf_id.cond_var_inf.subs(s.c, cf_id.unbiased_scale_inf))
    want = s.sigma**2 * (2 + (s.d - 2) * (2 * s.sigma**2 / (1 + 2 * s.sigma**2)) ** 2)
    assert sp.simplify(var - want) == 0
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


def test_finite_L_first_order_correction_matches_the_hand_derivation(cf_or, cf_id):
    s = q.symbols()
    d, sig = s.d, s.sigma
    hand_r1 = -(4 * d * sig**4 + 2 * d * sig**2 - 20 * sig**4 - 16 * sig**2 - 1) / (1 + 2 * sig**2)
    assert sp.simplify(cf_or.first_order_L - hand_r1) == 0
    hand_cL = s.L / ((s.L - 1) * (sp.Rational(1, 2) + sig**2) + 1 + (d + 2) * sig**2)
    assert sp.simplify(cf_id.unbiased_scale_L - hand_cL) == 0


@pytest.mark.parametrize("d, sigma, L, c", [(5, 0.5, 10, 1.3), (6, 0.3, 4, None), (8, 1.0, 20, None)])
def test_finite_L_risks_match_monte_carlo(cf_id, cf_or, d, sigma, L, c):
    m = q.sample_mixture(60000, L, d, 2, sigma, centroids="random", seed=d * 100 + L)
    for cf, layer in (
        (cf_id, lambda cc: q.identity_layer(m.X, cc)),
        (cf_or, lambda cc: q.attention_layer(m.X, m.mu, cc, "R1")),
    ):
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
    assert_mc((resid**2).sum(-1), q.numeric(cf_id.cond_var_L, d=d, sigma=sigma, L=L, c=c), "tr Cov")
    assert q.numeric(cf_id.cond_var_L, d=d, sigma=sigma, L=L, c=c) < sigma**2 * d


def test_three_centroid_finite_L_risk_matches_monte_carlo():
    cf = q.ClosedForms(3, "identity")
    d, sigma, L, c = 6, 0.4, 6, 1.1
    m = q.sample_mixture(60000, L, d, 3, sigma, centroids="random", seed=8)
    assert_mc(q.reconstruction_error(m.X, q.identity_layer(m.X, c)), q.numeric(cf.risk_L, d=d, sigma=sigma, L=L, c=c))


def test_manifold_profile():
    s = q.symbols()
    f, cmax = q.manifold_profile(2)
    a, b = sp.Rational(1, 2) + s.sigma**2, s.sigma**2
    assert sp.simplify(cmax - 2 * (a + b) / (a * (2 * a + b))) == 0  # c < 2(a + b)/(a(2a + b)), by hand
    assert (
        sp.simplify(
            f - (-2 * s.c * (b**2 + (a**2 - b**2) * s.u) + s.c**2 * (b**2 + (a**2 - b**2) * s.u) * (b + (a - b) * s.u))
        )
        == 0
    )
    assert sp.simplify(cmax - 1 / a).is_positive  # c = 1/a is allowed
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
    Lam = torch.stack(
        [math.cos(th[0]) * e[0] + math.sin(th[0]) * e[2], math.cos(th[1]) * e[1] + math.sin(th[1]) * e[3]]
    )
    for form, fu in (("R1", f), ("R2", f2)):
        want = float(torch.trace(M)) + sum(q.numeric(fu, u=math.cos(t) ** 2, sigma=0.7, c=0.9) for t in th)
        assert math.isclose(float(q.population_risk(Lam, M, 0.9, form)), want, rel_tol=1e-12)


def test_numeric_and_closed_form_validation():
    with pytest.raises(ValueError, match="still depends"):
        q.numeric(q.ClosedForms(2).risk_inf, d=5)
    with pytest.raises(ValueError, match="among"):
        q.numeric(q.ClosedForms(2).risk_inf, e=5)
    with pytest.raises(ValueError, match="integer k"):
        _ = q.ClosedForms("K").risk_L
    with pytest.raises(ValueError, match="heads"):
        q.ClosedForms(2, "random")
