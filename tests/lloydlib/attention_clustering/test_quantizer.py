"""Tests for lloydlib.attention_clustering.quantizer: the identity-QKV layer and the baselines."""

import pytest
import torch
from _support import assert_raises_naming

from lloydlib import attention_clustering as q

Z_TOL = 4.0  # Monte Carlo agreement: |MC - exact| <= Z_TOL standard errors


def assert_mc(values, exact, what=""):
    mean, se = q.mean_and_se(values)
    assert abs(mean - exact) <= Z_TOL * se, f"{what}: MC {mean:.5f} +- {se:.5f} vs exact {exact:.5f}"


def test_baselines():
    d, sigma = 5, 1.0
    m = q.sample_mixture(20000, 12, d, 2, sigma, centroids="random", seed=11)
    assert_mc(q.reconstruction_error(m.X, q.optimal_quantizer(m.mu, m.Z)), sigma**2 * d, "T*")
    nc = q.nearest_centroid_quantizer(m.X, m.mu)
    assert_mc(q.reconstruction_error(m.X, nc), q.nearest_centroid_risk(d, sigma), "nearest centroid")
    dist = ((m.X[:, :, None, :] - m.mu[:, None]) ** 2).sum(-1)
    assert torch.equal(((m.X - nc) ** 2).sum(-1), dist.amin(-1))
    # PCA projects on the top-2 eigenvectors of Mhat; its risk tends to sigma^2 (d - 2) as L grows
    big = q.sample_mixture(200, 2000, d, 2, sigma, centroids="random", seed=12)
    pca = q.reconstruction_error(big.X, q.pca_quantizer(big.X, 2))
    assert abs(q.mean_and_se(pca)[0] - sigma**2 * (d - 2)) < 0.03
    assert q.nearest_centroid_risk(d, 0.0) == 0.0
    assert abs(q.nearest_centroid_risk(5, 1.0) - 4.60) < 0.005  # about 4.60, against sigma^2 d = 5


@pytest.mark.parametrize(
    "call, exc, text",
    [
        (lambda X: q.identity_layer(X[0], 1.0), ValueError, "X"),
        (lambda X: q.identity_layer(X, torch.zeros(2, dtype=torch.float64)), ValueError, "c"),
        (lambda X: q.reconstruction_error(X, X[:, :2]), ValueError, "T"),
        (lambda X: q.pca_quantizer(X, 5), ValueError, "k"),
        (lambda X: q.optimal_quantizer(torch.ones(2, 2, 4, dtype=torch.float64), torch.zeros(2, 3)), TypeError, "Z"),
    ],
)
def test_layer_validation(call, exc, text):
    X = q.sample_mixture(2, 3, 4, seed=0).X
    with pytest.raises(exc, match=text):
        call(X)


def test_plugin_scale_minimises_each_prompts_error():
    m = q.sample_mixture(50, 7, 5, 2, 0.6, centroids="random", seed=3)
    c_hat = q.plugin_scale(m.X)
    assert c_hat.shape == (50,) and bool((c_hat > 0).all())
    eig = torch.linalg.eigvalsh(m.X.transpose(1, 2) @ m.X / 7)  # tr(Mhat^k) = sum of eigenvalues^k
    assert torch.allclose(c_hat, (eig**2).sum(-1) / (eig**3).sum(-1))
    best = q.reconstruction_error(m.X, q.identity_layer(m.X, c_hat))
    for factor in (0.5, 0.99, 1.01, 2.0):  # every other scale, per prompt, does worse
        assert bool((q.reconstruction_error(m.X, q.identity_layer(m.X, factor * c_hat)) > best).all())
    assert torch.allclose(q.plugin_scale(3.0 * m.X), c_hat / 9)  # Mhat scales like t^2, c_hat like 1/t^2


def test_plugin_scale_tends_to_the_optimal_scale():
    d, sigma = 6, 0.5
    c_star = q.numeric(q.ClosedForms(2, "identity").scale_inf, d=d, sigma=sigma)
    big = q.sample_mixture(20, 20000, d, 2, sigma, centroids="random", seed=4)
    assert abs(float(q.plugin_scale(big.X).median()) / c_star - 1) < 0.01


def test_plugin_scale_validation():
    X = q.sample_mixture(3, 4, 5, seed=0).X
    X[1] = 0.0
    assert_raises_naming(lambda: q.plugin_scale(X), ValueError, ["X", "nonzero", "[1]"])
    assert_raises_naming(lambda: q.plugin_scale(X[0]), ValueError, ["X", "3 dimensions"])
