"""lloydlib.theory.sandwich: the result record, the ascent, the guard on small steps, norms and projections."""

import math

import pytest
import torch

from lloydlib import theory as T
from lloydlib.theory import sandwich as S


def test_result_properties():
    r = T.SandwichResult("x", 2.0, 1.0, 1.5)
    assert r.ratio == 1.5 and not r.violated and r.slack == pytest.approx(4 / 3)
    assert T.SandwichResult("x", 1.0, 1.0 + 1e-9, 0.0).violated is False  # rounding, not a counterexample
    assert T.SandwichResult("x", 1.0, 1.01, 0.0).violated
    assert T.SandwichResult("x", 1.0, 0.0, 0.0).slack == math.inf


def test_norm21_and_random_spectral():
    A = torch.tensor([[[3.0, 4.0], [0.0, 1.0]]], dtype=torch.float64)
    assert torch.equal(T.norm21(A), torch.tensor([6.0], dtype=torch.float64))
    g = torch.Generator().manual_seed(0)
    W = T.random_spectral((3, 4, 4), 1.5, generator=g)
    assert W.dtype == torch.float64 and torch.allclose(S.spec(W), torch.full((3,), 1.5, dtype=torch.float64))
    assert float(S.spec(T.random_spectral((2, 3), 0.0)).max()) == 0.0


def test_projections_and_quotient():
    W = torch.diag(torch.tensor([4.0, 1.0], dtype=torch.float64))
    assert float(S.spec(S.shrink_matrix(W, 2.0))) == pytest.approx(2.0)
    assert torch.equal(S.shrink_matrix(W, 5.0), W)
    Z = torch.tensor([[3.0, 4.0], [0.3, 0.4]], dtype=torch.float64)
    assert torch.allclose(S.shrink_tokens(Z, 1.0).norm(dim=-1), torch.tensor([1.0, 0.5], dtype=torch.float64))
    box = S.tokens(torch.randn(5, 3, dtype=torch.float64), 10.0, "box")
    assert float(box.min()) >= 0 and float(box.max()) <= 1
    q = S.quotient(torch.tensor([1.0, 1.0]), torch.tensor([0.5, 1e-9]), 1.0)
    assert q.tolist() == [2.0, 0.0]  # a step below 1e-6 of the bound is not counted


def test_ascend_climbs_to_the_maximum():
    raw = {"x": torch.tensor([0.3, -2.0], dtype=torch.float64)}
    best = S.ascend(raw, lambda r: torch.exp(-((r["x"] - 1.0) ** 2)), steps=300, lr=0.05)
    assert torch.allclose(best["x"], torch.ones(2, dtype=torch.float64), atol=1e-2)


def test_one_thread_restores_the_thread_count():
    before = torch.get_num_threads()
    assert S.one_thread(torch.get_num_threads)() == 1
    assert torch.get_num_threads() == before


@pytest.mark.parametrize(
    "call,exc,match",
    [
        (lambda: T.random_spectral((3, 3), -1.0), ValueError, "norm must be >= 0"),
        (lambda: T.random_spectral((3,), 1.0), ValueError, "shape must have at least 2 dimensions"),
        (lambda: T.norm21(torch.ones(3)), ValueError, "A must have at least 2 dimensions"),
        (lambda: T.norm21([[1.0]]), TypeError, "A must be a torch.Tensor"),
        (lambda: S.check_search(0, 1, 0.1, 1), ValueError, "restarts must be >= 1"),
        (lambda: S.check_search(1, -1, 0.1, 1), ValueError, "steps must be >= 0"),
        (lambda: S.check_search(1, 1, 0.0, 1), ValueError, "lr must be > 0"),
        (lambda: S.check_search(1, 1, 0.1, 2.5), TypeError, "random_pairs must be an integer"),
    ],
)
def test_bad_input_names_the_argument(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
