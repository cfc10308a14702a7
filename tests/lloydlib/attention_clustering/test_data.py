"""Tests for lloydlib.attention_clustering.data: orthonormal centroids, mixtures and prompts, M."""

import pytest
import torch

from lloydlib import attention_clustering as q

Z_TOL = 4.0  # Monte Carlo agreement: |MC - exact| <= Z_TOL standard errors


def assert_mc(values, exact, what=""):
    mean, se = q.mean_and_se(values)
    assert abs(mean - exact) <= Z_TOL * se, f"{what}: MC {mean:.5f} +- {se:.5f} vs exact {exact:.5f}"


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
    assert torch.equal(m.mu[0], m.mu[5])  # "fixed": one set for all prompts
    r = q.sample_mixture(6, 9, 5, 3, 0.4, centroids="random", seed=2)
    assert not torch.allclose(r.mu[0], r.mu[1])  # "random": a set per prompt
    again = q.sample_mixture(6, 9, 5, 3, 0.4, centroids="random", seed=2)
    assert torch.equal(r.X, again.X)
    dirac = q.sample_mixture(4, 8, 5, 2, 0.0, seed=3)  # sigma = 0: the Dirac mixture
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


@pytest.mark.parametrize(
    "call, exc, text",
    [
        (lambda: q.sample_mixture(2, 3, 2, 3, 0.1), ValueError, "k <= d"),
        (lambda: q.sample_mixture(2, 3, 4, 2, -0.1), ValueError, "sigma"),
        (lambda: q.sample_mixture(2, 3, 4, 2, 0.1, centroids="nope"), ValueError, "centroids"),
        (
            lambda: q.sample_mixture(2, 3, 4, 2, 0.1, centroids=2 * torch.eye(4, dtype=torch.float64)[:2]),
            ValueError,
            "orthonormal",
        ),
        (lambda: q.sample_mixture(0, 3, 4), ValueError, "batch"),
        (lambda: q.orthonormal_centroids(5, 3), ValueError, "k <= d"),
        (lambda: q.second_moment(torch.ones(3), 0.1), ValueError, "mu"),
    ],
)
def test_data_validation(call, exc, text):
    with pytest.raises(exc, match=text):
        call()
