"""Tests of lloydlib.generalisation.multistep (Leaner paper, Appendix C): both modes of T steps of a one-layer
model against Lloyd's, exactness with Theorem B.1's weights, divergence reported as inf, chunking, the
summaries, and bad input."""

import math

import numpy as np
import pytest
import torch

import lloydlib as L
from lloydlib.generalisation.multistep import (
    MODES,
    lloyd_objectives,
    mean_log,
    model_objectives,
    multistep,
    objective_or_inf,
    seed_quartiles,
)
from lloydlib.model import LearnableTransformer

F64 = torch.float64


def _tasks(batch=6, n=24, d=3, k=4, seed=0, dtype=F64):
    return L.sample_tasks(batch, n, d, k, seed=seed, dtype=dtype)


def _random_model(d=3, k=4, embedding="BN", seed=0, dtype=F64):
    torch.manual_seed(seed)
    return LearnableTransformer(d, k, embedding, dtype=dtype)


@pytest.mark.parametrize("embedding", ["OH", "BN"])
def test_theorem_weights_run_lloyd_in_both_modes(embedding):
    # Theorem B.1: with gamma = inf the t-th layer is t Lloyd steps, whether re-embedded or iterated
    X, C0 = _tasks()
    model = LearnableTransformer(3, 4, embedding, gamma=math.inf, dtype=F64).load_theorem_weights()
    out = multistep(model, X, C0, 6)
    assert set(out) == {*MODES, "lloyd"}
    for mode in MODES:
        assert out[mode].shape == (6, 7)
        torch.testing.assert_close(out[mode], out["lloyd"], atol=1e-12, rtol=1e-12)


def test_reembed_is_the_model_applied_again_and_again():
    X, C0 = _tasks()
    model = _random_model()
    got = model_objectives(model, X, C0, 3, mode="reembed")
    C, want = C0, [L.kmeans_objective(X, C0)]
    with torch.no_grad():
        for _ in range(3):
            C = model(X, C)
            want.append(L.kmeans_objective(X, C))
    torch.testing.assert_close(got, torch.stack(want, 1))


def test_iterate_feeds_the_tokens_back():
    X, C0 = _tasks()
    model = _random_model()
    got = model_objectives(model, X, C0, 3, mode="iterate")
    with torch.no_grad():
        Xbar, Cbar = model.embed(X, C0)
        want = [L.kmeans_objective(X, C0)]
        for _ in range(3):
            Xbar, Cbar = model.layer(Xbar, Cbar)
            want.append(L.kmeans_objective(X, Cbar[..., :3]))  # always against the original points
    torch.testing.assert_close(got, torch.stack(want, 1))


def test_step_one_agrees_between_modes_and_step_zero_is_the_initial_objective():
    X, C0 = _tasks()
    out = multistep(_random_model(), X, C0, 2)
    torch.testing.assert_close(out["reembed"][:, 1], out["iterate"][:, 1], atol=1e-10, rtol=1e-10)
    for v in out.values():
        torch.testing.assert_close(v[:, 0], L.kmeans_objective(X, C0))


def test_lloyd_objectives_match_lloyd_and_steps_zero():
    X, C0 = _tasks()
    torch.testing.assert_close(lloyd_objectives(X, C0, 4), L.lloyd(X, C0, 4)[1])
    assert model_objectives(_random_model(), X, C0, 0).shape == (6, 1)


def test_chunks_give_the_same_result():
    X, C0 = _tasks(batch=7)
    model = _random_model()
    for mode in MODES:
        whole = model_objectives(model, X, C0, 3, mode=mode, chunk=7)
        torch.testing.assert_close(model_objectives(model, X, C0, 3, mode=mode, chunk=2), whole)
    torch.testing.assert_close(lloyd_objectives(X, C0, 3, chunk=3), lloyd_objectives(X, C0, 3))


