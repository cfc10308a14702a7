"""S layers of Eq. 4 as one: parameters with a leading "model" dimension, a functional forward and losses.

A stack of S runs of one shape (d, k, embedding, bias) keeps all its learned numbers in one flat tensor
``theta`` of shape (S, P): per run the twelve matrices Q, K, V (4, d_emb, d_emb) and, with ``bias``, the
biases bQ, bK, bV (4, d_emb), in that order (the order of :class:`lloydlib.model.LearnableTransformer` 's
parameters). Run s sees tasks X[s] (B, n, d), C[s] (B, k, d); the forward is the fast form of
:meth:`lloydlib.model.LearnableTransformer._fast_layer` (Eq. 4 with the distance attention of Eq. 3,
scores (gamma / sqrt(d_emb)) (2 q.k - ||k||^2)) with every matrix product batched over the stack:

    X (S, B, n, d), C (S, B, k, d)  ->  F(X[s], C[s]; Theta_s)  (S, B, k, d).

The losses are those of :mod:`lloydlib.losses`, per run: the smoothed loss of Eq. 6 (Eqs. 24-29, with
softmax for "NE" and sparsemax for "L2") at a per-run temperature tau, and the k-means loss of Eq. 5.
The training loss takes r = ||x||^2 + ||c||^2 - 2 x.c (clamped at 0), as
:func:`lloydlib.losses.training_loss` does: the subtracted form's (S, B, n, k, d) difference tensor and its
gradient were most of a step at d=32, k=25. Sparsemax sorts each row of k values (Eq. 28 as written):
the sort-free form, max over j of candidate thresholds, builds k x k comparisons per point and cost
5x more at k=25.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ..distances import sqdist
from ..embeddings import cluster_codes, embedding_dim
from ..model import LearnableTransformer

__all__ = ["StackShape", "stacked_forward", "smoothed_losses", "kmeans_losses", "sparsemax"]

_NAMES = ("Q", "K", "V", "bQ", "bK", "bV")
#: above this many score entries per run (B * n * n) head 2 uses the fused attention kernel, not explicit scores
FUSED_LIMIT = 1 << 20


class StackShape:
    """The layout of ``theta`` (S, P) for one (d, k, embedding, bias): :meth:`split`, :meth:`flatten`, :meth:`unflatten`."""

    def __init__(self, d: int, k: int, embedding: str, bias: bool, gamma: float):
        self.d, self.k, self.embedding, self.bias, self.gamma = d, k, embedding, bias, gamma
        self.D = D = embedding_dim(d, k, embedding)
        self.names = _NAMES if bias else _NAMES[:3]
        self.shapes = [(4, D, D)] * 3 + ([(4, D)] * 3 if bias else [])
        self.sizes = [math.prod(s) for s in self.shapes]
        self.P = sum(self.sizes)

    def codes(self, dtype, device) -> torch.Tensor:
        """The cluster codes of the center tokens (k, d_emb - d)."""
        return cluster_codes(self.k, self.embedding, dtype=dtype, device=device)

    def split(self, theta: torch.Tensor) -> dict:
        """Views of ``theta`` (S, P): name -> (S, 4, D, D) or (S, 4, D)."""
        S = theta.shape[0]
        parts = theta.split(self.sizes, dim=1)
        return {name: p.reshape(S, *shape) for name, p, shape in zip(self.names, parts, self.shapes)}

    def flatten(self, state: dict) -> torch.Tensor:
        """One run's ``state_dict`` -> its row of ``theta`` (P,)."""
        return torch.cat([state[name].reshape(-1) for name in self.names])

    def unflatten(self, row: torch.Tensor) -> dict:
        """A row of ``theta`` (P,) -> a ``state_dict`` of :class:`LearnableTransformer` (cloned, on the CPU)."""
        return {k: v[0].detach().to("cpu").clone() for k, v in self.split(row[None]).items()}

    def model(self, row: torch.Tensor, *, dropout=0.0, weighting="softmax", fast=True) -> LearnableTransformer:
        """A :class:`LearnableTransformer` holding the weights of one row of ``theta``."""
        m = LearnableTransformer(
            self.d,
            self.k,
            self.embedding,
            gamma=self.gamma,
            bias=self.bias,
            dropout=dropout,
            weighting=weighting,
            fast=fast,
            dtype=row.dtype,
        )
        m.load_state_dict(self.unflatten(row))
        return m


