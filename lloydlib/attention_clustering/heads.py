"""The two-head linear attention layer of "Attention-based clustering", in its two readings, and its risks.

The summary ("Approach") gives "a two-head linear attention layer whose key/query vectors act as cluster
centroid estimators", trained on "a quantization-style reconstruction risk". The value matrix is not
given, so both readings are built (book appendix "How the model is reconstructed", section "The layer"),
with Mhat = (1/L) sum_k x_k x_k^T the in-context second moment, query token included:

    R1 (tied key = query = lambda_h, shared identity value):
        T(X)_l = (c/L) sum_h sum_k <lambda_h, x_l> <lambda_h, x_k> x_k = c Mhat G x_l,  G = sum_h lambda_h lambda_h^T
    R2 (head-specific value lambda_h lambda_h^T):
        T(X)_l = c sum_h <lambda_h, x_l> (lambda_h^T Mhat lambda_h) lambda_h

Risk: R(T) = E ||x_l - T(X)_l||^2 over prompts, at any fixed position l (unsupervised). Population
(L = inf) risk of a layer whose output is c B x: tr M - 2c tr(BM) + c^2 tr(B^T B M).
"""

from __future__ import annotations

import math

import torch

from .._validate import check_choice, check_points, check_positive, check_tensor
from ._checks import check_centroids, check_heads

__all__ = [
    "FORMS",
    "linear_attention",
    "attention_layer",
    "plane_rotation_heads",
    "reconstruction_error",
    "mean_and_se",
    "layer_risk",
    "population_risk",
]

FORMS = ("R1", "R2")


def linear_attention(X: torch.Tensor, Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, c: float) -> torch.Tensor:
    """Softmax-free multi-head attention, heads summed: the reference form of every layer here.

        T(X)_l = (c/L) sum_h sum_k <Q_h x_l, K_h x_k> V_h x_k

    X (batch, L, d); Q, K (H, p, d); V (H, d, d). Returns (batch, L, d). The query token is among the
    L keys (reconstruction: book appendix "How the model is reconstructed"). R1 is Q_h = K_h = lambda_h^T, V_h = I; R2 has V_h = lambda_h lambda_h^T; the
    identity-QKV layer is H = 1, Q = K = V = I.
    """
    X = check_points(X)
    c = check_positive("c", c)
    d = X.shape[2]
    Q, K, V = (check_tensor(n, W, 3) for n, W in (("Q", Q), ("K", K), ("V", V)))
    if Q.shape != K.shape or Q.shape[2] != d:
        raise ValueError(f"Q and K must have the same shape (H, p, d={d}), got {tuple(Q.shape)} and {tuple(K.shape)}")
    if V.shape != (Q.shape[0], d, d):
        raise ValueError(f"V must have shape (H={Q.shape[0]}, d={d}, d={d}), got {tuple(V.shape)}")
    q = torch.einsum("bld,hpd->bhlp", X, Q)
    kk = torch.einsum("bld,hpd->bhlp", X, K)
    v = torch.einsum("bld,hed->bhle", X, V)
    scores = q @ kk.transpose(-1, -2)  # (batch, H, L, L)
    return c / X.shape[1] * (scores @ v).sum(1)


def attention_layer(X: torch.Tensor, Lam: torch.Tensor, c: float, form: str = "R1") -> torch.Tensor:
    """The H-head layer (R1 or R2) on every token: X (batch, L, d), Lam (H, d) or (batch, H, d) -> (batch, L, d).

    ``form="R1"``: T_l = c Mhat G x_l with G = Lam^T Lam (tied key/query, identity value).
    ``form="R2"``: T_l = c sum_h <lambda_h, x_l> (lambda_h^T Mhat lambda_h) lambda_h (value lambda_h lambda_h^T).
    Both equal :func:`linear_attention` with the weights named there (tested). Head vectors need not
    be unit vectors here (training keeps them on the sphere).
    """
    X = check_points(X)
    Lam = check_heads(Lam, X)
    c = check_positive("c", c)
    check_choice("form", form, FORMS)
    L = X.shape[1]
    if form == "R1":
        Mhat = X.transpose(1, 2) @ X / L  # (batch, d, d)
        G = Lam.transpose(-1, -2) @ Lam  # (d, d) or (batch, d, d)
        return c * X @ G @ Mhat  # row l: (Mhat G x_l)^T
    S = X @ Lam.transpose(-1, -2)  # (batch, L, H): <lambda_h, x_k>
    s = (S**2).mean(1, keepdim=True)  # (batch, 1, H): lambda_h^T Mhat lambda_h
    return c * (S * s) @ Lam


def plane_rotation_heads(mu: torch.Tensor, phi) -> torch.Tensor:
    """Two orthonormal heads in span(mu_1, mu_2), rotated by ``phi`` from the centroids:
    lambda_1 = cos(phi) mu_1 + sin(phi) mu_2, lambda_2 = -sin(phi) mu_1 + cos(phi) mu_2.

    mu (2, d); phi a number -> (2, d), or a 1-D tensor (n,) -> (n, 2, d). Under R1 every phi gives the
    same layer (G = P); the distance to the centroids is 2 sqrt(2) |sin(phi/2)| for |phi| <= pi/4.
    """
    mu = check_centroids(mu)
    if mu.dim() != 2 or mu.shape[0] != 2:
        raise ValueError(f"mu must have shape (2, d), got {tuple(mu.shape)}")
    scalar = not isinstance(phi, torch.Tensor)
    phi = torch.as_tensor(phi, dtype=mu.dtype).reshape(-1)
    cs, sn = torch.cos(phi)[:, None], torch.sin(phi)[:, None]
    heads = torch.stack([cs * mu[0] + sn * mu[1], -sn * mu[0] + cs * mu[1]], 1)
    return heads[0] if scalar else heads


