"""Sandwiches for the loss: Lemma I.2 of the Leaner paper (Appendix I), Props. H.1 and H.2 (Appendix H).

* :func:`loss_sandwich`: Lemma I.2, the smoothed loss in the output centers, against kappa1;
* :func:`loss_vector_sandwich`: Prop. H.2, the NE loss in the vector of distances, against
  1 + r* omega_tau / tau;
* :func:`smoothing_distances`: the left side of Prop. H.1 (from Blondel et al.);
* :func:`local_lipschitz`: the measured local Lipschitz constant of the loss in the twelve weight
  matrices, in the norm of Theorem I.2 (the dual norm of the gradient).

The loss is :func:`lloydlib.losses.smoothed_loss` (Eqs. 24-29), the regularised argmax
:func:`lloydlib.losses.regularized_argmax`.
"""

from __future__ import annotations

import math

import torch

from .._random import generator
from .._validate import check_centers, check_choice, check_int, check_points, check_positive, check_tensor
from ..losses import REGULARIZERS, regularized_argmax, smoothed_loss
from .constants import dims, kappa1, loss_lipschitz, norm_bounds
from .layer import check_layer_args, one_layer
from .sandwich import (
    DTYPE,
    SandwichResult,
    ascend,
    check_search,
    log_steps,
    norm21,
    one_thread,
    quotient,
    shrink_tokens,
    step_size,
)

__all__ = ["loss_vector_sandwich", "smoothing_distances", "loss_sandwich", "local_lipschitz"]


def _smoothed_vector(r, tau, regularizer):
    """L~(r) = <P_Omega(-r/tau), r> for vectors r (..., k)."""
    return (regularized_argmax(-r / tau, regularizer, dim=-1) * r).sum(-1)


@one_thread
def loss_vector_sandwich(
    k: int,
    r_star_value: float,
    tau: float,
    *,
    restarts: int = 16,
    steps: int = 200,
    lr: float = 0.05,
    random_pairs: int = 512,
    seed: int = 0,
) -> SandwichResult:
    """Prop. H.2 (NE): |L~(r) - L~(r')| / ||r - r'||_1 for r, r' in [0, r*]^k against 1 + r* omega_tau / tau
    (omega_tau = exp(r*/tau) / k, the dispersion of r being at most r*); k >= 2, r* > 0, tau > 0."""
    k = check_int("k", k, 2)
    rs = check_positive("r_star_value", r_star_value)
    tau = check_positive("tau", tau)
    restarts, steps, lr, random_pairs = check_search(restarts, steps, lr, random_pairs)
    g = generator(seed)

    def vec(raw):
        return rs * (1 + torch.sin(raw)) / 2

    def ratio(raw):
        r, r2 = vec(raw["r"]), vec(raw["w"])
        num = (_smoothed_vector(r, tau, "NE") - _smoothed_vector(r2, tau, "NE")).abs()
        return quotient(num, (r - r2).abs().sum(-1), rs)

    rnd = {
        "r": 3 * torch.randn(random_pairs, k, generator=g, dtype=DTYPE),
        "w": 3 * torch.randn(random_pairs, k, generator=g, dtype=DTYPE),
    }
    with torch.no_grad():
        r_rand = float(ratio(rnd).max())
    raw = {"r": 3 * torch.randn(restarts, k, generator=g, dtype=DTYPE)}
    raw["w"] = raw["r"] + 0.01 * torch.randn(restarts, k, generator=g, dtype=DTYPE)
    best = ascend(raw, ratio, steps, lr)
    with torch.no_grad():
        r = ratio(best)
        j = int(r.argmax())
    return SandwichResult(
        "Prop. H.2",
        float(loss_lipschitz(rs, tau, k)),
        r_rand,
        float(r.max()),
        {"r": vec(best["r"][j]), "r_prime": vec(best["w"][j])},
    )


def smoothing_distances(r: torch.Tensor, tau: float, regularizer: str) -> torch.Tensor:
    """Prop. H.1's left side ||e_{argmin r} - P_Omega(-r / tau)||_2 for distance vectors r (..., k): (...)."""
    r = check_tensor("r", r)
    if r.dim() < 1 or r.shape[-1] < 1:
        raise ValueError(f"r must have a last dimension of k >= 1 distances, got shape {tuple(r.shape)}")
    tau = check_positive("tau", tau)
    check_choice("regularizer", regularizer, REGULARIZERS)
    P = regularized_argmax(-r / tau, regularizer, dim=-1)
    hard = torch.nn.functional.one_hot(r.argmin(-1), r.shape[-1]).to(r.dtype)
    return (hard - P).norm(dim=-1)


