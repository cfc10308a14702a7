"""lloydlib.theory.theorems: phi, phi_sum, Eq. 170, phi' and Theorem 3.1's alpha."""

import math

import mpmath
import numpy as np
import pytest

from lloydlib import theory as T

FORMULAS = [
    (T.phi, ("n", "k", "d", "d_E", "d_emb", "Gamma1", "Gamma2", "gamma")),
    (T.phi_sum, ("n", "k", "d", "d_E", "d_emb", "Gamma1", "Gamma2", "gamma")),
    (T.phi_eq170, ("k", "d_E", "d_emb", "Gamma1", "Gamma2", "gamma")),
    (T.phi_prime, ("n", "k", "d", "d_E", "d_emb", "Gamma1", "Gamma2", "gamma", "tau")),
    (T.phi_prime_sum, ("n", "k", "d", "d_E", "d_emb", "Gamma1", "Gamma2", "gamma", "tau")),
    (T.alpha_informal, ("n", "k", "d_E", "d_emb", "gamma", "tau", "omega")),
]


@pytest.mark.parametrize("f,names", FORMULAS, ids=[f.__name__ for f, _ in FORMULAS])
def test_numeric_sympy_mpmath_agree(f, names, backends_agree):
    backends_agree(f, names)


def test_huge_constants_overflow_to_inf_in_numpy_but_not_mpmath():
    args = (64, 6, 4, 7, 7, 1.0, 1.0, 1.0, 0.1)
    assert T.phi_prime(*args) == math.inf
    value = T.phi_prime(*args, backend="mpmath")
    assert isinstance(value, mpmath.mpf) and 1000 < float(mpmath.log10(value)) < 10000


def test_phi_is_the_largest_coefficient_and_phi_sum_their_sum():
    args = (8, 4, 3, 4, 4, 0.7, 1.2, 0.9)
    co = T.phi_coefficients(*args)
    assert sorted(co) == sorted(f"{w}{mu}" for w in "QKV" for mu in (1, 2, 3, 4))
    assert T.phi(*args) == pytest.approx(max(co.values()), rel=1e-12)
    assert T.phi_sum(*args) == pytest.approx(sum(co.values()), rel=1e-12)
    assert T.phi_prime(*args, 0.5) == pytest.approx(T.kappa1(8, 4, 1.2, 4, 0.5) * T.phi(*args), rel=1e-12)
    assert T.phi_prime_sum(*args, 0.5) == pytest.approx(T.kappa1(8, 4, 1.2, 4, 0.5) * T.phi_sum(*args), rel=1e-12)
    cs = T.eq170_constants(1.0, 1.0)
    assert cs["c1"] == 3.0 and cs["c6"] == cs["c4"] * cs["c5"]


def test_eq170_terms_bound_the_four_term_max():
    rng = np.random.default_rng(1)
    for _ in range(50):
        x = dict(k=int(rng.integers(2, 20)), d=float(rng.uniform(0.5, 8)), Gamma1=float(rng.uniform(0.01, 2)),
                 Gamma2=float(rng.uniform(0.01, 2)), gamma=float(rng.uniform(0.01, 2)), n=int(rng.integers(2, 50)))  # fmt: skip
        d_E = x["d"] + float(rng.uniform(0, 4))
        d_emb = float(rng.uniform(1, 40))
        assert T.phi_eq170(x["k"], d_E, d_emb, x["Gamma1"], x["Gamma2"], x["gamma"]) >= T.phi(
            x["n"], x["k"], x["d"], d_E, d_emb, x["Gamma1"], x["Gamma2"], x["gamma"]
        ) * (1 - 1e-12)


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: T.phi(8, 4, 3, 4, 4, 1.0, -1.0, 1.0), "Gamma2 must be >= 0"),
        (lambda: T.phi_prime(8, 4, 3, 4, 4, 1.0, 1.0, 1.0, 0.0), "tau must be > 0"),
        (lambda: T.alpha_informal(8, 4, 4, 4, 1.0, 0.1, 0.0), "omega must be > 0"),
        (lambda: T.eq170_constants(math.nan, 1.0), "Gamma1 must be a finite number"),
        (lambda: T.phi_eq170(0, 4, 4, 1.0, 1.0, 1.0), "k must be >= 1"),
    ],
)
def test_bad_input_names_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()
