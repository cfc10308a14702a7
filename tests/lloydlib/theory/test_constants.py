"""lloydlib.theory.constants: the lemma constants agree in numpy, sympy and mpmath; their values and checks."""

import math

import numpy as np
import pytest
import sympy as sp
import torch

from lloydlib import theory as T

# (function, names of its arguments); each is checked at random positive points in all three backends
FORMULAS = [
    (T.delta, ("rho", "rho_p", "Gamma1", "gamma", "d_emb")),
    (T.softmax_bound, ("delta", "m")),
    (T.softmax_l1_sharp, ("delta", "m")),
    (T.softmax_l1_failure_delta, ("m",)),
    (T.kappa2, ("m", "rho_p")),
    (T.kappa3, ("m", "rho", "rho_p", "Gamma1", "Gamma2", "gamma", "d_emb")),
    (T.kappa4, ("m", "rho", "rho_p", "Gamma1", "Gamma2", "gamma", "d_emb")),
    (T.kappa3_sharpened, ("m", "rho", "rho_p", "Gamma1", "Gamma2", "gamma", "d_emb")),
    (T.kappa4_sharpened, ("m", "rho", "rho_p", "Gamma1", "Gamma2", "gamma", "d_emb")),
    (T.kappa5, ("m", "m_p", "rho", "rho_p", "Gamma1", "Gamma2", "gamma", "d_emb")),
    (T.r_star, ("Gamma2", "d_E")),
    (T.omega_tau, ("delta", "tau", "k")),
    (T.loss_lipschitz, ("r_star", "tau", "k")),
    (T.kappa1, ("n", "k", "Gamma2", "d_E", "tau")),
]


@pytest.mark.parametrize("f,names", FORMULAS, ids=[f.__name__ for f, _ in FORMULAS])
def test_numeric_sympy_mpmath_agree(f, names, backends_agree):
    backends_agree(f, names)


def test_values():
    rho = np.array([0.5, 1.0, 2.0])
    out = T.delta(rho, 1.0, 1.0, 1.0, 4)
    assert out.shape == (3,) and np.allclose(out, (rho + 1) ** 2 / 2)
    nb = T.norm_bounds(4, 5, 1.0)
    assert nb["X0"] == 2.0 and nb["C0"] == pytest.approx(math.sqrt(5))
    assert nb["C1"] == pytest.approx(5 * math.sqrt(5))
    assert T.dims(4, 6, "OH") == (5, 10) and T.dims(4, 6, "BN") == (7, 7) and T.dims(4, 8, "BN") == (7, 7)
    assert T.kappa2(3, 2.0) == 6.0 and T.r_star(1.0, 2.0) == 128.0
    heads = T.head_quantities(16, 6, 4, 5, 1.0)
    assert heads[2] == (16.0, 16.0, 2.0, 2.0) and heads[4][:2] == (6.0, 6.0)
    s = T.AttentionSetting(m=3, m_p=4, d_emb=3, gamma=0.5)
    assert T.lemma_constant("I.6", 3, 4, 1.0, 1.0, 1.0, 1.0, 0.5, 3) == s.constant("I.6")


def test_symbolic_dims():
    d, k = sp.symbols("d k", positive=True)
    assert T.dims(d, k, "OH") == (d + 1, d + k)
    assert T.dims(d, k, "BN")[0] == d + sp.ceiling(sp.log(k, 2))


def test_sharp_softmax_constant_beats_the_stated_one_at_small_delta():
    # v = 0, v' = eps e_1, m = 3: ratio 4/9 against e^eps/3
    eps, m = 1e-3, 3
    v, w = torch.zeros(m, dtype=torch.float64), torch.zeros(m, dtype=torch.float64)
    w[0] = eps
    ratio = float((torch.softmax(v, 0) - torch.softmax(w, 0)).abs().sum() / eps)
    assert ratio > 1.3 * T.softmax_bound(eps, m)
    assert ratio <= T.softmax_l1_sharp(eps, m)
    assert T.softmax_l1_sharp(5.0, 3) == 0.5


