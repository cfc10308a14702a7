"""Tests for lloydlib.attention_clustering.sphere: steps on the sphere, initialisations, distances, training."""

import math

import pytest
import sympy as sp
import torch

from lloydlib import attention_clustering as q

Z_TOL = 4.0  # Monte Carlo agreement: |MC - exact| <= Z_TOL standard errors


def assert_mc(values, exact, what=""):
    mean, se = q.mean_and_se(values)
    assert abs(mean - exact) <= Z_TOL * se, f"{what}: MC {mean:.5f} +- {se:.5f} vs exact {exact:.5f}"


def test_sphere_steps():
    Lam = torch.nn.functional.normalize(torch.randn(3, 2, 5, dtype=torch.float64), dim=-1)
    grad = torch.randn(3, 2, 5, dtype=torch.float64)
    for update in ("riemannian", "projected"):
        assert torch.allclose(q.sphere_step(Lam, grad, 0.3, update).norm(dim=-1), torch.ones(3, 2, dtype=torch.float64))
    assert torch.allclose(q.sphere_step(Lam, 2.5 * Lam, 0.3, "riemannian"), Lam)  # radial gradient: no move
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
    res = q.train_heads(
        mu, sigma, 1 / (0.5 + sigma**2), init="manifold", lr=0.2, steps=800, runs=3, record_every=100, seed=1
    )
    assert res.distance.shape == (3, 9) and res.steps.tolist() == list(range(0, 801, 100))
    assert res.overlap.shape == (3, 9) and float(res.overlap.max()) < 1e-12  # orthogonal on M
    assert float(res.distance[:, -1].max()) < 1e-10
    assert float(res.violation.max()) < 1e-12
    sphere = q.train_heads(mu, sigma, 1 / (0.5 + sigma**2), init="sphere", lr=0.2, steps=800, runs=3, seed=1)
    assert float(sphere.subspace[:, -1].max()) < 1e-8  # the plane is found ...
    assert float(sphere.distance[:, -1].min()) > 1e-3  # ... but not the centroids (R1 symmetry)


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


def test_population_pgd_rate_on_the_manifold():
    """Near the centroids each step multiplies the distance by 1 + 2 lr f'(1)."""
    s = q.symbols()
    mu = q.orthonormal_centroids(2, 6, seed=4)
    sigma, lr = 0.5, 0.3
    c = 0.5 / (0.5 + sigma**2)
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


def test_shared_training_equals_separate_calls():
    """train_heads_shared trains settings of one seed side by side: each result is train_heads's, bit for bit."""
    mu = q.orthonormal_centroids(2, 5, seed=0)
    settings = {
        ("R1", 0.3): dict(sigma=0.3, c=0.1 / 0.59, form="R1", init="manifold", lr=0.5),
        ("R2", 0.3): dict(sigma=0.3, c=0.1 / 0.59, form="R2", init="sphere", penalty=0.1, lr=1.0),
        ("R2", 1.0): dict(sigma=1.0, c=0.1 / 1.5, form="R2", init="manifold", update="projected", lr=1.0),
    }
    for L in (6, None):  # stochastic (shared prompts) and population PGD
        common = dict(L=L, batch=32, steps=30, runs=2, record_every=7, seed=3)
        shared = q.train_heads_shared(mu, settings, **common)
        assert list(shared) == list(settings)
        for key, kw in settings.items():
            alone = q.train_heads(mu, **kw, **common)
            assert all(torch.equal(a, b) for a, b in zip(shared[key], alone)), (L, key)
    with pytest.raises(ValueError, match="settings must be"):
        q.train_heads_shared(mu, {})
    with pytest.raises(TypeError):
        q.train_heads_shared(mu, {0: dict(c=1.0)})  # sigma missing
    with pytest.raises(ValueError, match="form"):
        q.train_heads_shared(mu, {0: dict(sigma=0.3, c=1.0, form="R3")})
