"""lloydlib.theory.layer: the layer of Eq. 4, Lemma I.1 and Theorems I.1, I.2 on it."""

import pytest
import torch

from lloydlib import theory as T
from lloydlib.construction import exact_transformer, theorem_weights
from lloydlib.tasks import sample_tasks


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


def test_norm_sandwich_stays_below_and_near_lemma_I1():
    res = T.norm_sandwich(2, 3, 5, "BN", restarts=4, steps=40, random_pairs=8)
    assert set(res) == {"X0", "C0", "X1", "C1"}
    assert not any(r.violated for r in res.values())
    assert res["X0"].ratio > 0.9 * res["X0"].bound  # sqrt(d) is reached by points near 1_d


def test_theorem_I1_max_form_has_a_counterexample_and_the_sum_holds():
    for emb in ("OH", "BN"):
        d_E, D = T.dims(3, 4, emb)
        ratio, *_ = T.phi_counterexample(3, 4, 8, emb, Gamma1=0.01)
        assert ratio > 1.3 * T.phi(8, 4, 3, d_E, D, 0.01, 1.0, 1.0)
        assert ratio <= T.phi_sum(8, 4, 3, d_E, D, 0.01, 1.0, 1.0)
    res = T.layer_sandwich(3, 4, 8, "BN", Gamma1=0.01, restarts=8, steps=80, random_pairs=16)
    assert res.violated  # the ascent finds it on its own
    d_E, D = T.dims(3, 4, "BN")
    assert res.ratio <= T.phi_sum(8, 4, 3, d_E, D, 0.01, 1.0, 1.0)


def test_theorem_I2_holds():
    res = T.layer_sandwich(2, 3, 6, "OH", target="loss", tau=1.0, restarts=4, steps=40, random_pairs=8)
    assert not res.violated and res.name == "Theorem I.2"


@pytest.mark.parametrize(
    "call,exc,match",
    [
        (lambda: T.layer_sandwich(0, 3, 6, "OH"), ValueError, "d must be >= 1"),
        (lambda: T.layer_sandwich(2, 1, 6, "OH"), ValueError, "k must be >= 2"),
        (lambda: T.layer_sandwich(2, 3, 6, "NA"), ValueError, "embedding must be one of"),
        (lambda: T.layer_sandwich(2, 3, 6, "OH", target="grad"), ValueError, "target must be one of"),
        (lambda: T.layer_sandwich(2, 3, 6, "OH", Gamma1=-1.0), ValueError, "Gamma1 must be >= 0"),
        (lambda: T.layer_sandwich(2, 3, 6, "OH", regularizer="L1"), ValueError, "regularizer must be one of"),
        (lambda: T.layer_sandwich(2, 3, 6, "OH", bound=0.0), ValueError, "bound must be > 0"),
        (lambda: T.norm_sandwich(2, 3, 6, "OH", gamma=0.0), ValueError, "gamma must be > 0"),
        (lambda: T.norm_sandwich(2, 3, 6, "OH", steps=1.5), TypeError, "steps must be an integer"),
        (lambda: T.phi_counterexample(2, 3, 6, "OH", h=0.0), ValueError, "h must be > 0"),
        (
            lambda: T.eq4_layer(torch.ones(1, 2, 3), torch.ones(1, 2, 3), *[torch.ones(3, 3, 3)] * 3),
            ValueError,
            r"Q must have shape \(4, d_emb, d_emb\)",
        ),
        (
            lambda: T.one_layer(torch.ones(1, 2, 3), torch.ones(1, 2, 3), None, None, None, "SC"),
            ValueError,
            "embedding must be one of",
        ),
    ],
)
def test_bad_input_names_the_argument(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