@pytest.mark.parametrize("m", [3, 4, 6, 17, 512])
def test_failure_delta_is_where_the_stated_softmax_constant_turns_too_small(m):
    ds = T.softmax_l1_failure_delta(m)
    assert ds == pytest.approx(math.log(math.sqrt(2 * m * (m - 1)) - (m - 1)), rel=1e-15) and ds > 0
    for below, above in [(ds * (1 - 1e-6), ds * (1 + 1e-6)), (0.0, ds + 1.0)]:
        assert T.softmax_l1_sharp(below, m) > T.softmax_bound(below, m)
        assert T.softmax_l1_sharp(above, m) <= T.softmax_bound(above, m)
    # at the threshold the two constants meet, below the cap e^delta = m - 1
    assert T.softmax_l1_sharp(ds, m) == pytest.approx(T.softmax_bound(ds, m), rel=1e-12)
    assert math.exp(ds) < m - 1


def test_failure_delta_is_zero_for_one_or_two_entries():
    assert T.softmax_l1_failure_delta(1) == 0.0 and T.softmax_l1_failure_delta(2) == 0.0
    assert T.softmax_l1_sharp(0.0, 2) == T.softmax_bound(0.0, 2) == 0.5  # m = 2: equal at delta = 0
    assert all(T.softmax_l1_sharp(x, 2) <= T.softmax_bound(x, 2) for x in (1e-6, 0.3, 4.0))
    assert np.allclose(T.softmax_l1_failure_delta(np.array([1.0, 2.0, 3.0]))[:2], 0.0)


def test_smoothing_bounds():
    assert T.smoothing_distance_bound(4, "L2") == pytest.approx(math.sqrt(0.75))
    assert T.smoothing_distance_bound(4, "NE") == pytest.approx(math.sqrt(2 * math.log(4)))
    assert T.smoothing_gap_bound(4, 0.5, "L2") == pytest.approx(0.5 * 0.75 / 2)
    assert T.smoothing_gap_bound(4, 0.5, "NE") == pytest.approx(0.5 * math.log(4))


@pytest.mark.parametrize(
    "call,exc,match",
    [
        (lambda: T.delta(-1, 1, 1, 1, 4), ValueError, "rho must be >= 0"),
        (lambda: T.delta(1, 1, 1, 0, 4), ValueError, "gamma must be > 0"),
        (lambda: T.kappa2(0, 1), ValueError, "m must be >= 1"),
        (lambda: T.delta("1", 1, 1, 1, 4), TypeError, "rho must be a real number"),
        (lambda: T.dims(4, 6, "NA"), ValueError, "embedding must be one of"),
        (lambda: T.dims(4, 1, "BN"), ValueError, "k must be >= 2"),
        (lambda: T.dims(4, 2.5, "BN"), TypeError, "k must be an integer for the BN embedding"),
        (lambda: T.dims(0, 4, "OH"), ValueError, "d must be > 0"),
        (lambda: T.smoothing_distance_bound(4, "L1"), ValueError, "regularizer must be one of"),
        (lambda: T.smoothing_gap_bound(4, 1.0, "L1"), ValueError, "regularizer must be one of"),
        (lambda: T.smoothing_gap_bound(4, -1.0, "NE"), ValueError, "tau must be > 0"),
        (lambda: T.lemma_constant("I.9", 1, 1, 1, 1, 1, 1, 1, 1), ValueError, "lemma must be one of"),
        (lambda: T.head_quantities(0, 6, 4, 5, 1.0), ValueError, "n must be >= 1"),
        (lambda: T.norm_bounds(4, 5, -1.0), ValueError, "Gamma2 must be >= 0"),
        (lambda: T.softmax_l1_failure_delta(0), ValueError, "m must be >= 1"),
        (lambda: T.softmax_l1_failure_delta("3"), TypeError, "m must be a real number"),
    ],
)
def test_bad_input_names_the_argument(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
