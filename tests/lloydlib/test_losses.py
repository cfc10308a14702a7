"""Tests of lloydlib.losses: Eq. 5, the smoothed upper bound of Eqs. 24-29, and Eq. 20."""

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import lloydlib as L
from lloydlib import losses


def sparsemax_reference(z: np.ndarray) -> np.ndarray:
    """Sparsemax of each row of z, written from Eq. 28 of the Leaner paper (sort, support size, kappa)."""
    out = np.empty_like(z)
    for row, zr in enumerate(z):
        s = np.sort(zr)[::-1]
        cums = np.cumsum(s)
        m = np.arange(1, len(s) + 1)
        N = m[1 + m * s > cums].max()  # N(z) = max{m : 1 + m z_(m) > sum_{j<=m} z_(j)}
        kappa = (cums[N - 1] - 1) / N
        out[row] = np.maximum(zr - kappa, 0)
    return out


def loss_by_hand(X, C, tau, reg):
    """Eq. 29 / Eq. 26 with explicit loops over tasks and points, in numpy float64."""
    X, C = X.double().numpy(), C.double().numpy()
    out = []
    for b in range(X.shape[0]):
        total = 0.0
        for x in X[b]:
            r = ((x[None] - C[b]) ** 2).sum(-1)
            z = -r / tau
            if reg == "NE":
                p = np.exp(z - z.max())
                p /= p.sum()
            else:
                p = sparsemax_reference(z[None])[0]
            total += float(p @ r)
        out.append(total)
    return np.array(out)


@given(seed=st.integers(0, 10_000), k=st.integers(2, 12))
def test_entmax_sparsemax_agrees_with_equation_28(seed, k):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(20, k)) * rng.choice([0.01, 1.0, 30.0])
    ours = losses.regularized_argmax(torch.from_numpy(z), "L2").numpy()
    np.testing.assert_allclose(ours, sparsemax_reference(z), atol=1e-12)
    assert np.allclose(ours.sum(1), 1) and (ours >= 0).all()