def reconstruction_error(X: torch.Tensor, T: torch.Tensor, *, positions: str = "all") -> torch.Tensor:
    """Per-prompt squared reconstruction error, shape (batch,) (the summand of the reconstruction risk).

    ``positions="all"`` averages ||x_l - T_l||^2 over the L tokens of each prompt (the same expectation
    as one fixed position, by exchangeability, with less variance); ``"first"`` uses l = 1 only.
    Prompts are independent, so :func:`mean_and_se` of the result is a valid Monte Carlo estimate.
    """
    X = check_points(X)
    T = check_points(T, "T")
    if T.shape != X.shape:
        raise ValueError(f"T must have X's shape {tuple(X.shape)}, got {tuple(T.shape)}")
    check_choice("positions", positions, ("all", "first"))
    err = ((X - T) ** 2).sum(-1)
    return err.mean(1) if positions == "all" else err[:, 0]


def mean_and_se(values: torch.Tensor) -> tuple[float, float]:
    """Monte Carlo mean and standard error of i.i.d. values (n,) with n >= 2."""
    values = check_tensor("values", values, 1)
    if values.numel() < 2:
        raise ValueError(f"values must hold at least 2 samples for a standard error, got {values.numel()}")
    return float(values.mean()), float(values.std(unbiased=True) / math.sqrt(values.numel()))


def layer_risk(X: torch.Tensor, Lam: torch.Tensor, c: float, form: str = "R1") -> torch.Tensor:
    """Per-prompt risk of :func:`attention_layer` averaged over all L positions, from Mhat alone: (batch,).

    Equal to ``reconstruction_error(X, attention_layer(X, Lam, c, form))`` (tested) but computed from the
    prompt's Mhat, which is all the average over positions depends on:
        R1: tr Mhat - 2c tr(G Mhat^2) + c^2 tr(G Mhat^2 G Mhat)
        R2: tr Mhat - 2c sum_h s_h^2 + c^2 sum_{h,h'} s_h s_h' <lambda_h, lambda_h'> lambda_h^T Mhat lambda_h',
            with s_h = lambda_h^T Mhat lambda_h.
    X (batch, L, d); Lam (H, d) or (batch, H, d). Differentiable in Lam; this is the training loss.
    """
    X = check_points(X)
    Lam = check_heads(Lam, X)
    c = check_positive("c", c)
    check_choice("form", form, FORMS)
    return mhat_risk(X.transpose(1, 2) @ X / X.shape[1], Lam, c, form)


def mhat_risk(Mhat: torch.Tensor, Lam: torch.Tensor, c: float, form: str) -> torch.Tensor:
    """:func:`layer_risk` from Mhat (…, d, d) and Lam (…, H, d) broadcasting against it: (…)."""
    Y = Lam @ Mhat  # (…, H, d): rows lambda_h^T Mhat
    LML = Y @ Lam.transpose(-1, -2)  # (…, H, H): Lam Mhat Lam^T
    trM = torch.diagonal(Mhat, dim1=-2, dim2=-1).sum(-1)
    if form == "R1":
        LM2L = Y @ Y.transpose(-1, -2)  # Lam Mhat^2 Lam^T
        return trM - 2 * c * torch.diagonal(LM2L, dim1=-2, dim2=-1).sum(-1) + c**2 * (LM2L * LML).sum((-1, -2))
    s = torch.diagonal(LML, dim1=-2, dim2=-1)  # (…, H)
    gram = Lam @ Lam.transpose(-1, -2)
    return trM - 2 * c * (s**2).sum(-1) + c**2 * (s[..., :, None] * s[..., None, :] * gram * LML).sum((-1, -2))


def population_risk(Lam: torch.Tensor, M: torch.Tensor, c: float, form: str = "R1") -> torch.Tensor:
    """L = inf risk of the H-head layer: Lam (H, d) or (runs, H, d), M (d, d) -> () or (runs,).

    As L -> inf, Mhat -> M, so the layer's output is c B x with B = M G (R1) or
    B = sum_h (lambda_h^T M lambda_h) lambda_h lambda_h^T (R2), and
    E ||x - c B x||^2 = tr M - 2c tr(B M) + c^2 tr(B^T B M). Differentiable in Lam.
    """
    Lam = check_heads(Lam)
    M = check_tensor("M", M, 2)
    if M.shape != (Lam.shape[-1], Lam.shape[-1]):
        raise ValueError(f"M must have shape (d, d) = {(Lam.shape[-1],) * 2}, got {tuple(M.shape)}")
    c = check_positive("c", c)
    check_choice("form", form, FORMS)
    if form == "R1":
        B = M @ Lam.transpose(-1, -2) @ Lam
    else:
        m = ((Lam @ M) * Lam).sum(-1)  # (…, H): lambda_h^T M lambda_h
        B = Lam.transpose(-1, -2) @ (m[..., None] * Lam)
    tr = lambda A: torch.diagonal(A, dim1=-2, dim2=-1).sum(-1)  # noqa: E731
    return tr(M) - 2 * c * tr(B @ M) + c**2 * tr(B.transpose(-1, -2) @ B @ M)
