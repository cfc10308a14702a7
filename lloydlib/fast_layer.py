"""The fast form of Eq. 4 for S layers at once: the one forward of every learnable layer that trains.

:class:`lloydlib.model.LearnableTransformer` (S = 1) and the stacked training engine
(:mod:`lloydlib.training.stack_engine`, S runs) both call :func:`fast_layer`. Each of the S layers has its
own parameters, given as a dict with a leading "model" dimension S: ``Q``, ``K``, ``V`` (S, 4, D, D), the
paper's Q_mu = ``Q[s, mu - 1]`` acting on column tokens, and with biases ``bQ``, ``bK``, ``bV`` (S, 4, D).
Layer s sees its own tasks:

    X (S, B, n, d) points, C (S, B, k, d) centers, codes (k, D - d)  ->  F(X[s], C[s]; Theta_s)  (S, B, k, d).

The layer (Eq. 4 with the distance attention of Eq. 3, scale gamma / sqrt(D)) is rearranged:

* squared-distance attention is dot-product attention on augmented vectors: the softmax over keys ignores
  the per-query term -||q||^2, so the scores are (gamma / sqrt(D)) (2 q.k - ||k||^2);
* a point token [x ; 0] has an empty code block, so point queries reduce to [x ; 1] (d + 1 numbers) against
  keys k~ with [x ; 1] . k~ = 2 q . k - ||k||^2 (:func:`point_keys`), whatever the embedding;
* head 2 (points attending to points): since its weights P sum to 1 over keys, P (X V^T + b) = (P X) V^T + b,
  so it averages the points themselves. Up to :data:`FUSED_LIMIT` score entries per layer (B n^2) its scores
  are explicit (faster for such narrow heads than a kernel built for wide ones); above, on a CPU
  :func:`lloydlib.attention.cpu_attention` (one fused pass that stores no scores, and whose backward forms
  only the keys' gradient) and elsewhere
  PyTorch's fused ``scaled_dot_product_attention``, which never stores the n x n matrix. With sparsemax
  weights, or dropout in training, head 2 forms its scores explicitly;
* only the first d output coordinates are needed, so heads 3 and 4 use only the first d rows of V_3, V_4.

Every matrix product runs once per layer over all its tasks (:func:`per_run`), batched over S.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from .attention import cpu_attention

__all__ = ["FUSED_LIMIT", "BLOCKED_ON_CPU", "fast_layer", "per_run", "point_keys", "sparsemax"]

#: head 2 forms its (B, n, n) scores explicitly up to this many entries per layer; above, it runs
#: :func:`lloydlib.attention.cpu_attention` on the CPU and the fused ``scaled_dot_product_attention`` elsewhere
FUSED_LIMIT = 1 << 20
#: False sends the CPU to PyTorch's fused kernel too (the tests compare both routes on the CPU)
BLOCKED_ON_CPU = True


def per_run(Z: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
    """Z (S, B, m, D) @ W (S, D, r) -> (S, B, m, r) as one (B m, D) x (D, r) product per layer (a broadcast
    matmul would copy W for each of the B tasks and multiply B small matrices instead)."""
    S, B, m, D = Z.shape
    return torch.bmm(Z.reshape(S, B * m, D), W).reshape(S, B, m, W.shape[-1])


def _lin(Z: torch.Tensor, W: torch.Tensor, b) -> torch.Tensor:
    """Z (S, B, m, D) -> Z W^T + b per layer: W (S, r, D), b (S, r) or None -> (S, B, m, r)."""
    out = per_run(Z, W.transpose(1, 2))
    return out if b is None else out + b[:, None, None, :]


def point_keys(keys: torch.Tensor, Q: torch.Tensor, bQ, d: int) -> torch.Tensor:
    """Keys k~ (S, B, m, d + 1) with [x ; 1] . k~ = 2 q . k - ||k||^2 for point queries q = Q[:, :d] x + b_Q:
    keys (S, B, m, D), Q (S, D, D) (one head), bQ (S, D) or None."""
    lin = 2 * per_run(keys, Q[:, :, :d])
    const = -(keys * keys).sum(-1, keepdim=True)
    if bQ is not None:
        const = const + 2 * keys @ bQ[:, None, :, None]
    return torch.cat([lin, const], dim=-1)


def sparsemax(z: torch.Tensor) -> torch.Tensor:
    """Sparsemax (Eqs. 27-28 of the Leaner paper) over the last dimension: sort z descending,
    N(z) = max{m : 1 + m z_(m) > sum_{j<=m} z_(j)}, kappa = (sum_{j<=N} z_(j) - 1) / N, P = max(z - kappa, 0).
    Sorting each row of k values is cheaper than the sort-free form (k x k comparisons a row) at k=25."""
    zs = z.sort(dim=-1, descending=True).values
    cum = zs.cumsum(-1) - 1
    m = torch.arange(1, z.shape[-1] + 1, dtype=z.dtype, device=z.device)
    N = (m * zs > cum).sum(-1, keepdim=True).clamp_min(1)  # >= 1 (the largest entry qualifies) unless z is not finite
    kappa = cum.gather(-1, N - 1) / N
    return (z - kappa).clamp_min(0)


def fast_layer(
    params: dict,
    X: torch.Tensor,
    C: torch.Tensor,
    codes: torch.Tensor,
    gamma: float,
    *,
    weighting: str = "softmax",
    dropout: float = 0.0,
    training: bool = False,
) -> torch.Tensor:
    """Eq. 4 for S layers: ``params`` (``Q``, ``K``, ``V`` (S, 4, D, D), optional ``bQ``, ``bK``, ``bV``
    (S, 4, D)), X (S, B, n, d), C (S, B, k, d), ``codes`` (k, D - d) -> the first d coordinates of the
    updated center tokens, (S, B, k, d). ``weighting`` is "softmax" or "sparsemax" over keys; with
    ``training``, attention dropout of probability ``dropout`` (torch's global generator) follows it.
    ``gamma`` must be finite (hardmax is the reference path's, :class:`lloydlib.model.LearnableTransformer`).
    No input checks: callers check, and the function runs under ``torch.compile``.
    """
    Q, K, V = params["Q"], params["K"], params["V"]
    bQ, bK, bV = (params.get(name) for name in ("bQ", "bK", "bV"))
    S, B, n, d = X.shape
    D = Q.shape[-1]
    scale = gamma / math.sqrt(D)
    drop = dropout if training else 0.0

    def weights(scores):
        W = torch.softmax(scores, dim=-1) if weighting == "softmax" else sparsemax(scores)
        return F.dropout(W, drop) if drop > 0 else W

    def b(kind, mu, rows=None):
        return None if kind is None else kind[:, mu, :rows]

    Cbar = torch.cat([C, codes.expand(S, B, -1, -1)], dim=-1)
    xt = torch.cat([X, X.new_ones(S, B, n, 1)], dim=-1)  # [x ; 1]
    Wc = torch.cat([K[:, 0], V[:, 0], Q[:, 2], Q[:, 3], K[:, 3], V[:, 3, :d]], dim=1)
    bc = None if bQ is None else torch.cat([bK[:, 0], bV[:, 0], bQ[:, 2], bQ[:, 3], bK[:, 3], bV[:, 3, :d]], dim=1)
    k1, v1, q3, q4, k4, v4 = _lin(Cbar, Wc, bc).split([D, D, D, D, D, d], dim=-1)
    A1 = weights(scale * xt @ point_keys(k1, Q[:, 0], b(bQ, 0), d).transpose(-1, -2)) @ v1
    k2 = _lin(X, K[:, 1, :, :d], b(bK, 1))  # K_2 [x ; 0] + b
    kt2 = point_keys(k2, Q[:, 1], b(bQ, 1), d)
    if weighting != "softmax" or drop > 0:
        A2 = weights(scale * xt @ kt2.transpose(-1, -2)) @ _lin(X, V[:, 1, :, :d], b(bV, 1))
    else:
        if B * n * n <= FUSED_LIMIT:
            PX = torch.softmax(scale * xt @ kt2.transpose(-1, -2), dim=-1) @ X
        elif X.device.type == "cpu" and BLOCKED_ON_CPU:  # only the keys need a gradient: see cpu_attention
            PX = cpu_attention(xt.flatten(0, 1), kt2.flatten(0, 1), X.flatten(0, 1), scale).view(S, B, n, d)
        else:
            PX = F.scaled_dot_product_attention(xt, kt2, xt, scale=scale)[..., :d]
        A2 = _lin(PX, V[:, 1, :, :d], b(bV, 1))
    Xbar1 = F.pad(X, (0, D - d)) + A1 + A2  # Xbar' (S, B, n, D)
    k3, v3 = _lin(
        Xbar1,
        torch.cat([K[:, 2], V[:, 2, :d]], dim=1),
        None if bK is None else torch.cat([bK[:, 2], bV[:, 2, :d]], dim=1),
    ).split([D, d], dim=-1)

    def head(q, k, v):
        return weights(scale * (2 * q @ k.transpose(-1, -2) - (k * k).sum(-1)[..., None, :])) @ v

    return C + head(q3, k3, v3) + head(q4, k4, v4)