def _per_run(Z: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
    """Z (S, B, m, D) @ W (S, D, r) -> (S, B, m, r) as one (B m, D) x (D, r) product per run (a broadcast
    matmul would copy W for each of the B tasks and multiply B small matrices instead)."""
    S, B, m, D = Z.shape
    return torch.bmm(Z.reshape(S, B * m, D), W).reshape(S, B, m, W.shape[-1])


def _lin(Z: torch.Tensor, W: torch.Tensor, b) -> torch.Tensor:
    """Z (S, B, m, D) -> Z W^T + b per run: W (S, r, D), b (S, r) or None -> (S, B, m, r)."""
    out = _per_run(Z, W.transpose(1, 2))
    return out if b is None else out + b[:, None, None, :]


def _point_keys(keys: torch.Tensor, Q: torch.Tensor, bQ, d: int) -> torch.Tensor:
    """Keys k~ (S, B, m, d + 1) with [x ; 1] . k~ = 2 q . k - ||k||^2 for point queries q = Q[:, :d] x + b_Q."""
    lin = 2 * _per_run(keys, Q[:, :, :d])
    const = -(keys * keys).sum(-1, keepdim=True)
    if bQ is not None:
        const = const + 2 * keys @ bQ[:, None, :, None]
    return torch.cat([lin, const], dim=-1)


def stacked_forward(shape: StackShape, theta: torch.Tensor, X: torch.Tensor, C: torch.Tensor, codes) -> torch.Tensor:
    """Eq. 4 for every run of the stack: theta (S, P), X (S, B, n, d), C (S, B, k, d) -> (S, B, k, d).

    The arithmetic of :meth:`LearnableTransformer._fast_layer` (softmax attention, no dropout), batched
    over the leading stack dimension; ``codes`` (k, d_emb - d) are the center tokens' codes.
    """
    p = shape.split(theta)
    Q, K, V = p["Q"], p["K"], p["V"]
    bQ, bK, bV = (p.get(name) for name in ("bQ", "bK", "bV"))

    def b(kind, mu, rows=None):
        return None if kind is None else kind[:, mu, :rows]

    S, B, n, d = X.shape
    D = shape.D
    scale = shape.gamma / math.sqrt(D)
    Cbar = torch.cat([C, codes.expand(S, B, -1, -1)], dim=-1)
    xt = torch.cat([X, X.new_ones(S, B, n, 1)], dim=-1)  # [x ; 1]
    Wc = torch.cat([K[:, 0], V[:, 0], Q[:, 2], Q[:, 3], K[:, 3], V[:, 3, :d]], dim=1)
    bc = None if bQ is None else torch.cat([bK[:, 0], bV[:, 0], bQ[:, 2], bQ[:, 3], bK[:, 3], bV[:, 3, :d]], dim=1)
    k1, v1, q3, q4, k4, v4 = _lin(Cbar, Wc, bc).split([D, D, D, D, D, d], dim=-1)
    kt1 = _point_keys(k1, Q[:, 0], b(bQ, 0), d)
    A1 = torch.softmax(scale * xt @ kt1.transpose(-1, -2), dim=-1) @ v1
    k2 = _lin(X, K[:, 1, :, :d], b(bK, 1))  # K_2 [x ; 0] + b
    kt2 = _point_keys(k2, Q[:, 1], b(bQ, 1), d)
    if B * n * n > FUSED_LIMIT:
        PX = F.scaled_dot_product_attention(xt, kt2, xt, scale=scale)[..., :d]
    else:
        PX = torch.softmax(scale * xt @ kt2.transpose(-1, -2), dim=-1) @ X
    A2 = _lin(PX, V[:, 1, :, :d], b(bV, 1))
    Xbar1 = F.pad(X, (0, D - d)) + A1 + A2
    k3, v3 = _lin(
        Xbar1,
        torch.cat([K[:, 2], V[:, 2, :d]], dim=1),
        None if bK is None else torch.cat([bK[:, 2], bV[:, 2, :d]], dim=1),
    ).split([D, d], dim=-1)

    def head(q, k, v):
        scores = 2 * q @ k.transpose(-1, -2) - (k * k).sum(-1)[..., None, :]
        return torch.softmax(scale * scores, dim=-1) @ v

    return C + head(q3, k3, v3) + head(q4, k4, v4)


def _sqdist(X: torch.Tensor, C: torch.Tensor, expand: bool) -> torch.Tensor:
    """r = ||x_i - c_j||^2 by :func:`lloydlib.distances.sqdist` over any leading dimensions:
    X (..., n, d), C (..., k, d) -> (..., n, k); subtracted (exact) or, ``expand``, expanded."""
    r = sqdist(X.flatten(0, -3), C.flatten(0, -3), expand=expand)
    return r.view(*X.shape[:-1], C.shape[-2])


def sparsemax(z: torch.Tensor) -> torch.Tensor:
    """Sparsemax (Eqs. 27-28) over the last dimension: sort z descending, N(z) = max{m : 1 + m z_(m) >
    sum_{j<=m} z_(j)}, kappa = (sum_{j<=N} z_(j) - 1) / N, P = max(z - kappa, 0)."""
    zs = z.sort(dim=-1, descending=True).values
    cum = zs.cumsum(-1) - 1
    m = torch.arange(1, z.shape[-1] + 1, dtype=z.dtype, device=z.device)
    N = (m * zs > cum).sum(-1, keepdim=True).clamp_min(1)  # >= 1 (the largest entry qualifies) unless z is not finite
    kappa = cum.gather(-1, N - 1) / N
    return (z - kappa).clamp_min(0)


def smoothed_losses(X: torch.Tensor, C: torch.Tensor, tau: torch.Tensor, regularizer: str) -> torch.Tensor:
    """Eq. 6 per run: the batch mean of the smoothed loss (Eqs. 24-29). X (S, B, n, d), C (S, B, k, d),
    tau (S,) -> (S,)."""
    r = _sqdist(X, C, expand=True)
    z = -r / tau[:, None, None, None]
    P = torch.softmax(z, dim=-1) if regularizer == "NE" else sparsemax(z)
    return (P * r).sum(dim=(2, 3)).mean(dim=1)


def kmeans_losses(X: torch.Tensor, C: torch.Tensor) -> torch.Tensor:
    """The k-means loss of Eq. 5 per task: X (..., n, d), C (..., k, d) -> (...)."""
    return _sqdist(X, C, expand=False).amin(-1).sum(-1)
