"""Unit tests of lloydlib.generalisation.landscape: filter-normalised directions, surfaces, their measures."""

import numpy as np
import pytest
import torch

import lloydlib as L
from lloydlib import losses
from lloydlib.generalisation import landscape as LS
from lloydlib.model import LearnableTransformer


@pytest.fixture
def model():
    torch.manual_seed(0)
    return LearnableTransformer(2, 3, "BN")


@pytest.fixture
def tasks():
    return L.sample_tasks(4, 8, 2, 3, seed=5)


def test_directions_have_the_weights_row_norms_and_zero_biases(model):
    delta = LS.filter_normalized_direction(model, 1)
    assert set(delta) == {n for n, _ in model.named_parameters()}
    for name in LS.FILTER_PARAMS:
        w = getattr(model, name).detach()
        assert delta[name].shape == w.shape
        torch.testing.assert_close(delta[name].norm(dim=-1), w.norm(dim=-1))
        assert not torch.allclose(delta[name], w)  # a random direction, not the weights
    for name in ("bQ", "bK", "bV"):
        assert torch.count_nonzero(delta[name]) == 0


def test_directions_are_seeded_and_the_pair_differs(model):
    a1, b1 = LS.random_directions(model, 3)
    a2, b2 = LS.random_directions(model, 3)
    a3, _ = LS.random_directions(model, 4)
    torch.testing.assert_close(a1["Q"], a2["Q"])
    torch.testing.assert_close(b1["V"], b2["V"])
    assert not torch.allclose(a1["Q"], b1["Q"])
    assert not torch.allclose(a1["Q"], a3["Q"])


def test_a_zero_row_of_weights_gets_a_zero_row_of_direction(model):
    with torch.no_grad():
        model.K[1, 0].zero_()
    delta = LS.filter_normalized_direction(model, 0)
    assert torch.count_nonzero(delta["K"][1, 0]) == 0


def test_grid_coordinates_are_odd_and_centred():
    c = LS.grid_coordinates(0.5, 5)
    np.testing.assert_allclose(c, [-0.5, -0.25, 0, 0.25, 0.5])
    assert c[2] == 0.0
    with pytest.raises(ValueError, match="grid must be odd"):
        LS.grid_coordinates(1.0, 4)
    with pytest.raises(ValueError, match="radius"):
        LS.grid_coordinates(-1.0, 5)


def test_surface_centre_is_the_unperturbed_loss_and_weights_are_restored(model, tasks):
    X, C0 = tasks
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    model.train()

    def loss_fn(m):
        return losses.training_loss(X, m(X, C0), 0.1, "L2")

    S = LS.loss_surface(model, loss_fn, LS.random_directions(model, 0), radius=0.5, grid=5)
    assert S.shape == (5, 5)
    with torch.no_grad():
        assert S[2, 2] == pytest.approx(float(loss_fn(model)), rel=1e-6)
    for n, p in model.named_parameters():
        assert torch.equal(p.detach(), before[n]), n
    assert model.training  # the mode is restored too
    assert not np.allclose(S, S[2, 2])  # the plane moves the loss


def test_weights_are_restored_when_the_loss_raises(model):
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    calls = []

    def bad(m):
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("boom")
        return 0.0

    with pytest.raises(RuntimeError, match="boom"):
        LS.loss_surface(model, bad, LS.random_directions(model, 0), grid=3)
    for n, p in model.named_parameters():
        assert torch.equal(p.detach(), before[n]), n


def test_float64_works_on_a_copy(model, tasks):
    X, C0 = tasks
    seen = []

    def loss_fn(m):
        seen.append(m.Q.dtype)
        return L.kmeans_objective(X.double(), m(X.double(), C0.double())).mean()

    S = LS.loss_surface(model, loss_fn, LS.random_directions(model, 0), grid=3, dtype=torch.float64)
    assert set(seen) == {torch.float64} and model.Q.dtype == torch.float32
    assert np.isfinite(S).all()


def test_a_quadratic_toy_loss_has_one_minimum_at_the_centre(model):
    theta = {n: p.detach().clone() for n, p in model.named_parameters()}

    def quad(m):  # minimised by the trained weights
        return sum(float(((p - theta[n]) ** 2).sum()) for n, p in m.named_parameters()) + 1.0

    S = LS.loss_surface(model, quad, LS.random_directions(model, 2), grid=7)
    assert LS.local_minima(S) == [(3, 3)]
    assert LS.minimum_offset(S) == 0
    assert S[3, 3] == pytest.approx(1.0)


