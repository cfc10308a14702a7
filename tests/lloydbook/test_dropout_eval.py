"""Stored models scored with attention dropout left on (lloydbook.dropout_eval)."""

from types import SimpleNamespace

import numpy as np
import pytest
import torch

import lloydlib as L
from lloydbook import dropout_eval
from lloydlib import losses
from lloydlib.model import LearnableTransformer


@pytest.fixture
def model():
    torch.manual_seed(0)
    return LearnableTransformer(2, 3, "OH")


@pytest.fixture
def tasks():
    return L.sample_tasks(40, 16, 2, 3, seed=5)


def test_off_is_the_plain_score_and_on_differs(model, tasks):
    X, C0 = tasks
    off, on = dropout_eval.rescore(model, X, C0, p=0.2, repeats=4, seed=1, batch=7)
    with torch.no_grad():
        plain = float(losses.relative_loss(X, C0, model.eval()(X, C0)))
    assert off == pytest.approx(plain, rel=1e-6)
    assert on.shape == (4,) and np.isfinite(on).all()
    assert len(set(on.tolist())) > 1 and (on != off).all()


def test_reproducible_and_leaves_model_and_generator_alone(model, tasks):
    X, C0 = tasks
    model.train()
    before = torch.random.get_rng_state()
    a = dropout_eval.rescore(model, X, C0, p=0.1, repeats=3, seed=7)
    b = dropout_eval.rescore(model, X, C0, p=0.1, repeats=3, seed=7)
    assert a[0] == b[0] and np.array_equal(a[1], b[1])
    assert torch.equal(torch.random.get_rng_state(), before)
    assert model.dropout == 0.0 and model.training


def test_rescoring_shift_and_spread():
    r = dropout_eval.Rescoring(np.array([1.0, 2.0]), np.array([[1.1, 1.3], [2.0, 2.4]]))
    np.testing.assert_allclose(r.shift, [0.2, 0.2])
    np.testing.assert_allclose(r.spread, [0.2, 0.4])


def test_rescore_runs_shapes_and_one_setting(model):
    run = SimpleNamespace(config=SimpleNamespace(n=16, d=2, k=3), model=model)
    r = dropout_eval.rescore_runs([run, run], p=0.1, repeats=2, tasks=8, seed=3)
    assert r.off.shape == (2,) and r.on.shape == (2, 2)
    other = SimpleNamespace(config=SimpleNamespace(n=32, d=2, k=3), model=model)
    with pytest.raises(ValueError, match="one \\(n, d, k\\)"):
        dropout_eval.rescore_runs([run, other], p=0.1, repeats=2, tasks=8, seed=3)
    with pytest.raises(ValueError, match="runs must hold"):
        dropout_eval.rescore_runs([], p=0.1, repeats=2, tasks=8, seed=3)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(p=0.0), "p must be a dropout probability"),
        (dict(p=1.0), "p must be a dropout probability"),
        (dict(p="0.1"), "p must be a dropout probability"),
        (dict(repeats=0), "repeats must be an integer >= 1"),
        (dict(seed=-1), "seed must be an integer >= 0"),
        (dict(batch=True), "batch must be an integer >= 1"),
    ],
)
def test_bad_arguments(model, tasks, kwargs, match):
    X, C0 = tasks
    args = dict(p=0.1, repeats=2, seed=0) | kwargs
    with pytest.raises(ValueError, match=match):
        dropout_eval.rescore(model, X, C0, **args)


def test_bad_model(tasks):
    with pytest.raises(TypeError, match="model must be a lloydlib.model.LearnableTransformer"):
        dropout_eval.rescore(torch.nn.Linear(2, 2), *tasks, p=0.1, repeats=1, seed=0)


def test_numbers_need_a_cell():
    with pytest.raises(ValueError, match="drop must hold"):
        dropout_eval.dropout_numbers({})
    r = dropout_eval.Rescoring(np.array([1.0]), np.array([[1.1, 1.3]]))
    out = dropout_eval.dropout_numbers({("OH", "L2"): r})
    assert out["drop-shift"] == pytest.approx(0.2) and out["drop-spread"] == pytest.approx(0.2)


@pytest.mark.parametrize("embedding, weighting", [("OH", "softmax"), ("BN", "sparsemax")])
def test_scorings_are_the_models_own_forward_with_dropout(embedding, weighting):
    """Each scoring of rescore equals the model's own forward in training mode with dropout, from the seed's
    masks, with the Lloyd baseline passed in or not (bit for bit)."""
    torch.manual_seed(2)
    model = LearnableTransformer(2, 3, embedding, weighting=weighting)
    X, C0 = L.sample_tasks(20, 16, 2, 3, seed=4)
    off, on = dropout_eval.rescore(model, X, C0, p=0.2, repeats=3, seed=5, batch=7)
    base = losses.lloyd_baseline(X, C0)
    assert (
        dropout_eval.rescore(model, X, C0, p=0.2, repeats=3, seed=5, batch=7, baseline=base)[1].tolist() == on.tolist()
    )
    scored = model.__class__(2, 3, embedding, weighting=weighting)
    scored.load_state_dict(model.state_dict())
    scored.dropout = 0.2
    scored.train()
    with torch.random.fork_rng(devices=[]), torch.no_grad():
        torch.manual_seed(5)
        own = [
            float(
                losses.relative_loss(
                    X, C0, torch.cat([scored(X[i : i + 7], C0[i : i + 7]) for i in range(0, 20, 7)]), baseline=base
                )
            )
            for _ in range(3)
        ]
    assert on.tolist() == own
