"""Tests of lloydlib.tasks: sampling clustering tasks, min-max scaling and the three initialisations."""

import pytest
import torch
from _support import assert_raises_naming

import lloydlib as L
from lloydlib.tasks import sample_task_streams


@pytest.mark.parametrize("family", L.FAMILIES)
@pytest.mark.parametrize("init", L.INITS)
def test_sample_tasks_shapes_range_and_seed(family, init):
    X, C = L.sample_tasks(3, 50, 4, 6, family=family, init=init, seed=7)
    assert X.shape == (3, 50, 4) and C.shape == (3, 6, 4) and X.dtype == torch.float32
    assert float(X.min()) >= 0 and float(X.max()) <= 1
    assert torch.allclose(X.amin(1), torch.zeros(3, 4)) and torch.allclose(X.amax(1), torch.ones(3, 4))
    X2, C2 = L.sample_tasks(3, 50, 4, 6, family=family, init=init, seed=7)
    assert torch.equal(X, X2) and torch.equal(C, C2)
    # every initial center is one of the task's points
    assert bool(((C[:, :, None, :] == X[:, None, :, :]).all(-1).any(-1)).all())


def test_sample_tasks_same_on_every_dtype():
    X32, _ = L.sample_tasks(2, 20, 3, 4, seed=1)
    X64, _ = L.sample_tasks(2, 20, 3, 4, seed=1, dtype=torch.float64)
    assert torch.allclose(X32.double(), X64, atol=1e-7)


def test_random_init_is_first_k_points_and_gonzalez_is_farthest_first():
    X, C = L.sample_tasks(2, 30, 2, 5, seed=3)
    assert torch.equal(C, X[:, :5])
    G = L.init_centers(X, 3, "gonzalez")
    for b in range(2):
        d1 = ((X[b] - G[b, 0]) ** 2).sum(-1)
        assert torch.equal(G[b, 1], X[b, int(d1.argmax())])


def test_variants_and_labels():
    X, C, lab = L.sample_tasks(2, 400, 2, 4, isotropic=False, equal_weights=False, seed=0, return_labels=True)
    assert lab.shape == (2, 400) and int(lab.max()) < 4
    counts = torch.stack([torch.bincount(lab[b], minlength=4) for b in range(2)])
    assert int(counts.max() - counts.min()) > 20  # unequal weights show


@pytest.mark.parametrize("family", L.FAMILIES)
@pytest.mark.parametrize("init", L.INITS)
@pytest.mark.parametrize("flags", [(True, True), (False, False)])
def test_sample_task_streams_equal_sample_tasks_per_seed(family, init, flags):
    kw = dict(family=family, init=init, isotropic=flags[0], equal_weights=flags[1], dtype=torch.float64)
    seeds = [5, 11, 5]
    X, C = sample_task_streams(seeds, 3, 14, 2, 4, **kw)
    assert X.shape == (3, 3, 14, 2) and C.shape == (3, 3, 4, 2) and X.dtype == torch.float64
    for i, seed in enumerate(seeds):
        x, c = L.sample_tasks(3, 14, 2, 4, seed=seed, **kw)
        assert torch.equal(X[i], x) and torch.equal(C[i], c)  # bit for bit


def test_minmax_constant_dimension_becomes_zero():
    X = torch.tensor([[[1.0, 2.0], [1.0, 4.0]]])
    assert torch.equal(L.minmax_scale(X), torch.tensor([[[0.0, 0.0], [0.0, 1.0]]]))


X = torch.rand(2, 10, 3)

BAD_CALLS = [
    # (callable, exception, words that must appear in the message)
    (lambda: L.sample_tasks(0, 10, 2, 3), ValueError, ["batch", ">= 1", "0"]),
    (lambda: L.sample_tasks(2, 10, 2, 11), ValueError, ["k", "n", "11"]),
    (lambda: L.sample_tasks(2, 10, 2, 0), ValueError, ["k", ">= 1", "0"]),
    (lambda: L.sample_tasks(2, 10, 0, 3), ValueError, ["d", ">= 1"]),
    (lambda: L.sample_tasks(2, 10, 2, 3, family="uniform"), ValueError, ["family", "uniform", "normal"]),
    (lambda: L.sample_tasks(2, 10, 2, 3, init="best"), ValueError, ["init", "best"]),
    (lambda: L.sample_tasks(2, 10, 2, 3, scale=-1.0), ValueError, ["scale", "-1"]),
    (lambda: L.sample_tasks(2.5, 10, 2, 3), TypeError, ["batch", "integer", "float"]),
    (lambda: L.sample_tasks(2, 10, 2, 3, dtype=torch.int64), TypeError, ["dtype", "int64"]),
    (lambda: L.init_centers(X, 11), ValueError, ["k", "n"]),
    (lambda: sample_task_streams([], 2, 10, 2, 3), ValueError, ["seeds", "non-empty", "[]"]),
    (lambda: sample_task_streams(7, 2, 10, 2, 3), ValueError, ["seeds", "7"]),
    (lambda: sample_task_streams([1, -2], 2, 10, 2, 3), ValueError, ["seed", "-2"]),
    (lambda: sample_task_streams([1], 2, 10, 2, 11), ValueError, ["k", "n", "11"]),
]


@pytest.mark.parametrize("call,exc,words", BAD_CALLS, ids=[f"bad{i}" for i in range(len(BAD_CALLS))])
def test_bad_input_raises_clear_error(call, exc, words):
    assert_raises_naming(call, exc, words)