@pytest.mark.parametrize("reg", losses.REGULARIZERS)
@pytest.mark.parametrize("tau", [0.05, 0.3, 2.0])
def test_smoothed_loss_matches_the_equations_by_hand(reg, tau):
    X, C = L.sample_tasks(3, 25, 3, 5, seed=11, dtype=torch.float64)
    C = C + 0.05 * torch.randn(C.shape, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    np.testing.assert_allclose(losses.smoothed_loss(X, C, tau, reg).numpy(), loss_by_hand(X, C, tau, reg), rtol=1e-10)


@given(
    seed=st.integers(0, 10_000), k=st.integers(2, 8), tau=st.floats(1e-3, 1e3), reg=st.sampled_from(losses.REGULARIZERS)
)
def test_kmeans_loss_is_a_lower_bound(seed, k, tau, reg):
    X, C = L.sample_tasks(4, 30, 3, k, seed=seed, dtype=torch.float64)
    C = C.roll(1, dims=0) if seed % 2 else C  # centers that do not sit on the points too
    exact = L.kmeans_objective(X, C)
    smooth = losses.smoothed_loss(X, C, tau, reg)
    assert bool((smooth >= exact - 1e-12 * (1 + exact)).all())
    assert bool((losses.smoothing_gap(X, C, tau, reg) >= -1e-12 * (1 + exact)).all())


def test_kmeans_loss_is_equation_5():
    X = torch.tensor([[[0.0, 0.0], [1.0, 0.0], [4.0, 0.0]]], dtype=torch.float64)
    C = torch.tensor([[[0.0, 0.0], [3.0, 0.0]]], dtype=torch.float64)
    assert torch.equal(L.kmeans_objective(X, C), torch.tensor([0.0 + 1.0 + 1.0], dtype=torch.float64))


def test_ne_tends_to_the_kmeans_loss_as_tau_goes_to_zero():
    X, C = L.sample_tasks(3, 40, 4, 6, seed=2, dtype=torch.float64)
    C = C + 0.02
    exact = L.kmeans_objective(X, C)
    gaps = [float((losses.smoothed_loss(X, C, tau, "NE") - exact).max()) for tau in (1.0, 0.1, 1e-2, 1e-3, 1e-5)]
    assert all(a > b for a, b in zip(gaps, gaps[1:]))  # strictly tighter as tau falls
    assert gaps[-1] < 1e-8


def test_l2_equals_the_kmeans_loss_at_positive_tau_when_the_margin_is_large():
    # sparsemax puts all weight on the nearest center when (r_(2) - r_(1)) / tau >= 1 for every point
    g = torch.Generator().manual_seed(5)
    C = torch.tensor([[0.1, 0.1], [0.9, 0.1], [0.1, 0.9], [0.9, 0.9]], dtype=torch.float64).expand(3, -1, -1)
    labels = torch.randint(4, (3, 40), generator=g)
    X = C.gather(1, labels[..., None].expand(-1, -1, 2)) + 0.05 * torch.randn(
        3, 40, 2, generator=g, dtype=torch.float64
    )
    r = L.sqdist(X, C).sort(dim=2).values
    margin = float((r[..., 1] - r[..., 0]).min())
    assert margin > 0
    tau = margin  # exactly the largest tau at which every point is hard-assigned
    exact = L.kmeans_objective(X, C)
    torch.testing.assert_close(losses.smoothed_loss(X, C, tau, "L2"), exact, rtol=1e-12, atol=1e-12)
    # NE at the same tau is strictly looser, and L2 loosens once tau passes the margin
    assert bool((losses.smoothed_loss(X, C, tau, "NE") > exact).all())
    assert float((losses.smoothed_loss(X, C, 4 * tau, "L2") - exact).max()) > 0


@pytest.mark.parametrize("reg", losses.REGULARIZERS)
def test_both_tend_to_the_mean_distance_as_tau_grows(reg):
    X, C = L.sample_tasks(3, 40, 4, 6, seed=8, dtype=torch.float64)
    mean_distance = L.sqdist(X, C).mean(dim=2).sum(dim=1)  # uniform weights 1/k
    errs = [
        float(((losses.smoothed_loss(X, C, tau, reg) - mean_distance) / mean_distance).abs().max())
        for tau in (1.0, 10.0, 1e3, 1e6)
    ]
    assert errs[-1] < 1e-5 and errs[-1] < errs[0]


def test_the_l2_gap_is_no_larger_than_the_ne_gap_at_the_same_tau_on_typical_tasks():
    # not a theorem point by point, but Prop. H.1's tighter bound shows on the paper's tasks
    X, C = L.sample_tasks(32, 128, 4, 6, seed=0, dtype=torch.float64)
    for tau in (1.0, 0.25, 0.1):
        assert float(losses.smoothing_gap(X, C, tau, "L2").mean()) < float(losses.smoothing_gap(X, C, tau, "NE").mean())


@pytest.mark.parametrize("reg", losses.REGULARIZERS)
def test_smoothed_loss_has_finite_gradients_even_at_distance_zero(reg):
    X, C = L.sample_tasks(2, 20, 3, 4, seed=1, dtype=torch.float64)  # C are points: distance 0
    C = C.clone().requires_grad_(True)
    losses.training_loss(X, C, 0.1, reg).backward()
    assert bool(torch.isfinite(C.grad).all()) and float(C.grad.abs().sum()) > 0


def test_gradcheck_of_the_ne_loss():
    X, C = L.sample_tasks(2, 10, 2, 3, seed=4, dtype=torch.float64)
    C = (C + 0.03).requires_grad_(True)
    assert torch.autograd.gradcheck(lambda c: losses.smoothed_loss(X, c, 0.3, "NE"), (C,))


def test_relative_loss_is_one_for_a_lloyd_step_and_below_for_two():
    X, C0 = L.sample_tasks(16, 60, 3, 5, seed=9, dtype=torch.float64)
    C1 = L.lloyd_step(X, C0)
    assert float(losses.relative_loss(X, C0, C1)) == pytest.approx(1.0, abs=1e-14)
    C2 = L.lloyd_step(X, C1)
    per_task = losses.relative_loss(X, C0, C2, reduction="none")
    assert per_task.shape == (16,) and bool((per_task <= 1 + 1e-12).all())
    # an expectation of ratios (the authors' code), not a ratio of expectations
    ratio = L.kmeans_objective(X, C2) / losses.lloyd_baseline(X, C0)
    assert float(losses.relative_loss(X, C0, C2)) == pytest.approx(float(ratio.mean()), rel=1e-14)
    base = losses.lloyd_baseline(X, C0)
    assert float(losses.relative_loss(X, C0, C2, baseline=base)) == float(losses.relative_loss(X, C0, C2))


@pytest.mark.parametrize(
    "call, exc, words",
    [
        (lambda X, C: losses.smoothed_loss(X, C, 0.0), ValueError, "tau"),
        (lambda X, C: losses.smoothed_loss(X, C, -1.0), ValueError, "tau"),
        (lambda X, C: losses.smoothed_loss(X, C, 0.1, "entropy"), ValueError, "regularizer"),
        (lambda X, C: losses.smoothed_loss(X, C[:, :, :2], 0.1), ValueError, "dimension d"),
        (lambda X, C: losses.smoothed_loss(X.numpy(), C, 0.1), TypeError, "torch.Tensor"),
        (lambda X, C: losses.relative_loss(X, C, C[:1]), ValueError, "batch size"),
        (lambda X, C: losses.relative_loss(X, C, C * float("nan")), ValueError, "finite"),
        (lambda X, C: losses.relative_loss(X, C, C, reduction="sum"), ValueError, "reduction"),
        (
            lambda X, C: losses.relative_loss(X, C, C, baseline=torch.ones(3, dtype=torch.float64)),
            ValueError,
            "one value per task",
        ),
        (lambda X, C: losses.relative_loss(X[:, :4], C, C), ValueError, "undefined"),
    ],
)
def test_bad_input_raises_clear_error(call, exc, words):
    X, C = L.sample_tasks(2, 20, 3, 4, seed=0, dtype=torch.float64)
    with pytest.raises(exc, match=words):
        call(X, C)
