"""lloydlib.theory: one definition per constant (numpy, sympy and mpmath agree), the symbolic tables,
and the sandwich, which must catch a wrong constant."""
import math

import mpmath
import numpy as np
import pytest
import sympy as sp
import torch

from lloydlib import theory as T
from lloydlib.attention import distance_attention
from lloydlib.construction import exact_transformer, theorem_weights
from lloydlib.tasks import sample_tasks

# (function, names of its arguments); each is checked at random positive points in all three backends
FORMULAS = [
    (T.delta, ("rho", "rho_p", "Gamma1", "gamma", "d_emb")),
    (T.softmax_bound, ("delta", "m")),
    (T.softmax_l1_sharp, ("delta", "m")),
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
    (T.phi, ("n", "k", "d", "d_E", "d_emb", "Gamma1", "Gamma2", "gamma")),
    (T.phi_sum, ("n", "k", "d", "d_E", "d_emb", "Gamma1", "Gamma2", "gamma")),
    (T.phi_eq170, ("k", "d_E", "d_emb", "Gamma1", "Gamma2", "gamma")),
    (T.phi_prime, ("n", "k", "d", "d_E", "d_emb", "Gamma1", "Gamma2", "gamma", "tau")),
    (T.alpha_informal, ("n", "k", "d_E", "d_emb", "gamma", "tau", "omega")),
]


def _point(names, rng):
    """Random arguments: counts >= 1, everything else in (0.05, 2)."""
    return {n: (float(rng.integers(1, 9)) if n in ("m", "m_p", "n", "k") else float(rng.uniform(0.05, 2)))
            for n in names}


@pytest.mark.parametrize("f,names", FORMULAS, ids=[f.__name__ for f, _ in FORMULAS])
def test_numeric_sympy_mpmath_agree(f, names):
    rng = np.random.default_rng(0)
    syms = {n: sp.Symbol(n, positive=True) for n in names}
    expr = f(**syms)
    assert isinstance(expr, sp.Basic)
    for _ in range(5):
        x = _point(names, rng)
        num = f(**x)
        sym = float(expr.subs({syms[n]: v for n, v in x.items()}).evalf(30))
        mp = float(f(**x, backend="mpmath"))
        assert isinstance(num, float)
        assert num == pytest.approx(sym, rel=1e-12)
        assert num == pytest.approx(mp, rel=1e-12)


def test_arrays_and_dict_outputs():
    rho = np.array([0.5, 1.0, 2.0])
    out = T.delta(rho, 1.0, 1.0, 1.0, 4)
    assert out.shape == (3,) and np.allclose(out, (rho + 1) ** 2 / 2)
    nb = T.norm_bounds(4, 5, 1.0)
    assert nb["X0"] == 2.0 and nb["C0"] == pytest.approx(math.sqrt(5))
    assert nb["C1"] == pytest.approx(5 * math.sqrt(5))
    assert T.dims(4, 6, "OH") == (5, 10) and T.dims(4, 6, "BN") == (7, 7) and T.dims(4, 8, "BN") == (7, 7)


def test_huge_constants_overflow_to_inf_in_numpy_but_not_mpmath():
    args = (64, 6, 4, 7, 7, 1.0, 1.0, 1.0, 0.1)
    assert T.phi_prime(*args) == math.inf
    value = T.phi_prime(*args, backend="mpmath")
    assert isinstance(value, mpmath.mpf) and 1000 < float(mpmath.log10(value)) < 10000


@pytest.mark.parametrize("call,match", [
    (lambda: T.delta(-1, 1, 1, 1, 4), "rho must be a finite number >= 0"),
    (lambda: T.delta(1, 1, 1, 0, 4), "gamma must be a positive finite number"),
    (lambda: T.delta(1, 1, 1, math.inf, 4), "gamma must be a positive finite number"),
    (lambda: T.kappa2(0, 1), "m must be a number >= 1"),
    (lambda: T.kappa2(2, np.array([1.0, -1.0])), "rho_p must be a finite number >= 0"),
    (lambda: T.delta(1, 1, 1, 1, 4, backend="torch"), "backend must be one of"),
    (lambda: T.dims(4, 6, "NA"), "embedding must be one of"),
    (lambda: T.dims(4, 1, "BN"), "k must be an integer >= 2"),
    (lambda: T.delta(1, 1, 1, 1, sp.Integer(-2)), "d_emb must be a positive finite number"),
    (lambda: T.smoothing_distance_bound(4, "L1"), "regularizer must be one of"),
    (lambda: T.AttentionSetting(m=0, m_p=2, d_emb=3), "m must be >= 1"),
    (lambda: T.AttentionSetting(m=2, m_p=2, d_emb=3, tokens="cube"), "tokens must be one of"),
    (lambda: T.attention_sandwich("I.9", T.AttentionSetting(2, 2, 3)), "lemma must be one of"),
    (lambda: T.random_spectral((3, 3), -1.0), "norm must be a finite number >= 0"),
])
def test_bad_input_names_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_bad_types():
    with pytest.raises(TypeError, match="rho must be a real number"):
        T.delta("1", 1, 1, 1, 4)
    with pytest.raises(TypeError, match="needs numbers"):
        T.delta(sp.Symbol("x"), 1, 1, 1, 4, backend="numpy")
    with pytest.raises(TypeError, match="setting must be an AttentionSetting"):
        T.attention_sandwich("I.5", {"m": 2})


