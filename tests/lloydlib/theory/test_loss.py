"""lloydlib.theory.loss: Lemma I.2, Props. H.1 and H.2, and the measured local Lipschitz constant."""

import pytest
import torch

from lloydlib import theory as T
from lloydlib.losses import smoothed_loss
from lloydlib.tasks import sample_tasks


def test_loss_lemmas_hold():
    res = T.loss_sandwich(2, 3, 6, "BN", tau=1.0, restarts=4, steps=40, random_pairs=8)
    assert not res.violated and res.name == "Lemma I.2"
    res = T.loss_vector_sandwich(4, 1.0, 0.5, restarts=4, steps=60)
    assert not res.violated and res.ratio > 0


def test_smoothing_distances_obey_prop_H1():
    r = torch.randn(1000, 5, dtype=torch.float64)
    for reg in T.REGULARIZERS:
        dist = T.smoothing_distances(r, 1.0, reg)
        assert dist.shape == (1000,)
        assert float(dist.max()) <= T.smoothing_distance_bound(5, reg)
    far = torch.tensor([[0.0, 100.0, 100.0]], dtype=torch.float64)
    assert float(T.smoothing_distances(far, 1.0, "L2")[0]) == 0.0  # sparsemax is exact with a large margin


def test_local_lipschitz_is_the_dual_norm_of_the_gradient():
    X, C = sample_tasks(1, 12, 2, 3, seed=3, dtype=torch.float64)
    g = torch.Generator().manual_seed(3)
    _, D = T.dims(2, 3, "OH")
    Q, K, V = (T.random_spectral((4, D, D), 1.0, generator=g) for _ in range(3))
    alpha = float(T.local_lipschitz(X, C, Q, K, V, "OH", tau=0.5)[0])
    # a direction Delta with max spectral norm 1 gives |dL[Delta]| <= alpha, with equality for U V^T blocks
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


X1, C1 = sample_tasks(1, 6, 2, 3, seed=0, dtype=torch.float64)
W1 = torch.zeros(4, 5, 5, dtype=torch.float64)


@pytest.mark.parametrize(
    "call,exc,match",
    [
        (lambda: T.loss_sandwich(2, 3, 6, "BN", tau=0.0), ValueError, "tau must be > 0"),
        (lambda: T.loss_sandwich(2, 3, 6, "BN", regularizer="L1"), ValueError, "regularizer must be one of"),
        (lambda: T.loss_sandwich(2, 3, 6, "BN", Gamma2=-1.0), ValueError, "Gamma2 must be >= 0"),
        (lambda: T.loss_sandwich(2, 3, 6, "BN", random_pairs=0), ValueError, "random_pairs must be >= 1"),
        (lambda: T.loss_vector_sandwich(1, 1.0, 0.5), ValueError, "k must be >= 2"),
        (lambda: T.loss_vector_sandwich(3, 0.0, 0.5), ValueError, "r_star_value must be > 0"),
        (lambda: T.loss_vector_sandwich(3, 1.0, 0.5, lr=0.0), ValueError, "lr must be > 0"),
        (lambda: T.smoothing_distances(torch.ones(3, 2), 0.0, "NE"), ValueError, "tau must be > 0"),
        (lambda: T.smoothing_distances(torch.ones(3, 2), 1.0, "L1"), ValueError, "regularizer must be one of"),
        (lambda: T.smoothing_distances([1.0, 2.0], 1.0, "NE"), TypeError, "r must be a torch.Tensor"),
        (lambda: T.local_lipschitz(X1[0], C1, W1, W1, W1, "OH"), ValueError, "X must have 3 dimensions"),
        (lambda: T.local_lipschitz(X1, C1[:, :, :1], W1, W1, W1, "OH"), ValueError, "C must have the same dimension"),
        (lambda: T.local_lipschitz(X1, C1, "Q", W1, W1, "OH"), TypeError, "Q must be a torch.Tensor"),
        (lambda: T.local_lipschitz(X1, C1, W1, W1, W1, "OH", tau=-1.0), ValueError, "tau must be > 0"),
        (lambda: T.local_lipschitz(X1, C1, W1, W1, W1, "OH", gamma=0.0), ValueError, "gamma must be > 0"),
    ],
)
def test_bad_input_names_the_argument(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