@one_thread
def loss_sandwich(
    d: int,
    k: int,
    n: int,
    embedding: str,
    *,
    Gamma2: float = 1.0,
    tau: float = 1.0,
    regularizer: str = "NE",
    restarts: int = 16,
    steps: int = 200,
    lr: float = 0.05,
    random_pairs: int = 64,
    seed: int = 0,
) -> SandwichResult:
    """Lemma I.2: |L~(X, F) - L~(X, F')| / ||F - F'||_{2,1} against kappa1, for X in [0,1]^d and output
    centers F, F' whose norms obey Lemma I.1 (<= (1 + 2 Gamma2 + 2 Gamma2^2) sqrt(d_E))."""
    d, k, n = check_layer_args(d, k, n, embedding, 1.0, 1.0, Gamma2)
    tau = check_positive("tau", tau)
    check_choice("regularizer", regularizer, REGULARIZERS)
    restarts, steps, lr, random_pairs = check_search(restarts, steps, lr, random_pairs)
    d_E, _ = dims(d, k, embedding)
    cb = float(norm_bounds(d, d_E, Gamma2)["C1"])
    g = generator(seed)

    def init(R, h0):
        return {
            "X": 3 * torch.randn(R, n, d, generator=g, dtype=DTYPE),
            "F": cb * torch.randn(R, k, d, generator=g, dtype=DTYPE) / math.sqrt(d),
            "E": torch.randn(R, k, d, generator=g, dtype=DTYPE),
            "log_h": torch.full((R,), math.log(h0), dtype=DTYPE),
        }

    def ratio(raw):
        X = torch.sigmoid(raw["X"])
        F = shrink_tokens(raw["F"], cb)
        E = raw["E"] / norm21(raw["E"])[:, None, None]
        h = step_size(raw["log_h"])[:, None, None]
        F2 = shrink_tokens(F + h * cb * E, cb)
        num = (smoothed_loss(X, F, tau, regularizer) - smoothed_loss(X, F2, tau, regularizer)).abs()
        return quotient(num, norm21(F - F2), cb)

    rnd = init(random_pairs, 1.0)
    rnd["log_h"] = log_steps(random_pairs, g)
    with torch.no_grad():
        r_rand = float(ratio(rnd).max())
    best = ascend(init(restarts, 1e-3), ratio, steps, lr)
    with torch.no_grad():
        r = ratio(best)
        j = int(r.argmax())
        pair = {"X": torch.sigmoid(best["X"][j]), "F": shrink_tokens(best["F"][j], cb)}
    return SandwichResult("Lemma I.2", float(kappa1(n, k, Gamma2, d_E, tau)), r_rand, float(r.max()), pair)


@one_thread
def local_lipschitz(
    X: torch.Tensor,
    C: torch.Tensor,
    Q: torch.Tensor,
    K: torch.Tensor,
    V: torch.Tensor,
    embedding: str,
    *,
    gamma: float = 1.0,
    tau: float = 0.1,
    regularizer: str = "NE",
) -> torch.Tensor:
    """The local Lipschitz constant of each task's loss in Theta, in the paper's norm: shape (batch,).

    For L(Theta) = L~(X_b, F(X_b, C_b; Theta)) (Theorem I.2), the smallest alpha with
    |dL[Delta]| <= alpha max_W ||Delta_W|| is the dual norm of the gradient, the sum over the twelve
    matrices of the nuclear norms of dL/dW. X (batch, n, d), C (batch, k, d); Q, K, V (4, d_emb, d_emb)
    are shared by all tasks.
    """
    X = check_points(X)
    C = check_centers(C, X)
    for name, W in (("Q", Q), ("K", K), ("V", V)):
        check_tensor(name, W, 3)
    check_positive("gamma", gamma)
    tau = check_positive("tau", tau)
    check_choice("regularizer", regularizer, REGULARIZERS)
    out = []
    for b in range(X.shape[0]):
        W = [w.detach().clone().requires_grad_(True) for w in (Q, K, V)]
        F = one_layer(X[b : b + 1], C[b : b + 1], *W, embedding, gamma)
        grads = torch.autograd.grad(smoothed_loss(X[b : b + 1], F, tau, regularizer).sum(), W)
        out.append(sum(torch.linalg.matrix_norm(gw, ord="nuc").sum() for gw in grads))
    return torch.stack(out)
