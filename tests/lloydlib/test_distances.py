"""Tests of lloydlib.distances.sqdist, the one squared-distance kernel: exact on the direct path, within the
returned tolerance on the expanded path, finite gradients at distance 0."""

import importlib

import pytest
import torch

import lloydlib as L
from lloydlib import distances, losses
from lloydlib.distances import DIRECT_LIMIT, sqdist
from lloydlib.tasks import sample_tasks

F64 = torch.float64


def brute_force(A, B):
    return torch.stack(
        [torch.stack([((A[b, i] - B[b]) ** 2).sum(-1) for i in range(A.shape[1])]) for b in range(A.shape[0])]
    )


def test_is_the_one_kernel_reexported_by_lloyd():
    lloyd = importlib.import_module("lloydlib.lloyd")  # ``lloydlib.lloyd`` the attribute is the function
    assert lloyd.sqdist is distances.sqdist and L.sqdist is distances.sqdist


def test_direct_path_matches_brute_force_and_has_zero_tolerance():
    A, B = torch.rand(3, 7, 4, dtype=F64), torch.rand(3, 5, 4, dtype=F64)
    D = sqdist(A, B)
    assert D.shape == (3, 7, 5)
    torch.testing.assert_close(D, brute_force(A, B), atol=1e-14, rtol=0)
    D2, tol = sqdist(A, B, tolerance=True)
    assert torch.equal(D2, D) and tol.shape == (3, 7, 1) and float(tol.abs().max()) == 0.0


def test_direct_path_gives_exact_zeros_and_exact_ties():
    A = torch.rand(1, 6, 3, dtype=torch.float32)
    A[:, 1] = A[:, 0]
    D = sqdist(A, A)
    assert float(D.diagonal(dim1=1, dim2=2).abs().max()) == 0.0
    assert torch.equal(D[:, :, 0], D[:, :, 1])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_expanded_path_is_within_its_tolerance(dtype):
    n, p = 1500, 8
    assert n * n * p > DIRECT_LIMIT  # the expansion ||a||^2 + ||b||^2 - 2 a.b is taken
    A = torch.rand(1, n, p, dtype=dtype) * 10
    D, tol = sqdist(A, A, tolerance=True)
    assert D.shape == (1, n, n) and tol.shape == (1, n, 1)
    assert float(D.min()) >= 0.0  # clamped
    exact = ((A[:, :50, None].double() - A[:, None].double()) ** 2).sum(-1)
    assert bool(((D[:, :50].double() - exact).abs() <= tol[:, :50].double()).all())
    assert bool((D.diagonal(dim1=1, dim2=2)[..., None] <= tol).all())  # self-distance counts as a tie with 0
    assert torch.equal(sqdist(A, A), D)


def test_gradients_finite_at_distance_zero():
    A = torch.rand(2, 4, 3, dtype=F64, requires_grad=True)
    sqdist(A, A).sum().backward()
    assert bool(torch.isfinite(A.grad).all())


def test_expand_forces_either_form_and_names_a_bad_value():
    g = torch.Generator().manual_seed(3)
    A, B = torch.rand(2, 7, 3, generator=g, dtype=torch.float64), torch.rand(2, 5, 3, generator=g, dtype=torch.float64)
    direct, tol = sqdist(A, B, expand=False, tolerance=True)
    expanded, etol = sqdist(A, B, expand=True, tolerance=True)
    assert bool((tol == 0).all()) and bool((etol > 0).all())  # small inputs expand only when asked
    assert bool(((direct - expanded).abs() <= etol).all())
    with pytest.raises(TypeError, match="expand must be None, True or False, got 'yes'"):
        sqdist(A, B, expand="yes")


def test_training_loss_uses_the_expanded_distances():
    X, C = sample_tasks(4, 30, 3, 5, seed=1, dtype=torch.float64)
    for reg in ("NE", "L2"):
        exact = losses.smoothed_loss(X, C, 0.1, reg).mean()
        torch.testing.assert_close(losses.training_loss(X, C, 0.1, reg), exact, rtol=1e-12, atol=0)