def test_table2_derived_matches_stored():
    derived = T.table2_derived()
    for bound, row in T.TABLE2_STORED.items():
        assert derived[bound] == row, bound
    # the softmax bound of Lemma I.3 shrinks with the number of keys
    assert derived["softmax (I.3)"]["m_p"] == -1


@pytest.mark.parametrize("embedding", [None, "OH", "BN"])
def test_table3_derived_matches_stored(embedding):
    stored = T.table3_stored()
    derived = T.table3_derived(embedding)
    s = T.table3_symbols()
    dE = T.dims(s["d"], s["k"], embedding)[0] if embedding else s["d_E"]
    for mu in (1, 2, 3, 4):
        for a, b in zip(derived[mu], stored[mu]):
            assert sp.simplify(sp.sympify(a) - sp.sympify(b).subs(s["d_E"], dE)) == 0


def test_eq170_terms_bound_the_four_term_max():
    k, dE, D, G1, G2, g = sp.symbols("k d_E d_emb Gamma1 Gamma2 gamma", positive=True)
    rng = np.random.default_rng(1)
    for _ in range(50):
        x = dict(k=int(rng.integers(2, 20)), d=float(rng.uniform(0.5, 8)), Gamma1=float(rng.uniform(0.01, 2)),
                 Gamma2=float(rng.uniform(0.01, 2)), gamma=float(rng.uniform(0.01, 2)), n=int(rng.integers(2, 50)))
        d_E = x["d"] + float(rng.uniform(0, 4))
        d_emb = float(rng.uniform(1, 40))
        assert T.phi_eq170(x["k"], d_E, d_emb, x["Gamma1"], x["Gamma2"], x["gamma"]) >= \
            T.phi(x["n"], x["k"], x["d"], d_E, d_emb, x["Gamma1"], x["Gamma2"], x["gamma"]) * (1 - 1e-12)


def test_batched_attention_equals_library_operator():
    g = torch.Generator().manual_seed(0)
    Z = torch.rand(3, 5, 4, generator=g, dtype=torch.float64)
    Zp = torch.rand(3, 6, 4, generator=g, dtype=torch.float64)
    W = [T.random_spectral((3, 4, 4), 1.5, generator=g) for _ in range(3)]
    ours = T._attn(Z, Zp, *W, 0.7)
    lib = torch.cat([distance_attention(Z[i:i + 1], Zp[i:i + 1], W[0][i], W[1][i], W[2][i], 0.7) for i in range(3)])
    assert torch.allclose(ours, lib, atol=1e-13)
    assert torch.allclose(T._spec(W[0]), torch.full((3,), 1.5, dtype=torch.float64))


def test_eq4_layer_equals_exact_transformer():
    X, C = sample_tasks(2, 20, 3, 4, seed=1, dtype=torch.float64)
    for emb in ("OH", "BN"):
        model = exact_transformer(3, 4, embedding=emb, gamma=2.0)
        Q, K, V = theorem_weights(3, 4, emb)
        F = T.one_layer(X, C, Q, K, V, emb, 2.0)
        assert torch.allclose(F, model(X, C), atol=1e-12)


def test_lemma_I1_bounds_hold_on_forward_passes():
    X, C = sample_tasks(4, 30, 3, 6, seed=2, dtype=torch.float64)
    g = torch.Generator().manual_seed(2)
    for emb in ("OH", "BN"):
        d_E, D = T.dims(3, 6, emb)
        nb = T.norm_bounds(3, d_E, 1.5)
        Q, K, V = (T.random_spectral((4, D, D), s, generator=g) for s in (0.8, 0.8, 1.5))
        _, (X0, C0, X1, C1) = T.one_layer(X, C, Q, K, V, emb, 1.0, return_tokens=True)
        for name, Z in (("X0", X0), ("C0", C0), ("X1", X1), ("C1", C1), ("C1_composed", C1)):
            assert float(Z.norm(dim=-1).max()) <= nb[name] * (1 + 1e-12), (emb, name)


def test_lemma_I3_as_stated_has_a_counterexample_and_the_sharp_constant_holds():
    # v = 0, v' = eps e_1, m = 3: ratio 4/9 against e^eps/3
    eps, m = 1e-3, 3
    v, w = torch.zeros(m, dtype=torch.float64), torch.zeros(m, dtype=torch.float64)
    w[0] = eps
    ratio = float((torch.softmax(v, 0) - torch.softmax(w, 0)).abs().sum() / eps)
    assert ratio > 1.3 * T.softmax_bound(eps, m)
    assert ratio <= T.softmax_l1_sharp(eps, m)
    res = T.softmax_sandwich(8, 0.3, restarts=8, steps=60, random_pairs=128)
    assert res["stated"].violated and not res["sharp"].violated
    assert res["linf"] <= res["linf_bound"]