def test_task_surfaces_stacked_equal_the_plain_loop(model, tasks):
    X, C0 = tasks
    dirs = LS.random_directions(model, 1)
    fast = LS.task_surfaces(model, X, C0, dirs, tau=0.1, regularizer="L2", grid=3, radius=0.5)
    slow = LS.task_surfaces(model, X, C0, dirs, tau=0.1, regularizer="L2", grid=3, radius=0.5, stacked=False)
    for k in LS.SURFACE_KINDS:
        np.testing.assert_allclose(fast[k], slow[k], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(fast["gap"], fast["smoothed"] - fast["kmeans"], atol=1e-12)
    assert (fast["gap"] >= -1e-12).all()
    Xd, Cd = X.double(), C0.double()
    m64 = LearnableTransformer(2, 3, "BN", dtype=torch.float64)
    m64.load_state_dict({n: p.double() for n, p in model.state_dict().items()})
    with torch.no_grad():
        C = m64(Xd, Cd)
    assert fast["smoothed"][1, 1] == pytest.approx(float(losses.smoothed_loss(Xd, C, 0.1, "L2").mean()), rel=1e-10)
    gap = LS.smoothing_gap_surface(model, X, C0, dirs, tau=0.1, regularizer="L2", grid=3, radius=0.5)
    np.testing.assert_allclose(gap, fast["gap"])


def test_local_minima_counts_strict_minima_with_edges():
    S = np.array([[3.0, 2, 3], [2, 1, 2], [3, 2, 3]])
    assert LS.local_minima(S) == [(1, 1)]
    two = np.array([[0.0, 5, 5, 5], [5, 5, 5, 5], [5, 5, 5, 0]])
    assert LS.local_minima(two) == [(0, 0), (2, 3)]
    assert LS.local_minima(np.ones((3, 3))) == []  # ties are not strict
    assert LS.minimum_offset(two) == 2  # the first lowest point, (0, 0), two columns from the centre (1, 2)
    assert LS.minimum_offset(S) == 0


def test_surface_distance_compares_shapes_not_levels():
    A = np.array([[2.0, 1.5, 2], [1.5, 1, 1.5], [2, 1.5, 2]])
    assert LS.surface_distance(A, 10 * A) == pytest.approx(0.0)
    B = A.copy()
    B[0, 0] = 4.0
    assert LS.surface_distance(A, B) == pytest.approx(np.log(2) / 3)
    with pytest.raises(ValueError, match="one shape"):
        LS.surface_distance(A, np.ones((5, 5)))
    with pytest.raises(ValueError, match="positive"):
        LS.surface_distance(A, A - 1)


def test_bad_input_is_named(model, tasks):
    X, C0 = tasks
    dirs = LS.random_directions(model, 0)
    with pytest.raises(TypeError, match="model"):
        LS.random_directions("model", 0)
    with pytest.raises(ValueError, match="seed"):
        LS.filter_normalized_direction(model, -1)
    with pytest.raises(TypeError, match="loss_fn"):
        LS.loss_surface(model, 3, dirs)
    with pytest.raises(TypeError, match="directions"):
        LS.loss_surface(model, lambda m: 0.0, dirs[0])
    with pytest.raises(ValueError, match="delta"):
        LS.loss_surface(model, lambda m: 0.0, ({"Q": dirs[0]["Q"]}, dirs[1]))
    with pytest.raises(ValueError, match="kinds"):
        LS.task_surfaces(model, X, C0, dirs, tau=0.1, regularizer="L2", kinds=("loss",))
    with pytest.raises(ValueError, match="regularizer"):
        LS.task_surfaces(model, X, C0, dirs, tau=0.1, regularizer="L1")
    with pytest.raises(ValueError, match="tau"):
        LS.task_surfaces(model, X, C0, dirs, tau=0.0, regularizer="L2")
    with pytest.raises(ValueError, match="surface"):
        LS.local_minima(np.ones(4))
    with pytest.raises(ValueError, match="finite"):
        LS.minimum_offset(np.full((3, 3), np.nan))


def test_mean_log_rise_measures_steepness():
    flat = np.ones((3, 3))
    assert LS.mean_log_rise(flat) == 0.0
    S = np.full((3, 3), 2.0)
    S[1, 1] = 1.0
    assert LS.mean_log_rise(S) == pytest.approx(8 / 9 * np.log(2))
    assert LS.mean_log_rise(3 * S) == pytest.approx(LS.mean_log_rise(S))  # the level does not matter
    with pytest.raises(ValueError, match="positive"):
        LS.mean_log_rise(S - 5)