def test_model_mode_and_gradients_are_left_alone():
    X, C0 = _tasks()
    model = _random_model()
    model.train()
    out = model_objectives(model, X, C0, 2)
    assert model.training and not out.requires_grad


def test_a_blown_up_model_reports_inf_not_nan():
    X, C0 = _tasks()
    model = _random_model()
    with torch.no_grad():
        model.V.mul_(1e30)  # the value maps overflow float64 within a few iterated layers
    for mode in MODES:
        out = model_objectives(model, X, C0, 8, mode=mode)
        assert not torch.isnan(out).any()
        assert torch.isinf(out[:, -1]).all(), mode
        dead = torch.isinf(out)
        assert (dead[:, 1:] >= dead[:, :-1]).all(), "a task that went non-finite must stay inf"
    assert math.isinf(mean_log(out)[-1])


def test_objective_or_inf():
    X, C0 = _tasks(batch=3)
    C = C0.clone()
    C[1, 0, 0] = math.nan
    C[2, 1, 1] = math.inf
    got = objective_or_inf(X, C)
    assert got[0] == L.kmeans_objective(X[:1], C0[:1])[0]
    assert math.isinf(got[1]) and math.isinf(got[2])
    with pytest.raises(ValueError, match="C must be a tensor of shape"):
        objective_or_inf(X, C0[:2])


def test_mean_log_and_seed_quartiles():
    obj = np.array([[1.0, np.e], [np.e**2, np.e]])
    np.testing.assert_allclose(mean_log(obj), [1.0, 1.0])
    assert mean_log(np.array([[1.0, np.inf], [0.0, 1.0]])).tolist() == [-np.inf, np.inf]
    curves = np.array([[0.0, 1.0], [1.0, np.inf], [2.0, np.inf], [3.0, np.inf]])
    q = seed_quartiles(curves)
    np.testing.assert_allclose(q[:, 0], np.quantile(curves[:, 0], [0.25, 0.5, 0.75]))
    assert q[0, 1] == np.inf and q[1, 1] == np.inf and not np.isnan(q).any()
    np.testing.assert_allclose(seed_quartiles(np.array([[0.0, 1.0], [1.0, 3.0]]))[1], [0.5, 2.0])


def test_bad_input():
    X, C0 = _tasks()
    model = _random_model()
    with pytest.raises(TypeError, match="model must be a lloydlib.model.LearnableTransformer"):
        model_objectives(object(), X, C0, 2)
    with pytest.raises(ValueError, match="mode must be one of"):
        model_objectives(model, X, C0, 2, mode="loop")
    with pytest.raises(ValueError, match="steps"):
        model_objectives(model, X, C0, -1)
    with pytest.raises(ValueError, match="chunk"):
        model_objectives(model, X, C0, 2, chunk=0)
    with pytest.raises(TypeError, match="dtype"):
        model_objectives(model, X.float(), C0.float(), 2)
    with pytest.raises(ValueError):  # the model serves (d, k) = (3, 4)
        model_objectives(model, *_tasks(d=2), 2)
    with pytest.raises(ValueError, match="C0"):
        model_objectives(model, X, C0[:, :, :2], 2)
    bad = X.clone()
    bad[0, 0, 0] = math.nan
    with pytest.raises(ValueError, match="finite"):
        lloyd_objectives(bad, C0, 2)
    with pytest.raises(ValueError, match="empty"):
        lloyd_objectives(X, C0, 2, empty="drop")
    with pytest.raises(ValueError, match="modes"):
        multistep(model, X, C0, 2, modes=())
    with pytest.raises(ValueError, match="modes"):
        multistep(model, X, C0, 2, modes=["reembed", "x"])
    with pytest.raises(ValueError, match="NaN"):
        mean_log(np.array([[np.nan]]))
    with pytest.raises(ValueError, match="shape"):
        mean_log(np.ones(3))
    with pytest.raises(ValueError, match="shape"):
        seed_quartiles(np.ones(3))
