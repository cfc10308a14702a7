"""Tests of lloydlib.construction.keep (beyond the paper): exact Lloyd with empty clusters."""

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import lloydlib as L
from lloydlib.construction import (
    KEEP_EPS,
    KeepTransformer,
    keep_layout,
    keep_transformer,
    keep_weights,
)

# ----------------------------------------------------------------------------- keep construction
KEEP_TOL = 1e-12


def _lloyd_keep_trajectory(X, C, steps):
    out = [C]
    for _ in range(steps):
        C = L.lloyd_step(X, C, empty="keep")
        out.append(C)
    return torch.stack(out, 1)


def _uniform_centers(batch, k, d, seed):
    return torch.rand(batch, k, d, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


@pytest.mark.parametrize("embedding", ["OH", "BN", "SC"])
@given(n=st.integers(2, 30), d=st.integers(1, 4), k=st.integers(2, 13), seed=st.integers(0, 10_000))
def test_keep_transformer_equals_lloyd_keep(embedding, n, d, k, seed):
    k = min(k, n)
    X, _ = L.sample_tasks(3, n, d, k, seed=seed, dtype=torch.float64)
    C = _uniform_centers(3, k, d, seed + 1)  # independent of the data: clusters do empty
    _, traj = keep_transformer(d, k, embedding).run(X, C, 6, return_trajectory=True)
    assert float((traj - _lloyd_keep_trajectory(X, C, 6)).abs().max()) <= KEEP_TOL


def test_keep_is_exact_on_tasks_that_do_have_empty_clusters():
    d, k, n, steps = 2, 7, 20, 8
    X, _ = L.sample_tasks(32, n, d, k, seed=5, dtype=torch.float64)
    C = _uniform_centers(32, k, d, 6)
    _, _, empty = L.lloyd(X, C, steps, return_empty=True)
    had = empty.any(-1).any(-1)
    assert int(had.sum()) >= 8, "the test needs tasks with empty clusters"
    ref = _lloyd_keep_trajectory(X, C, steps)
    for emb in ("OH", "BN", "SC"):
        _, traj = keep_transformer(d, k, emb).run(X, C, steps, return_trajectory=True)
        assert float((traj - ref).abs().max()) <= KEEP_TOL
    # Theorem B.1's layer is not exact on those tasks, the keep layer is
    _, b1 = L.exact_transformer(d, k, "BN").run(X, C, steps, return_trajectory=True, warn=False)
    assert float((b1 - ref).abs().amax((1, 2, 3))[had].max()) > 1e-3


def test_keep_forward_is_one_step_and_keeps_an_isolated_center():
    X = torch.tensor([[[0.0], [0.1], [0.2], [0.3]]], dtype=torch.float64)
    C = torch.tensor([[[0.1], [0.9]]], dtype=torch.float64)
    out = keep_transformer(1, 2, "BN")(X, C)
    assert torch.allclose(out, torch.tensor([[[0.15], [0.9]]], dtype=torch.float64), atol=KEEP_TOL, rtol=0)


def test_keep_tie_drops_the_point_like_theorem_b1():
    X = torch.tensor([[[0.0], [0.1], [0.5], [0.9], [1.0]]], dtype=torch.float64)
    C = torch.tensor([[[0.25], [0.75]]], dtype=torch.float64)
    out = keep_transformer(1, 2, "BN")(X, C)
    assert torch.allclose(out[0, :, 0], torch.tensor([0.05, 0.95], dtype=torch.float64), atol=KEEP_TOL, rtol=0)


def test_keep_weights_structure():
    d, k = 3, 6
    lay = keep_layout(d, k, "BN")
    D = lay["g"].stop
    assert D == 2 * d + L.code_dim(k, "BN") + 2
    Q, K, V = keep_weights(d, k, "BN", dtype=torch.float64)
    assert Q.shape == K.shape == V.shape == (4, D, D)
    assert torch.count_nonzero(V[3]) == 0  # head 4 is switched off
    assert torch.equal(V[0][lay["W"], lay["X"]], -torch.eye(d, dtype=torch.float64))
    assert torch.equal(V[2][lay["X"], lay["W"]], torch.eye(d, dtype=torch.float64))
    assert float(K[1][lay["g"], lay["g"]]) == 1.0 and float(Q[1][lay["g"], lay["g"]]) == 0.0
    assert float(Q[2][lay["f"], lay["f"]]) == KEEP_EPS
    T = KeepTransformer(d, k, "OH")
    assert T.d_emb == 2 * d + k + 2 and "lam" in repr(T)


def test_keep_tokens_layout():
    X, C = L.sample_tasks(2, 9, 2, 4, seed=0, dtype=torch.float64)
    T = keep_transformer(2, 4, "SC")
    Xbar, Cbar = T.embed(X, C)
    assert Xbar.shape == (2, 9 + 4 + 1, T.d_emb) and Cbar.shape == (2, 4 + 1, T.d_emb)
    lay = T.layout
    assert torch.equal(Xbar[:, :9, lay["X"]], X) and torch.equal(Cbar[:, :4, lay["X"]], C)
    assert float(Xbar[:, 9:, lay["f"]].min()) == 1.0 and float(Xbar[:, -1, lay["g"]].max()) == 0.0
    assert float(Cbar[:, -1].abs().sum(-1).sub(1).abs().max()) == 0.0  # the null holds only f = 1


@pytest.mark.parametrize(
    "call, exc, words",
    [
        (lambda: keep_transformer(2, 3, "NA"), ValueError, ["embedding", "NA"]),
        (lambda: keep_weights(2, 3, "BN", eps=1.0), ValueError, ["eps", "< 1"]),
        (lambda: keep_weights(2, 3, "BN", lam=-1.0), ValueError, ["lam"]),
        (lambda: keep_layout(0, 3, "BN"), ValueError, ["d", ">= 1"]),
        (
            lambda: keep_transformer(2, 3, "BN", lam=0.5)(
                torch.rand(1, 5, 2, dtype=torch.float64), torch.rand(1, 3, 2, dtype=torch.float64) + 2
            ),
            ValueError,
            ["lam", "larger"],
        ),
        (
            lambda: keep_transformer(2, 3, "BN")(
                torch.rand(1, 5, 3, dtype=torch.float64), torch.rand(1, 3, 3, dtype=torch.float64)
            ),
            ValueError,
            ["d=2"],
        ),
        (
            lambda: keep_transformer(2, 3, "BN")(
                torch.rand(1, 5, 2, dtype=torch.float64), torch.rand(1, 4, 2, dtype=torch.float64)
            ),
            ValueError,
            ["k=3"],
        ),
        (
            lambda: keep_transformer(2, 3, "BN").run(
                torch.rand(1, 5, 2, dtype=torch.float64), torch.rand(1, 3, 2, dtype=torch.float64), -1
            ),
            ValueError,
            ["steps"],
        ),
    ],
)
def test_keep_bad_input(call, exc, words):
    with pytest.raises(exc) as info:
        call()
    for w in words:
        assert w in str(info.value)