SETTING = T.AttentionSetting(m=3, m_p=4, d_emb=3, gamma=0.5, Gamma1=1.0, Gamma2=1.0, rho=1.0, rho_p=1.0)


@pytest.mark.parametrize("lemma", T.LEMMAS)
def test_sandwich_holds_for_the_lemmas_constants(lemma):
    res = T.attention_sandwich(lemma, SETTING, restarts=8, steps=60, random_pairs=32)
    assert not res.violated, (res, res.pair)
    assert 0 < res.ratio <= res.bound


def test_sandwich_catches_a_wrong_constant():
    # kappa2 with a factor 1/2 too few: the values lemma is tight, so the sandwich must catch it
    wrong = 0.5 * T.kappa2(SETTING.m, SETTING.rho_p)
    res = T.attention_sandwich("I.5", SETTING, restarts=8, steps=60, random_pairs=32, bound=wrong)
    assert res.violated and res.ratio > 1.5 * wrong
    # kappa5 without its factor m (the sum over the m queries), at a small gamma where kappa5 is tight
    cold = T.AttentionSetting(m=3, m_p=4, d_emb=3, gamma=0.01)
    res = T.attention_sandwich("I.8", cold, restarts=8, steps=60, random_pairs=32, bound=cold.constant("I.8") / 3)
    assert res.violated and res.ratio > 2 * res.bound, res


def test_sharpened_query_and_key_constants():
    s = SETTING
    for lemma, f in (("I.6", T.kappa3_sharpened), ("I.7", T.kappa4_sharpened)):
        bound = f(s.m, s.rho, s.rho_p, s.Gamma1, s.Gamma2, s.gamma, s.d_emb)
        assert bound < s.constant(lemma)
        res = T.attention_sandwich(lemma, s, restarts=8, steps=100, random_pairs=32, bound=bound)
        assert not res.violated, res
        if lemma == "I.6":                     # the query constant is attained
            assert res.ratio > 0.95 * bound, res


def test_dispersion_bound_is_tight_in_the_ball():
    res = T.dispersion_sandwich(SETTING, restarts=8, steps=100, random_pairs=32)
    assert not res.violated and res.ratio > 0.99 * res.bound


def test_theorem_I1_max_form_has_a_counterexample_and_the_sum_holds():
    for emb in ("OH", "BN"):
        d_E, D = T.dims(3, 4, emb)
        ratio, *_ = T.phi_counterexample(3, 4, 8, emb, Gamma1=0.01)
        assert ratio > 1.3 * T.phi(8, 4, 3, d_E, D, 0.01, 1.0, 1.0)
        assert ratio <= T.phi_sum(8, 4, 3, d_E, D, 0.01, 1.0, 1.0)
    res = T.layer_sandwich(3, 4, 8, "BN", Gamma1=0.01, restarts=8, steps=80, random_pairs=16)
    assert res.violated                                      # the ascent finds it on its own
    d_E, D = T.dims(3, 4, "BN")
    assert res.ratio <= T.phi_sum(8, 4, 3, d_E, D, 0.01, 1.0, 1.0)


def test_theorem_I2_and_loss_lemmas_hold():
    res = T.layer_sandwich(2, 3, 6, "OH", target="loss", tau=1.0, restarts=4, steps=40, random_pairs=8)
    assert not res.violated
    res = T.loss_sandwich(2, 3, 6, "BN", tau=1.0, restarts=4, steps=40, random_pairs=8)
    assert not res.violated
    res = T.loss_vector_sandwich(4, 1.0, 0.5, restarts=4, steps=60)
    assert not res.violated
    r = torch.randn(1000, 5, dtype=torch.float64)
    for reg in T.REGULARIZERS:
        assert float(T.smoothing_distances(r, 1.0, reg).max()) <= T.smoothing_distance_bound(5, reg)


def test_local_lipschitz_is_the_dual_norm_of_the_gradient():
    X, C = sample_tasks(1, 12, 2, 3, seed=3, dtype=torch.float64)
    g = torch.Generator().manual_seed(3)
    _, D = T.dims(2, 3, "OH")
    Q, K, V = (T.random_spectral((4, D, D), 1.0, generator=g) for _ in range(3))
    alpha = float(T.local_lipschitz(X, C, Q, K, V, "OH", tau=0.5)[0])
    # a direction Delta with max spectral norm 1 gives |dL[Delta]| <= alpha, with equality for U V^T blocks
    from lloydlib.losses import smoothed_loss
    W = [w.clone().requires_grad_(True) for w in (Q, K, V)]
    grads = torch.autograd.grad(smoothed_loss(X, T.one_layer(X, C, *W, "OH", 1.0), 0.5).sum(), W)
    best = []
    for gw in grads:
        U, _, Vh = torch.linalg.svd(gw)
        best.append(U @ Vh)
    h = 1e-6
    L = lambda ws: float(smoothed_loss(X, T.one_layer(X, C, *ws, "OH", 1.0), 0.5).sum())
    slope = (L([w + h * b for w, b in zip((Q, K, V), best)]) - L([Q, K, V])) / h
    assert slope == pytest.approx(alpha, rel=1e-4)
